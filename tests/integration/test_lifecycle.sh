#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The life of a trace and of its command:
# - SIGINT, SIGTERM and SIGHUP each give a complete report (-- COMMAND and -p);
# - a command that ignores the signal: one line, then a second signal SIGTERM, a third SIGKILL;
#   the terminal's Ctrl-C reaches the command once, not twice;
# - -d leaves the command running and says so (exit 0); --kill-on-end ends it;
# - schedprof killed before the command's exec: the command never runs;
# - kill -9 of schedprof: none of its BPF programs, links or maps is left, nor its command,
#   nor a temporary file of -o or --save;
# - two tracers at once both count a known workload exactly;
# - on a terminal without -d, one line says what is traced and "Ctrl-C to stop"; never
#   without a terminal.
. "$(dirname "$0")/lib.sh"
require_bpf
command -v script >/dev/null || skip_or_fail "needs script (util-linux) for a terminal"
command -v bpftool >/dev/null || skip_or_fail "needs bpftool"

# valid JSON with the schedules view read: valid_report FILE
valid_report() {
	python3 - "$1" <<'PY' || fail "$1 is not a complete report"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schedules"]["total"] >= 1, "no schedule counted"
assert d["target"]["mode"] in ("command", "pids"), d["target"]
PY
}

alive() { [ -d /proc/$1 ] && ! grep -q '^State:.*Z' /proc/$1/status 2>/dev/null; }

# the command schedprof launched: child_of SCHEDPROF_PID
child_of() { pgrep -P "$1" | head -1; }

# wait_exec SCHEDPROF_PID COMM: attached, and the command has exec'd COMM (at most 10 s)
wait_exec() {
	wait_attached $1
	for _ in $(seq 200); do
		[ "$(cat /proc/$(child_of $1)/comm 2>/dev/null)" = "$2" ] && return 0
		sleep 0.05
	done
	fail "the command of schedprof ($1) did not exec $2 within 10 s"
}

# 1. each stop signal: the command gets it, and the report is complete
for sig in INT TERM HUP; do
	code=0
	"$SCHEDPROF" trace --views schedules -f json -o "$TMP/$sig.json" -- sleep 30 2> "$TMP/err" &
	sp=$!
	wait_exec $sp sleep
	kill -$sig $sp
	wait $sp || code=$?
	want=$((128 + $(kill -l $sig)))
	[ "$code" = $want ] || { cat "$TMP/err"; fail "SIG$sig, -- sleep: exit $code, expected $want"; }
	[ ! -s "$TMP/err" ] || { cat "$TMP/err"; fail "SIG$sig, -- sleep: stderr not empty"; }
	valid_report "$TMP/$sig.json"
	[ "$(jget "$TMP/$sig.json" 'd["target"]["exit_status"]')" = $want ] \
		|| fail "SIG$sig: the report's exit_status"
	"$SPWORK" ignore none 30 & # wakes up every 10 ms
	work=$!
	"$SCHEDPROF" trace -p $work --views schedules -f json -o "$TMP/p$sig.json" 2> "$TMP/err" &
	sp=$!
	wait_attached $sp
	sleep 0.3
	kill -$sig $sp
	wait $sp || fail "SIG$sig, -p: exit $?, expected 0"
	kill $work
	wait $work 2>/dev/null
	valid_report "$TMP/p$sig.json"
done
pass "SIGINT, SIGTERM, SIGHUP: complete reports, exit 128+signal (--) or 0 (-p)"

# 2. a command that ignores SIGINT: one line, the second SIGINT sends SIGTERM
"$SCHEDPROF" trace --views schedules -f json -o "$TMP/ign.json" -- "$SPWORK" ignore INT 30 \
	2> "$TMP/err" &
sp=$!
wait_exec $sp sp_ignore
kill -INT $sp
sleep 1
alive $sp || fail "schedprof did not wait for the command that ignores SIGINT"
grep -q "^schedprof: waiting for .*spwork (pid [0-9]*) to exit; Ctrl-C again to terminate it$" \
	"$TMP/err" || { cat "$TMP/err"; fail "no line says schedprof waits for the command"; }
code=0
kill -INT $sp
wait $sp || code=$?
[ "$code" = 143 ] || { cat "$TMP/err"; fail "second SIGINT: exit $code, expected 143"; }
[ "$(wc -l < "$TMP/err")" = 1 ] || { cat "$TMP/err"; fail "more than one line"; }
valid_report "$TMP/ign.json"
pass "command ignoring SIGINT: one line, the second SIGINT ends it with SIGTERM (exit 143)"

# a command that ignores INT, TERM and HUP: the third signal sends SIGKILL
code=0
"$SCHEDPROF" trace --views schedules -f json -o "$TMP/ign3.json" \
	-- "$SPWORK" ignore INT,TERM,HUP 30 2> "$TMP/err" &
sp=$!
wait_exec $sp sp_ignore
for _ in 1 2 3; do
	kill -TERM $sp
	sleep 0.5
