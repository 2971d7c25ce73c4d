#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A reader that blocks exactly N times on a pipe shows the kernel's pipe read function
# (anon_pipe_read, pipe_read on older kernels: pipe_read_fn) with count N, within 1%, under
# its own comm; the wait class is "pipe".
. "$(dirname "$0")/lib.sh"
require_bpf
N=3000
"$SCHEDPROF" trace --verify-callers -f json -o "$TMP/run.json" -- "$SPWORK" pipe $N ||
	fail "schedprof exited $?"
callers_verified "$TMP/run.json" $((N / 2))
PR=$(pipe_read_fn)
n=$(caller_count "$TMP/run.json" "$PR" sp_pipe_reader)
assert_between "$PR count of sp_pipe_reader" "$n" $((N * 99 / 100)) $((N * 101 / 100))
w=$(jget "$TMP/run.json" '[r["wait"] for r in d["schedules"]["callers"] if r["caller"] == "'"$PR"'"][0]')
[ "$w" = pipe ] || fail "wait class of the pipe row is '$w', expected pipe"
t=$(jget "$TMP/run.json" 'd["schedules"]["total"]')
s=$(jget "$TMP/run.json" 'sum(r["count"] for r in d["schedules"]["callers"])')
[ "$t" = "$s" ] || fail "total $t differs from the sum of rows $s"
off=$(jget "$TMP/run.json" '[r["offcpu_ns"] for r in d["schedules"]["callers"] if r["caller"] == "'"$PR"'"][0]')
[ "$off" -gt 0 ] || fail "no off-CPU time for the pipe row"
pass "total $t equals the sum of the rows; off-CPU ${off} ns"
# the table view shows the same row first for that comm
"$SCHEDPROF" trace --by comm -- "$SPWORK" pipe 500 > "$TMP/table.txt" || fail "table run failed"
grep -q '^sp_pipe_reader: ' "$TMP/table.txt" || fail "--by comm has no sp_pipe_reader group"
awk -v pr="$PR" '/^sp_pipe_reader:/{f=1;next} f&&$NF==pr{print;exit}' "$TMP/table.txt" | grep -q . \
	|| fail "--by comm: no $PR row under sp_pipe_reader"
pass "--by comm groups the pipe reader"
# without --verify-callers the checks by a full walk back off (fastcaller.bpf.h SP_REVALIDATE):
# some, but far fewer than one in 64
"$SCHEDPROF" trace --views schedules -f json -o "$TMP/backoff.json" -- "$SPWORK" pipe 20000 ||
	fail "schedprof exited $?"
read -r fast ver <<< "$(jget "$TMP/backoff.json" '" ".join(str(d["schedules"]["caller_cache"][k]) for k in ("fast", "verified"))')"
[ "$fast" -ge 10000 ] || fail "only $fast callers from the cache"
[ "$ver" -ge 1 ] || fail "no cached caller was checked by a full walk"
[ "$ver" -le $((fast / 128)) ] || fail "$ver of $fast cached callers checked: the checks did not back off"
pass "$ver of $fast cached callers checked by a full walk (backing off)"
