#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The example cluster's files as examples/fleet/README.md installs them: two
# servers from copies of Debian's /etc/clickhouse-server, each with shardN.xml and cluster.xml
# in config.d/ (only their ports and paths changed, to free ones under $TMP), the DDL of
# sql/cluster/ through clickhouse-client as the README gives it, then a row in through one
# server's Distributed table and back from the other's. test_fleet_shards.sh runs the agents
# on a cluster built from cluster.xml alone; this test covers the drop-ins it does not use.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test_fleet_common.sh"
require_clickhouse
[ -f /etc/clickhouse-server/config.xml ] ||
	_ch_skip_or_fail "needs Debian's /etc/clickhouse-server/config.xml (clickhouse-server)"

ch_alloc ex1
ch_alloc ex2
# ex_start N: shard N from Debian's config and the example's drop-ins, as clickhouse_lib.sh's
# server exN (its pid file: killed at exit)
ex_start() {
	local n=$1 d
	d=$(_ch_dir ex$n)
	cp -r /etc/clickhouse-server "$d/etc"
	mkdir -p "$d/etc/config.d"
	sed -e "s#<http_port>812$n<#<http_port>$(ch_port ex$n http)<#" \
	    -e "s#<tcp_port>900$n<#<tcp_port>$(ch_port ex$n tcp)<#" \
	    -e "s#<interserver_http_port>901$n<#<interserver_http_port>$(ch_port ex$n interserver)<#" \
	    -e "s#/var/lib/clickhouse-shard$n/#$d/data/#" -e "s#/var/log/clickhouse-shard$n/#$d/#" \
		"$SRC/examples/fleet/shard$n.xml" > "$d/etc/config.d/shard.xml"
	sed -e "s#<port>9001</port>#<port>$(ch_port ex1 tcp)</port>#" \
	    -e "s#<port>9002</port>#<port>$(ch_port ex2 tcp)</port>#" \
		"$SRC/examples/fleet/cluster.xml" > "$d/etc/config.d/cluster.xml"
	# every port and path of the drop-in was replaced: none of the example's is left
	grep -Eq '>(812[12]|900[12]|901[12])<|/var/(lib|log)/' "$d/etc/config.d/shard.xml" &&
		fail "shard$n.xml: a port or path the test did not replace: $(cat "$d/etc/config.d/shard.xml")"
	( "$CH_SERVER" --config="$d/etc/config.xml" >> "$d/stdout" 2>&1 & echo $! > "$d/pid" )
	for _ in $(seq 600); do
		curl -sf --max-time 1 "http://127.0.0.1:$(ch_port ex$n http)/ping" >/dev/null 2>&1 && return 0
		kill -0 "$(cat "$d/pid")" 2>/dev/null || break
		sleep 0.1
	done
	tail -20 "$d/stdout" "$d"/*.err.log >&2 2>/dev/null
	fail "shard $n from Debian's config with examples/fleet/shard$n.xml did not start"
}
ex_start 1
ex_start 2
for n in 1 2; do
	[ "$(ch ex$n "SELECT groupArray(port) FROM (SELECT port FROM system.clusters WHERE cluster = 'fleet' ORDER BY shard_num)")" = \
		"[$(ch_port ex1 tcp),$(ch_port ex2 tcp)]" ] || fail "server $n: the cluster 'fleet' is not its two shards"
done
# the tables as a cluster made before the schedules rows' split and the profile's rate
# (shard.sql without those columns): report --from reads them as they are; then
# sql/cluster/add-columns.sql, and the rows below go in with the split
python3 - "$SRC/sql/cluster/shard.sql" > "$TMP/shard-old.sql" <<'PY'
import re, sys
added = r'((blocked_ns|runq_ns|throttled_ns|migrated|migrated_runq_ns|runq_max_ns) UInt64|hz UInt32)'
s = re.sub(r'\n\s*' + added + r' DEFAULT 0,?[^\n]*', '', open(sys.argv[1]).read())
print(re.sub(r',(\s*\n\))', r'\1', s), end='')
PY
grep -Eq 'runq_ns|hz' "$TMP/shard-old.sql" && fail "shard-old.sql still has the split or the rate"
for n in 1 2; do
	ch_file ex$n "$TMP/shard-old.sql"
	ch_file ex$n "$SRC/sql/cluster/distributed.sql"
done
printf '%s\n' '{"host":"old","boot_id":"b","kernel":"k","interval_start":"2026-11-30 21:00:00","interval_end":"2026-11-30 21:01:00","seq":1,"function":"spin","object":"[kernel]","comm":"cat","samples":3}' \
	> "$TMP/old-profile.ndjson"
printf '%s\n' '{"host":"old","boot_id":"b","kernel":"k","interval_start":"2026-11-30 21:00:00","interval_end":"2026-11-30 21:01:00","seq":1,"caller":"anon_pipe_read","wait":"pipe","comm":"cat","count":4,"offcpu_ns":40,"max_ns":20}' \
	> "$TMP/old-sched.ndjson"
ch_insert ex1 schedprof.profile "$TMP/old-profile.ndjson" insert_distributed_sync=1
ch_insert ex1 schedprof.schedules "$TMP/old-sched.ndjson" insert_distributed_sync=1
"$SCHEDPROF" report --from "$(ch_url ex2)" -f json \
	-o "$TMP/old.json" 2> "$TMP/old.err" || fail "report --from the older tables: $(cat "$TMP/old.err")"
python3 - "$TMP/old.json" <<'PY' || fail "report --from the older tables: $(cat "$TMP/old.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert [(x['function'], x['samples']) for x in r['profile']['functions']] == [('spin', 3)], r['profile']
assert [(x['caller'], x['count']) for x in r['schedules']['callers']] == [('anon_pipe_read', 4)], r['schedules']
PY
"$SCHEDPROF" report "$TMP/old.json" -f table > "$TMP/old.txt" 2> "$TMP/old.err" ||
	fail "report of report --from's JSON of the older tables: $(cat "$TMP/old.err")"
for n in 1 2; do
	ch_file ex$n "$SRC/sql/cluster/add-columns.sql"
	for t in schedules schedules_local; do
		c=$(ch ex$n "SELECT count() FROM system.columns WHERE database = 'schedprof' AND table = '$t' AND name IN ('blocked_ns', 'runq_ns', 'throttled_ns', 'migrated', 'migrated_runq_ns', 'runq_max_ns')")
		[ "$c" = 6 ] || fail "server $n: add-columns.sql gave $t $c of the 6 split columns"
	done
	for t in profile profile_local; do
		c=$(ch ex$n "SELECT count() FROM system.columns WHERE database = 'schedprof' AND table = '$t' AND name = 'hz'")
		[ "$c" = 1 ] || fail "server $n: add-columns.sql gave $t no hz column"
	done
done
ch ex1 "TRUNCATE TABLE schedprof.schedules_local"
ch ex2 "TRUNCATE TABLE schedprof.schedules_local"
pass "two servers from Debian's config with examples/fleet/shard{1,2}.xml and cluster.xml, sql/cluster applied (older tables, read by report --from, then add-columns.sql)"

# one row per host, one host per shard (sipHash64(host) % 2), in through server 1's
# Distributed table, back from server 2's
h1=$(ch ex1 "SELECT h FROM (SELECT arrayJoin(['alpha','bravo','charlie','delta','echo']) AS h) WHERE sipHash64(h) % 2 = 0 LIMIT 1")
h2=$(ch ex1 "SELECT h FROM (SELECT arrayJoin(['alpha','bravo','charlie','delta','echo']) AS h) WHERE sipHash64(h) % 2 = 1 LIMIT 1")
printf '%s\n' \
	'{"host":"'$h1'","boot_id":"b","kernel":"k","interval_start":"2026-11-30 22:00:00","interval_end":"2026-11-30 22:01:00","seq":1,"caller":"anon_pipe_read","wait":"pipe","comm":"cat","count":5,"offcpu_ns":50,"max_ns":20}' \
	'{"host":"'$h2'","boot_id":"b","kernel":"k","interval_start":"2026-11-30 22:00:00","interval_end":"2026-11-30 22:01:00","seq":1,"caller":"anon_pipe_read","wait":"pipe","comm":"cat","count":7,"offcpu_ns":70,"max_ns":20,"blocked_ns":60,"runq_ns":10}' \
	> "$TMP/rows.ndjson"
ch_insert ex1 schedprof.schedules "$TMP/rows.ndjson" insert_distributed_sync=1
[ "$(ch ex2 "SELECT sum(count) FROM schedprof.schedules FINAL")" = 12 ] || fail "the cluster does not sum 5 + 7"
[ "$(ch ex2 "SELECT sum(runq_ns) FROM schedprof.schedules FINAL")" = 10 ] || fail "the split column runq_ns did not go through"
l1=$(ch ex1 "SELECT count() FROM schedprof.schedules_local")
l2=$(ch ex2 "SELECT count() FROM schedprof.schedules_local")
[ "$l1" = 1 ] && [ "$l2" = 1 ] || fail "$h1 and $h2: not one row per shard: $l1 and $l2"
pass "a row per host through the Distributed table: one on each shard, summed (12) from the other server"
