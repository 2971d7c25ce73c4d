/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What if the job ran on P CPUs: a discrete-event replay of its dependency graph
 * (depgraph.h). A burst becomes runnable when the burst before it in its task has ended, its
 * edge has fired (the waker or parent reached the wake-up or fork) and its fixed delay has
 * passed; runnable bursts take free CPUs earliest runnable first; a burst that has run a
 * slice while others wait goes to the back of the queue (CFS's fairness, roughly: no
 * wake-up preemption, no priorities, no affinity).
 */
#ifndef SCHEDPROF_REPLAY_H
#define SCHEDPROF_REPLAY_H

#include <stdint.h>
#include "model/depgraph.h"

/* The slice of the replay's round robin: the kernel's base slice (sched/base_slice_ns). */
#define SP_REPLAY_SLICE_NS 3000000ULL
/*
 * At most this many slices of the whole work: a job of more than 3.3 hours of CPU time gets
 * longer slices (its work / this), so that a replay's events stay bounded whatever the input.
 */
#define SP_REPLAY_MAX_SLICES 4000000ULL

struct sp_replay_result {
	int cpus;	  /* as asked: 0 is unlimited */
	uint64_t wall_ns; /* from the first task's start to the last burst's end */
	uint64_t work_ns; /* the bursts' sum: wall_ns x the mean parallelism */
	uint64_t forced;  /* bursts released before their edge fired: edges in a cycle (times
			   * that tie, bad input) */
	uint64_t events;  /* events the replay handled */
};

/*
 * Replays g on cpus CPUs (0: as many as it can use) with slices of slice_ns (0: no
 * slicing, a burst keeps its CPU to its end; at least work / SP_REPLAY_MAX_SLICES). O(e log e) in events (bursts, edges and
 * slices). 0, -EINVAL (cpus < 0) or -ENOMEM.
 */
int sp_replay(const struct sp_depgraph *g, int cpus, uint64_t slice_ns,
	      struct sp_replay_result *r);

/* The mean parallelism of a result: work / wall (0 for no wall). */
double sp_replay_parallelism(const struct sp_replay_result *r);

#endif
