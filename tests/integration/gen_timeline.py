#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A big run with a timeline, for the client tests (timeline_chromium.sh,
speedscope_chromium.sh): the fixture run with its tasks and segments replaced by NTASKS tasks
of process 1000 ("worker/0".."worker/8") of NSEGS segments each, 1-3 us long, cycling
running, runnable [woken], blocked in do_wait (woken by the next task), starting 1 us apart;
the critical path one step of worker/0 over the whole run.

usage: gen_timeline.py FIXTURE.json OUT.json NTASKS NSEGS"""
import json
import sys

if len(sys.argv) != 5:
    sys.exit(__doc__)
run = json.load(open(sys.argv[1]))
ntasks, nsegs, us = int(sys.argv[3]), int(sys.argv[4]), 1000
tl = run["timeline"]
tasks, segs = [], []
for t in range(ntasks):
    tid = 1000 + t
    comm = "worker/%d" % (t % 9)
    at = t * us
    task = {"tid": tid, "pid": 1000, "parent_tid": 1000 if t else 0, "comm": comm,
            "start_ns": at, "end_ns": 0, "exited": True}
    for i in range(nsegs):
        ns = (1 + (i * 7 + t) % 3) * us
        st = ("running", "runnable", "blocked")[i % 3]
        s = {"tid": tid, "state": st, "start_ns": at, "ns": ns, "comm": comm}
        if st == "running":
            s["cpu"] = t % 2
        elif st == "runnable":
            s["caller"] = "[woken]"
        else:
            s.update({"caller": "do_wait", "wait": "child", "waker_tid": 1000 + (t + 1) % ntasks,
                      "waker_comm": "worker", "waker": None})
        segs.append(s)
        at += ns
    task["end_ns"] = at
    tasks.append(task)
end = max(t["end_ns"] for t in tasks)
tl["tasks"], tl["segments"] = tasks, segs
tl["end_tid"], tl["end_ns"] = 1000, end
run["elapsed_ns"] = end
cp = tl["critical_path"]
cp["segments"] = [{"comm": "worker/0", "tid": 1000, "state": "running", "caller": None,
                   "start_ns": 0, "ns": end}]
cp["total_ns"] = end
cp["ranked"] = [{"comm": "worker/0", "state": "running", "caller": None, "ns": end}]
tl["parallelism"]["serial_phases"], tl["parallelism"]["serial_ns"] = [], 0
json.dump(run, open(sys.argv[2], "w"))
