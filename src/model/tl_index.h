/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A timeline's tasks by (tid, start) (model.h struct sp_timeline), to find the task a tid
 * names at a time: a tid is reused when a task exits and another starts, so a segment, a
 * wake-up or a fork names "tid's task then". Shared by the critical path and the what-if
 * graph.
 */
#ifndef SCHEDPROF_TL_INDEX_H
#define SCHEDPROF_TL_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/model.h"

#define SP_TL_NONE SIZE_MAX

struct sp_tl_key {
	int tid;
	uint64_t start;
	size_t idx; /* into tl->tasks */
};

/* *ret (malloc'd, free() it): tl's tasks by (tid, start, index). 0 or -ENOMEM. */
int sp_tl_keys(const struct sp_timeline *tl, struct sp_tl_key **ret);

/*
 * The task of tid at t among n keys: the last to start by t; with first, tid's first task
 * when none did. SP_TL_NONE when tid has none.
 */
size_t sp_tl_task_at(const struct sp_tl_key *keys, size_t n, int tid, uint64_t t, bool first);

#endif
