#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# jobs-scaling: why does more make -j stop helping? Traces the bundled compile job
# (examples/compile-job) at several -j with `schedprof trace --timeline -f json` and prints,
# in the style of the timing studies, real/user/sys, the critical path, the serial time and
# the mean parallelism per -j; then the wall times `report --what-if` predicts from each trace
# on 1 to 16 CPUs beside the ones measured (1 CPU: an untraced run under taskset -c 0); then
# the top of each critical path (see README.md).
# usage: sudo examples/jobs-scaling/scaling.sh [-k DIR] [-n ROWS] [JOBS...]
#   -k DIR   keep the saved runs in DIR (j1.json, j2.json, ...), else a temporary dir
#   -n ROWS  rows of each critical path shown (default 8)
#   JOBS     the -j values (default: 1 2 4 and 2 x CPUs, each once)
# schedprof: $SCHEDPROF, else ./build/src/schedprof. CFLAGS: the compile flags (default -O2).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
job=$top/examples/compile-job
sp=${SCHEDPROF:-$top/build/src/schedprof}
cflags=${CFLAGS:--O2}
keep="" rows=8
usage() { echo "usage: $0 [-k DIR] [-n ROWS] [JOBS...]" >&2; exit 2; }
while getopts "k:n:h" o; do
	case $o in
	k) keep=$OPTARG ;; n) rows=$OPTARG ;; *) usage ;;
	esac
