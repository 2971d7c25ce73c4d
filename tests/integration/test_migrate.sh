#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Migrations: a reader sleeps N times in a pipe read, each sleep ended by its parent's write
# once wchan shows it asleep. When the parent moves it to the other CPU before each write
# (sched_setaffinity), every sleep ends on another CPU than it began on: its row's
# "migrated" is N, exactly, with their RUNQ (migrated_runq_ns) the row's whole RUNQ. Left on
# CPU 0, none does: no "migrated" in the JSON, no line under the row in the table.
. "$(dirname "$0")/lib.sh"
require_bpf
WAKEWORK=${WAKEWORK:?WAKEWORK must name the workload binary}
[ "$(nproc)" -ge 2 ] || skip_or_fail "needs 2 CPUs (the reader moves between CPU 0 and 1)"
N=200

# run MOVE OUT: the workload traced into OUT.json and OUT.txt (the table, from the same run)
run() {
	"$SCHEDPROF" trace --views schedules -f json -o "$2.json" -- "$WAKEWORK" migrate $N "$1" ||
		fail "trace of migrate $N $1 exited $?"
	"$SCHEDPROF" report "$2.json" -n 0 > "$2.txt" || fail "report exited $?"
}
# row FILE: "count migrated migrated_runq_ns runq_ns" of the reader's pipe-read row, whose
# only comm must be ww_hopper
row() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in d["schedules"]["callers"] if r["caller"] in ("anon_pipe_read", "pipe_read", "pipe_wait")]
assert len(rows) == 1, "pipe-read rows: %s" % [r["caller"] for r in rows]
r = rows[0]
assert list(r["comms"]) == ["ww_hopper"], "comms %s" % list(r["comms"])
print(r["count"], r.get("migrated", 0), r.get("migrated_runq_ns", 0), r["runq_ns"])
PY
}

# notes FILE: the lines under the reader's row in the table
notes() {
	awk '/ (anon_pipe_read|pipe_read|pipe_wait)$/ { on = 1; next } on && /^        [a-z]/ { print; next }
		{ on = 0 }' "$1"
}

run 1 "$TMP/moved"
read -r count migrated mig_ns runq < <(row "$TMP/moved.json") || fail "no reader row"
echo "moved: $count sleeps, $migrated on another CPU, RUNQ $mig_ns of $runq ns"
[ "$count" = $N ] || fail "moved: $count pipe-read sleeps, expected $N"
[ "$migrated" = $N ] || fail "moved: $migrated of $N sleeps ended on another CPU, expected all"
[ "$mig_ns" = "$runq" ] || fail "moved: migrated RUNQ $mig_ns ns, the row's RUNQ $runq ns"
notes "$TMP/moved.txt" |
	grep -Eq "^ +ended on another CPU: $N of $N \(100\.0%\), waiting for a CPU [0-9.]+[mun]?s each$" ||
	fail "moved: no 'ended on another CPU' line under the row: $(notes "$TMP/moved.txt")"
pass "moved before each wake-up: $N of $N sleeps ended on another CPU, with all of the row's RUNQ"

run 0 "$TMP/pinned"
read -r count migrated mig_ns runq < <(row "$TMP/pinned.json") || fail "no reader row"
echo "pinned: $count sleeps, $migrated on another CPU, RUNQ $mig_ns of $runq ns"
[ "$count" = $N ] || fail "pinned: $count pipe-read sleeps, expected $N"
[ "$migrated" = 0 ] && [ "$mig_ns" = 0 ] || fail "pinned: $migrated sleeps ended on another CPU"
! notes "$TMP/pinned.txt" | grep -q "ended on another CPU" ||
	fail "pinned: the row has a migrations line: $(notes "$TMP/pinned.txt")"
pass "pinned: none of $N sleeps ended on another CPU, and the table says nothing of it"
