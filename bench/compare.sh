#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/compare.sh -- schedprof side by side with the other system-wide tracers, in
# ONE interleaved run, on four workloads. Per tracer and workload it prints the slowdown
# (traced / untraced), the BPF ns per sched_switch (bpf_stats), start-up (launch to attached),
# peak RSS, stop time and report time.
#
# Tracers (-t):
#   floor        EMPTY tp_btf/sched_switch program (bench/floor.bpf.c, loader bench/floor.c)
#   offcputime   libbpf-tools /usr/sbin/offcputime
#   bpftrace     bpftrace -e 'tracepoint:sched:sched_switch { @[kstack] = count(); }'
#   perf_sched   perf sched record -a
#   perf_lock    perf lock record -a
#   perf_prof    perf record -F 99 -a -g
#   sp_sched     schedprof trace -a --views schedules
#   sp_profile   schedprof trace -a --views profile
#   sp_locks     schedprof trace -a --views locks
#   sp_all       schedprof trace -a              (all views)
# Workloads (-w):
#   pipe1cpu     taskset -c 1 perf bench sched pipe -l 160000, PIPE_REPS (3) times: the
#                fastest "Total time" of the three
#   messaging    perf bench sched messaging, MSG_REPS (3) times: the fastest
#   make_j2      examples/compile-job: make clean (untimed), make -s -j2 (timed)
#   dirlock      tests/workloads/dirlock.c, 8 threads, 1 s: metric = us per op (throughput)
#
# Method (bench/README.md): each round is BASE T1 BASE T2 ... Tn BASE, tracer order shuffled
# per round; BASE runs every workload untraced; a traced run is divided by the mean of the
# BASE runs just before and after it; median and min-max over rounds. Then a cost phase with
# kernel.bpf_stats_enabled=1 (restored on exit) for each BPF tracer's ns per event.
#
# usage: sudo bench/compare.sh [-r ROUNDS] [-w a,b] [-t a,b] [-o DIR] [-s SEED] [-c N] [-C]
#                              [-L LOAD] [-q]
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
SCHEDPROF=${SCHEDPROF:-$TOP/build/src/schedprof}
OFFCPUTIME=${OFFCPUTIME:-/usr/sbin/offcputime}
STABLE_MS=${STABLE_MS:-300}		# attach fds unchanged this long => attached
READY_TIMEOUT_S=${READY_TIMEOUT_S:-30}
STOP_TIMEOUT_S=${STOP_TIMEOUT_S:-120}
REPORT_TIMEOUT_S=${REPORT_TIMEOUT_S:-300}
PIPE_LOOPS=${PIPE_LOOPS:-160000}
PIPE_REPS=${PIPE_REPS:-3}			# pipe1cpu: runs per measurement, the fastest counts
MSG_REPS=${MSG_REPS:-3}				# messaging: the same
MSG_ARGS=${MSG_ARGS:-}			# perf bench sched messaging's defaults: 10 groups, 100 loops
MAKE_N=${MAKE_N:-12}
MAKE_CFLAGS=${MAKE_CFLAGS:--O2 -pipe}
DIRLOCK_THREADS=${DIRLOCK_THREADS:-8}
DIRLOCK_SECS=${DIRLOCK_SECS:-1}
ROUNDS=3 WFILTER="" TFILTER="" OUT="" SEED="" COST_RUNS=2 DO_COST=1 MAXLOAD="" QUICK=0

usage() {
	sed -n '3,34p' "$0" | sed 's/^# \{0,1\}//'
	cat <<EOF

options:
  -r N      rounds (default $ROUNDS)
  -w a,b    workloads (default: all four)
  -t a,b    tracers (default: all)
  -o DIR    results directory (default: a new /tmp/schedprof-compare.XXXXXX)
  -s SEED   seed of the per-round shuffle
  -c N      runs per workload in the BPF cost phase (default $COST_RUNS)
  -C        no BPF cost phase
  -L LOAD   first wait (at most 20 min) for the 1-minute load average to drop below LOAD
  -q        quick smoke run: 1 round, tiny workloads, 1 cost run (numbers mean nothing)
env: SCHEDPROF OFFCPUTIME STABLE_MS PIPE_LOOPS PIPE_REPS MSG_REPS MSG_ARGS MAKE_N MAKE_CFLAGS DIRLOCK_THREADS
     DIRLOCK_SECS READY_TIMEOUT_S STOP_TIMEOUT_S REPORT_TIMEOUT_S
EOF
	exit 2
}
while getopts "r:w:t:o:s:c:CL:qh" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;; w) WFILTER=$OPTARG ;; t) TFILTER=$OPTARG ;; o) OUT=$OPTARG ;;
	s) SEED=$OPTARG ;; c) COST_RUNS=$OPTARG ;; C) DO_COST=0 ;; L) MAXLOAD=$OPTARG ;;
	q) QUICK=1 ;;
	*) usage ;;
	esac
