# SPDX-License-Identifier: BSD-2-Clause
# Real ClickHouse servers for the tests: each one on free loopback ports with a
# temporary config and data directory, killed when the test exits (also on failure).
# Source after lib.sh (or alone: it makes its own $TMP). Several servers at once:
#   ch_alloc a; ch_alloc b                 # ports known before any start (for remote_servers)
#   CH_EXTRA_CONFIG='<remote_servers>..</remote_servers>' ch_start a    # XML put inside <yandex>
#   ch_port a http|tcp; ch_url a [DB]      # clickhouse://127.0.0.1:PORT/DB
#   ch_query a "SELECT 1"                  # the answer (TabSeparated) on stdout; fails on error
#   ch_kill a; ch_start a                  # SIGKILL, then the same ports and data again
#   ch_stop a                              # SIGTERM, SIGKILL after 10 s
# Users: "default" without password and "$CH_USER" with password "$CH_PASSWORD".
# Without clickhouse-server: skip (exit 77), or fail under CI=true (scripts/setup.sh --tests).

if [ -z "${TMP:-}" ]; then
	TMP=$(mktemp -d /tmp/schedprof-ch.XXXXXX)
	trap 'rm -rf "$TMP"' EXIT
fi
CH_USER=sp
CH_PASSWORD=sp-secret
CH_SERVER=${CH_SERVER:-$(command -v clickhouse-server || echo /usr/sbin/clickhouse-server)}

_ch_skip_or_fail() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL (CI=true, so no skipping): $*" >&2
		exit 1
	fi
	echo "SKIP: $*" >&2
	exit 77
}

require_clickhouse() {
	[ -x "$CH_SERVER" ] || _ch_skip_or_fail "needs clickhouse-server (scripts/setup.sh --tests)"
	command -v curl >/dev/null || _ch_skip_or_fail "needs curl"
	command -v python3 >/dev/null || _ch_skip_or_fail "needs python3"
}

# a TCP port nobody listens on now (the kernel picks it)
_ch_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

_ch_dir() { echo "$TMP/clickhouse-$1"; }

ch_alloc() {
	local d; d=$(_ch_dir "$1")
	[ -f "$d/http_port" ] && return 0
	mkdir -p "$d/data"
	_ch_free_port > "$d/http_port"
	_ch_free_port > "$d/tcp_port"
	_ch_free_port > "$d/interserver_port"
}

ch_port() { cat "$(_ch_dir "$1")/$2_port"; }
ch_url() { echo "clickhouse://127.0.0.1:$(ch_port "$1" http)/${2:-schedprof}"; }

_ch_write_config() {
	local d=$1
	cat > "$d/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage></default></profiles>
  <users>
    <default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile><quota>default</quota></default>
    <$CH_USER><password>$CH_PASSWORD</password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile><quota>default</quota></$CH_USER>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time>
  </interval></default></quotas>
</yandex>
XML
	cat > "$d/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$d/server.log</log><errorlog>$d/server.err.log</errorlog>
    <size>10M</size><count>1</count></logger>
  <http_port>$(cat "$d/http_port")</http_port>
  <tcp_port>$(cat "$d/tcp_port")</tcp_port>
  <interserver_http_port>$(cat "$d/interserver_port")</interserver_http_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <listen_host>127.0.0.1</listen_host>
  <path>$d/data/</path>
  <tmp_path>$d/data/tmp/</tmp_path>
  <user_files_path>$d/data/user_files/</user_files_path>
  <format_schema_path>$d/data/format_schemas/</format_schema_path>
  <users_config>$d/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <mlock_executable>false</mlock_executable>
  ${CH_EXTRA_CONFIG:-}
</yandex>
XML
}

# _ch_launch NAME: one start; 0 when it answers, 1 when it died, 2 when it did not answer in 60 s
_ch_launch() {
	local d pid i
	d=$(_ch_dir "$1")
	# not a job of this shell (no "Killed" notices): the subshell leaves it to init
	( "$CH_SERVER" --config-file="$d/config.xml" >> "$d/stdout" 2>&1 & echo $! > "$d/pid" )
	pid=$(cat "$d/pid")
	for i in $(seq 600); do
		curl -sf --max-time 1 "http://127.0.0.1:$(ch_port "$1" http)/ping" >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 2
}

# ch_start NAME: starts (or restarts) the server and waits until it answers (60 s at most).
# A server that dies at start (a port taken in the meantime by somebody's outgoing
# connection, or the previous instance's sockets not yet released) is started again, twice
# at most, on the same ports: other servers' configs may already name them.
ch_start() {
	local d try rc
	require_clickhouse
	ch_alloc "$1"
	d=$(_ch_dir "$1")
	_ch_write_config "$d"
	for try in 1 2 3; do
		_ch_launch "$1" && rc=0 || rc=$?
		[ $rc = 0 ] && return 0
		[ $rc = 1 ] && [ $try -lt 3 ] || break
		echo "clickhouse-server $1 exited at start (try $try); again in 2 s: $(tail -1 "$d/server.err.log" 2>/dev/null)" >&2
		rm -f "$d/pid"
		sleep 2
	done
	echo "clickhouse-server $1 did not answer; its log:" >&2
	tail -20 "$d/server.err.log" "$d/stdout" >&2 2>/dev/null
	ch_kill "$1"
	fail "clickhouse-server $1 (port $(ch_port "$1" http)) did not start"
}

_ch_signal() {
	local d pid i
	d=$(_ch_dir "$1")
	[ -f "$d/pid" ] || return 0
	pid=$(cat "$d/pid")
	kill -"$2" "$pid" 2>/dev/null
	for i in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		for i in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	fi
	rm -f "$d/pid"
	return 0
}

ch_kill() { _ch_signal "$1" KILL; }
ch_stop() { _ch_signal "$1" TERM; }

# ch_query NAME SQL [USER PASSWORD]: the answer on stdout; non-zero (and the error on stderr)
ch_query() {
	local out code
	out=$(curl -sS --max-time 30 -u "${3:-default}:${4:-}" --data-binary "$2" \
		-w '\n%{http_code}' "http://127.0.0.1:$(ch_port "$1" http)/") || return 1
	code=${out##*$'\n'}
	out=${out%$'\n'*}
	out=${out%$'\n'}
	if [ "$code" != 200 ]; then
		echo "clickhouse $1: HTTP $code: $out" >&2
		return 1
	fi
	[ -z "$out" ] || printf '%s\n' "$out"
}

# every server started under $TMP, also by a subshell (ch_start inside $(...)): by pid file
_ch_cleanup() {
	local d
	for d in "$TMP"/clickhouse-*/; do
		[ -f "$d/pid" ] && ch_kill "$(basename "$d" | sed 's/^clickhouse-//')"
	done
	return 0
}
# chain with lib.sh's trap (rm -rf $TMP): servers die first
trap "_ch_cleanup; $(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")" EXIT
