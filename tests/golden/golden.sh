#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Golden outputs: every format of `report` and `diff` on the fixture runs, compared byte for
# byte with tests/golden/expected/ (recorded by an earlier build on purpose, so a
# refactoring that changes any output fails here).
#   golden.sh            compare (SCHEDPROF, FIXTURES from the environment)
#   golden.sh --record   write the expected files again (after an intended output change)
set -u
SCHEDPROF=${SCHEDPROF:?SCHEDPROF must name the built binary}
FIXTURES=${FIXTURES:?FIXTURES must name tests/fixtures}
EXPECTED=$(cd "$(dirname "$0")" && pwd)/expected
OUT=$(mktemp -d /tmp/schedprof-golden.XXXXXX)
SCHEDPROF=$(realpath "$SCHEDPROF")
cd "$FIXTURES" || exit 1
FIXTURES=. # diff prints the paths it was given: keep them the same wherever this runs
trap 'rm -rf "$OUT"' EXIT

# case NAME CMD...: the command's stdout (or -o file) and exit status, in $OUT/NAME
case_() {
	local name=$1 rc
	shift
	"$@" >"$OUT/$name" 2>"$OUT/$name.err"
	rc=$?
	echo "exit $rc" >>"$OUT/$name.err"
}

R() { case_ "$1" "$SCHEDPROF" report "${@:2}"; }
O() { # binary formats go to a file
	local name=$1
	shift
	"$SCHEDPROF" report "$@" -o "$OUT/$name" 2>"$OUT/$name.err"
	echo "exit $?" >>"$OUT/$name.err"
}

# run_tl, run_tl_b: the time dimension's fields (run-queue split, wakers, budget, timeline)
# run_user: frame identities (user frames, build-ids, addresses, inlined frames)
for run in run_a run_b run_full run_min run_tl run_tl_b run_user; do
	f=$FIXTURES/$run.json
	R "$run.table" "$f"
	R "$run.table-n0-stacks" -n 0 --stacks --stack-rows 10 "$f"
	R "$run.table-bycomm" --by comm --stacks "$f"
	R "$run.table-locks" --views locks --sort count --lock-stacks -n 0 "$f"
	R "$run.table-locks-max" --views locks --sort max "$f"
	R "$run.json" -f json "$f"
	for v in schedules profile locks; do
		R "$run.folded-$v" -f folded --views "$v" "$f"
		R "$run.folded-$v-time" -f folded --views "$v" --value time "$f"
		O "$run.pprof-$v" -f pprof --views "$v" "$f"
		O "$run.svg-$v" -f svg --views "$v" "$f"
	done
	R "$run.folded" -f folded "$f"
	O "$run.svg-time" -f svg --value time "$f"
	O "$run.html" -f html "$f"
	O "$run.html-time" -f html --value time "$f"
done
# --lines: source positions and inlined frames under the rows
f=$FIXTURES/run_user.json
R run_user.table-lines --stacks --lines "$f"
R run_full.table-lines --stacks --lines "$FIXTURES/run_full.json"
# the timeline alone: a table, and stack formats with no stacks to draw
f=$FIXTURES/run_tl.json
R run_tl.table-timeline --views timeline "$f"
R run_tl.table-timeline-n2 --views timeline -n 2 "$f"
R run_tl.json-schedules --views schedules -f json "$f"
R run_tl.folded-timeline -f folded --views timeline "$f"
O run_tl.pprof-timeline -f pprof --views timeline "$f"
O run_tl.svg-timeline -f svg --views timeline "$f"
O run_tl.html-timeline -f html --views timeline "$f"
D() { case_ "$1" "$SCHEDPROF" diff "${@:2}"; }
D diff-ab "$FIXTURES/run_a.json" "$FIXTURES/run_b.json"
D diff-ab-time --value time "$FIXTURES/run_a.json" "$FIXTURES/run_b.json"
D diff-ab-n3 -n 3 "$FIXTURES/run_a.json" "$FIXTURES/run_b.json"
D diff-ab-json -f json "$FIXTURES/run_a.json" "$FIXTURES/run_b.json"
D diff-full-full "$FIXTURES/run_full.json" "$FIXTURES/run_full.json"
D diff-a-full "$FIXTURES/run_a.json" "$FIXTURES/run_full.json"
D diff-a-full-json -f json "$FIXTURES/run_a.json" "$FIXTURES/run_full.json"
D diff-min-full-locks --views locks "$FIXTURES/run_min.json" "$FIXTURES/run_full.json"
D diff-tl "$FIXTURES/run_tl.json" "$FIXTURES/run_tl_b.json"
D diff-tl-time --value time "$FIXTURES/run_tl.json" "$FIXTURES/run_tl_b.json"
D diff-tl-n2 -n 2 "$FIXTURES/run_tl.json" "$FIXTURES/run_tl_b.json"
D diff-tl-json -f json "$FIXTURES/run_tl.json" "$FIXTURES/run_tl_b.json"
D diff-tl-timeline --views timeline "$FIXTURES/run_tl.json" "$FIXTURES/run_tl_b.json"
D diff-tl-schedules-json --views schedules -f json "$FIXTURES/run_tl.json" "$FIXTURES/run_tl_b.json"
D diff-a-tl "$FIXTURES/run_a.json" "$FIXTURES/run_tl.json"
D diff-tl-a-json -f json "$FIXTURES/run_tl.json" "$FIXTURES/run_a.json"
D diff-full-min-profile-time --views profile --value time "$FIXTURES/run_full.json" "$FIXTURES/run_min.json"
# differential flame graphs; a deep stack too thin to set the height (run_deep)
D diff-ab-html -f html "$FIXTURES/run_a.json" "$FIXTURES/run_b.json"
D diff-full-min-html-time -f html --value time "$FIXTURES/run_full.json" "$FIXTURES/run_min.json"
D diff-full-deep-html -f html --views profile "$FIXTURES/run_full.json" "$FIXTURES/run_deep.json"
O run_deep.svg-profile -f svg --views profile "$FIXTURES/run_deep.json"

if [ "${1:-}" = --record ]; then
	rm -rf "$EXPECTED"
	mkdir -p "$EXPECTED"
	cp "$OUT"/* "$EXPECTED"/
	echo "recorded $(ls "$EXPECTED" | wc -l) files in $EXPECTED"
	exit 0
fi
bad=0 n=0
for e in "$EXPECTED"/*; do
	n=$((n + 1))
	name=$(basename "$e")
	if ! cmp -s "$e" "$OUT/$name"; then
		echo "FAIL: $name differs from the golden output"
		diff <(cat -v "$e") <(cat -v "$OUT/$name" 2>/dev/null) | head -20
		bad=$((bad + 1))
	fi
done
for o in "$OUT"/*; do
	[ -e "$EXPECTED/$(basename "$o")" ] || { echo "FAIL: $(basename "$o") has no golden output"; bad=$((bad + 1)); }
done
[ "$bad" = 0 ] || { echo "$bad of $n golden outputs differ"; exit 1; }
echo "ok: $n golden outputs unchanged"
