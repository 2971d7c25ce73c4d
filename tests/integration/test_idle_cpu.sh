#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Waiting while a CPU sat idle (--timeline): a CPU-bound task ("victim", started on CPU 0 only:
# an interpreter's start is slow under emulation) moved to CPU 0 every 200 ms, where an
# untraced real-time hog runs 20 ms in every 40, on a machine whose CPU 1 is otherwise idle.
# Pinned to CPU 0 ({0}), its waits are no work-conservation miss: budget idle_miss_ns is 0.
# Allowed CPU 1 too ({0,1}), the balancer takes a while to move it there: idle_miss_ns > 0,
# in its [preempted] row too. Each time, the preempted row names the hog (outside) among who
# ran during its waits.
. "$(dirname "$0")/lib.sh"
require_bpf
[ "$(nproc)" -ge 2 ] || skip_or_fail "needs 2 CPUs"
command -v chrt >/dev/null || skip_or_fail "needs chrt (util-linux)"
# the interpreter itself, not a wrapper script (pyenv) whose shells would join the job
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
cat > "$TMP/victim.py" <<'PYV'
import os, sys, time
allow = {int(c) for c in sys.argv[1].split(",")}
end = time.time() + float(sys.argv[2])
while time.time() < end:
    os.sched_setaffinity(0, {0})
    os.sched_setaffinity(0, allow)
    t = time.time() + 0.2
    while time.time() < t:
        pass
PYV
cat > "$TMP/hog.py" <<'PYH'
import sys, time
end = time.time() + float(sys.argv[1])
while time.time() < end:
    t = time.time() + 0.02
    while time.time() < t:
        pass
    time.sleep(0.02)
PYH

# run ALLOW: the victim's budget and [preempted] row as "miss row_miss runq hog_ns". The victim
# is attached to (-p), so that its own waits are all the job's: a launcher's (taskset's
# before it pins itself) would be waits allowed on CPU 1.
run() {
	taskset -c 0 chrt -f 10 "$PY" "$TMP/hog.py" $((3 * SLOW + 2)) &
	local hog=$!
	taskset -c 0 "$PY" "$TMP/victim.py" "$1" $((2 * SLOW + 1)) &
	local victim=$!
	"$SCHEDPROF" trace --timeline -f json -o "$TMP/$1.json" -p $victim >/dev/null \
		2>"$TMP/$1.err" || fail "trace ($1) exited $?: $(cat "$TMP/$1.err")"
	wait $victim $hog
	python3 - "$TMP/$1.json" <<'PYC'
import json, sys
v = json.load(open(sys.argv[1]))["schedules"]
pre = [r for r in v["callers"] if r["caller"] == "[preempted]"]
assert pre, "no [preempted] row"
hog = sum(t["ns"] for t in pre[0].get("cpu_takers", [])
          if t["kind"] == "ran-during" and t["where"] == "outside" and t["comm"] == "python3")
print(v["budget"].get("idle_miss_ns", 0), pre[0].get("idle_miss_ns", 0), pre[0]["runq_ns"], hog)
PYC
}

read -r miss rmiss runq hog < <(run 0) || fail "pinned: see above"
[ "$runq" -gt 50000000 ] || fail "pinned: the victim waited only $runq ns behind the hog"
[ "$miss" = 0 ] || fail "pinned to CPU 0, yet $miss ns of work-conservation misses"
[ "$hog" -gt $((runq / 2)) ] || fail "pinned: the hog ran during $hog of $runq ns"
pass "pinned to CPU 0: $runq ns waiting behind the hog ($hog ns ran during), no idle-CPU miss"

read -r miss rmiss runq hog < <(run 0,1) || fail "allowed CPU 1: see above"
[ "$miss" -gt 0 ] && [ "$rmiss" -gt 0 ] ||
	fail "allowed CPU 1 (idle), yet no work-conservation miss (budget $miss, row $rmiss)"
[ "$rmiss" -le "$runq" ] || fail "allowed CPU 1: a miss of $rmiss ns over the wait's $runq"
pass "allowed CPU 1: $rmiss of $runq ns waited while CPU 1 sat idle"
