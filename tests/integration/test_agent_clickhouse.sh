#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The ClickHouse client of the agent (src/fleet/clickhouse.c, through tests' chq) and the test
# servers (clickhouse_lib.sh) against a real clickhouse-server: version, JSONEachRow in and out,
# a wrong password (exit 3), a server that is gone (exit 2) and back with its data.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse_lib.sh"
CHQ=${CHQ:?CHQ must name the built chq}
require_clickhouse

ch_start one
url=$(ch_url one default)
v=$("$CHQ" "$url" "SELECT version()") || fail "SELECT version() failed"
[[ $v =~ ^[0-9]+\.[0-9]+ ]] || fail "version '$v'"
pass "server $v on port $(ch_port one http)"

"$CHQ" "$url" "CREATE TABLE t (host String, n UInt64) ENGINE = MergeTree ORDER BY host" ||
	fail "CREATE TABLE"
printf '{"host":"a","n":1}\n{"host":"b","n":2}\n{"host":"a","n":4}\n' > "$TMP/rows"
"$CHQ" "$url" "INSERT INTO t FORMAT JSONEachRow" "$TMP/rows" || fail "INSERT"
got=$("$CHQ" "$url" "SELECT host, sum(n) FROM t GROUP BY host ORDER BY host FORMAT CSV")
[ "$got" = $'"a",5\n"b",2' ] || fail "read back: $got"
pass "JSONEachRow in, sums out"

# a bad query: exit 4 and the server's reason
"$CHQ" "$url" "SELECT nosuchcolumn FROM t" 2> "$TMP/err" && fail "a bad query succeeded"
[ $? = 4 ] || fail "bad query: exit $?"
grep -q 'Code: 47' "$TMP/err" || fail "bad query: $(cat "$TMP/err")"
pass "bad query: $(cut -c1-60 "$TMP/err")"

# credentials from the environment: right, then wrong
SCHEDPROF_CLICKHOUSE_USER=$CH_USER SCHEDPROF_CLICKHOUSE_PASSWORD=$CH_PASSWORD \
	"$CHQ" "$url" "SELECT 42" > "$TMP/user" || fail "user $CH_USER refused"
[ "$(cat "$TMP/user")" = 42 ] || fail "SELECT 42 as $CH_USER: $(cat "$TMP/user")"
rc=0
SCHEDPROF_CLICKHOUSE_USER=$CH_USER SCHEDPROF_CLICKHOUSE_PASSWORD=wrong \
	"$CHQ" "$url" "SELECT 1" 2> "$TMP/err" || rc=$?
[ $rc = 3 ] || fail "wrong password: exit $rc ($(cat "$TMP/err"))"
pass "wrong password: exit 3: $(cut -c1-70 "$TMP/err")"

# killed: no answer (exit 2); restarted: the same ports and data
ch_kill one
rc=0
"$CHQ" "$url" "SELECT 1" 2> "$TMP/err" || rc=$?
[ $rc = 2 ] || fail "server down: exit $rc"
grep -q 'Connection refused' "$TMP/err" || fail "server down: $(cat "$TMP/err")"
pass "server down: exit 2: $(cat "$TMP/err")"
ch_start one
got=$("$CHQ" "$url" "SELECT sum(n) FROM t")
[ "$got" = 7 ] || fail "after restart: sum $got"
pass "restarted with its data"
