#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A parent waiting for K live children shows do_wait K times.
. "$(dirname "$0")/lib.sh"
require_bpf
K=300
"$SCHEDPROF" trace -f json -o "$TMP/run.json" -- "$SPWORK" wait $K || fail "schedprof exited $?"
n=$(caller_count "$TMP/run.json" do_wait sp_waiter)
assert_between "do_wait count of sp_waiter" "$n" $K $((K * 101 / 100))
# each child's nanosleep shows under the child's comm, and exits show do_exit-style callers
c=$(caller_count "$TMP/run.json" hrtimer_nanosleep sp_child)
[ "$c" -ge $K ] || fail "hrtimer_nanosleep count of sp_child is $c, expected >= $K"
pass "hrtimer_nanosleep of the short-lived children: $c"
