#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Exit codes and messages of the CLI.
. "$(dirname "$0")/lib.sh"
"$SCHEDPROF" --version | grep -q '^schedprof [0-9]' || fail "--version"
"$SCHEDPROF" --help | grep -q 'trace' || fail "--help"
"$SCHEDPROF" trace --help | grep -q -- '--stacks' || fail "trace --help"
"$SCHEDPROF" trace --bogus >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "unknown option exits $rc, expected 2"
"$SCHEDPROF" trace -n abc -a >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "bad value exits $rc, expected 2"
"$SCHEDPROF" trace -d -1 >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "negative duration exits $rc, expected 2"
"$SCHEDPROF" frobnicate >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "unknown command exits $rc, expected 2"
pass "usage errors exit 2"
# one table of the tracing commands' options: the agent's own are neither trace's nor top's,
# and the agent takes trace's (its messages name the agent)
for cmd in trace top; do
	# -d 0 is refused too: a table that let --spool through fails here, it does not trace
	"$SCHEDPROF" $cmd --spool "$TMP/sp" -d 0 > /dev/null 2> "$TMP/err"; rc=$?
	[ $rc = 2 ] || fail "$cmd --spool exits $rc, expected 2"
	grep -qx "schedprof $cmd: unknown or incomplete option '--spool'" "$TMP/err" ||
		fail "$cmd --spool: $(cat "$TMP/err")"
done
"$SCHEDPROF" agent --max-targets 0 > /dev/null 2> "$TMP/err"; rc=$?
[ $rc = 2 ] || fail "agent --max-targets 0 exits $rc, expected 2"
grep -qx "schedprof agent: --max-targets: 0 is out of range (1..16777216)" "$TMP/err" ||
	fail "agent --max-targets 0: $(cat "$TMP/err")"
pass "trace and top refuse the agent's options; the agent takes trace's"
require_bpf
"$SCHEDPROF" trace -- false > /dev/null; rc=$?
[ $rc = 1 ] || fail "-- false exits $rc, expected 1"
"$SCHEDPROF" trace -- /nonexistent > /dev/null 2> "$TMP/err"; rc=$?
[ $rc = 127 ] || fail "-- /nonexistent exits $rc, expected 127"
[ "$(wc -l < "$TMP/err")" = 1 ] || fail "expected one error line, got: $(cat "$TMP/err")"
grep -q 'cannot execute /nonexistent' "$TMP/err" || fail "message: $(cat "$TMP/err")"
sh -c 'exit 0' & dead=$!; wait $dead
"$SCHEDPROF" trace -p $dead > /dev/null 2> "$TMP/err"; rc=$?
[ $rc = 1 ] || fail "-p dead pid exits $rc, expected 1"
grep -qx "schedprof: no such process: $dead" "$TMP/err" || fail "message: $(cat "$TMP/err")"
pass "-- false -> 1, -- /nonexistent -> 127, -p dead -> 1"
# -v: the start-up steps on stderr, the report unchanged on stdout; -vv: libbpf's lines too
"$SCHEDPROF" trace --views schedules -- true > /dev/null 2> "$TMP/err" || fail "quiet run failed"
[ ! -s "$TMP/err" ] || fail "a run without -v wrote to stderr: $(cat "$TMP/err")"
"$SCHEDPROF" trace -v --views schedules -- true > /dev/null 2> "$TMP/err" || fail "-v run failed"
grep -q '^schedprof: tracing command true: attached in [0-9.]* ms$' "$TMP/err" ||
	fail "-v: $(cat "$TMP/err")"
