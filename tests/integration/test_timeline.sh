#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# --timeline: the serial tail. Two workers burn 1 s together, then sp_tail burns
# 1 s alone: a critical path of about 2 s and one serial phase of about 1 s named sp_tail.
# The segments tile each task's life; a ring buffer too small for a busy job loses events,
# and the run and the report say so.
. "$(dirname "$0")/lib.sh"
require_bpf
SERIALTAIL=${SERIALTAIL:?SERIALTAIL must name the serial-tail workload}

# Each task's segments, in order, tile [start_ns, end_ns): no gap, no overlap, the state's
# keys only; the job's end is a task's. Prints "tasks segments".
check_tiling() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["timeline"]
segs, at = t["segments"], 0
for task in t["tasks"]:
    cur = task["start_ns"]
    while at < len(segs) and segs[at]["tid"] == task["tid"] and segs[at]["start_ns"] < task["end_ns"]:
        s = segs[at]
        if s["start_ns"] != cur:
            sys.exit("task %d (%s): a segment at %d, expected %d" % (task["tid"], task["comm"], s["start_ns"], cur))
        if s["ns"] <= 0:
            sys.exit("task %d: an empty segment at %d" % (task["tid"], cur))
        if s["state"] == "running" and ("cpu" not in s or s["cpu"] < 0):
            sys.exit("task %d: running without a CPU at %d" % (task["tid"], cur))
        if s["state"] != "running" and not s.get("caller"):
            sys.exit("task %d: %s without a caller at %d" % (task["tid"], s["state"], cur))
        cur += s["ns"]
        at += 1
    if cur != task["end_ns"]:
        sys.exit("task %d (%s) ends at %d, its segments at %d" % (task["tid"], task["comm"], task["end_ns"], cur))
if at != len(segs):
    sys.exit("segment %d (tid %d) belongs to no task, or tasks are out of order" % (at, segs[at]["tid"]))
if t["end_tid"] and t["end_tid"] not in [x["tid"] for x in t["tasks"]]:
    sys.exit("end_tid %d is no task" % t["end_tid"])
print(len(t["tasks"]), len(segs))
PY
}

# the option: a size with K, M or G, 4K to 2G, only with --timeline; rounded up to a power of 2
for bad in "--timeline-buffer 1M" "--timeline --timeline-buffer 3K" "--timeline --timeline-buffer 3G" \
	"--timeline --timeline-buffer 5X" "--timeline --timeline-buffer M"; do
	# shellcheck disable=SC2086 # the options are split on purpose
	"$SCHEDPROF" trace $bad -- true 2> /dev/null
	rc=$?
	[ "$rc" = 2 ] || fail "trace $bad exited $rc, expected 2 (usage)"
done
"$SCHEDPROF" trace --timeline --timeline-buffer 5M --views schedules -f json -o "$TMP/5m.json" -- true ||
	fail "schedprof exited $?"
buffer=$(jget "$TMP/5m.json" 'd["timeline"]["buffer_bytes"]')
[ "$buffer" = 8388608 ] || fail "--timeline-buffer 5M: a buffer of $buffer bytes, expected 8M"
pass "--timeline-buffer: usage errors; 5M is an 8M buffer"

"$SCHEDPROF" trace --timeline --views schedules -f json -o "$TMP/tail.json" -- "$SERIALTAIL" 1 ||
	fail "schedprof exited $?"
read -r ntasks nsegs <<< "$(check_tiling "$TMP/tail.json")" || fail "segments do not tile"
[ "$ntasks" = 3 ] || fail "$ntasks tasks, expected 3 (sp_tail_main and its two workers)"
pass "$nsegs segments tile the lives of $ntasks tasks"
lost=$(jget "$TMP/tail.json" 'd["timeline"]["lost"] + d["timeline"].get("dropped", 0)')
[ "$lost" = 0 ] || fail "$lost events lost on a quiet job with the default buffer"
# the job ends with the command: its pid is the first task's, which forked the workers
read -r end_tid main_tid <<< "$(jget "$TMP/tail.json" '"%d %d" % (d["timeline"]["end_tid"], [t["tid"] for t in d["timeline"]["tasks"] if t["comm"] == "sp_tail_main"][0])')"
[ "$end_tid" = "$main_tid" ] || fail "the job ends at task $end_tid, not at the command ($main_tid)"
read -r tail_tid par_tid <<< "$(jget "$TMP/tail.json" '" ".join(str([t["tid"] for t in d["timeline"]["tasks"] if t["comm"] == c][0]) for c in ("sp_tail", "sp_par"))')"
pass "the job ends with sp_tail_main ($main_tid); workers sp_tail $tail_tid, sp_par $par_tid"
# the command waited for sp_tail in do_wait, and the wake-up names it
waited() { # FILE: the longest wait of sp_tail_main in do_wait that sp_tail's exit ended (ms)
	jget "$1" '(lambda t, tid: max([s["ns"] for s in t["segments"] if s["tid"] == tid["sp_tail_main"] and s["state"] == "blocked" and s.get("waker_tid") == tid["sp_tail"] and s["wait"] == "child"] or [0]) // 1000000)(d["timeline"], {x["comm"]: x["tid"] for x in d["timeline"]["tasks"]})'
}
woke=$(waited "$TMP/tail.json")
assert_between "sp_tail_main waiting for sp_tail, after sp_par (ms)" "$woke" 900 $((1000 + 100 * SLOW))

