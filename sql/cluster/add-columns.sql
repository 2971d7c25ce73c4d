-- SPDX-License-Identifier: BSD-2-Clause
-- schedprof fleet warehouse, cluster form: the columns added since a cluster's tables were
-- made, for tables shard.sql and distributed.sql made before them (new ones have them). Run
-- on every server, once per change below: a column already there fails its ALTER ("already
-- exists"), which is harmless. A table added since (cpu_takers) comes from running
-- shard.sql and distributed.sql again (IF NOT EXISTS). A single node does not need this: the
-- agent's --create-schema adds what its tables lack.
--
-- The schedules rows' split (sql/schema.sql): blocked and waiting for a CPU, throttled,
-- migrated, the longest wait for a CPU.
ALTER TABLE schedprof.schedules_local ADD COLUMN blocked_ns UInt64 DEFAULT 0,
	ADD COLUMN runq_ns UInt64 DEFAULT 0, ADD COLUMN throttled_ns UInt64 DEFAULT 0,
	ADD COLUMN migrated UInt64 DEFAULT 0, ADD COLUMN migrated_runq_ns UInt64 DEFAULT 0,
	ADD COLUMN runq_max_ns UInt64 DEFAULT 0;
ALTER TABLE schedprof.schedules ADD COLUMN blocked_ns UInt64 DEFAULT 0,
	ADD COLUMN runq_ns UInt64 DEFAULT 0, ADD COLUMN throttled_ns UInt64 DEFAULT 0,
	ADD COLUMN migrated UInt64 DEFAULT 0, ADD COLUMN migrated_runq_ns UInt64 DEFAULT 0,
	ADD COLUMN runq_max_ns UInt64 DEFAULT 0;
-- The profile's sampling rate.
ALTER TABLE schedprof.profile_local ADD COLUMN hz UInt32 DEFAULT 0;
ALTER TABLE schedprof.profile ADD COLUMN hz UInt32 DEFAULT 0;
