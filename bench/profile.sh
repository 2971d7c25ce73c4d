#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/profile.sh -- cost of schedprof's profile view (system-wide `trace -a --views profile`) at
# 99 Hz and 999 Hz, with and without -g, against untraced runs and against
# `perf record -F 99 -a -g`, on a CPU-bound workload (build/tests/profwork loop: a fixed amount of
# computation on every CPU) and on a `make -j2` of examples/compile-job (many short processes).
# Then the BPF program's own run time per sample (kernel.bpf_stats_enabled, restored on exit),
# which a loaded machine does not blur, and the tracer's report time after a 60 s system-wide
# trace with compile jobs running.
#
# Method: for each round and tracer (tracer order shuffled per round), run the workload
# untraced, then traced: an interleaved pair, so slow drifts of the machine hit both sides.
# The tracer is started first and the workload only once the tracer holds its perf events
# (one per online CPU, unchanged for STABLE_MS); it is stopped with SIGINT after the workload.
# ratio = traced wall time / untraced wall time of the same pair; the tables give the median
# and the min-max over rounds, the tracer's peak RSS (/usr/bin/time %M) and the time from
# SIGINT to its exit (detach, read, symbolize, write the report).
#
# usage: sudo bench/profile.sh [-r ROUNDS] [-w cpu,make_j2] [-t sp99,sp999,sp99g,perf99g]
#                              [-o DIR] [-s SEED] [-R SECONDS] [-S] [-C] [-L LOAD]
#   -R SECONDS  length of the system-wide trace whose report time is measured (default 60)
#   -S          skip that report-time phase
#   -C          skip the BPF cost phase
#   -L LOAD     first wait (up to 20 min) for the 1-minute load average to drop below LOAD
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
# shellcheck source=bench/builds.sh
. "$HERE/builds.sh"
SCHEDPROF=${SCHEDPROF:-$TOP/build/src/schedprof}
PROFWORK=${PROFWORK:-$TOP/build/tests/profwork}
PERF=${PERF:-perf}
STABLE_MS=${STABLE_MS:-200}
LOOP_M=${LOOP_M:-1500}		# million steps per CPU for the cpu workload (~2 s here)
MAKE_N=${MAKE_N:-40}
ROUNDS=5 WFILTER="" TFILTER="" OUT="" SEED=$RANDOM REPORT_S=60 DO_REPORT=1 DO_COST=1 MAXLOAD=""

usage() {
	sed -n '3,25p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}
while getopts "r:w:t:o:s:R:SCL:h" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;; w) WFILTER=$OPTARG ;; t) TFILTER=$OPTARG ;; o) OUT=$OPTARG ;;
	s) SEED=$OPTARG ;; R) REPORT_S=$OPTARG ;; S) DO_REPORT=0 ;; C) DO_COST=0 ;; L) MAXLOAD=$OPTARG ;; *) usage ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ && $REPORT_S =~ ^[1-9][0-9]*$ ]] || usage
[[ $EUID == 0 ]] || { echo "$0: must run as root" >&2; exit 1; }
for tool in "$PERF" make python3 /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "$0: $tool not found" >&2; exit 1; }
done
for exe in "$SCHEDPROF" "$PROFWORK"; do
	[[ -x $exe ]] || { echo "$0: $exe not found (build it, or set SCHEDPROF/PROFWORK)" >&2; exit 1; }
done

