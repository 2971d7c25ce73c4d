/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the timeline outputs (-f trace-event, -f timeline) share: the task of a tid, the
 * number of running and runnable tasks over time (the states' names: sp_tl_state_name()).
 */
#ifndef SCHEDPROF_FORMAT_TIMELINE_H
#define SCHEDPROF_FORMAT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include "model/model.h"

/* The end of [start, start + ns), at most UINT64_MAX (a hostile saved run may overflow). */
static inline uint64_t sp_tl_end(uint64_t start, uint64_t ns)
{
	return ns > UINT64_MAX - start ? UINT64_MAX : start + ns;
}

/* The timeline's tasks by tid, for the wake-ups' and the critical path's tids. */
struct sp_tl_index {
	const struct sp_timeline *tl;
	size_t *by_tid; /* task indexes, by tid asc (then index) */
	size_t n;
};

/* 0 or -ENOMEM. */
int sp_tl_index_init(struct sp_tl_index *ix, const struct sp_timeline *tl);
void sp_tl_index_free(struct sp_tl_index *ix);
/* The task with that tid (the first one, when a tid was reused), or NULL. */
const struct sp_tl_task *sp_tl_index_find(const struct sp_tl_index *ix, int tid);

/* From ns on (to the next step), running tasks were running and runnable ones runnable. */
struct sp_tl_count {
	uint64_t ns;
	uint32_t running, runnable;
};

/*
 * The steps of the number of running and runnable tasks, one per time at which it changes,
 * in time order; the last one is at the end of the last segment (both 0). The steps belong
 * to the caller (free()). 0 or -ENOMEM (then *ret is NULL and *ret_n 0).
 */
int sp_tl_counts(const struct sp_timeline *tl, struct sp_tl_count **ret, size_t *ret_n);

#endif
