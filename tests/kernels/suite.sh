#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The kernel matrix's suite, run INSIDE a guest by matrix.sh (as /out/cmd.sh): the host's
# ground-truth integration tests (meson test --no-rebuild on the host's build dir, which the
# guest sees at the same path), then the README's first commands (trace -a -d 1,
# examples/compile-job/compare.sh), then each program's BPF cost against an empty program.
# Writes one line per test, "passed NAME" or "failed NAME", to /out/results; each test's
# output goes to /out/logs/NAME.log.
# env (from matrix.sh): SRC, BUILD, TESTS (meson test names, and trace-a, compare, progcost
# for the checks below), SCHEDPROF_TEST_SLOW (the
# timing bounds' factor: 1 on hardware speed, 10 under TCG), TIMEOUT_MULT
set -u
SRC=${SRC:?} BUILD=${BUILD:?}
OUT=/out
mkdir -p "$OUT/logs"
: > "$OUT/results"
export CI=true SCHEDPROF_TEST_SLOW=${SCHEDPROF_TEST_SLOW:-1}
SP=$BUILD/src/schedprof
echo "guest: $(uname -r), $(nproc) CPUs, timing bounds x$SCHEDPROF_TEST_SLOW"

result() { # result NAME passed|failed [WHY]
	echo "$2 $1" >> "$OUT/results"
	echo "$1: $2${3:+ ($3)}"
}

# A stall shows itself on the console: the kernel's hung-task detector reports every task
# blocked 60 s (not only the first 10), and when no test has finished for STALL_SECS (600:
# the longest test takes about 450 s under TCG) the tasks with their kernel stacks (sysrq t)
# and the CPUs' (sysrq l) are printed, once. A guest whose CPUs spin with interrupts off runs
# none of this: matrix.sh's vcpudump.sh shows those when the guest's time is up. meson's
# output is the progress: a line per finished test (unbuffered, below).
echo 60 > /proc/sys/kernel/hung_task_timeout_secs 2>/dev/null
echo -1 > /proc/sys/kernel/hung_task_warnings 2>/dev/null
watchdog() {
	local size=-1 still=0 n
	while sleep 30; do
		n=$(stat -c %s "$OUT/logs/meson.log" 2>/dev/null || echo 0)
		if [ "$n" != "$size" ]; then
			size=$n still=0
			continue
		fi
		still=$((still + 30))
		[ "$still" -ge "${STALL_SECS:-600}" ] || continue
		{
			echo "suite: no test finished for $still s: the tasks, then their stacks and the CPUs'"
			ps -eo pid,ppid,stat,pcpu,wchan:32,etime,args
		} > /dev/console 2>&1
		echo 7 > /proc/sys/kernel/printk
		echo 1 > /proc/sys/kernel/sysrq
		echo l > /proc/sysrq-trigger
		echo t > /proc/sysrq-trigger
		return
	done
}
watchdog &
watchdog_pid=$!

want() { case " $TESTS " in *" $1 "*) return 0 ;; esac; return 1; }
meson_tests=""
for t in $TESTS; do
	case $t in trace-a|compare|progcost) ;; *) meson_tests="$meson_tests $t" ;; esac
done

# the ground-truth tests through meson, which knows their workloads and timeouts
if [ -n "$meson_tests" ]; then
	# shellcheck disable=SC2086 # a list of names
	PYTHONUNBUFFERED=1 meson test -C "$BUILD" --no-rebuild --logbase "guest-$(uname -r)" \
		--timeout-multiplier "${TIMEOUT_MULT:-1}" --print-errorlogs $meson_tests > "$OUT/logs/meson.log" 2>&1
	json=$BUILD/meson-logs/guest-$(uname -r).json
	cp "$json" "$OUT/testlog.json" 2>/dev/null
	for t in $meson_tests; do
		r=$(python3 - "$json" "$t" <<'PY' 2>/dev/null
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["name"].split(" / ")[-1] == sys.argv[2]:
        print(d["result"], round(d["duration"]))
        break
PY
)
		read -r res secs <<< "$r"
		python3 - "$json" "$t" > "$OUT/logs/$t.log" 2>/dev/null <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["name"].split(" / ")[-1] == sys.argv[2]:
        sys.stdout.write(d.get("stdout", "") + d.get("stderr", ""))
PY
		case $res in
		OK|EXPECTEDFAIL) result "$t" passed "$secs s" ;;
		"") result "$t" failed "meson did not run it: see logs/meson.log" ;;
		*) result "$t" failed "$res after $secs s: $(grep -m1 -E '^FAIL' "$OUT/logs/$t.log")" ;;
		esac
	done
fi

# the README's first command: every view, one second, and nothing on stderr
check_trace_a() {
	t0=$(date +%s)
	if "$SP" trace -a -d 1 > "$OUT/logs/trace-a.log" 2> "$OUT/logs/trace-a.err"; then
		if [ -s "$OUT/logs/trace-a.err" ]; then
			result trace-a failed "stderr: $(head -1 "$OUT/logs/trace-a.err")"
		elif ! grep -q '^schedules:' "$OUT/logs/trace-a.log"; then
			result trace-a failed "no schedules line in its table"
		else
			result trace-a passed "$(($(date +%s) - t0)) s"
		fi
	else
		result trace-a failed "exit $?: $(head -1 "$OUT/logs/trace-a.err")"
	fi
}

# the compile-job example: with -pipe, cc1's output is read through pipes; without, it is not.
# An emulated CPU compiles 10 of its 40 modules (N, its Makefile's count): 4 minutes less.
check_compare() {
	t0=$(date +%s)
	n=40
	[ "$SCHEDPROF_TEST_SLOW" -gt 1 ] && n=10
	if N=$n SCHEDPROF=$SP bash "$SRC/examples/compile-job/compare.sh" > "$OUT/logs/compare.log" 2>&1; then
		reads() { sed -n "s/^$1:.* \([0-9]*\) pipe reads.*/\1/p" "$OUT/logs/compare.log"; }
		with=$(reads "with -pipe") without=$(reads "without -pipe")
		if [ -n "$with" ] && [ -n "$without" ] && [ "$with" -gt "$without" ]; then
			result compare passed "pipe reads: $with with -pipe, $without without; $(($(date +%s) - t0)) s"
		else
			result compare failed "pipe reads: '$with' with -pipe, '$without' without"
		fi
	else
		result compare failed "exit $?: $(grep -m1 -i 'schedprof\|error' "$OUT/logs/compare.log")"
	fi
}

# the cost of each program (bpf_stats) as a ratio to an empty tp_btf/sched_switch program
# (5000 ping-pongs under TCG: some 10000 switches per program, in a minute)
check_progcost() {
	pn=20000
	[ "$SCHEDPROF_TEST_SLOW" -gt 1 ] && pn=5000
	if PIPE_N=$pn bash "$SRC/tests/kernels/progcost.sh" > "$OUT/progcost.txt" 2> "$OUT/logs/progcost.log"; then
		result progcost passed "$(grep -c . "$OUT/progcost.txt") programs"
	else
		result progcost failed "$(tail -1 "$OUT/logs/progcost.log")"
	fi
}

want trace-a && check_trace_a
want compare && check_compare
want progcost && check_progcost
kill "$watchdog_pid" 2>/dev/null
grep -c '^passed' "$OUT/results" | { read -r n; echo "guest: $n passed, $(grep -c '^failed' "$OUT/results") failed"; }
