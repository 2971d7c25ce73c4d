#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A program the kernel refuses leaves out its view, not the run: one line names the program
# and the verifier's error, and the other views report as usual. A refused program every
# view needs ends the run with that line, not with libbpf's errno ("Permission denied" read
# as a privilege problem). SCHEDPROF_TEST_REFUSE=PROG loads PROG as a socket filter, which
# the verifier refuses (it calls helpers such a program cannot), or the kernel before it.
. "$(dirname "$0")/lib.sh"
require_bpf

# a view's program: that view is left out, the others run
SCHEDPROF_TEST_REFUSE=prof_sample "$SCHEDPROF" trace -a -d 1 -f json -o "$TMP/p.json" 2> "$TMP/p.err" ||
	fail "a refused profile program ended the run ($?): $(cat "$TMP/p.err")"
[ "$(wc -l < "$TMP/p.err")" = 1 ] || fail "expected one line on stderr, got: $(cat "$TMP/p.err")"
grep -q "^schedprof: warning: the kernel's verifier refused program prof_sample: .*helper.*: no profile view (-vv shows its log)$" "$TMP/p.err" ||
	fail "the refusal is not said as one: $(cat "$TMP/p.err")"
n=$(jget "$TMP/p.json" 'd["schedules"]["total"]')
[ "$n" -gt 0 ] || fail "the schedules view counted nothing beside the refused profile"
[ "$(jget "$TMP/p.json" '"profile" in d')" = False ] || fail "the refused profile view is in the report"
pass "prof_sample refused: $(cut -c1-100 "$TMP/p.err")...; schedules counted $n switches"

# the locks view says why it is unavailable in its report
SCHEDPROF_TEST_REFUSE=lock_end "$SCHEDPROF" trace -a -d 1 -f json -o "$TMP/l.json" 2> "$TMP/l.err" ||
	fail "a refused locks program ended the run ($?): $(cat "$TMP/l.err")"
grep -q "refused program lock_end: .*: no locks view" "$TMP/l.err" || fail "lock_end: $(cat "$TMP/l.err")"
why=$(jget "$TMP/l.json" 'd["locks"]["unavailable"]')
case $why in *"refused program lock_end"*) ;; *) fail "locks.unavailable is '$why'" ;; esac
pass "lock_end refused: locks.unavailable: $why"

# the only view selected: nothing can run
if SCHEDPROF_TEST_REFUSE=prof_sample "$SCHEDPROF" trace --views profile -a -d 1 -o /dev/null 2> "$TMP/o.err"; then
	fail "a run with its only view refused exited 0"
fi
grep -q "refused program prof_sample" "$TMP/o.err" && grep -q "none of the selected views can run" "$TMP/o.err" ||
	fail "only view refused: $(cat "$TMP/o.err")"
pass "only view refused: $(tail -1 "$TMP/o.err")"

# a program every view needs (-p follows forks): the run ends saying which program the
# kernel refused, not with an errno alone (a tracing program loaded as a socket filter is
# refused before the verifier runs: no log line)
rc=0
SCHEDPROF_TEST_REFUSE=sp_fork "$SCHEDPROF" trace -p $$ -d 1 -o /dev/null 2> "$TMP/c.err" || rc=$?
[ "$rc" = 1 ] || fail "a refused shared program: exit $rc, expected 1: $(cat "$TMP/c.err")"
grep -q "^schedprof: the kernel refused program sp_fork: Invalid argument (-vv shows its log)$" "$TMP/c.err" ||
	fail "shared program refused: $(cat "$TMP/c.err")"
grep -q "cannot load the BPF programs" "$TMP/c.err" && fail "still reads as an errno: $(cat "$TMP/c.err")"
pass "sp_fork refused: $(cat "$TMP/c.err")"
