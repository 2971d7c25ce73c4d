#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# `report` re-symbolizes saved runs: a run whose libc and C++ frames were saved
# unresolved ("libc.so.6+0x...", as a trace prints them while libc6-dbg is missing) renders
# with their names once the debug file is there: libc's internal _int_malloc (only in
# libc6-dbg's .symtab) in the profile table, the folded stacks and the JSON, the C++ frame
# demangled with its mangled name kept as system_name, and with --lines a file:line. Rows that
# became the same function merge. --no-resymbolize and an empty --debug-dir print them as
# saved. Needs SCHEDPROF, FIXTURES and CXXTARGET (tests/meson.build); nm, readelf, python3.
set -u
SCHEDPROF=${SCHEDPROF:?SCHEDPROF must name the built binary}
FIXTURES=${FIXTURES:?FIXTURES must name tests/fixtures}
CXXTARGET=${CXXTARGET:?CXXTARGET must name the C++ test binary}
TMP=$(mktemp -d /tmp/schedprof-resym.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
missing() {
	[ "${CI:-}" = true ] && fail "missing $1 (scripts/setup.sh --tests installs it)"
	echo "skipped: missing $1"
	exit 77
}

LIBC=
for f in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libc.so.6; do
	[ -r "$f" ] && { LIBC=$f; break; }
done
[ -n "$LIBC" ] || missing libc.so.6
for t in nm readelf python3; do command -v $t >/dev/null || missing $t; done
LIBC_ID=$(readelf -n "$LIBC" | awk '/Build ID/ {print $3}')
DBG=/usr/lib/debug/.build-id/${LIBC_ID:0:2}/${LIBC_ID:2}.debug
[ -r "$DBG" ] || missing libc6-dbg
CXX_ID=$(readelf -n "$CXXTARGET" | awk '/Build ID/ {print $3}')

# file offset of a symbol: its address through the PT_LOAD that holds it
offset_of() { # FILE_WITH_PHDRS SYMBOL_FILE SYMBOL
	local addr
	addr=$(nm "$2" | awk -v s="$3" '$3 == s {print $1; exit}')
	[ -n "$addr" ] || fail "no $3 in $2"
	readelf -lW "$1" | python3 -c '
import sys
a = int(sys.argv[1], 16)
for l in sys.stdin:
    f = l.split()
    if f and f[0] == "LOAD":
        off, va, sz = int(f[1], 16), int(f[2], 16), int(f[4], 16)
        if va <= a < va + sz:
            print("%x" % (a - va + off))
            break' "$addr"
}
MALLOC=$(offset_of "$LIBC" "$DBG" _int_malloc)
RUN=$(offset_of "$CXXTARGET" "$CXXTARGET" _ZN5sp_ns6WorkerIiE3runEi)
[ -n "$MALLOC" ] && [ -n "$RUN" ] || fail "no offsets ($MALLOC, $RUN)"

# The fixture run, with a profile row and stacks holding the unresolved frames. Its totals
# stay as they were: 10 of main_loop's samples move to two rows of the same function.
python3 - "$FIXTURES/run_full.json" "$TMP/run.json" "$LIBC" "$LIBC_ID" "$MALLOC" \
	"$CXXTARGET" "$CXX_ID" "$RUN" <<'PY' || fail "cannot build the run"
import json, sys
src, dst, libc, libc_id, malloc, cxx, cxx_id, run = sys.argv[1:]
malloc, run = int(malloc, 16), int(run, 16)
r = json.load(open(src))
p = r["profile"]
libc_name = "libc.so.6+0x%x" % malloc
cxx_name = "cxxtarget+0x%x" % run
def info(addr, bid):
    return {"addr": "0x%x" % addr, "build_id": bid}
stack = {"comm": "demo", "count": 4,
         "frames": [libc_name, cxx_name, "main"],
         "objects": [libc, cxx, "/usr/bin/demo"],
         "frame_info": [info(malloc + 0x10, libc_id), info(run + 1, cxx_id), {}]}
p["functions"][0]["samples"] -= 10
p["functions"][0]["comms"]["demo"]["samples"] -= 10
p["functions"][0]["stacks"][0]["count"] -= 10
p["functions"].append({"function": libc_name, "object": libc, "samples": 6,
                       "info": info(malloc, libc_id),
                       "comms": {"demo": {"samples": 6}},
                       "stacks": [dict(stack, count=6)]})
# the same function, seen at another address and named differently at trace time
p["functions"].append({"function": "libc.so.6+0x%x" % (malloc + 0x20), "object": libc,
                       "samples": 4, "info": info(malloc + 0x20, libc_id),
                       "comms": {"demo": {"samples": 4}},
                       "stacks": [dict(stack, count=4)]})
p["unsymbolized"] = 10
r["objects"].append({"path": libc, "build_id": libc_id})
row = r["schedules"]["callers"][0]
row["stacks"][0]["frames"] += [libc_name, "main"]
row["stacks"][0]["objects"] = ["[kernel]"] * 4 + [libc, "/usr/bin/demo"]
row["stacks"][0]["frame_info"] = [{}] * 4 + [info(malloc + 0x10, libc_id), {}]
json.dump(r, open(dst, "w"))
PY

"$SCHEDPROF" report "$TMP/run.json" --no-resymbolize >"$TMP/saved.txt" 2>"$TMP/err" ||
	fail "report --no-resymbolize: $(cat "$TMP/err")"
grep -q "libc.so.6+0x$MALLOC" "$TMP/saved.txt" || fail "--no-resymbolize renamed the frame"
grep -q "_int_malloc" "$TMP/saved.txt" && fail "--no-resymbolize: _int_malloc printed"
pass "--no-resymbolize prints the run as saved"

mkdir "$TMP/empty"
"$SCHEDPROF" report "$TMP/run.json" --debug-dir "$TMP/empty" >"$TMP/hidden.txt" 2>"$TMP/err" ||
	fail "report --debug-dir: $(cat "$TMP/err")"
grep -q "_int_malloc" "$TMP/hidden.txt" && fail "_int_malloc named without the debug file"
grep -q "libc.so.6+0x$MALLOC" "$TMP/hidden.txt" || fail "the unresolved row is gone"
pass "an empty debug directory: libc's internal function stays unresolved"

"$SCHEDPROF" report "$TMP/run.json" --views profile >"$TMP/table.txt" 2>"$TMP/err" ||
	fail "report: $(cat "$TMP/err")"
grep -E "^ *10 .*_int_malloc" "$TMP/table.txt" >/dev/null ||
	{ cat "$TMP/table.txt"; fail "no _int_malloc row of 10 samples (two rows merged)"; }
grep -q "libc.so.6+0x" "$TMP/table.txt" && fail "an unresolved libc frame is left"
pass "report names _int_malloc from libc6-dbg, one row for both addresses"

"$SCHEDPROF" report "$TMP/run.json" -f folded --views profile >"$TMP/folded" 2>"$TMP/err" ||
	fail "report -f folded: $(cat "$TMP/err")"
grep -q "main;sp_ns::Worker<int>::run(int);_int_malloc" "$TMP/folded" ||
	{ cat "$TMP/folded"; fail "folded stacks lack the renamed frames"; }
pass "folded stacks: the C++ frame demangled, libc's named"

"$SCHEDPROF" report "$TMP/run.json" -f json --lines -o "$TMP/out.json" 2>"$TMP/err" ||
	fail "report -f json --lines: $(cat "$TMP/err")"
python3 - "$TMP/out.json" <<'PY' || fail "the JSON of the re-symbolized run"
import json, sys
r = json.load(open(sys.argv[1]))
rows = [f for f in r["profile"]["functions"] if f["function"] == "_int_malloc"]
assert len(rows) == 1 and rows[0]["samples"] == 10, rows
assert r["profile"]["unsymbolized"] == 0, r["profile"]["unsymbolized"]
st = rows[0]["stacks"]
assert len(st) == 1 and st[0]["count"] == 10, st
fi = st[0]["frame_info"]
assert st[0]["frames"][1] == "sp_ns::Worker<int>::run(int)", st[0]["frames"]
assert fi[1]["system_name"] == "_ZN5sp_ns6WorkerIiE3runEi", fi[1]
assert fi[0]["file"].endswith("malloc.c") and fi[0]["line"] > 0, fi[0]
sched = r["schedules"]["callers"][0]["stacks"][0]
assert sched["frames"][4] == "_int_malloc", sched["frames"]
PY
pass "JSON: merged row and stacks, system_name, file:line with --lines, schedules stacks too"
