#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# schedprof agent against real sinks. A reader that blocks exactly N times on a pipe
# (spwork pipe) while an agent traces this script's tree (-p: see agent_start) in 1 s
# intervals:
#   ndjson     the rows of table schedules for (anon_pipe_read, sp_pipe_reader) add up to N;
#   exactness  the same in ClickHouse: SUM(count) ... FINAL = N, the workload spread over
#              several intervals;
#   server down  the server is killed in the middle and restarted: still exactly N, the
#              intervals of the outage delivered in order from the spool; then the spooled
#              batches are sent a second time on purpose (a restarted agent finding them
#              again): the rows land twice, FINAL still sums to N (ReplacingMergeTree on
#              host, boot_id, seq and the row's key);
#   seq        a restarted agent goes on with the sequence numbers of its spool.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse_lib.sh"
require_bpf
require_clickhouse
[ -x "$SPWORK" ] || fail "SPWORK must name the built spwork"
PER=4000 # blocks per run of the workload
caller=$(pipe_read_fn)

# agent_start NAME ARGS...: an agent in the background (pid in $TMP/NAME.pid, stderr NAME.err).
# It traces this script and its descendants (-p $$), not the whole system: other tests on
# the machine may run spwork pipe too, and their sp_pipe_reader would count as ours.
agent_start() {
	local name=$1
	shift
	"$SCHEDPROF" agent -p $$ -i 1 --views schedules --spool "$TMP/spool-$name" "$@" \
		2> "$TMP/$name.err" &
	echo $! > "$TMP/$name.pid"
	wait_attached "$(cat "$TMP/$name.pid")"
	# attached for sure once the first interval was spooled (its seq file written): a link
	# fd alone may come before the last program is attached
	for _ in $(seq 200); do
		[ -e "$TMP/spool-$name/seq" ] && return 0
		sleep 0.05
	done
	fail "agent $name spooled no interval within 10 s: $(cat "$TMP/$name.err")"
}

# agent_stop NAME: SIGINT, then its exit status must be 0
agent_stop() {
	local pid rc=0
	pid=$(cat "$TMP/$1.pid")
	kill -INT "$pid"
	wait "$pid" || rc=$?
	[ $rc = 0 ] || { cat "$TMP/$1.err" >&2; fail "agent $1 exited $rc"; }
}

# the workload: RUNS runs of spwork pipe $PER, a pause between them (several intervals)
workload() {
	local i
	for i in $(seq "$1"); do
		"$SPWORK" pipe $PER || fail "spwork pipe failed"
		sleep 1.2
	done
}

# ---- ndjson ----
agent_start nd --sink "ndjson:$TMP/rows.ndjson"
workload 2
agent_stop nd
read -r n nseq < <(python3 - "$TMP/rows.ndjson" "$caller" <<'PY'
import json, sys
n, seqs = 0, set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    for k in ("table", "host", "boot_id", "kernel", "interval_start", "interval_end", "seq"):
        assert k in r, "row without " + k + ": " + line
    seqs.add(r["seq"])
    if r["table"] == "schedules" and r["caller"] == sys.argv[2] and r["comm"] == "sp_pipe_reader":
        n += r["count"]
print(n, len(seqs))
PY
) || fail "the ndjson rows do not read back"
[ "$n" = $((2 * PER)) ] || fail "ndjson: $caller of sp_pipe_reader counts $n, expected $((2 * PER))"
[ "$nseq" -ge 3 ] || fail "ndjson: only $nseq intervals"
pass "ndjson: $caller of sp_pipe_reader = $n = 2 x $PER over $nseq intervals"

