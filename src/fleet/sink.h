/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where the agent's intervals go (--sink), sent by a thread of their own from the spool
 * (spool.h), oldest first, so tracing never waits for the network:
 *   ndjson:FILE, ndjson:-   one JSON object per row and line, with "table" naming its table;
 *   clickhouse://HOST:PORT/DB   per interval and table one INSERT ... FORMAT JSONEachRow over
 *                           HTTP (clickhouse.h), credentials from the environment or a file.
 * An interval leaves the spool only once every table of it was accepted; until then it is
 * retried (1 s, doubling up to 30 s). The sender says once when the sink fails (and why: not
 * reachable, credentials refused, an error answer) and once when it works again.
 */
#ifndef SCHEDPROF_SINK_H
#define SCHEDPROF_SINK_H

#include <stdbool.h>
#include <stdint.h>
#include "fleet/spool.h"

struct sink_opts {
	const char *spec;	   /* --sink */
	const char *password_file; /* --password-file; NULL: $SCHEDPROF_CLICKHOUSE_PASSWORD */
	bool create_schema;	   /* --create-schema: before the first interval is sent */
	const char *schema_sql;	   /* the statements (sql/schema.sql) */
	unsigned int ttl_days;	   /* servers >= 19.6: the tables' TTL; 0: none */
};

struct sink;

/* Checks spec (-EINVAL: not a sink; -errno: credentials file, the ndjson file to append to). */
int sink_open(const struct sink_opts *o, struct spool *sp, struct sink **ret);
/* Starts the sender thread. */
int sink_start(struct sink *k);
/* A new interval is in the spool. */
void sink_kick(struct sink *k);
/*
 * The end is coming (the trace has stopped): the sender has ms from now, a request in
 * flight included, and sink_close() waits no longer than that.
 */
void sink_end_by(struct sink *k, unsigned int ms);
/* ndjson:- whose reader has gone (EPIPE): the sender has stopped; the agent should end. */
bool sink_closed(struct sink *k);
struct sink_stats;
/*
 * Stops the sender after it has sent what it can within wait_ms (one more try each), and
 * frees k; its counters into *ret_stats (may be NULL). Returns the intervals left in the
 * spool (for the next start).
 */
size_t sink_close(struct sink *k, unsigned int wait_ms, struct sink_stats *ret_stats);

struct sink_stats {
	uint64_t sent;		/* intervals delivered */
	uint64_t failures;	/* attempts that failed */
	uint64_t corrupt;	/* spool files that were no batch (removed, counted) */
	uint64_t cut_back;	/* ndjson FILE: failed writes of part of an interval, cut off */
	double flush_max_ms;	/* the longest delivery of one interval */
	double flush_sum_ms;
};
void sink_get_stats(struct sink *k, struct sink_stats *ret);

/* The statements of schema_sql for database db ("schedprof" renamed), with the TTL marker
 * replaced by ttl (NULL: removed); ';'-separated, comments out. NULL-terminated, malloc'ed. */
char **sink_schema_statements(const char *schema_sql, const char *db, const char *ttl);
void sink_free_statements(char **v);

#endif
