#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The timeline outputs on a real run: `trace --timeline -f trace-event` and `-f timeline`
# of the pipe workload, each saved as JSON too (--save); `report -f X` of that JSON must be
# byte-identical to the live X. The trace-event file of real data: valid JSON, a thread track
# per task with its slices tiling its life without overlap, the reader's pipe_read slices, and
# wake-up flows paired from the writer's track to the reader's.
. "$(dirname "$0")/lib.sh"
require_bpf

N=300
for fmt in trace-event timeline; do
	"$SCHEDPROF" trace --timeline -f "$fmt" -o "$TMP/$fmt.live" --save "$TMP/$fmt.json" \
		-- "$SPWORK" pipe $N >/dev/null 2>"$TMP/$fmt.err" ||
		fail "trace --timeline -f $fmt exited $?: $(cat "$TMP/$fmt.err")"
	"$SCHEDPROF" report -f "$fmt" -o "$TMP/$fmt.report" "$TMP/$fmt.json" ||
		fail "report -f $fmt of the saved run exited $?"
	cmp -s "$TMP/$fmt.live" "$TMP/$fmt.report" ||
		fail "trace -f $fmt and report -f $fmt of its JSON differ"
	pass "trace --timeline -f $fmt == report -f $fmt of the saved run" \
		"($(wc -c <"$TMP/$fmt.live") bytes)"
done

python3 - "$TMP/trace-event.live" "$N" <<'PY' || fail "the trace-event file of the pipe run"
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
ev = d["traceEvents"]
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
         if e["ph"] == "M" and e["name"] == "thread_name"}
cp_pid = 4194305
slices, stolen = {}, []
for e in ev:
    if e["ph"] == "X" and e["pid"] != cp_pid:
        assert (e["pid"], e["tid"]) in names, f"a slice on an unnamed track: {e}"
        assert e["dur"] >= 0, e
        # a run's stolen time: a slice of its own, nested at the end of the run's
        (stolen if e["cat"] == "stolen" else slices.setdefault(e["tid"], [])).append(e)
# each task's slices tile its life: in time order, each starts where the one before ended
for tid, s in slices.items():
    s.sort(key=lambda e: e["ts"])
    for a, b in zip(s, s[1:]):
        assert abs(a["ts"] + a["dur"] - b["ts"]) < 0.002, f"tid {tid}: gap or overlap {a} {b}"
for e in stolen:
    run = [r for r in slices.get(e["tid"], []) if r["cat"] == "running" and
           abs(r["ts"] + r["dur"] - (e["ts"] + e["dur"])) < 0.002]
    assert run and abs(run[0]["args"].get("stolen_ns", 0) / 1000 - e["dur"]) < 0.002, \
        f"a stolen slice not at the end of a run of that much stolen time: {e} {run}"
reader = [tid for (pid, tid), c in names.items() if c == "sp_pipe_reader"]
assert reader, f"no sp_pipe_reader track: {sorted(set(names.values()))}"
reads = [e for e in slices[reader[0]] if e["cat"] == "blocked" and "pipe_read" in e["name"]]
assert len(reads) >= n * 0.9, f"{len(reads)} pipe_read slices of the reader, for {n} reads"
starts = {e["id"]: e for e in ev if e["ph"] == "s"}
ends = {e["id"]: e for e in ev if e["ph"] == "f"}
assert starts.keys() == ends.keys(), "unpaired flows"
to_reader = [i for i, e in ends.items() if e["tid"] == reader[0]]
assert len(to_reader) >= n * 0.9, f"{len(to_reader)} wake-up flows to the reader, for {n} reads"
for i in to_reader:
    assert starts[i]["tid"] != reader[0] and starts[i]["ts"] == ends[i]["ts"], (starts[i], ends[i])
print(f"trace-event: {len(ev)} events, {len(names)} tasks, {len(reads)} pipe_read slices, "
      f"{len(to_reader)} wake-ups of the reader, {len(stolen)} stolen slices")
PY
pass "the trace-event file of the pipe run: tracks, tiling slices, pipe_read, flows"
grep -q '>sp_pipe_reader [0-9]*</text>' "$TMP/timeline.live" || fail "no reader lane in the page"
pass "the timeline page has the reader's lane"