# ---- exactness: ClickHouse ----
ch_start ch
url=$(ch_url ch)
host=exact-$$
sum_final() {
	ch_query ch "SELECT sum(count) FROM schedprof.schedules FINAL WHERE host = '$1' AND caller = '$caller' AND comm = 'sp_pipe_reader'"
}
# the rows behind a sum, for a failure's message
rows_of() {
	echo "the rows of $1 (seq, interval_start, boot_id, count, copies without FINAL):"
	ch_query ch "SELECT seq, interval_start, boot_id, count, count() FROM schedprof.schedules WHERE host = '$1' AND caller = '$caller' AND comm = 'sp_pipe_reader' GROUP BY seq, interval_start, boot_id, count ORDER BY seq"
}
# the schedules table an older agent made (no split columns): --create-schema adds them
ch_query ch "CREATE DATABASE schedprof" || fail "CREATE DATABASE"
ch_query ch "CREATE TABLE schedprof.schedules (host String, boot_id String, kernel String, interval_start DateTime('UTC'), interval_end DateTime('UTC'), seq UInt64, caller String, wait String, comm String, count UInt64, offcpu_ns UInt64, max_ns UInt64) ENGINE = ReplacingMergeTree PARTITION BY toYYYYMMDD(interval_start) ORDER BY (host, interval_start, boot_id, seq, caller, wait, comm)" ||
	fail "CREATE TABLE (an older agent's schedules)"
agent_start ex --sink "$url" --create-schema --hostname $host
workload 3
agent_stop ex
n=$(sum_final $host)
[ "$n" = $((3 * PER)) ] || { rows_of $host >&2; fail "ClickHouse: SUM(count) = $n, expected $((3 * PER))"; }
cols=$(ch_query ch "SELECT count() FROM system.columns WHERE database = 'schedprof' AND table = 'schedules' AND name IN ('blocked_ns', 'runq_ns', 'throttled_ns', 'migrated', 'migrated_runq_ns', 'runq_max_ns')")
[ "$cols" = 6 ] || fail "--create-schema added $cols of the 6 split columns to an older table"
# the pipe reader's sleeps: measured split, blocked + runq = off-CPU over the row's lines
read -r off split runq < <(ch_query ch "SELECT sum(offcpu_ns), sum(blocked_ns + runq_ns), sum(runq_ns) FROM schedprof.schedules FINAL WHERE host = '$host' AND caller = '$caller'")
[ "${split:-0}" -gt 0 ] && [ "$split" = "$off" ] ||
	fail "ClickHouse: $caller's blocked + runq = $split ns, its off-CPU $off ns"
pass "an older table gets the split columns; $caller: blocked + runq = off-CPU = $off ns (runq $runq ns)"
ivs=$(ch_query ch "SELECT uniqExact(seq) FROM schedprof.schedules FINAL WHERE host = '$host' AND comm = 'sp_pipe_reader'")
[ "$ivs" -ge 2 ] || fail "the workload fell in $ivs interval(s): no test of the intervals' sum"
pass "exactness: SUM(count) FINAL = $n = 3 x $PER, over $ivs intervals"
# every row is stamped
bad=$(ch_query ch "SELECT count() FROM schedprof.schedules WHERE host = '$host' AND (boot_id != '$(cat /proc/sys/kernel/random/boot_id)' OR kernel != '$(uname -r)' OR seq = 0 OR interval_end < interval_start)")
[ "$bad" = 0 ] || fail "$bad rows with a wrong boot_id, kernel, seq or interval"
pass "rows stamped with boot_id, kernel, seq and the interval"

