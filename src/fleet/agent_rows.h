/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One interval of `schedprof agent` as rows of the warehouse tables (sql/schema.sql): the
 * interval's run (run_delta.h) flattened to one row per (row, comm), each stamped with host,
 * boot id, kernel, interval start and end and the agent's sequence number, as JSON lines
 * (JSONEachRow). Counts add up exactly: a row's count not covered by its comms goes to comm
 * "[other]", so SUM(count) by caller is the view's.
 */
#ifndef SCHEDPROF_AGENT_ROWS_H
#define SCHEDPROF_AGENT_ROWS_H

#include <stddef.h>
#include <stdint.h>
#include "model/model.h"

enum agent_table { AT_SCHEDULES = 0, AT_PROFILE, AT_LOCKS, AT_TAKERS, AT_LOSSES, AT__N };

/* "schedules", "profile", "locks", "cpu_takers", "losses" */
const char *agent_table_name(enum agent_table t);

/*
 * The columns added to the tables since the first schema, in the order added. sql/schema.sql's
 * CREATE TABLEs have them all; --create-schema adds to an older table the ones it lacks.
 */
struct agent_column {
	enum agent_table table;
	const char *name;
	const char *type; /* with its default: "UInt64 DEFAULT 0" */
};
extern const struct agent_column agent_added_columns[];
extern const size_t agent_nadded_columns;

struct agent_stamp {
	const char *host;
	const char *boot_id;
	const char *kernel;
	uint64_t start_unix_ns, end_unix_ns;
	uint64_t seq;
};

/* A growable text buffer. */
struct abuf {
	char *p;
	size_t len, cap;
};

int abuf_add(struct abuf *b, const char *s, size_t n);
int abuf_printf(struct abuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void abuf_free(struct abuf *b);

/* An interval's rows: per table, JSON lines (each ends with '\n'), without the table's name. */
struct agent_batch {
	uint64_t seq;
	struct abuf t[AT__N];
	size_t rows[AT__N];
};

/* The batch of interval iv (the run of one interval) with stamp s. 0 or -ENOMEM. */
int agent_batch_build(const struct sp_run *iv, const struct agent_stamp *s,
		      struct agent_batch *b);
/* Adds a row to table losses: what, count (count 0: nothing). 0 or -ENOMEM. */
int agent_batch_loss(struct agent_batch *b, const struct agent_stamp *s, const char *what,
		     uint64_t count);
void agent_batch_free(struct agent_batch *b);

/*
 * The spool's file format of a batch: for each table with rows, a line "#TABLE\n" then its
 * JSON lines. agent_batch_text() writes it; agent_batch_parse() splits such text in place
 * back into its tables (ret_tables[t] points into text, ret_lens[t] its length; 0: no rows).
 * -EINVAL on text that is not a batch.
 */
int agent_batch_text(const struct agent_batch *b, struct abuf *out);
int agent_batch_parse(const char *text, size_t len, const char *ret_tables[AT__N],
		      size_t ret_lens[AT__N]);

/* The sum of the counts of losses rows `what` in a batch's text (agent_batch_text()). */
uint64_t agent_batch_losses(const char *text, size_t len, const char *what);

/* The "YYYY-MM-DD hh:mm:ss" (UTC) of a unix time in ns; buf of at least 20 bytes. */
const char *agent_utc(uint64_t unix_ns, char *buf, size_t len);

#endif
