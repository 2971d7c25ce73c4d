#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Two shards: two clickhouse-servers on this machine form the example 2-shard
# cluster (examples/fleet/), with the cluster DDL (sql/cluster/, no --create-schema).
#
# Part 1, real agents: two `schedprof agent`s with different --hostname values, each tracing
# its own workload that blocks a known number of times on a pipe (spwork pipe), insert through
# the Distributed tables (each sends to the server of the OTHER shard, so every row is
# forwarded by the Distributed engine, asynchronously as 18.16 does by default). Each host's
# rows land on one shard; one query over the cluster returns both sums; the first agent's
# intervals, spooled while its server was unreachable, are sent twice (merges stopped on its
# shard): the raw rows double, FINAL and `report --from` count them once. `report --from`
# on either server shows the sums, `--host` one host's, `diff --host A --vs-host B` both.
#
# Part 2, hand-made rows (JSONEachRow as the agent sends them), only for what real agents
# cannot give on demand: intervals at fixed past times (--since/--until, diff of two time
# ranges, the week-over-week data of examples/fleet/queries.sql), two kernel releases, the
# agents' own losses, exact profile samples and lock contentions.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test_fleet_common.sh"
require_bpf
require_clickhouse
[ -x "$SPWORK" ] || fail "SPWORK must name the built spwork"
caller=$(pipe_read_fn)

start_cluster s1 s2
[ "$(ch s1 "SELECT count() FROM system.clusters WHERE cluster = 'fleet'")" = 2 ] ||
	fail "the example cluster 'fleet' does not have 2 shards"
pass "2-shard cluster 'fleet' from examples/fleet, tables from sql/cluster"

# one host name per shard: the sharding key is sipHash64(host) % 2 (weights 1, 1)
A=$(ch s1 "SELECT h FROM (SELECT arrayJoin(['alpha','bravo','charlie','delta','echo']) AS h) WHERE sipHash64(h) % 2 = 0 LIMIT 1")
B=$(ch s1 "SELECT h FROM (SELECT arrayJoin(['alpha','bravo','charlie','delta','echo']) AS h) WHERE sipHash64(h) % 2 = 1 LIMIT 1")
[ -n "$A" ] && [ -n "$B" ] || fail "no host name for each shard"

# ---- part 1: two real agents ----
NA=3000 # A's workload: two runs of spwork pipe 1500, a pause between them (several intervals)
NB=2000 # B's: one run of spwork pipe 2000
# agent NAME HOST URL [ARGS...]: an agent in the foreground (stderr in $TMP/NAME.err), exit 0
agent() {
	local name=$1 host=$2 url=$3 rc=0
	shift 3
	"$SCHEDPROF" agent --views schedules,profile,locks -i 1 --spool "$TMP/spool-$host" \
		--sink "$url" --hostname "$host" "$@" 2> "$TMP/$name.err" || rc=$?
	[ $rc = 0 ] || { cat "$TMP/$name.err" >&2; fail "agent $name exited $rc"; }
}
# local_sum SERVER HOST [FINAL]: the sp_pipe_reader count of HOST in SERVER's shard table
local_sum() {
	ch "$1" "SELECT sum(count) FROM schedprof.schedules_local ${3:-} WHERE host = '$2' AND caller = '$caller' AND comm = 'sp_pipe_reader'"
}
# arrived SERVER HOST N: the Distributed engine forwards in the background: wait (20 s at most)
# until HOST's rows add up to N on the shard SERVER
arrived() {
	local got
	for _ in $(seq 100); do
		got=$(local_sum "$1" "$2")
		[ "$got" = "$3" ] && return 0
		sleep 0.2
	done
	fail "$2's rows on shard $1 add up to $got, not $3, 20 s after its agent sent them"
}
dead=$(_ch_free_port) # nobody listens there: A's first agent spools every interval
agent a1 "$A" "clickhouse://127.0.0.1:$dead/schedprof" \
	-- sh -c "'$SPWORK' pipe 1500 && sleep 1.2 && '$SPWORK' pipe 1500" &
