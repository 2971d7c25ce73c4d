/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fleet warehouse read back: the rows the agent stored in ClickHouse
 * (sql/schema.sql, or the cluster form sql/cluster/), selected by host and time, summed into
 * one struct sp_run that every format renders. No I/O here: warehouse_sql() writes the
 * queries, warehouse_add_result() reads their answers (TabSeparated), so unit tests feed it
 * fixtures; warehouse_load() (warehouse_load.c) runs them over HTTP.
 *
 * What the warehouse keeps, per interval and host: schedules by (caller, wait, comm) with
 * count, off-CPU time and max; profile samples by (function, object, comm); lock contentions
 * by (caller, kind, lock, comm) with count, wait and max; losses by name (comm "[other]": the
 * part of a row its top comms do not cover). What it cannot give back: stacks (folded and pprof
 * get one frame, the caller or function, under the comm), the run-queue split and wakers, the
 * profile's rate, CPUs and sample classes, the lock sleepers, owners and failed contentions.
 * warehouse_missing() says so in one line.
 *
 * Each row is counted once even when the agent sent its interval twice (a spool replay): the
 * queries keep one row per (host, boot_id, seq, row key) before summing, whatever the engine
 * and whether or not the server has merged the copies yet.
 */
#ifndef SCHEDPROF_WAREHOUSE_H
#define SCHEDPROF_WAREHOUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/model.h"

/*
 * A time for --since/--until: RFC 3339 ("2026-11-30T22:00:00Z", "...+01:00", fractions
 * ignored), a date ("2026-11-30", midnight UTC), "now", or relative to now_s: "-90s", "-15m",
 * "-1h", "-7d", "-2w". Unix seconds into *ret. 0 or -EINVAL.
 */
int warehouse_parse_time(const char *s, int64_t now_s, int64_t *ret);

/* What to read: hosts (none: all) and [since, until) by interval start (none: open). */
struct warehouse_select {
	const char *const *hosts;
	size_t nhosts;
	bool has_since, has_until;
	int64_t since, until; /* unix seconds: since <= interval_start < until */
};

enum warehouse_query {
	WAREHOUSE_COLUMNS = 0, /* which of the columns added since the first schema it has */
	WAREHOUSE_META,	       /* hosts, kernels, time span and intervals selected */
	WAREHOUSE_SCHEDULES,
	WAREHOUSE_TAKERS,      /* who took the CPU, per schedules row: after its rows */
	WAREHOUSE_PROFILE,
	WAREHOUSE_LOCKS,
	WAREHOUSE_LOSSES,
	WAREHOUSE__NQUERIES,
};

struct warehouse_run;
/*
 * The SQL of query q in database db for sel (malloc'd; NULL: ENOMEM). FORMAT TabSeparated.
 * w: the answers so far (WAREHOUSE_COLUMNS's: a table without the newer columns is read as
 * zeros there), or NULL: a warehouse with every column.
 */
char *warehouse_sql(enum warehouse_query q, const char *db, const struct warehouse_select *sel,
		    const struct warehouse_run *w);
/* Whether query q asks anything of the warehouse w's answers so far describe. */
bool warehouse_query_needed(enum warehouse_query q, const struct warehouse_run *w);

/* A run read from the warehouse, and what the run has no field for. */
struct warehouse_run {
	struct sp_run run;
	/* the schedules table has the rows' split (blocked_ns ... migrated_runq_ns, runq_max_ns) */
	bool sched_split;
	unsigned int split_seen; /* which of them: bits */
	bool has_takers;	 /* there is a cpu_takers table */
	bool profile_hz;	 /* the profile table has the rate (hz) */
	uint64_t takers_without_row; /* its lines for no schedules row of the answer */
	size_t taker_row;	     /* the row the last of them went to (where to look first) */
	uint64_t intervals;  /* (host, boot, seq) selected */
	size_t nhosts, nkernels;
	char *hosts, *kernels; /* "a, b": each once, in the answer's order (sorted); NULL: none */
	char *other_losses;  /* losses no model field holds: "name N, name N"; NULL: none */
	uint64_t spool_dropped; /* intervals the agents' spools dropped (spool.dropped_intervals) */
};

void warehouse_run_init(struct warehouse_run *w);
void warehouse_run_free(struct warehouse_run *w);

/*
 * Adds the answer (TabSeparated, len bytes) to query q to w. 0, -ENOMEM, or -EINVAL with the
 * line at fault in msg.
 */
int warehouse_add_result(struct warehouse_run *w, enum warehouse_query q, const char *body,
			 size_t len, char *msg, size_t msgsize);
/*
 * After the answers: the totals from the rows, the rows sorted as trace sorts them; the run's
 * hostname and kernel are the one host's and kernel's, or "N hosts", "N kernels". 0 or
 * -ENOMEM.
 */
int warehouse_run_finish(struct warehouse_run *w);

/* One line: what a run read from the warehouse lacks next to a saved run. */
const char *warehouse_missing(void);

/*
 * Runs the queries for sel against the server of cfg (clickhouse.h) and fills w
 * (warehouse_run_init'ed here; warehouse_run_free it either way). 0, or clickhouse.h's
 * ch_query() errors (-ECONNREFUSED, -EHOSTUNREACH, -ETIMEDOUT, -EIO: no answer; -EACCES:
 * refused credentials; -EBADMSG: the server's error, e.g. no such table), -EINVAL (an answer
 * that is no result, a bad database name), -ENOMEM; msg says why in one line.
 */
struct ch_config;
int warehouse_load(const struct ch_config *cfg, const struct warehouse_select *sel,
		   struct warehouse_run *w, char *msg, size_t msgsize);

#endif
