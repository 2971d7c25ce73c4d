#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Bad server for report/diff --from (issue #13): nothing listening, refused credentials (wrong
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

pick_ports
# nothing listens on HTTP_1 yet
expect_one_line 4 "^schedprof report: cannot read the warehouse: 127.0.0.1:$HTTP_1: .*(onnect|refused)" -- \
	report --from "clickhouse://127.0.0.1:$HTTP_1/schedprof"
expect_one_line 4 "^schedprof diff: cannot read the warehouse: 127.0.0.1:$HTTP_1: " -- \
	diff --from "clickhouse://127.0.0.1:$HTTP_1/schedprof" --since -2h --vs-since -1h
expect_one_line 2 "^schedprof report: --from: 'clickhouse://u:p@127.0.0.1:$HTTP_1' is no " -- \
	report --from "clickhouse://u:p@127.0.0.1:$HTTP_1"

# a server whose user `fleet` has a password
mkdir -p "$TMP/shard1/etc/users.d"
cat > "$TMP/shard1/etc/users.d/fleet.xml" <<'XML'
<?xml version="1.0"?>
<yandex><users><fleet>
  <password>s3cret</password>
  <networks><ip>127.0.0.1</ip></networks>
  <profile>default</profile><quota>default</quota>
</fleet></users></yandex>
XML
start_shard 1
expect_one_line 4 "cannot read the warehouse: 127.0.0.1:$HTTP_1: Code: 81.*schedprof" -- \
	report --from "clickhouse://127.0.0.1:$HTTP_1/schedprof"
ch "$HTTP_1" "CREATE DATABASE schedprof"
expect_one_line 4 "cannot read the warehouse: 127.0.0.1:$HTTP_1: Code: 60.*doesn't exist" -- \
	report --from "clickhouse://127.0.0.1:$HTTP_1/schedprof"
ch "$HTTP_1" "DROP DATABASE schedprof"
ch_file "$TCP_1" "$SRC/sql/cluster/shard.sql"
for t in schedules profile locks losses; do
	ch "$HTTP_1" "RENAME TABLE schedprof.${t}_local TO schedprof.$t"
done
echo '{"host":"h1","boot_id":"b","kernel":"6.1","interval_start":"2026-11-30 22:00:00","interval_end":"2026-11-30 22:01:00","seq":1,"caller":"anon_pipe_read","wait":"pipe","comm":"cat","count":9,"offcpu_ns":90,"max_ns":20}' > "$TMP/row.ndjson"
ch_insert "$HTTP_1" schedprof.schedules "$TMP/row.ndjson"

export SCHEDPROF_CLICKHOUSE_USER=fleet
SCHEDPROF_CLICKHOUSE_PASSWORD=wrong expect_one_line 4 \
	"cannot read the warehouse: 127.0.0.1:$HTTP_1: Code: 193.*(assword).*SCHEDPROF_CLICKHOUSE_PASSWORD" -- \
	report --from "clickhouse://127.0.0.1:$HTTP_1/schedprof"
expect_one_line 4 "cannot read the warehouse: 127.0.0.1:$HTTP_1: Code: 19[34]" -- \
	report --from "clickhouse://127.0.0.1:$HTTP_1/schedprof"
expect_one_line 4 "cannot read the warehouse's password from $TMP/none: No such file" -- \
	report --from "clickhouse://127.0.0.1:$HTTP_1/schedprof" --password-file "$TMP/none"
printf 's3cret\n' > "$TMP/pw"
"$SCHEDPROF" report --from "clickhouse://127.0.0.1:$HTTP_1/schedprof" --password-file "$TMP/pw" > "$TMP/ok.txt" ||
	fail "report with the right password (--password-file) failed"
grep -Eq '^ +9 +100.0% .*anon_pipe_read$' "$TMP/ok.txt" || { cat "$TMP/ok.txt"; fail "no anon_pipe_read row of 9"; }
SCHEDPROF_CLICKHOUSE_PASSWORD=s3cret "$SCHEDPROF" report --from "clickhouse://127.0.0.1:$HTTP_1/schedprof" > "$TMP/ok2.txt" ||
	fail "report with the right password (environment) failed"
cmp -s "$TMP/ok.txt" "$TMP/ok2.txt" || fail "the password from the file and the environment read different rows"
pass "the right password, from --password-file or the environment, reads the rows"
# an empty selection is no warehouse error: exit 1, one line
SCHEDPROF_CLICKHOUSE_PASSWORD=s3cret expect_one_line 1 "has no interval of nohost" -- \
	report --from "clickhouse://127.0.0.1:$HTTP_1/schedprof" --host nohost
