#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The locks view's row maps when they are full (src/views/locks/locks.bpf.c account(): a missing row
# is created holding its first contention, the totals are per CPU): with --max-callers 1 on the
# directory workload (several callers and locks contend), every contention is still either in the
# one row or counted as lost, the lost ones are said, and none is counted twice.
. "$(dirname "$0")/lib.sh"
require_bpf
DIRLOCK=${DIRLOCK:?DIRLOCK must name the dirlock workload}

mkdir -p "$TMP/dir"
"$SCHEDPROF" trace --views locks --max-callers 1 -f json -o "$TMP/full.json" -- \
	"$DIRLOCK" "$TMP/dir" 8 1 > "$TMP/dirlock.out" 2> "$TMP/err" || fail "schedprof exited $?"
[ "$(jget "$TMP/full.json" 'd["locks"]["available"]')" = True ] ||
	skip_or_fail "locks view unavailable: $(jget "$TMP/full.json" 'd["locks"].get("unavailable")')"
L='d["locks"]'
t=$(jget "$TMP/full.json" "$L['total']")
lost=$(jget "$TMP/full.json" "$L['lost']")
n=$(jget "$TMP/full.json" "len($L['contentions'])")
s=$(jget "$TMP/full.json" "sum(r['count'] + r['failed'] for r in $L['contentions'])")
[ "$t" -gt 50 ] || fail "only $t contentions on the directory lock, expected > 50"
[ "$n" = 1 ] || fail "$n rows with --max-callers 1, expected 1"
[ "$lost" -gt 0 ] || fail "no contention lost with --max-callers 1 (total $t, in the row $s)"
[ "$t" = $((s + lost)) ] || fail "total $t differs from the row's $s + lost $lost"
pass "map full: total $t = the row's $s + lost $lost"
# the sleeper and owner maps (one entry each) are full too: said, with the way out
grep -q 'raise --max-callers' "$TMP/err" || fail "no warning about the full maps: $(cat "$TMP/err")"
pass "full sleeper/owner maps said"
