#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# report --what-if against real runs measured here, on this machine's CPUs:
#   - a serial tail (workers of 1 s and 2 s of CPU): 3 s on 1 CPU, 2 s on 2 and 4, within 5%;
#   - without a lock: 4 threads computing 1 ms, then 1 ms under a shared mutex, 500 times;
#     without= their futex sleeps predicts the same program without the mutex within 15%;
#   - down: the bundled compile job at -j2 traced on 2 CPUs predicts its wall time under
#     taskset -c 0 within 10%;
#   - up: the same job traced under taskset -c 0 predicts its 2-CPU wall time within 15%.
# Every case runs WHATIF_REPS times (default 3), each a traced run and the measured run right
# after it, and the median of the repetitions' errors must be within the bound. The jobs run
# in a session of their own at autogroup and nice -20, so that the machine's other load takes
# as little of their CPUs as it can; the lines printed say what was predicted and measured.
#
# The compile job's CPU time changes from run to run on a shared VM by more than the bounds
# (2.9 to 4.0 s on 1 CPU in one test run), and the model takes the traced run's CPU speed as
# the machine's. So its pairs are judged twice: the prediction scaled by the job's CPU time
# in the measured run over that in the traced run (the model's own error, always judged), and
# unscaled on the pairs whose CPU times agree within 5% (judged when 2 or more pairs do; more
# repetitions are run, up to WHATIF_MAX_REPS, to find them).
. "$(dirname "$0")/lib.sh"
require_bpf
WHATIFWORK=${WHATIFWORK:?WHATIFWORK must name the what-if workload}
COMPILE_JOB=${COMPILE_JOB:?COMPILE_JOB must name examples/compile-job}
REPS=${WHATIF_REPS:-3}
MAX_REPS=${WHATIF_MAX_REPS:-6}
[ "$(nproc)" -ge 2 ] || skip_or_fail "needs 2 CPUs (the cases compare 1 CPU with 2)"
command -v taskset > /dev/null || skip_or_fail "needs taskset (util-linux)"
[ -x /usr/bin/time ] || skip_or_fail "needs /usr/bin/time (the time package)"
{ command -v make && command -v cc; } > /dev/null || skip_or_fail "needs make and cc"

# prio CMD...: CMD in a new session (its own autogroup) at nice -20
PRIO=(setsid -w bash -c 'echo -20 > /proc/self/autogroup 2> /dev/null; exec nice -n -20 "$@"' prio)
prio() {
	"${PRIO[@]}" "$@"
}

# wall_ms CMD...: CMD's wall time in ms (its output discarded); its CPU time (user + system,
# its descendants' included) in ms goes to $TMP/cpu_ms
wall_ms() {
	local a b
	a=$(date +%s%N)
	/usr/bin/time -f '%U %S' -o "$TMP/rusage" "${PRIO[@]}" "$@" > /dev/null || fail "$* exited $?"
	b=$(date +%s%N)
	awk '{ printf "%d\n", ($1 + $2) * 1000 }' "$TMP/rusage" > "$TMP/cpu_ms"
	echo $(((b - a) / 1000000))
}

# job_cpu_ms RUN: the traced job's CPU time (its rusage) in ms
job_cpu_ms() {
	jget "$1" 'int((d["target"]["user_ns"] + d["target"]["sys_ns"]) / 1e6)'
}

# trace_run OUT CMD...: traces CMD with --timeline into OUT
trace_run() {
	local out=$1
	shift
	prio "$SCHEDPROF" trace --views schedules --timeline -f json -o "$out" -- "$@" > /dev/null ||
		fail "trace $* exited $?"
	[ "$(jget "$out" 'd["timeline"]["lost"] + d["timeline"].get("dropped", 0)')" = 0 ] ||
		fail "$out lost timeline events: the prediction would miss them"
}

