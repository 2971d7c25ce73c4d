#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# CPU quotas: a spinner that burns 400 ms of CPU in a cgroup limited to 20% of a CPU runs for
# about 2 s, throttled most of it. Its throttled time is the cgroup's own cpu.stat throttled
# time over the run within 5%, its wait for a CPU under 10% of that, and the budget names the
# cgroup; without the quota it has none. The spinner ends by itself inside the trace, so every
# throttle of the cgroup is over (counted by cpu.stat) when the trace ends; it runs at nice -20
# (CFS bandwidth throttles it all the same), so the other work of a busy machine does not make
# it wait for a CPU much; and so does its cgroup's weight, the largest (its group competes
# with the machine's other tasks by it, not by the task's nice).
. "$(dirname "$0")/lib.sh"
require_bpf
WAKEWORK=${WAKEWORK:?WAKEWORK must name the workload binary}

# the cpu controller: a v1 hierarchy with it, else cgroup2 (which must have it enabled)
mount_of() { # FSTYPE [OPTION]: the first such mount (the fields after " - ": type, source, options)
	awk -v t="$1" -v o="${2:-}" '{
		for (i = 7; i < NF && $i != "-"; i++) ;
		if ($(i + 1) == t && (o == "" || $(i + 3) ~ "(^|,)" o "(,|$)")) { print $5; exit }
	}' /proc/self/mountinfo
}
CPUROOT=$(mount_of cgroup cpu)
V2=0
if [ -z "$CPUROOT" ]; then
	CPUROOT=$(mount_of cgroup2)
	V2=1
	[ -n "$CPUROOT" ] || skip_or_fail "no cgroup hierarchy with the cpu controller"
	grep -qw cpu "$CPUROOT/cgroup.controllers" 2>/dev/null ||
		skip_or_fail "cgroup2 at $CPUROOT has no cpu controller"
	grep -qw cpu "$CPUROOT/cgroup.subtree_control" || echo +cpu > "$CPUROOT/cgroup.subtree_control" ||
		skip_or_fail "cannot enable the cpu controller at $CPUROOT"
fi
CG=$CPUROOT/schedprof-quota-$$
mkdir "$CG" || skip_or_fail "cannot create a cgroup under $CPUROOT"
trap 'rmdir "$CG" 2>/dev/null; rm -rf "$TMP"' EXIT
if [ $V2 = 1 ]; then
	echo 10000 > "$CG/cpu.weight"
else
	echo 262144 > "$CG/cpu.shares"
fi || fail "cannot set the cgroup's weight"

set_quota() { # US: the quota per 100 ms period, or max
	if [ $V2 = 1 ]; then
		echo "$1 100000" > "$CG/cpu.max"
	elif [ "$1" = max ]; then
		echo -1 > "$CG/cpu.cfs_quota_us"
	else
		echo 100000 > "$CG/cpu.cfs_period_us" && echo "$1" > "$CG/cpu.cfs_quota_us"
	fi || fail "cannot set the quota $1"
}
# the cgroup's throttled time in ns (v1 throttled_time: ns; v2 throttled_usec: us)
throttled_ns() {
	awk '$1 == "throttled_time" { print $2 } $1 == "throttled_usec" { print $2 * 1000 }' "$CG/cpu.stat"
}

run_spin() { # OUT
	"$SCHEDPROF" trace --views schedules -f json -o "$1" -- \
		nice -n -20 sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" spin 400' sh "$CG" "$WAKEWORK" ||
		fail "schedprof exited $?"
}

set_quota 20000
T0=$(throttled_ns)
run_spin "$TMP/q.json"
T1=$(throttled_ns)
python3 - "$TMP/q.json" $((T1 - T0)) "$CG" <<'PY' || fail "throttled time check failed"
import json, sys
d = json.load(open(sys.argv[1]))
cg_ns, cg = int(sys.argv[2]), sys.argv[3]
rows = [r for r in d["schedules"]["callers"] if r["caller"] == "[preempted]"]
assert rows, "no [preempted] row"
thr = sum(r.get("throttled_ns", 0) for r in rows)
waiting = sum(r["runq_ns"] for r in rows) - thr
b = d["schedules"]["budget"]
print("rows: throttled %d ns, waiting for a CPU %d ns; budget throttled %d; cpu.stat %d ns; "
      "throttlers %s" % (thr, waiting, b.get("throttled_ns", 0), cg_ns, b.get("throttlers")))
assert cg_ns > 0.5 * d["elapsed_ns"], "the cgroup was throttled %d ns only" % cg_ns
assert abs(thr - cg_ns) <= 0.05 * cg_ns, "throttled %d ns, cpu.stat %d ns: off by %.1f%%" % (
    thr, cg_ns, 100.0 * (thr - cg_ns) / cg_ns)
assert waiting < 0.10 * cg_ns, "waiting for a CPU %d ns, over 10%% of %d" % (waiting, cg_ns)
t = b["throttlers"]
assert len(t) == 1 and t[0]["path"] == cg, "throttlers %s, expected %s" % (t, cg)
assert t[0]["quota_us"] == 20000 and t[0]["period_us"] == 100000, t[0]
PY
pass "throttled time is the cgroup's cpu.stat within 5%, waiting for a CPU under 10% of it"
"$SCHEDPROF" report "$TMP/q.json" > "$TMP/q.txt" || fail "report exited $?"
grep -q "throttled by $CG (quota 20.0ms per 100.0ms)" "$TMP/q.txt" || {
	cat "$TMP/q.txt"
	fail "the report does not name the throttling cgroup"
}
pass "the report names the throttling cgroup"

set_quota max
run_spin "$TMP/n.json"
python3 - "$TMP/n.json" <<'PY' || fail "no-quota check failed"
import json, sys
d = json.load(open(sys.argv[1]))
thr = sum(r.get("throttled_ns", 0) for r in d["schedules"]["callers"])
b = d["schedules"]["budget"]
assert thr == 0 and not b.get("throttled_ns") and not b.get("throttlers"), (thr, b)
PY
pass "without the quota, no throttled time"
