-- SPDX-License-Identifier: BSD-2-Clause
-- schedprof fleet warehouse, cluster form, part 2 of 2: Distributed tables under the names
-- the agent inserts into and `schedprof report --from` reads, over the *_local tables of
-- shard.sql on every shard of the cluster `fleet` (the <remote_servers> entry of
-- examples/fleet/cluster.xml; rename it in the five ENGINE lines for another cluster).
-- Run it on every server an agent or a report talks to (all of them is simplest).
--
-- Sharding key sipHash64(host): all of a host's rows live on one shard, so a re-sent interval
-- meets its first copy there and the ReplacingMergeTree key collapses them (shard.sql).
CREATE DATABASE IF NOT EXISTS schedprof;

CREATE TABLE IF NOT EXISTS schedprof.schedules AS schedprof.schedules_local
ENGINE = Distributed(fleet, schedprof, schedules_local, sipHash64(host));

CREATE TABLE IF NOT EXISTS schedprof.profile AS schedprof.profile_local
ENGINE = Distributed(fleet, schedprof, profile_local, sipHash64(host));

CREATE TABLE IF NOT EXISTS schedprof.locks AS schedprof.locks_local
ENGINE = Distributed(fleet, schedprof, locks_local, sipHash64(host));

CREATE TABLE IF NOT EXISTS schedprof.cpu_takers AS schedprof.cpu_takers_local
ENGINE = Distributed(fleet, schedprof, cpu_takers_local, sipHash64(host));

CREATE TABLE IF NOT EXISTS schedprof.losses AS schedprof.losses_local
ENGINE = Distributed(fleet, schedprof, losses_local, sipHash64(host));
