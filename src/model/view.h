/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The views of a run, one description each (src/views/NAME/model.c):
 * name and SP_VIEW_* bit, JSON schema, table printer, diff rows, the rows the stack formats
 * walk (samples.c), the labels of its count and time, its pprof sample types. Every format
 * and the reader go through sp_views[].
 *
 * Every file a new view touches: docs/adding-a-view.md.
 */
#ifndef SCHEDPROF_VIEW_H
#define SCHEDPROF_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "model/model.h"
#include "model/view_opts.h"
#include "model/view_print.h"
#include "model/schema.h"

/* No member: an offset that is not there. */
#define SP_NONE ((size_t)-1)

/* A row as the stack formats see it (see samples.h). */
struct sp_view_row {
	const char *name;   /* the one frame of the remainders: caller, function */
	const char *object; /* its object, NULL = [kernel] */
	const struct sp_frame_info *info; /* its identity, or NULL */
	const struct sp_comm_list *comms;
	const struct sp_stack_list *stacks;
};

/* Where the stack walk finds a view's rows and their parts. */
struct sp_view_walk {
	const char *rows;		/* the key of the rows' array in the view's schema; NULL:
					 * a view without stacks (the stack formats skip it) */
	size_t name_off, object_off;	/* char * members of a row; object SP_NONE: [kernel] */
	size_t comms_off, stacks_off;	/* its struct sp_comm_list and struct sp_stack_list */
	size_t lost_off;		/* uint64_t in the view: what no row holds */
};

/*
 * One table of `diff` for a view: the rows of an array field, keyed by (name, detail,
 * extra), valued by their count or time.
 */
struct sp_diff_table {
	const char *key;	/* JSON "view": "schedules", "lock_sleepers" */
	const char *title;	/* "schedules by caller" */
	const char *column;	/* header of the name column */
	const char *time_label; /* what --value time compares: "off-CPU time" */
	const char *extra_key;	/* JSON key of the rows' extra ("lock"), or NULL: none */
	const char *rows;	/* the key of the rows' array in the view's schema ("a.b": array
				 * b of object a, see sp_schema_path) */
	size_t name_off, detail_off, extra_off; /* char * in a row; SP_NONE: none */
	size_t count_off;	/* uint64_t in a row */
	size_t time_off;	/* uint64_t in a row; SP_NONE: count x the view's period */
	size_t total_off;	/* uint64_t count total in the view; SP_NONE: the rows' sum */
	bool times;		/* the rows have a time only (count_off = time_off): compared
				 * as times whatever --value says */
	const char *null_detail; /* shown for a NULL detail ("running"), or NULL: nothing */
};

/* A total of the view compared in the diff summary. */
struct sp_view_total {
	const char *label; /* table: "  voluntary" */
	const char *key;   /* JSON: "voluntary" */
	size_t off;	   /* its uint64_t in struct sp_run */
	bool time;	   /* nanoseconds (printed as a duration), else a count */
};

/* pprof: the two sample types (count, time), and the period's type and unit */
struct sp_view_pprof {
	const char *types[2];
	const char *period_type, *period_unit;
};

/* A loss the run counts for a view: --strict names it ("schedules in no row (--max-callers)"). */
struct sp_view_loss {
	size_t off;	  /* its uint64_t in struct sp_run */
	const char *what; /* what a unit of it is, with the option that raises the limit */
};

struct sp_view_ops {
	const char *name;	/* --views name, JSON key, headings: "schedules" */
	unsigned int bit;	/* SP_VIEW_* */
	size_t off;		/* the view's struct in struct sp_run */
	size_t present_off;	/* its bool present in struct sp_run */
	const struct sp_schema *schema;
	bool whole_run;		/* of the whole run only: an interval's run has none (run_delta.h) */
	const char *count_name; /* what a count is: "schedules", "samples", "contentions" */
	const char *time_name;	/* what a time is: "off-CPU", "CPU", "lock wait" */
	const char *flame_title; /* the flame graph's heading */
	struct sp_view_pprof pprof;

