#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/callers.sh -- BPF cost of sp_switch per run with the caller cache, with
# --verify-callers, and with full stacks (--stacks: a stack walk per voluntary switch), from
# bpf_stats (run_time_ns / run_cnt of this run's sp_switch, found through schedprof's own
# file descriptors) while a pinned `perf bench sched pipe` runs under
# `schedprof trace -a --views schedules`. Rounds are interleaved; each line also gives the
# report's cache line (switches from the cache, checked, mismatched).
#
# The goal: user stacks add at most 1 us per voluntary switch with --stacks.
# Workload: `perf bench sched pipe -l LOOPS` pinned to CPU 1 (two processes that block in
# read(2) on a pipe in turn, a voluntary switch per message; their user stacks pass through
# the C library, which has no frame pointers here, into perf's frames). Each round runs
# the same binary with --stacks twice: "full-stacks", and "kernel-stacks" with
# SCHEDPROF_USTACK_OFF=1 (--stacks, but sp_stack_pair() returns at once: kernel stacks
# only). The user stacks' cost per voluntary switch is the difference, from bpf_stats: the
# program's run time over the benchmark divided by its voluntary switches (run time per run
# scaled by the report's total/voluntary switches); median and minimum over the rounds.
# A third run, "timed", sets SCHEDPROF_USTACK_TIMING=1: BPF times each user stack (clock
# reads around it and its parts: walk, recover, name, keep, pair), logged with -vv.
# The verdict line compares the bpf_stats difference's median with 1000 ns.
#
# usage: sudo bench/callers.sh [-r ROUNDS] [-l LOOPS] [-u]   (env SCHEDPROF: the binary;
#        OTHER: a second binary, e.g. main's, measured in each round as well;
#        KSTACKS: a binary without user stacks, e.g. a build older than user stacks, measured too;
#        BASE: a binary from before a change, measured with --stacks too: its user stacks'
#        cost is printed against the same kernel-stacks runs, the before/after comparison)
#        -u: the user-stack runs only (full-stacks, kernel-stacks, timed)
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/builds.sh
. "$HERE/builds.sh"
SWITCH_BUILDS=$(prog_builds sp_switch | paste -sd "|")
SCHEDPROF=${SCHEDPROF:-$HERE/../build/src/schedprof}
OTHER=${OTHER:-}
KSTACKS=${KSTACKS:-}
BASE=${BASE:-}
ROUNDS=3 LOOPS=160000 USER_ONLY=0
while getopts "r:l:uh" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;; l) LOOPS=$OPTARG ;; u) USER_ONLY=1 ;;
	*) echo "usage: $0 [-r ROUNDS] [-l LOOPS] [-u]" >&2; exit 2 ;;
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

# find_switch TRIES: the id of sp_switch among schedprof's ($SP_PID) programs, once loaded
find_switch() {
	local p
	for _ in $(seq "$1"); do
		for p in $(grep -h '^prog_id' /proc/$SP_PID/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u); do
			bpftool prog show id "$p" | grep -qE "name ($SWITCH_BUILDS) " && { echo "$p"; return; }
		done
		sleep 0.1
	done
}