# ---- server down ----
host=down-$$
agent_start dn --sink "$url" --hostname $host
"$SPWORK" pipe $PER || fail "spwork pipe failed"
sleep 1.5
ch_kill ch
"$SPWORK" pipe $PER || fail "spwork pipe failed"
sleep 2.5 # intervals fail, stay spooled
ls "$TMP/spool-dn"/*.batch > /dev/null 2>&1 || fail "nothing spooled while the server was down"
mkdir "$TMP/resend"
cp "$TMP/spool-dn"/*.batch "$TMP/resend/"
nspooled=$(ls "$TMP/resend" | wc -l)
"$SPWORK" pipe $PER || fail "spwork pipe failed"
ch_start ch
sleep 3 # the sender's retry (at most 4 s after these failures) delivers the spool
"$SPWORK" pipe $PER || fail "spwork pipe failed"
sleep 1.2
agent_stop dn
grep -q "cannot send interval" "$TMP/dn.err" || fail "the outage was not said: $(cat "$TMP/dn.err")"
grep -q "sending again" "$TMP/dn.err" || fail "the server back was not said (no -v): $(cat "$TMP/dn.err")"
n=$(sum_final $host)
[ "$n" = $((4 * PER)) ] || { rows_of $host >&2; cat "$TMP/dn.err" >&2; fail "server down: SUM(count) FINAL = $n, expected $((4 * PER))"; }
pass "server down: SUM(count) FINAL = $n = 4 x $PER ($nspooled intervals spooled in the outage)"
left=$(ls "$TMP/spool-dn" | grep -c batch || true)
[ "$left" = 0 ] || fail "$left intervals left in the spool"

# the same batches once more, as an agent that crashed before removing them would send them
last=$(cat "$TMP/spool-dn/seq")
# merges stopped: the copies stay apart, and only FINAL collapses them
ch_query ch "SYSTEM STOP MERGES" || fail "SYSTEM STOP MERGES"
cp "$TMP/resend"/*.batch "$TMP/spool-dn/"
"$SCHEDPROF" agent -p $$ -i 1 -d 1 --views schedules --spool "$TMP/spool-dn" --sink "$url" \
	--hostname $host 2> "$TMP/dn2.err" || fail "the resending agent failed: $(cat "$TMP/dn2.err")"
raw=$(ch_query ch "SELECT sum(count) FROM schedprof.schedules WHERE host = '$host' AND caller = '$caller' AND comm = 'sp_pipe_reader'")
n=$(sum_final $host)
[ "$n" = $((4 * PER)) ] || fail "after the resend: SUM(count) FINAL = $n, expected $((4 * PER))"
[ "$raw" -gt "$n" ] || fail "raw sum $raw: the resent batches did not arrive (FINAL $n)"
pass "resent $nspooled batches: raw SUM $raw, FINAL still $n (duplicates collapse)"

# seq goes on across restarts
maxseq=$(ch_query ch "SELECT max(seq) FROM schedprof.schedules WHERE host = '$host'")
[ "$maxseq" -ge "$last" ] || fail "the restarted agent's seq $maxseq is below the spool's $last"
dupseq=$(ch_query ch "SELECT count() FROM (SELECT seq, uniqExact(interval_start) AS k FROM schedprof.losses FINAL WHERE host = '$host' GROUP BY seq HAVING k > 1)")
[ "$dupseq" = 0 ] || fail "$dupseq sequence numbers used for two intervals"
pass "seq continued across the restart (spool's next $last, max sent $maxseq)"

# ---- the systemd unit's capabilities are enough (dist/schedprof-agent.service) ----
if command -v setpriv >/dev/null; then
	rc=0
	setpriv --inh-caps=-all --ambient-caps=-all \
		--bounding-set=-all,+bpf,+perfmon,+syslog,+sys_ptrace,+dac_read_search \
		"$SCHEDPROF" agent -p $$ -i 0.5 -d 2 --spool "$TMP/spool-caps" \
		--sink "ndjson:$TMP/caps.ndjson" 2> "$TMP/caps.err" &
	cpid=$!
	sleep 0.7
	"$SPWORK" pipe 500 || fail "spwork pipe failed"
	wait $cpid || rc=$?
	[ $rc = 0 ] || fail "with the unit's capabilities only: exit $rc: $(cat "$TMP/caps.err")"
	grep -qi 'capab\|CAP_' "$TMP/caps.err" && fail "capability warnings: $(cat "$TMP/caps.err")"
	n=$(grep -c '"table":"schedules"' "$TMP/caps.ndjson" || true)
	[ "$n" -gt 0 ] || fail "with the unit's capabilities only: no rows"
	pass "with only CAP_BPF, CAP_PERFMON, CAP_SYSLOG, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH: $n rows, exit 0"
else
	[ "${CI:-}" = true ] && fail "needs setpriv (util-linux)"
	echo "(setpriv missing: the unit's capability set not tried)"
fi
