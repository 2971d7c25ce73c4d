# SPDX-License-Identifier: BSD-2-Clause
# Shared by the fleet tests (test_fleet_*.sh, issue #13), sourced after lib.sh: ClickHouse
# servers built from the shipped example (examples/fleet/shardN.xml, cluster.xml: the files a
# user copies) over Debian's /etc/clickhouse-server, on free loopback ports, in $TMP; killed
# on exit, also on failure. Rows go in as the agent sends them: JSONEachRow over HTTP.
SRC=${SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
CH_SERVER=${CH_SERVER:-/usr/sbin/clickhouse-server}
CH_PIDS=()

fleet_cleanup() {
	local p
	for p in "${CH_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${CH_PIDS[@]}"; do
		for _ in $(seq 100); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap fleet_cleanup EXIT

require_clickhouse() {
	[ -x "$CH_SERVER" ] || skip_or_fail "needs clickhouse-server (scripts/setup.sh --tests)"
	command -v clickhouse-client >/dev/null || skip_or_fail "needs clickhouse-client"
	command -v curl >/dev/null || skip_or_fail "needs curl"
	command -v python3 >/dev/null || skip_or_fail "needs python3"
	[ -r /etc/clickhouse-server/config.xml ] || skip_or_fail "no /etc/clickhouse-server/config.xml"
}

# A TCP port nobody listens on (the kernel's pick, released at once).
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_shard N: server N of the example cluster, its ports in HTTP_N, TCP_N. cluster.xml names
# the shards' TCP ports TCP_1, TCP_2 (pick them all with pick_ports first).
pick_ports() {
	local n
	for n in 1 2; do
		eval "HTTP_$n=$(free_port) TCP_$n=$(free_port) INTER_$n=$(free_port)"
	done
}

start_shard() {
	local n=$1 d="$TMP/shard$1" http tcp inter
	eval "http=\$HTTP_$n tcp=\$TCP_$n inter=\$INTER_$n"
	mkdir -p "$d/etc/config.d" "$d/lib" "$d/log"
	cp /etc/clickhouse-server/config.xml /etc/clickhouse-server/users.xml "$d/etc/"
	sed -e "s#812$n#$http#; s#900$n#$tcp#; s#901$n#$inter#" \
	    -e "s#/var/lib/clickhouse-shard$n/#$d/lib/#g; s#/var/log/clickhouse-shard$n/#$d/log/#g" \
	    "$SRC/examples/fleet/shard$n.xml" > "$d/etc/config.d/shard.xml"
	sed -e "s#<port>9001</port>#<port>$TCP_1</port>#; s#<port>9002</port>#<port>$TCP_2</port>#" \
	    "$SRC/examples/fleet/cluster.xml" > "$d/etc/config.d/cluster.xml"
	"$CH_SERVER" --config-file="$d/etc/config.xml" > "$d/log/stdout" 2>&1 &
	CH_PIDS+=($!)
	for _ in $(seq 300); do
		[ "$(curl -s "http://127.0.0.1:$http/" --data-binary 'SELECT 1' 2>/dev/null)" = 1 ] && return 0
		kill -0 "${CH_PIDS[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	cat "$d/log/stdout" "$d/log/"*.err.log >&2 2>/dev/null
	fail "clickhouse-server $n did not answer on 127.0.0.1:$http"
}

# ch PORT SQL: one query over HTTP; its answer on stdout, a server error fails the test.
ch() {
	local out code
	out=$(curl -sS -w '\n%{http_code}' "http://127.0.0.1:$1/" --data-binary "$2") ||
		fail "no answer from 127.0.0.1:$1 to: $2"
	code=${out##*$'\n'}
	out=${out%$'\n'*}
	out=${out%$'\n'} # the answer's own last newline
	[ "$code" = 200 ] || fail "127.0.0.1:$1: $2: $out"
	[ -z "$out" ] || printf '%s\n' "$out"
}

# ch_file TCP_PORT FILE: a DDL file of several statements (clickhouse-client --multiquery)
ch_file() {
	clickhouse-client --host 127.0.0.1 --port "$1" --multiquery < "$2" ||
		fail "$2 on 127.0.0.1:$1 failed"
}

# ch_insert PORT TABLE FILE [SETTINGS]: JSONEachRow rows, as the agent's sink sends them
ch_insert() {
	local q="INSERT INTO $2 FORMAT JSONEachRow" out
	out=$(curl -sS -w '\n%{http_code}' \
		"http://127.0.0.1:$1/?${4:+$4&}query=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$q")" \
		--data-binary @"$3") || fail "no answer from 127.0.0.1:$1 to the insert into $2"
	[ "${out##*$'\n'}" = 200 ] || fail "insert into $2: ${out%$'\n'*}"
}
