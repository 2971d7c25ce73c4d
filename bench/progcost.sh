#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/progcost.sh -- BPF cost of each of schedprof's programs: run count and
# run time per run of every program a `schedprof trace -a ARGS` holds, from bpf_stats
# (kernel.bpf_stats_enabled=1, restored on exit), while one workload runs. Less sensitive to
# other load on the machine than a wall-clock slowdown: it counts only the programs' own time.
#
# usage: sudo bench/progcost.sh [-r RUNS] [-w WORKLOAD] [-b BIN,BIN...] [-- SCHEDPROF-ARGS...]
#   -b: compare builds (e.g. main's and a variant's schedprof): each round runs every one of
#       them once, in turn, and the summary gives per program and build the minimum and the
#       median ns per run over the rounds (a loaded machine blurs single runs, not minima)
#   WORKLOAD: pipe1cpu (default: taskset -c 1 perf bench sched pipe -l $PIPE_LOOPS),
#             messaging (perf bench sched messaging), or any shell command
#   SCHEDPROF-ARGS: default none (all views)
# env: SCHEDPROF (the binary), PIPE_LOOPS (default 160000)
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SCHEDPROF=${SCHEDPROF:-$HERE/../build/src/schedprof}
PIPE_LOOPS=${PIPE_LOOPS:-160000}
RUNS=3 WORK=pipe1cpu BINS=""
while getopts "r:w:b:h" opt; do
	case $opt in
	r) RUNS=$OPTARG ;; w) WORK=$OPTARG ;; b) BINS=$OPTARG ;;
	*) echo "usage: $0 [-r RUNS] [-w WORKLOAD] [-b BIN,BIN...] [-- SCHEDPROF-ARGS...]" >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
ARGS=("$@")
case $WORK in
pipe1cpu) CMD="taskset -c 1 perf bench sched pipe -l $PIPE_LOOPS" ;;
messaging) CMD="perf bench sched messaging" ;;
*) CMD=$WORK ;;
esac
[[ $EUID == 0 ]] || { echo "$0: must run as root" >&2; exit 1; }
for tool in perf taskset bpftool jq; do
	command -v "$tool" >/dev/null || { echo "$0: $tool not found" >&2; exit 1; }
done
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
TMP=$(mktemp -d /tmp/schedprof-progcost.XXXXXX)
SP_PID=""
cleanup() {
	[ -n "$SP_PID" ] && kill -INT "$SP_PID" 2>/dev/null && wait "$SP_PID" 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
	rm -rf "$TMP"
}
trap cleanup EXIT

# prog_stats PID: "name run_cnt run_time_ns" for each program schedprof PID holds
prog_stats() {
	local ids
	ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u)
	for id in $ids; do
		bpftool -j prog show id "$id" 2>/dev/null |
			jq -r '"\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"'
	done | sort
}

one_run() {
	"$SCHEDPROF" trace -a "${ARGS[@]}" -f json -o "$TMP/run.json" 2>"$TMP/err" &
	SP_PID=$!
	for _ in $(seq 200); do
		ls -l /proc/$SP_PID/fd 2>/dev/null | grep -q bpf_link && break
		sleep 0.05
	done
	sleep 0.3
	sysctl -qw kernel.bpf_stats_enabled=1
	prog_stats $SP_PID > "$TMP/before"
	sh -c "$CMD" > "$TMP/work.txt" 2>&1
	prog_stats $SP_PID > "$TMP/after"
	sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
	kill -INT $SP_PID
	wait $SP_PID
	SP_PID=""
	join "$TMP/before" "$TMP/after" | awk '$4 > $2 {
		printf "%s %d %.0f\n", $1, $4 - $2, ($5 - $3) / ($4 - $2) }'
}

echo "schedprof trace -a ${ARGS[*]}; workload: $CMD; $RUNS runs"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$BINS" ]; then
	IFS=, read -ra BIN_LIST <<<"$BINS"
	for b in "${BIN_LIST[@]}"; do
		[ -x "$b" ] || { echo "$0: $b is not an executable" >&2; exit 1; }
	done
	for i in "${!BIN_LIST[@]}"; do echo "build #$i: ${BIN_LIST[$i]}"; done
	printf "%-16s %-8s %-8s %-8s %s\n" program build min median "ns/run per round"
	for r in $(seq "$RUNS"); do
		for i in "${!BIN_LIST[@]}"; do
			SCHEDPROF=${BIN_LIST[$i]}
			one_run | sed "s|^|$i |"
		done
	done | awk '
		function med(s,   a, n, i, j, t) {
			n = split(s, a, " ")
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
					t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
				}
			return a[1] " " a[int((n + 1) / 2)]
		}
		{ ns[$2 " " $1] = ns[$2 " " $1] " " $4 }
		END { for (k in ns) { split(k, kk, " "); split(med(ns[k]), m, " ")
				      printf "%-16s %-8s %-8s %-8s%s\n", kk[1], "#" kk[2], m[1], m[2], ns[k] } }' |
		sort
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
	exit 0
fi
for r in $(seq "$RUNS"); do
	one_run
done | awk '{ n[$1]++; ev[$1] = ev[$1] " " $2; ns[$1] = ns[$1] " " $3 }
	END { printf "%-16s %-30s %s\n", "program", "runs per workload run", "ns/run per workload run"
	      for (k in n) printf "%-16s %-30s %s\n", k, ev[k], ns[k] }' | sort
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