apid=$!
agent b "$B" "$(ch_url s1)" -- "$SPWORK" pipe $NB # B's rows go to s1, which forwards them to s2
wait $apid || fail "agent a1 failed"
grep -q "cannot send interval" "$TMP/a1.err" || fail "agent a1 did not say its server is down: $(cat "$TMP/a1.err")"
mkdir "$TMP/resend"
cp "$TMP/spool-$A"/*.batch "$TMP/resend/" || fail "agent a1 left nothing in its spool"
# the next start of A's agent sends its spool to s2, which forwards it to s1
agent a2 "$A" "$(ch_url s2)" -- true
arrived s1 "$A" $NA
arrived s2 "$B" $NB
[ "$(ch s1 "SELECT groupUniqArray(host) FROM schedprof.schedules_local")" = "['$A']" ] ||
	fail "shard 1 holds $(ch s1 "SELECT groupUniqArray(host) FROM schedprof.schedules_local"), not only $A"
[ "$(ch s2 "SELECT groupUniqArray(host) FROM schedprof.schedules_local")" = "['$B']" ] ||
	fail "shard 2 holds $(ch s2 "SELECT groupUniqArray(host) FROM schedprof.schedules_local"), not only $B"
pass "two agents through the Distributed tables: $A's rows (sent to s2) on shard 1, $B's (sent to s1) on shard 2"

# one query over the cluster, from either server: both sums
for s in s1 s2; do
	got=$(ch $s "SELECT host, sum(count) FROM schedprof.schedules FINAL WHERE caller = '$caller' AND comm = 'sp_pipe_reader' GROUP BY host ORDER BY host = '$B'" | tr '\t\n' ' /')
	[ "$got" = "$A $NA/$B $NB/" ] || fail "one query on $s: $got, expected $A $NA, $B $NB"
done
pass "one query over the Distributed table on either server: $A $NA, $B $NB"

# the spooled intervals sent once more, as a restarted agent that had not removed them would:
# with merges stopped on A's shard the copies stay apart, FINAL (and report) count them once
ch s1 "SYSTEM STOP MERGES"
cp "$TMP/resend"/*.batch "$TMP/spool-$A/"
agent a3 "$A" "$(ch_url s2)" -- true
arrived s1 "$A" $((2 * NA))
[ "$(local_sum s1 "$A" FINAL)" = $NA ] || fail "shard 1: FINAL of the re-sent intervals: $(local_sum s1 "$A" FINAL), not $NA"
got=$(ch s2 "SELECT sum(count) FROM schedprof.schedules FINAL WHERE caller = '$caller' AND comm = 'sp_pipe_reader'")
[ "$got" = $((NA + NB)) ] || fail "the cluster's FINAL sum after the resend: $got, expected $((NA + NB))"
pass "$(ls "$TMP/resend" | wc -l) intervals of $A sent twice: raw $((2 * NA)) on shard 1, FINAL $((NA + NB)) over the cluster"

# report --from: the same sums in schedprof's table, from either server
row() { # row FILE CALLER: the COUNT of the schedules row of CALLER
	awk -v c="$2" '/^schedules:/ { s = 1 } /^$/ { s = 0 } s && $NF == c { print $1; exit }' "$1"
}
hosts=$(printf '%s\n' "$A" "$B" | sort | paste -sd, | sed 's/,/, /')
for s in s1 s2; do
	"$SCHEDPROF" report --from "$(ch_url $s)" -n 0 > "$TMP/all.txt" ||
		fail "report --from on $s failed"
	[ "$(row "$TMP/all.txt" $caller)" = $((NA + NB)) ] || { cat "$TMP/all.txt"; fail "report --from $s: $caller not $((NA + NB))"; }
	grep -Eq "^warehouse .*: all hosts: [0-9]+ intervals of 2 hosts \($hosts\), kernel $(uname -r)$" "$TMP/all.txt" ||
		{ cat "$TMP/all.txt"; fail "no warehouse line with 2 hosts ($hosts), kernel $(uname -r)"; }
done
"$SCHEDPROF" report --from "$(ch_url s2)" --host "$A" -f folded --views schedules > "$TMP/a.folded" 2>/dev/null ||
	fail "report --host $A -f folded"
grep -qx "sp_pipe_reader;$caller $NA" "$TMP/a.folded" || { cat "$TMP/a.folded"; fail "report --host $A: no 'sp_pipe_reader;$caller $NA'"; }
"$SCHEDPROF" diff --from "$(ch_url s1)" --host "$A" --vs-host "$B" -n 0 > "$TMP/diff.txt" ||
	fail "diff --host --vs-host failed"
grep -Eq "^ +$NA +$NB +-$((NA - NB)) .*$caller \(pipe\)" "$TMP/diff.txt" || { cat "$TMP/diff.txt"; fail "diff $A vs $B: no $NA -> $NB $caller row"; }
pass "report --from on either server: $caller $((NA + NB)) of 2 hosts; --host $A: $NA; diff --host $A --vs-host $B"
# a named host with no interval is said (it would only be missing from the sums); two
# selections with no interval are no diff
"$SCHEDPROF" report --from "$(ch_url s1)" --host "$A,nosuch" -f folded > "$TMP/a2.folded" 2> "$TMP/a2.err" ||
	fail "report --host $A,nosuch failed"
grep -qx "sp_pipe_reader;$caller $NA" "$TMP/a2.folded" || fail "report --host $A,nosuch: not $A's $NA"
grep -q "warning: .*: no interval of host nosuch in the selection $A,nosuch$" "$TMP/a2.err" ||
	fail "report --host $A,nosuch: the missing host is not said: $(cat "$TMP/a2.err")"
rc=0
"$SCHEDPROF" diff --from "$(ch_url s1)" --host old1 --vs-host new1 > "$TMP/d0.txt" 2> "$TMP/d0.err" || rc=$?
[ $rc = 1 ] && [ "$(wc -l < "$TMP/d0.err")" = 1 ] && [ ! -s "$TMP/d0.txt" ] ||
	fail "diff of two empty selections: exit $rc, $(cat "$TMP/d0.err")"
pass "a host with no interval is said; a diff of two empty selections exits 1: $(cat "$TMP/d0.err")"

# ---- part 2: hand-made rows ----
for s in s1 s2; do
	ch $s "SYSTEM START MERGES"
	for t in schedules profile locks losses; do
		ch $s "TRUNCATE TABLE schedprof.${t}_local"
	done
done
# rows as two agents would send them, at fixed times (2026-11-30 22:00 UTC on) with two
# kernels: host, boot, kernel, interval, seq; per interval schedules, profile, locks and a
# loss (the agent's lost rows)
python3 - "$A" "$B" "$TMP" <<'PY'
import json, sys, time
a, b, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
def stamp(host, kernel, seq):
    start = 1796076000 + 60 * seq  # 2026-11-30 22:00:00 UTC + seq minutes
    fmt = lambda t: time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))
    return {"host": host, "boot_id": "boot-" + host, "kernel": kernel,
            "interval_start": fmt(start), "interval_end": fmt(start + 60), "seq": seq}
tables = {"schedules": [], "profile": [], "locks": [], "losses": []}
# (host, kernel, seq, pipe count of cat, of sort)
for host, kernel, seq, cat, sort in ((a, "6.1.0", 1, 6, 4), (a, "6.1.0", 2, 15, 5),
                                     (b, "6.12.0", 1, 7, 0)):
    s = stamp(host, kernel, seq)
    for comm, n in (("cat", cat), ("sort", sort)):
        if n:
            tables["schedules"].append(dict(s, caller="anon_pipe_read", wait="pipe", comm=comm,
                                            count=n, offcpu_ns=1000 * n, max_ns=900))
    tables["schedules"].append(dict(s, caller="[preempted]", wait="", comm="cc1", count=seq,
                                    offcpu_ns=50, max_ns=50))
    tables["profile"].append(dict(s, function="main_loop", object="/usr/bin/demo", comm="demo",
                                  samples=10 * seq))
    tables["locks"].append(dict(s, caller="pipe_read", kind="mutex", lock="pipe.mutex",
                                comm="cat", count=2, wait_ns=3000, max_ns=2000))
    tables["losses"].append(dict(s, what="schedules.lost_rows", count=1))
for t, rows in tables.items():
    with open(f"{tmp}/{t}.ndjson", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
PY
for t in schedules profile locks losses; do
	ch_insert s1 "schedprof.$t" "$TMP/$t.ndjson" insert_distributed_sync=1
done

for s in s1 s2; do
	"$SCHEDPROF" report --from "$(ch_url $s)" -n 0 > "$TMP/all.txt" ||
		fail "report --from on $s failed"
	[ "$(row "$TMP/all.txt" anon_pipe_read)" = 37 ] || { cat "$TMP/all.txt"; fail "report --from $s: anon_pipe_read not 37"; }
	[ "$(row "$TMP/all.txt" '[preempted]')" = 4 ] || { cat "$TMP/all.txt"; fail "report --from $s: [preempted] not 1+2+1"; }
done
hosts=$(printf '%s\n' "$A" "$B" | sort | paste -sd, | sed 's/,/, /')
grep -Eq "^warehouse .*: all hosts: 3 intervals of 2 hosts \($hosts\), kernels (6.1.0, 6.12.0|6.12.0, 6.1.0)$" "$TMP/all.txt" ||
	{ cat "$TMP/all.txt"; fail "no warehouse line with 3 intervals of 2 hosts, 2 kernels"; }
grep -q "^schedules: 44 total" "$TMP/all.txt" || fail "schedules total is not 37 + 4 + 3 lost: $(grep ^schedules: "$TMP/all.txt")"
grep -q "note: 3 schedules are in the totals but in no row" "$TMP/all.txt" || fail "the agents' lost rows are not reported"
grep -Eq '^ +40 +100.0% +main_loop +/usr/bin/demo' "$TMP/all.txt" || fail "profile row not 10+20+10 samples: $(grep main_loop "$TMP/all.txt")"
grep -Eq '^ +6 +9.0us .* mutex +pipe.mutex +pipe_read' "$TMP/all.txt" || { cat "$TMP/all.txt"; fail "locks row not 3 x 2 contentions, 9us"; }
grep -q "note: the warehouse keeps no stacks" "$TMP/all.txt" || fail "the table does not say what the warehouse lacks"
pass "report --from on either server: the cluster's sums (schedules, profile, locks, losses)"

"$SCHEDPROF" report --from "$(ch_url s1)" --host "$A" > "$TMP/a.txt" || fail "report --host $A"
[ "$(row "$TMP/a.txt" anon_pipe_read)" = 30 ] || { cat "$TMP/a.txt"; fail "report --host $A: anon_pipe_read not 30"; }
"$SCHEDPROF" report --from "$(ch_url s1)" --since 2026-11-30T22:02:00Z > "$TMP/t.txt" || fail "report --since"
[ "$(row "$TMP/t.txt" anon_pipe_read)" = 20 ] || { cat "$TMP/t.txt"; fail "report --since 22:02: anon_pipe_read not 20 (interval 2 of $A only)"; }
"$SCHEDPROF" report --from "$(ch_url s1)" --until 2026-11-30T23:02:00+01:00 > "$TMP/u.txt" || fail "report --until"
[ "$(row "$TMP/u.txt" anon_pipe_read)" = 17 ] || { cat "$TMP/u.txt"; fail "report --until 22:02Z: anon_pipe_read not 17 (interval 1 of both)"; }
pass "--host and --since/--until select hosts and intervals"

"$SCHEDPROF" report --from "$(ch_url s1)" -f folded --views schedules > "$TMP/folded" 2> "$TMP/folded.err" ||
	fail "report --from -f folded"
grep -qx "cat;anon_pipe_read 28" "$TMP/folded" || { cat "$TMP/folded"; fail "folded: no 'cat;anon_pipe_read 28'"; }
grep -q "keeps no stacks" "$TMP/folded.err" || fail "folded from the warehouse does not say it has no stacks"
"$SCHEDPROF" report --from "$(ch_url s1)" -f pprof -o "$TMP/p.pb.gz" 2>/dev/null ||
	fail "report --from -f pprof"
[ -s "$TMP/p.pb.gz" ] || fail "no pprof file"
pass "folded and pprof from the warehouse (one frame under the comm, said on stderr)"

"$SCHEDPROF" diff --from "$(ch_url s2)" --host "$A" --vs-host "$B" -n 0 > "$TMP/diff.txt" ||
	fail "diff --host --vs-host failed"
grep -Eq '^ +30 +7 +-23 .*anon_pipe_read \(pipe\)' "$TMP/diff.txt" || { cat "$TMP/diff.txt"; fail "diff $A vs $B: no 30 -> 7 anon_pipe_read row"; }
"$SCHEDPROF" diff --from "$(ch_url s2)" --until 2026-11-30T22:02:00Z --vs-since 2026-11-30T22:02:00Z -n 0 > "$TMP/diff2.txt" ||
	fail "diff --until --vs-since failed"
grep -Eq '^ +17 +20 +\+3 .*anon_pipe_read \(pipe\)' "$TMP/diff2.txt" || { cat "$TMP/diff2.txt"; fail "diff by time: no 17 -> 20 anon_pipe_read row"; }
pass "diff: two host groups, two time ranges"

# examples/fleet/queries.sql on the cluster, over rows 10 days and 3 hours old: A's
# anon_pipe_read share rises from 10% to 50%, B's falls from 50% to 10%; kernel 6.12.0 waits
# 4 us per interval on locks, 6.1.0 1 us
for s in s1 s2; do
	for t in schedules profile locks losses; do
		ch $s "TRUNCATE TABLE schedprof.${t}_local"
	done
done
python3 - "$A" "$B" "$TMP" <<'PY'
import json, sys, time
a, b, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
now = int(time.time())
fmt = lambda t: time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))
sched, locks = [], []
# (host, kernel, hours ago, anon_pipe_read sleeps, do_wait sleeps) of two intervals
for host, kernel, hours, pipe, other in ((a, "6.1.0", 240, 10, 90), (a, "6.12.0", 3, 50, 50),
                                         (b, "6.1.0", 240, 50, 50), (b, "6.1.0", 3, 10, 90)):
    for seq in range(2):
        s = {"host": host, "boot_id": f"{host}-{kernel}", "kernel": kernel,
             "interval_start": fmt(now - hours * 3600 + 60 * seq),
             "interval_end": fmt(now - hours * 3600 + 60 * seq + 60), "seq": hours * 10 + seq}
        sched.append(dict(s, caller="anon_pipe_read", wait="pipe", comm="cat", count=pipe // 2,
                          offcpu_ns=pipe * 10**6, max_ns=10**6))
        sched.append(dict(s, caller="do_wait", wait="child", comm="sh", count=other // 2,
                          offcpu_ns=other * 10**5, max_ns=10**5))
        if hours == 3:
            w = 4000 if kernel == "6.12.0" else 1000
            locks.append(dict(s, caller="pipe_read", kind="mutex", lock="pipe.mutex", comm="cat",
                              count=2, wait_ns=w, max_ns=w))
for name, rows in (("schedules", sched), ("locks", locks)):
    with open(f"{tmp}/week_{name}.ndjson", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
PY
ch_insert s1 schedprof.schedules "$TMP/week_schedules.ndjson" insert_distributed_sync=1
ch_insert s1 schedprof.locks "$TMP/week_locks.ndjson" insert_distributed_sync=1
# the queries, one per statement (comments dropped), answers as TabSeparated
python3 - "$SRC/examples/fleet/queries.sql" "$TMP" <<'PY'
import re, sys
sql = re.sub(r"--[^\n]*", "", open(sys.argv[1]).read())
qs = [q.strip() for q in sql.split(";") if q.strip()]
assert len(qs) == 3, len(qs)
for i, q in enumerate(qs, 1):
    open(f"{sys.argv[2]}/q{i}.sql", "w").write(q + "\nFORMAT TabSeparated")
PY
ch s2 "$(cat "$TMP/q1.sql")" > "$TMP/q1.out"
ch s2 "$(cat "$TMP/q2.sql")" > "$TMP/q2.out"
ch s2 "$(cat "$TMP/q3.sql")" > "$TMP/q3.out"
[ "$(head -1 "$TMP/q1.out" | cut -f1-5)" = "anon_pipe_read	pipe	60	0.12	2" ] ||
	{ cat "$TMP/q1.out"; fail "query 1: the top caller of the last day is not anon_pipe_read (60 sleeps, 0.12 s, 2 hosts)"; }
[ "$(cut -f1-4 "$TMP/q2.out")" = "$A	0.1	0.5	0.4" ] ||
	{ cat "$TMP/q2.out"; fail "query 2: not exactly $A, its anon_pipe_read share 0.1 -> 0.5"; }
[ "$(cut -f1-6 "$TMP/q3.out" | tr '\t\n' ' /')" = "6.12.0 1 2 4 0.000008 4000/6.1.0 1 2 4 0.000002 1000/" ] ||
	{ cat -A "$TMP/q3.out"; fail "query 3: lock wait by kernel release is not 6.12.0 4000 ns, 6.1.0 1000 ns per interval"; }
pass "examples/fleet/queries.sql on the cluster: top callers, $A's anon_pipe_read share rose, lock wait by kernel"
