#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Round trip: one real agent traces a workload (two runs of spwork pipe, a pause
# between them: several 1 s intervals; then, on CPU 0, a wait behind a spinner and a quiet
# CPU: takers of that wait reach the agent's reads only in a later interval, or at the stop,
# when its row has nothing new) and sends its intervals to a real server; the same
# agent saves the whole run with --save (the sum of the intervals it sent). Then
# `report --from ... -f table` prints the same table as `report saved.json -f table` for the
# columns the warehouse keeps: the schedules rows' COUNT, SHARE, OFF-CPU, MAX, WAIT and
# CALLER (not the run-queue columns, wakers, budget or caller-cache lines), the profile rows
# whole (not the header's rate and sample classes), the locks rows whole but "(N gave up)",
# and the schedules and locks totals; and the same by comm (--by comm) for schedules and
# profile. Both sides come from the agent's own rows (src/fleet/agent_rows.c): no hand-made
# rows. (Batches sent twice: test_agent.sh on one server, test_fleet_shards.sh on a cluster.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test_fleet_common.sh"
require_bpf
require_clickhouse
[ -n "$SPWORK" ] || fail "SPWORK must name the workload"

ch_start s1
url=$(ch_url s1)
# a single server: --create-schema makes sql/schema.sql's tables (never on a cluster)
"$SCHEDPROF" agent --views schedules,profile,locks -i 1 --spool "$TMP/spool" --sink "$url" \
	--create-schema --hostname rt-host --save "$TMP/saved.json" \
	-- sh -c "'$SPWORK' pipe 1000 && sleep 1.5 && '$SPWORK' pipe 1000 &&
		 taskset -c 0 sh -c 'sleep 1.3 & sleep 1.25; \"$SPWORK\" spin 0.1; sleep 2'" \
	2> "$TMP/agent.err" ||
	{ cat "$TMP/agent.err"; fail "the agent exited $?"; }
