#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/callers.sh -- BPF cost of sp_switch per run with the caller cache (issue #11), with
# --verify-callers, and with full stacks (--stacks: a stack walk per voluntary switch), from
# bpf_stats (run_time_ns / run_cnt of this run's sp_switch, found through schedprof's own
# file descriptors) while a pinned `perf bench sched pipe` runs under
# `schedprof trace -a --views schedules`. Rounds are interleaved; each line also gives the
# report's cache line (switches from the cache, checked, mismatched).
#
# Issue #12: --stacks takes each voluntary switch's user stack too. KSTACKS names a binary
# whose --stacks keeps kernel stacks only (main before issue #12): measured in each round as
# "kernel-stacks", and the user stacks' cost per voluntary switch is the difference of the
# medians (full-stacks - kernel-stacks), printed at the end. Per voluntary switch: the run
# time over the runs of the benchmark scaled by the report's voluntary share of the switches.
# More precise on a busy machine: each user stack timed in BPF (SCHEDPROF_USTACK_TIMING, two
# clock reads around it), whose median over the full-stacks runs is printed as well.
#
# usage: sudo bench/callers.sh [-r ROUNDS] [-l LOOPS]   (env SCHEDPROF: the binary;
#        OTHER: a second binary, e.g. main's, measured in each round as well;
#        KSTACKS: a binary without user stacks, e.g. /work/main/build/src/schedprof)
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SCHEDPROF=${SCHEDPROF:-$HERE/../build/src/schedprof}
OTHER=${OTHER:-}
KSTACKS=${KSTACKS:-}
ROUNDS=3 LOOPS=160000
while getopts "r:l:h" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;; l) LOOPS=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-l LOOPS]" >&2; exit 2 ;;
	esac
done
[[ $EUID == 0 ]] || { echo "$0: must run as root" >&2; exit 1; }
for tool in perf taskset bpftool; do
	command -v "$tool" >/dev/null || { echo "$0: $tool not found" >&2; exit 1; }
done
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
TMP=$(mktemp -d /tmp/schedprof-callers.XXXXXX)
SP_PID=""
cleanup() {
	[ -n "$SP_PID" ] && kill "$SP_PID" 2>/dev/null && wait "$SP_PID" 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
	rm -rf "$TMP"
}
trap cleanup EXIT
sysctl -qw kernel.bpf_stats_enabled=1

# prog_stats ID: "run_time_ns run_cnt"
prog_stats() {
	bpftool prog show id "$1" | grep -o 'run_time_ns [0-9]* run_cnt [0-9]*' | awk '{print $2, $4}'
}

# one NAME BINARY [OPTIONS]: one measured benchmark run
one() {
	local name=$1 bin=$2 id="" t0 c0 t1 c1 p
	shift 2
	# the user stacks time themselves (SCHEDPROF_USTACK_TIMING: two clock reads each)
	SCHEDPROF_USTACK_TIMING=1 "$bin" trace -vv -a --views schedules -d 30 -o "$TMP/out.txt" "$@" \
		2>"$TMP/err.txt" &
	SP_PID=$!
	for _ in $(seq 100); do
		for p in $(grep -h '^prog_id' /proc/$SP_PID/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u); do
			bpftool prog show id "$p" | grep -q 'name sp_switch' && id=$p
		done
		[ -n "$id" ] && break
		sleep 0.1
	done
	[ -n "$id" ] || { echo "$name: sp_switch not found"; return; }
	for _ in $(seq 100); do # attached: it runs
		read -r t0 c0 <<< "$(prog_stats "$id")"
		[ "${c0:-0}" -gt 0 ] && break
		sleep 0.1
	done
	sleep 0.5
	read -r t0 c0 <<< "$(prog_stats "$id")"
	taskset -c 1 perf bench sched pipe -l "$LOOPS" > /dev/null
	read -r t1 c1 <<< "$(prog_stats "$id")"
	kill -INT "$SP_PID"
	wait "$SP_PID"
	SP_PID=""
	[ "$c1" -gt "$c0" ] || { echo "$name: sp_switch did not run"; return; }
	# the voluntary share of the switches, from the report's "schedules: N total, V voluntary"
	read -r tot vol <<< "$(sed -n 's/^schedules: \([0-9]*\) total, \([0-9]*\) voluntary.*/\1 \2/p' "$TMP/out.txt")"
	pervol=$(( ${vol:-0} > 0 ? (t1 - t0) * tot / ((c1 - c0) * vol) : 0 ))
	echo "$name $pervol" >> "$TMP/pervol"
	printf '%-16s %5d ns/run %5d ns/voluntary  %7d runs  %s%s\n' "$name" $(((t1 - t0) / (c1 - c0))) \
		"$pervol" $((c1 - c0)) \
		"$(grep -o 'callers:.*mismatched' "$TMP/out.txt" | sed 's/, the rest by a full stack walk//')" \
		"$(grep -o 'user stacks took [0-9]* ns each' "$TMP/err.txt")"
	sed -n 's/.*user stacks took \([0-9]*\) ns each.*/timed \1/p' "$TMP/err.txt" >> "$TMP/pervol"
}

# median NAME: of the ns per voluntary switch of NAME's runs
median() {
	awk -v n="$1" '$1 == n { print $2 }' "$TMP/pervol" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2)) }'
}

echo "# $(date -u '+%F %H:%M') load $(cut -d' ' -f1-3 /proc/loadavg), kernel $(uname -r)"
for r in $(seq "$ROUNDS"); do
	one cache "$SCHEDPROF"
	one verify "$SCHEDPROF" --verify-callers
	one full-stacks "$SCHEDPROF" --stacks
	[ -n "$OTHER" ] && one other "$OTHER"
	[ -n "$KSTACKS" ] && one kernel-stacks "$KSTACKS" --stacks
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# user stacks timed in BPF (SCHEDPROF_USTACK_TIMING, target <= 1000 ns): $(median timed) ns" \
	"per voluntary switch (median of the full-stacks runs)"
if [ -n "$KSTACKS" ]; then
	full=$(median full-stacks) kern=$(median kernel-stacks)
	echo "# user stacks (issue #12, target <= 1000 ns): full-stacks $full - kernel-stacks $kern =" \
		"$((full - kern)) ns per voluntary switch (medians)"
fi