cp=$(jget "$TMP/tail.json" 'd["timeline"]["critical_path"]["total_ns"] // 1000000')
# upper bounds: 10% over, x SCHEDPROF_TEST_SLOW (an emulated CPU forks and starts slowly)
assert_between "critical path (ms)" "$cp" 1800 $((2000 + 200 * SLOW))
phases=$(jget "$TMP/tail.json" '"; ".join("%s %d" % (p["comm"], p["ns"] // 1000000) for p in d["timeline"]["parallelism"]["serial_phases"])')
# an emulated CPU (SCHEDPROF_TEST_SLOW > 1) starts the job so slowly that its start alone is
# a phase (serialtail 232 ms under TCG): phases of other tasks under 50 ms x SLOW are let be
# there, never on hardware speed
if [ "$SLOW" -gt 1 ]; then
	phases=$(echo "$phases" | awk -v max=$((50 * SLOW)) 'BEGIN { RS = "; " } { sub(/\n$/, "") }
		$1 == "sp_tail" || $2 >= max { printf "%s%s", n++ ? "; " : "", $0 }')
fi
read -r comm ms <<< "${phases%%;*}"
# waiting for a CPU while alone means other load on the machine, which breaks the phase
busy=$(jget "$TMP/tail.json" 'sum(s["ns"] for s in d["timeline"]["segments"] if s["tid"] == '"$tail_tid"' and s["state"] == "runnable") // 1000000')
[ "$comm" = sp_tail ] && [ "$phases" = "$comm $ms" ] ||
	fail "serial phases: '$phases', expected one, of sp_tail (sp_tail waited $busy ms for a CPU: other load on the machine?)"
assert_between "serial phase of sp_tail (ms)" "$ms" 900 $((1000 + 100 * SLOW))
# the critical path runs through sp_tail's run, not sp_par's: running, or waiting for a CPU
# when other load takes it (at a load average of 27, 557 ms of its 2 s were running)
ontail=$(jget "$TMP/tail.json" 'sum(s["ns"] for s in d["timeline"]["critical_path"]["segments"] if s["tid"] == '"$tail_tid"' and s["state"] != "blocked") // 1000000')
assert_between "sp_tail running or runnable on the critical path (ms)" "$ontail" 1800 $((2000 + 200 * SLOW))

# sp_par late, as a worker that waits for a CPU ends late (on an emulated CPU of a loaded
# host, 123 ms): stopped from its start for 1.3 s, past the end of its second of burning,
# it ends about 300 ms late. sp_tail still runs a second alone after it, and the command
# waits that second for it.
"$SCHEDPROF" trace --timeline --views schedules -f json -o "$TMP/late.json" -- "$SERIALTAIL" 1 &
sp=$!
# sp_par is a child of serialtail, serialtail schedprof's: found in /proc without a fork per
# look (pgrep takes an emulated CPU a second, as long as sp_par lives). A children list ends
# without a newline, so read returns 1 on it: its status is not the test.
par=""
for _ in $(seq $((200 * SLOW))); do
	cmd=""
	for f in /proc/$sp/task/*/children; do
		{ read -r cmd _ || :; } 2> /dev/null < "$f"
		[ -n "$cmd" ] && break
	done
	kids=()
	[ -n "$cmd" ] && { read -r -a kids || :; } 2> /dev/null < "/proc/$cmd/task/$cmd/children"
	for k in "${kids[@]}"; do
		comm=""
		{ read -r comm || :; } 2> /dev/null < "/proc/$k/comm"
		[ "$comm" = sp_par ] && par=$k
	done
	[ -n "$par" ] && break
	sleep 0.05
done
[ -n "$par" ] || fail "no sp_par to stop (schedprof $sp, its child '$cmd', whose children: ${kids[*]})"
kill -STOP "$par" || fail "cannot stop sp_par ($par)"
sleep 1.3
kill -CONT "$par"
wait $sp || fail "schedprof exited $? (sp_par stopped)"
stopped=$(jget "$TMP/late.json" 'max([s["ns"] for s in d["timeline"]["segments"] if s["comm"] == "sp_par" and s.get("caller") == "do_signal_stop"] or [0]) // 1000000')
assert_between "sp_par stopped in do_signal_stop (ms)" "$stopped" 1250 $((1300 + 200 * SLOW))
read -r late_gap <<< "$(jget "$TMP/late.json" '(lambda e: (e["sp_tail"] - e["sp_par"]) // 1000000)({x["comm"]: x["end_ns"] for x in d["timeline"]["tasks"]})')"
assert_between "sp_par stopped: sp_tail ends after sp_par (ms)" "$late_gap" 900 $((1000 + 100 * SLOW))
assert_between "sp_par stopped: sp_tail_main waiting for sp_tail, after sp_par (ms)" "$(waited "$TMP/late.json")" 900 $((1000 + 100 * SLOW))
pass "sp_par ended late (stopped): sp_tail ran alone $late_gap ms after it, and was waited for"

# A ping-pong through a pipe (some 100k events a second) into a one-page buffer: events are
# lost, counted in the run and said in the report; the segments still tile each task's life.
# The reader shares one CPU with the ping-pong at nice -20 (same session, so the same
# autogroup): it gets about 1% of that CPU, so the buffer overflows however fast the machine.
lossy() { taskset -c 1 "$SCHEDPROF" "$@" -- nice -n -20 "$SPWORK" pipe 20000; }
lossy trace --timeline --timeline-buffer 4K --views schedules -f json \
	-o "$TMP/lost.json" 2> "$TMP/lost.err" || fail "schedprof exited $?"
read -r lost events buffer <<< "$(jget "$TMP/lost.json" '"%d %d %d" % (d["timeline"]["lost"], d["timeline"]["events"], d["timeline"]["buffer_bytes"])')"
[ "$buffer" = 4096 ] || fail "buffer_bytes = $buffer, expected 4096"
[ "$lost" -gt 0 ] || fail "a 4K buffer on a pipe ping-pong lost nothing ($events events)"
grep -q "events lost" "$TMP/lost.err" || fail "the trace did not warn that events were lost"
"$SCHEDPROF" report --views timeline "$TMP/lost.json" | grep -Eq "$lost (events )?lost" ||
	fail "the report does not say that $lost events were lost"
check_tiling "$TMP/lost.json" > /dev/null || fail "segments do not tile after losses"
pass "4K buffer: $lost events lost, $events received; said and reported; segments tile"
# --strict: exit 3 when events were lost (a run that lost none, should one, is tried again).
for try in 1 2 3; do
	lossy trace --timeline --timeline-buffer 4K --strict --views schedules -f json \
		-o "$TMP/strict.json" 2> /dev/null
	rc=$?
	slost=$(jget "$TMP/strict.json" 'd["timeline"]["lost"]')
	[ "$slost" -gt 0 ] && break
	[ "$rc" = 0 ] || fail "--strict with no lost timeline event exited $rc, expected 0"
done
[ "$slost" -gt 0 ] || fail "--strict: 3 runs with a 4K buffer lost nothing"
[ "$rc" = 3 ] || fail "--strict with $slost lost timeline events exited $rc, expected 3"
pass "--strict: lost timeline events exit 3"

# A nanosleep ends in the hrtimer's hard interrupt: its blocked segment is woken by [irq]
# (the CPU's preempt count), not by whatever task that interrupt happened to land on.
"$SCHEDPROF" trace --timeline --views schedules -f json -o "$TMP/sleep.json" -- sleep 0.1 ||
	fail "schedprof exited $?"
wakers=$(jget "$TMP/sleep.json" '",".join(sorted(set(s.get("waker_comm") or "-" for s in d["timeline"]["segments"] if s["state"] == "blocked" and s.get("caller", "").endswith("nanosleep"))))')
# On PREEMPT_RT a task's sleep timer is a soft hrtimer (__hrtimer_init_sleeper(), unless the
# task has a real-time policy): it expires in the timer softirq's thread, ktimers/CPU, a task.
if [ "$(cat /sys/kernel/realtime 2>/dev/null)" = 1 ]; then
	[[ $wakers =~ ^ktimers/[0-9]+$ ]] || fail "PREEMPT_RT: sleep 0.1's nanosleep woken by '$wakers', expected ktimers/CPU"
else
	[ "$wakers" = "[irq]" ] || fail "sleep 0.1's nanosleep woken by '$wakers', expected [irq]"
fi
pass "a nanosleep's wake-up comes from $wakers"
