#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A big run with a timeline that 2 CPUs could have produced, for bench/whatif.sh: the fixture
run with its tasks and segments replaced by NTASKS tasks forked by a main task, taking turns on
2 CPUs (task i on CPU i % 2) until NSEGS segments are written. Each turn is a run of 50-500 us,
then a sleep woken 10 us before the task's next turn by the task running on the other CPU then
(a pipe wait), or, every 7th turn, a timer sleep without waker; the wait for the CPU between
the wake-up and the turn is a runnable segment. Deterministic (seeded).

usage: gen_whatif.py FIXTURE.json OUT.json NTASKS NSEGS"""
import json
import random
import sys

if len(sys.argv) != 5:
    sys.exit(__doc__)
run = json.load(open(sys.argv[1]))
ntasks, nsegs = int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(25)
US = 1000
main = 100
# per lane: the turns as (start, end, tid)
lanes = [[], []]
clock = [10 * US, 10 * US]
per_task = {}
written = 0
turn = 0
while written < nsegs:
    for lane in (0, 1):
        tid = main + 1 + (turn * 2 + lane) % ntasks if ntasks > 1 else main + 1
        ns = rnd.randint(50, 500) * US
        a = clock[lane]
        lanes[lane].append((a, a + ns, tid))
        per_task.setdefault(tid, []).append((a, a + ns, lane))
        clock[lane] = a + ns
        written += 3
    turn += 1


def running_at(lane, t):
    """The tid running on lane at t, by binary search, or 0."""
    v = lanes[lane]
    lo, hi = 0, len(v)
    while lo < hi:
        mid = (lo + hi) // 2
        if v[mid][0] <= t:
            lo = mid + 1
        else:
            hi = mid
    if lo and v[lo - 1][0] <= t < v[lo - 1][1]:
        return v[lo - 1][2]
    return 0


tasks = [{"tid": main, "pid": main, "parent_tid": 0, "comm": "main", "start_ns": 0,
          "end_ns": max(clock) + US, "exited": True}]
segs = [{"tid": main, "state": "running", "start_ns": 0, "ns": 10 * US, "comm": "main", "cpu": 0},
        {"tid": main, "state": "blocked", "start_ns": 10 * US, "ns": max(clock) - 10 * US,
         "comm": "main", "caller": "do_wait", "wait": "child", "waker_tid": 0,
         "waker_comm": None, "waker": None},
        {"tid": main, "state": "running", "start_ns": max(clock), "ns": US, "comm": "main",
         "cpu": 0}]
for tid in sorted(per_task):
    turns = per_task[tid]
    comm = "worker/%d" % (tid % 9)
    start = 10 * US
    tasks.append({"tid": tid, "pid": main, "parent_tid": main, "comm": comm,
                  "start_ns": start, "end_ns": turns[-1][1], "exited": True})
    at = start
    for i, (a, b, lane) in enumerate(turns):
        if a > at:
            # asleep from at, woken 10 us before its turn (or at it), runnable until a
            w = max(at, a - 10 * US)
            waker = running_at(1 - lane, w) if i % 7 else 0
            if w > at:
                s = {"tid": tid, "state": "blocked", "start_ns": at, "ns": w - at, "comm": comm,
                     "caller": "pipe_read" if waker else "do_nanosleep",
                     "wait": "pipe" if waker else None}
                s["waker_tid"] = waker
                s["waker_comm"] = "worker/%d" % (waker % 9) if waker else None
                s["waker"] = None
                segs.append(s)
            if a > w:
                segs.append({"tid": tid, "state": "runnable", "start_ns": w, "ns": a - w,
                             "comm": comm, "caller": "[woken]" if i else "[new]"})
        segs.append({"tid": tid, "state": "running", "start_ns": a, "ns": b - a, "comm": comm,
                     "cpu": lane})
        at = b
tl = run["timeline"]
tl["tasks"], tl["segments"] = tasks, segs
tl["end_tid"], tl["end_ns"] = main, max(clock) + US
tl["events"], tl["lost"] = 2 * len(segs), 0
end = max(clock) + US
# the critical path and parallelism are the loader's to trust: one step, no serial phase
cp = tl["critical_path"]
cp["segments"] = [{"comm": "main", "tid": main, "state": "running", "caller": None,
                   "start_ns": 0, "ns": end}]
cp["total_ns"] = end
cp["ranked"] = [{"comm": "main", "state": "running", "caller": None, "ns": end}]
tl["parallelism"]["serial_phases"], tl["parallelism"]["serial_ns"] = [], 0
run["elapsed_ns"] = end
json.dump(run, open(sys.argv[2], "w"))
print("%d tasks, %d segments, %.1f s" % (len(tasks), len(segs), run["elapsed_ns"] / 1e9))
