-- SPDX-License-Identifier: BSD-2-Clause
-- schedprof fleet warehouse, cluster form, part 1 of 2: the tables that hold the rows, on
-- EVERY shard (run this file on each server of the cluster: ClickHouse 18.16 has no
-- ON CLUSTER without ZooKeeper). Same columns as sql/schema.sql, in tables named *_local;
-- distributed.sql puts the names the agent inserts into (schedules, profile, locks,
-- cpu_takers, losses) over them.
--
-- Engine: ReplacingMergeTree. Its ORDER BY key holds (host, boot_id, seq) and the row's
-- identity, so an interval the agent sends twice (spool replay after a lost reply) collapses
-- to one row at merge time, and queries with FINAL (or the GROUP BY in
-- examples/fleet/queries.sql) count it once before any merge. The sharding key of
-- distributed.sql sends all rows of a host to one shard, so both copies of a re-sent interval
-- meet on the same shard: the deduplication works across the cluster.
--
-- ORDER BY keys, for the fleet's questions:
--   schedules, profile, losses: (host, interval_start, ...): per-host reports over a time
--     range (report --from --host H --since T) and per-host regressions read a narrow range
--     of the index; fleet-wide top callers read every host's slice of the time range.
--   locks: (kernel, host, interval_start, ...): lock wait by kernel release reads one kernel's
--     rows together.
-- Partitions: one per day (toYYYYMMDD(interval_start), as sql/schema.sql): the retention of
-- 18.16, which has no TTL (19.6+: ttl.sql), is dropping whole days (examples/fleet/README.md,
-- "Retention").
CREATE DATABASE IF NOT EXISTS schedprof;

CREATE TABLE IF NOT EXISTS schedprof.schedules_local (
	host String,
	boot_id String,
	kernel String,
	interval_start DateTime('UTC'),
	interval_end DateTime('UTC'),
	seq UInt64,
	caller String,
	wait String,
	comm String,
	count UInt64,
	offcpu_ns UInt64,
	max_ns UInt64,
	blocked_ns UInt64 DEFAULT 0, -- the row's split (sql/schema.sql), since add-columns.sql
	runq_ns UInt64 DEFAULT 0,
	throttled_ns UInt64 DEFAULT 0,
	migrated UInt64 DEFAULT 0,
	migrated_runq_ns UInt64 DEFAULT 0,
	runq_max_ns UInt64 DEFAULT 0
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(interval_start)
ORDER BY (host, interval_start, boot_id, seq, caller, wait, comm);

CREATE TABLE IF NOT EXISTS schedprof.profile_local (
	host String,
	boot_id String,
	kernel String,
	interval_start DateTime('UTC'),
	interval_end DateTime('UTC'),
	seq UInt64,
	function String,
	object String,
	comm String,
	samples UInt64,
	hz UInt32 DEFAULT 0 -- the sampling rate (per CPU); 0: not recorded
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(interval_start)
ORDER BY (host, interval_start, boot_id, seq, function, object, comm);

CREATE TABLE IF NOT EXISTS schedprof.locks_local (
	host String,
	boot_id String,
	kernel String,
	interval_start DateTime('UTC'),
	interval_end DateTime('UTC'),
	seq UInt64,
	caller String,
	kind String,
	lock String,
	comm String,
	count UInt64,
	wait_ns UInt64,
	max_ns UInt64
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(interval_start)
ORDER BY (kernel, host, interval_start, boot_id, seq, caller, kind, lock, comm);

CREATE TABLE IF NOT EXISTS schedprof.cpu_takers_local (
	host String,
	boot_id String,
	kernel String,
	interval_start DateTime('UTC'),
	interval_end DateTime('UTC'),
	seq UInt64,
	caller String,
	wait String,
	kind String,
	comm String,
	cgroup String,
	side String,
	count UInt64,
	ns UInt64
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(interval_start)
ORDER BY (host, interval_start, boot_id, seq, caller, wait, kind, comm, cgroup, side);

CREATE TABLE IF NOT EXISTS schedprof.losses_local (
	host String,
	boot_id String,
	kernel String,
	interval_start DateTime('UTC'),
	interval_end DateTime('UTC'),
	seq UInt64,
	what String,
	count UInt64
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(interval_start)
ORDER BY (host, interval_start, boot_id, seq, what);
