/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The locks view's rows from the raw records of its maps (src/views/locks/locks.bpf.c) and
 * kallsyms. No libbpf: the collector (collect.c) dumps the maps, the unit tests build records by
 * hand.
 */
#ifndef SCHEDPROF_LOCK_ROWS_H
#define SCHEDPROF_LOCK_ROWS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "model/model.h"
#include "rows/records.h"
#include "schedprof/fold.h"

struct ksyms;
struct uframes;

struct lock_maps {
	struct sp_records stat;		/* struct sp_lock_key -> struct sp_lock_val */
	struct sp_records owners;	/* struct sp_lock_owner_key -> struct sp_lock_owner_val */
	struct sp_records stack_counts; /* struct sp_lock_stack_key -> struct sp_lock_stack_val */
	struct sp_records stacks;	/* __u64 stack id -> struct sp_stack */
	/* --stacks with user stacks: stack_counts' ids are pairs (uframes.h) */
	struct sp_records pairs;	/* __u64 pair id -> struct sp_stack_pair */
	struct sp_records ustacks;	/* __u64 stack id -> struct sp_prof_ustack */
	struct sp_records sleepers;	/* struct sp_lock_sleep_key -> struct sp_lock_sleep_val */
};

void lock_maps_free(struct lock_maps *m);

/*
 * Adds the rows, owners, stacks, sleepers and sleeper groups of m to v (whose totals the
 * caller set from .bss), merging the rows that name alike in linear time. rq_locks[0..nrq)
 * are the runqueue-lock addresses by CPU (0 = unknown). Entries the dump could not read are
 * counted: rows in v->lost, stacks in v->missing_stacks. Does not sort (sp_lock_sort).
 * With uf (user stacks taken), each stack gets its user frames from m->pairs and
 * m->ustacks, named by uf. 0, -EINVAL (records of another size) or -ENOMEM.
 */
int lock_rows_build(struct sp_lock_view *v, const struct lock_maps *m, const struct ksyms *ks,
		    const struct sp_fold_cfg *cfg, const uint64_t *rq_locks, size_t nrq,
		    struct uframes *uf);

#endif