done
wait $sp || code=$?
[ "$code" = 137 ] || { cat "$TMP/err"; fail "third SIGTERM: exit $code, expected 137"; }
valid_report "$TMP/ign3.json"
pass "command ignoring every signal: the third one kills it (exit 137)"

# the terminal's Ctrl-C reaches the command in our process group: it is not sent again
cat > "$TMP/count.py" <<'PY'
import signal, time
n = 0
def on_int(sig, frame):
    global n
    n += 1
signal.signal(signal.SIGINT, on_int)
t = time.time()
while time.time() - t < 5:
    time.sleep(0.05)
print("SIGINTs:", n, flush=True)
PY
(sleep 2.5; printf '\003'; sleep 5) | script -qc "'$SCHEDPROF' trace --views schedules \
	-o /dev/null -- python3 '$TMP/count.py'" /dev/null > "$TMP/tty.out"
grep -q "SIGINTs: 1" "$TMP/tty.out" || { cat -A "$TMP/tty.out"; fail "Ctrl-C on the terminal: not 1 SIGINT"; }
pass "Ctrl-C on the terminal: the command gets one SIGINT"

# 3. -d with a command: left running (exit 0, one line with its pid), or --kill-on-end
code=0
"$SCHEDPROF" trace -d 0.5 --views schedules -f json -o "$TMP/d.json" -- sleep 30 2> "$TMP/err" \
	|| code=$?
[ "$code" = 0 ] || { cat "$TMP/err"; fail "-d 0.5 -- sleep 30: exit $code, expected 0"; }
pid=$(sed -n 's/^schedprof: sleep (pid \([0-9]*\)) is still running: -d ended the trace.*/\1/p' \
	"$TMP/err")
[ -n "$pid" ] || { cat "$TMP/err"; fail "-d: no line says the command is still running"; }
alive $pid || fail "-d: the command ($pid) was not left running"
kill $pid
valid_report "$TMP/d.json"
code=0
"$SCHEDPROF" trace -d 0.5 --kill-on-end --views schedules -f json -o "$TMP/k.json" -- sleep 30 \
	2> "$TMP/err" || code=$?
[ "$code" = 0 ] || { cat "$TMP/err"; fail "-d --kill-on-end: exit $code, expected 0"; }
[ ! -s "$TMP/err" ] || { cat "$TMP/err"; fail "-d --kill-on-end: stderr not empty"; }
[ "$(jget "$TMP/k.json" 'd["target"]["exit_status"]')" = 143 ] \
	|| fail "-d --kill-on-end: the command did not end by SIGTERM"
pass "-d leaves the command running and says so; --kill-on-end ends it; exit 0"

# 4. schedprof killed while it holds the command before exec: the command never runs
for opts in "" "-d 30"; do
	rm -f "$TMP/ran"
	SCHEDPROF_TEST_HOLD_MS=3000 "$SCHEDPROF" trace $opts -o /dev/null -- touch "$TMP/ran" &
	sp=$!
	wait_attached $sp
	child=$(child_of $sp)
	[ -n "$child" ] || fail "no held command under schedprof"
	kill -9 $sp
	wait $sp 2>/dev/null
	for _ in $(seq 40); do alive $child || break; sleep 0.05; done
	alive $child && fail "kill -9 before exec ($opts): the held command $child lives on"
	[ -e "$TMP/ran" ] && fail "kill -9 before exec ($opts): the command ran"
done
SCHEDPROF_TEST_HOLD_MS=3000 "$SCHEDPROF" trace -o /dev/null -- touch "$TMP/ran" 2> "$TMP/err" &
sp=$!
wait_attached $sp
code=0
kill -TERM $sp
wait $sp || code=$?
[ "$code" = 143 ] || fail "SIGTERM before exec: exit $code, expected 143"
grep -q "^schedprof: interrupted before touch started: nothing was traced$" "$TMP/err" \
	|| { cat "$TMP/err"; fail "SIGTERM before exec: no line"; }
[ -e "$TMP/ran" ] && fail "SIGTERM before exec: the command ran"
pass "schedprof gone before the command's exec: the command never runs"

