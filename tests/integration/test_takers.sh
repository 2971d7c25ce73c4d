#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Who took my CPU: two CPU hogs ("ww_hog") and a sleeper ("ww_sleeper", 10 ms naps), all
# pinned to CPU 0 (wakework runq). The sleeper's row names the hogs as the tasks that ran
# before its switch-ins (at least a quarter of them), and the preempted hogs' row names the
# hogs as preemptors:
#   - inside: the hogs are the traced command's own (where "inside");
#   - outside: the hogs run untraced beside a traced sleeper alone (where "outside").
# In every row, each taker's share of "ran before" time is at most the row's RUNQ (it is its
# runs' overlap with the waits), and no kind counts more waits than the row has.
. "$(dirname "$0")/lib.sh"
require_bpf
WAKEWORK=${WAKEWORK:?WAKEWORK must name the workload binary}
SECS=2

# check FILE WHERE: the sleeper's takers in the run's JSON
check() {
	python3 - "$1" "$2" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
where = sys.argv[2]
rows = d["schedules"]["callers"]
for r in rows:
    for kind in ("preempted-by", "ran-before"):
        n = sum(t["count"] for t in r.get("cpu_takers", []) if t["kind"] == kind)
        assert n <= r["count"], (r["caller"], kind, n, "of", r["count"])
    ran = sum(t["ns"] for t in r.get("cpu_takers", []) if t["kind"] == "ran-before")
    assert ran <= r.get("runq_ns", 0), (r["caller"], "ran-before", ran, "> RUNQ", r.get("runq_ns"))
sleeps = [r for r in rows if list(r["comms"]) == ["ww_sleeper"] and r.get("wait") is None
          and r["caller"] not in ("[preempted]", "do_exit")]
assert len(sleeps) == 1, "ww_sleeper's sleep rows: %s" % [r["caller"] for r in sleeps]
s = sleeps[0]
# PREEMPT_RT wakes a nanosleep from the timer softirq's thread (ktimers/N), which then runs
# just before the sleeper's switch-in: there the hogs preempt the sleeper instead
rt = open("/sys/kernel/realtime").read().strip() == "1" if os.path.exists("/sys/kernel/realtime") else False
before = [t for t in s.get("cpu_takers", []) if t["kind"] == "ran-before"]
hog = [t for t in before if t["comm"] == "ww_hog"]
assert all(t["where"] == where for t in hog), hog
# (on a quiet machine nearly all of them; other tasks on CPU 0 take their share under load).
# Outside, the hogs' untraced sleeper naps as the traced one does, and its wake-ups come in
# the same ticks: under TCG (6.1) it ran first at most of them. It counts with the hogs there.
mates = ("ww_hog", "ww_sleeper") if where == "outside" else ("ww_hog",)
n = sum(t["count"] for t in before if (t["comm"] in mates and t["where"] == where) or
        (rt and t["comm"].startswith("ktimers/")))
assert hog or rt, ("no ww_hog before the sleeper's switch-ins", before)
assert n * 4 >= s["count"], ("ww_hog (or ktimers) before", n, "of", s["count"], before)
print(s["caller"], s["count"], n, sum(t["ns"] for t in hog), s["runq_ns"])
if where == "inside":
    pre = [r for r in rows if r["caller"] == "[preempted]" and "ww_hog" in r["comms"]]
    assert pre, "no preempted ww_hog"
    by = [t for t in pre[0].get("cpu_takers", []) if t["kind"] == "preempted-by"
          and t["comm"] in ("ww_hog", "ww_sleeper")]
    assert by and all(t["where"] == "inside" for t in by), pre[0].get("cpu_takers")
PY
}

"$SCHEDPROF" trace --views schedules -f json -o "$TMP/in.json" -- "$WAKEWORK" runq $SECS 0 2 ||
	fail "trace of runq $SECS 0 2 exited $?"
