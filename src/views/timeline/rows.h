/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The timeline's tasks and segments (model.h struct sp_timeline) from the --timeline events
 * (include/schedprof/timeline.h), one state machine per task: running, runnable, blocked.
 *
 * Events are taken as the ring buffer delivers them, at up to ~300k/s: the work per event is a
 * lookup of the task and, on a state change, one compact segment appended; comms and callers
 * are interned once and become the model's strings only at the end (tl_builder_finish), when
 * the callers can be named (kallsyms may still be loading while tracing).
 *
 * Each task's segments tile its life with no gap or overlap, whatever events are lost: an
 * event says which state its task is in from then on, and the state before it ends there.
 * Events of one task can reach the buffer slightly out of time order (a wake-up on one CPU
 * reserved before the switch-out on another that it ends): times never go back within a
 * task, and a wake-up that comes while its task still runs ends the sleep that follows it.
 */
#ifndef SCHEDPROF_TL_BUILD_H
#define SCHEDPROF_TL_BUILD_H

#include <stddef.h>
#include <stdint.h>
#include "model/model.h"

struct tl_builder;

/*
 * t0: CLOCK_MONOTONIC ns at the run's start (the events' clock; earlier events count as 0).
 * max_segs: segments kept (0: SP_TL_MAX_SEGS); at the limit, every task is cut there, and
 * the later events are counted as dropped. NULL on ENOMEM.
 */
struct tl_builder *tl_builder_new(uint64_t t0, size_t max_segs);
void tl_builder_free(struct tl_builder *b);

/* One event, as the ring buffer gave it. 0, -EINVAL (too short, unknown: counted) or -ENOMEM. */
int tl_builder_add(struct tl_builder *b, const void *data, size_t size);

/* Counters: events taken; malformed; not kept after the segment limit (truncated). */
struct tl_counts {
	uint64_t events;
	uint64_t bad;
	uint64_t dropped;
	uint64_t truncated_ns; /* where the limit cut the timeline; 0: it did not */
};
void tl_builder_counts(const struct tl_builder *b, struct tl_counts *ret);

/* The name of a kernel address (a caller of schedule(), or a pseudo caller), malloc'd. */
typedef char *(*tl_name_fn)(void *arg, uint64_t ip);

/*
 * The schedules rows' waits for a CPU as the switches of every CPU show them (the runnable
 * segments, each on the CPU it then ran on: a wait that migrated counts on its last CPU).
 */
struct tl_runq_row {
	char *caller, *wait;  /* the schedules row's key (wait NULL: none) */
	uint64_t waits;	      /* its runnable segments with a known CPU */
	uint64_t idle_miss_ns, missed_wakeups; /* as struct sp_sched_row's */
	struct sp_cpu_taker_list takers;       /* "ran-during": who ran on that CPU meanwhile */
};

struct tl_runq {
	struct tl_runq_row *v;
	size_t n, cap;
	/* all waits, new tasks' first ones (no row) too */
	uint64_t idle_miss_ns, missed_wakeups;
	/* waits not analysed: their CPU past 63 or without a switch seen, or past the limit */
	uint64_t unknown_cpu;
};

void tl_runq_free(struct tl_runq *rq);

/*
 * Adds rq to the schedules view v: each row's idle_miss_ns and missed_wakeups, its exact
 * takers (their cgroups still to be named), the view's summed takers, and the budget's
 * sums. Rows v does not have are in the budget only. 0 or -ENOMEM.
 */
int tl_runq_join(const struct tl_runq *rq, struct sp_sched_view *v);

/*
 * Scales the running segments' stolen_ns down so that they add up to at most cap (the CPUs'
 * steal over the run, as the budget's stolen time): the rest of a slice's wall time less its
 * runtime is the measurement's own bias (microseconds a slice).
 */
void tl_cap_stolen(struct sp_timeline *tl, uint64_t cap);

/*
 * Ends every task still alive at end_ns (ns since t0: the trace's end; their last segment
 * is marked unfinished) and fills tl's tasks, segs, end_ns and end_tid. job_tid: the
 * command's task (the job ends at its exit), or 0: the job ends at the last task's exit, or
 * at end_ns when some task was still alive. Callers are named by name(arg, ip). 0 or -ENOMEM
 * (tl then holds what was filled). rq (NULL: not wanted): the waits for a CPU by schedules
 * row (tl_runq_free() it). The builder is spent afterwards.
 */
int tl_builder_finish(struct tl_builder *b, uint64_t end_ns, int job_tid, tl_name_fn name,
		      void *arg, struct sp_timeline *tl, struct tl_runq *rq);

#endif