	/* The table (format_table.c). 0 or -ENOMEM/-EIO. */
	int (*print_table)(const struct sp_run *run, const struct render_opts *o, FILE *f);

	/* The stack walk (samples.c), and the sampling period when the rows have counts but no
	 * times (time = count x period): NULL when the rows hold their times. */
	struct sp_view_walk walk;
	/* a struct sp_frame_info * member of a row: the remainders' frame's identity; 0: none */
	size_t walk_info_off;
	uint64_t (*period_ns)(const struct sp_run *run);

	/* diff */
	const struct sp_diff_table *diff;
	size_t ndiff;
	const struct sp_view_total *totals;
	size_t ntotals;

	/* what the run lost (--strict), in the order said */
	const struct sp_view_loss *losses;
	size_t nlosses;
};

/* sp_view_schedules, ...: each view of SP_VIEW_LIST (model.h), defined in src/views/NAME/model.c */
#define SP_VIEW_EXTERN_(name, BIT, bit, collector, by_default) \
	extern const struct sp_view_ops sp_view_##name;
SP_VIEW_LIST(SP_VIEW_EXTERN_)
#undef SP_VIEW_EXTERN_
/* Every view, in the order of the outputs (SP_VIEW_LIST's). */
extern const struct sp_view_ops *const sp_views[];
extern const size_t sp_nviews;

/*
 * The members every view file fills alike: its struct is member M of struct sp_run, and the
 * file defines view_schema, print_table, diff[] and totals[].
 */
#define SP_VIEW_COMMON(M)                                                                       \
	.off = offsetof(struct sp_run, M), .present_off = offsetof(struct sp_run, M.present),    \
	.schema = &view_schema, .print_table = print_table, .diff = diff,                        \
	.ndiff = sizeof(diff) / sizeof(diff[0]), .totals = totals,                               \
	.ntotals = sizeof(totals) / sizeof(totals[0])

/*
 * The fields two views describe alike. A view that keeps user stacks (--stacks) and counts
 * what they lack, written only when not 0; and the caller fast path's counts
 * (struct sp_caller_cache) but "attributed", which only the locks write.
 */
#define SP_VIEW_USER_STACK_FIELDS(T)                                                            \
	SP_U64_AS(T, "user_truncated", user_truncated, SP_SPARSE),                               \
	SP_U64_AS(T, "user_missing", user_missing, SP_SPARSE)
/* ... and why user stacks stopped short (struct sp_user_cuts), the schedules and locks views' */
#define SP_VIEW_USER_CUT_FIELDS(T)                                                              \
	SP_U64_AS(T, "user_cut_cfi", user_cuts.cfi, SP_SPARSE),                                  \
	SP_U64_AS(T, "user_cut_memory", user_cuts.memory, SP_SPARSE),                            \
	SP_U64_AS(T, "user_cut_depth", user_cuts.depth, SP_SPARSE),                              \
	SP_U64_AS(T, "user_cut_lost", user_cuts.lost, SP_SPARSE)
#define SP_CALLER_CACHE_FIELDS                                                                  \
	SP_U64(struct sp_caller_cache, "fast", fast),                                             \
	SP_U64(struct sp_caller_cache, "verified", verified),                                     \
	SP_U64(struct sp_caller_cache, "mismatched", mismatched),                                 \
	SP_BOOL(struct sp_caller_cache, "verify_all", verify_all)

/* The rows of view (the array of its schema under key, or path "a.b") in run: *ret_rows, their count. */
size_t sp_view_rows(const struct sp_view_ops *view, const struct sp_run *run, const char *key,
		    const char **ret_rows, size_t *ret_size);
/* A row of the walk's array in the stack walk's terms. */
void sp_view_walk_row(const struct sp_view_walk *w, const void *row, struct sp_view_row *ret);

/*
 * The losses of the views run holds, then extra (what only the tracer knows, e.g. "2 ring
 * buffer drops"; NULL: none), as "N what, N what" into buf: its length, 0 when nothing was
 * lost.
 */
size_t sp_run_losses(const struct sp_run *run, const char *extra, char *buf, size_t size);

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
