#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Targets in perf's habits:
# - `-a -- COMMAND`: the whole system for as long as COMMAND runs; the schedules count every
#   task, the profile's target class is the command's tree only.
. "$(dirname "$0")/lib.sh"
require_bpf
PR=$(pipe_read_fn)
[ -n "$SPWORK" ] || fail "SPWORK must name the workload binary"

# 1. -a -- spwork pipe N, with a spinner outside the command
N=500
# the spinner outlives the traced command: 4 s, x SLOW for an emulated CPU's slow start-up,
# stopped (it and its child) once the trace is over
"$SPWORK" spin $((4 * SLOW)) &
spin=$!
sleep 0.3
"$SCHEDPROF" trace -a -f json -o "$TMP/all.json" -- "$SPWORK" pipe $N 2> "$TMP/err" \
	|| { cat "$TMP/err"; fail "trace -a -- spwork pipe exited $?"; }
kill $(pgrep -P $spin) $spin 2>/dev/null
wait $spin
n=$(caller_count "$TMP/all.json" "$PR" sp_pipe_reader)
[ "$n" = $N ] || fail "-a -- COMMAND: $PR of sp_pipe_reader = $n, expected $N"
pass "-a -- COMMAND: $PR of sp_pipe_reader = $n"
python3 - "$TMP/all.json" <<'PY' || fail "-a -- COMMAND: wrong target split (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
t, p = d["target"], d["profile"]
assert t["mode"] == "command" and t["system"] is True and t["exit_status"] == 0, t
job = {"spwork", "sp_pipe_reader"}
sched = {c for r in d["schedules"]["callers"] for c in r["comms"]}
assert "sp_spin" in sched, "schedules count only the command: %s" % sorted(sched)
prof = set(p["comms"])
assert prof <= job, "profile target samples outside the command: %s" % sorted(prof)
assert p["other"] > 0, "no 'other' samples although sp_spin ran: %s" % p
assert p["total"] == p["idle"] + p["target"] + p["other"]
print("schedules comms:", len(sched), "profile:", p["target"], "target,", p["other"], "other")
PY
pass "-a -- COMMAND: schedules include sp_spin, profile target is the command's tree"
# read back by report, and said in the table
"$SCHEDPROF" report "$TMP/all.json" > "$TMP/all.txt" || fail "report of the -a -- COMMAND run exited $?"
grep -q "the whole system traced while it ran" "$TMP/all.txt" \
	|| { head -3 "$TMP/all.txt"; fail "report does not say the whole system was traced"; }
"$SCHEDPROF" report -f json "$TMP/all.json" > "$TMP/all2.json" || fail "report -f json exited $?"
[ "$(jget "$TMP/all2.json" 'd["target"]["system"]')" = True ] || fail "report lost target.system"
pass "-a -- COMMAND: report reads it back (target.system kept)"

# 2. a plain -- COMMAND run has no "system" key (older readers see no change)
"$SCHEDPROF" trace --views schedules -f json -o "$TMP/cmd.json" -- /bin/true || fail "trace -- true"
[ "$(jget "$TMP/cmd.json" '"system" in d["target"]')" = False ] || fail "system written for -- COMMAND"
pass "-- COMMAND: no target.system key"

# 3. --cgroup: a cgroup v2 we create, with a child cgroup; a pipe reader in the child is
#    counted exactly, one outside is not
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$CG2" ] || skip_or_fail "no cgroup v2 mount"
CG="$CG2/schedprof-test-$$"
mkdir "$CG" "$CG/child" || fail "cannot create $CG"
trap 'rmdir "$CG/child" "$CG" 2>/dev/null; rm -rf "$TMP"' EXIT
N=400
"$SCHEDPROF" trace --cgroup "schedprof-test-$$" -d 60 --views schedules,profile -f json \
	-o "$TMP/cg.json" 2> "$TMP/err" &
sp=$!
wait_attached $sp
"$SPWORK" pipe 300 > /dev/null & # outside: never counted
out=$!
( echo $BASHPID > "$CG/child/cgroup.procs"; exec "$SPWORK" pipe $N ) || fail "spwork in the cgroup failed"
wait $out
kill -INT $sp
wait $sp || { cat "$TMP/err"; fail "trace --cgroup exited $?"; }
n=$(caller_count "$TMP/cg.json" "$PR")
[ "$n" = $N ] || fail "--cgroup: $PR = $n, expected $N (the reader in the child cgroup only)"
[ "$(jget "$TMP/cg.json" 'd["target"]["mode"]')" = cgroup ] || fail "--cgroup: target mode is not cgroup"
[ "$(jget "$TMP/cg.json" 'd["target"]["cgroup"]')" = "$CG" ] || fail "--cgroup: target.cgroup is not $CG"
"$SCHEDPROF" report "$TMP/cg.json" | head -1 | grep -q "^cgroup: $CG and descendants$" \
	|| fail "report does not name the cgroup"
pass "--cgroup: $PR = $n (a child cgroup's reader; the outside one not counted)"

