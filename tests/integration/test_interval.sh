#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# trace -i: a reader that blocks exactly N times on a pipe, over many intervals. No event is
# lost or counted twice: the intervals' JSON lines add up exactly to the whole run (--save),
# total by total and row by row (counts and times, comms, wakers, CPU takers); the reader's
# pipe row spans several intervals and adds up to N (within 1%, as test_pipe.sh). The job
# runs on one CPU, so each of the reader's wake-ups waits for the writer to leave the CPU and
# names a taker: the row's CPU takers and wakers keep pace with its blocks interval by
# interval (BPF keeps a CPU's last ones apart from their maps, and each interval's read adds
# them, rather than holding them back to a later interval or the end). Each line is a
# complete run with its "interval" object, in order and back to back. The table form prints
# one header per interval, then the whole run.
. "$(dirname "$0")/lib.sh"
require_bpf
N=60000
"$SCHEDPROF" trace -i 0.1 -f json --save "$TMP/final.json" -- taskset -c 0 "$SPWORK" pipe $N \
	> "$TMP/lines.json" 2> "$TMP/err" || { cat "$TMP/err" >&2; fail "schedprof exited"; }
# a user function named only once its process's files were read is the one thing that may
# move between rows (and then trace says so): the profile's rows are compared without it
renamed=0
grep -q 'rows changed names between intervals' "$TMP/err" && renamed=1
python3 - "$TMP/lines.json" "$TMP/final.json" "$N" "$renamed" "$(pipe_read_fn)" <<'PY' || exit 1
import json, sys
from collections import Counter
lines = [json.loads(l) for l in open(sys.argv[1])]
final = json.load(open(sys.argv[2]))
n = int(sys.argv[3])
renamed = sys.argv[4] == "1"
def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)
if len(lines) < 3:
    fail("%d intervals, expected at least 3" % len(lines))
end = 0
for i, d in enumerate(lines):
    iv = d.get("interval")
    if not iv or iv["index"] != i + 1:
        fail("line %d: interval %r, expected index %d" % (i + 1, iv, i + 1))
    if iv["start_ns"] != end or iv["end_ns"] < iv["start_ns"]:
        fail("line %d: interval %r does not start where the last ended (%d)" % (i + 1, iv, end))
    if d["elapsed_ns"] != iv["end_ns"] - iv["start_ns"] or d["schema"] != final["schema"]:
        fail("line %d: elapsed_ns or schema" % (i + 1))
    end = iv["end_ns"]
if "interval" in final:
    fail("the whole run has an interval object")
if end != final["elapsed_ns"]:
    fail("the last interval ends at %d, the run at %d" % (end, final["elapsed_ns"]))
def totals(view, keys):
    for k in keys:
        s = sum(d[view][k] for d in lines)
        if s != final[view][k]:
            fail("%s.%s: the intervals add up to %d, the whole run has %d" % (view, k, s, final[view][k]))
totals("schedules", ["total", "voluntary", "preempted", "idle", "lost_rows", "missing_stacks"])
totals("profile", ["total", "idle", "target", "other", "lost"])
def rows(view, arr, key, fields):
    acc = {}
    for d in lines:
        for r in d[view][arr]:
            a = acc.setdefault(key(r), Counter())
            for f in fields:
                a[f] += r.get(f, 0)
            for c, v in r.get("comms", {}).items():
                a["comm " + c] += v.get("count", v.get("samples", 0))
            for w in r.get("wakers", []):
                a["waker %s %s" % (w["comm"], w["function"])] += w["count"]
            for t in r.get("cpu_takers", []):
                a["taker %s %s %s" % (t["kind"], t["comm"], t["where"])] += t["count"]
                a["taker ns %s %s %s" % (t["kind"], t["comm"], t["where"])] += t["ns"]
    want = {}
    for r in final[view][arr]:
        a = want.setdefault(key(r), Counter())
        for f in fields:
            a[f] += r.get(f, 0)
        for c, v in r.get("comms", {}).items():
            a["comm " + c] += v.get("count", v.get("samples", 0))
        for w in r.get("wakers", []):
            a["waker %s %s" % (w["comm"], w["function"])] += w["count"]
        for t in r.get("cpu_takers", []):
            a["taker %s %s %s" % (t["kind"], t["comm"], t["where"])] += t["count"]
            a["taker ns %s %s %s" % (t["kind"], t["comm"], t["where"])] += t["ns"]
    for k in set(acc) | set(want):
        if +acc.get(k, Counter()) != +want.get(k, Counter()):
            fail("%s row %r: intervals %r, whole run %r" % (view, k, dict(acc.get(k, {})), dict(want.get(k, {}))))
    return len(want)
nr = rows("schedules", "callers", lambda r: (r["caller"], r["wait"]),
          ["count", "offcpu_ns", "blocked_ns", "runq_ns"])
if renamed:
    print("note: user functions were named late: the profile's rows are not compared")
    np = 0
