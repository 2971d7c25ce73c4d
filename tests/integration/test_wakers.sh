#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Wakers: a consumer blocked in a pipe read is woken by the producer's write.
# With --wakers, its pipe read row names the producer's comm and the pipe write in at
# least 99% of its wake-ups; without, the comm alone (function null). As make: a parent in
# do_wait is woken by its exiting children, from the exit path (do_notify_parent).
. "$(dirname "$0")/lib.sh"
require_bpf
WAKEWORK=${WAKEWORK:?WAKEWORK must name the workload binary}
N=2000

# wakers FILE CALLER COMM: "count woken-by-COMM-from-FUNCTION ... " of the row, JSON wakers
# (the row of the wait itself, not of a lock taken on the way: PREEMPT_RT's pipe mutex and
# tasklist_lock are rt locks, rows of the same caller in the rt-mutex class)
wakers() {
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in d["schedules"]["callers"] if r["caller"] == sys.argv[2] and r["wait"] in (None, "pipe")]
if not rows:
    sys.exit("no row " + sys.argv[2])
r = rows[0]
print(r["comms"].get(sys.argv[3], {}).get("count", 0), json.dumps(r.get("wakers", [])))
PY
}

"$SCHEDPROF" trace --verify-callers --wakers --views schedules -f json -o "$TMP/w.json" -- \
	"$WAKEWORK" pipe $N || fail "schedprof exited $?"
callers_verified "$TMP/w.json" 1
# the wakers' stacks, from the raw words (faststack.bpf.h): each checked, none differs
cache_verified "$TMP/w.json" $((N / 2)) schedules waker_cache "wakers' stacks"
[ "$(jget "$TMP/w.json" 'd["schedules"].get("wakers")')" = True ] || fail "schedules.wakers is not true"
caller=$(pipe_read_fn)
read -r n ws <<<"$(wakers "$TMP/w.json" $caller ww_consumer)" || fail "no $caller row"
echo "$caller: $n sleeps of ww_consumer, wakers $ws"
# (a read finds a byte already there now and then on a busy machine: no sleep)
assert_between "$caller sleeps of ww_consumer" "$n" $((N / 2)) "$N"
writer=${caller/%_read/_write} # the kernel's pair: anon_pipe_write, or pipe_write
by=$(python3 -c 'import json,sys; print(sum(w["count"] for w in json.loads(sys.argv[1])
	if w["comm"] == "ww_producer" and w["function"] == sys.argv[2]))' "$ws" "$writer")
[ $((by * 100)) -ge $((n * 99)) ] || fail "woken by ww_producer from $writer $by times of $n (< 99%)"
pass "$by of $n wake-ups by ww_producer from $writer"

# without --wakers: the comm, no function
"$SCHEDPROF" trace --views schedules -f json -o "$TMP/c.json" -- "$WAKEWORK" pipe 500 \
	|| fail "schedprof exited $?"
read -r n ws <<<"$(wakers "$TMP/c.json" $caller ww_consumer)" || fail "no $caller row"
by=$(python3 -c 'import json,sys; print(sum(w["count"] for w in json.loads(sys.argv[1])
	if w["comm"] == "ww_producer" and w["function"] is None))' "$ws")
[ $((by * 100)) -ge $((n * 99)) ] || fail "without --wakers: by ww_producer (function null) $by of $n"
[ "$(jget "$TMP/c.json" 'd["schedules"].get("wakers", False)')" = False ] || fail "schedules.wakers set without --wakers"
pass "without --wakers: $by of $n wake-ups by ww_producer, function null"

# a parent waiting for its children is woken by them, from their exit
"$SCHEDPROF" trace --wakers --views schedules -f json -o "$TMP/m.json" -- "$WAKEWORK" wait 50 \
	|| fail "schedprof exited $?"
read -r n ws <<<"$(wakers "$TMP/m.json" do_wait ww_parent)" || fail "no do_wait row"
echo "do_wait: $n sleeps of ww_parent, wakers $ws"
by=$(python3 -c 'import json,sys; print(sum(w["count"] for w in json.loads(sys.argv[1])
	if w["comm"] == "ww_child" and w["function"] in ("do_notify_parent", "exit_notify")))' "$ws")
[ "$n" -ge 50 ] || fail "ww_parent slept $n times in do_wait, expected >= 50"
[ $((by * 100)) -ge $((n * 99)) ] || fail "do_wait woken by ww_child from its exit $by times of $n (< 99%)"
pass "do_wait woken $by of $n times by the exiting children, from do_notify_parent"
