/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The schedules view's rows from the raw records of its maps (src/views/schedules/schedules.bpf.c)
 * and kallsyms: rows by (caller, wait class), their comms, and the stacks behind them. No libbpf:
 * the collector (collect.c) dumps the maps, the unit tests build records by hand.
 */
#ifndef SCHEDPROF_SCHED_ROWS_H
#define SCHEDPROF_SCHED_ROWS_H

#include <stdbool.h>
#include <linux/types.h>
#include "model/model.h"
#include "rows/records.h"
#include "schedprof/fold.h"
#include "schedprof/sched.h"

struct ksyms;
struct uframes;

struct sched_maps {
	struct sp_records callers;	/* struct sp_caller_key -> struct sp_caller_val */
	struct sp_records stack_counts; /* struct sp_stack_key -> struct sp_stack_val */
	struct sp_records stacks;	/* __u64 stack id -> struct sp_stack */
	/* --stacks with user stacks: stack_counts' ids are pairs (uframes.h) */
	struct sp_records pairs;	/* __u64 pair id -> struct sp_stack_pair */
	struct sp_records ustacks;	/* __u64 stack id -> struct sp_prof_ustack */
	struct sp_records wakers;	/* struct sp_waker_key -> __u64 count */
	struct sp_records takers;	/* struct sp_taker_key -> struct sp_taker_val */
	/* (callers, wakers and takers are per-CPU maps: sched_fold_pcpu() sums them first) */
	bool has_budget;		/* budget holds the per-CPU sums of the run */
	bool steal_split;		/* budget.stolen_ns was measured (steal_split) */
	struct sp_budget_counts budget;
	/*
	 * The tasks still running, asleep or waiting for a CPU at the stop (__u32 pid -> struct
	 * sp_sleep, from the task iterator), charged up to stop (CLOCK_MONOTONIC, as BPF's
	 * clock) within the window from t0: rows (unfinished), stacks, wakers and budget.
	 */
	struct sp_records in_progress;
	/* quota_check: the preempted tasks throttled at the stop (__u32 pid -> struct sp_throttled) */
	struct sp_records throttled;
	uint64_t t0, stop;
};

/*
 * A sleep's split at its end (now): what src/views/schedules/schedules.bpf.c charge_offcpu()
 * charges.
 */
struct sched_split {
	uint64_t offcpu, blocked, runq;
	uint64_t runnable; /* where RUNQ starts */
	bool woken;	   /* ended by a wake-up that names a waker */
};

/* The split of s (a task switched out at s->ts) at now. */
void sched_split(const struct sp_sleep *s, uint64_t now, struct sched_split *ret);
/* The part of [a, b] inside the window that starts at t0 (0: none). */
uint64_t sched_in_window(uint64_t t0, uint64_t a, uint64_t b);

void sched_maps_free(struct sched_maps *m);

/*
 * The per-CPU rows and wakers as dumped (ncpus values per record, each rounded up to 8
 * bytes) folded in place into one value per record: sums, and the maxima's maximum.
 * 0, or -EINVAL when the records' value size is not ncpus such values.
 */
int sched_fold_pcpu(struct sched_maps *m, int ncpus);

/*
 * The takers or the wakers of a read while the programs run (the map's, then the CPUs' slots
 * read after it: collect.c), made to never go back: records of the same key summed, then each
 * value word (counts, times) at least what seen (the last read's result, whose key and value
 * sizes rec's must have) had, and seen's keys kept; seen becomes the result too. A read can
 * miss a slot's record that moved to the map between the two reads, never count one twice:
 * the result is at most the true count, and exact at the stop. Values are __u64 words; rec's
 * failed count is kept.
 * 0, -EINVAL (sizes) or -ENOMEM (rec and seen then unchanged).
 */
int sched_slots_settle(struct sp_records *rec, struct sp_records *seen);

/* The wait class of a row: a lock kind or io from BPF, else "pipe" for the pipe paths, or NULL. */
const char *sched_wait_name(uint32_t wait, const char *caller);
/* "rwsem-write", "mutex", "io", ... or NULL for SP_WAIT_NONE and unknown values. */
const char *fold_wait_name(__u32 wait);

/*
 * A percentile (q in [0, 1]) of the run-queue waits in hist (SP_RUNQ_SLOTS log2 slots, as
 * BPF counts them): the upper bound of the slot that holds the wait of rank ceil(q * n),
 * i.e. 2^(i+1) - 1 ns for slot i, never above max_ns (the exact longest wait). 0 when hist
 * is empty. An upper bound, at most twice the true value (or the max).
 */
uint64_t sched_runq_percentile(const uint64_t hist[SP_RUNQ_SLOTS], double q, uint64_t max_ns);

/*
 * Adds the rows and stacks of m to v (whose totals the caller set from .bss), merging the
 * stacks that symbolize alike, then sorts v. Each row gets its BLOCKED/RUNQ split, its
 * run-queue percentiles and its wakers (by count; the waker's function only when walked);
 * with m->has_budget, v->budget: on CPU, run queue, blocked by wait class (each row's
 * time inside the window, by sp_wait_class(); blocked time in no row is "other").
 * Entries the dump could not read are counted: rows in v->lost_rows, stacks in
 * v->missing_stacks. With uf (user stacks taken), each stack gets its user frames from
 * m->pairs and m->ustacks, named by uf. 0, -EINVAL (records of another size) or -ENOMEM.
 */
int sched_rows_build(struct sp_sched_view *v, const struct sched_maps *m, const struct ksyms *ks,
		     const struct sp_fold_cfg *cfg, struct uframes *uf);

#endif
