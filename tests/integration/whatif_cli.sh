#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# report --what-if, report --critical-path and diff --what-if on the fixture runs with a
# timeline (no root, no BPF): the table and JSON, their bounds, the refusals (exit 2, one
# line), and the critical path's folded stacks adding up to its total.
# Needs SCHEDPROF and FIXTURES (tests/fixtures); python3 reads the JSON outputs.
set -u
SCHEDPROF=${SCHEDPROF:?SCHEDPROF must name the built binary}
FIXTURES=${FIXTURES:?FIXTURES must name tests/fixtures}
TMP=$(mktemp -d /tmp/schedprof-whatif.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
TL=$FIXTURES/run_tl.json TLB=$FIXTURES/run_tl_b.json

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# run EXPECTED_STATUS CMD...: stdout in $TMP/out, stderr in $TMP/err
run() {
	local want=$1 rc
	shift
	"$@" > "$TMP/out" 2> "$TMP/err"
	rc=$?
	[ "$rc" = "$want" ] || fail "$* exited $rc, expected $want: $(head -3 "$TMP/err")"
}

run 0 "$SCHEDPROF" report "$TL" --what-if cpus=1,2,4 --what-if without=io
{ grep -q "^  1 " "$TMP/out" && grep -q "^without io: " "$TMP/out"; } || fail "no table: $(cat "$TMP/out")"
run 0 "$SCHEDPROF" report "$TL" --what-if cpus=4,1,2 -f json
python3 - "$TMP/out" <<'PY' || fail "the JSON's predictions break their bounds"
import json, sys
w = json.load(open(sys.argv[1]))["what_if"]
p = w["predictions"]
assert [x["cpus"] for x in p] == [1, 2, 4], p
for x in p:
    assert x["wall_ns"] >= x["bound_ns"] >= w["critical_path_ns"], x
    assert x["wall_ns"] >= w["work_ns"] // x["cpus"], x
assert w["without"] == []
PY
pass "report --what-if: table and JSON, within their bounds"

for bad in "cpus=0" "cpus=1,,2" "speed=2" "without=do_wait" "without=child" "without=nosuch"; do
	run 2 "$SCHEDPROF" report "$TL" --what-if "$bad"
	[ "$(wc -l < "$TMP/err")" = 2 ] || fail "--what-if $bad: not one line and the hint: $(cat "$TMP/err")"
done
run 2 "$SCHEDPROF" report "$FIXTURES/run_a.json" --what-if cpus=2
grep -q -- "--timeline" "$TMP/err" || fail "a run without a timeline: $(cat "$TMP/err")"
run 2 "$SCHEDPROF" report "$TL" --what-if cpus=2 -f folded
run 2 "$SCHEDPROF" report "$TL" --what-if cpus=2 --critical-path -f folded
pass "report --what-if refuses bad specs, waits for a child, runs without a timeline (exit 2)"

run 0 "$SCHEDPROF" report "$TL" --critical-path -f folded
total=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["timeline"]["critical_path"]["total_ns"])' "$TL")
sum=$(python3 -c 'import sys; print(sum(int(l.split()[-1]) for l in open(sys.argv[1])))' "$TMP/out")
[ "$sum" = "$total" ] || fail "the critical path's folded stacks add up to $sum, not $total"
grep -q "^ld;\[running\] " "$TMP/out" || fail "no ld;[running] line: $(cat "$TMP/out")"
run 0 "$SCHEDPROF" report "$TL" --critical-path -f pprof -o "$TMP/cp.pb.gz"
[ -s "$TMP/cp.pb.gz" ] || fail "no pprof of the critical path"
run 0 "$SCHEDPROF" report "$TL" --critical-path -f html -o "$TMP/cp.html"
grep -q "<svg" "$TMP/cp.html" || fail "no flame graph of the critical path"
run 2 "$SCHEDPROF" report "$TL" --critical-path -f json
run 2 "$SCHEDPROF" report "$FIXTURES/run_a.json" --critical-path -f folded
pass "report --critical-path: folded stacks that add up to the path, pprof, html"

run 0 "$SCHEDPROF" diff "$TL" "$TLB" --what-if cpus=1,2
grep -q "critical path" "$TMP/out" || fail "diff --what-if: $(cat "$TMP/out")"
run 0 "$SCHEDPROF" diff "$TL" "$TLB" --what-if cpus=1,2 -f json
python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))["what_if"]; assert d["a"]["predictions"][0]["cpus"] == 1 and d["b"]["critical_path_ns"] > d["a"]["critical_path_ns"]' "$TMP/out" ||
	fail "diff --what-if -f json"
run 2 "$SCHEDPROF" diff "$TL" "$TLB" --what-if without=do_wait
pass "diff --what-if: both runs' predictions side by side"
