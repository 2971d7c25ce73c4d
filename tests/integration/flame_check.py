#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Checks of the flame graphs' documents (format_flame.c) that need no browser, for
flame_chromium.sh.

usage: flame_check.py fit FILE      every graph's height fits the deepest level whose frames
                                    are at least data-fit px wide in all; deeper frames are
                                    hidden (and a note counts them), none other
       flame_check.py diff FILE     a differential page (diff -f html, counts): each view's
                                    after and before graphs agree on every frame's before and
                                    after values (frames matched by their names from the
                                    root), and the colours follow the sign of the change
Prints one line per graph; exits 1 on the first failure."""
import html
import re
import sys

SVG = re.compile(r'<svg class="flame"([^>]*)>(.*?)</svg>', re.S)
NODE = re.compile(r'<g class="f" data-x="([0-9.]+)" data-w="([0-9.]+)" data-d="(\d+)"'
                  r'( style="display:none")?><title>(.*?)</title><rect [^>]*fill="([^"]+)"', re.S)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def attrs(s):
    return dict(re.findall(r'([\w-]+)="([^"]*)"', s))


body_of = {}  # id(nodes) -> the svg's body


def graphs(path):
    out = []
    for head, body in SVG.findall(open(path, encoding="utf-8").read()):
        a = attrs(head)
        nodes = []
        for x, w, d, hidden, title, fill in NODE.findall(body):
            nodes.append({"x": float(x), "w": float(w), "d": int(d), "hidden": bool(hidden),
                          "lines": html.unescape(title).split("\n"), "fill": fill})
        body_of[id(nodes)] = body
        out.append((a, nodes))
    if not out:
        fail(f"{path}: no flame graph")
    return out


def check_fit(path):
    for a, nodes in graphs(path):
        fit, top, fh, bottom = (float(a["data-fit"]), int(a["data-top"]), int(a["data-fh"]),
                                int(a["data-bottom"]))
        level = {}
        for n in nodes:
            level[n["d"]] = level.get(n["d"], 0.0) + n["w"]
        maxd = 0
        while level.get(maxd + 1, 0.0) >= fit:
            maxd += 1
        want = top + (maxd + 1) * fh + bottom
        if int(a["height"]) != want:
            fail(f"{a['data-view']}: height {a['height']}, the deepest level at least {fit} px "
                 f"wide in all is at depth {maxd}: want {want}")
        thin = [d for d, w in level.items() if d > maxd and w >= fit]
        if thin:
            fail(f"{a['data-view']}: level {thin[0]} is {level[thin[0]]:.1f} px wide, above "
                 f"a narrower one")
        bad = [n for n in nodes if n["hidden"] != (n["d"] > maxd)]
        if bad:
            fail(f"{a['data-view']}: frame {bad[0]['lines'][0]} at depth {bad[0]['d']} is "
                 f"{'hidden' if bad[0]['hidden'] else 'shown'} with the height fitted to {maxd}")
        hidden = sum(n["hidden"] for n in nodes)
        note = re.search(r'<text class="details cut"[^>]*>([^<]*)</text>', body_of[id(nodes)])
        if not note or (note.group(1) != (f"{hidden} frames of thin, deeper stacks hidden: "
                                          "click a frame to zoom in" if hidden else "")):
            fail(f"{a['data-view']}: {hidden} frames hidden, the note says "
                 f"{note.group(1) if note else None!r}")
        print(f"ok: {a['data-view']}: height {want} for depth {maxd}, {len(nodes)} frames, "
              f"{hidden} hidden above it")


def value(lines, key):
    for line in lines:
        if line.startswith(key + ": "):
            return int(line.split()[1])
    fail(f"no '{key}:' in the tooltip {lines}")


def paths(nodes):
    """Each frame's names from the root, in document (preorder) order."""
    stack, out = [], []
    for n in nodes:
        del stack[n["d"]:]
        stack.append(n["lines"][0])
        out.append(tuple(stack))
    return out


def check_colour(n, delta):
    r, g, b = (int(v) for v in re.findall(r"\d+", n["fill"]))
    ok = (r == 255 and g == b < 255) if delta > 0 else \
        (b == 255 and r == g < 255) if delta < 0 else (r == g == b)
    if not ok:
        fail(f"frame {n['lines'][0]}: change {delta:+d} drawn {n['fill']}")


def check_diff(path):
    gs = graphs(path)
    if len(gs) % 2:
        fail(f"{path}: {len(gs)} graphs, not pairs of after and before")
    for i in range(0, len(gs), 2):
        (aa, after), (ba, before) = gs[i], gs[i + 1]
        if aa.get("data-diff") != "after" or ba.get("data-diff") != "before":
            fail(f"graph {i}: not an after graph then a before graph")
        sides = {}
        for name, nodes in (("after", after), ("before", before)):
            sides[name] = {}
            for p, n in zip(paths(nodes), nodes):
                a, b = value(n["lines"], "before"), value(n["lines"], "after")
                check_colour(n, b - a)
                sides[name][p] = (a, b)
        # a frame in both documents has the same values in both; a frame in one only is
        # narrower than the 0.1 px drawn in the other (or absent from that run)
        ta, tb = value(before[0]["lines"], "before"), value(after[0]["lines"], "after")
        for p, (a, b) in sides["after"].items():
            if p in sides["before"] and sides["before"][p] != (a, b):
                fail(f"{'/'.join(p)}: after graph says {a} -> {b}, before graph {sides['before'][p]}")
            if p not in sides["before"] and a * 1180 >= 0.1 * ta and ta:
                fail(f"{'/'.join(p)}: before {a} is wide enough to be in the before graph")
        for p, (a, b) in sides["before"].items():
            if p not in sides["after"] and b * 1180 >= 0.1 * tb and tb:
                fail(f"{'/'.join(p)}: after {b} is wide enough to be in the after graph")
        grew = sum(1 for a, b in sides["after"].values() if b > a)
        shrank = sum(1 for a, b in sides["before"].values() if b < a)
        print(f"ok: {aa['data-view']}: {len(after)} + {len(before)} frames agree, "
              f"{grew} grew, {shrank} shrank")


if len(sys.argv) != 3 or sys.argv[1] not in ("fit", "diff"):
    sys.exit(__doc__)
(check_fit if sys.argv[1] == "fit" else check_diff)(sys.argv[2])
