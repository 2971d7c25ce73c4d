#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# schedprof top, driven under tmux: it refreshes each interval (the interval counter
# advances), keys switch the view (1 2 3, Tab), the sort (s) and pause (p: the screen stays);
# q quits with exit 0, the terminal's main screen back, and no BPF program or link of it left
# (the ids its fds held are gone from the kernel). Ctrl-C and SIGTERM end it the same way, a
# fatal signal (SIGQUIT) gives the terminal back first, Ctrl-Z hands it to the shell; with
# -- COMMAND, q ends the command (exit 0) and Ctrl-C exits with the command's status (130),
# as trace does. Not a terminal: exit 1 with a line that says so.
. "$(dirname "$0")/lib.sh"
require_bpf
command -v tmux >/dev/null || skip_or_fail "needs tmux (scripts/setup.sh --tests installs it)"
command -v bpftool >/dev/null || skip_or_fail "needs bpftool"

# not a terminal
"$SCHEDPROF" top -a -d 1 < /dev/null > "$TMP/nottty.out" 2> "$TMP/nottty.err"
rc=$?
[ $rc = 1 ] || fail "top without a terminal exited $rc, expected 1"
grep -q 'terminal' "$TMP/nottty.err" || fail "top without a terminal says: $(cat "$TMP/nottty.err")"
pass "not a terminal: exit 1, '$(head -c 80 "$TMP/nottty.err")...'"
# usage errors (2): top draws, it writes no file or format; -i's range
for args in "-f json -a" "-o $TMP/x -a" "-i 0.01 -a" "-i -1 -a" "-x"; do
	# shellcheck disable=SC2086
	"$SCHEDPROF" top $args > /dev/null 2> "$TMP/usage.err"
	rc=$?
	[ $rc = 2 ] || fail "top $args exited $rc, expected 2"
	grep -q '^schedprof top: ' "$TMP/usage.err" || fail "top $args: $(cat "$TMP/usage.err")"
done
pass "usage errors exit 2 and name top"

SOCK="schedprof-test-$$"
tm() { tmux -L "$SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
pane() { tm capture-pane -p -t "$SESSION"; }
# wait_pane REGEX [SECONDS]: until the pane shows it
wait_pane() {
	for _ in $(seq $((${2:-5} * 10))); do
		pane | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	pane >&2
	fail "the pane never showed /$1/"
}
interval_no() { pane | sed -n 's/.*   interval \([0-9]*\) (.*/\1/p' | head -n 1; }
# wait_interval N [SECONDS]: until the screen shows interval N or later; prints the one shown
wait_interval() {
	local n
	for _ in $(seq $((${2:-5} * 10))); do
		n=$(interval_no)
		[ -n "$n" ] && [ "$n" -ge "$1" ] && { echo "$n"; return 0; }
		sleep 0.1
	done
	echo "${n:-none}"
	return 1
}
# start_top NAME ARGS...: top in a new tmux session; its pid in $TMP/NAME.pid, status in NAME.exit
start_top() {
	local name=$1
	shift
	rm -f "$TMP/$name.pid" "$TMP/$name.exit"
	tm new-session -d -s "$name" -x 160 -y 50 \
		"sh -c 'ulimit -c 0; echo \$\$ > $TMP/$name.pid; exec $SCHEDPROF top $*'; echo \$? > $TMP/$name.exit; sleep 600"
	for _ in $(seq 100); do [ -s "$TMP/$name.pid" ] && break; sleep 0.05; done
	[ -s "$TMP/$name.pid" ] || fail "top did not start"
	wait_attached "$(cat "$TMP/$name.pid")"
}
# wait_exit NAME: its exit status
wait_exit() {
	for _ in $(seq 150); do
		[ -s "$TMP/$1.exit" ] && { cat "$TMP/$1.exit"; return 0; }
		sleep 0.1
	done
	fail "top ($1) did not exit within 15 s"
}
# bpf_ids PID: "prog ID" and "link ID" of every BPF fd the process holds
bpf_ids() {
	local f
	for f in /proc/$1/fdinfo/*; do
		grep -E '^link_id:' "$f" 2>/dev/null | awk '{print "link", $2}'
		case $(readlink "/proc/$1/fd/${f##*/}" 2>/dev/null) in
		*bpf-prog*) grep -E '^prog_id:' "$f" | awk '{print "prog", $2}' ;;
		esac
	done
}
# assert_gone IDS_FILE: each program and link is gone from the kernel (which frees them a
# moment after the last fd closes: up to 3 s)
assert_gone() {
	local kind id left
	for _ in $(seq 30); do
		left=0
		while read -r kind id; do
			bpftool "$kind" show id "$id" >/dev/null 2>&1 && left=1
		done < "$1"
		[ $left = 0 ] && return 0
		sleep 0.1
	done
	while read -r kind id; do
		bpftool "$kind" show id "$id" >/dev/null 2>&1 && echo "left: $kind $id" >&2
	done < "$1"
	fail "BPF programs or links left attached after top exited"
}

