#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# CPU quotas: a spinner that burns 400 ms of CPU in a cgroup limited to 20% of a CPU runs for
# about 2 s, throttled most of it. Its throttled time is the cgroup's own cpu.stat throttled
# time from the start to the spinner's exit within 5%, its wait for a CPU under 10% of that,
# and the budget names the cgroup; without the quota it has none. The spinner ends by itself
# inside the trace, so every throttle it waited in is over (counted by cpu.stat) at its exit
# (see run_spin for why not later); it runs at nice -20
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
# the cgroup's throttled time in ns (v1 throttled_time: ns; v2 throttled_usec: us) in its
# cpu.stat, or in FILE (a copy of it)
throttled_ns() {
	awk '$1 == "throttled_time" { print $2 } $1 == "throttled_usec" { print $2 * 1000 }' \
		"${1:-$CG/cpu.stat}"
}

# run_spin OUT: the spinner in the cgroup under schedprof ($TIMELINE: --timeline, or empty),
# and the cgroup's cpu.stat at its exit
# in OUT.stat, copied by its parent (outside the cgroup, woken by the exit) with the shell's
# builtins, no fork: the exit can leave the cgroup throttled with nothing queued (its quota
# used up by the exit's last run), and before Linux 6.7 cpu.stat counts that throttle too,
# up to the next period, when it ends (the kernel adds a throttle's time at its end). The
# copy at the exit has every throttle the spinner waited in, and that one not yet.
TIMELINE=
run_spin() {
	"$SCHEDPROF" trace --views schedules $TIMELINE -f json -o "$1" -- sh -c '
		nice -n -20 sh -c "echo \$\$ > \"\$1/cgroup.procs\" && exec \"\$2\" spin 400" \
			sh "$1" "$2" || exit
		while read -r k v; do echo "$k $v"; done < "$1/cpu.stat" > "$3"' \
		sh "$CG" "$SPIN" "$1.stat" || fail "schedprof exited $?"
	[ -s "$1.stat" ] || fail "no cpu.stat at the spinner's exit"
}
# The spinner must not block: only a preempted task's wait is checked for a throttle, while a
# task woken into a throttled group waits too, in its blocked row's RUNQ, and cpu.stat counts
# that throttle all the same. A binary that pages in from a slow file system blocks (the
# kernel matrix's build tree is 9p: p9_client_rpc rows, whose waits the check missed). So it
# runs from a copy here, run once before (outside the cgroup) to have it and its libraries in
# the page cache; the check below fails when its wake-ups still waited long.
SPIN=$TMP/wakework
cp "$WAKEWORK" "$SPIN" && "$SPIN" spin 1 || fail "cannot copy and run $WAKEWORK"

set_quota 20000
T0=$(throttled_ns)
run_spin "$TMP/q.json"
T1=$(throttled_ns)
TX=$(throttled_ns "$TMP/q.json.stat")
python3 - "$TMP/q.json" $((TX - T0)) $((T1 - T0)) "$CG" "$SLOW" <<'PY' ||
import json, sys
d = json.load(open(sys.argv[1]))
cg_ns, cg_end, cg, slow = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
rows = [r for r in d["schedules"]["callers"] if r["caller"] == "[preempted]"]
assert rows, "no [preempted] row"
thr = sum(r.get("throttled_ns", 0) for r in rows)
waiting = sum(r["runq_ns"] for r in rows) - thr
woken = sum(r["runq_ns"] for r in d["schedules"]["callers"] if r["caller"] != "[preempted]")
b = d["schedules"]["budget"]
print("rows: throttled %d ns, waiting for a CPU %d ns, after wake-ups %d ns; budget throttled "
      "%d; cpu.stat %d ns at the spinner's exit, %d ns after the trace; throttlers %s" % (
          thr, waiting, woken, b.get("throttled_ns", 0), cg_ns, cg_end, b.get("throttlers")))
# after the exit only a throttle with nothing queued can end: counted before Linux 6.7 only,
# and over at the next period (the period less the quota; a period with a late timer)
assert cg_ns <= cg_end <= cg_ns + 1.5 * 100000 * 1000, (
    "cpu.stat %d ns at the exit, %d ns after the trace" % (cg_ns, cg_end))
# throttled 80% of the time on hardware; under emulation (SLOW) the guest's clock jumps while
# the host runs something else, the guest charges the jump to the spinner as CPU time, and its
# 400 ms may take a few periods only: then at least 3 throttles and 200 ms, for 5% to mean it
nr = b.get("throttlers", [{}])[0].get("nr_throttled", 0)
assert (cg_ns > 0.5 * d["elapsed_ns"] if slow <= 1 else nr >= 3 and cg_ns >= 200e6), (
    "the cgroup was throttled %d ns only (%d times in %d ns)" % (cg_ns, nr, d["elapsed_ns"]))
assert abs(thr - cg_ns) <= 0.05 * cg_ns, (
    "throttled %d ns, cpu.stat %d ns: off by %.1f%% (waits after wake-ups: %d ns)" % (
        thr, cg_ns, 100.0 * (thr - cg_ns) / cg_ns, woken))
assert waiting < 0.10 * cg_ns, "waiting for a CPU %d ns, over 10%% of %d" % (waiting, cg_ns)
t = b["throttlers"]
assert len(t) == 1 and t[0]["path"] == cg, "throttlers %s, expected %s" % (t, cg)
assert t[0]["quota_us"] == 20000 and t[0]["period_us"] == 100000, t[0]
PY
	fail "throttled time check failed"
pass "throttled time is the cgroup's cpu.stat at the spinner's exit within 5%, waiting for a CPU under 10% of it"
"$SCHEDPROF" report "$TMP/q.json" > "$TMP/q.txt" || fail "report exited $?"
grep -q "throttled by $CG (quota 20.0ms per 100.0ms)" "$TMP/q.txt" || {
	cat "$TMP/q.txt"
	fail "the report does not name the throttling cgroup"
}
pass "the report names the throttling cgroup"

# --timeline: the spinner's runnable segments begun by a throttle are marked throttled, and
# add up to the rows' throttled time (the segments run on to the switch-in: within 5%); the
# trace-event slices are named so
TIMELINE=--timeline run_spin "$TMP/t.json"
out=$(python3 - "$TMP/t.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
thr = sum(r.get("throttled_ns", 0) for r in d["schedules"]["callers"]
          if r["caller"] == "[preempted]")
segs = [s for s in d["timeline"]["segments"] if s.get("throttled")]
assert all(s["state"] == "runnable" for s in segs), "throttled segments not runnable"
ns = sum(s["ns"] for s in segs)
assert thr > 0 and abs(ns - thr) <= 0.05 * thr, ("throttled segments", ns, "rows", thr)
print(len(segs), ns, thr)
PY
) || fail "--timeline: throttled segments: $out"
"$SCHEDPROF" report "$TMP/t.json" -f trace-event -o "$TMP/t.te.json" ||
	fail "report -f trace-event exited $?"
grep -q '"name":"throttled \[preempted\]"' "$TMP/t.te.json" ||
	fail "--timeline: no trace-event slice named throttled [preempted]"
pass "--timeline: throttled segments (n, ns, rows' ns): $out; trace-event names them"

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
