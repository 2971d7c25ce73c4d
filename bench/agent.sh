#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/agent.sh -- what `schedprof agent` costs ("Performance"):
#   idle     the agent on an idle machine at -i IDLE_INTERVAL (default 60 s) for IDLE_S
#            (default 3 intervals + 5 s), all views, into a real ClickHouse server started
#            on loopback (tests/integration/clickhouse_lib.sh; ndjson to a file without one):
#            its CPU time over the run as % of one CPU (goal < 0.5%), its peak RSS (VmHWM,
#            goal < 32 MB) and the longest flush, one interval's INSERTs (goal < 50 ms);
#   compile  one interval's rows of a busy compile job (examples/compile-job, make -j2,
#            rebuilt in a loop for COMPILE_S, default 2 intervals of COMPILE_INTERVAL =
#            60 s), all views, the sink unreachable so that every interval stays spooled:
#            the largest interval's file (gzip'd) x 1,000 must fit the default --spool-limit.
#   growth   the agent runs for weeks: at -i 0.2 for GROWTH_S (default 60 s, 300 intervals),
#            system-wide into ndjson, its RSS after 20 intervals and at the end (goal: it
#            grows by less than 2 MB; the BPF maps only add up, so a machine that keeps
#            creating new stacks -- new pids, a build -- grows the runs read until the maps
#            are full: run it on a quiet machine, or with TARGET="-p PIDS").
# The numbers are only meaningful on a quiet machine. Exit 1 when a goal is missed.
# usage: sudo bench/agent.sh [idle] [compile] [growth]      (all by default)
#   env: SCHEDPROF, IDLE_INTERVAL, IDLE_S, COMPILE_INTERVAL, COMPILE_S, GROWTH_S, TARGET,
#        SINK=ndjson to skip ClickHouse
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
SCHEDPROF=${SCHEDPROF:-$TOP/build/src/schedprof}
IDLE_INTERVAL=${IDLE_INTERVAL:-60}
IDLE_S=${IDLE_S:-$((3 * IDLE_INTERVAL + 5))}
COMPILE_INTERVAL=${COMPILE_INTERVAL:-60}
COMPILE_S=${COMPILE_S:-$((2 * COMPILE_INTERVAL + 2))}
GROWTH_S=${GROWTH_S:-60}
TARGET=${TARGET:-}
SINK=${SINK:-clickhouse}
DEF_LIMIT_MB=$("$SCHEDPROF" agent --help | sed -n 's/.*(default \([0-9]*\)M;.*/\1/p')
phases=("$@")
[ ${#phases[@]} -gt 0 ] || phases=(idle compile growth)

[ "$(id -u)" = 0 ] || { echo "$0: run it as root" >&2; exit 1; }
[ -x "$SCHEDPROF" ] || { echo "$0: $SCHEDPROF not built" >&2; exit 1; }
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$TOP/tests/integration/clickhouse_lib.sh"
missed=0

# SINK_URL: a ClickHouse server of its own (started here, not in a subshell: the exit trap
# must know it), or an ndjson file
sink_start() {
	if [ "$SINK" = clickhouse ] && [ -x "$CH_SERVER" ]; then
		ch_start bench >/dev/null
		SINK_URL=$(ch_url bench)
	else
		SINK_URL="ndjson:$TMP/rows.ndjson"
	fi
}

# cpu_ticks PID: utime + stime of the process (all threads), in clock ticks
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# run_agent NAME SECONDS ARGS...: the agent for SECONDS with -v; sets CPU_PCT, HWM_KB (peak
# RSS), RSS_KB (RSS at the end, between intervals)
run_agent() {
	local name=$1 secs=$2 pid t0 c0 t1 c1 hz
	shift 2
	hz=$(getconf CLK_TCK)
	"$SCHEDPROF" agent -v --spool "$TMP/spool-$name" "$@" 2> "$TMP/$name.err" &
	pid=$!
	for _ in $(seq 200); do
		ls -l /proc/$pid/fd 2>/dev/null | grep -q bpf_link && break
		sleep 0.05
	done
	sleep 1 # start-up (symbols, BPF load) is not the steady state
	t0=$(date +%s.%N) c0=$(cpu_ticks $pid)
	sleep "$secs"
	t1=$(date +%s.%N) c1=$(cpu_ticks $pid)
	HWM_KB=$(awk '/^VmHWM/ { print $2 }' /proc/$pid/status)
	RSS_KB=$(awk '/^VmRSS/ { print $2 }' /proc/$pid/status)
	kill -INT $pid
	wait $pid || echo "(agent $name exited $?)"
	CPU_PCT=$(echo "scale=3; 100 * ($c1 - $c0) / $hz / ($t1 - $t0)" | bc)
}

for phase in "${phases[@]}"; do
	case $phase in
	idle)
		sink_start
		url=$SINK_URL
		echo "=== idle: -i $IDLE_INTERVAL for ${IDLE_S}s, sink $url ==="
		schema=()
		[ "${url#clickhouse}" = "$url" ] || schema=(--create-schema)
		run_agent idle "$IDLE_S" -i "$IDLE_INTERVAL" --sink "$url" "${schema[@]}"
		flush=$(grep -o 'sent in [0-9.]* ms' "$TMP/idle.err" | awk '{ if ($3 > m) m = $3 } END { print m + 0 }')
		nflush=$(grep -c 'sent in' "$TMP/idle.err")
		printf "idle: CPU %s%% of one CPU (goal < 0.5), RSS %.1f MB between intervals " \
			"$CPU_PCT" "$(echo "$RSS_KB / 1024" | bc -l)"
		printf "(goal < 32), %.1f MB at the peak (an interval's read), " \
			"$(echo "$HWM_KB / 1024" | bc -l)"
		printf "longest flush %s ms of %s (goal < 50)\n" "$flush" "$nflush"
		[ "$(echo "$CPU_PCT < 0.5" | bc)" = 1 ] || missed=1
		[ "$RSS_KB" -lt $((32 * 1024)) ] || missed=1
		[ "$(echo "$flush < 50" | bc)" = 1 ] || missed=1
		;;
	compile)
		export OUT=$TMP/proj
		make -s -C "$TOP/examples/compile-job" OUT="$OUT" "$OUT/.generated" >/dev/null
		echo "=== compile: make -j2 in a loop, -i $COMPILE_INTERVAL for ${COMPILE_S}s, spooled ==="
		( end=$((SECONDS + COMPILE_S + 2))
		  while [ $SECONDS -lt $end ]; do
			make -s -C "$TOP/examples/compile-job" OUT="$OUT" clean
			make -s -j2 -C "$TOP/examples/compile-job" OUT="$OUT" CFLAGS="-O2 -pipe" >/dev/null
		  done ) &
		job=$!
		# a sink nobody answers: every interval stays in the spool, as in an outage
		run_agent compile "$COMPILE_S" -i "$COMPILE_INTERVAL" --sink clickhouse://127.0.0.1:1/x
		kill $job 2>/dev/null
		wait $job 2>/dev/null
		# the largest full interval on disk (the last one is cut short by the stop)
		max=$(ls -l "$TMP/spool-compile"/*.batch | head -n -1 | awk '{ if ($5 > m) m = $5 } END { print m + 0 }')
		raw=$(grep -o 'interval [0-9]*: [0-9]* bytes spooled' "$TMP/compile.err" | head -n -1 |
			awk '{ if ($3 > m) m = $3 } END { print m + 0 }')
		printf "compile: the largest interval %.1f KiB in the spool (%.1f KiB of JSON rows); " \
			"$(echo "$max / 1024" | bc -l)" "$(echo "$raw / 1024" | bc -l)"
		printf "1,000 intervals %.1f MiB; default --spool-limit %s MiB\n" \
			"$(echo "$max * 1000 / 1048576" | bc -l)" "$DEF_LIMIT_MB"
		[ "$max" -gt 0 ] || fail "no interval spooled"
		[ $((max * 1000)) -le $((DEF_LIMIT_MB * 1048576)) ] || missed=1
		;;
	growth)
		echo "=== growth: -i 0.2 for ${GROWTH_S}s ${TARGET:-system-wide} ==="
		# shellcheck disable=SC2086 # TARGET: options, split on purpose
		"$SCHEDPROF" agent -i 0.2 --spool "$TMP/spool-growth" --sink "ndjson:$TMP/growth.ndjson" \
			$TARGET 2> "$TMP/growth.err" &
		pid=$!
		sleep 5 # 20 intervals: past the start and the first reads
		rss0=$(awk '/^VmRSS/ { print $2 }' /proc/$pid/status)
		for _ in $(seq $(((GROWTH_S - 5) / 5))); do
			sleep 5
			printf "%s " "$(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' /proc/$pid/status)"
		done
		echo "(MB, every 5 s)"
		rss1=$(awk '/^VmRSS/ { print $2 }' /proc/$pid/status)
		kill -INT $pid
		wait $pid || echo "(agent growth exited $?)"
		n=$(grep -c . "$TMP/growth.ndjson" 2>/dev/null)
		printf "growth: RSS %.1f MB after 20 intervals, %.1f MB after %d (goal: < 2 MB more; %s rows)\n" \
			"$(echo "$rss0 / 1024" | bc -l)" "$(echo "$rss1 / 1024" | bc -l)" \
			$((GROWTH_S * 5)) "$n"
		[ $((rss1 - rss0)) -lt 2048 ] || missed=1
		;;
	*) echo "usage: $0 [idle] [compile] [growth]" >&2; exit 2 ;;
	esac
done
[ $missed = 0 ] || fail "a goal was missed (see above)"
