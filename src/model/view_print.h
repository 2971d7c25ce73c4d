/* SPDX-License-Identifier: BSD-2-Clause */
/* The table helpers the views' printers share (src/views/NAME/model.c, format_table.c). */
#ifndef SCHEDPROF_VIEW_PRINT_H
#define SCHEDPROF_VIEW_PRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "model/model.h"
#include "model/view_opts.h"

double sp_pct(uint64_t part, uint64_t total);
/* The rows shown of n: at most -n (0: all). */
size_t sp_rows_shown(size_t n, const struct render_opts *o);
/*
 * The notes on what the stacks of a view's events (what: "schedules", "contentions") lack:
 * no kernel stack, no user frames, a truncated user stack; nothing for a count of 0.
 */
struct sp_user_cuts;
/* cuts: why user stacks stopped short (NULL: not known, the profile) */
void sp_print_stack_notes(const char *what, uint64_t missing, uint64_t user_missing,
			  uint64_t user_truncated, const struct sp_user_cuts *cuts, FILE *f);
/*
 * "N what are in the totals but in no row (the MAP map was full: raise OPTION)", when n is
 * not 0: a view whose row map overflowed (what: "schedules", map: "row", option: the limit).
 */
void sp_print_lost_rows(uint64_t n, const char *what, const char *map, const char *option,
			FILE *f);
/*
 * The caller fast path's line, when it was on: how many of the of events (what: "voluntary",
 * "contentions") took their caller from the cache, how many a full walk checked, mismatched.
 */
void sp_print_caller_cache(const struct sp_caller_cache *c, uint64_t of, const char *what,
			   FILE *f);
/* The same for another cache, under label ("kernel stacks", "wakers"). */
void sp_print_cache(const char *label, const struct sp_caller_cache *c, uint64_t of,
		    const char *what, FILE *f);
/* "(N more rows: -n 0 shows all)" when shown < n. */
void sp_print_more_rows(size_t shown, size_t n, FILE *f);
/*
 * The first --stack-rows stacks of a row whose total is total (merged across the pids of a
 * comm): count, share, time_label and time when time_label is set, comm; then the frames.
 * 0 or -ENOMEM.
 */
int sp_print_stack_list(const struct sp_stack_list *stacks, uint64_t total,
			const char *time_label, const struct render_opts *o, FILE *f);

#endif
