#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# HTTP answers are read up to a bound (docs/security.md): a server that answers
# with a 200 MB body, as an error (500) or as rows (200), takes neither the agent nor
# `report --from` past the 32 MB goal. report --from says which in one line (exit 4); the
# agent keeps its intervals in the spool (exit 0). The agent's case needs BPF (root).
. "$(dirname "$0")/lib.sh"
SRV=
trap '[ -n "$SRV" ] && kill $SRV 2>/dev/null; rm -rf "$TMP"' EXIT
[ -x /usr/bin/time ] || skip_or_fail "needs /usr/bin/time (package time) for the peak RSS"

# serve MODE: a fake_http.py server in MODE; its port in $PORT
serve() {
	[ -n "$SRV" ] && kill $SRV 2>/dev/null
	rm -f "$TMP/port"
	python3 "$(dirname "$0")/fake_http.py" "$1" "$TMP/port" &
	SRV=$!
	for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
	[ -s "$TMP/port" ] || fail "the $1 server did not start"
	PORT=$(cat "$TMP/port")
}
# rss_of NAME ARGS...: runs schedprof ARGS; its exit status in $RC, the peak RSS (KiB) in $RSS
rss_of() {
	local name=$1
	shift
	RC=0
	timeout 120 /usr/bin/time -f %M -o "$TMP/$name.rss" "$SCHEDPROF" "$@" > "$TMP/$name.out" \
		2> "$TMP/$name.err" || RC=$?
	RSS=$(tail -1 "$TMP/$name.rss")
}
LIMIT_KB=$((32 * 1024))

for mode in big500 big200; do
	serve $mode
	rss_of "report-$mode" report --from "clickhouse://127.0.0.1:$PORT/db"
	[ "$RC" = 4 ] || { cat "$TMP/report-$mode.err" >&2; fail "report --from, $mode: exit $RC, expected 4"; }
	[ "$(wc -l < "$TMP/report-$mode.err")" = 1 ] || { cat "$TMP/report-$mode.err" >&2; fail "report --from, $mode: not one line"; }
	[ "$RSS" -le $LIMIT_KB ] || fail "report --from, $mode: peak RSS $RSS KiB, more than 32 MB"
	pass "report --from, a 200 MB answer ($mode): exit 4, peak RSS $RSS KiB: $(cat "$TMP/report-$mode.err")"
done
grep -q "larger than" "$TMP/report-big200.err" || fail "a 200 MB answer of rows is not said to be too large"

if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	serve big500
	rss_of agent agent -a -i 0.5 -d 4 --views schedules --spool "$TMP/sp" \
		--sink "clickhouse://127.0.0.1:$PORT/db"
	[ "$RC" = 0 ] || { cat "$TMP/agent.err" >&2; fail "agent, a 200 MB error answer: exit $RC"; }
	grep -q "cannot send interval" "$TMP/agent.err" || fail "agent: the error answer is not said: $(cat "$TMP/agent.err")"
	[ "$RSS" -le $LIMIT_KB ] || fail "agent, a 200 MB error answer: peak RSS $RSS KiB, more than 32 MB"
	pass "agent, a 200 MB error answer to every INSERT: exit 0, peak RSS $RSS KiB"
else
	skip_or_fail "the agent's case needs root and BPF"
fi