# 4. --cgroup by absolute path, and the cgroup's root task list is empty: 0 total, exit 0
"$SCHEDPROF" trace --cgroup "$CG" -d 0.3 --views schedules -f json -o "$TMP/cg0.json" \
	|| fail "trace --cgroup ABSOLUTE exited $?"
[ "$(jget "$TMP/cg0.json" 'd["schedules"]["total"]')" = 0 ] || fail "an empty cgroup counted switches"
pass "--cgroup with an absolute path: an empty cgroup counts nothing"

# 4b. --cgroup PATH -- COMMAND: for as long as the command runs; the command joins the cgroup
#     itself, so its reads count, exactly; its status is schedprof's
"$SCHEDPROF" trace --cgroup "$CG" --views schedules -f json -o "$TMP/cgc.json" -- \
	sh -c "echo \$\$ > '$CG/child/cgroup.procs' && exec '$SPWORK' pipe $N > /dev/null; exit 9" \
	2> "$TMP/err" || { cat "$TMP/err"; fail "trace --cgroup -- COMMAND exited $?"; }
n=$(caller_count "$TMP/cgc.json" "$PR" sp_pipe_reader)
[ "$n" = $N ] || fail "--cgroup -- COMMAND: $PR = $n, expected $N"
"$SCHEDPROF" trace --cgroup "$CG" --views schedules -o /dev/null -- sh -c 'exit 5'
rc=$?
[ $rc = 5 ] || fail "--cgroup -- sh -c 'exit 5' exited $rc"
pass "--cgroup PATH -- COMMAND: $PR = $n, ended with the command, its status kept"

# 5. -t TID: that thread only (as perf -t): not its process's other threads, and the trace
#    ends when it exits. spwork threads: sp_thr_reader blocks exactly N times, sp_thr_writer
#    feeds it, the main thread exits first.
thread_of() { # thread_of PID COMM: its tid
	for _ in $(seq 100); do
		for t in /proc/$1/task/*; do
			[ "$(cat $t/comm 2>/dev/null)" = "$2" ] && { echo "${t##*/}"; return; }
		done
		sleep 0.05
	done
	fail "no thread $2 in $1"
}
N=300
rm -f "$TMP/go"
"$SPWORK" threads "$TMP/go" $N &
work=$!
reader=$(thread_of $work sp_thr_reader)
"$SCHEDPROF" trace -t $reader --views schedules -f json -o "$TMP/tid.json" 2> "$TMP/err" &
sp=$!
wait_attached $sp
touch "$TMP/go"
wait $work || fail "workload failed"
wait $sp || { cat "$TMP/err"; fail "trace -t exited $?"; }
n=$(caller_count "$TMP/tid.json" "$PR" sp_thr_reader)
[ "$n" = $N ] || fail "-t: $PR = $n, expected $N"
[ "$(caller_count "$TMP/tid.json" do_exit sp_thr_reader)" = 1 ] || fail "-t: the thread's do_exit not counted once"
python3 - "$TMP/tid.json" "$reader" <<'PY' || fail "-t counted other threads"
import json, sys
d = json.load(open(sys.argv[1]))
comms = {c for r in d["schedules"]["callers"] for c in r["comms"]}
assert comms == {"sp_thr_reader"}, sorted(comms)
assert d["target"] == {"mode": "tids", "tids": [int(sys.argv[2])]}, d["target"]
PY
"$SCHEDPROF" report "$TMP/tid.json" | head -1 | grep -q "^threads: $reader$" || fail "report does not name the thread"
pass "-t TID: $PR = $n, only that thread, ended with it"

# 6. -t READER,WRITER: both threads, still not the main thread
rm -f "$TMP/go"
"$SPWORK" threads "$TMP/go" $N &
work=$!
reader=$(thread_of $work sp_thr_reader)
writer=$(thread_of $work sp_thr_writer)
"$SCHEDPROF" trace -t $reader,$writer --views schedules -f json -o "$TMP/tid2.json" 2> "$TMP/err" &
sp=$!
wait_attached $sp
touch "$TMP/go"
wait $work || fail "workload failed"
wait $sp || { cat "$TMP/err"; fail "trace -t two threads exited $?"; }
n=$(caller_count "$TMP/tid2.json" "$PR" sp_thr_reader)
[ "$n" = $N ] || fail "-t two threads: $PR = $n, expected $N"
python3 - "$TMP/tid2.json" <<'PY' || fail "-t with two threads: wrong comms"
import json, sys
d = json.load(open(sys.argv[1]))
comms = {c for r in d["schedules"]["callers"] for c in r["comms"]}
assert comms == {"sp_thr_reader", "sp_thr_writer"}, sorted(comms)
PY
pass "-t READER,WRITER: $PR = $n, both threads and no other"

# 7. -p PID -- COMMAND: the PID for as long as the command runs; the command is not traced,
#    and its status is schedprof's
rm -f "$TMP/go"
"$SPWORK" threads "$TMP/go" $N &
work=$!
sleep 0.2
"$SCHEDPROF" trace -p $work --views schedules -f json -o "$TMP/pc.json" -- \
	sh -c "touch '$TMP/go'; while [ -d /proc/$work/task/$(thread_of $work sp_thr_reader) ]; do sleep 0.05; done; exit 7" \
	2> "$TMP/err"
