#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Two CPU-bound tasks pinned to one CPU are switched out while runnable: [preempted].
. "$(dirname "$0")/lib.sh"
require_bpf
"$SCHEDPROF" trace --verify-callers -f json -o "$TMP/run.json" -- "$SPWORK" spin 1 ||
	fail "schedprof exited $?"
callers_verified "$TMP/run.json"
n=$(caller_count "$TMP/run.json" "[preempted]" sp_spin)
assert_between "[preempted] count of sp_spin" "$n" 20 10000000
p=$(jget "$TMP/run.json" 'd["schedules"]["preempted"]')
[ "$p" -ge "$n" ] || fail "header preempted $p < row $n"
w=$(jget "$TMP/run.json" '[r["wait"] for r in d["schedules"]["callers"] if r["caller"]=="[preempted]"][0]')
[ "$w" = None ] || fail "[preempted] row has a wait class '$w'"
pass "header preempted = $p"