# one NAME BINARY [OPTIONS]: one measured benchmark run (env: ENV, set for schedprof)
one() {
	local name=$1 bin=$2 id="" t0 c0 t1 c1
	shift 2
	env ${ENV:-} "$bin" trace -vv -a --views schedules -d 60 -o "$TMP/out.txt" "$@" \
		2>"$TMP/err.txt" &
	SP_PID=$!
	id=$(find_switch 100)
	[ -n "$id" ] || { echo "$name: sp_switch not found"; return; }
	for _ in $(seq 100); do # attached: it runs
		read -r t0 c0 <<< "$(prog_stats "$id")"
		[ "${c0:-0}" -gt 0 ] && break
		sleep 0.1
	done
	sleep 0.5
	# the other benches on the machine may have switched the statistics off meanwhile
	sysctl -qw kernel.bpf_stats_enabled=1
	read -r t0 c0 <<< "$(prog_stats "$id")"
	taskset -c 1 perf bench sched pipe -l "$LOOPS" > /dev/null
	read -r t1 c1 <<< "$(prog_stats "$id")"
	kill -INT "$SP_PID"
	wait "$SP_PID"
	SP_PID=""
	[ "$c1" -gt "$c0" ] || { echo "$name: sp_switch did not run (or bpf_stats went off)"; return; }
	# the voluntary share of the switches, from the report's "schedules: N total, V voluntary"
	read -r tot vol <<< "$(sed -n 's/^schedules: \([0-9]*\) total, \([0-9]*\) voluntary.*/\1 \2/p' "$TMP/out.txt")"
	pervol=$(( ${vol:-0} > 0 ? (t1 - t0) * tot / ((c1 - c0) * vol) : 0 ))
	echo "$name $pervol" >> "$TMP/pervol"
	printf '%-16s %5d ns/run %5d ns/voluntary  %7d runs  %s%s\n' "$name" $(((t1 - t0) / (c1 - c0))) \
		"$pervol" $((c1 - c0)) \
		"$(grep -o 'callers:.*mismatched' "$TMP/out.txt" | sed 's/, the rest by a full stack walk//')" \
		"$(grep -o 'user stacks took [0-9]* ns each' "$TMP/err.txt")"
	sed -n 's/.*user stacks took \([0-9]*\) ns each.*/bpftimed \1/p' "$TMP/err.txt" >> "$TMP/pervol"
	grep -o 'user stacks of user tasks by part.*' "$TMP/err.txt" | sed 's/^/    /'
}

# one_target NAME BINARY [OPTIONS]: one measured benchmark run, the benchmark alone traced
# (-p: its processes; the other tasks' switches take the program's untraced path and no user
# stack, so what other load runs on the machine adds noise, not cost): the program's run time
# from the benchmark's start to its end, over the report's voluntary switches (the
# benchmark's own). env ENV: set for schedprof.
one_target() {
	local name=$1 bin=$2 id="" t0 c0 t1 c1 w tot vol
	shift 2
	rm -f "$TMP/go"
	mkfifo "$TMP/go"
	(read -r _ < "$TMP/go"; exec taskset -c 1 perf bench sched pipe -l "$LOOPS" > /dev/null) &
	w=$!
	env ${ENV:-} "$bin" trace -vv --views schedules -p "$w" -d 120 -o "$TMP/out.txt" "$@" \
		2>"$TMP/err.txt" &
	SP_PID=$!
	id=$(find_switch 300)
	[ -n "$id" ] || { echo "$name: sp_switch not found"; echo > "$TMP/go"; wait "$w"; return; }
	sleep 1 # attached
	sysctl -qw kernel.bpf_stats_enabled=1
	read -r t0 c0 <<< "$(prog_stats "$id")"
	echo > "$TMP/go"
	wait "$w"
	read -r t1 c1 <<< "$(prog_stats "$id")"
	kill -INT "$SP_PID" 2>/dev/null
	wait "$SP_PID"
	SP_PID=""
	[ "$c1" -gt "$c0" ] || { echo "$name: sp_switch did not run (or bpf_stats went off)"; return; }
	read -r tot vol <<< "$(sed -n 's/^schedules: \([0-9]*\) total, \([0-9]*\) voluntary.*/\1 \2/p' "$TMP/out.txt")"
	pervol=$(( ${vol:-0} > 0 ? (t1 - t0) / vol : 0 ))
	echo "$name $pervol" >> "$TMP/pervol"
	printf '%-16s %5d ns/voluntary  %7d voluntary switches of the benchmark  %s\n' "$name" \
		"$pervol" "${vol:-0}" "$(grep -o 'user stacks took [0-9]* ns each' "$TMP/err.txt")"
	sed -n 's/.*user stacks took \([0-9]*\) ns each.*/bpftimed \1/p' "$TMP/err.txt" >> "$TMP/pervol"
	grep -o 'user stacks of user tasks by part.*' "$TMP/err.txt" | sed 's/^/    /'
}

