#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The caller fast path's per-task memos (issue #11, sched.bpf.c fast_memo()): a task that
# sleeps at two places in turn is attributed from its memos, and exactly; one that rotates
# through three places (more than the two memos hold) is attributed exactly too, each answer
# replacing a memo. Every cached caller is checked by a full walk (--verify-callers).
. "$(dirname "$0")/lib.sh"
require_bpf
N=1000

# places_check FILE K: each of the K places has N sleeps of sp_places, within 1% (rows under
# N / 2 are other sleeps: a preemption, a page fault, the exit)
places_check() {
	local rows
	rows=$(jget "$1" '" ".join(str(c) for c in (r["comms"].get("sp_places", {}).get("count", 0) for r in d["schedules"]["callers"]) if c > '$((N / 2))')')
	[ "$(wc -w <<< "$rows")" = "$2" ] || fail "sp_places has rows '$rows', expected $2 places"
	for n in $rows; do
		assert_between "sleeps of sp_places at one of $2 places" "$n" $((N * 99 / 100)) $((N * 101 / 100))
	done
	n=$(caller_count "$1" anon_pipe_read sp_places)
	[ "$n" = 0 ] && n=$(caller_count "$1" pipe_read sp_places)
	assert_between "pipe reads of sp_places" "$n" $((N * 99 / 100)) $((N * 101 / 100))
}

# memo_count LOG: the cached callers that came from a memo (trace -v says how many)
memo_count() {
	sed -n "s/.*callers from the cache: [0-9]*, of them \([0-9]*\) from the task's memo.*/\1/p" "$1"
}

"$SCHEDPROF" trace -v --verify-callers --views schedules -f json -o "$TMP/two.json" -- \
	"$SPWORK" places 2 $N 2> "$TMP/two.log" || fail "schedprof exited $?"
callers_verified "$TMP/two.json" $N
places_check "$TMP/two.json" 2
m=$(memo_count "$TMP/two.log")
[ -n "$m" ] || fail "trace -v does not say how many callers came from the memos"
# two places in turn: after the first of each, every sleep of sp_places is a memo's
[ "$m" -ge $((2 * N * 9 / 10)) ] || fail "only $m callers from the memos, expected >= $((2 * N * 9 / 10))"
pass "two places in turn: $m callers from the memos, all checked"

"$SCHEDPROF" trace -v --verify-callers --views schedules -f json -o "$TMP/three.json" -- \
	"$SPWORK" places 3 $N 2> "$TMP/three.log" || fail "schedprof exited $?"
callers_verified "$TMP/three.json" $N
places_check "$TMP/three.json" 3
pass "three places in turn: each answer replaced a memo, exact"