read -r caller n hog ns runq < <(check "$TMP/in.json" inside) || fail "inside: see above"
"$SCHEDPROF" report "$TMP/in.json" -n 0 > "$TMP/in.txt" || fail "report exited $?"
# (ranked by time: another task's one long run may come first)
grep -Eq "^ +ran before the switch-ins: (.*; )?(ww_hog \(inside\)|ktimers/[0-9]+ \(outside\)) [0-9]+ times, [0-9.]+[mun]?s of the waits" \
	"$TMP/in.txt" || fail "inside: no 'ran before the switch-ins: ww_hog (inside)' line: $(grep -A3 " $caller\$" "$TMP/in.txt" | tr '\n' '|')"
grep -Eq "^ +preempted by: .*ww_(hog|sleeper) \(inside\) [0-9]+ times" "$TMP/in.txt" ||
	fail "inside: no 'preempted by' line under [preempted]"
pass "inside: ww_hog (or PREEMPT_RT's ktimers) ran before $hog of the sleeper's $n $caller switch-ins (ww_hog $ns of $runq ns RUNQ), and preempted the hogs"

# the hogs untraced (their own sleeper too), the traced sleeper alone on their CPU. They run
# until killed (a session of their own: the group's kill reaches the hogs), however long the
# trace takes to start (seconds under TCG).
setsid "$WAKEWORK" runq $((60 * SLOW)) 0 2 &
hogs=$!
trap 'kill -TERM -- -$hogs 2>/dev/null; rm -rf "$TMP"' EXIT
sleep 0.5
"$SCHEDPROF" trace --views schedules -f json -o "$TMP/out.json" -- "$WAKEWORK" runq $SECS 0 0 ||
	fail "trace of runq $SECS 0 0 exited $?"
kill -TERM -- -$hogs 2>/dev/null
wait $hogs 2>/dev/null
read -r caller n hog ns runq < <(check "$TMP/out.json" outside) || fail "outside: see above"
pass "outside: untraced ww_hog (or PREEMPT_RT's ktimers) ran before $hog of the sleeper's $n $caller switch-ins (ww_hog $ns of $runq ns RUNQ)"

# --timeline: who ran on the CPU during each wait, exactly ("ran-during"). The sleeper's row
# names the hogs (inside), and their time is the wait's: at most the row's RUNQ (5% for the
# two clocks of the wake-up: the timeline's event and the schedules view's stamp). schedprof
# itself runs on the other CPU: its reader of every switch's event, on CPU 0 when the machine
# is busy, ran during the waits as much as the hogs did.
other=
[ "$(nproc)" -ge 2 ] && other="taskset -c 1"
$other "$SCHEDPROF" trace --timeline -f json -o "$TMP/tl.json" -- "$WAKEWORK" runq $SECS 0 2 ||
	fail "trace --timeline of runq $SECS 0 2 exited $?"
out=$(python3 - "$TMP/tl.json" 2>&1 <<'PY'
import json, os, sys
rows = json.load(open(sys.argv[1]))["schedules"]["callers"]
s = [r for r in rows if list(r["comms"]) == ["ww_sleeper"] and r.get("wait") is None
     and r["caller"] not in ("[preempted]", "do_exit")]
assert len(s) == 1, [r["caller"] for r in s]
s = s[0]
during = [t for t in s.get("cpu_takers", []) if t["kind"] == "ran-during"]
total = sum(t["ns"] for t in during)
hog = sum(t["ns"] for t in during if t["comm"] == "ww_hog" and t["where"] == "inside")
# PREEMPT_RT: the timer thread that woke the sleeper runs on during its wait (a 6.1-rt guest:
# ktimers/0 20.4 of 23.6 ms, ww_hog none), as the ran-before takers above say
rt = os.path.exists("/sys/kernel/realtime") and open("/sys/kernel/realtime").read().strip() == "1"
if rt:
    hog += sum(t["ns"] for t in during if t["comm"].startswith("ktimers/"))
assert total <= s["runq_ns"] * 1.05, ("ran-during", total, "> RUNQ", s["runq_ns"])
assert hog * 2 >= s["runq_ns"], ("ww_hog (or ktimers) ran during", hog, "of RUNQ", s["runq_ns"], during)
print(s["caller"], hog, s["runq_ns"])
PY
) || fail "--timeline: the sleeper's exact takers: $out"
pass "--timeline: ww_hog ran during the sleeper's waits (caller, ns, RUNQ): $out"
