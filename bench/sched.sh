#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/sched.sh -- overhead of schedprof's schedules view, system-wide (`trace -a`), against
# untraced runs and against libbpf-tools' offcputime, on a context-switch-bound workload
# (pinned `perf bench sched pipe`) and on a `make -j2` compile of examples/compile-job.
#
# Method (see bench/README.md): interleaved rounds `BASE T1 BASE T2 BASE`, tracer order
# shuffled per round; ratio = traced wall time / mean of the BASE runs just before and after;
# medians and min-max over rounds. Then a cost phase with kernel.bpf_stats_enabled=1 for
# the per-program BPF run time per event (the sysctl is restored on exit).
#
# usage: sudo bench/sched.sh [-r ROUNDS] [-w pipe1cpu,make_j2] [-t schedprof,offcputime]
#                            [-o DIR] [-s SEED] [-c COST_RUNS] [-C] [-L MAXLOAD] [-S N]
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
SCHEDPROF=${SCHEDPROF:-$TOP/build/src/schedprof}
OFFCPUTIME=${OFFCPUTIME:-/usr/sbin/offcputime}
STABLE_MS=${STABLE_MS:-300}		# attach fds unchanged this long => attached
READY_TIMEOUT_S=${READY_TIMEOUT_S:-30}
STOP_TIMEOUT_S=${STOP_TIMEOUT_S:-60}
PIPE_LOOPS=${PIPE_LOOPS:-160000}
MAKE_CFLAGS=${MAKE_CFLAGS:--O2 -pipe}
MAKE_N=${MAKE_N:-40}
SP_VIEWS=${SP_VIEWS:-schedules}		# schedprof --views: the view under test
ROUNDS=5 WFILTER="" TFILTER="" OUT="" SEED="" COST_RUNS=3 DO_COST=1 MAXLOAD="" STARTUP_ONLY=0

usage() {
	cat <<EOF
usage: $0 [options]            (as root)
  -r N        rounds, i.e. traced/untraced pairs per tracer and workload (default $ROUNDS, min 1)
  -w a,b      workloads (default: pipe1cpu,make_j2)
  -t a,b      tracers (default: schedprof,offcputime)
  -o DIR      results directory (default: a new /tmp/schedprof-bench.XXXXXX)
  -s SEED     seed for the per-round shuffle of the tracer order
  -c N        runs per workload in the BPF cost phase (default $COST_RUNS)
  -C          skip the BPF cost phase
  -L LOAD     before starting, wait up to 20 min for the 1-min load average to drop below LOAD
  -S N        start-up only: N rounds of start / attached / stop per tracer, no workloads
env: SCHEDPROF ($SCHEDPROF), OFFCPUTIME ($OFFCPUTIME),
     STABLE_MS ($STABLE_MS), PIPE_LOOPS ($PIPE_LOOPS), MAKE_CFLAGS ($MAKE_CFLAGS), MAKE_N ($MAKE_N),
     SP_VIEWS ($SP_VIEWS: schedprof's --views)
EOF
	exit 2
}
while getopts "r:w:t:o:s:c:CL:S:h" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;; w) WFILTER=$OPTARG ;; t) TFILTER=$OPTARG ;; o) OUT=$OPTARG ;;
	s) SEED=$OPTARG ;; c) COST_RUNS=$OPTARG ;; C) DO_COST=0 ;; L) MAXLOAD=$OPTARG ;;
	S) STARTUP_ONLY=$OPTARG ;;
	*) usage ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ && $COST_RUNS =~ ^[1-9][0-9]*$ && $STARTUP_ONLY =~ ^[0-9]+$ ]] || usage
if ((STARTUP_ONLY)); then ROUNDS=$STARTUP_ONLY DO_COST=0; fi
[[ $EUID == 0 ]] || { echo "$0: must run as root" >&2; exit 1; }
for tool in perf taskset make bpftool jq /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "$0: $tool not found" >&2; exit 1; }
done

