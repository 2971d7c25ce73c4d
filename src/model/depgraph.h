/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The job's dependency graph, from a timeline (model.h struct sp_timeline): each
 * task's CPU bursts (its running time between two sleeps, the time it waited for a CPU left
 * out) and what released each burst:
 *   - a wake-up by a traced task: an edge from the waker's burst, at the CPU time that burst
 *     had done when it woke the sleeper (the child's exit that ends a do_wait is one);
 *   - a fork: an edge from the parent's burst, at the CPU time it had done at the fork;
 *   - a child's exit while its parent waited for a CPU (it had not gone to sleep in
 *     do_wait yet, so no wake-up shows it; on one CPU, most exits): the parent's burst is cut
 *     there, and its rest waits for the exit, as the parent's wait for its child would;
 *   - a sleep that no traced task ended (a timer, I/O, an interrupt, an untraced waker), and
 *     time no segment covers (lost events): a fixed delay, its measured length.
 * replay.h places the bursts on P CPUs again.
 */
#ifndef SCHEDPROF_DEPGRAPH_H
#define SCHEDPROF_DEPGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/model.h"

#define SP_DG_NONE UINT32_MAX

/* The CPU time of one task between two of its sleeps. */
struct sp_dg_burst {
	uint32_t task;	   /* its task, an index into tasks */
	uint32_t edge;	   /* the edge that releases it, or SP_DG_NONE */
	uint32_t trig;	   /* the edges it fires: trig .. trig + ntrig of edges (by offset) */
	uint32_t ntrig;
	uint64_t work_ns;  /* running time */
	uint64_t delay_ns; /* fixed delay before it: after the previous burst's end (or the
			    * task's start), or after the edge fired */
	uint64_t start_ns; /* measured: where it began running, ns since the run's start */
};

enum sp_dg_edge_kind { SP_DG_WAKE = 0, SP_DG_FORK, SP_DG_EXIT };

/* Burst dst waits until burst src has done offset_ns of its work. */
struct sp_dg_edge {
	uint32_t src, dst;
	uint64_t offset_ns;
	enum sp_dg_edge_kind kind;
};

struct sp_dg_task {
	int tid;
	const char *comm;  /* borrowed from the timeline */
	uint64_t start_ns; /* measured start: where a task without a fork edge becomes able to run */
	uint32_t first, nbursts;
	bool forked;	   /* its first burst has a fork edge */
};

/* What a graph is made of beyond its bursts: its edges of each kind and its fixed delays. */
struct sp_dg_counts {
	uint64_t wakes, forks, exits; /* edges of each kind */
	uint64_t fixed;		      /* sleeps kept as fixed delays */
	uint64_t fixed_ns;
};

struct sp_depgraph {
	struct sp_dg_task *tasks;
	size_t ntasks;
	struct sp_dg_burst *bursts; /* by task, then time */
	size_t nbursts;
	struct sp_dg_edge *edges; /* by src, then offset */
	size_t nedges;
	uint64_t t0;	       /* the first task's start */
	uint64_t end_ns;       /* the last burst's measured end */
	uint64_t work_ns;      /* the bursts' sum */
	struct sp_dg_counts counts;
	uint64_t dropped;      /* sleeps the filter shortened to zero */
	uint64_t dropped_ns;
};

/* Which sleeps (blocked segments) to shorten to zero: true drops s. */
typedef bool (*sp_dg_drop_fn)(const struct sp_tl_seg *s, void *ctx);

/*
 * Builds g (zeroed first) from tl's tasks and segments; drop (NULL: none) chooses sleeps to
 * shorten to zero, their edges dropped too. A task's segments must be together and in time
 * order (as a timeline keeps them); a wake-up whose waker did not run by then in the
 * window, or a waker that is the sleeper, is a fixed delay. Sleeps cut by the end of the
 * trace release nothing. O(n log n) in segments. 0, -EINVAL (a segment of no task, a
 * task's segments apart or out of order), -E2BIG (2^32 segments) or -ENOMEM (g left empty).
 */
int sp_depgraph_build(const struct sp_timeline *tl, sp_dg_drop_fn drop, void *ctx,
		      struct sp_depgraph *g);
void sp_depgraph_free(struct sp_depgraph *g);

#endif
