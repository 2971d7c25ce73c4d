-- SPDX-License-Identifier: BSD-2-Clause
-- schedprof fleet warehouse, cluster form: retention by TTL, for ClickHouse 19.6 and later
-- (SELECT version()), on every shard after shard.sql. Rows go 90 days after their interval
-- started; change the interval to keep more or less.
--
-- ClickHouse 18.16 (Debian 12) has no TTL and rejects this file. There the tables' daily
-- partitions are the unit of retention: examples/fleet/README.md ("Retention") lists them and
-- drops the days older than you keep, e.g. from cron:
--   ALTER TABLE schedprof.schedules_local DROP PARTITION 20260801
ALTER TABLE schedprof.schedules_local MODIFY TTL interval_start + INTERVAL 90 DAY;
ALTER TABLE schedprof.profile_local MODIFY TTL interval_start + INTERVAL 90 DAY;
ALTER TABLE schedprof.locks_local MODIFY TTL interval_start + INTERVAL 90 DAY;
ALTER TABLE schedprof.cpu_takers_local MODIFY TTL interval_start + INTERVAL 90 DAY;
ALTER TABLE schedprof.losses_local MODIFY TTL interval_start + INTERVAL 90 DAY;