grep -q '^libbpf: ' "$TMP/err" && fail "-v printed libbpf's messages"
"$SCHEDPROF" trace -vv --views schedules -- true > /dev/null 2> "$TMP/err" || fail "-vv run failed"
grep -q '^libbpf: ' "$TMP/err" || fail "-vv printed no libbpf message"
pass "-v is verbose, -vv adds libbpf's messages"
# kallsyms unreadable (an empty file mounted over it in a mount namespace of our own): the
# report is still written, kernel functions as addresses, and one line says so; without the
# boot's fold cache (an empty /run) the callers are [unknown] and the line says that too
if command -v unshare >/dev/null; then
	for run in keep empty; do
		unshare -m sh -c '[ "$1" = keep ] || mount -t tmpfs none /run || exit 99
			mount --bind /dev/null /proc/kallsyms || exit 99
			exec "$2" trace --views schedules,profile -f json -o "$3" -- sleep 0.2' \
			sh "$run" "$SCHEDPROF" "$TMP/nosyms.json" 2> "$TMP/err"; rc=$?
		[ $rc != 99 ] || skip_or_fail "cannot mount in a new mount namespace"
		[ $rc = 0 ] || fail "without kallsyms ($run /run): exit $rc: $(cat "$TMP/err")"
		[ "$(wc -l < "$TMP/err")" = 1 ] || fail "without kallsyms: not one line: $(cat "$TMP/err")"
		grep -q '^schedprof: warning: cannot read /proc/kallsyms: .*: kernel functions are shown as addresses' \
			"$TMP/err" || fail "without kallsyms: $(cat "$TMP/err")"
		t=$(jget "$TMP/nosyms.json" 'd["schedules"]["total"]')
		[ "$t" -gt 0 ] || fail "without kallsyms ($run /run): no schedules in the report"
	done
	grep -q 'callers of schedule() and locks as \[unknown\]' "$TMP/err" ||
		fail "without the fold cache: $(cat "$TMP/err")"
	pass "an unreadable /proc/kallsyms: the report is written, with one warning"
fi
# not root: one line naming what is needed, exit 1 (setpriv drops every capability)
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$SCHEDPROF" trace -- true > /dev/null 2> "$TMP/err"; rc=$?
	[ $rc = 1 ] || fail "unprivileged exits $rc, expected 1"
	grep -q 'CAP_BPF' "$TMP/err" || fail "message: $(cat "$TMP/err")"
	pass "unprivileged -> 1: $(cat "$TMP/err")"
fi
# a comm with quotes, a backslash, a newline and an invalid UTF-8 byte: valid JSON, and the
# table shows it too
name=$(printf 'a"b\\c\nd\377e')
"$SCHEDPROF" trace -f json -o "$TMP/comm.json" -- "$SPWORK" comm "$name" || fail "comm run failed"
got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = set()
for r in d["schedules"]["callers"]:
    names.update(r["comms"].keys())
want = "a\"b\\c\nd\ufffde"
print("found" if want in names else "missing: %r" % sorted(names))' "$TMP/comm.json") || fail "JSON with an odd comm does not parse"
[ "$got" = found ] || fail "odd comm: $got"
pass "an odd comm is escaped into valid JSON"
# SIGINT during -a ends in the full report
"$SCHEDPROF" trace -a -f json -o "$TMP/int.json" & sp=$!
wait_attached $sp
sleep 0.5; kill -INT $sp; wait $sp; rc=$?
[ $rc = 0 ] || fail "SIGINT exits $rc"
t=$(jget "$TMP/int.json" 'd["schedules"]["total"]')
[ "$t" -gt 0 ] || fail "no schedules after SIGINT"
pass "SIGINT -> report with $t schedules"
# kill -9 leaves nothing attached: the programs this process held are gone with it
# (their ids come from its fds, since other tracers may run at the same time)
"$SCHEDPROF" trace -a > /dev/null & sp=$!
trap 'kill -9 $sp 2>/dev/null; rm -rf "$TMP"' EXIT
wait_attached $sp
ids=$(cat /proc/$sp/fdinfo/* 2>/dev/null | sed -n 's/^prog_id:[[:space:]]*//p' | sort -u)
[ -n "$ids" ] || fail "no BPF program fd in schedprof ($sp)"
kill -9 $sp; wait $sp 2>/dev/null
sleep 0.5
for id in $ids; do
	bpftool prog show id "$id" >/dev/null 2>&1 && fail "program $id is still loaded after kill -9"
done
pass "kill -9 leaves none of its $(echo $ids | wc -w) programs loaded"
