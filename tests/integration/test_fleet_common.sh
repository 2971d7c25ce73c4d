# SPDX-License-Identifier: BSD-2-Clause
# Shared by the fleet tests (test_fleet_*.sh), sourced after lib.sh: the servers of
# clickhouse_lib.sh, and the example cluster `fleet` (examples/fleet/cluster.xml, the file a
# user copies) over two of them. Rows go in as the agent sends them: JSONEachRow over HTTP.
. "$(dirname "${BASH_SOURCE[0]}")/clickhouse_lib.sh"
SRC=${SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

# start_cluster A B: servers A and B as the two shards of examples/fleet/cluster.xml (its
# <remote_servers>, the shards' ports put in), each with sql/cluster/ applied
start_cluster() {
	ch_alloc "$1"
	ch_alloc "$2"
	CH_EXTRA_CONFIG=$(sed -n '/<remote_servers>/,/<\/remote_servers>/p' "$SRC/examples/fleet/cluster.xml" |
		sed -e "s#<port>9001</port>#<port>$(ch_port "$1" tcp)</port>#" \
		    -e "s#<port>9002</port>#<port>$(ch_port "$2" tcp)</port>#")
	CH_EXTRA_CONFIG=$CH_EXTRA_CONFIG ch_start "$1"
	CH_EXTRA_CONFIG=$CH_EXTRA_CONFIG ch_start "$2"
	ch_file "$1" "$SRC/sql/cluster/shard.sql"
	ch_file "$2" "$SRC/sql/cluster/shard.sql"
	ch_file "$1" "$SRC/sql/cluster/distributed.sql"
	ch_file "$2" "$SRC/sql/cluster/distributed.sql"
}

# ch NAME SQL: ch_query, and its error fails the test
ch() {
	ch_query "$1" "$2" || fail "clickhouse $1: $2"
}

# ch_file NAME FILE: a DDL file of several statements (clickhouse-client --multiquery)
ch_file() {
	command -v clickhouse-client >/dev/null || _ch_skip_or_fail "needs clickhouse-client"
	clickhouse-client --host 127.0.0.1 --port "$(ch_port "$1" tcp)" --multiquery < "$2" ||
		fail "$2 on clickhouse $1 failed"
}

# ch_insert NAME TABLE FILE [SETTINGS]: JSONEachRow rows, as the agent's sink sends them
ch_insert() {
	local q out
	q=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1]))' \
		"INSERT INTO $2 FORMAT JSONEachRow")
	out=$(curl -sS -w '\n%{http_code}' \
		"http://127.0.0.1:$(ch_port "$1" http)/?${4:+$4&}query=$q" --data-binary @"$3") ||
		fail "no answer from clickhouse $1 to the insert into $2"
	[ "${out##*$'\n'}" = 200 ] || fail "insert into $2: ${out%$'\n'*}"
}
