/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Why the job took as long as it did (issue #10), from a timeline's tasks and segments
 * (model.h struct sp_timeline): the critical path backwards from the job's end, following
 * each wake-up to its waker and each task's start to its parent; its time ranked by
 * (comm, state, caller); the parallelism profile (time with n tasks running, n runnable);
 * the serial phases (>= 100 ms with one running task while CPUs were idle).
 */
#ifndef SCHEDPROF_CRITPATH_H
#define SCHEDPROF_CRITPATH_H

#include "model.h"

/* Serial phases shorter than this are not reported. */
#define SP_SERIAL_MIN_NS 100000000ULL

/*
 * Fills tl's cp, cp_ranks, cp_total_ns, running, runnable, serial and serial_ns from its
 * tasks, segs, end_ns and end_tid (replacing earlier results). ncpus: the CPUs the job
 * could use. 0, -EINVAL (segments that overlap or are out of order) or -ENOMEM.
 */
int sp_timeline_analyze(struct sp_timeline *tl, int ncpus);

#endif
