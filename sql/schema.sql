-- SPDX-License-Identifier: BSD-2-Clause
-- schedprof agent: one ClickHouse node. `schedprof agent --create-schema` runs these
-- statements (embedded in the binary) against the database of --sink clickhouse://HOST:PORT/DB
-- ("schedprof" is replaced by DB); `clickhouse-client --multiquery < schema.sql` does the same.
--
-- Every row carries who and when: host, boot_id, kernel (uname -r), the interval's start and
-- end (UTC, seconds) and seq, the agent's interval number (persisted in its spool, so it goes
-- on across restarts). An interval is re-sent after a failure until the server acknowledges
-- all four tables, so a row can arrive twice: the tables are ReplacingMergeTree whose sorting
-- key holds (host, boot_id, seq) and the row's own key, so copies collapse into one. Merges
-- happen in the background: exact queries read with FINAL (SELECT ... FROM schedules FINAL).
-- Sorting keys start with host and time, which every fleet query filters on; caller/function
-- come next for the per-caller sums.
-- Times in nanoseconds; max_ns is the interval's row maximum since the agent started (a maximum
-- does not subtract). wait is '' when the sleep has no class.
-- Retention: servers >= 19.6 get "TTL interval_end + INTERVAL <--ttl days> DAY" where the
-- marker below stands (the agent adds it after SELECT version()); older servers (Debian 12's
-- 18.16) have no TTL: partitions are by day, drop old ones with
-- ALTER TABLE schedprof.schedules DROP PARTITION 20250101 (and so on for each table).

CREATE DATABASE IF NOT EXISTS schedprof;

CREATE TABLE IF NOT EXISTS schedprof.schedules (
	host String, boot_id String, kernel String,
	interval_start DateTime('UTC'), interval_end DateTime('UTC'), seq UInt64,
	caller String, wait String, comm String,
	count UInt64, offcpu_ns UInt64, max_ns UInt64,
	-- the row's split of offcpu_ns (blocked + runq; of runq, the throttled part; the sleeps
	-- that woke on another CPU, and their runq; the longest wait for a CPU, since the agent
	-- started, as max_ns), on the row's first comm line, the others 0; 0 and 0 where the
	-- split was not measured, or from an agent before these columns
	blocked_ns UInt64 DEFAULT 0, runq_ns UInt64 DEFAULT 0, throttled_ns UInt64 DEFAULT 0,
	migrated UInt64 DEFAULT 0, migrated_runq_ns UInt64 DEFAULT 0, runq_max_ns UInt64 DEFAULT 0
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(interval_start)
ORDER BY (host, interval_start, boot_id, seq, caller, wait, comm) /*TTL*/;

-- A table an older agent made lacks the columns added since: --create-schema adds them
-- (src/fleet/sink.c, ALTER TABLE ... ADD COLUMN for each missing one: 18.16 has no
-- ADD COLUMN IF NOT EXISTS); a cluster: sql/cluster/add-columns.sql.

CREATE TABLE IF NOT EXISTS schedprof.profile (
	host String, boot_id String, kernel String,
	interval_start DateTime('UTC'), interval_end DateTime('UTC'), seq UInt64,
	function String, object String, comm String,
	samples UInt64,
	hz UInt32 DEFAULT 0 -- the sampling rate (per CPU); 0: not recorded
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(interval_start)
ORDER BY (host, interval_start, boot_id, seq, function, object, comm) /*TTL*/;

CREATE TABLE IF NOT EXISTS schedprof.locks (
	host String, boot_id String, kernel String,
	interval_start DateTime('UTC'), interval_end DateTime('UTC'), seq UInt64,
	caller String, kind String, lock String, comm String,
	count UInt64, wait_ns UInt64, max_ns UInt64
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(interval_start)
ORDER BY (host, interval_start, boot_id, seq, caller, kind, lock, comm) /*TTL*/;

-- Who took the CPU from a schedules row's waits (caller, wait): the task that preempted it
-- (kind preempted-by, ns the waits after) or that ran before its switch-ins (ran-before, ns
-- its runs' overlap with the waits), by comm and cgroup v2 path ('' unknown); side: inside
-- or outside the traced set.
CREATE TABLE IF NOT EXISTS schedprof.cpu_takers (
	host String, boot_id String, kernel String,
	interval_start DateTime('UTC'), interval_end DateTime('UTC'), seq UInt64,
	caller String, wait String, kind String, comm String, cgroup String, side String,
	count UInt64, ns UInt64
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(interval_start)
ORDER BY (host, interval_start, boot_id, seq, caller, wait, kind, comm, cgroup, side) /*TTL*/;

-- what: schedules.lost_rows, schedules.missing_stacks, profile.lost, profile.missing_stacks,
-- locks.lost, locks.missing_stacks, locks.missed, locks.unpaired (the BPF side: maps full,
-- stacks not kept), spool.dropped_intervals (dropped from a full spool before they were
-- sent), spool.unwritten_intervals (the spool could not take them: disk),
-- spool.unreadable_intervals (spool files that could not be read back); non-zero only.
CREATE TABLE IF NOT EXISTS schedprof.losses (
	host String, boot_id String, kernel String,
	interval_start DateTime('UTC'), interval_end DateTime('UTC'), seq UInt64,
	what String, count UInt64
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(interval_start)
ORDER BY (host, interval_start, boot_id, seq, what) /*TTL*/;
