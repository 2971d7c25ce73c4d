#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/wakeup.sh -- BPF cost of the schedules view's wake-up programs (issue #10): run time
# per event of sp_waking (sched_waking), sp_wakeup_new and sp_switch, from bpf_stats
# (kernel.bpf_stats_enabled=1: run_time_ns / run_cnt of each program, bpftool), while a
# pinned `perf bench sched pipe` runs under `schedprof trace -a --views schedules`, with and
# without --wakers. Every wake-up of the benchmark is of a traced task (-a), so each one
# stamps the task storage: the wake-up program's worst case without --wakers.
#
# usage: sudo bench/wakeup.sh [-r RUNS] [-l LOOPS]     (env SCHEDPROF: the binary)
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SCHEDPROF=${SCHEDPROF:-$HERE/../build/src/schedprof}
RUNS=3 LOOPS=160000
while getopts "r:l:h" opt; do
	case $opt in
	r) RUNS=$OPTARG ;; l) LOOPS=$OPTARG ;;
	*) echo "usage: $0 [-r RUNS] [-l LOOPS]" >&2; exit 2 ;;
	esac
done
[[ $EUID == 0 ]] || { echo "$0: must run as root" >&2; exit 1; }
for tool in perf taskset bpftool jq; do
	command -v "$tool" >/dev/null || { echo "$0: $tool not found" >&2; exit 1; }
done
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
TMP=$(mktemp -d /tmp/schedprof-wakeup.XXXXXX)
SP_PID=""
cleanup() {
	[ -n "$SP_PID" ] && kill -INT "$SP_PID" 2>/dev/null && wait "$SP_PID" 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
	rm -rf "$TMP"
}
trap cleanup EXIT
[ "$OLD_STATS" = 1 ] && echo "warning: kernel.bpf_stats_enabled was already on" >&2

# prog_stats PID: "name run_cnt run_time_ns" for each program schedprof PID holds
prog_stats() {
	local ids
	ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u)
	for id in $ids; do
		bpftool -j prog show id "$id" 2>/dev/null |
			jq -r '"\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"'
	done
}

# one_run WAKERS_FLAG: prints "name events ns/event" per program for one benchmark run
one_run() {
	"$SCHEDPROF" trace -a --views schedules $1 -f json -o "$TMP/run.json" &
	SP_PID=$!
	for _ in $(seq 200); do
		ls -l /proc/$SP_PID/fd 2>/dev/null | grep -q bpf_link && break
		sleep 0.05
	done
	sleep 0.3
	sysctl -qw kernel.bpf_stats_enabled=1
	prog_stats $SP_PID > "$TMP/before"
	taskset -c 1 perf bench sched pipe -l "$LOOPS" > "$TMP/perf.txt" 2>&1
	prog_stats $SP_PID > "$TMP/after"
	sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
	kill -INT $SP_PID
	wait $SP_PID
	SP_PID=""
	join "$TMP/before" "$TMP/after" | awk '$4 > $2 {
		printf "%s %d %.0f\n", $1, $4 - $2, ($5 - $3) / ($4 - $2) }'
}

echo "schedprof: $SCHEDPROF; taskset -c 1 perf bench sched pipe -l $LOOPS; $RUNS runs each"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for flag in "" --wakers; do
	for r in $(seq "$RUNS"); do
		one_run "$flag" | sed "s/^/${flag:-default} run$r /"
	done
done | awk '{ key = $1 " " $3; n[key]++; ev[key] = ev[key] " " $4; ns[key] = ns[key] " " $5 }
	END { printf "%-10s %-14s %-28s %s\n", "mode", "program", "events per run", "ns/event per run"
	      for (k in n) { split(k, a, " "); printf "%-10s %-14s %-28s %s\n", a[1], a[2], ev[k], ns[k] } }' |
	sort
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
