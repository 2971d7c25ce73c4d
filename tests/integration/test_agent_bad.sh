#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# schedprof agent with bad sinks: each gives one clear line, tracing goes on (the
# intervals keep coming into the spool) and the exit status is the documented one:
#   unreachable port   one "cannot send interval ... Connection refused" line; exit 0; the
#                      intervals stay in the spool;
#   wrong password     one "refused the credentials of user" line; exit 0; then the right
#                      password (--password-file): the spool of both runs is delivered;
#   full spool         one "spool ... is full" line; exit 3; the drops arrive as a row of
#                      table losses (spool.dropped_intervals) once the server is reachable.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse_lib.sh"
require_bpf
require_clickhouse

# one_line FILE PATTERN: PATTERN is in exactly one line of FILE
one_line() {
	local n
	n=$(grep -c -- "$2" "$1" || true)
	[ "$n" = 1 ] || { cat "$1" >&2; fail "'$2' in $n lines of the agent's messages, expected 1"; }
}
batches() { ls "$1" 2>/dev/null | grep -c '\.batch$' || true; }

# ---- refused before anything starts: credentials in the URL (exit 2), no password file (1) ----
rc=0
"$SCHEDPROF" agent --sink clickhouse://sp:secret@127.0.0.1:8123/db 2> "$TMP/c.err" || rc=$?
[ $rc = 2 ] || fail "credentials in the URL: exit $rc, expected 2"
one_line "$TMP/c.err" "no credentials in the URL"
rc=0
"$SCHEDPROF" agent --sink clickhouse://127.0.0.1:1/db --password-file "$TMP/nosuch" \
	--spool "$TMP/sp0" 2> "$TMP/c.err" || rc=$?
[ $rc = 1 ] || fail "missing password file: exit $rc, expected 1"
one_line "$TMP/c.err" "No such file or directory"
pass "credentials in the URL: exit 2; a missing --password-file: exit 1, one line each"

# ---- unreachable ----
ch_alloc ch # its ports, not started yet: nobody listens there
url=$(ch_url ch)
rc=0
"$SCHEDPROF" agent -i 0.5 -d 3 --views schedules --spool "$TMP/sp1" --sink "$url" \
	--hostname bad-$$ 2> "$TMP/u.err" || rc=$?
[ $rc = 0 ] || { cat "$TMP/u.err" >&2; fail "unreachable: exit $rc, expected 0"; }
one_line "$TMP/u.err" "cannot send interval 1: Connection refused"
one_line "$TMP/u.err" "not sent yet stay in the spool"
n=$(batches "$TMP/sp1")
[ "$n" -ge 5 ] || fail "unreachable: $n intervals spooled in 3 s of 0.5 s intervals"
pass "unreachable: one line ($(grep -o 'cannot send.*refused' "$TMP/u.err" | head -1)), exit 0, $n intervals spooled"

# ---- wrong password ----
ch_start ch
ch_query ch "SELECT 1" >/dev/null || fail "server"
rc=0
SCHEDPROF_CLICKHOUSE_USER=$CH_USER SCHEDPROF_CLICKHOUSE_PASSWORD=wrong \
	"$SCHEDPROF" agent -i 0.5 -d 2 --views schedules --spool "$TMP/sp1" --sink "$url" \
	--create-schema --hostname bad-$$ 2> "$TMP/p.err" || rc=$?
[ $rc = 0 ] || { cat "$TMP/p.err" >&2; fail "wrong password: exit $rc, expected 0"; }
one_line "$TMP/p.err" "refused the credentials of user '$CH_USER'"
grep -q "Code: 193" "$TMP/p.err" || fail "wrong password: the server's reason is missing"
m=$(batches "$TMP/sp1")
[ "$m" -gt "$n" ] || fail "wrong password: the spool did not grow ($n then $m): tracing stopped?"
pass "wrong password: one line, exit 0, spool $n -> $m intervals"
# the right password from a file: everything spooled is delivered
printf '%s\n' "$CH_PASSWORD" > "$TMP/pw"
chmod 600 "$TMP/pw"
SCHEDPROF_CLICKHOUSE_USER=$CH_USER "$SCHEDPROF" agent -i 0.5 -d 1 --views schedules \
	--spool "$TMP/sp1" --sink "$url" --create-schema --password-file "$TMP/pw" \
	--hostname bad-$$ 2> "$TMP/ok.err" || fail "right password: exit $? ($(cat "$TMP/ok.err"))"
left=$(batches "$TMP/sp1")
[ "$left" = 0 ] || fail "right password: $left intervals left in the spool"
got=$(ch_query ch "SELECT uniqExact(seq) FROM schedprof.schedules FINAL WHERE host = 'bad-$$'")
[ "$got" -ge "$m" ] || fail "right password: $got intervals arrived, $m were spooled"
pass "right password from --password-file: the $m spooled intervals and the new ones arrived ($got)"

# ---- full spool: the server is down and 4K (the least) holds a few gzip'd intervals of every
# view (about 0.5K each on an idle machine, more under load): 30 intervals overflow it ----
ch_kill ch
rc=0
"$SCHEDPROF" agent -i 0.1 -d 3 --spool "$TMP/sp2" --spool-limit 4K --sink "$url" \
	--hostname full-$$ 2> "$TMP/f.err" || rc=$?
[ $rc = 3 ] || { cat "$TMP/f.err" >&2; fail "full spool: exit $rc, expected 3"; }
one_line "$TMP/f.err" "spool .* is full"
one_line "$TMP/f.err" "intervals were dropped from the full spool"
dropped=$(grep -o '[0-9]* intervals were dropped' "$TMP/f.err" | cut -d' ' -f1)
pass "full spool: one line, exit 3, $dropped intervals dropped"
ch_start ch
"$SCHEDPROF" agent -i 0.5 -d 1 --views schedules --spool "$TMP/sp2" --spool-limit 8K \
	--sink "$url" --hostname full-$$ 2> "$TMP/f2.err" || true
# the second run may drop intervals of its own (8K): they count too
more=$(grep -o '[0-9]* intervals were dropped' "$TMP/f2.err" | cut -d' ' -f1)
dropped=$((dropped + ${more:-0}))
lost=$(ch_query ch "SELECT sum(count) FROM schedprof.losses FINAL WHERE host = 'full-$$' AND what = 'spool.dropped_intervals'")
[ "${lost:-0}" = "$dropped" ] || fail "table losses counts $lost dropped intervals, the agent said $dropped ($(cat "$TMP/f2.err"))"
pass "the drops arrived in table losses, all of them: spool.dropped_intervals = $lost (also those carried by batches dropped in turn, or left for the next start)"
