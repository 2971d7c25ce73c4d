#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Run-queue latency: a sleeper that wakes every 10 ms, pinned to one CPU with two
# CPU hogs, waits for the CPU after its wake-ups: its row (hrtimer_nanosleep) has RUNQ > 0,
# BLOCKED + RUNQ = OFF-CPU, and a p99 bounded by the scheduler's slice (the base slice, which
# the kernel checks only at a tick: base slice + 2 ticks, one for the tick and one for the
# other tasks of a shared machine on that CPU). Alone on the CPU, its waits are near zero.
# The workloads run at nice -20 in a session of their own whose autogroup is at nice -20
# too (with kernel.sched_autogroup_enabled, nice weighs only inside the session's group), so
# that other tasks of a shared machine weigh little.
. "$(dirname "$0")/lib.sh"
require_bpf
WAKEWORK=${WAKEWORK:?WAKEWORK must name the workload binary}
CPU=$(($(nproc) - 1))

# the scheduler's base slice: debugfs when mounted, else EEVDF's default, 0.75 ms x
# (1 + log2(min(CPUs, 8))) (sysctl_sched_base_slice, scaled as update_sysctl() does)
slice=$(cat /sys/kernel/debug/sched/base_slice_ns 2>/dev/null)
if [ -z "$slice" ]; then
	n=$(nproc); [ "$n" -gt 8 ] && n=8
	l=0; while [ $((1 << (l + 1))) -le "$n" ]; do l=$((l + 1)); done
	slice=$((750000 * (1 + l)))
fi
hz=$( (zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)" 2>/dev/null) |
	sed -n 's/^CONFIG_HZ=//p')
tick=$((1000000000 / ${hz:-250}))
bound=$(((slice + 2 * tick) * SLOW))
echo "base slice $slice ns, tick $tick ns, x$SLOW: p99 bound $bound ns"

# row ROW FILE: "count blocked runq p50 p99 max offcpu" of the caller's row
row() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in d["schedules"]["callers"] if r["caller"] in ("hrtimer_nanosleep", "do_nanosleep")]
if not rows:
    sys.exit("no nanosleep row")
r = rows[0]
print(r["count"], r["blocked_ns"], r["runq_ns"], r["runq_p50_ns"], r["runq_p99_ns"],
      r["runq_max_ns"], r["offcpu_ns"], r["comms"].get("ww_sleeper", {}).get("count", 0))
PY
}

# run_pinned HOGS FILE: the workload under schedprof, favoured as said above
run_pinned() {
	"$SCHEDPROF" trace --views schedules -f json -o "$2" -- setsid -w sh -c \
		'echo -20 > /proc/self/autogroup 2>/dev/null; exec nice -n -20 "$0" runq 2 "$1" "$2"' \
		"$WAKEWORK" "$CPU" "$1" || fail "schedprof exited $?"
}

run_pinned 2 "$TMP/hogs.json"
read -r count blocked runq p50 p99 max off sleeper <<<"$(row "$TMP/hogs.json")" || fail "no row"
echo "with hogs: $count sleeps, blocked $blocked, runq $runq, p50 $p50, p99 $p99, max $max"
[ "$sleeper" -gt 50 ] || fail "ww_sleeper slept $sleeper times in the row, expected > 50"
[ "$runq" -gt 0 ] || fail "RUNQ is 0 with two hogs on the sleeper's CPU"
[ $((blocked + runq)) = "$off" ] || fail "BLOCKED $blocked + RUNQ $runq != OFF-CPU $off"
[ "$p50" -le "$p99" ] && [ "$p99" -le "$max" ] || fail "p50 $p50 <= p99 $p99 <= max $max fails"
[ "$p99" -gt 0 ] && [ "$p99" -le "$bound" ] || fail "p99 $p99 ns is not within (0, $bound] ns"
pass "with two hogs: RUNQ $runq ns over $count sleeps, p99 $p99 ns <= $bound ns"

run_pinned 0 "$TMP/alone.json"
read -r count blocked runq p50 p99 max off sleeper <<<"$(row "$TMP/alone.json")" || fail "no row"
echo "alone: $count sleeps, blocked $blocked, runq $runq, p50 $p50, p99 $p99, max $max"
[ $((blocked + runq)) = "$off" ] || fail "BLOCKED $blocked + RUNQ $runq != OFF-CPU $off"
# near zero: the median wake-up waits at most 64 us (the bound of its log2 slot), and the
# whole RUNQ is under 10% of the sleeps (a few % on a busy shared machine, ~0.1% on a quiet
# one); both x SCHEDPROF_TEST_SLOW on a slow (emulated) CPU
[ "$p50" -le $((65535 * SLOW)) ] || fail "alone, the median run-queue wait is $p50 ns (> 64 us x $SLOW)"
[ $((runq * 10)) -le $((off * SLOW)) ] || fail "alone, RUNQ $runq ns is over 10% x $SLOW of OFF-CPU $off ns"
pass "alone: RUNQ $runq ns over $count sleeps (p50 $p50 ns)"