now_us() { local t=$EPOCHREALTIME; echo $(( 10#${t/./} )); }
log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
in_list() { [[ -z $2 || ",$2," == *",$1,"* ]]; }
ONLINE=$(python3 -c '
n = 0
for part in open("/sys/devices/system/cpu/online").read().strip().split(","):
    lo, _, hi = part.partition("-")
    n += int(hi or lo) - int(lo) + 1
print(n)')

# ---- scratch on tmpfs, results, cleanup ----
[[ -n $OUT ]] || OUT=$(mktemp -d /tmp/schedprof-bench-profile.XXXXXX)
mkdir -p "$OUT/logs" || exit 1
SHM=/dev/shm
[[ $(stat -f -c %T "$SHM" 2>/dev/null) == tmpfs ]] || SHM=/tmp
WT=$(mktemp -d "$SHM/schedprof-bench-profile.XXXXXX") || exit 1
export TMPDIR=$WT
TPID="" TRACER=""
STATS_ORIG=$(cat /proc/sys/kernel/bpf_stats_enabled)
cleanup() {
	[[ -n $TPID && -n $TRACER ]] && kill -INT "$TRACER" 2>/dev/null && wait "$TPID" 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$STATS_ORIG"
	rm -rf "$WT"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

# ---- workloads and tracers ----
EX=$TOP/examples/compile-job
declare -A WPREP WCMD TCMD
WNAMES=() TNAMES=()
add_w() { in_list "$1" "$WFILTER" && { WNAMES+=("$1"); WPREP[$1]=$2; WCMD[$1]=$3; }; }
add_t() { in_list "$1" "$TFILTER" && { TNAMES+=("$1"); TCMD[$1]=$2; }; }
add_w cpu : "$PROFWORK loop $LOOP_M $ONLINE"
add_w make_j2 "make -s -C $EX clean OUT=$WT/proj" "make -s -j2 -C $EX OUT=$WT/proj N=$MAKE_N"
add_t sp99 "$SCHEDPROF trace -a --views profile -F 99 -o \$SESS/report.txt"
add_t sp999 "$SCHEDPROF trace -a --views profile -F 999 -o \$SESS/report.txt"
add_t sp99g "$SCHEDPROF trace -a --views profile -F 99 -g -o \$SESS/report.txt"
add_t perf99g "$PERF record -q -F 99 -a -g -o \$SESS/perf.data"
((${#WNAMES[@]})) || { echo "$0: no workload selected (cpu, make_j2)" >&2; exit 2; }
((${#TNAMES[@]})) || { echo "$0: no tracer selected" >&2; exit 2; }
make -s -C "$EX" "$WT/proj/.generated" OUT="$WT/proj" N="$MAKE_N" >/dev/null || exit 1

perf_fds() {
	find /proc/"$1"/fd -maxdepth 1 -lname 'anon_inode:\[perf_event\]' -printf x 2>/dev/null | wc -c
}

# start_tracer NAME: TPID is /usr/bin/time's pid, TRACER its child; returns when the tracer holds
# one perf event per online CPU, stable for STABLE_MS (1: it exited or took over 30 s)
start_tracer() {
	local last=-1 since n now deadline
	SESS=$WT/sess_$1
	rm -rf "$SESS" && mkdir -p "$SESS"
	export SESS # the tracer's command line names its files under $SESS
	/usr/bin/time -f '%M' -o "$SESS/rss" bash -c "exec ${TCMD[$1]}" \
		</dev/null >"$SESS/stdout" 2>"$SESS/stderr" &
	TPID=$!
	deadline=$(( $(now_us) + 30000000 ))
	while :; do
		TRACER=$(cat /proc/"$TPID"/task/*/children 2>/dev/null | awk '{print $1; exit}')
		kill -0 "$TPID" 2>/dev/null || return 1
		n=0
		[[ -n $TRACER ]] && n=$(perf_fds "$TRACER")
		now=$(now_us)
		[[ $n != "$last" ]] && { last=$n; since=$now; }
		(( n >= ONLINE && now - since >= STABLE_MS * 1000 )) && return 0
		(( now > deadline )) && return 1
		sleep 0.01
	done
}

# stop_tracer: SIGINT, then wait; STOP_US is the time from the signal to its exit
stop_tracer() {
	local t0
	t0=$(now_us)
	kill -INT "$TRACER" 2>/dev/null
	wait "$TPID"
	STOP_US=$(( $(now_us) - t0 ))
	TPID=""
}

# run_workload NAME -> WALL_US, and CPU_MS: the workload's own user + system CPU time, children
# included. Sampling interrupts are charged to the task they interrupt, so CPU time shows the
# tracer's cost too, and other load on the machine blurs it much less than wall time.
run_workload() {
	local t0
	eval "${WPREP[$1]}" >/dev/null 2>&1
	t0=$(now_us)
	python3 -c '
import resource, subprocess, sys
rc = subprocess.call(["bash", "-c", sys.argv[2]], stdout=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%d\n" % round((r.ru_utime + r.ru_stime) * 1000))
sys.exit(rc)' "$WT/cpu" "${WCMD[$1]}" 2>"$OUT/logs/last_workload.err" ||
		{ log "workload $1 failed"; exit 1; }
	WALL_US=$(( $(now_us) - t0 ))
	CPU_MS=$(cat "$WT/cpu")
}

if [[ -n $MAXLOAD ]]; then
	for ((i = 0; i < 120; i++)); do
		python3 -c 'import os, sys; sys.exit(os.getloadavg()[0] >= float(sys.argv[1]))' "$MAXLOAD" && break
		((i % 6)) || log "waiting for the load average ($(cut -d' ' -f1 /proc/loadavg)) to drop below $MAXLOAD"
		sleep 10
	done
fi

RES=$OUT/pairs.csv
echo "round,workload,tracer,base_us,traced_us,base_cpu_ms,traced_cpu_ms,rss_kb,stop_us" >"$RES"
log "results in $OUT; seed $SEED; $ROUNDS rounds; $ONLINE CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
RANDOM=$SEED
for w in "${WNAMES[@]}"; do
	run_workload "$w" # warm the caches once
	for ((r = 1; r <= ROUNDS; r++)); do
		mapfile -t order < <(printf '%s\n' "${TNAMES[@]}" | shuf --random-source=<(yes "$SEED$r"))
		for t in "${order[@]}"; do
			run_workload "$w"; base=$WALL_US bcpu=$CPU_MS
			start_tracer "$t" || { log "$t did not start: $(cat "$SESS/stderr")"; exit 1; }
			run_workload "$w"; traced=$WALL_US tcpu=$CPU_MS
			stop_tracer
			rss=$(tail -1 "$SESS/rss")
			echo "$r,$w,$t,$base,$traced,$bcpu,$tcpu,$rss,$STOP_US" >>"$RES"
			log "round $r $w $t: untraced $((base / 1000)) ms (CPU $bcpu ms), traced $((traced / 1000)) ms (CPU $tcpu ms), rss ${rss} KB, stop $((STOP_US / 1000)) ms"
		done
	done
done

# ---- BPF cost: prof_sample's run time per sample, from the kernel's own accounting ----
# (the perf interrupt around it is not included: compare the slowdown tables for that)
prog_stats() { # TRACER-PID -> "run_cnt run_time_ns" of its build of prof_sample (bench/builds.sh)
	local ids
	ids=$(sed -n 's/^prog_id:[[:space:]]*//p' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u | tr '\n' ' ')
	bpftool -j prog show | python3 -c '
import json, sys
ids = set(int(i) for i in sys.argv[1].split())
cnt = ns = 0
for p in json.load(sys.stdin):
    if p["id"] in ids and p.get("name") in sys.argv[2].split():
        cnt += p.get("run_cnt", 0); ns += p.get("run_time_ns", 0)
print(cnt, ns)' "$ids" "$(prog_builds prof_sample | tr '\n' ' ')"
}
if ((DO_COST)); then
	COST=$OUT/cost.csv
	echo "tracer,workload,run_cnt,run_time_ns,hz,ucache_hit,ucache_miss,ucache_check,ucache_stale" >"$COST"
	sysctl -qw kernel.bpf_stats_enabled=1
	for t in sp99 sp999 sp99g; do
		in_list "$t" "$TFILTER" || continue
		# -vv: the debug log says how the user frames were named (caches or build-id lookup)
		TCMD[$t]="${TCMD[$t]} -vv"
		for w in "${WNAMES[@]}"; do
			start_tracer "$t" || { log "$t did not start"; exit 1; }
			run_workload "$w"
			read -r cnt ns < <(prog_stats "$TRACER")
			stop_tracer
			hz=99; [[ $t == sp999 ]] && hz=999
			uc=$(sed -n 's/.*named from the page cache \([0-9]*\), by the kernel.s build-id lookup \([0-9]*\) (pages not cached) + \([0-9]*\) (re-validation, \([0-9]*\) found.*/\1,\2,\3,\4/p' "$SESS/stderr")
			echo "$t,$w,$cnt,$ns,$hz,${uc:-,,,}" >>"$COST"
			log "cost $t $w: $cnt runs, $(( ns / (cnt ? cnt : 1) )) ns per sample; user-frame caches hit,miss,check,stale: ${uc:-?}"
		done
	done
	sysctl -qw kernel.bpf_stats_enabled="$STATS_ORIG"
fi

# ---- report time after a long system-wide trace (compile jobs running meanwhile) ----
if ((DO_REPORT)); then
	LONG=$OUT/long.csv
	echo "tracer,trace_s,stop_us,rss_kb,samples,rows" >"$LONG"
	for t in sp99 sp99g; do
		in_list "$t" "$TFILTER" || continue
		TCMD[long]="${TCMD[$t]} -f json"
		start_tracer long || { log "long $t did not start"; exit 1; }
		end=$(( $(now_us) + REPORT_S * 1000000 ))
		while (( $(now_us) < end )); do
			make -s -C "$EX" clean OUT="$WT/proj" >/dev/null
			make -s -j2 -C "$EX" OUT="$WT/proj" N="$MAKE_N" >/dev/null 2>&1
		done
		stop_tracer
		read -r samples rows < <(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["profile"]
print(p["total"], len(p["functions"]))' "$SESS/report.txt")
		echo "$t,$REPORT_S,$STOP_US,$(tail -1 "$SESS/rss"),$samples,$rows" >>"$LONG"
		log "long $t: ${REPORT_S}s, $samples samples in $rows rows, report in $((STOP_US / 1000)) ms"
	done
fi

# ---- summary ----
python3 - "$RES" "${LONG:-}" "${COST:-}" <<'PY' | tee "$OUT/summary.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("\nslowdown: traced / untraced, wall time and the workload's CPU time, of interleaved pairs;")
print("median [min-max] over rounds; the tracer's peak RSS; stop = SIGINT to exit (the report)")
print(f"{'workload':10} {'tracer':8} {'pairs':>5} {'untraced':>9} {'wall':>7} {'range':>15} "
      f"{'CPU':>7} {'range':>15} {'peak RSS':>9} {'stop':>8}")
for w in dict.fromkeys(r["workload"] for r in rows):
    for t in dict.fromkeys(r["tracer"] for r in rows):
        sel = [r for r in rows if r["workload"] == w and r["tracer"] == t]
        if not sel:
            continue
        ratios = [int(r["traced_us"]) / int(r["base_us"]) for r in sel]
        cpu = [int(r["traced_cpu_ms"]) / max(int(r["base_cpu_ms"]), 1) for r in sel]
        base = statistics.median(int(r["base_us"]) for r in sel) / 1e6
        rss = statistics.median(int(r["rss_kb"]) for r in sel) / 1024
        stop = statistics.median(int(r["stop_us"]) for r in sel) / 1e3
        print(f"{w:10} {t:8} {len(sel):5} {base:8.2f}s {statistics.median(ratios):7.4f} "
              f"{min(ratios):7.4f}-{max(ratios):.4f} {statistics.median(cpu):7.4f} "
              f"{min(cpu):7.4f}-{max(cpu):.4f} {rss:7.1f}MB {stop:6.0f}ms")
if len(sys.argv) > 3 and sys.argv[3]:
    print("\nBPF cost of prof_sample (kernel.bpf_stats_enabled): time per sample and the share of "
          "each CPU it takes at that rate")
    for r in csv.DictReader(open(sys.argv[3])):
        cnt, ns, hz = int(r["run_cnt"]), int(r["run_time_ns"]), int(r["hz"])
        per = ns / cnt if cnt else 0
        uc = ""
        if r.get("ucache_hit"):
            h, m, c, st = (int(r[k]) for k in ("ucache_hit", "ucache_miss", "ucache_check", "ucache_stale"))
            uc = (f"; user frames from the caches {100 * h / max(h + m + c, 1):.0f}% "
                  f"({h} hit, {m} miss, {c} re-validated, {st} stale)")
        print(f"{r['tracer']:8} {r['workload']:8} {cnt:7} samples, {per:7.0f} ns/sample, "
              f"{100 * per * hz / 1e9:.4f}% of a CPU{uc}")
if len(sys.argv) > 2 and sys.argv[2]:
    print("\nreport time after a system-wide trace (SIGINT to exit: detach, read, symbolize, write)")
    for r in csv.DictReader(open(sys.argv[2])):
        print(f"{r['tracer']:8} {r['trace_s']}s trace: {int(r['samples'])} samples, {r['rows']} rows, "
              f"report {int(r['stop_us']) / 1e3:.0f} ms, peak RSS {int(r['rss_kb']) / 1024:.1f} MB")
PY
