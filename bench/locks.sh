#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/locks.sh -- cost of schedprof's locks view on the directory workload (8 threads
# creating and unlinking files in one directory on tmpfs, tests/workloads/dirlock.c: hundreds
# of rwsem-write contentions a second plus thousands of spinlock ones), against untraced runs
# and against the other lock-contention tracers:
#   sp_locks   schedprof trace -a --views locks
#   sp_both    schedprof trace -a --views schedules,locks
#   klockstat  libbpf-tools klockstat (fentry or kprobes on mutex_lock/down_*)
#   perf_lock_b  perf lock contention -a -b (BPF, needs perf built with BUILD_BPF_SKEL)
#   perf_lock_rec  perf lock record -a (writes every lock:contention_* event): the substitute
#   bt_lockcont    bpftrace on lock:contention_begin/end with kstack(8): the substitute
# Tracers that cannot run on this kernel are reported as such (one try each), not measured.
#
# Method: every round runs, in a shuffled tracer order, an interleaved pair per tracer: the
# workload untraced, then traced (the tracer attached system-wide first: its perf-event and
# bpf-link fds present and unchanged for STABLE_MS), then SIGINT and wait. The metric is the
# workload's own throughput (ops/s over SECONDS); slowdown = untraced / traced of the same
# pair. The table gives the median and min-max over rounds; the "none" row pairs two
# untraced runs (the noise floor). Then a cost phase with kernel.bpf_stats_enabled=1 gives
# the BPF programs' ns per event (run_time_ns / run_cnt) of each BPF tracer, restored after.
#
# usage: sudo bench/locks.sh [-r ROUNDS] [-d SECONDS] [-j THREADS] [-t a,b,...] [-o FILE] [-s SEED]
#   -o FILE  also write the markdown report to FILE
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
SCHEDPROF=${SCHEDPROF:-$TOP/build/src/schedprof}
STABLE_MS=${STABLE_MS:-300}
ROUNDS=7 SECS=2 THREADS=8 TFILTER="" OUT="" SEED=$RANDOM

usage() {
	sed -n '3,26p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}
while getopts "r:d:j:t:o:s:h" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;; d) SECS=$OPTARG ;; j) THREADS=$OPTARG ;; t) TFILTER=$OPTARG ;;
	o) OUT=$OPTARG ;; s) SEED=$OPTARG ;; *) usage ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "$0: run it as root" >&2; exit 1; }
[ -x "$SCHEDPROF" ] || { echo "$0: $SCHEDPROF not found (build it, or set SCHEDPROF)" >&2; exit 1; }
for c in jq bpftool cc; do
	command -v $c > /dev/null || { echo "$0: $c is needed" >&2; exit 1; }
done