SESSION=top
start_top top -i 0.3 -a
P=$(cat "$TMP/top.pid")
bpf_ids "$P" > "$TMP/ids"
grep -q '^prog ' "$TMP/ids" && grep -q '^link ' "$TMP/ids" || fail "no BPF program or link found in top's fds"
wait_pane '^schedules: ' 5
wait_pane '\[1 schedules\]'
n1=$(interval_no)
t1=$(date +%s%N)
n2=$(wait_interval $((n1 + 3)) 6) || fail "the interval counter went from $n1 to $n2 in 6 s at -i 0.3"
pass "refreshes: interval $n1 -> $n2 in $((($(date +%s%N) - t1) / 1000000)) ms at -i 0.3"
[ "$(tm display -p -t top '#{alternate_on}')" = 1 ] || fail "top does not draw on the alternate screen"
[ "$(pane | wc -l)" -le 50 ] || fail "more lines than the terminal has"

tm send-keys -t top 2
wait_pane '\[2 profile\]' 2
wait_pane '^profile: ' 2
tm send-keys -t top 3
wait_pane '\[3 locks\]' 2
wait_pane '^locks: ' 2
tm send-keys -t top Tab
wait_pane '\[1 schedules\]' 2
wait_pane '^schedules: ' 2
pass "views switch: 2 profile, 3 locks, Tab back to schedules"
tm send-keys -t top s
wait_pane 'sort: time' 2
# the schedules rows are now by off-CPU time, descending (the third column)
pane | python3 -c '
import re, sys
unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
rows, on = [], False
for line in sys.stdin:
    f = line.split()
    if f[:3] == ["COUNT", "SHARE", "OFF-CPU"]:
        on = True
        continue
    if on:
        if f and not f[0].isdigit():
            continue  # a note under a row: "woken by ...", sleeps in progress
        m = re.fullmatch(r"([0-9.]+)(ns|us|ms|s)", f[2]) if len(f) > 2 else None
        if not m:
            break
        rows.append(float(m.group(1)) * unit[m.group(2)])
if len(rows) < 2 or rows != sorted(rows, reverse=True):
    sys.exit("not by off-CPU time: %r" % rows)
' || fail "sort: time does not rank the rows by off-CPU time"
tm send-keys -t top s
wait_pane 'sort: max' 2
pass "s cycles the sort"
tm send-keys -t top p
wait_pane '\[paused\]' 2
n1=$(interval_no)
sleep 1
n2=$(interval_no)
[ "$n1" = "$n2" ] || fail "paused, the screen still went from interval $n1 to $n2"
tm send-keys -t top p
n3=$(wait_interval $((n2 + 1)) 5) || fail "unpaused, the interval stays at $n3"
pane | grep -q '\[paused\]' && fail "still [paused] after p again"
pass "p pauses the screen ($n1 = $n2) and resumes it ($n3)"
tm resize-window -t top -x 100 -y 20
sleep 0.5
tm send-keys -t top 1
sleep 0.5
[ "$(pane | grep -c .)" -le 20 ] || fail "after a resize to 20 rows, more lines are drawn"

tm send-keys -t top q
rc=$(wait_exit top)
[ "$rc" = 0 ] || fail "q: exit status $rc"
[ "$(tm display -p -t top '#{alternate_on}')" = 0 ] || fail "the terminal is still on the alternate screen"
kill -0 "$P" 2>/dev/null && fail "top ($P) still runs after q"
assert_gone "$TMP/ids"
pass "q: exit 0, main screen back, $(wc -l < "$TMP/ids") BPF programs and links gone"

