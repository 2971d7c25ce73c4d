/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The schedules view's rows from the raw records of its maps (bpf/sched.bpf.c) and kallsyms:
 * rows by (caller, wait class), their comms, and the stacks behind them. No libbpf: the
 * collector (sched.c) dumps the maps, the unit tests build records by hand.
 */
#ifndef SCHEDPROF_SCHED_ROWS_H
#define SCHEDPROF_SCHED_ROWS_H

#include <linux/types.h>
#include "model.h"
#include "records.h"
#include "schedprof/fold.h"

struct ksyms;

struct sched_maps {
	struct sp_records callers;	/* struct sp_caller_key -> struct sp_caller_val */
	struct sp_records stack_counts; /* struct sp_stack_key -> struct sp_stack_val */
	struct sp_records stacks;	/* __u64 stack id -> struct sp_stack */
};

void sched_maps_free(struct sched_maps *m);

/* The wait class of a row: a lock kind or io from BPF, else "pipe" for the pipe paths, or NULL. */
const char *sched_wait_name(uint32_t wait, const char *caller);

/*
 * Adds the rows and stacks of m to v (whose totals the caller set from .bss), merging the
 * stacks that symbolize alike, then sorts v. Entries the dump could not read are counted:
 * rows in v->lost_rows, stacks in v->missing_stacks. 0, -EINVAL (records of another size)
 * or -ENOMEM.
 */
int sched_rows_build(struct sp_sched_view *v, const struct sched_maps *m, const struct ksyms *ks,
		     const struct sp_fold_cfg *cfg);

#endif
