#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# --lines with real BPF and real DWARF: inlspin (-O2 -g, frame pointers) spends its
# time in inl_spin_inner(), an always_inline function the compiler inlines into
# inl_spin_outer(), half of it in its own loop and half in inl_spin_leaf() that it calls.
# With `trace --views profile -g --lines` the samples' stacks hold the inlined function as a
# frame of its own (marked inlined, at the loop's line or the line of its call of the leaf),
# then its caller at the line of the call, then main; the table prints " (file:line)" and
# marks it; the pprof has both functions as Lines of one Location. `report --lines` on a run
# traced without --lines inserts the inlined call too, under inl_spin_leaf (a leaf, kept as
# its function's start, gets none: the loop's own samples show inl_spin_outer alone).
. "$(dirname "$0")/lib.sh"
INLSPIN=${INLSPIN:?INLSPIN must name the built tests/inlspin}
SRC=${INLSPIN_SRC:?INLSPIN_SRC must name tests/workloads/inlspin.c}
require_bpf
for t in readelf python3; do command -v $t >/dev/null || skip_or_fail "$t is needed"; done

# the premise: the compiler really inlined it (else this test would test nothing)
readelf --debug-dump=info "$INLSPIN" 2>/dev/null | grep -q DW_TAG_inlined_subroutine ||
	fail "$INLSPIN has no DW_TAG_inlined_subroutine"
inner=$(grep -n 'LINE:inner' "$SRC" | cut -d: -f1)
# the line of inl_spin_inner's loop, or of its body
inl_re="inlspin\.c:($((inner - 1))|$inner)"
call=$(grep -n 'LINE:call' "$SRC" | cut -d: -f1)
leafcall=$(grep -n 'LINE:leafcall' "$SRC" | cut -d: -f1)
[ -n "$inner" ] && [ -n "$call" ] && [ -n "$leafcall" ] || fail "no LINE: markers in $SRC"
bin=$(readlink -f "$INLSPIN")

# 1. JSON: the stacks of the job's samples go [inl_spin_leaf ->] inl_spin_inner [inlined]
#    -> inl_spin_outer (the call's line) -> main, at one address, with the workload's build-id
"$SCHEDPROF" trace --views profile -g --lines -F 499 -f json -o "$TMP/l.json" -- "$INLSPIN" 600 \
	>/dev/null 2>"$TMP/l.err" || fail "schedprof exited $?: $(cat "$TMP/l.err")"
check_stacks() { # JSON WHAT(trace|report)
	python3 - "$1" "$bin" "$inner" "$call" "$leafcall" "$2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["profile"]
binary, what = sys.argv[2], sys.argv[6]
inner, call, leafcall = (int(x) for x in sys.argv[3:6])
total = inl = leaf = 0
for f in p["functions"]:
    for s in f["stacks"]:
        if s["comm"] != "inlspin":
            continue
        total += s["count"]
        fr, ob, fi = s["frames"], s["objects"], s.get("frame_info")
        assert fi and len(fi) == len(fr) == len(ob), s
        if "inl_spin_inner" not in fr:
            continue
        i = fr.index("inl_spin_inner")
        a, b = fi[i], fi[i + 1]
        assert a.get("inlined") is True and not b.get("inlined"), (a, b)
        assert fr[i + 1] == "inl_spin_outer" and ob[i] == ob[i + 1] == binary, (fr, ob)
        assert a["addr"] == b["addr"] and a["build_id"] == b["build_id"], (a, b)
        assert a["file"].endswith("inlspin.c") and b["file"].endswith("inlspin.c"), (a, b)
        assert b["line"] == call, b
        if i > 0 and fr[i - 1] == "inl_spin_leaf":
            assert a["line"] == leafcall, a  # a return address: the call's line, exactly
            leaf += s["count"]
        else:
            # its loop: the body's line or the loop's own (a leaf's line is its first sample's)
            assert a["line"] in (inner - 1, inner), a
            assert i == 0 or ob[i - 1] == "[kernel]", fr
            inl += s["count"]
        assert fr[i + 2] == "main" and fi[i + 2]["line"] > 0, (fr, fi[i + 2])
        # only the frame before an inlined one may be inlined
        assert not any(x.get("inlined") for x in fi[:i]), fi
rows = {f["function"]: f["samples"] for f in p["functions"] if f["object"] == binary}
# about half and half: each at least a fifth of the job's samples
assert total and leaf * 5 >= total, ("under inl_spin_leaf", leaf, total)
if what == "trace":
    assert inl * 5 >= total and (inl + leaf) * 10 >= total * 9, (inl, leaf, total)
    assert rows.get("inl_spin_inner", 0) * 5 >= total, rows
else:
    # report --lines: a leaf is kept as its function's start, it gets no inlined call
    assert "inl_spin_inner" not in rows and rows.get("inl_spin_outer", 0) * 5 >= total, rows
print(inl, leaf, total)
PY
}
out=$(check_stacks "$TMP/l.json" trace) || fail "trace --lines: no inlined frame with its lines"
pass "trace --lines JSON: inl_spin_inner [inlined] -> inl_spin_outer :$call -> main (samples in its loop, in the leaf, all: $out)"

