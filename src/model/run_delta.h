/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Intervals of one trace (`trace -i`, `top`): the BPF maps only ever add up, so the run of
 * an interval is the cumulative run read at its end minus the one read at its start, row by
 * row, each row matched by its key (schedules: caller and wait; profile: function and object;
 * locks: caller, kind and lock; comms by comm, stacks by comm, pid and frames, wakers by comm
 * and function). Counts and times subtract exactly, so the intervals of a trace add up to
 * its final run. What cannot be subtracted (a maximum, a percentile, a number of distinct
 * tasks) is the cumulative value: "since the start". A row's unfinished sleeps are a state:
 * those in progress at the interval's end.
 *
 * The timeline (--timeline) is not split: an interval's run has none.
 */
#ifndef SCHEDPROF_RUN_DELTA_H
#define SCHEDPROF_RUN_DELTA_H

#include <stdint.h>
#include "model/model.h"

/* What did not subtract cleanly: the caller says so (the totals stay exact anyway). */
struct sp_delta_stats {
	/* a count or time smaller than at the start (clamped to 0): a row renamed meanwhile */
	uint64_t negative;
	/* rows of the start that the end no longer has (their events moved to another row) */
	uint64_t vanished;
};

/*
 * *ret (initialized by the caller, empty) = cur - prev; prev NULL or an empty run: all of
 * cur. The run's own fields (target, kernel, ...) are cur's; start_unix_ns and elapsed_ns
 * are left for the caller (the interval's), as is ret->interval. Rows, comms, stacks and
 * wakers with nothing in the interval are left out, but a row whose CPU takers alone moved
 * stays (SP_MOVES_ALONE: with its own counts 0); the rows are ranked by the interval's
 * counts (sp_sched_sort, sp_profile_sort, sp_lock_sort by wait: sort again for another key).
 * stats may be NULL.
 * 0 or -ENOMEM (then *ret holds part of the result: sp_run_free it).
 */
int sp_run_delta(const struct sp_run *prev, const struct sp_run *cur, struct sp_run *ret,
		 struct sp_delta_stats *stats);

#endif
