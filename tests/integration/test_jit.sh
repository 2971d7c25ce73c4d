#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# JIT code named through /tmp/perf-PID.map: jitspin runs a loop from anonymous
# executable memory that its perf map names; the profile shows that name, in the map file,
# for most of the job's samples, both while tracing and after the process exited.
. "$(dirname "$0")/lib.sh"
JITSPIN=${JITSPIN:?JITSPIN must name the built tests/jitspin}
require_bpf
[ "$(uname -m)" = x86_64 ] || skip_or_fail "jitspin's code is x86-64"

"$SCHEDPROF" trace --views profile -f json -o "$TMP/jit.json" -- "$JITSPIN" 1 >"$TMP/jit.out"
rc=$?
map=$(cat "$TMP/jit.out")
case "$map" in /tmp/perf-*.map) trap 'rm -f "$map"; rm -rf "$TMP"' EXIT ;; esac
[ "$rc" = 0 ] || fail "schedprof exited $rc"
read -r n tgt obj <<<"$(jget "$TMP/jit.json" '" ".join(str(x) for x in ([(f["samples"], d["profile"]["target"], f["object"]) for f in d["profile"]["functions"] if f["function"] == "JIT:sp_jit_hot_loop"] or [(0, d["profile"]["target"], "-")])[0])')"
[ "$n" -gt 0 ] || fail "JIT:sp_jit_hot_loop is not in the profile (target samples: $tgt)"
[ "$obj" = "$map" ] || fail "JIT frame in $obj, expected $map"
[ $((2 * n)) -gt "$tgt" ] || fail "JIT:sp_jit_hot_loop has $n of $tgt target samples"
pass "JIT:sp_jit_hot_loop ($obj): $n of $tgt target samples"
"$SCHEDPROF" report "$TMP/jit.json" --views profile >"$TMP/jit.txt" || fail "report"
grep -q "JIT:sp_jit_hot_loop" "$TMP/jit.txt" || fail "the table lacks the JIT name"
pass "table: $(grep -m1 'JIT:sp_jit_hot_loop' "$TMP/jit.txt")"
