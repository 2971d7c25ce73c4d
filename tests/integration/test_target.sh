#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The traced set at its edges:
# - `-- COMMAND`: nothing before the command's exec is counted (the launcher's gate wait is
#   schedprof's), and its final do_exit switch always is;
# - `-p PID` keeps tracing after the main thread exits while other threads run;
# - `-p TID` of a thread traces its process and says so;
# - tasks asleep when -p attached still get their final do_exit switch counted;
# - a target gone before attach is an error that says so.
. "$(dirname "$0")/lib.sh"
require_bpf
PR=$(pipe_read_fn)

# rows as "caller comm count" lines
rows() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["schedules"]["callers"]:
    for comm, c in r["comms"].items():
        print(r["caller"], comm, c["count"])
PY
}

# 1. 30 runs of /bin/true: no row of comm schedprof, exactly one do_exit (true's own). Each
#    run is a start-up (BPF load) of its own: an emulated CPU (SCHEDPROF_TEST_SLOW) makes
#    fewer of them, each checked the same way
runs=$((30 / SLOW)); [ "$runs" -ge 3 ] || runs=3
for i in $(seq $runs); do
	"$SCHEDPROF" trace --views schedules -f json -o "$TMP/true.json" -- /bin/true \
		|| fail "trace -- /bin/true exited $?"
	rows "$TMP/true.json" > "$TMP/true.rows"
	if grep -q ' schedprof ' "$TMP/true.rows"; then
		cat "$TMP/true.rows" >&2
		fail "run $i counted the launcher's own switches (comm schedprof)"
	fi
	n=$(caller_count "$TMP/true.json" do_exit true)
	[ "$n" = 1 ] || { cat "$TMP/true.rows" >&2; fail "run $i: do_exit of true = $n, expected 1"; }
done
pass "$runs runs of trace -- /bin/true: no switch before exec, one do_exit each"

# 2. -p PID whose main thread exits first: the other threads are traced to their end
N=2000
"$SPWORK" threads "$TMP/go" $N &
work=$!
"$SCHEDPROF" trace -p $work -d 60 --views schedules -f json -o "$TMP/thr.json" 2> "$TMP/err" &
sp=$!
wait_attached $sp
sleep 0.3 # the /proc walk that adds the process follows the attach
touch "$TMP/go"
wait $work || fail "workload failed"
wait $sp || { cat "$TMP/err"; fail "schedprof -p exited $?"; }
n=$(caller_count "$TMP/thr.json" "$PR" sp_thr_reader)
[ "$n" = $N ] || fail "-p PID after its main thread exited: $PR = $n, expected $N"
pass "-p PID after its main thread exited: $PR = $n"

# 3. -p TID of a non-leader thread: its process is traced, and one line says so
rm -f "$TMP/go"
"$SPWORK" threads "$TMP/go" $N &
work=$!
tid=
for _ in $(seq 100); do
	for t in /proc/$work/task/*; do
		[ "$(cat $t/comm 2>/dev/null)" = sp_thr_reader ] && tid=${t##*/}
	done
	[ -n "$tid" ] && break
	sleep 0.02
done
[ -n "$tid" ] || fail "no sp_thr_reader thread in $work"
"$SCHEDPROF" trace -p $tid -d 60 --views schedules -f json -o "$TMP/tid.json" 2> "$TMP/err" &
sp=$!
wait_attached $sp
sleep 0.3
touch "$TMP/go"
wait $work || fail "workload failed"
wait $sp || { cat "$TMP/err"; fail "schedprof -p TID exited $?"; }
grep -q "^schedprof: warning: $tid is a thread of process $work: tracing process $work" "$TMP/err" \
	|| { cat "$TMP/err"; fail "-p TID did not say it traces the process"; }
[ "$(wc -l < "$TMP/err")" = 1 ] || { cat "$TMP/err"; fail "-p TID: more than one line"; }
[ "$(jget "$TMP/tid.json" 'd["target"]["pids"]')" = "[$work]" ] || fail "-p TID: target.pids"
n=$(caller_count "$TMP/tid.json" "$PR" sp_thr_reader)
[ "$n" = $N ] || fail "-p TID: $PR = $n, expected $N"
pass "-p TID traces its process: $PR = $n, one line"