done
((OPTIND > $#)) || usage
if ((QUICK)); then
	ROUNDS=1 COST_RUNS=1 PIPE_LOOPS=20000 PIPE_REPS=1 MSG_REPS=1 MSG_ARGS="-g 2 -l 20" MAKE_N=2 DIRLOCK_SECS=0.3
	STABLE_MS=150
fi
[[ $ROUNDS =~ ^[1-9][0-9]*$ && $COST_RUNS =~ ^[1-9][0-9]*$ && $PIPE_REPS =~ ^[1-9][0-9]*$ && $MSG_REPS =~ ^[1-9][0-9]*$ ]] || usage
[[ $EUID == 0 ]] || { echo "$0: must run as root" >&2; exit 1; }
for tool in perf taskset make cc clang bpftool jq /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "$0: $tool not found (scripts/setup.sh --bench)" >&2; exit 1; }
done
[[ -x $SCHEDPROF ]] || { echo "$0: $SCHEDPROF not found (build it, or set SCHEDPROF)" >&2; exit 1; }

now_us() { local t=$EPOCHREALTIME; echo $(( 10#${t/./} )); }
log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
in_list() { [[ -z $2 || ",$2," == *",$1,"* ]]; }
load1() { local l; read -r l _ </proc/loadavg; echo "$l"; }
# foreign_tracers: BPF tracing programs loaded by others (checked while none of ours runs)
foreign_tracers() {
	bpftool -j prog show 2>/dev/null | jq -r '[.[] | select(.type == "tracing" or
		.type == "raw_tracepoint" or .type == "tracepoint" or .type == "perf_event") |
		.name // "?"] | unique | join(" ")'
}

# ---- scratch (tmpfs), results, cleanup ----
if [[ -z $OUT ]]; then OUT=$(mktemp -d /tmp/schedprof-compare.XXXXXX); fi
mkdir -p "$OUT/logs" || exit 1
OUT=$(cd "$OUT" && pwd)
SHM=/dev/shm
[[ $(stat -f -c %T "$SHM" 2>/dev/null) == tmpfs ]] || SHM=/tmp
WT=$(mktemp -d "$SHM/schedprof-compare.XXXXXX") || exit 1
export WT TMPDIR=$WT		# gcc's temporaries go to the tmpfs too
STATS_ORIG=$(cat /proc/sys/kernel/bpf_stats_enabled)
((STATS_ORIG == 0)) ||
	log "note: kernel.bpf_stats_enabled is already $STATS_ORIG (another benchmark?): kept at that"
LIVE=()				# /usr/bin/time PIDs of running tracers
cleanup() {
	local p
	for p in "${LIVE[@]}"; do stop_tracer "$p"; done
	sysctl -qw kernel.bpf_stats_enabled="$STATS_ORIG"
	rm -rf "$WT"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

# ---- build the floor and the dirlock workload (into the scratch dir) ----
ARCHINC=/usr/include/$(gcc -dumpmachine 2>/dev/null)
clang -O2 -g -target bpf -I"$ARCHINC" -c "$HERE/floor.bpf.c" -o "$WT/floor.bpf.o" &&
	cc -O2 -o "$WT/floor" "$HERE/floor.c" -lbpf &&
	cc -O2 -Wall -o "$WT/attachwait" "$HERE/attachwait.c" &&
	cc -O2 -pthread -o "$WT/dirlock" "$TOP/tests/workloads/dirlock.c" || exit 1

# ---- workloads and tracers ----
EX=$TOP/examples/compile-job
declare -A WPREP WCMD TCMD RCMD FAILED
WNAMES=() TNAMES=()
add_w() { in_list "$1" "$WFILTER" && { WNAMES+=("$1"); WPREP[$1]=$2; WCMD[$1]=$3; }; }
# add_t NAME CMD [REPORT_CMD]: REPORT_CMD renders what the tracer saved (timed after it exits)
add_t() { in_list "$1" "$TFILTER" && { TNAMES+=("$1"); TCMD[$1]=$2; RCMD[$1]=${3:-}; }; }
add_w pipe1cpu - "taskset -c 1 perf bench sched pipe -l $PIPE_LOOPS"
add_w messaging - "perf bench sched messaging $MSG_ARGS"
add_w make_j2 "make -s -C $EX clean OUT=\$WT/proj" \
	"make -s -j2 -C $EX OUT=\$WT/proj N=$MAKE_N CFLAGS='$MAKE_CFLAGS'"
add_w dirlock "rm -rf \$WT/dl && mkdir -p \$WT/dl" "\$WT/dirlock \$WT/dl $DIRLOCK_THREADS $DIRLOCK_SECS"
SP="$SCHEDPROF trace -a --verbose --save \$SESS/run.json -o \$SESS/report.txt"
SPR="$SCHEDPROF report \$SESS/run.json"
add_t floor "\$WT/floor \$WT/floor.bpf.o"
add_t offcputime "$OFFCPUTIME"
add_t bpftrace "bpftrace -e 'tracepoint:sched:sched_switch { @[kstack] = count(); }'"
add_t perf_sched "perf sched record -a -o \$SESS/perf.data" "perf sched latency -i \$SESS/perf.data"
add_t perf_lock "perf lock record -a -o \$SESS/perf.data" "perf lock report -i \$SESS/perf.data"
add_t perf_prof "perf record -F 99 -a -g -o \$SESS/perf.data" \
	"perf report -i \$SESS/perf.data --stdio"
add_t sp_sched "$SP --views schedules" "$SPR"
add_t sp_profile "$SP --views profile" "$SPR"
add_t sp_locks "$SP --views locks" "$SPR"
add_t sp_all "$SP" "$SPR"
# a name that is neither a workload nor a tracer is an error, not silently nothing
for x in ${WFILTER//,/ }; do
	[[ -n ${WCMD[$x]+set} ]] || { echo "$0: -w: no workload $x" >&2; exit 2; }
done
for x in ${TFILTER//,/ }; do
	[[ -n ${TCMD[$x]+set} ]] || { echo "$0: -t: no tracer $x" >&2; exit 2; }
done
((${#WNAMES[@]})) || { echo "$0: no workload selected (pipe1cpu,messaging,make_j2,dirlock)" >&2; exit 2; }
((${#TNAMES[@]})) || { echo "$0: no tracer selected (see -h)" >&2; exit 2; }
# fail TRACER REASON: the tracer is left out of the rest of the run, and the report says why
fail() {
	FAILED[$1]=$2
	printf '%s\t%s\n' "$1" "$2" >>"$OUT/failures.txt"
	log "$1: FAILED: $2"
}
: >"$OUT/failures.txt"
for t in "${TNAMES[@]}"; do
	exe=${TCMD[$t]%% *}
	[[ $exe == '$WT/floor' ]] && continue
	command -v "$exe" >/dev/null || fail "$t" "$exe not installed (scripts/setup.sh --bench)"
done

# ---- tracer process handling (the method of bench/sched.sh) ----
children() {	# the direct children of PID (all its threads)
	local f kids=() out=()
	for f in /proc/"$1"/task/*/children; do
		{ read -r -a kids <"$f"; } 2>/dev/null
		out+=("${kids[@]}")
	done
	echo "${out[@]}"
}
tree() {	# PID and all its descendants
	local q=("$1") out=() kids=() p
	while ((${#q[@]})); do
		p=${q[0]} q=("${q[@]:1}")
		out+=("$p")
		read -r -a kids <<<"$(children "$p")"
		q+=("${kids[@]}")
	done
	echo "${out[@]}"
}
alive() {
	local s
	{ read -r s <"/proc/$1/stat"; } 2>/dev/null || return 1
	s=${s##*) }
	[[ ${s:0:1} != Z ]]
}
# start_tracer NAME -> TPID (the /usr/bin/time wrapper), T_LAUNCH_US, SESS
start_tracer() {
	SESS=$WT/sess_$1
	rm -rf "$SESS" && mkdir -p "$SESS"
	export SESS
	T_LAUNCH_US=$(now_us)
	(cd "$SESS" && exec /usr/bin/time -f '%M %e %U %S' -o "$SESS/rusage" \
		bash -c "exec ${TCMD[$1]}") </dev/null >"$SESS/stdout" 2>"$SESS/stderr" &
	TPID=$!
	LIVE+=("$TPID")
}
# wait_attached TPID -> READY_US, ATTACH_N. rc 0 attached, 1 exited, 2 timeout
# (bench/attachwait.c polls every 0.5 ms: a bash loop resolved only 20-30 ms)
wait_attached() {
	local out rc
	out=$("$WT/attachwait" "$1" "$STABLE_MS" "$READY_TIMEOUT_S")
	rc=$?
	((rc == 0)) || return $rc
	read -r READY_US ATTACH_N <<<"$out"
	return 0
}
# stop_tracer TPID -> STOP_US (SIGINT to exit, including the tracer's own printing)
stop_tracer() {
	local t0 p kids
	t0=$(now_us)
	kids=$(children "$1")
	for p in $kids; do kill -INT "$p" 2>/dev/null; done
	while alive "$1"; do
		if (( $(now_us) - t0 > STOP_TIMEOUT_S * 1000000 )); then
			log "tracer (pid $kids) still running ${STOP_TIMEOUT_S}s after SIGINT: SIGKILL"
			for p in $(tree "$1"); do [[ $p == "$1" ]] || kill -KILL "$p" 2>/dev/null; done
			t0=$(now_us)
		fi
		sleep 0.01
	done
	wait "$1" 2>/dev/null
	STOP_US=$(( $(now_us) - t0 ))
	local keep=() x
	for x in "${LIVE[@]}"; do [[ $x != "$1" ]] && keep+=("$x"); done
	LIVE=("${keep[@]}")
}
# run_workload NAME LOG -> VAL: wall seconds; dirlock: microseconds per op (1e6 / ops/s)
run_workload() {
	local t0 t1 rc ops
	echo "### $1 $(date +%T)" >>"$2"
	[[ ${WPREP[$1]} == - ]] || bash -c "${WPREP[$1]}" >>"$2" 2>&1
	if [[ $1 == pipe1cpu || $1 == messaging ]]; then
		run_perfbench "$1" "$2"
		return
	fi
	t0=$(now_us)
	bash -c "${WCMD[$1]}" >"$WT/wl.out" 2>&1
	rc=$?
	t1=$(now_us)
	cat "$WT/wl.out" >>"$2"
	((rc == 0)) || log "  $1 exited with $rc (see $2)"
	if [[ $1 == dirlock ]]; then
		ops=$(awk '/ops\/s/ { print $(NF - 1) }' "$WT/wl.out")
		VAL=$(awk -v o="${ops:-0}" 'BEGIN { if (o > 0) printf "%.4f", 1e6 / o }')
	else
		VAL=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.4f", d / 1e6 }')
	fi
	((rc == 0)) || VAL=""
}

# run_perfbench NAME LOG -> VAL: a perf bench workload (pipe1cpu: PIPE_REPS times, messaging:
# MSG_REPS times, back to back); VAL is the smallest "Total time" the benchmark printed (not
# the wall time: perf's own start-up switches nothing). On this VM two untraced runs in a row
# differ by up to 1.7x (the host), and the host's interference only ever adds time, so the
# fastest run is the estimate noise moves least.
run_perfbench() {
	local i rc tt best="" reps=$PIPE_REPS
	[[ $1 == pipe1cpu ]] || reps=$MSG_REPS
	for ((i = 0; i < reps; i++)); do
		bash -c "${WCMD[$1]}" >"$WT/wl.out" 2>&1
		rc=$?
		cat "$WT/wl.out" >>"$2"
		if ((rc)); then
			log "  $1 exited with $rc (see $2)"
			VAL=""
			return
		fi
		tt=$(awk '/Total time:/ { print $3 }' "$WT/wl.out")
		[[ -n $tt ]] || { log "  $1 printed no Total time (see $2)"; VAL=""; return; }
		best=$(awk -v a="$tt" -v b="$best" 'BEGIN { printf "%.4f", (b == "" || a < b) ? a : b }')
	done
	VAL=$best
}

# ---- environment ----
if [[ -n $MAXLOAD ]]; then
	for ((i = 0; i < 40; i++)); do
		awk -v l="$(load1)" -v m="$MAXLOAD" 'BEGIN { exit !(l < m) }' && break
		((i == 0)) && log "waiting for load average < $MAXLOAD (now $(load1))"
		sleep 30
	done
fi
{
	echo "date: $(date -Is)"
	echo "command: bench/compare.sh $*"
	echo "kernel: $(uname -r)  cpus: $(nproc)  schedprof: $("$SCHEDPROF" --version 2>&1 | head -1)"
	echo "tools: $(perf --version 2>&1)  bpftrace: $(bpftrace --version 2>&1 | head -1)"
	echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "other BPF tracing programs at start: $(f=$(foreign_tracers); echo "${f:-none}")"
	printf 'rounds: %s  cost runs: %s  STABLE_MS=%s  seed=%s%s\n' "$ROUNDS" \
		"$((DO_COST ? COST_RUNS : 0))" "$STABLE_MS" "${SEED:-random}" \
		"$( ((QUICK)) && echo "  QUICK (smoke run: numbers mean nothing)")"
	echo "workloads:"
	for w in "${WNAMES[@]}"; do echo "  $w | prep: ${WPREP[$w]} | ${WCMD[$w]}"; done
	echo "tracers:"
	for t in "${TNAMES[@]}"; do echo "  $t | ${TCMD[$t]}${RCMD[$t]:+ | report: ${RCMD[$t]}}"; done
} >"$OUT/env.txt"
echo "round,slot,tracer,workload,value,load1,foreign" >"$OUT/runs.csv"
echo "round,tracer,startup_ms,self_ms,stop_ms,report_ms,maxrss_kb,attach_fds" >"$OUT/sessions.csv"
echo "tracer,workload,run,prog_id,prog_name,attach,run_cnt,run_time_ns" >"$OUT/cost.csv"

log "results in $OUT, scratch in $WT"
if in_list make_j2 "$WFILTER"; then
	make -s -C "$EX" OUT="$WT/proj" N="$MAKE_N" "$WT/proj/.generated" >/dev/null || exit 1
fi
for w in "${WNAMES[@]}"; do run_workload "$w" "$OUT/logs/warmup.log"; done	# warm caches

base_set() { # ROUND SLOT
	local w f
	f=$(foreign_tracers)
	[[ -z $f ]] || log "  warning: other BPF tracing programs are loaded during BASE: $f"
	for w in "${WNAMES[@]}"; do
		run_workload "$w" "$OUT/logs/base.log"
		echo "$1,$2,none,$w,$VAL,$(load1),${f// /;}" >>"$OUT/runs.csv"
	done
}

session() { # ROUND SLOT TRACER
	local w rc self maxrss startup rep_ms=""  t0 _
	start_tracer "$3"
	wait_attached "$TPID"
	rc=$?
	if ((rc)); then
		stop_tracer "$TPID"
		fail "$3" "did not attach ($( ((rc == 1)) && echo "exited" || echo "timeout ${READY_TIMEOUT_S}s")): $(tail -n 3 "$SESS/stderr" | tr '\n\t' '  ')"
		rm -rf "$SESS"
		return
	fi
	for w in "${WNAMES[@]}"; do
		run_workload "$w" "$OUT/logs/traced_$3.log"
		echo "$1,$2,$3,$w,$VAL,$(load1)," >>"$OUT/runs.csv"
	done
	stop_tracer "$TPID"
	if [[ -n ${RCMD[$3]} ]]; then
		t0=$(now_us)
		(cd "$SESS" && timeout "$REPORT_TIMEOUT_S" bash -c "${RCMD[$3]}") \
			>"$SESS/rendered" 2>"$SESS/rendered.err"
		rc=$?
		rep_ms=$(( ($(now_us) - t0) / 1000 ))
		((rc == 0)) || { log "  $3: report exited with $rc"; rep_ms=""; }
	fi
	self=$(sed -n 's/.*attached in \([0-9.]*\) ms.*/\1/p' "$SESS/stderr" | head -1)
	# the last line: /usr/bin/time puts "Command exited with non-zero status N" before it
	read -r maxrss _ < <(tail -n 1 "$SESS/rusage")
	startup=$(( (READY_US - T_LAUNCH_US) / 1000 ))
	echo "$1,$3,$startup,${self:-},$((STOP_US / 1000)),$rep_ms,$maxrss,$ATTACH_N" >>"$OUT/sessions.csv"
	{ echo "=== round $1 $3"; head -c 4000 "$SESS/stderr"; head -c 2000 "$SESS/stdout"
	  [[ -f $SESS/report.txt ]] && head -c 8000 "$SESS/report.txt"
	  [[ -f $SESS/rendered.err ]] && head -c 2000 "$SESS/rendered.err"; } \
		>>"$OUT/logs/session_$3.log"
	log "  $3: startup $startup ms${self:+ (self $self ms)}, stop $((STOP_US / 1000)) ms," \
		"report ${rep_ms:--} ms, maxrss $maxrss kB"
	rm -rf "$SESS"
}

# ---- interleaved rounds: BASE T1 BASE T2 ... Tn BASE ----
for ((r = 1; r <= ROUNDS; r++)); do
	if [[ -n $SEED ]]; then
		# a hash per round: `yes "$SEED$r"` gave nearly the same order every round
		mapfile -t order < <(printf '%s\n' "${TNAMES[@]}" |
			shuf --random-source=<(yes "$(echo "$SEED/$r" | sha256sum)"))
	else
		mapfile -t order < <(printf '%s\n' "${TNAMES[@]}" | shuf)
	fi
	log "round $r/$ROUNDS: ${order[*]} (load $(load1))"
	slot=0
	base_set "$r" "$slot"
	for t in "${order[@]}"; do
		[[ -n ${FAILED[$t]:-} ]] && continue
		session "$r" $((slot + 1)) "$t"
		slot=$((slot + 2))
		base_set "$r" "$slot"
	done
done

# ---- BPF cost phase: bpf_stats run_time_ns / run_cnt per program ----
prog_stats() { # ID... -> "id name run_cnt run_time_ns"
	bpftool -j prog show 2>/dev/null | jq -r --arg ids " $* " '.[] | .id as $i |
		select($ids | contains(" \($i) ")) |
		"\(.id) \(.name // "-") \(.run_cnt // 0) \(.run_time_ns // 0)"'
}
# attach_points: "prog_id tracepoint" of every attached tracepoint program (links and perf fds)
attach_points() {
	{
		bpftool -j link show 2>/dev/null | jq -r '.[] | select(.tp_name) | "\(.prog_id) \(.tp_name)"'
		bpftool -j perf show 2>/dev/null | jq -r '.[] | select(.tracepoint) | "\(.prog_id) \(.tracepoint)"'
	} | sort -u -k1,1n
}
tracer_prog_ids() { # TPID: the programs the tracer's tree holds (prog and link fds)
	local p
	for p in $(tree "$1"); do grep -h '^prog_id:' /proc/"$p"/fdinfo/* 2>/dev/null; done |
		awk '{ print $2 }' | sort -un
}
: >"$OUT/notbpf.txt"
: >"$OUT/stats_off.txt"
if ((DO_COST)); then
	for t in "${TNAMES[@]}"; do
		[[ -n ${FAILED[$t]:-} ]] && continue
		start_tracer "$t"
		if ! wait_attached "$TPID"; then
			log "cost phase: $t did not attach"
			stop_tracer "$TPID"
			continue
		fi
		mapfile -t ids < <(tracer_prog_ids "$TPID")
		if ((${#ids[@]} == 0)); then
			echo "$t" >>"$OUT/notbpf.txt"
			stop_tracer "$TPID"; rm -rf "$SESS"
			log "  cost phase: $t holds no BPF program"
			continue
		fi
		declare -A AP=()
		while read -r id tp; do AP[$id]=$tp; done < <(attach_points)
		sysctl -qw kernel.bpf_stats_enabled=1
		for w in "${WNAMES[@]}"; do
			for ((k = 1; k <= COST_RUNS; k++)); do
				declare -A C0=() N0=()
				while read -r id nm cnt ns; do
					C0[$id]=$cnt N0[$id]=$ns
				done < <(prog_stats "${ids[@]}")
				run_workload "$w" "$OUT/logs/cost_$t.log"
				# the sysctl is global: another benchmark may have switched it off
				# meanwhile; such a run has no numbers, so it is dropped, and said so
				if [[ $(cat /proc/sys/kernel/bpf_stats_enabled) != 1 ]]; then
					echo "$t,$w,$k" >>"$OUT/stats_off.txt"
					log "  cost phase: $t $w run $k: kernel.bpf_stats_enabled was" \
						"switched off by someone else: run dropped"
					sysctl -qw kernel.bpf_stats_enabled=1
					continue
				fi
				while read -r id nm cnt ns; do
					printf '%s,%s,%s,%s,%s,%s,%s,%s\n' "$t" "$w" "$k" "$id" "$nm" \
						"${AP[$id]:--}" "$((cnt - ${C0[$id]:-0}))" \
						"$((ns - ${N0[$id]:-0}))" >>"$OUT/cost.csv"
				done < <(prog_stats "${ids[@]}")
			done
		done
		sysctl -qw kernel.bpf_stats_enabled="$STATS_ORIG"
		stop_tracer "$TPID"
		rm -rf "$SESS"
		log "  cost phase: $t (programs ${ids[*]})"
	done
fi
{
	echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
	printf 'BASE runs with other BPF tracing programs loaded: '
	awk -F, 'NR > 1 && $3 == "none" { n++; if ($7 != "") f++ }
		END { printf "%d of %d\n", f, n }' "$OUT/runs.csv"
	echo "cost runs dropped (bpf_stats switched off by someone else): $(wc -l <"$OUT/stats_off.txt")"
} >>"$OUT/env.txt"

# ---- report ----
report() {
	echo "## schedprof and the anchors, side by side ($(date -Is))"
	echo
	echo '```'
	cat "$OUT/env.txt"
	echo '```'
	awk -F, -v wl="$(IFS=,; echo "${WNAMES[*]}")" -v tl="$(IFS=,; echo "${TNAMES[*]}")" '
	function sortv(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) {
			t = a[i]
			for (j = i - 1; j >= 1 && a[j] > t; j--)
				a[j + 1] = a[j]
			a[j + 1] = t
		}
	}
	function stats(list,   a, n) {	# -> MED MIN MAX CNT
		n = split(list, a, " "); CNT = n
		if (!n) { MED = MIN = MAX = ""; return }
		sortv(a, n); MIN = a[1]; MAX = a[n]
		MED = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function cell(list, f) {	# "median [min–max]" (one value: just it)
		stats(list)
		if (CNT == 0)
			return "–"
		if (CNT == 1)
			return sprintf(f, MED)
		return sprintf(f " [" f "–" f "]", MED, MIN, MAX)
	}
	FILENAME ~ /failures.txt$/ { split($0, f, "\t"); FAIL[f[1]] = f[2]; next }
	FILENAME ~ /notbpf.txt$/ { NOTBPF[$1] = 1; next }
	FILENAME ~ /runs.csv$/ && FNR > 1 {
		if ($5 == "") next
		if ($3 == "none") { B[$1, $2, $4] = $5; BW[$4] = BW[$4] " " $5 }
		else T[++nt] = $0
		next
	}
	FILENAME ~ /sessions.csv$/ && FNR > 1 {
		SU[$2] = SU[$2] " " $3
		if ($4 != "") SELF[$2] = SELF[$2] " " $4
		ST[$2] = ST[$2] " " $5
		if ($6 != "") REP[$2] = REP[$2] " " $6
		RSS[$2] = RSS[$2] " " $7 / 1024
		next
	}
	FILENAME ~ /cost.csv$/ && FNR > 1 {
		k = $1 SUBSEP $2 SUBSEP $3
		if ($6 == "sched_switch") {
			SWNS[k] += $8
			if ($7 > SWCNT[k]) SWCNT[k] = $7
			SWNAME[$1] = SWNAME[$1] (index(SWNAME[$1], $5) ? "" : " " $5)
		} else {
			OTNS[k] += $8
		}
		RUNK[k] = 1
		HASC[$1] = 1
		next
	}
	END {
		nw = split(wl, W, ","); ntr = split(tl, TT, ",")
		for (i = 1; i <= nt; i++) {	# traced / mean of the BASE runs around it
			split(T[i], f, ","); r = f[1]; s = f[2]; w = f[4]
			if ((r, s - 1, w) in B && (r, s + 1, w) in B)
				R[f[3], w] = R[f[3], w] " " f[5] / ((B[r, s - 1, w] + B[r, s + 1, w]) / 2)
		}
		for (k in B) {			# each BASE / the next BASE of the same workload
			split(k, f, SUBSEP)
			if ((f[1], f[2] + 2, f[3]) in B)
				NOISE[f[3]] = NOISE[f[3]] " " B[f[1], f[2] + 2, f[3]] / B[k]
		}
		for (k in RUNK) {
			split(k, f, SUBSEP)
			if (SWCNT[k] > 0)
				NS[f[1], f[2]] = NS[f[1], f[2]] " " SWNS[k] / SWCNT[k]
			EV[f[1], f[2]] = EV[f[1], f[2]] " " SWCNT[k] + 0
			OT[f[1], f[2]] = OT[f[1], f[2]] " " OTNS[k] / 1e6
		}
		print "\n### Slowdown: traced / mean of the untraced runs just before and after," \
		      " median [min–max] over rounds\n"
		printf "| tracer |"
		for (j = 1; j <= nw; j++) printf " %s |", W[j]
		print ""
		printf "|---|"; for (j = 1; j <= nw; j++) printf "---|"; print ""
		printf "| untraced (wall s; dirlock: µs per op) |"
		for (j = 1; j <= nw; j++) printf " %s |", cell(BW[W[j]], "%.3f")
		print ""
		printf "| none (noise: untraced / next untraced) |"
		for (j = 1; j <= nw; j++) printf " %s |", cell(NOISE[W[j]], "%.2f")
		print ""
		for (i = 1; i <= ntr; i++) {
			t = TT[i]
			printf "| %s |", t
			for (j = 1; j <= nw; j++)
				printf " %s |", (t in FAIL && R[t, W[j]] == "") ? "FAILED" : \
				       "**" cell(R[t, W[j]], "%.2f") "x**"
			print ""
		}
		print "\n### BPF ns per sched_switch (bpf_stats run_time_ns / run_cnt of the tracer" \
		      " programs on sched_switch, summed; other = the run time of its other BPF" \
		      " programs, ms per workload run)\n"
		printf "| tracer | switch programs |"
		for (j = 1; j <= nw; j++) printf " %s ns/switch | other ms |", W[j]
		print ""
		printf "|---|---|"; for (j = 1; j <= nw; j++) printf "---|---|"; print ""
		for (i = 1; i <= ntr; i++) {
			t = TT[i]
			printf "| %s | %s |", t, (t in FAIL) ? "FAILED" : (t in NOTBPF) ? \
			       "not BPF" : (t in SWNAME) ? SWNAME[t] : \
			       (t in HASC) ? "none on sched_switch" : "not measured"
			for (j = 1; j <= nw; j++)
				printf " %s | %s |", cell(NS[t, W[j]], "%.0f"), cell(OT[t, W[j]], "%.1f")
			print ""
		}
		print "\n### Start-up, footprint, stop and report (median [min–max] over rounds)\n"
		print "startup: launch to attached (bpf_link + perf_event fds unchanged for" \
		      " STABLE_MS); self: schedprof --verbose \"attached in\" (main() to attached);"
		print "stop: SIGINT to exit, with what the tracer prints at exit; report: rendering the" \
		      " saved run afterwards (schedprof report, perf sched latency / lock report / report)\n"
		print "| tracer | startup ms | self ms | peak RSS MB | stop ms | report ms |"
		print "|---|---|---|---|---|---|"
		for (i = 1; i <= ntr; i++) {
			t = TT[i]
			printf "| %s | %s | %s | %s | %s | %s |\n", t, cell(SU[t], "%d"),
			       cell(SELF[t], "%.1f"), cell(RSS[t], "%.1f"), cell(ST[t], "%d"),
			       cell(REP[t], "%d")
		}
		# the summary README.md shows: medians only
		print "\n### Summary (medians; slowdown per workload, BPF ns per switch on the" \
		      " first workload)\n"
		printf "| tracer |"
		for (j = 1; j <= nw; j++) printf " %s |", W[j]
		print " ns/switch (" W[1] ") | start-up ms | peak RSS MB | report ms |"
		printf "|---|"; for (j = 1; j <= nw + 4; j++) printf "---|"; print ""
		for (i = 1; i <= ntr; i++) {
			t = TT[i]
			printf "| %s |", t
			for (j = 1; j <= nw; j++) {
				stats(R[t, W[j]])
				printf " %s |", CNT ? sprintf("%.2fx", MED) : (t in FAIL) ? "FAILED" : "–"
			}
			stats(NS[t, W[1]]); a = CNT ? sprintf("%.0f", MED) : (t in NOTBPF) ? "not BPF" : "–"
			stats(SU[t]); b = CNT ? sprintf("%d", MED) : "–"
			stats(RSS[t]); c = CNT ? sprintf("%.1f", MED) : "–"
			stats(REP[t]); d = CNT ? sprintf("%d", MED) : "–"
			printf " %s | %s | %s | %s |\n", a, b, c, d
		}
		n = 0
		for (t in FAIL) n++
		if (n) {
			print "\n### Tracers that could not run\n"
			for (i = 1; i <= ntr; i++)
				if (TT[i] in FAIL)
					printf "- %s: %s\n", TT[i], FAIL[TT[i]]
		}
	}' "$OUT/failures.txt" "$OUT/notbpf.txt" "$OUT/runs.csv" "$OUT/sessions.csv" "$OUT/cost.csv"
}
report | tee "$OUT/RESULTS.md"
log "done: $OUT/RESULTS.md"
