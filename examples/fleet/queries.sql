-- SPDX-License-Identifier: BSD-2-Clause
-- Fleet questions asked of the schedprof warehouse in SQL. They run as they are
-- on one server (sql/schema.sql) and on a cluster (sql/cluster/: the same names are the
-- Distributed tables), on ClickHouse 18.16 and later; tests/integration/test_fleet_shards.sh
-- runs each against the two-shard example cluster and checks its answer.
-- FINAL counts an interval the agent re-sent (a spool replay) once, merged or not yet.
-- `clickhouse-client --multiquery < queries.sql`, or one at a time over HTTP.

-- 1. Which callers put tasks to sleep, fleet-wide, in the last day: sleeps, off-CPU time, on
--    how many hosts.
SELECT caller, wait, sum(count) AS sleeps, round(sum(offcpu_ns) / 1e9, 3) AS offcpu_s,
       uniqExact(host) AS hosts
FROM schedprof.schedules FINAL
WHERE interval_start >= now() - INTERVAL 1 DAY
GROUP BY caller, wait
ORDER BY offcpu_s DESC, sleeps DESC
LIMIT 20;

-- 2. Hosts whose anon_pipe_read share of their sleeps rose week over week (the last 7 days
--    against the 7 before), most first: where pipes started to make tasks wait.
SELECT host,
       round(sumIf(count, caller = 'anon_pipe_read' AND interval_start < now() - INTERVAL 7 DAY)
             / sumIf(count, interval_start < now() - INTERVAL 7 DAY), 4) AS last_week,
       round(sumIf(count, caller = 'anon_pipe_read' AND interval_start >= now() - INTERVAL 7 DAY)
             / sumIf(count, interval_start >= now() - INTERVAL 7 DAY), 4) AS this_week,
       this_week - last_week AS rise
FROM schedprof.schedules FINAL
WHERE interval_start >= now() - INTERVAL 14 DAY
GROUP BY host
HAVING last_week > 0 AND this_week > last_week
ORDER BY rise DESC;

-- 3. Lock wait by kernel release over the last week, ranked per interval recorded, so a
--    kernel that runs on more hosts does not rank higher for that alone.
SELECT kernel, uniqExact(host) AS hosts, uniqExact(host, boot_id, seq) AS intervals,
       sum(count) AS contentions, round(sum(wait_ns) / 1e9, 6) AS wait_s,
       round(sum(wait_ns) / intervals) AS wait_ns_per_interval,
       round(sum(wait_ns) / sum(count)) AS avg_wait_ns, max(max_ns) AS max_wait_ns
FROM schedprof.locks FINAL
WHERE interval_start >= now() - INTERVAL 7 DAY
GROUP BY kernel
ORDER BY wait_ns_per_interval DESC;
