#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# A saved run (trace -f json) as the warehouse rows of one agent interval (issue #13), in the
# form src/fleet/agent_rows.c (branch agent) gives them: one row per (row, comm), "[other]" for
# the part the comms do not cover; one JSONEachRow file per table (schedules, profile, locks,
# losses) in OUTDIR, each row stamped
# with host, boot_id, kernel, interval_start/end (UTC, seconds: the run's start, rounded down,
# and its end, rounded up) and seq, as `schedprof agent` sends them. The fleet tests insert
# them to read them back with `report --from`.
# usage: fleet_rows.py RUN.json OUTDIR HOST BOOT_ID SEQ
import json
import sys
import time

run_path, out, host, boot, seq = sys.argv[1:6]
d = json.load(open(run_path))
start = d["start_unix_ns"] // 10**9
end = -(-(d["start_unix_ns"] + d["elapsed_ns"]) // 10**9)
fmt = lambda t: time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))
stamp = {"host": host, "boot_id": boot, "kernel": d["kernel"], "interval_start": fmt(start),
         "interval_end": fmt(end), "seq": int(seq)}
rows = {"schedules": [], "profile": [], "locks": [], "losses": []}


def parts(comms, count, time_ns, max_ns, ckey, tkey):
    """A row's comms, then "[other]" for what they do not cover (as src/fleet/agent_rows.c)."""
    c = t = 0
    for comm, v in comms.items():
        c += v[ckey]
        t += v.get(tkey, 0)
        yield comm, v[ckey], v.get(tkey, 0), v.get("max_ns", 0)
    if count > c or time_ns > t:
        yield "[other]", max(count - c, 0), max(time_ns - t, 0), max_ns


s = d.get("schedules")
if s:
    for r in s["callers"]:
        for comm, n, t, m in parts(r["comms"], r["count"], r["offcpu_ns"], r["max_ns"],
                                   "count", "offcpu_ns"):
            rows["schedules"].append(dict(stamp, caller=r["caller"], wait=r.get("wait") or "",
                                          comm=comm, count=n, offcpu_ns=t, max_ns=m))
    for what in ("lost_rows", "missing_stacks"):
        rows["losses"].append(dict(stamp, what="schedules." + what, count=s[what]))
p = d.get("profile")
if p:
    for r in p["functions"]:
        for comm, n, _, _ in parts(r["comms"], r["samples"], 0, 0, "samples", "-"):
            rows["profile"].append(dict(stamp, function=r["function"], object=r["object"],
                                        comm=comm, samples=n, hz=p.get("hz", 0)))
    for what in ("lost", "missing_stacks"):
        rows["losses"].append(dict(stamp, what="profile." + what, count=p[what]))
lk = d.get("locks")
if lk and lk.get("available"):
    for r in lk["contentions"]:
        for comm, n, t, m in parts(r["comms"], r["count"], r["wait_ns"], r["max_ns"], "count",
                                   "wait_ns"):
            rows["locks"].append(dict(stamp, caller=r["caller"], kind=r["kind"], lock=r["lock"],
                                      comm=comm, count=n, wait_ns=t, max_ns=m))
    for what in ("lost", "missing_stacks", "missed", "unpaired"):
        rows["losses"].append(dict(stamp, what="locks." + what, count=lk[what]))
# only non-zero losses, as the agent writes them
rows["losses"] = [r for r in rows["losses"] if r["count"]]
for table, rs in rows.items():
    with open(f"{out}/{table}.ndjson", "w") as f:
        for r in rs:
            f.write(json.dumps(r) + "\n")