# 4. tasks asleep since before attach: their final do_exit is counted (3 sleep + 1 sh); they
#    sleep past the attach: 2 s, x SLOW for an emulated CPU's slow start-up
sh -c "sleep $((2 * SLOW)) & sleep $((2 * SLOW)) & sleep $((2 * SLOW)) & wait" &
work=$!
sleep 0.2 # the three sleeps are forked, and asleep
"$SCHEDPROF" trace -p $work -d 60 --views schedules -f json -o "$TMP/sleep.json" 2> "$TMP/err" &
sp=$!
wait $work
wait $sp || { cat "$TMP/err"; fail "schedprof -p exited $?"; }
n=$(caller_count "$TMP/sleep.json" do_exit sleep)
[ "$n" = 3 ] || { rows "$TMP/sleep.json" >&2; fail "do_exit of the sleeps = $n, expected 3"; }
n=$(caller_count "$TMP/sleep.json" do_exit)
[ "$n" = 4 ] || { rows "$TMP/sleep.json" >&2; fail "do_exit = $n, expected 4"; }
pass "tasks asleep at attach: do_exit = 4"

# threads asleep since attach, killed together by exit_group: each final switch counts
# (a thread that reaches the exit tracepoint after the last one must still be traced)
K=16
for run in 1 2 3; do
	rm -f "$TMP/go"
	"$SPWORK" sleepers "$TMP/go" $K &
	work=$!
	sleep 0.2
	"$SCHEDPROF" trace -p $work -d 60 --views schedules -f json -o "$TMP/grp.json" 2> "$TMP/err" &
	sp=$!
	wait_attached $sp
	sleep 0.3
	touch "$TMP/go"
	wait $work
	wait $sp || { cat "$TMP/err"; fail "schedprof -p exited $?"; }
	n=$(caller_count "$TMP/grp.json" do_exit)
	[ "$n" = $((K + 1)) ] || { rows "$TMP/grp.json" >&2; fail "exit_group of $K sleeping threads + main: do_exit = $n"; }
done
pass "exit_group of $K threads asleep since attach: do_exit = $((K + 1)), 3 runs"

# 5. a target gone before attach: exit 1 and one line that says so, no report (the second
#    one lives 10 ms: gone before a start-up of ~20 ms attaches; 30 ms outlived a faster one)
for d in 0 0.01; do
	sleep $d &
	work=$!
	[ "$d" = 0 ] && wait $work
	code=0
	"$SCHEDPROF" trace -p $work -o "$TMP/gone.json" 2> "$TMP/err" || code=$?
	wait
	[ "$code" = 1 ] || { cat "$TMP/err"; fail "-p of a gone process exited $code, expected 1"; }
	grep -Eq "^schedprof: (no such process: $work|process $work exited before tracing began: nothing was traced)$" \
		"$TMP/err" || { cat "$TMP/err"; fail "-p of a gone process: no line says so"; }
	[ ! -s "$TMP/gone.json" ] || fail "-p of a gone process wrote a report"
done
pass "-p of a process gone before attach: exit 1, one line"

# 6. Open files: schedprof raises its own soft RLIMIT_NOFILE to the hard limit (descriptors
#    kept for symbol names, perf events per CPU), and the command it launches gets the
#    limit it would have had without schedprof.
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$hard" -gt 256 ] || fail "hard open-files limit $hard: cannot test"
out=$( (ulimit -Sn 256; "$SCHEDPROF" trace --views schedules -o /dev/null -- \
	sh -c 'echo "$(ulimit -Sn) $(awk "/^Max open files/ { print \$4 }" /proc/$PPID/limits)"') ) \
	|| fail "trace -- sh (limits) exited $?"
read -r child mine <<<"$out"
[ "$child" = 256 ] || fail "the launched command's soft open-files limit is $child, not the caller's 256"
[ "$mine" = "$hard" ] || fail "schedprof's soft open-files limit is $mine, not the hard limit $hard"
pass "open files: schedprof's soft limit raised to $hard, the command keeps 256"