# 2. the table (every row: the leaf and the inlined loop share the samples about evenly, either
#    may rank first): " (file:line)" after the object, "[inlined]" on the inlined frame
"$SCHEDPROF" report "$TMP/l.json" --views profile --stacks --lines -n 0 >"$TMP/l.txt" 2>&1 ||
	fail "report: $(cat "$TMP/l.txt")"
grep -Eq "^ +inl_spin_inner \[inlined\] $bin \(.*$inl_re\)$" "$TMP/l.txt" ||
	fail "the table has no inlined inl_spin_inner with its line: $(cat "$TMP/l.txt")"
grep -Eq "^ +inl_spin_outer $bin \(.*inlspin\.c:$call\)$" "$TMP/l.txt" ||
	fail "the table has no inl_spin_outer with the call's line: $(cat "$TMP/l.txt")"
"$SCHEDPROF" trace --views profile -g --lines --stacks -n 0 -F 499 -- "$INLSPIN" 300 >"$TMP/t.txt" 2>&1 ||
	fail "trace table: $(tail -3 "$TMP/t.txt")"
grep -Eq "^ +inl_spin_inner \[inlined\] $bin \(.*$inl_re\)$" "$TMP/t.txt" ||
	fail "trace's table has no inlined frame with its line: $(cat "$TMP/t.txt")"
pass "table: inlined frame marked, file:line printed ($(grep -m1 -E '^ +inl_spin_inner' "$TMP/t.txt" | sed 's/^ *//'))"

# 3. pprof: one Location holds both functions, innermost first (go tool pprof -raw)
if command -v go >/dev/null; then
	"$SCHEDPROF" report "$TMP/l.json" --lines -f pprof -o "$TMP/l.pb.gz" 2>"$TMP/p.err" ||
		fail "report -f pprof: $(cat "$TMP/p.err")"
	(cd "$TMP" && go tool pprof -raw "$TMP/l.pb.gz" >"$TMP/raw.txt" 2>"$TMP/raw.err") ||
		fail "go tool pprof -raw: $(cat "$TMP/raw.err")"
	grep -A1 -E "^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ inl_spin_inner .*$inl_re " "$TMP/raw.txt" |
		grep -Eq "^ +inl_spin_outer .*inlspin\.c:$call " ||
		fail "no pprof location with inl_spin_inner then inl_spin_outer: $(sed -n '/^Locations/,/^Mappings/p' "$TMP/raw.txt" | head -20)"
	pass "pprof: one location, inl_spin_inner and inl_spin_outer :$call"
else
	skip_or_fail "go (golang-go) is needed for go tool pprof"
fi

# 4. report --lines on a run traced without --lines: the inlined call is inserted (and the
#    run without --lines has none)
"$SCHEDPROF" trace --views profile -g -F 499 -f json -o "$TMP/n.json" -- "$INLSPIN" 1500 \
	>/dev/null 2>"$TMP/n.err" || fail "schedprof exited $?: $(cat "$TMP/n.err")"
grep -q inl_spin_inner "$TMP/n.json" && fail "traced without --lines, the run has inlined frames"
"$SCHEDPROF" report "$TMP/n.json" --lines -f json -o "$TMP/nl.json" 2>"$TMP/nl.err" ||
	fail "report --lines: $(cat "$TMP/nl.err")"
out=$(check_stacks "$TMP/nl.json" report) || fail "report --lines inserted no inlined frame"
pass "report --lines: inl_spin_inner :$leafcall inserted before inl_spin_outer (samples: $out)"