# Ctrl-C: the same clean end
SESSION=intr
start_top intr -i 0.3 -a --views schedules
P=$(cat "$TMP/intr.pid")
bpf_ids "$P" > "$TMP/ids2"
wait_pane '^schedules: ' 5
tm send-keys -t intr C-c
rc=$(wait_exit intr)
[ "$rc" = 0 ] || fail "Ctrl-C: exit status $rc"
[ "$(tm display -p -t intr '#{alternate_on}')" = 0 ] || fail "Ctrl-C: still on the alternate screen"
assert_gone "$TMP/ids2"
pass "Ctrl-C: exit 0, main screen back, BPF gone"

# SIGTERM: a clean end too; SIGQUIT (fatal): the terminal back before the core dump
for sig in TERM QUIT; do
	SESSION=sig$sig
	start_top "sig$sig" -i 0.3 -a --views schedules
	P=$(cat "$TMP/sig$sig.pid")
	bpf_ids "$P" > "$TMP/ids$sig"
	wait_pane '^schedules: ' 5
	kill -"$sig" "$P"
	rc=$(wait_exit "sig$sig")
	want=0
	[ $sig = QUIT ] && want=131
	[ "$rc" = $want ] || fail "SIG$sig: exit status $rc, expected $want"
	[ "$(tm display -p -t "sig$sig" '#{alternate_on}')" = 0 ] || fail "SIG$sig: still on the alternate screen"
	assert_gone "$TMP/ids$sig"
done
pass "SIGTERM: exit 0; SIGQUIT: exit 131; both: main screen back, BPF gone"

# Ctrl-Z hands the terminal back to the shell, fg takes it again
SESSION=jobs
# bash says "Stopped" in the C locale only (de_DE: "Angehalten")
tm new-session -d -s jobs -x 160 -y 50 "env LC_ALL=C bash --norc --noprofile -i"
sleep 0.5
tm send-keys -t jobs "$SCHEDPROF top -i 0.3 -a --views schedules" Enter
wait_pane '^schedules: ' 8
tm send-keys -t jobs C-z
wait_pane 'Stopped' 3
[ "$(tm display -p -t jobs '#{alternate_on}')" = 0 ] || fail "Ctrl-Z: still on the alternate screen"
tm send-keys -t jobs fg Enter
wait_pane '^schedules: ' 5
[ "$(tm display -p -t jobs '#{alternate_on}')" = 1 ] || fail "fg: top did not take the screen again"
tm send-keys -t jobs q
sleep 1
tm send-keys -t jobs 'echo "status=$?"' Enter
wait_pane '^status=0$' 5
pass "Ctrl-Z gives the terminal back, fg takes it again, q exits 0"

# -- COMMAND: q ends the command
SESSION=cmd
start_top cmd -i 0.3 --views schedules -- "$SPWORK" ignore INT 600
wait_pane 'top: command .*spwork' 5
P=$(cat "$TMP/cmd.pid")
C=$(pgrep -P "$P" | head -n 1)
[ -n "$C" ] || fail "no command under top"
sleep 0.5
tm send-keys -t cmd q
rc=$(wait_exit cmd)
[ "$rc" = 0 ] || fail "q with -- COMMAND: exit status $rc"
kill -0 "$C" 2>/dev/null && fail "the command ($C) still runs after q"
pass "q with -- COMMAND: exit 0, the command ended"

# -- COMMAND and Ctrl-C: the terminal's SIGINT reaches the command, which dies of it, and top
# exits as trace does, with the command's status (130); q above is top's own quit (0)
SESSION=cmdint
start_top cmdint -i 0.3 --views schedules -- sleep 600
wait_pane 'top: command .*sleep' 5
P=$(cat "$TMP/cmdint.pid")
C=$(pgrep -P "$P" | head -n 1)
[ -n "$C" ] || fail "no command under top"
sleep 0.5
tm send-keys -t cmdint C-c
rc=$(wait_exit cmdint)
[ "$rc" = 130 ] || fail "Ctrl-C with -- COMMAND: exit status $rc, expected 130"
kill -0 "$C" 2>/dev/null && fail "the command ($C) still runs after Ctrl-C"
[ "$(tm display -p -t cmdint '#{alternate_on}')" = 0 ] || fail "Ctrl-C: still on the alternate screen"
pass "Ctrl-C with -- COMMAND: exit 130 (the command's SIGINT), the command ended"