rc=$?
wait $work || fail "workload failed"
[ $rc = 7 ] || { cat "$TMP/err"; fail "-p PID -- COMMAND exited $rc, not the command's 7"; }
n=$(caller_count "$TMP/pc.json" "$PR" sp_thr_reader)
[ "$n" = $N ] || fail "-p PID -- COMMAND: $PR = $n, expected $N"
python3 - "$TMP/pc.json" <<'PY' || fail "-p PID -- COMMAND traced the command"
import json, sys
d = json.load(open(sys.argv[1]))
comms = {c for r in d["schedules"]["callers"] for c in r["comms"]}
assert comms <= {"sp_threads", "sp_thr_reader", "sp_thr_writer"}, sorted(comms)
assert d["target"]["mode"] == "pids", d["target"]
PY
pass "-p PID -- COMMAND: $PR = $n, the command not traced, its status 7"

# 8. -p PID -- COMMAND ends with the command, the PID still running
sleep 30 &
long=$!
t0=$(date +%s%N)
"$SCHEDPROF" trace -p $long --views schedules -o /dev/null -- sleep 0.3 || fail "-p PID -- sleep exited $?"
ms=$((($(date +%s%N) - t0) / 1000000))
kill -0 $long 2>/dev/null || fail "-p PID -- COMMAND: the PID did not outlive the trace"
kill $long; wait $long 2>/dev/null
[ $ms -lt 5000 ] || fail "-p PID -- sleep 0.3 took $ms ms: did not end with the command"
pass "-p PID -- sleep 0.3: ended with the command ($ms ms), the PID left running"



# 9. -p PID: the trace lasts while PID's descendants do. A descendant that does not fit the
# traced set's map (--max-targets) is said, and the trace may end before it: the loss said.
# PID (one process: it waits in a read, not in a loop of sleeps) forks a child that lives
# 2 s once the trace has attached, and exits at once.
tree_trace() { # NAME OPTION...: sets rc (schedprof's exit status) and ms (its time from go)
	local name=$1 go="$TMP/go-$1" pid sp t0
	shift
	mkfifo "$go"
	bash -c 'read -r _ < "$1"; sleep '$((2 * SLOW))' & exit 0' tree "$go" > /dev/null &
	pid=$!
	"$SCHEDPROF" trace -p $pid -d 60 --views schedules -o /dev/null "$@" 2> "$TMP/$name.err" &
	sp=$!
	wait_attached $sp
	sleep 0.2 # the /proc walk that adds the tree follows the attach
	t0=$(date +%s%N)
	echo > "$go"
	wait $sp
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	wait $pid
}
tree_trace full
[ "$rc" = 0 ] || { cat "$TMP/full.err"; fail "-p PID (a child outlives it) exited $rc"; }
[ ! -s "$TMP/full.err" ] || { cat "$TMP/full.err"; fail "-p PID: a warning with room in the map"; }
assert_between "-p PID: the trace lasts while its child does (ms)" "$ms" $((2000 * SLOW)) $((5000 * SLOW))
tree_trace small --max-targets 1
[ "$rc" = 0 ] || { cat "$TMP/small.err"; fail "-p PID --max-targets 1 exited $rc"; }
grep -q "^schedprof: warning: 1 new processes did not fit the traced set's map (--max-targets 1): the trace may have ended before they did; raise --max-targets$" "$TMP/small.err" ||
	{ cat "$TMP/small.err"; fail "-p PID --max-targets 1: the full map was not said"; }
[ "$ms" -lt $((2000 * SLOW)) ] || fail "-p PID --max-targets 1: the trace lasted $ms ms: the child was in the map?"
pass "-p PID: the trace lasted while the child did; with --max-targets 1 it ended at $ms ms, said"
tree_trace strict --max-targets 1 --strict
[ "$rc" = 3 ] || { cat "$TMP/strict.err"; fail "-p PID --max-targets 1 --strict exited $rc, expected 3"; }
grep -q "^schedprof: --strict: the run lost data: .*1 new processes not in the traced set's map (--max-targets was full)" "$TMP/strict.err" ||
	{ cat "$TMP/strict.err"; fail "--strict does not name the full traced set's map"; }
pass "-p PID --max-targets 1 --strict: exit 3, the full map named"
# -- COMMAND: the command's end ends the trace; what the full map costs is the count of the
# processes it left running
"$SCHEDPROF" trace --max-targets 1 --views schedules -o /dev/null -- \
	sh -c 'sleep 0.2 & sleep 0.3 & wait' 2> "$TMP/cmd-small.err" ||
	{ cat "$TMP/cmd-small.err"; fail "-- COMMAND --max-targets 1 exited $?"; }
grep -q "^schedprof: warning: 2 new processes did not fit the traced set's map (--max-targets 1): the processes left running at the end may be more than counted; raise --max-targets$" "$TMP/cmd-small.err" ||
	{ cat "$TMP/cmd-small.err"; fail "-- COMMAND --max-targets 1: the full map was not said so"; }
pass "-- COMMAND --max-targets 1: the full map said with what it costs there"
