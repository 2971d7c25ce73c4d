#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# How an agent ends (docs/agent.md, docs/exit-status.md):
#   closed stdout  `agent --sink ndjson:- | head -2` ends the agent (exit 141), and the
#                  interval the reader left half-read is not sent again by the next start;
#   silent server  a server that accepts and never answers does not hold the end past the
#                  sender's 5 s;
#   -- COMMAND     the agent ends with the command and exits with its status; a loss (3) wins
#                  over the command's 0, a failed command keeps its own status; --help says so.
. "$(dirname "$0")/lib.sh"
require_bpf
SRV=
trap '[ -n "$SRV" ] && kill $SRV 2>/dev/null; rm -rf "$TMP"' EXIT

# ---- a closed stdout sink ends the agent ----
SP=$TMP/sp-pipe
start=$(date +%s%N)
timeout 30 bash -c '"$1" agent -a -i 0.3 --views schedules --spool "$2" --sink ndjson:- \
	2> "$3"; echo $? > "$4"' _ "$SCHEDPROF" "$SP" "$TMP/pipe.err" "$TMP/pipe.rc" | head -2 > "$TMP/head.out"
ms=$((($(date +%s%N) - start) / 1000000))
[ -s "$TMP/pipe.rc" ] || fail "agent --sink ndjson:- | head -2 did not end within 30 s"
[ "$(cat "$TMP/pipe.rc")" = 141 ] || { cat "$TMP/pipe.err" >&2; fail "closed stdout: exit $(cat "$TMP/pipe.rc"), expected 141"; }
[ "$(wc -l < "$TMP/head.out")" = 2 ] || fail "head got $(wc -l < "$TMP/head.out") lines"
grep -qi "error\|cannot send" "$TMP/pipe.err" && fail "closed stdout: not quiet: $(cat "$TMP/pipe.err")"
cut_seq=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["seq"])' "$TMP/head.out")
"$SCHEDPROF" agent -p $$ -i 0.3 -d 0.5 --views schedules --spool "$SP" \
	--sink "ndjson:$TMP/next.ndjson" 2> "$TMP/next.err" || fail "the next start: exit $? ($(cat "$TMP/next.err"))"
again=$(python3 - "$TMP/next.ndjson" "$cut_seq" <<'PY'
import json, sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["seq"] == int(sys.argv[2])))
PY
)
[ "$again" = 0 ] || fail "the next start sent $again rows of interval $cut_seq again, which head had read part of"
pass "agent --sink ndjson:- | head -2: ended in $ms ms, exit 141, quietly; interval $cut_seq not sent again"

# ---- a server that accepts and never answers: the end within the sender's 5 s ----
python3 "$(dirname "$0")/fake_http.py" silent "$TMP/port" &
SRV=$!
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
[ -s "$TMP/port" ] || fail "the silent server did not start"
"$SCHEDPROF" agent -a -i 0.3 --views schedules --spool "$TMP/sp-silent" \
	--sink "clickhouse://127.0.0.1:$(cat "$TMP/port")/db" 2> "$TMP/silent.err" &
apid=$!
wait_attached $apid
sleep 1.5 # the first interval's INSERT is waiting for its answer
start=$(date +%s%N)
kill -INT $apid
rc=0
wait $apid || rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
kill $SRV
SRV=
[ $rc = 0 ] || { cat "$TMP/silent.err" >&2; fail "silent server: exit $rc"; }
[ $ms -le 5500 ] || { cat "$TMP/silent.err" >&2; fail "silent server: the agent took $ms ms to end, more than the sender's 5 s"; }
grep -q "not sent yet stay in the spool" "$TMP/silent.err" || fail "silent server: what stays in the spool is not said"
pass "a server that never answers: the agent ended $ms ms after SIGINT (at most 5 s for the sender)"

# ---- -- COMMAND: its status, and a loss ----
# about 3 s of new processes: every view's rows in every interval
BUSY='for i in $(seq 60); do ls -l /usr/bin /usr/lib > /dev/null 2>&1; sleep 0.03; done'
status() { # status NAME ARGS...: the agent's exit status
	local name=$1 rc=0
	shift
	timeout 60 "$SCHEDPROF" agent "$@" 2> "$TMP/$name.err" > /dev/null || rc=$?
	echo $rc
}
"$SCHEDPROF" agent --help | tr '\n' ' ' | grep -q -- "-- COMMAND.*exits with the command's status" ||
	fail "agent --help does not say that -- COMMAND gives the command's status"
rc=$(status c0 --views schedules -i 0.2 --spool "$TMP/sp-c0" --sink ndjson:/dev/null -- true)
[ "$rc" = 0 ] || fail "-- true: exit $rc ($(cat "$TMP/c0.err"))"
rc=$(status c5 --views schedules -i 0.2 --spool "$TMP/sp-c5" --sink ndjson:/dev/null -- sh -c 'exit 5')
[ "$rc" = 5 ] || fail "-- sh -c 'exit 5': exit $rc ($(cat "$TMP/c5.err"))"
# a loss: 4K of spool for a busy command's intervals of every view and nowhere to send (port 1): intervals dropped
rc=$(status l0 -i 0.1 --spool "$TMP/sp-l0" --spool-limit 4K --sink clickhouse://127.0.0.1:1/db \
	-- sh -c "$BUSY")
[ "$rc" = 3 ] || fail "-- a busy command with intervals dropped: exit $rc, expected 3 ($(cat "$TMP/l0.err"))"
grep -q "intervals were dropped" "$TMP/l0.err" || fail "the loss is not said: $(cat "$TMP/l0.err")"
rc=$(status l5 -i 0.1 --spool "$TMP/sp-l5" --spool-limit 4K --sink clickhouse://127.0.0.1:1/db \
	-- sh -c "$BUSY; exit 5")
[ "$rc" = 5 ] || fail "a failed command with intervals dropped: exit $rc, expected its 5"
grep -q "intervals were dropped" "$TMP/l5.err" || fail "the loss is not said when the command failed: $(cat "$TMP/l5.err")"
pass "-- COMMAND: its status (0, 5); a loss gives 3 over its 0; a failed command keeps 5, the loss said"
