#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A parent waiting for K live children shows do_wait K times, and its K children do_exit K times.
. "$(dirname "$0")/lib.sh"
require_bpf
K=300
"$SCHEDPROF" trace --verify-callers -f json -o "$TMP/run.json" -- "$SPWORK" wait $K ||
	fail "schedprof exited $?"
callers_verified "$TMP/run.json" $K
# (the waits for a child: on PREEMPT_RT do_wait also sleeps on tasklist_lock, an rt lock,
# whose row is do_wait's under the rt-mutex class)
n=$(jget "$TMP/run.json" 'sum(r["comms"].get("sp_waiter", {}).get("count", 0) for r in d["schedules"]["callers"] if r["caller"] == "do_wait" and r["wait"] is None)')
# each child exits only once the parent sleeps in do_wait (spwork): exactly K waits
assert_between "do_wait count of sp_waiter" "$n" $K $K
# each child leaves the CPU for the last time in do_exit(): exactly once each
e=$(caller_count "$TMP/run.json" do_exit sp_child)
[ "$e" = $K ] || fail "do_exit count of sp_child is $e, expected exactly $K"
pass "do_exit count of sp_child: $e"
# each child's nanosleep shows under the child's comm, and exits show do_exit-style callers
c=$(caller_count "$TMP/run.json" hrtimer_nanosleep sp_child)
# a 3 ms nanosleep may expire before it blocks on an emulated CPU (SCHEDPROF_TEST_SLOW > 1)
min=$K
[ "$SLOW" -gt 1 ] && min=$((K * 9 / 10))
[ "$c" -ge $min ] || fail "hrtimer_nanosleep count of sp_child is $c, expected >= $min"
pass "hrtimer_nanosleep of the short-lived children: $c"
# tiny maps: nothing is lost silently; every schedule is in a row or in lost_rows, and the
# stacks that did not fit are counted (stacks are kept with --stacks only)
"$SCHEDPROF" trace --views schedules --stacks --max-stacks 2 --max-callers 3 -f json -o "$TMP/small.json" \
	-- "$SPWORK" wait 50 || fail "schedprof with tiny maps exited $?"
read -r total rows lost missing <<< "$(jget "$TMP/small.json" '" ".join(str(x) for x in (d["schedules"]["total"], sum(r["count"] for r in d["schedules"]["callers"]), d["schedules"]["lost_rows"], d["schedules"]["missing_stacks"]))')"
[ "$lost" -gt 0 ] || fail "3 row slots for a fork/wait/exit job, yet lost_rows = 0"
[ "$missing" -gt 0 ] || fail "2 stack slots, yet missing_stacks = 0"
[ $((rows + lost)) = "$total" ] || fail "rows $rows + lost $lost != total $total"
# a full row map with room for stacks: the stacks of lost rows show under no row, so every
# output adds up to the total and no row's stacks exceed it
"$SCHEDPROF" trace --views schedules --stacks --max-callers 3 -f json -o "$TMP/lostrows.json" \
	-- "$SPWORK" wait 50 || fail "schedprof with a tiny row map exited $?"
bad=$(jget "$TMP/lostrows.json" '[(r["caller"], c, sum(s["count"] for s in r["stacks"] if s["comm"] == c), v["count"]) for r in d["schedules"]["callers"] for c, v in r["comms"].items() if sum(s["count"] for s in r["stacks"] if s["comm"] == c) > v["count"]]')
[ "$bad" = "[]" ] || fail "stacks exceed their row (caller, comm, stacks, row): $bad"
"$SCHEDPROF" report -f folded "$TMP/lostrows.json" > "$TMP/lostrows.folded" || fail "report -f folded exited $?"
total=$(jget "$TMP/lostrows.json" 'd["schedules"]["total"]')
fsum=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/lostrows.folded")
[ "$fsum" = "$total" ] || fail "folded lines add up to $fsum, the total is $total"
pass "stacks of lost rows: under no row; folded adds up to the total ($total)"
"$SCHEDPROF" trace --views schedules --max-callers 3 -- "$SPWORK" wait 20 | grep -q 'raise --max-callers' ||
	fail "the table does not say that rows were lost"
pass "tiny maps: $rows in rows + $lost lost = $total, $missing without a stack"