# 5. kill -9 while tracing: no BPF object of ours is left, and the command dies too
"$SCHEDPROF" trace -o /dev/null -- sleep 30 &
sp=$!
wait_exec $sp sleep
child=$(child_of $sp)
ids=$(cat /proc/$sp/fdinfo/* 2>/dev/null | sed -n 's/^\(prog\|link\|map\)_id:\s*\([0-9]*\)/\1 \2/p' \
	| sort -u)
[ "$(echo "$ids" | grep -c '^prog ')" -ge 1 ] || fail "no BPF program found in schedprof's fds"
[ "$(echo "$ids" | grep -c '^link ')" -ge 1 ] || fail "no BPF link found in schedprof's fds"
[ "$(echo "$ids" | grep -c '^map ')" -ge 1 ] || fail "no BPF map found in schedprof's fds"
kill -9 $sp
wait $sp 2>/dev/null
left=
for _ in $(seq 50); do
	left=
	while read -r kind id; do
		bpftool $kind show id $id >/dev/null 2>&1 && left="$left $kind:$id"
	done <<< "$ids"
	[ -z "$left" ] && break
	sleep 0.1
done
[ -z "$left" ] || fail "kill -9 left BPF objects:$left"
for _ in $(seq 40); do alive $child || break; sleep 0.05; done
alive $child && fail "kill -9 left the command ($child) running, orphaned"
pass "kill -9: $(echo "$ids" | wc -l) BPF programs, links and maps gone, and the command"

# 6. two tracers at once count the same workload exactly
N=3000
rm -f "$TMP/go"
"$SPWORK" tree "$TMP/go" $N &
work=$!
"$SCHEDPROF" trace -p $work -d 60 --views schedules -f json -o "$TMP/a.json" 2> "$TMP/err.a" &
a=$!
"$SCHEDPROF" trace -p $work -d 60 --views schedules -f json -o "$TMP/b.json" 2> "$TMP/err.b" &
b=$!
wait_attached $a
wait_attached $b
sleep 0.3
touch "$TMP/go"
wait $work || fail "workload failed"
wait $a || { cat "$TMP/err.a"; fail "tracer A exited $?"; }
wait $b || { cat "$TMP/err.b"; fail "tracer B exited $?"; }
for f in a b; do
	n=$(caller_count "$TMP/$f.json" "$(pipe_read_fn)" sp_grandchild)
	[ "$n" = $N ] || fail "tracer $f: $(pipe_read_fn) = $n, expected $N"
done
pass "two tracers at once: each counts $N $(pipe_read_fn)"

# 7. the attached line: on a terminal without -d only
sleep 3 &
work=$!
script -qc "'$SCHEDPROF' trace -p $work -o /dev/null" /dev/null > "$TMP/tty.out"
grep -q "^schedprof: tracing PID $work and descendants; Ctrl-C to stop" "$TMP/tty.out" \
	|| { cat -A "$TMP/tty.out"; fail "no 'Ctrl-C to stop' line on a terminal"; }
[ "$(wc -l < "$TMP/tty.out")" = 1 ] || { cat -A "$TMP/tty.out"; fail "more than one line"; }
script -qc "'$SCHEDPROF' trace -d 0.3 -a -o /dev/null" /dev/null > "$TMP/tty.out"
[ ! -s "$TMP/tty.out" ] || { cat -A "$TMP/tty.out"; fail "-d on a terminal: a line was printed"; }
sleep 1 &
work=$!
"$SCHEDPROF" trace -p $work -o /dev/null 2> "$TMP/err"
[ ! -s "$TMP/err" ] || { cat "$TMP/err"; fail "stderr not a terminal: a line was printed"; }
pass "one 'Ctrl-C to stop' line on a terminal without -d; none with -d or without a terminal"

# 8. kill -9 of schedprof: no temporary file of -o or --save is left in their directory
mkdir "$TMP/out9"
"$SCHEDPROF" trace -a -o "$TMP/out9/run.txt" --save "$TMP/out9/run.json" 2>/dev/null &
sp=$!
wait_attached $sp
kill -9 $sp
wait $sp 2>/dev/null
[ -z "$(ls -A "$TMP/out9")" ] || fail "kill -9 left in the output directory: $(ls -A "$TMP/out9")"
pass "kill -9: nothing left of -o and --save in their directory"

# 9. a daemon the command started (setsid) outlives it: the trace ends with the command, and
# the report says how many of its processes were still running then (text and JSON)
"$SCHEDPROF" trace --views schedules -f json -o "$TMP/daemon.json" -- \
	sh -c 'setsid sleep 3 </dev/null >/dev/null 2>&1 & setsid sleep 3 </dev/null >/dev/null 2>&1 & sleep 0.2' ||
	fail "trace of a command leaving daemons exited $?"
[ "$(jget "$TMP/daemon.json" 'd["target"].get("still_running")')" = 2 ] ||
	fail "target.still_running is $(jget "$TMP/daemon.json" 'd["target"].get("still_running")'), expected 2"
"$SCHEDPROF" report "$TMP/daemon.json" | grep -q "^note: 2 processes of the command were still running when it ended" ||
	fail "the table does not say that 2 processes were left running: $("$SCHEDPROF" report "$TMP/daemon.json" | head -4)"
"$SCHEDPROF" trace --views schedules -f json -o "$TMP/nodaemon.json" -- sh -c 'sleep 0.1 & wait' ||
	fail "trace exited $?"
[ "$(jget "$TMP/nodaemon.json" '"still_running" in d["target"]')" = False ] ||
	fail "a command that waited for its children: still_running is written"
pass "2 setsid daemons left running: target.still_running = 2 and a note; none: no key"