# predict_ms RUN CPUS [WITHOUT]: the predicted wall time in ms
predict_ms() {
	local extra=()
	[ $# -gt 2 ] && extra=(--what-if "without=$3")
	"$SCHEDPROF" report "$1" --what-if "cpus=$2" "${extra[@]}" -f json -o "$TMP/wi.json" ||
		fail "report $1 --what-if cpus=$2 ${extra[*]} exited $?"
	jget "$TMP/wi.json" 'int(((d["what_if"]["without"][-1] if '"$#"' > 2 else d["what_if"])["predictions"][0]["wall_ns"]) / 1e6)'
}

# check NAME BOUND "PREDICTED..." "MEASURED...": each repetition's prediction against the run
# measured right after it (the machine's speed drifts with its load), and the median of those
# errors within BOUND percent
check() {
	local line rc
	line=$(python3 -c 'import sys
n, b = sys.argv[1], float(sys.argv[2])
p, m = [int(x) for x in sys.argv[3].split()], [int(x) for x in sys.argv[4].split()]
m = m * len(p) if len(m) == 1 else m
e = sorted(100.0 * (x - y) / y for x, y in zip(p, m))
med = e[len(e) // 2] if len(e) % 2 else (e[len(e) // 2 - 1] + e[len(e) // 2]) / 2
print("%s: errors %s, median %+.1f%% (bound %g%%)" % (n, " ".join("%+.1f%%" % x for x in e), med, b))
sys.exit(abs(med) > b)' "$@")
	rc=$?
	echo "$line"
	[ $rc = 0 ] || missed+=("$line")
}
missed=() # the cases out of their bound: all are run, the test fails at the end

# check_scaled NAME BOUND "PREDICTED..." "MEASURED..." "TRACED_CPU..." "MEASURED_CPU...": as
# check, with each prediction scaled by its measured run's CPU time over its traced run's
# (always judged), and unscaled on the pairs whose CPU times agree within 5% (judged when at
# least 2 do)
check_scaled() {
	local line rc
	line=$(python3 -c 'import sys
n, b = sys.argv[1], float(sys.argv[2])
p, m, ct, cm = ([int(x) for x in a.split()] for a in sys.argv[3:7])
def med(e):
    e = sorted(e)
    return e[len(e) // 2] if len(e) % 2 else (e[len(e) // 2 - 1] + e[len(e) // 2]) / 2
pc = lambda e: " ".join("%+.1f%%" % x for x in e)
drift = [100.0 * (y - x) / x for x, y in zip(ct, cm)]
raw = [100.0 * (x - y) / y for x, y in zip(p, m)]
sc = [100.0 * (x * c2 / c1 - y) / y for x, y, c1, c2 in zip(p, m, ct, cm)]
ok = abs(med(sc)) <= b
out = "%s: CPU time measured/traced %s; scaled errors %s, median %+.1f%%" % (n, pc(drift), pc(sc), med(sc))
st = [e for e, d in zip(raw, drift) if abs(d) <= 5]
if len(st) >= 2:
    ok = ok and abs(med(st)) <= b
    out += "; unscaled on the %d pairs within 5%%: %s, median %+.1f%%" % (len(st), pc(st), med(st))
else:
    out += "; unscaled %s (not judged: %d pair(s) within 5%%)" % (pc(raw), len(st))
print(out + " (bound %g%%)" % b)
sys.exit(not ok)' "$@")
	rc=$?
	echo "$line"
	[ $rc = 0 ] || missed+=("$line")
}

# stable_pairs "TRACED_CPU..." "MEASURED_CPU...": how many pairs' CPU times agree within 5%
stable_pairs() {
	python3 -c 'import sys
ct, cm = ([int(x) for x in a.split()] for a in sys.argv[1:3])
print(sum(abs(y - x) <= 0.05 * x for x, y in zip(ct, cm)))' "$@"
}

# ---- the usage errors first: they need no BPF run of their own
trace_run "$TMP/tail0.json" "$WHATIFWORK" tail 0.2
"$SCHEDPROF" report "$TMP/tail0.json" --what-if without=do_wait > /dev/null 2> "$TMP/err"
rc=$?
[ $rc = 2 ] || fail "without=do_wait exited $rc, expected 2 (refused)"
grep -q "child" "$TMP/err" || fail "without=do_wait refused without saying why: $(cat "$TMP/err")"
"$SCHEDPROF" report "$TMP/tail0.json" --what-if cpus=0 > /dev/null 2>&1
[ $? = 2 ] || fail "cpus=0 is not a usage error"
"$SCHEDPROF" report "$TMP/tail0.json" --what-if cpus=2 -f folded > /dev/null 2>&1
[ $? = 2 ] || fail "--what-if -f folded is not a usage error"
pass "without=do_wait, cpus=0 and -f folded are refused (exit 2)"

# ---- a serial tail
p1=() p2=() p4=() m1=() m2=() cpu=()
for ((i = 0; i < REPS; i++)); do
	trace_run "$TMP/tail.json" "$WHATIFWORK" tail 1
	# the bursts' CPU time (running segments) against the job's rusage: the model's input
	cpu+=("$(jget "$TMP/tail.json" '"%+.1f%%" % (100.0 * sum(s["ns"] for s in d["timeline"]["segments"] if s["state"] == "running") / (d["target"]["user_ns"] + d["target"]["sys_ns"]) - 100)')")
	p1+=("$(predict_ms "$TMP/tail.json" 1)")
	p2+=("$(predict_ms "$TMP/tail.json" 2)")
	p4+=("$(predict_ms "$TMP/tail.json" 4)")
	m1+=("$(wall_ms taskset -c 0 "$WHATIFWORK" tail 1)")
	m2+=("$(wall_ms "$WHATIFWORK" tail 1)")
done
echo "serial tail: the traces' running time against the job's rusage: ${cpu[*]}"
echo "serial tail: predicted 1 CPU ${p1[*]} ms, 2 CPUs ${p2[*]} ms, 4 CPUs ${p4[*]} ms; measured 1 CPU ${m1[*]} ms, 2 CPUs ${m2[*]} ms"
check "serial tail, 1 CPU" 5 "${p1[*]}" "${m1[*]}"
check "serial tail, 2 CPUs" 5 "${p2[*]}" "${m2[*]}"
check "serial tail, 1 CPU against its 3 s" 5 "${p1[*]}" 3000
check "serial tail, 4 CPUs against its 2 s" 5 "${p4[*]}" 2000
[ ${#missed[@]} = 0 ] && pass "the serial tail's predictions"

# ---- without a lock
pw=() mw=()
for ((i = 0; i < REPS; i++)); do
	trace_run "$TMP/lock.json" "$WHATIFWORK" lock 4 500 1000 1000
	pw+=("$(predict_ms "$TMP/lock.json" 2 'futex_*')")
	mw+=("$(wall_ms "$WHATIFWORK" lock 4 500 1000 1000 nolock)")
done
echo "without the lock: predicted ${pw[*]} ms, measured (nolock) ${mw[*]} ms"
check "without the futex sleeps, 2 CPUs" 15 "${pw[*]}" "${mw[*]}"
[ ${#missed[@]} = 0 ] && pass "without= the lock's sleeps predicts the run without the lock"

# ---- the compile job, down and up
export OUT=$TMP/proj
make -s -C "$COMPILE_JOB" OUT="$OUT" > /dev/null || fail "the compile job does not build"
job=(make -s -j2 -C "$COMPILE_JOB" OUT="$OUT")
pd=() md=() pu=() mu=() self=() ctd=() cmd=() ctu=() cmu=()
for ((i = 0; i < MAX_REPS; i++)); do
	if [ "$i" -ge "$REPS" ] && [ "$(stable_pairs "${ctd[*]}" "${cmd[*]}")" -ge 2 ] &&
	   [ "$(stable_pairs "${ctu[*]}" "${cmu[*]}")" -ge 2 ]; then
		break
	fi
	make -s -C "$COMPILE_JOB" OUT="$OUT" clean
	trace_run "$TMP/j2.json" "${job[@]}"
	pd+=("$(predict_ms "$TMP/j2.json" 1)")
	ctd+=("$(job_cpu_ms "$TMP/j2.json")")
	# the model's error on its own input: how much of the 2-CPU run the machine's load took
	self+=("$(jget "$TMP/wi.json" '"%+.1f%%" % (100.0 * d["what_if"]["replayed_ns"] / d["what_if"]["measured_ns"] - 100)')")
	make -s -C "$COMPILE_JOB" OUT="$OUT" clean
	md+=("$(wall_ms taskset -c 0 "${job[@]}")")
	cmd+=("$(cat "$TMP/cpu_ms")")
	make -s -C "$COMPILE_JOB" OUT="$OUT" clean
	trace_run "$TMP/j2c0.json" taskset -c 0 "${job[@]}"
	pu+=("$(predict_ms "$TMP/j2c0.json" 2)")
	ctu+=("$(job_cpu_ms "$TMP/j2c0.json")")
	make -s -C "$COMPILE_JOB" OUT="$OUT" clean
	mu+=("$(wall_ms "${job[@]}")")
	cmu+=("$(cat "$TMP/cpu_ms")")
done
echo "compile job -j2: down: predicted ${pd[*]} ms, measured ${md[*]} ms; up: predicted ${pu[*]} ms, measured ${mu[*]} ms"
echo "compile job -j2: CPU time (ms) down: traced ${ctd[*]}, measured ${cmd[*]}; up: traced ${ctu[*]}, measured ${cmu[*]}"
echo "compile job -j2: the 2-CPU traces replayed on their 2 CPUs against their own wall time: ${self[*]}"
check_scaled "down: -j2 traced on 2 CPUs, 1 CPU" 10 "${pd[*]}" "${md[*]}" "${ctd[*]}" "${cmd[*]}"
check_scaled "up: -j2 traced on 1 CPU, 2 CPUs" 15 "${pu[*]}" "${mu[*]}" "${ctu[*]}" "${cmu[*]}"
[ ${#missed[@]} = 0 ] || fail "${#missed[@]} case(s) out of their bound: $(printf '%s; ' "${missed[@]}")"
pass "the compile job's predictions down and up"
