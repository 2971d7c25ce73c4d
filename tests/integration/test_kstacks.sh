#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Kept kernel stacks from the raw stack words (bpf/faststack.bpf.h): with --verify-callers
# every stack the cache builds is checked against bpf_get_stack()'s, frame by frame, and
# none differs; most come from the cache, and most of those from its memo of stacks built
# (struct sp_kmemo: each of its answers checked too); the stacks kept are the same without
# the cache (--kstack-cache 0), which then reports none.
. "$(dirname "$0")/lib.sh"
require_bpf
N=3000
PR=$(pipe_read_fn)

# memo FILE CACHE MIN WHAT: at least MIN of CACHE's answers came from its memo
memo() {
	local m
	m=$(jget "$1" 'd["schedules"]["'"$2"'"].get("memo", 0)')
	[ "$m" -ge "$3" ] || fail "only $m $4 from the memo of stacks built, expected >= $3"
	pass "$4: $m from the memo of stacks built"
}

# stacks FILE: the kernel frames of each kept stack of the pipe reader's row, one per line
stacks() {
	jget "$1" '"\n".join(sorted(set(";".join(f for f, o in zip(s["frames"], s["objects"]) if o == "[kernel]") for r in d["schedules"]["callers"] if r["caller"] == "'"$PR"'" for s in r.get("stacks", []) if s["comm"] == "sp_pipe_reader")))'
}

"$SCHEDPROF" trace --verify-callers --views schedules --stacks --wakers -f json \
	-o "$TMP/fast.json" -- "$SPWORK" pipe $N || fail "schedprof exited $?"
cache_verified "$TMP/fast.json" $((N / 2)) schedules stack_cache "kernel stacks"
cache_verified "$TMP/fast.json" $((N / 2)) schedules waker_cache "wakers' stacks"
memo "$TMP/fast.json" stack_cache $((N / 2)) "kernel stacks (each checked)"
memo "$TMP/fast.json" waker_cache $((N / 2)) "wakers' stacks (each checked)"

# the fork and exit paths of many short tasks (kernel threads' and exceptions' entries too)
"$SCHEDPROF" trace --verify-callers --views schedules --stacks --wakers -f json \
	-o "$TMP/wait.json" -- "$SPWORK" wait 200 || fail "schedprof exited $?"
cache_verified "$TMP/wait.json" 1 schedules stack_cache "kernel stacks"
cache_verified "$TMP/wait.json" 0 schedules waker_cache "wakers' stacks"

"$SCHEDPROF" trace --kstack-cache 0 --views schedules --stacks -f json -o "$TMP/walk.json" \
	-- "$SPWORK" pipe $N || fail "schedprof --kstack-cache 0 exited $?"
[ "$(jget "$TMP/walk.json" '"stack_cache" in d["schedules"]')" = False ] ||
	fail "--kstack-cache 0 still reports a stack_cache"
a=$(stacks "$TMP/fast.json")
b=$(stacks "$TMP/walk.json")
[ -n "$a" ] || fail "no kept stack of the $PR row"
echo "$a" | sed 's/^/  /'
[ "$a" = "$b" ] || fail "the kept kernel stacks differ without the cache: $b"
pass "the kept kernel stacks of $PR are the same with and without the cache"

# without --verify-callers: most from the cache (their fold and hash the build's own, not a
# walk's), the checks backing off; the rows, stacks and wakers are the walk's
"$SCHEDPROF" trace --views schedules --stacks --wakers -f json -o "$TMP/backoff.json" \
	-- "$SPWORK" pipe 20000 || fail "schedprof exited $?"
read -r fast ver vol <<< "$(jget "$TMP/backoff.json" '" ".join(str(x) for x in (d["schedules"]["stack_cache"]["fast"], d["schedules"]["stack_cache"]["verified"], d["schedules"]["voluntary"]))')"
[ $((fast * 100)) -ge $((vol * 90)) ] || fail "only $fast of $vol kernel stacks from the cache (< 90%)"
[ "$ver" -le $((fast / 128 + 1)) ] || fail "$ver of $fast cached stacks checked: the checks did not back off"
pass "$fast of $vol kernel stacks from the cache, $ver checked by a full walk (backing off)"
memo "$TMP/backoff.json" stack_cache $((fast * 9 / 10)) "kernel stacks"
n=$(caller_count "$TMP/backoff.json" "$PR" sp_pipe_reader)
assert_between "$PR count of sp_pipe_reader (from the cache)" "$n" 19800 20200
c=$(stacks "$TMP/backoff.json")
[ "$c" = "$b" ] || fail "the kept kernel stacks from the cache differ from the walk's: $c"
pass "the kept kernel stacks from the cache are the walk's"
by=$(jget "$TMP/backoff.json" 'sum(w["count"] for r in d["schedules"]["callers"] if r["caller"] == "'"$PR"'" for w in r.get("wakers", []) if w["comm"] == "spwork" and w["function"] == "'"${PR/%_read/_write}"'")')
[ $((by * 100)) -ge $((n * 99)) ] || fail "woken by spwork from ${PR/%_read/_write} $by times of $n (< 99%)"
pass "$by of $n wake-ups named spwork and ${PR/%_read/_write}"
