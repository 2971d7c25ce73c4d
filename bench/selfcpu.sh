#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/selfcpu.sh -- schedprof's own CPU time (user + system, in clock ticks, from its
# /proc/PID/stat) while a workload runs N times under `schedprof trace -a ARGS`: what its
# user space costs the traced machine, which the BPF programs' bpf_stats do not count
# (snapshots of new processes, unwinding copies, naming frames). Start-up is not counted:
# the ticks are read once it runs, then after the workload.
#
# usage: sudo bench/selfcpu.sh [-n N] [-w WORKLOAD] [-b BIN,BIN...] [-- SCHEDPROF-ARGS...]
#   -b: builds to compare, run in turn N... once each per round (default: this tree's)
#   WORKLOAD: messaging (default: perf bench sched messaging) or any shell command
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
N=3 WORK=messaging BINS=${SCHEDPROF:-$HERE/../build/src/schedprof} ROUNDS=2
while getopts "n:w:b:r:h" opt; do
	case $opt in
	n) N=$OPTARG ;; w) WORK=$OPTARG ;; b) BINS=$OPTARG ;; r) ROUNDS=$OPTARG ;;
	*) echo "usage: $0 [-n N] [-r ROUNDS] [-w WORKLOAD] [-b BIN,BIN...] [-- SCHEDPROF-ARGS...]" >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $EUID == 0 ]] || { echo "$0: must run as root" >&2; exit 1; }
case $WORK in
messaging) CMD="perf bench sched messaging" ;;
*) CMD=$WORK ;;
esac
TMP=$(mktemp -d /tmp/schedprof-selfcpu.XXXXXX)
SP_PID=""
cleanup() {
	[ -n "$SP_PID" ] && kill -INT "$SP_PID" 2>/dev/null && wait "$SP_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# ticks PID: utime + stime
ticks() { awk '{ print $14 + $15 }' /proc/"$1"/stat; }

IFS=, read -r -a bins <<<"$BINS"
echo "schedprof trace -a $*; workload: $CMD, $N times; $ROUNDS rounds"
for ((r = 1; r <= ROUNDS; r++)); do
	for b in "${bins[@]}"; do
		"$b" trace -a "$@" -o "$TMP/out" >/dev/null 2>"$TMP/err" &
		SP_PID=$!
		sleep 1.5 # attached (its start-up is not what this measures)
		kill -0 "$SP_PID" 2>/dev/null || { echo "$b: $(tail -2 "$TMP/err")" >&2; exit 1; }
		t0=$(ticks "$SP_PID")
		s0=$(date +%s.%N)
		for ((i = 0; i < N; i++)); do bash -c "$CMD" >/dev/null 2>&1; done
		s1=$(date +%s.%N)
		t1=$(ticks "$SP_PID")
		kill -INT "$SP_PID"
		wait "$SP_PID"
		SP_PID=""
		printf 'round %d  %-50s %4d ticks in %.2f s of workload\n' "$r" "$b" $((t1 - t0)) \
			"$(echo "$s1 - $s0" | bc)"
	done
done
