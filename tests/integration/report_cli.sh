#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# `schedprof report` and `schedprof diff` on the fixture runs (no root, no BPF): formats,
# standard input, errors (one line, exit 1), usage errors (exit 2), the refusal to write
# binary formats to a terminal, and the diff of two runs and of a run with itself.
# Needs SCHEDPROF and FIXTURES (tests/fixtures); python3 reads the JSON outputs.
set -u
SCHEDPROF=${SCHEDPROF:?SCHEDPROF must name the built binary}
FIXTURES=${FIXTURES:?FIXTURES must name tests/fixtures}
TMP=$(mktemp -d /tmp/schedprof-report.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
A=$FIXTURES/run_a.json B=$FIXTURES/run_b.json FULL=$FIXTURES/run_full.json

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# run EXPECTED_STATUS CMD...: stdout in $TMP/out, stderr in $TMP/err
run() {
	local want=$1 rc
	shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" = "$want" ] || fail "$* exited $rc, expected $want; stderr: $(cat "$TMP/err")"
}

# sum of the values of folded stacks
folded_sum() { awk '{ s += $NF } END { printf "%.0f\n", s }' "$1"; }

# ---- report ----
run 0 "$SCHEDPROF" report "$A"
grep -q '^     36099   90.2%     7.900s     12.1ms  pipe          anon_pipe_read$' "$TMP/out" ||
	fail "report table has no anon_pipe_read row: $(cat "$TMP/out")"
grep -q '^command: make -s -j2 CFLAGS=-O2 (exit 0)$' "$TMP/out" || fail "report header"
[ ! -s "$TMP/err" ] || fail "report wrote to stderr: $(cat "$TMP/err")"
cp "$TMP/out" "$TMP/table.txt"
run 0 "$SCHEDPROF" report - < "$A"
cmp -s "$TMP/out" "$TMP/table.txt" || fail "report from standard input differs"
pass "report renders the table, from a file and from standard input"

run 0 "$SCHEDPROF" report -f json "$A"
cmp -s "$TMP/out" "$A" || fail "report -f json does not give the saved run back byte for byte"
pass "report -f json writes the saved run back unchanged"

run 0 "$SCHEDPROF" report --stacks --stack-rows 1 -n 2 "$A"
grep -q 'stack #1: 19990' "$TMP/out" || fail "--stacks shows no stack"
grep -q '(2 more rows: -n 0 shows all)' "$TMP/out" || fail "-n 2 does not cut the table"
run 0 "$SCHEDPROF" report --by comm "$A"
grep -q '^cc1: 18000 schedules' "$TMP/out" || fail "--by comm has no cc1 group: $(cat "$TMP/out")"
pass "report --stacks, -n, --by comm"

run 0 "$SCHEDPROF" report -f folded "$A"
[ "$(folded_sum "$TMP/out")" = 40000 ] || fail "folded total $(folded_sum "$TMP/out") != 40000"
run 0 "$SCHEDPROF" report -f folded --value time "$A"
[ "$(folded_sum "$TMP/out")" = 9202000000 ] || fail "folded time total is $(folded_sum "$TMP/out")"
run 0 "$SCHEDPROF" report -f folded --views profile "$FULL"
[ "$(folded_sum "$TMP/out")" = 850 ] || fail "profile folded total $(folded_sum "$TMP/out") != 850"
pass "report -f folded: totals equal the views' totals (count and time)"

run 0 "$SCHEDPROF" report -f pprof -o "$TMP/a.pb.gz" "$A"
[ "$(head -c 2 "$TMP/a.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "pprof is not gzip"
run 0 "$SCHEDPROF" report -f html -o "$TMP/a.html" "$A"
grep -q '<!DOCTYPE html>' "$TMP/a.html" || fail "html output"
run 0 "$SCHEDPROF" report -f svg -o "$TMP/a.svg" "$A"
grep -q '<svg class="flame" xmlns="http://www.w3.org/2000/svg"' "$TMP/a.svg" || fail "svg output"
if command -v xmllint >/dev/null; then
	xmllint --noout "$TMP/a.svg" || fail "the SVG is not well-formed XML"
fi
pass "report -f pprof/html/svg -o FILE"

# binary and page formats are refused on a terminal (script(1) gives us one)
if command -v script >/dev/null; then
	for f in pprof svg html; do
		script -qec "$SCHEDPROF report -f $f $A" /dev/null >"$TMP/tty" 2>&1
		rc=$?
		[ "$rc" = 2 ] || fail "report -f $f on a terminal exited $rc, expected 2"
		grep -q 'not for a terminal: write it with -o FILE' "$TMP/tty" ||
			fail "no message: $(cat "$TMP/tty")"
	done
	script -qec "$SCHEDPROF trace -f pprof -- true" /dev/null >"$TMP/tty" 2>&1
	rc=$?
	[ "$rc" = 2 ] || fail "trace -f pprof on a terminal exited $rc, expected 2"
	pass "pprof, svg and html are refused on a terminal (exit 2)"
elif [ "${CI:-}" = true ]; then
	fail "script(1) is missing (util-linux)"
fi

# ---- errors: one line, exit 1 ----
for f in "$FIXTURES"/bad_*.json "$FIXTURES/no_such_file.json" "$FIXTURES"; do
	run 1 "$SCHEDPROF" report "$f"
	[ "$(wc -l < "$TMP/err")" = 1 ] || fail "report $f: not one line of error: $(cat "$TMP/err")"
	grep -q "^schedprof report: $f: " "$TMP/err" || fail "report $f: error does not name the file"
	[ ! -s "$TMP/out" ] || fail "report $f wrote to stdout"
	run 1 "$SCHEDPROF" diff "$A" "$f"
	[ "$(wc -l < "$TMP/err")" = 1 ] || fail "diff $f: not one line of error: $(cat "$TMP/err")"
done
grep -q 'schedules.callers\[0\].stacks\[0\].objects: has 1 entries for 3 frames' \
	<("$SCHEDPROF" report "$FIXTURES/bad_objects.json" 2>&1) || fail "key path missing from the error"
head -c 1000 "$A" | "$SCHEDPROF" report - 2>"$TMP/err" >/dev/null
[ $? = 1 ] && grep -q 'found end of input' "$TMP/err" || fail "truncated input: $(cat "$TMP/err")"
pass "malformed, truncated, wrong-schema and missing runs: one error line, exit 1"

run 2 "$SCHEDPROF" report
run 2 "$SCHEDPROF" report "$A" "$B"
run 2 "$SCHEDPROF" report -f bogus "$A"
run 2 "$SCHEDPROF" report --value bogus "$A"
run 2 "$SCHEDPROF" report --views bogus "$A"
run 2 "$SCHEDPROF" diff "$A"
run 2 "$SCHEDPROF" diff -f folded "$A" "$B"
run 0 "$SCHEDPROF" report --help
grep -q 'Usage: schedprof report' "$TMP/out" || fail "report --help"
pass "usage errors exit 2"

# ---- option letters: -V/--version in every command, -v/-vv verbose, views with --views ----
for cmd in "" trace report diff; do
	for opt in -V --version; do
		run 0 "$SCHEDPROF" $cmd $opt
		grep -qx 'schedprof [0-9][0-9.]*' "$TMP/out" || fail "schedprof $cmd $opt: $(cat "$TMP/out")"
	done
done
for cmd in trace report diff; do
	run 0 "$SCHEDPROF" $cmd --help
	grep -q -- '^      --views LIST' "$TMP/out" || fail "$cmd --help has no --views line"
	grep -q -- '^  -v, --verbose' "$TMP/out" || fail "$cmd --help has no -v, --verbose line"
	grep -q -- '^  -V, --version' "$TMP/out" || fail "$cmd --help has no -V, --version line"
done
pass "-V and --version print the version in every command; --help names --views, -v, -V"

run 0 "$SCHEDPROF" report -v "$A"
cmp -s "$TMP/out" "$TMP/table.txt" || fail "report -v changed the report"
grep -q "^schedprof report: $A: read in " "$TMP/err" || fail "report -v says nothing: $(cat "$TMP/err")"
run 0 "$SCHEDPROF" report --verbose -v "$A"
cmp -s "$TMP/out" "$TMP/table.txt" || fail "report -vv changed the report"
run 0 "$SCHEDPROF" diff -vv "$A" "$B"
grep -q "^schedprof diff: $B: read in " "$TMP/err" || fail "diff -vv says nothing: $(cat "$TMP/err")"
run 0 "$SCHEDPROF" report --views profile -f folded "$FULL"
[ "$(folded_sum "$TMP/out")" = 850 ] || fail "--views profile: folded total $(folded_sum "$TMP/out")"
pass "-v, -vv and --verbose are verbose (stderr only); --views selects views"

# the old `-v VIEWS`: one clear line naming --views, then the hint; exit 2
for args in "report -v schedules $A" "report -v profile,locks $A" "diff -v locks $A $B" \
	    "trace -v schedules -- true" "trace -v profile -a"; do
	run 2 "$SCHEDPROF" $args
	[ "$(wc -l < "$TMP/err")" = 2 ] || fail "$args: not two lines: $(cat "$TMP/err")"
	grep -q "is a view list: choose views with --views .* (-v means --verbose)$" "$TMP/err" ||
		fail "$args: $(head -1 "$TMP/err")"
	grep -qx "Try 'schedprof ${args%% *} --help'." "$TMP/err" || fail "$args: no hint"
done
run 2 "$SCHEDPROF" report --views bogus "$A"
grep -q "^schedprof report: bad view list 'bogus'" "$TMP/err" || fail "--views bogus: $(cat "$TMP/err")"
run 2 "$SCHEDPROF"
[ "$(wc -l < "$TMP/err")" = 2 ] && grep -qx "Try 'schedprof --help'." "$TMP/err" ||
	fail "schedprof alone: $(cat "$TMP/err")"
pass "the old -v VIEWS is a usage error naming --views; usage errors are one line + hint"

# ---- diff ----
run 0 "$SCHEDPROF" diff "$A" "$B"
grep -q '^schedules              40000 -> 3329 (-91.7%)$' "$TMP/out" || fail "diff totals: $(cat "$TMP/out")"
grep -q '^elapsed                9.100s -> 4.200s (-53.8%)$' "$TMP/out" || fail "diff elapsed"
grep -Eq '^ +36099 +12 +-36087 +-90.2%  anon_pipe_read \(pipe\)$' "$TMP/out" || fail "diff row"
grep -q 'pipe_write (pipe)  \[only in B\]$' "$TMP/out" || fail "row only in B is missing"
grep -q 'ext4_buffered_write_iter (rwsem-write)  \[only in A\]$' "$TMP/out" || fail "row only in A"
pass "diff A B: totals, ranked deltas, rows on one side only"

run 0 "$SCHEDPROF" diff "$A" "$A"
awk '/^ +[0-9-]+ +[0-9-]+ +[-+0-9]+ /{ if ($3 != "0") bad = 1; n++ } END { exit !(n > 0 && !bad) }' \
	"$TMP/out" || fail "diff of a run with itself has a non-zero delta: $(cat "$TMP/out")"
run 0 "$SCHEDPROF" diff -f json "$FULL" "$FULL"
python3 - "$TMP/out" <<'PY' || fail "diff -f json of a run with itself is not all zeros"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "schedprof-diff/1"
assert len(d["views"]) == 4, d["views"]
for v in d["views"]:
    assert v["total"]["delta"] == 0
    for r in v["rows"]:
        assert r["a"] == r["b"] and r["delta"] == 0, r
PY
run 0 "$SCHEDPROF" diff -f json --value time -o "$TMP/d.json" "$A" "$B"
python3 - "$TMP/d.json" <<'PY' || fail "diff -f json --value time"
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["views"][0]["rows"]
assert rows[0]["name"] == "anon_pipe_read" and rows[0]["a"] == 7900000000 and rows[0]["b"] == 1000000
assert d["summary"]["elapsed_ns"]["delta"] == -4900000000
PY
pass "diff of a run with itself is all zeros; diff -f json"
jget() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
# a timeline that lost events: its derived figures say they come from incomplete data, in the
# table, the JSON (read back too) and the timeline page; without losses they do not
TL=$FIXTURES/run_tl.json
python3 - "$TL" "$TMP/tl_lost.json" <<'PY' || fail "cannot write the lossy timeline"
import json, sys
d = json.load(open(sys.argv[1]))
d["timeline"]["lost"] = 17
json.dump(d, open(sys.argv[2], "w"))
PY
run 0 "$SCHEDPROF" report --views timeline "$TMP/tl_lost.json"
cp "$TMP/out" "$TMP/tl_lost.txt"
for what in "critical path" parallelism "serial phases"; do
	grep -Eq "^$what \((.*; )?from incomplete data: events lost\):" "$TMP/tl_lost.txt" ||
		fail "the table's $what does not say it comes from incomplete data"
done
run 0 "$SCHEDPROF" report --views timeline "$TL"
cp "$TMP/out" "$TMP/tl.txt"
! grep -q "incomplete" "$TMP/tl.txt" || fail "a timeline without losses is called incomplete"
run 0 "$SCHEDPROF" report -f json -o "$TMP/tl_lost_out.json" "$TMP/tl_lost.json"
[ "$(jget "$TMP/tl_lost_out.json" '(d["timeline"]["critical_path"].get("incomplete"), d["timeline"]["parallelism"].get("incomplete"))')" = "(True, True)" ] ||
	fail "the JSON's critical_path and parallelism do not say incomplete"
run 0 "$SCHEDPROF" report -f json -o "$TMP/tl_out.json" "$TL"
[ "$(jget "$TMP/tl_out.json" '"incomplete" in d["timeline"]["critical_path"]')" = False ] ||
	fail "the JSON says incomplete without losses"
run 0 "$SCHEDPROF" report --views timeline "$TMP/tl_lost_out.json"
run 0 "$SCHEDPROF" report -f timeline -o "$TMP/tl_lost.html" "$TMP/tl_lost.json"
[ "$(grep -c 'From incomplete data: 17 events were lost' "$TMP/tl_lost.html")" = 3 ] &&
	grep -q 'critical path (from incomplete data)' "$TMP/tl_lost.html" ||
	fail "the timeline page does not mark its derived figures"
pass "lost timeline events: critical path, parallelism, serial phases marked (table, JSON, page)"
echo "PASS: report and diff"