else:
    np = rows("profile", "functions", lambda r: (r["function"], r["object"]), ["samples"])
if final.get("locks", {}).get("available"):
    totals("locks", ["total", "failed", "lost", "unpaired"])
    rows("locks", "contentions", lambda r: (r["caller"], r["kind"], r["lock"]),
         ["count", "wait_ns", "failed"])
    rows("locks", "sleepers", lambda r: (r["caller"], r["kind"], r["lock"]), ["count", "offcpu_ns"])
elif "locks" in final:
    print("note: the locks view is not available on this kernel")
# the reader's pipe row: in several intervals, N in all
def pipe_count(d):
    return sum(r["comms"].get("sp_pipe_reader", {}).get("count", 0)
               for r in d["schedules"]["callers"] if r["caller"] == sys.argv[5])
per = [pipe_count(d) for d in lines]
if sum(1 for c in per if c) < 2:
    fail("the pipe row is in %d interval(s), expected several: %r" % (sum(1 for c in per if c), per))
tot = sum(per)
if tot != pipe_count(final):
    fail("pipe row: intervals %d, whole run %d" % (tot, pipe_count(final)))
if not n * 99 // 100 <= tot <= n * 101 // 100:
    fail("pipe row: %d, expected %d within 1%%" % (tot, n))
def pipe_takers(d):
    return sum(t["count"] for r in d["schedules"]["callers"] if r["caller"] == sys.argv[5]
               for t in r.get("cpu_takers", []))
tk = [pipe_takers(d) for d in lines]
def pipe_wakers(d):
    return sum(w["count"] for r in d["schedules"]["callers"] if r["caller"] == sys.argv[5]
               for w in r.get("wakers", []))
wk = [pipe_wakers(d) for d in lines]
# a taker or waker that moves from its CPU's slot to the map between an interval's two reads
# (the slot's whole count, on a slow guest up to most of an interval's) is in the next
# interval: by the end of each interval, they have caught up with the blocks up to the one
# before (within 10%)
for what, got in (("CPU takers", tk), ("wakers", wk)):
    cb = ct = 0
    for i, (c, t) in enumerate(zip(per, got)):
        ct += t
        if ct < cb * 9 // 10 - 16:
            fail("the pipe row's %s are behind its blocks: %d by interval %d, against %d "
                 "blocks by the one before: blocks %r, %s %r" % (what, ct, i + 1, cb, per, what, got))
        cb += c
print("ok: %d intervals add up exactly to the whole run (%d schedules rows, %d profile rows); "
      "pipe reader %d blocks over intervals %r" % (len(lines), nr, np, tot, per))
PY
# each line is a run that report reads (an interval's totals and rows were read a moment
# apart: report does not hold them to the whole run's invariants)
i=0
while read -r line; do
	i=$((i + 1))
	printf '%s\n' "$line" > "$TMP/line.json"
	"$SCHEDPROF" report "$TMP/line.json" > "$TMP/line.txt" || fail "report cannot read interval line $i"
	grep -q '^schedules:' "$TMP/line.txt" || fail "report of interval line $i has no schedules table"
done < "$TMP/lines.json"
pass "report reads each of the $i interval lines"
# the table form: a header per interval, in order, then the whole run once, last
"$SCHEDPROF" trace -i 0.2 --views schedules -- "$SPWORK" wait 100 > "$TMP/table.txt" \
	|| fail "table run exited $?"
k=$(grep -c '^=== interval ' "$TMP/table.txt")
[ "$k" -ge 2 ] || fail "$k interval headers in the table output, expected at least 2"
grep '^=== interval ' "$TMP/table.txt" | awk '{sub(":", "", $3); if ($3 != NR) exit 1}' \
	|| fail "interval headers out of order"
[ "$(grep -c '^=== the whole run ===$' "$TMP/table.txt")" = 1 ] || fail "no (or more than one) whole-run header"
tail -n +"$(grep -n '^=== the whole run ===$' "$TMP/table.txt" | cut -d: -f1)" "$TMP/table.txt" \
	| grep -q '^=== interval ' && fail "an interval after the whole run"
w=$(awk '/^=== the whole run ===$/{f=1} f&&/ do_wait$/{print $1; exit}' "$TMP/table.txt")
assert_between "do_wait count of the whole run" "${w:-0}" 100 110
# usage: -i's range and formats
"$SCHEDPROF" trace -i 0 -a -d 1 >/dev/null 2>&1; [ $? = 2 ] || fail "-i 0 is not a usage error"
"$SCHEDPROF" trace -i 1x -a -d 1 >/dev/null 2>&1; [ $? = 2 ] || fail "-i 1x is not a usage error"
"$SCHEDPROF" trace -i 1 -f folded -a -d 1 >/dev/null 2>&1; [ $? = 2 ] || fail "-i with -f folded is not a usage error"
pass "table intervals ($k), usage errors"
