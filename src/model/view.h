/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The views of a run, one description each (view_schedules.c, view_profile.c, view_locks.c):
 * name and SP_VIEW_* bit, JSON schema, table printer, diff rows, the rows the stack formats
 * walk (samples.c), the labels of its count and time, its pprof sample types. Every format
 * and the reader go through sp_views[]: adding a view is one new file and one entry there.
 */
#ifndef SCHEDPROF_VIEW_H
#define SCHEDPROF_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "model.h"
#include "render.h"
#include "schema.h"

/* A row as the stack formats see it (see samples.h). */
struct sp_view_row {
	const char *name;   /* the one frame of the remainders: caller, function */
	const char *object; /* its object, NULL = [kernel] */
	const struct sp_comm_list *comms;
	const struct sp_stack_list *stacks;
};

/* Adds one diff row: key (name, detail, extra) and its value. 0 or -ENOMEM. */
typedef int (*sp_diff_add_fn)(void *ctx, const char *name, const char *detail, const char *extra,
			      uint64_t v);

/* One table of `diff` for a view. */
struct sp_diff_table {
	const char *key;	/* JSON "view": "schedules", "lock_sleepers" */
	const char *title;	/* "schedules by caller" */
	const char *column;	/* header of the name column */
	const char *time_label; /* what --value time compares: "off-CPU time" */
	const char *extra_key;	/* JSON key of the rows' extra ("lock"), or NULL: none */
	/* Adds every row of run's view, and returns the total the shares are of. */
	int (*add)(const struct sp_run *run, enum sp_value value, sp_diff_add_fn add, void *ctx,
		   uint64_t *ret_total);
};

/* A total of the view compared in the diff summary. */
struct sp_view_total {
	const char *label; /* table: "  voluntary" */
	const char *key;   /* JSON: "voluntary" */
	size_t off;	   /* its uint64_t in struct sp_run */
};

struct sp_view_ops {
	const char *name;	/* --views name, JSON key, headings: "schedules" */
	unsigned int bit;	/* SP_VIEW_* */
	size_t off;		/* the view's struct in struct sp_run */
	size_t present_off;	/* its bool present in struct sp_run */
	const struct sp_schema *schema;
	const char *count_name; /* what a count is: "schedules", "samples", "contentions" */
	const char *time_name;	/* what a time is: "off-CPU", "CPU", "lock wait" */
	/* pprof: the two sample types (count, time) and the period type */
	const char *pprof_types[2];
	const char *pprof_period_type, *pprof_period_unit;

	/* The table (format_table.c). 0 or -ENOMEM/-EIO. */
	int (*print_table)(const struct sp_run *run, const struct render_opts *o, FILE *f);

	/* The stack walk: the rows, each row's sampling period (time = count x period; 0: the
	 * time is in the model), and what no row holds. */
	size_t (*nrows)(const struct sp_run *run);
	void (*row)(const struct sp_run *run, size_t i, struct sp_view_row *ret);
	uint64_t (*period_ns)(const struct sp_run *run);
	uint64_t (*lost)(const struct sp_run *run);

	/* diff */
	const struct sp_diff_table *diff;
	size_t ndiff;
	const struct sp_view_total *totals;
	size_t ntotals;
};

extern const struct sp_view_ops sp_view_schedules, sp_view_profile, sp_view_locks;
/* Every view, in the order of the outputs. */
extern const struct sp_view_ops *const sp_views[];
extern const size_t sp_nviews;

/* The view of one SP_VIEW_* bit, or NULL. */
const struct sp_view_ops *sp_view_find(unsigned int bit);
/* By --views name (len bytes of name), or NULL. */
const struct sp_view_ops *sp_view_by_name(const char *name, size_t len);
bool sp_view_present(const struct sp_run *run, const struct sp_view_ops *v);
void *sp_view_data(struct sp_run *run, const struct sp_view_ops *v);
const void *sp_view_cdata(const struct sp_run *run, const struct sp_view_ops *v);

/* Sums saturate at INT64_MAX, so that every difference fits an int64_t (diff.h). */
static inline uint64_t sp_sat_add(uint64_t a, uint64_t b)
{
	return b > INT64_MAX || a > INT64_MAX - b ? INT64_MAX : a + b;
}

static inline uint64_t sp_sat_mul(uint64_t a, uint64_t b)
{
	return b && a > INT64_MAX / b ? INT64_MAX : a * b;
}

#define SP_VIEW_U64(run, off) (*(const uint64_t *)((const char *)(run) + (off)))

#endif
