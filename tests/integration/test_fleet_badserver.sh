#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Bad server for report/diff --from: nothing listening, refused credentials (wrong
# password, none where one is needed, an unreadable --password-file), a database without the
# schema, each give exit 4 (2 for a URL with credentials in it) and exactly one line on
# stderr saying which, with the server's own reason; the right password reads the rows.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test_fleet_common.sh"
require_clickhouse

# expect_one_line RC PATTERN -- ARGS: schedprof ARGS exits RC with one stderr line matching
# (a usage error's "Try 'schedprof CMD --help'." under it aside)
expect_one_line() {
	local want=$1 pat=$2 rc
	shift 3
	"$SCHEDPROF" "$@" > "$TMP/out" 2> "$TMP/err"
	rc=$?
	[ "$rc" = "$want" ] || fail "schedprof $*: exit $rc, expected $want ($(cat "$TMP/err"))"
	[ "$(grep -vc "^Try 'schedprof" "$TMP/err")" = 1 ] || fail "schedprof $*: not one line on stderr: $(cat "$TMP/err")"
	grep -Eq "$pat" "$TMP/err" || fail "schedprof $*: '$(cat "$TMP/err")' does not match '$pat'"
	[ ! -s "$TMP/out" ] || fail "schedprof $*: wrote a report anyway"
	pass "$* -> exit $rc: $(head -1 "$TMP/err")"
}

ch_alloc s1
PORT=$(ch_port s1 http)
URL=$(ch_url s1)
# nothing listens on its port yet
expect_one_line 4 "^schedprof report: cannot read the warehouse: 127.0.0.1:$PORT: .*(onnect|refused)" -- \
	report --from "$URL"
expect_one_line 4 "^schedprof diff: cannot read the warehouse: 127.0.0.1:$PORT: " -- \
	diff --from "$URL" --since -2h --vs-since -1h
expect_one_line 2 "^schedprof report: --from: 'clickhouse://u:p@127.0.0.1:$PORT' is no " -- \
	report --from "clickhouse://u:p@127.0.0.1:$PORT"

# the server, whose user $CH_USER has a password
ch_start s1
expect_one_line 4 "cannot read the warehouse: 127.0.0.1:$PORT: Code: 81.*schedprof" -- \
	report --from "$URL"
ch s1 "CREATE DATABASE schedprof"
expect_one_line 4 "cannot read the warehouse: 127.0.0.1:$PORT: Code: 60.*doesn't exist" -- \
	report --from "$URL"
ch s1 "DROP DATABASE schedprof"
ch_file s1 "$SRC/sql/cluster/shard.sql"
for t in schedules profile locks cpu_takers losses; do
	ch s1 "RENAME TABLE schedprof.${t}_local TO schedprof.$t"
done
echo '{"host":"h1","boot_id":"b","kernel":"6.1","interval_start":"2026-11-30 22:00:00","interval_end":"2026-11-30 22:01:00","seq":1,"caller":"anon_pipe_read","wait":"pipe","comm":"cat","count":9,"offcpu_ns":90,"max_ns":20}' > "$TMP/row.ndjson"
ch_insert s1 schedprof.schedules "$TMP/row.ndjson"

export SCHEDPROF_CLICKHOUSE_USER=$CH_USER
SCHEDPROF_CLICKHOUSE_PASSWORD=wrong expect_one_line 4 \
	"cannot read the warehouse: 127.0.0.1:$PORT: Code: 193.*(assword).*SCHEDPROF_CLICKHOUSE_PASSWORD" -- \
	report --from "$URL"
expect_one_line 4 "cannot read the warehouse: 127.0.0.1:$PORT: Code: 19[34]" -- \
	report --from "$URL"
expect_one_line 4 "cannot read the warehouse's password from $TMP/none: No such file" -- \
	report --from "$URL" --password-file "$TMP/none"
printf '%s\n' "$CH_PASSWORD" > "$TMP/pw"
"$SCHEDPROF" report --from "$URL" --password-file "$TMP/pw" > "$TMP/ok.txt" ||
	fail "report with the right password (--password-file) failed"
grep -Eq '^ +9 +100.0% .*anon_pipe_read$' "$TMP/ok.txt" || { cat "$TMP/ok.txt"; fail "no anon_pipe_read row of 9"; }
SCHEDPROF_CLICKHOUSE_PASSWORD=$CH_PASSWORD "$SCHEDPROF" report --from "$URL" > "$TMP/ok2.txt" ||
	fail "report with the right password (environment) failed"
cmp -s "$TMP/ok.txt" "$TMP/ok2.txt" || fail "the password from the file and the environment read different rows"
pass "the right password, from --password-file or the environment, reads the rows"
# an empty selection is no warehouse error: exit 1, one line
SCHEDPROF_CLICKHOUSE_PASSWORD=$CH_PASSWORD expect_one_line 1 "has no interval of nohost" -- \
	report --from "$URL" --host nohost
