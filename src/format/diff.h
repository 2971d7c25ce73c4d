/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Two runs compared row by row (`schedprof diff A.json B.json`): for each view, every row key
 * of either run (schedules: caller + wait; profile: function + object; locks: caller + kind +
 * lock, and the lock sleepers alike) with its value in A and in B, ranked by the absolute
 * change. Values are counts or (SP_VALUE_TIME) nanoseconds. Rows on one side only are kept,
 * with in_a or in_b false. Sums saturate at INT64_MAX, so every delta fits an int64_t.
 */
#ifndef SCHEDPROF_DIFF_H
#define SCHEDPROF_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "model/model.h"
#include "format/flame.h"
#include "format/render.h"

struct sp_diff_row {
	const char *name;   /* caller or function; points into the runs */
	const char *detail; /* wait, object or lock kind; or NULL */
	const char *extra;  /* the lock; or NULL */
	bool in_a, in_b;
	uint64_t a, b;
};

struct sp_diff_table;

struct sp_diff_view {
	unsigned int view; /* SP_VIEW_* */
	const struct sp_diff_table *table; /* its description (view.h) */
	const char *key;   /* "schedules", "profile", "locks", "lock_sleepers" */
	const char *title; /* "schedules by caller" */
	const char *column; /* header of the name column */
	enum sp_value value; /* what its rows compare: the diff's, or time (table->times) */
	bool in_a, in_b;   /* the view is in that run */
	uint64_t a_total, b_total; /* what shares are of: the view's total */
	struct sp_diff_row *rows;
	size_t nrows, cap;
};

#define SP_DIFF_MAX_VIEWS 8

struct sp_diff {
	enum sp_value value;
	unsigned int view_mask; /* the SP_VIEW_* compared */
	const struct sp_run *a, *b;
	struct sp_diff_view views[SP_DIFF_MAX_VIEWS];
	size_t nviews;
};

/* Compares the views of `views` (SP_VIEW_* mask) that either run has. 0 or -ENOMEM. */
int sp_diff_build(const struct sp_run *a, const struct sp_run *b, unsigned int views,
		  enum sp_value value, struct sp_diff *ret);
/* Accepts a zeroed or half-built diff. The runs stay the caller's. */
void sp_diff_free(struct sp_diff *d);


struct sp_diff_opts {
	const char *name_a, *name_b; /* how the runs are called (file names) */
	unsigned int nrows;	     /* rows per view in the table; 0 = all (json: always all) */
};

/*
 * The human report: run summary, totals (with the budget's), then one ranked
 * table per view, then the parallelism profiles when both runs have a timeline. 0 or -EIO.
 */
int sp_diff_write_table(const struct sp_diff *d, const struct sp_diff_opts *o, FILE *f);
/* The same as JSON ("schema": "schedprof-diff/1", see docs/json.md). 0 or -errno. */
int sp_diff_write_json(const struct sp_diff *d, const struct sp_diff_opts *o, FILE *f);
/*
 * Differential flame graphs of the compared views with stacks (flame.h): the after run (B)
 * red where a frame grew and blue where it shrank, then the before run (A). 0 or -errno.
 */
int sp_diff_write_html(const struct sp_diff *d, const struct sp_diff_opts *o, FILE *f);

#endif
