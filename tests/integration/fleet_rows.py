#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# A saved run (trace -f json) as the warehouse rows of one agent interval (issue #13): one
# JSONEachRow file per table (schedules, profile, locks, losses) in OUTDIR, each row stamped
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
s = d.get("schedules")
if s:
    for r in s["callers"]:
        for comm, c in r["comms"].items():
            rows["schedules"].append(dict(stamp, caller=r["caller"], wait=r.get("wait") or "",
                                          comm=comm, count=c["count"],
                                          offcpu_ns=c["offcpu_ns"], max_ns=c["max_ns"]))
    for what in ("lost_rows", "missing_stacks"):
        rows["losses"].append(dict(stamp, what="schedules." + what, count=s[what]))
p = d.get("profile")
if p:
    for r in p["functions"]:
        rows["profile"].append(dict(stamp, function=r["function"], object=r["object"],
                                    samples=r["samples"]))
    for what in ("lost", "missing_stacks", "unsymbolized", "user_truncated"):
        rows["losses"].append(dict(stamp, what="profile." + what, count=p[what]))
lk = d.get("locks")
if lk and lk.get("available"):
    for r in lk["contentions"]:
        rows["locks"].append(dict(stamp, caller=r["caller"], kind=r["kind"], lock=r["lock"],
                                  count=r["count"], wait_ns=r["wait_ns"], max_ns=r["max_ns"]))
    for what in ("lost", "missing_stacks", "missed", "unpaired"):
        rows["losses"].append(dict(stamp, what="locks." + what, count=lk[what]))
for table, rs in rows.items():
    with open(f"{out}/{table}.ndjson", "w") as f:
        for r in rs:
            f.write(json.dumps(r) + "\n")
