#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Writes a synthetic saved run (schedprof JSON) shaped like a long `trace -a -g` run.

  genrun.py [-s SEED] [-n STACKS] [-V VARIANT] [-H HOT] OUT.json

Every view is present: schedules (kernel stacks), profile (-g: kernel then user frames, with
objects and build-ids) and locks (contentions with owners, sleepers, sleeper groups). The
stacks are split 40/40/20 over the three views and all distinct; comms, pids, callers and the
frame pools are large, as on a busy machine traced system-wide for 60 s. The same SEED gives
the same file; VARIANT (0, 1...) perturbs the counts and replaces a tenth of the stacks, so two
variants of one seed make a realistic `diff`. HOT (0 to 1, default 0) is the share of each
view's stacks that go to its first row: a hot spot such as one function or lock with tens of
thousands of distinct stacks, the case where merging stacks row by row was quadratic.
"""
import argparse
import json
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-s", "--seed", type=int, default=1)
    ap.add_argument("-n", "--stacks", type=int, default=100000)
    ap.add_argument("-V", "--variant", type=int, default=0)
    ap.add_argument("-H", "--hot", type=float, default=0.0)
    ap.add_argument("out")
    a = ap.parse_args()

    rnd = random.Random(a.seed)
    # pools, drawn from the seed alone so every variant shares them
    kfuncs = ["k_%s_%d" % (rnd.choice(["vfs", "ext4", "tcp", "sched", "mm", "blk", "net",
                                        "irq", "futex", "pipe", "sock", "page"]), i)
              for i in range(6000)]
    modules = ["[kernel]"] * 8 + ["[ext4]", "[nvme]", "[xfs]", "[i915]"]
    objects = ["/usr/lib/x86_64-linux-gnu/lib%s.so.%d" % (w, i)
               for i, w in enumerate(["c", "stdc++", "ssl", "z", "python3.11", "glib-2.0",
                                      "crypto", "m", "gtk-3", "llvm-16", "v8", "sqlite3"] * 10)]
    objects += ["/usr/bin/app%d" % i for i in range(80)]
    ufuncs = [("u_fn_%d" % i, rnd.choice(objects)) for i in range(25000)]
    comms = ["comm-%d" % i for i in range(600)] + ["cc1", "as", "make", "bash", "sshd"]
    pids = [rnd.randrange(100, 4000000) for _ in range(5000)]
    pid_comm = {p: rnd.choice(comms) for p in pids}
    sched_callers = [("sc_%d" % i, rnd.choice(["pipe", "mutex", "rwsem-read", "io", "futex",
                                               None])) for i in range(400)]
    sched_callers += [("[preempted]", None)]
    prof_funcs = ["pf_%d" % i for i in range(3000)]
    lock_callers = [("lc_%d" % i, rnd.choice(["mutex", "rwsem-write", "rwsem-read",
                                             "spinlock"]), "lock_%d" % (i % 97))
                    for i in range(300)]

    vr = random.Random(a.seed * 1000 + a.variant)
    nsched = a.stacks * 4 // 10
    nprof = a.stacks * 4 // 10
    nlock = a.stacks - nsched - nprof
    seen = set()

    def kstack(leaf, depth):
        frames = [leaf] + [rnd.choice(kfuncs) for _ in range(depth - 1)]
        mods = [rnd.choice(modules) if i else "[kernel]" for i in range(depth)]
        return frames, mods

    def distinct(make):
        while True:
            s = make()
            key = (s[0], tuple(s[1]), s[3])
            if key not in seen:
                seen.add(key)
                return s

    def replaced():
        # a tenth of the stacks differ between variants: the rnd stream stays aligned
        return a.variant and vr.random() < 0.1

    def count():
        c = int(rnd.paretovariate(1.2))
        return max(1, int(c * (0.5 + vr.random()) if a.variant else c))

    def assign(rows_n, n):
        # skewed, as on a real machine: a few rows ([preempted], futex waits, the hottest
        # functions) hold thousands of stacks, most hold a handful
        return [0 if a.hot and rnd.random() < a.hot else int(rows_n * rnd.random() ** 3)
                for _ in range(n)]

    # ---- schedules ----
    rows = [{"caller": c, "wait": w, "stacks": [], "comms": {}} for c, w in sched_callers]
    for r in assign(len(rows), nsched):
        row = rows[r]

        def make():
            pid = rnd.choice(pids)
            d = rnd.randrange(6, 40)
            frames, mods = kstack("__schedule", d)
            frames[1] = "schedule"
            if row["caller"] != "[preempted]":
                frames[2] = row["caller"]
            if replaced():
                frames[-1] = "k_variant_%d" % vr.randrange(1000)
            return pid_comm[pid], frames, mods, pid
        comm, frames, mods, pid = distinct(make)
        c = count()
        row["stacks"].append({"comm": comm, "pid": pid, "count": c,
                              "offcpu_ns": c * rnd.randrange(1000, 5000000),
                              "frames": frames, "objects": mods})
    sched_rows = []
    tot = 0
    for row in rows:
        cm = {}
        for s in row["stacks"]:
            e = cm.setdefault(s["comm"], {"count": 0, "offcpu_ns": 0, "max_ns": 0})
            e["count"] += s["count"]
            e["offcpu_ns"] += s["offcpu_ns"]
            e["max_ns"] = max(e["max_ns"], s["offcpu_ns"] // s["count"] * 3)
        for _ in range(3):  # comms without stacks (missing stacks)
            e = cm.setdefault(rnd.choice(comms), {"count": 0, "offcpu_ns": 0, "max_ns": 0})
            e["count"] += 5
            e["offcpu_ns"] += 5000
            e["max_ns"] = max(e["max_ns"], 2000)
        cnt = sum(e["count"] for e in cm.values())
        tot += cnt
        sched_rows.append({"caller": row["caller"], "wait": row["wait"], "count": cnt,
                           "offcpu_ns": sum(e["offcpu_ns"] for e in cm.values()),
                           "max_ns": max(e["max_ns"] for e in cm.values()),
                           "comms": cm, "stacks": row["stacks"]})

    # ---- profile ----
    rows = [{"function": f, "stacks": [], "comms": {}} for f in prof_funcs]
    for r in assign(len(rows), nprof):
        row = rows[r]

        def make():
            pid = rnd.choice(pids)
            kd = rnd.randrange(0, 25)
            ud = rnd.randrange(2, 30)
            frames, mods = kstack(row["function"], kd) if kd else ([], [])
            us = [rnd.choice(ufuncs) for _ in range(ud)]
            frames += [f for f, _ in us]
            mods += [o for _, o in us]
            if not kd:
                frames[0] = row["function"]
            if replaced():
                frames[-1] = "u_variant_%d" % vr.randrange(1000)
            return pid_comm[pid], frames, mods, pid
        comm, frames, mods, pid = distinct(make)
        row["stacks"].append({"comm": comm, "pid": pid, "count": count(),
                              "frames": frames, "objects": mods})
    prof_rows = []
    all_comms = {}
    for row in rows:
        cm = {}
        for s in row["stacks"]:
            cm.setdefault(s["comm"], {"samples": 0})["samples"] += s["count"]
        cm.setdefault(rnd.choice(comms), {"samples": 0})["samples"] += 2
        n = sum(e["samples"] for e in cm.values())
        for k, e in cm.items():
            all_comms.setdefault(k, {"samples": 0})["samples"] += e["samples"]
        prof_rows.append({"function": row["function"], "object": "[kernel]", "samples": n,
                          "comms": cm, "stacks": row["stacks"]})
    ptot = sum(r["samples"] for r in prof_rows)
    preempted = sum(r["count"] for r in sched_rows if r["caller"] == "[preempted]")

    # ---- locks ----
    rows = [{"c": c, "stacks": []} for c in lock_callers]
    for r in assign(len(rows), nlock):
        row = rows[r]

        def make():
            pid = rnd.choice(pids)
            frames, mods = kstack("__lock_slowpath", rnd.randrange(6, 35))
            frames[1] = row["c"][0]
            if replaced():
                frames[-1] = "k_variant_%d" % vr.randrange(1000)
            return pid_comm[pid], frames, mods, pid
        comm, frames, mods, pid = distinct(make)
        c = count()
        row["stacks"].append({"comm": comm, "pid": pid, "count": c,
                              "wait_ns": c * rnd.randrange(100, 100000),
                              "frames": frames, "objects": mods})
    lock_rows = []
    sleepers = []
    groups = {}
    ltot = 0
    for row in rows:
        caller, kind, lock = row["c"]
        cm = {}
        for s in row["stacks"]:
            e = cm.setdefault(s["comm"], {"count": 0, "wait_ns": 0, "max_ns": 0})
            e["count"] += s["count"]
            e["wait_ns"] += s["wait_ns"]
            e["max_ns"] = max(e["max_ns"], s["wait_ns"] // s["count"] * 2)
        if not cm:
            continue
        owners = {}
        for _ in range(5):
            e = owners.setdefault(rnd.choice(comms), {"count": 0, "wait_ns": 0})
            e["count"] += 3
            e["wait_ns"] += 3000
        cnt = sum(e["count"] for e in cm.values())
        ltot += cnt
        lock_rows.append({"caller": caller, "kind": kind, "lock": lock, "lock_source": "symbol",
                          "count": cnt, "wait_ns": sum(e["wait_ns"] for e in cm.values()),
                          "max_ns": max(e["max_ns"] for e in cm.values()), "failed": 0,
                          "comms": cm, "owners": owners, "stacks": row["stacks"]})
        if kind in ("mutex", "rwsem-write", "rwsem-read"):
            sc = {}
            for k, e in list(cm.items())[:20]:
                sc[k] = {"count": e["count"], "offcpu_ns": e["wait_ns"], "max_ns": e["max_ns"]}
                g = groups.setdefault((k, kind, lock), {})
                ge = g.setdefault(caller, {"count": 0, "offcpu_ns": 0, "max_ns": 0})
                ge["count"] += e["count"]
                ge["offcpu_ns"] += e["wait_ns"]
                ge["max_ns"] = max(ge["max_ns"], e["max_ns"])
            sleepers.append({"caller": caller, "kind": kind, "lock": lock, "tasks": len(sc),
                             "count": sum(e["count"] for e in sc.values()),
                             "offcpu_ns": sum(e["offcpu_ns"] for e in sc.values()),
                             "max_ns": max(e["max_ns"] for e in sc.values()), "comms": sc})
    sleeper_groups = []
    for (comm, kind, lock), callers in groups.items():
        sleeper_groups.append({"comm": comm, "kind": kind, "lock": lock, "tasks": 1,
                               "count": sum(e["count"] for e in callers.values()),
                               "offcpu_ns": sum(e["offcpu_ns"] for e in callers.values()),
                               "max_ns": max(e["max_ns"] for e in callers.values()),
                               "callers": callers})

    run = {
        "schema": "schedprof/1",
        "version": "0.1.0",
        "kernel": "6.18.44",
        "hostname": "bench",
        "ncpus": 64,
        "start_unix_ns": 1764480000000000000,
        "elapsed_ns": 60000000000,
        "options": "trace -a -g -d 60 -f json",
        "target": {"mode": "system"},
        "objects": [{"path": o, "build_id": "%040x" % rnd.getrandbits(160)}
                    for o in objects],
        # the totals keep the invariants report checks: rows + lost = total, and so on
        "schedules": {"total": tot + 7, "voluntary": tot + 7 - preempted,
                      "preempted": preempted, "idle": 0, "missing_stacks": 100, "lost_rows": 7,
                      "callers": sched_rows},
        "profile": {"hz": 99, "cpus": 64, "callchains": True, "total": ptot + 3 + 500,
                    "idle": 500, "target": ptot + 3, "other": 0, "unsymbolized": 40, "lost": 3,
                    "missing_stacks": 0, "user_truncated": 12, "functions": prof_rows,
                    "comms": all_comms},
        "locks": {"available": True, "total": ltot + 2, "failed": 0, "lost": 2,
                  "missing_stacks": 0, "missed": 0, "unpaired": 0, "contentions": lock_rows,
                  "sleepers": sleepers, "sleeper_groups": sleeper_groups},
    }
    with open(a.out, "w") as f:
        json.dump(run, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
