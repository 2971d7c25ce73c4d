#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Targets in perf's habits (issue #9, deliverable 1):
# - `-a -- COMMAND`: the whole system for as long as COMMAND runs; the schedules count every
#   task, the profile's target class is the command's tree only.
. "$(dirname "$0")/lib.sh"
require_bpf
[ -n "$SPWORK" ] || fail "SPWORK must name the workload binary"

# 1. -a -- spwork pipe N, with a spinner outside the command
N=500
"$SPWORK" spin 4 &
spin=$!
sleep 0.3
"$SCHEDPROF" trace -a -f json -o "$TMP/all.json" -- "$SPWORK" pipe $N 2> "$TMP/err" \
	|| { cat "$TMP/err"; fail "trace -a -- spwork pipe exited $?"; }
wait $spin
n=$(caller_count "$TMP/all.json" anon_pipe_read sp_pipe_reader)
[ "$n" = $N ] || fail "-a -- COMMAND: anon_pipe_read of sp_pipe_reader = $n, expected $N"
pass "-a -- COMMAND: anon_pipe_read of sp_pipe_reader = $n"
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
