#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Runs test_debuginfod against a debuginfod-shaped file tree (/buildid/<hex>/debuginfo) served
# over loopback by python3's http.server: the stripped symtarget's debug file exists only there.
# usage: debuginfod.sh TEST_BINARY STRIPPED_FILE DEBUG_FILE
set -euo pipefail
test_bin=$1 stripped=$2 debug=$3
if ! command -v python3 >/dev/null; then
	[ "${CI:-}" = true ] && { echo "python3 missing" >&2; exit 1; }
	echo "skipped: python3 missing"; exit 77
fi
tmp=$(mktemp -d)
server=
cleanup() {
	local rc=$?
	if [ -n "$server" ]; then
		kill "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	fi
	rm -rf "$tmp"
	exit $rc
}
trap cleanup EXIT
id=$(readelf -n "$stripped" | awk '/Build ID/ {print $3}')
[ -n "$id" ] || { echo "no build-id in $stripped" >&2; exit 1; }
mkdir -p "$tmp/srv/buildid/$id" "$tmp/cache"
cp "$debug" "$tmp/srv/buildid/$id/debuginfo"
# port 0: the kernel picks a free one, which the server writes down
python3 -c '
import functools, http.server, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
open(sys.argv[2], "w").write(str(s.server_address[1]))
s.serve_forever()' "$tmp/srv" "$tmp/port" 2>"$tmp/server.log" &
server=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
[ -s "$tmp/port" ] || { echo "the server did not start" >&2; cat "$tmp/server.log" >&2; exit 1; }
export DEBUGINFOD_URLS="http://127.0.0.1:$(cat "$tmp/port")"
export DEBUGINFOD_CACHE_PATH="$tmp/cache"
export DEBUGINFOD_TIMEOUT=20
"$test_bin"
grep -q "GET /buildid/$id/debuginfo" "$tmp/server.log" || {
	echo "the server never saw the request" >&2; cat "$tmp/server.log" >&2; exit 1; }