done
shift $((OPTIND - 1))
ncpus=$(nproc)
if [ $# -gt 0 ]; then
	jobs=("$@")
else
	jobs=(1 2 4 $((2 * ncpus)))
fi
for j in "${jobs[@]}"; do
	[[ $j =~ ^[1-9][0-9]*$ ]] || usage
done
[[ $rows =~ ^[1-9][0-9]*$ ]] || usage
# each -j once, ascending (on 2 CPUs, 2 x CPUs is -j4)
mapfile -t jobs < <(printf '%s\n' "${jobs[@]}" | sort -n -u)
[ -x "$sp" ] || { echo "$0: $sp not found: build it (meson setup build && ninja -C build) or set SCHEDPROF" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "$0: run it as root (sudo)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "$0: needs python3 to read the runs (scripts/setup.sh installs it)" >&2; exit 1; }

out=$(mktemp -d /tmp/schedprof-jobs.XXXXXX)
trap 'rm -rf "$out"' EXIT
if [ -n "$keep" ]; then
	mkdir -p "$keep"
	res=$(cd "$keep" && pwd)
else
	res=$out
fi
export OUT=$out/proj
# Under sudo, schedprof runs the command as the user who ran sudo: the build is theirs.
as_user=()
if [ -n "${SUDO_UID:-}" ]; then
	chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$out"
	as_user=(setpriv --reuid="$SUDO_UID" --regid="${SUDO_GID:-$SUDO_UID}" --init-groups)
fi
# Generate the project and build it once untraced, so that -j1 does not pay for a cold
# page cache that the later runs find warm.
"${as_user[@]}" make -s -C "$job" OUT="$OUT" CFLAGS="$cflags" >/dev/null

for j in "${jobs[@]}"; do
	"${as_user[@]}" make -s -C "$job" OUT="$OUT" clean
	echo "tracing make -j$j ..." >&2
	"$sp" trace --views schedules --timeline -f json -o "$res/j$j.json" -- \
		make -s -j"$j" -C "$job" OUT="$OUT" CFLAGS="$cflags"
	# the same -j on 1 CPU, untraced: what --what-if cpus=1 predicts from the trace
	"${as_user[@]}" make -s -C "$job" OUT="$OUT" clean
	echo "timing make -j$j on 1 CPU (taskset -c 0) ..." >&2
	a=$(date +%s%N)
	"${as_user[@]}" taskset -c 0 make -s -j"$j" -C "$job" OUT="$OUT" CFLAGS="$cflags"
	b=$(date +%s%N)
	echo $((b - a)) > "$res/j$j.cpu1"
	"$sp" report "$res/j$j.json" --what-if cpus=1,2,4,8,16 -f json -o "$res/j$j.whatif.json"
done

files=()
for j in "${jobs[@]}"; do
	files+=("$res/j$j.json")
done
python3 - "$rows" "$ncpus" "${files[@]}" <<'PY'
import json, sys

rows, ncpus = int(sys.argv[1]), int(sys.argv[2])
files = sys.argv[3:]

def t(ns):
    """A time as the tables print it: 3.42s, 18.1ms, 52us."""
    if ns is None:
        return "-"
    if ns >= 1e9:
        return "%.2fs" % (ns / 1e9)
    if ns >= 1e6:
        return "%.1fms" % (ns / 1e6)
    return "%.0fus" % (ns / 1e3)

def section(d, name):
    """A timeline section, under "timeline" or at the top level."""
    tl = d.get("timeline") or {}
    return tl.get(name) or d.get(name) or {}

def mean_parallelism(buckets):
    """Time-weighted mean of the running histogram [{running: n, ns}]."""
    total = sum(b["ns"] for b in buckets)
    if not total:
        return None
    n = lambda b: b.get("running", b.get("n", 0))
    return sum(n(b) * b["ns"] for b in buckets) / total

def what(r):
    """A ranked entry's state in words."""
    st = r.get("state")
    if st == "running":
        return "running alone" if r.get("alone") else "running"
    if st == "runnable":
        return "waiting for a CPU (%s)" % (r.get("caller") or "?")
    return "blocked in %s" % (r.get("caller") or "?")

runs = []
for f in files:
    with open(f) as fh:
        d = json.load(fh)
    j = f.rsplit("/j", 1)[1][:-5]
    cp = section(d, "critical_path")
    par = section(d, "parallelism")
    if not cp or not par:
        sys.exit("%s: no critical_path/parallelism: a schedprof without --timeline?" % f)
    tg = d.get("target") or {}
    runs.append(dict(j=int(j), real=d.get("elapsed_ns"), user=tg.get("user_ns"),
                     sys=tg.get("sys_ns"), cp=cp.get("total_ns"), ranked=cp.get("ranked") or [],
                     serial=par.get("serial_ns"), phases=par.get("serial_phases") or [],
                     mean=mean_parallelism(par.get("running") or []),
                     exit=tg.get("exit_status")))

base = next((r["real"] for r in runs if r["j"] == 1), None)
print("make -jN of the compile job (examples/compile-job), %d CPUs" % ncpus)
print("%4s %9s %9s %9s %9s %9s %9s %9s" % ("-j", "real", "user", "sys", "crit.path", "serial",
                                            "mean par", "speedup"))
for r in runs:
    print("%4d %9s %9s %9s %9s %9s %9s %9s" % (
        r["j"], t(r["real"]), t(r["user"]), t(r["sys"]), t(r["cp"]), t(r["serial"]),
        "-" if r["mean"] is None else "%.2f" % r["mean"],
        "%.2fx" % (base / r["real"]) if base and r["real"] else "-"))
for r in runs:
    if r["exit"]:
        print("note: make -j%d exited with status %d" % (r["j"], r["exit"]))

def err(p, m):
    return "%+.0f%%" % (100.0 * (p - m) / m) if p and m else "-"

print()
print("predicted by schedprof report --what-if from each trace, against measured real")
print("%4s %9s %9s %6s %9s %9s %6s %9s %9s %9s" % ("-j", "1cpu pred", "1cpu real", "err",
      "%dcpu pred" % ncpus if ncpus < 10 else "Ncpu pred", "real", "err", "4 CPUs", "8 CPUs",
      "16 CPUs"))
for r, f in zip(runs, files):
    base_f = f[:-5]
    with open(base_f + ".whatif.json") as fh:
        w = json.load(fh)["what_if"]
    with open(base_f + ".cpu1") as fh:
        m1 = int(fh.read())
    pred = {p["cpus"]: p["wall_ns"] for p in w["predictions"]}
    pn = pred.get(ncpus)
    print("%4d %9s %9s %6s %9s %9s %6s %9s %9s %9s" % (
        r["j"], t(pred.get(1)), t(m1), err(pred.get(1), m1), t(pn), t(r["real"]),
        err(pn, r["real"]), t(pred.get(4)), t(pred.get(8)), t(pred.get(16))))
for r in runs:
    cp = r["cp"] or 0
    print()
    print("make -j%d: critical path %s of %s real" % (r["j"], t(cp), t(r["real"])))
    print("  %6s %9s  %-16s %s" % ("SHARE", "TIME", "COMM", "STATE"))
    for e in r["ranked"][:rows]:
        print("  %5.1f%% %9s  %-16s %s" % (100.0 * e["ns"] / cp if cp else 0, t(e["ns"]),
                                          e.get("comm") or "?", what(e)))
    if len(r["ranked"]) > rows:
        print("  (%d more rows)" % (len(r["ranked"]) - rows))
    if r["phases"]:
        ph = sorted(r["phases"], key=lambda p: -p["ns"])
        print("  serial phases: " + ", ".join("%s %s" % (p.get("comm") or "?", t(p["ns"]))
                                            for p in ph[:5]) +
              (" (+%d more)" % (len(ph) - 5) if len(ph) > 5 else ""))
PY
[ -z "$keep" ] || echo "saved runs (schedprof report FILE renders one again): ${files[*]}"