# median NAME: of the ns per voluntary switch of NAME's runs
median() {
	awk -v n="$1" '$1 == n { print $2 }' "$TMP/pervol" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2)) }'
}

# paired A B: the median over the rounds of A's value minus B's in the same round (the k-th
# run of each is round k's): load that drifts between rounds cancels out
paired() {
	awk -v a="$1" -v b="$2" '$1 == a { x[++na] = $2 } $1 == b { y[++nb] = $2 }
		END { for (i = 1; i <= na && i <= nb; i++) print x[i] - y[i] }' "$TMP/pervol" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2)) }'
}

# minimum NAME
minimum() {
	awk -v n="$1" '$1 == n { print $2 }' "$TMP/pervol" | sort -n | head -1
}

echo "# $(date -u '+%F %H:%M') load $(cut -d' ' -f1-3 /proc/loadavg), kernel $(uname -r)"
echo "# workload: taskset -c 1 perf bench sched pipe -l $LOOPS under $SCHEDPROF trace" \
	"--views schedules (-a; the --stacks runs: -p, the benchmark alone); $ROUNDS interleaved rounds"
for r in $(seq "$ROUNDS"); do
	if [ "$USER_ONLY" = 0 ]; then
		one cache "$SCHEDPROF"
		one verify "$SCHEDPROF" --verify-callers
	fi
	one_target full-stacks "$SCHEDPROF" --stacks
	ENV=SCHEDPROF_USTACK_OFF=1 one_target kernel-stacks "$SCHEDPROF" --stacks
	ENV=SCHEDPROF_USTACK_TIMING=1 one_target timed "$SCHEDPROF" --stacks
	[ -n "$OTHER" ] && one other "$OTHER"
	[ -n "$KSTACKS" ] && one_target main-kstacks "$KSTACKS" --stacks
	[ -n "$BASE" ] && one_target base-stacks "$BASE" --stacks
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
full=$(median full-stacks) kern=$(median kernel-stacks)
fmin=$(minimum full-stacks) kmin=$(minimum kernel-stacks)
if [ -n "$full" ] && [ -n "$kern" ]; then
	cost=$(paired full-stacks kernel-stacks)
	echo "# user stacks (issue #12), workload perf bench sched pipe (pinned), bpf_stats of" \
		"sp_switch per voluntary switch: full-stacks - kernel-stacks of the same round," \
		"median over the rounds: $cost ns (medians of each: $full - $kern = $((full - kern))" \
		"ns; minima $fmin - $kmin = $((fmin - kmin)) ns)"
	echo "# user stacks timed in BPF (SCHEDPROF_USTACK_TIMING): $(median bpftimed) ns each" \
		"(median of the timed runs)"
	if [ "$cost" -le 1000 ]; then
		echo "# verdict: met -- user stacks add $cost ns <= 1000 ns per voluntary switch"
	else
		echo "# verdict: MISSED -- user stacks add $cost ns > 1000 ns per voluntary switch"
	fi
else
	echo "# verdict: not measured (no full-stacks or kernel-stacks run succeeded)"
fi
if [ -n "$BASE" ] && [ -n "$kern" ]; then
	base=$(median base-stacks) bmin=$(minimum base-stacks)
	echo "# BASE ($BASE): its user stacks add $(paired base-stacks kernel-stacks) ns per" \
		"voluntary switch (paired as above; medians of each: $base - $kern =" \
		"$((base - kern)) ns; minima $bmin - $kmin = $((bmin - kmin)) ns); BASE - full-stacks" \
		"paired: $(paired base-stacks full-stacks) ns"
fi
if [ -n "$KSTACKS" ]; then
	echo "# against KSTACKS ($KSTACKS --stacks): full-stacks $full - $(median main-kstacks)" \
		"= $((full - $(median main-kstacks))) ns per voluntary switch (medians)"
fi