WT=$(mktemp -d /tmp/schedprof-bench-locks.XXXXXX)
MOUNTED=""
STATS_OLD=""
TRACER_PIDS=()
cleanup() {
	local p
	for p in "${TRACER_PIDS[@]}"; do
		kill -0 "$p" 2> /dev/null && kill -KILL "$p" 2> /dev/null
	done
	[ -n "$STATS_OLD" ] && sysctl -q kernel.bpf_stats_enabled="$STATS_OLD"
	[ -n "$MOUNTED" ] && umount "$WT/fs"
	rm -rf "$WT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$WT/fs"
mount -t tmpfs -o size=256m tmpfs "$WT/fs" && MOUNTED=1
cc -O2 -pthread -o "$WT/dirlock" "$TOP/tests/workloads/dirlock.c" || exit 1
mkdir -p "$WT/fs/d"

declare -A CMD=(
	[sp_locks]="$SCHEDPROF trace -a --views locks"
	[sp_both]="$SCHEDPROF trace -a --views schedules,locks"
	[klockstat]="klockstat"
	[perf_lock_b]="perf lock contention -a -b"
	[perf_lock_rec]="perf lock record -a -o $WT/perf.data"
	[bt_lockcont]="bpftrace -e 'tracepoint:lock:contention_begin { @s[tid] = nsecs; @n[kstack(8)] = count(); } tracepoint:lock:contention_end /@s[tid]/ { @ns = hist(nsecs - @s[tid]); delete(@s[tid]); }'"
)
ALL=(sp_locks sp_both klockstat perf_lock_b perf_lock_rec bt_lockcont)
TRACERS=()
for t in "${ALL[@]}"; do
	[ -z "$TFILTER" ] || [[ ",$TFILTER," == *",$t,"* ]] && TRACERS+=("$t")
done

log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
now_ms() { local t=$EPOCHREALTIME; echo $(( ${t/./} / 1000 )); }

# count of perf_event and bpf_link fds the tracer holds (bpftrace and perf hold them all)
attach_fds() {
	find "/proc/$1/fd" -maxdepth 1 \( -lname 'anon_inode:\[perf_event\]' -o \
		-lname 'anon_inode:bpf_link' \) -printf x 2> /dev/null | wc -c
}

# start NAME: launches the tracer, waits until attached; sets TP. rc 1: it died (log in $WT)
start() {
	local n last=-1 since deadline
	bash -c "exec ${CMD[$1]}" < /dev/null > "$WT/$1.out" 2> "$WT/$1.err" &
	TP=$!
	TRACER_PIDS+=("$TP")
	deadline=$(( $(now_ms) + 30000 ))
	since=$(now_ms)
	while (( $(now_ms) < deadline )); do
		kill -0 "$TP" 2> /dev/null || { wait "$TP" 2> /dev/null; return 1; }
		n=$(attach_fds "$TP")
		if [ "$n" != "$last" ]; then
			last=$n since=$(now_ms)
		elif (( n > 0 && $(now_ms) - since >= STABLE_MS )); then
			return 0
		fi
		sleep 0.03
	done
	stop
	return 1
}

stop() {
	local i
	kill -INT "$TP" 2> /dev/null
	for ((i = 0; i < 600; i++)); do
		kill -0 "$TP" 2> /dev/null || break
		sleep 0.05
	done
	kill -KILL "$TP" 2> /dev/null
	wait "$TP" 2> /dev/null
	rm -f "$WT/perf.data" "$WT/perf.data.old"
}

# one workload run: prints ops/s
work() {
	"$WT/dirlock" "$WT/fs/d" "$THREADS" "$SECS" | awk '{ print $(NF - 1) }'
}

# ---- which tracers run here ----
declare -A WHY
RUN=()
for t in "${TRACERS[@]}"; do
	if start "$t"; then
		stop
		RUN+=("$t")
	else
		WHY[$t]=$(cat "$WT/$t.err" "$WT/$t.out" 2> /dev/null | grep -v '^ *$' |
			grep -iv 'rlimit_memlock' | tail -1 | sed 's/^ *//' | cut -c1-150)
		[ -z "${WHY[$t]}" ] && WHY[$t]="did not attach"
		log "$t does not run here: ${WHY[$t]}"
	fi
done
log "measuring: ${RUN[*]} ($ROUNDS rounds, ${SECS}s runs, $THREADS threads, seed $SEED)"

# ---- interleaved pairs ----
RANDOM=$SEED
declare -A RATIOS
for ((r = 1; r <= ROUNDS; r++)); do
	order=(none "${RUN[@]}")
	for ((i = ${#order[@]} - 1; i > 0; i--)); do
		j=$((RANDOM % (i + 1)))
		tmp=${order[i]} order[i]=${order[j]} order[j]=$tmp
	done
	for t in "${order[@]}"; do
		base=$(work)
		if [ "$t" = none ]; then
			traced=$(work)
		else
			start "$t" || { log "round $r: $t failed to start"; continue; }
			traced=$(work)
			stop
		fi
		ratio=$(awk -v b="$base" -v x="$traced" 'BEGIN { printf "%.4f", (x > 0 ? b / x : 0) }')
		RATIOS[$t]+="$ratio "
		log "round $r: $t base $base ops/s, traced $traced ops/s, slowdown $ratio"
	done
done

stats() { # values -> "median min max"
	tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f %.2f %.2f", m, v[1], v[NR] }'
}

# ---- BPF ns per event (bpf_stats) ----
prog_ids() { grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2> /dev/null | awk '{ print $2 }' | sort -un; }
snap() { # ids -> "id name run_cnt run_time_ns" lines
	local id
	for id in "$@"; do
		bpftool -j prog show id "$id" 2> /dev/null |
			jq -r '"\(.id) \(.name // "-") \(.run_cnt // 0) \(.run_time_ns // 0)"'
	done
}
COST=""
STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q kernel.bpf_stats_enabled=1
for t in "${RUN[@]}"; do
	[[ $t == sp_* || $t == bt_* || $t == klockstat || $t == perf_lock_b ]] || continue
	start "$t" || continue
	ids=$(prog_ids "$TP")
	snap $ids > "$WT/before"
	ops=$(work)
	snap $ids > "$WT/after"
	stop
	COST+=$(awk -v t="$t" -v s="$SECS" 'NR == FNR { c[$1] = $3; ns[$1] = $4; next }
		($1 in c) && $3 > c[$1] { n = $3 - c[$1]
			printf "| %s | %s | %d | %.0f | %.0f | %.1f |\n", t, $2, n, n / s,
				($4 - ns[$1]) / n, ($4 - ns[$1]) / s / 1e6 }' \
		"$WT/before" "$WT/after")
	COST+=$'\n'
done
sysctl -q kernel.bpf_stats_enabled="$STATS_OLD"
STATS_OLD=""

# ---- report ----
report() {
	local t
	echo "## Locks view overhead: dirlock ($THREADS threads, ${SECS}s, tmpfs), $(uname -r), $(nproc) CPUs"
	echo
	echo "$ROUNDS rounds, interleaved pairs (untraced then traced), seed $SEED."
	echo "slowdown = untraced ops/s / traced ops/s of the same pair: median [min-max]."
	echo
	echo "| tracer | slowdown | command |"
	echo "|---|---|---|"
	for t in none "${RUN[@]}"; do
		read -r m lo hi <<< "$(echo "${RATIOS[$t]:-}" | stats)"
		printf '| %s | %s [%s-%s] | `%s` |\n' "$t" "$m" "$lo" "$hi" \
			"$([ "$t" = none ] && echo "(untraced / untraced)" || echo "${CMD[$t]}" | cut -c1-60)"
	done
	for t in "${TRACERS[@]}"; do
		[ -n "${WHY[$t]:-}" ] && printf '| %s | does not run here | %s |\n' "$t" "${WHY[$t]}"
	done
	echo
	echo "BPF program cost (kernel.bpf_stats_enabled=1, one ${SECS}s run each; CPU ms/s: time"
	echo "inside the program per second of workload, on all CPUs together):"
	echo
	echo "| tracer | program | runs | runs/s | ns/run | CPU ms/s |"
	echo "|---|---|---|---|---|---|"
	printf '%s' "$COST"
}
report
[ -n "$OUT" ] && report > "$OUT"
exit 0
