/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The stacks of one view as weighted samples, for the stack formats (folded, pprof, flame
 * graphs), so they all draw the same picture and add up to the same totals as the tables.
 *
 * A view's samples are its rows' stacks, each from the row's own frame (the caller, or the
 * profiled function) outwards: the scheduler and lock frames leafward of a caller are the
 * same in every stack and are left out, so the leaf of every sample is a row of the tables
 * and `go tool pprof -top` ranks like them (a stack without its row's frame is kept whole).
 * Then, per row and comm, what the stacks do not cover (rows without a stack walk such as
 * [preempted], stacks that were not kept) is one more sample, a one-frame stack naming the
 * row; and what no row holds (lost) is a "[lost]" frame without a comm. So the counts of a
 * view's samples add up to the sum of its rows' counts and its lost count:
 *   schedules: sum of callers[].count + lost_rows (= total)
 *   profile:   sum of functions[].samples + lost
 *   locks:     sum of contentions[].count + lost (sleepers have no stacks)
 */
#ifndef SCHEDPROF_SAMPLES_H
#define SCHEDPROF_SAMPLES_H

#include <stddef.h>
#include <stdint.h>
#include "model/model.h"
#include "model/view_opts.h"

#define SP_FRAME_LOST "[lost]"

struct sp_sample {
	const char *comm;	    /* NULL for the [lost] remainder */
	int pid;		    /* the stack's process; 0 = unknown, and in every merged walk */
	const char *const *frames;  /* leaf first */
	const char *const *objects; /* per frame; NULL means every frame is "[kernel]" */
	const struct sp_frame_info *info; /* per frame (model.h), or NULL */
	size_t nframes;
	uint64_t count;	  /* schedules, samples, contentions */
	uint64_t time_ns; /* off-CPU, CPU (count x sampling period), lock wait */
};

/* Called for every sample in view order; a non-zero return stops the walk and is returned. */
typedef int (*sp_sample_fn)(const struct sp_sample *s, void *arg);

/*
 * The view the stack formats draw from `views` (SP_VIEW_* mask): the first one the run holds
 * of schedules, profile, locks (a view without stacks, the timeline, is none). 0 if none.
 */
unsigned int sp_samples_view(const struct sp_run *run, unsigned int views);
/*
 * Walks the samples of one view (one SP_VIEW_* bit), each stack merged across the processes of
 * its comm (pid 0), in the order of the tables: what folded stacks and flame graphs draw.
 * 0, fn's return, -EINVAL or -ENOMEM.
 */
int sp_samples_for_each(const struct sp_run *run, unsigned int view, sp_sample_fn fn, void *arg);
/* The same samples with the stacks kept apart by process (s->pid, when known): for pprof. */
int sp_samples_for_each_pid(const struct sp_run *run, unsigned int view, sp_sample_fn fn,
			    void *arg);
/* The sample's count or time. */
uint64_t sp_sample_value(const struct sp_sample *s, enum sp_value value);
/* What a view's count and time are called: "schedules"/"off-CPU", "samples"/"CPU", ... */
const char *sp_view_count_name(unsigned int view);
const char *sp_view_time_name(unsigned int view);
const char *sp_view_name(unsigned int view);

#endif