[ -s "$TMP/saved.json" ] || fail "the agent saved no run: $(cat "$TMP/agent.err")"
ls "$TMP/spool"/*.batch > /dev/null 2>&1 && fail "intervals left in the spool: $(cat "$TMP/agent.err")"
ivs=$(ch s1 "SELECT uniqExact(seq) FROM schedprof.schedules FINAL WHERE host = 'rt-host' AND comm = 'sp_pipe_reader'")
[ "$ivs" -ge 2 ] || fail "the workload fell in $ivs interval(s): no test of the intervals' sum"

"$SCHEDPROF" report "$TMP/saved.json" -f table -n 0 > "$TMP/saved.txt" || fail "report saved.json"
"$SCHEDPROF" report --from "$(ch_url s1)" -f table -n 0 > "$TMP/wh.txt" ||
	fail "report --from"
# the warehouse knows no CPU count: its saved run must read back all the same
"$SCHEDPROF" report --from "$(ch_url s1)" -f json -o "$TMP/wh.json" || fail "report --from -f json"
"$SCHEDPROF" report "$TMP/wh.json" -f table -n 0 > "$TMP/wh2.txt" ||
	fail "report of report --from's JSON: exit $?"
# kept FILE [bycomm]: the parts of the tables both can print; bycomm: of the --by comm
# tables, with each comm's line (blank lines part the comm groups, not the views)
kept() {
	awk -v bycomm="${2:-}" '
	/^schedules:/ { v = "s"; split($0, h, ","); if (!bycomm) print h[1] "," h[2] "," h[3]; next }
	/^profile:/   { v = "p"; next }
	# a view with no row is not in the warehouse: "locks: 0 contentions" has no counterpart
	/^locks:/     { v = "l"; split($0, h, ","); if (!bycomm && h[1] != "locks: 0 contentions") print h[1]; next }
	/^sleepers:/ || (!bycomm && /^$/) { v = ""; next }
	bycomm && v != "" && /^[^ ].*: [0-9]+ (schedules|samples) / { print; next }
	v != "" && /^ +[0-9]+ / {
		sub(/  \([0-9]+ gave up\)$/, "")
		if (v == "s")
			print v, $1, $2, $3, $4, $(NF - 1), $NF
		else {
			$1 = $1
			print v, $0
		}
	}' "$1"
}
kept "$TMP/saved.txt" > "$TMP/saved.kept"
kept "$TMP/wh.txt" > "$TMP/wh.kept"
[ "$(grep -c '^s ' "$TMP/saved.kept")" -ge 2 ] || { cat "$TMP/saved.txt"; fail "the saved run has too few schedules rows to compare"; }
grep -q "^s 2000 .* pipe $(pipe_read_fn)$" "$TMP/saved.kept" ||
	fail "the saved run has no $(pipe_read_fn) row of 2000"
diff -u "$TMP/saved.kept" "$TMP/wh.kept" > "$TMP/diff" || {
	cat "$TMP/saved.txt" "$TMP/wh.txt" "$TMP/diff"
	fail "report --from differs from report saved.json"
}
pass "report --from reproduces the saved run's tables ($(wc -l < "$TMP/saved.kept") lines: totals, schedules, profile, locks rows)"

# the same by comm: the warehouse keeps each row's comms (schedules and profile group by them)
"$SCHEDPROF" report "$TMP/saved.json" -f table -n 0 --by comm --views schedules,profile > "$TMP/saved_c.txt" ||
	fail "report saved.json --by comm"
"$SCHEDPROF" report --from "$(ch_url s1)" -f table -n 0 --by comm --views schedules,profile > "$TMP/wh_c.txt" ||
	fail "report --from --by comm"
kept "$TMP/saved_c.txt" bycomm > "$TMP/saved_c.kept"
kept "$TMP/wh_c.txt" bycomm > "$TMP/wh_c.kept"
grep -q "^sp_pipe_reader: " "$TMP/saved_c.kept" || { cat "$TMP/saved_c.txt"; fail "the saved run has no sp_pipe_reader group"; }
diff -u "$TMP/saved_c.kept" "$TMP/wh_c.kept" > "$TMP/diff_c" || {
	cat "$TMP/saved_c.txt" "$TMP/wh_c.txt" "$TMP/diff_c"
	fail "report --from --by comm differs from report saved.json --by comm"
}
pass "and --by comm: the same rows under each comm ($(grep -c ': ' "$TMP/saved_c.kept") comm groups)"

# the rows' split and who took their CPU (sql/schema.sql's split columns, cpu_takers): the
# same in the warehouse as in the saved run, row by row (the intervals' sum is the run's)
python3 - "$TMP/saved.json" "$TMP/wh.json" > "$TMP/split.out" <<'PY' || { cat "$TMP/split.out"; fail "the warehouse's split or takers differ from the saved run's"; }
import json, sys
SPLIT = ("blocked_ns", "runq_ns", "throttled_ns", "migrated", "migrated_runq_ns", "runq_max_ns")
def rows(path):
    out = {}
    for r in json.load(open(path))["schedules"]["callers"]:
        takers = sorted((t["kind"], t["comm"], t.get("cgroup"), t["where"], t["count"], t["ns"])
                        for t in r.get("cpu_takers", []))
        out[(r["caller"], r.get("wait"))] = (tuple(r.get(k, 0) for k in SPLIT), takers)
    return out
saved, wh = rows(sys.argv[1]), rows(sys.argv[2])
bad = [k for k in saved if saved[k] != wh.get(k)]
split = sum(1 for v in saved.values() if v[0][1])
takers = sum(len(v[1]) for v in saved.values())
for k in bad:
    print(k, "saved", saved[k], "warehouse", wh.get(k))
print(split, takers)
sys.exit(1 if bad or not split or not takers else 0)
PY
read -r nsplit ntakers < "$TMP/split.out"
pass "the warehouse keeps the rows' split ($nsplit rows with a wait for a CPU) and their $ntakers CPU takers, as saved"