now_us() { local t=$EPOCHREALTIME; echo $(( 10#${t/./} )); }
log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
in_list() { [[ -z $2 || ",$2," == *",$1,"* ]]; }
load1() { local l; read -r l _ </proc/loadavg; echo "$l"; }
# foreign_tracers: BPF tracing programs loaded by others (run while none of ours is running).
# Another system-wide sched_switch tracer slows every BASE run and skews every ratio.
foreign_tracers() {
	bpftool -j prog show 2>/dev/null | jq -r '[.[] | select(.type == "tracing" or
		.type == "raw_tracepoint" or .type == "tracepoint" or .type == "perf_event") |
		.name // "?"] | unique | join(" ")'
}

# ---- workloads and tracers ----
EX=$TOP/examples/compile-job
declare -A WPREP WCMD TCMD
WNAMES=() TNAMES=()
add_w() { in_list "$1" "$WFILTER" && { WNAMES+=("$1"); WPREP[$1]=$2; WCMD[$1]=$3; }; }
add_t() { in_list "$1" "$TFILTER" && { TNAMES+=("$1"); TCMD[$1]=$2; }; }
add_w pipe1cpu - "taskset -c 1 perf bench sched pipe -l $PIPE_LOOPS"
add_w make_j2 "make -s -C $EX clean OUT=\$WT/proj" \
	"make -s -j2 -C $EX OUT=\$WT/proj N=$MAKE_N CFLAGS='$MAKE_CFLAGS'"
# -v prints "attached in X ms" (measured from schedprof's main() to the attached link)
add_t schedprof "$SCHEDPROF trace -a --views $SP_VIEWS -v -n 5 -o \$SESS/report.txt"
add_t offcputime "$OFFCPUTIME"
((${#WNAMES[@]})) || { echo "$0: no workload selected (pipe1cpu, make_j2)" >&2; exit 2; }
((${#TNAMES[@]})) || { echo "$0: no tracer selected (schedprof, offcputime)" >&2; exit 2; }
for t in "${TNAMES[@]}"; do
	exe=${TCMD[$t]%% *}
	[[ -x $exe ]] ||
		{ echo "$0: $t: $exe not found (build it, or set SCHEDPROF/OFFCPUTIME)" >&2; exit 1; }
done

# ---- scratch (tmpfs), results, cleanup ----
if [[ -z $OUT ]]; then OUT=$(mktemp -d /tmp/schedprof-bench.XXXXXX); fi
mkdir -p "$OUT/logs" || exit 1
OUT=$(cd "$OUT" && pwd)
SHM=/dev/shm
[[ $(stat -f -c %T "$SHM" 2>/dev/null) == tmpfs ]] || SHM=/tmp
WT=$(mktemp -d "$SHM/schedprof-bench-wt.XXXXXX") || exit 1
export WT TMPDIR=$WT		# gcc's temporaries (without -pipe) go to the tmpfs too
STATS_ORIG=$(cat /proc/sys/kernel/bpf_stats_enabled)
# The sysctl is global: another benchmark that enabled it is running, or left it on. We
# restore what we found, so the last one to finish decides; say so.
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

# ---- tracer process handling ----
# children PID: the direct children of PID (all its threads)
children() {
	local f kids=() out=()
	for f in /proc/"$1"/task/*/children; do
		{ read -r -a kids <"$f"; } 2>/dev/null
		out+=("${kids[@]}")
	done
	echo "${out[@]}"
}

# attach_fds PID...: number of bpf_link + perf_event fds the PIDs hold
attach_fds() {
	local d=() p
	for p in "$@"; do d+=("/proc/$p/fd"); done
	find "${d[@]}" -maxdepth 1 \( -lname 'anon_inode:bpf_link' -o \
		-lname 'anon_inode:\[perf_event\]' \) -printf x 2>/dev/null | wc -c
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
	T_LAUNCH_US=$(now_us)
	export SESS	# the tracer command may name $SESS (its output files)
	/usr/bin/time -f '%M %e %U %S' -o "$SESS/rusage" \
		bash -c "exec ${TCMD[$1]}" </dev/null >"$SESS/stdout" 2>"$SESS/stderr" &
	TPID=$!
	LIVE+=("$TPID")
}

# wait_attached TPID -> READY_US (last change of the attach-fd count), ATTACH_N.
# rc 0 attached, 1 exited, 2 timeout. Polls every ~10 ms (one find per poll).
wait_attached() {
	local last=-1 changed=0 n now deadline kids
	deadline=$(( $(now_us) + READY_TIMEOUT_S * 1000000 ))
	while :; do
		alive "$1" || return 1
		kids=$(children "$1")
		n=0
		[[ -n $kids ]] && n=$(attach_fds $kids)
		now=$(now_us)
		if [[ $n != "$last" ]]; then last=$n changed=$now; fi
		if (( n > 0 && now - changed >= STABLE_MS * 1000 )); then
			READY_US=$changed ATTACH_N=$n
			return 0
		fi
		(( now > deadline )) && return 2
		sleep 0.01
	done
}

# stop_tracer TPID -> STOP_US. SIGINT to the tracer (the wrapper's child), never by name.
stop_tracer() {
	local t0 p kids
	t0=$(now_us)
	kids=$(children "$1")
	for p in $kids; do kill -INT "$p" 2>/dev/null; done
	while alive "$1"; do
		if (( $(now_us) - t0 > STOP_TIMEOUT_S * 1000000 )); then
			log "tracer (pid $kids) still running ${STOP_TIMEOUT_S}s after SIGINT: SIGKILL"
			for p in $kids; do kill -KILL "$p" 2>/dev/null; done
		fi
		sleep 0.01
	done
	wait "$1" 2>/dev/null
	STOP_US=$(( $(now_us) - t0 ))
	local keep=() x
	for x in "${LIVE[@]}"; do [[ $x != "$1" ]] && keep+=("$x"); done
	LIVE=("${keep[@]}")
}

# run_workload NAME LOG -> WALL_S
run_workload() {
	local t0 t1 rc
	echo "### $1 $(date +%T)" >>"$2"
	[[ ${WPREP[$1]} == - ]] || bash -c "${WPREP[$1]}" >>"$2" 2>&1
	t0=$(now_us)
	bash -c "${WCMD[$1]}" >>"$2" 2>&1
	rc=$?
	t1=$(now_us)
	((rc == 0)) || log "  $1 exited with $rc (see $2)"
	WALL_S=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.4f", d / 1e6 }')
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
	echo "kernel: $(uname -r)  cpus: $(nproc)  schedprof: $("$SCHEDPROF" --version 2>&1 | head -1)"
	echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "other BPF tracing programs at start: $(f=$(foreign_tracers); echo "${f:-none}")"
	printf 'rounds: %s  cost runs: %s  STABLE_MS=%s  seed=%s%s\n' "$ROUNDS" \
		"$((DO_COST ? COST_RUNS : 0))" "$STABLE_MS" "${SEED:-random}" \
		"$( ((STARTUP_ONLY)) && echo "  start-up only")"
	echo "workloads:"
	for w in "${WNAMES[@]}"; do echo "  $w | prep: ${WPREP[$w]} | ${WCMD[$w]}"; done
	echo "tracers:"
	for t in "${TNAMES[@]}"; do echo "  $t | ${TCMD[$t]}"; done
} >"$OUT/env.txt"
echo "round,slot,tracer,workload,wall_s,load1,foreign" >"$OUT/runs.csv"
echo "round,tracer,startup_ms,self_ms,stop_ms,maxrss_kb,attach_fds" >"$OUT/sessions.csv"
echo "tracer,workload,run,prog_id,prog_name,run_cnt,run_time_ns" >"$OUT/cost.csv"

log "results in $OUT, scratch in $WT"
if ((!STARTUP_ONLY)); then
	make -s -C "$EX" OUT="$WT/proj" N="$MAKE_N" "$WT/proj/.generated" >/dev/null || exit 1
	for w in "${WNAMES[@]}"; do run_workload "$w" "$OUT/logs/warmup.log"; done	# warm caches
fi

base_set() { # ROUND SLOT
	local w f
	((STARTUP_ONLY)) && return
	f=$(foreign_tracers)
	[[ -z $f ]] || log "  warning: other BPF tracing programs are loaded during BASE: $f"
	for w in "${WNAMES[@]}"; do
		run_workload "$w" "$OUT/logs/base.log"
		echo "$1,$2,none,$w,$WALL_S,$(load1),${f// /;}" >>"$OUT/runs.csv"
	done
}

session() { # ROUND SLOT TRACER
	local w rc self maxrss startup _
	start_tracer "$3"
	wait_attached "$TPID"
	rc=$?
	if ((rc)); then
		stop_tracer "$TPID"
		log "$3 did not attach ($([[ $rc == 1 ]] && echo exited || echo timeout)):"
		tail -n 5 "$SESS/stderr" >&2
		exit 1
	fi
	if ((STARTUP_ONLY)); then
		sleep 0.2
	else
		for w in "${WNAMES[@]}"; do
			run_workload "$w" "$OUT/logs/traced_$3.log"
			echo "$1,$2,$3,$w,$WALL_S,$(load1)," >>"$OUT/runs.csv"
		done
	fi
	stop_tracer "$TPID"
	self=$(sed -n 's/.*attached in \([0-9.]*\) ms.*/\1/p' "$SESS/stderr" | head -1)
	read -r maxrss _ <"$SESS/rusage"
	startup=$(( (READY_US - T_LAUNCH_US) / 1000 ))
	echo "$1,$3,$startup,${self:-},$((STOP_US / 1000)),$maxrss,$ATTACH_N" >>"$OUT/sessions.csv"
	{ echo "=== round $1 $3"; head -c 4000 "$SESS/stderr"; head -c 4000 "$SESS/stdout"; \
	  [[ -f $SESS/report.txt ]] && cat "$SESS/report.txt"; } >>"$OUT/logs/session_$3.log"
	log "  $3: startup $startup ms${self:+ (self $self ms)}, stop $((STOP_US / 1000)) ms," \
		"maxrss $maxrss kB"
	rm -rf "$SESS"
}

# ---- interleaved rounds: BASE T1 BASE T2 BASE ... ----
for ((r = 1; r <= ROUNDS; r++)); do
	if [[ -n $SEED ]]; then
		mapfile -t order < <(printf '%s\n' "${TNAMES[@]}" |
			shuf --random-source=<(yes "$SEED$r"))
	else
		mapfile -t order < <(printf '%s\n' "${TNAMES[@]}" | shuf)
	fi
	log "round $r/$ROUNDS: ${order[*]} (load $(load1))"
	slot=0
	base_set "$r" "$slot"
	for t in "${order[@]}"; do
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
# tracer_prog_ids TPID: the programs the tracer holds (prog and link fds name them)
tracer_prog_ids() {
	local p
	for p in $(children "$1"); do grep -h '^prog_id:' /proc/"$p"/fdinfo/* 2>/dev/null; done |
		awk '{ print $2 }' | sort -un
}
if ((DO_COST)); then
	for t in "${TNAMES[@]}"; do
		start_tracer "$t"
		if ! wait_attached "$TPID"; then
			log "cost phase: $t did not attach"
			stop_tracer "$TPID"
			continue
		fi
		mapfile -t ids < <(tracer_prog_ids "$TPID")
		sysctl -qw kernel.bpf_stats_enabled=1
		for w in "${WNAMES[@]}"; do
			for ((k = 1; k <= COST_RUNS; k++)); do
				declare -A C0=() N0=()
				while read -r id nm cnt ns; do
					C0[$id]=$cnt N0[$id]=$ns
				done < <(prog_stats "${ids[@]}")
				run_workload "$w" "$OUT/logs/cost_$t.log"
				while read -r id nm cnt ns; do
					printf '%s,%s,%s,%s,%s,%s,%s\n' "$t" "$w" "$k" "$id" "$nm" \
						"$((cnt - ${C0[$id]:-0}))" "$((ns - ${N0[$id]:-0}))" \
						>>"$OUT/cost.csv"
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
} >>"$OUT/env.txt"

# ---- report ----
report() {
	local wl
	wl=$(IFS=,; echo "${WNAMES[*]}")
	echo "## schedprof overhead ($(date -Is))"
	echo
	echo '```'
	cat "$OUT/env.txt"
	echo '```'
	awk -F, -v wl="$wl" -v tl="$(IFS=,; echo "${TNAMES[*]}")" '
	function sortv(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) {
			t = a[i]
			for (j = i - 1; j >= 1 && a[j] > t; j--)
				a[j + 1] = a[j]
			a[j + 1] = t
		}
	}
	# stats(list) -> MED MIN MAX CNT of a space-separated list
	function stats(list,   a, n) {
		n = split(list, a, " "); CNT = n
		if (!n) { MED = MIN = MAX = ""; return }
		sortv(a, n); MIN = a[1]; MAX = a[n]
		MED = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	# "median [min–max] n=N", each number printed with format f
	function cell(list, f) {
		stats(list)
		if (CNT == 0)
			return "–"
		return sprintf(f " [" f "–" f "] n=%d", MED, MIN, MAX, CNT)
	}
	function row(name, bold, list_of,   j) {	# list_of[j]: the list of column j
		printf "| %s |", name
		for (j = 1; j <= nw; j++)
			printf bold ? " **%s** |" : " %s |", cell(list_of[j], "%.3f")
		print ""
	}
	FILENAME ~ /runs.csv$/ && FNR > 1 {
		if ($3 == "none") { B[$1, $2, $4] = $5; BW[$4] = BW[$4] " " $5 }
		else T[++nt] = $0
		next
	}
	FILENAME ~ /sessions.csv$/ && FNR > 1 {
		SU[$2] = SU[$2] " " $3
		if ($4 != "") SELF[$2] = SELF[$2] " " $4
		ST[$2] = ST[$2] " " $5; RSS[$2] = RSS[$2] " " $6 / 1024
		next
	}
	FILENAME ~ /cost.csv$/ && FNR > 1 {
		# per run, the sched_switch program is the one with the most runs (each tool has one)
		k = $1 SUBSEP $2 SUBSEP $3
		if ($6 > CMAX[k]) { CMAX[k] = $6; CNS[k] = $7; CNAME[$1] = $5 }
		next
	}
	END {
		nw = split(wl, W, ","); ntr = split(tl, TT, ",")
		for (i = 1; i <= nt; i++) {	# traced / mean of the BASE runs around it
			split(T[i], f, ","); r = f[1]; s = f[2]; w = f[4]
			R[f[3], w] = R[f[3], w] " " f[5] / ((B[r, s - 1, w] + B[r, s + 1, w]) / 2)
		}
		for (k in B) {			# each BASE / the next BASE of the same workload
			split(k, f, SUBSEP)
			if ((f[1], f[2] + 2, f[3]) in B)
				NOISE[f[3]] = NOISE[f[3]] " " B[f[1], f[2] + 2, f[3]] / B[k]
		}
		for (k in CMAX) {
			split(k, f, SUBSEP)
			if (CMAX[k] > 0)
				NS[f[1], f[2]] = NS[f[1], f[2]] " " CNS[k] / CMAX[k]
			EV[f[1], f[2]] = EV[f[1], f[2]] " " CMAX[k]
		}
		if (nt) {
			print "\n### Slowdown: traced / mean(neighbouring untraced) wall time," \
			      " median [min–max] over rounds\n"
			printf "| tracer |"; for (j = 1; j <= nw; j++) printf " %s |", W[j]; print ""
			printf "|---|"; for (j = 1; j <= nw; j++) printf "---|"; print ""
			for (j = 1; j <= nw; j++) { L1[j] = BW[W[j]]; L2[j] = NOISE[W[j]] }
			row("untraced wall s", 0, L1)
			row("none (noise: BASE/next BASE)", 0, L2)
			for (i = 1; i <= ntr; i++) {
				for (j = 1; j <= nw; j++) L1[j] = R[TT[i], W[j]]
				row(TT[i], 1, L1)
			}
		}
		print "\n### Per tracer: start-up, stop, footprint, BPF cost (median [min–max])\n"
		print "startup = launch → attach fds (bpf_link/perf_event) unchanged for STABLE_MS," \
		      " polled every ~10 ms;"
		print "self = schedprof -v \"attached in\" (its main() → link attached, no exec/ld.so);"
		print "ns/event = bpf_stats run_time_ns/run_cnt of the sched_switch program" \
		      " (cost phase, per run)\n"
		printf "| tracer | startup ms | self ms | stop ms | peak RSS MB |"
		for (j = 1; j <= nw; j++) printf " %s ns/event | %s events/run |", W[j], W[j]
		print ""
		printf "|---|---|---|---|---|"; for (j = 1; j <= nw; j++) printf "---|---|"; print ""
		for (i = 1; i <= ntr; i++) {
			t = TT[i]
			printf "| %s (%s) | %s | %s | %s | %s |", t, (t in CNAME) ? CNAME[t] : "-",
			       cell(SU[t], "%d"), cell(SELF[t], "%.1f"), cell(ST[t], "%d"),
			       cell(RSS[t], "%.1f")
			for (j = 1; j <= nw; j++)
				printf " %s | %s |", cell(NS[t, W[j]], "%.0f"), cell(EV[t, W[j]], "%d")
			print ""
		}
	}' "$OUT/runs.csv" "$OUT/sessions.csv" "$OUT/cost.csv"
}
report | tee "$OUT/RESULTS.md"
log "done: $OUT/RESULTS.md"
