/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Why the job took as long as it did, from a timeline's tasks and segments
 * (model.h struct sp_timeline): the critical path backwards from the job's end, following
 * each wake-up to its waker and each task's start to its parent; its time ranked by
 * (comm, state, caller); the parallelism profile (time with n tasks running, n runnable);
 * the serial phases (>= 100 ms with one task of the job running or runnable while CPUs
 * were idle).
 */
#ifndef SCHEDPROF_CRITPATH_H
#define SCHEDPROF_CRITPATH_H

#include "model/model.h"

/* Serial phases shorter than this are not reported. */
#define SP_SERIAL_MIN_NS 100000000ULL

/*
 * Fills tl's cp, cp_ranks, cp_total_ns, running, runnable, serial and serial_ns from its
 * tasks, segs, end_ns and end_tid, replacing earlier results (whose strings it frees: they
 * must be malloc'd, not a pooled run's). ncpus: the CPUs the job could use.
 *
 * - The critical path walks back from end_tid at end_ns (end_tid 0: the task that ended
 *   last; end_ns 0: the last task's end; a task that exited before end_ns starts at its
 *   exit). In a running or runnable segment it takes a step; in a blocked one ended by a
 *   traced waker (waker_tid) it jumps to the waker at the wake-up, else takes a blocked step
 *   (caller: do_nanosleep, io, ...); at a task's start it jumps to parent_tid at the fork,
 *   else stops. Time no segment covers (lost events) is a blocked step of caller
 *   "[unknown]" (a task without a comm is named "[unknown]" too). cp: the steps in time order, adjacent ones of one task, state, caller and
 *   `alone` merged; running steps split where the task was the only one running (alone).
 *   cp_total_ns: the steps' sum. cp_ranks: that time by (comm, state, alone, caller), desc.
 * - running[] / runnable[]: the time with n tasks running / runnable, n ascending, from the
 *   first task's start to end_ns; buckets of no time left out (they sum to that window).
 * - serial[]: the maximal intervals of at least SP_SERIAL_MIN_NS with exactly one task of
 *   the job running or runnable (ncpus > 1: the other CPUs had nothing of the job to run;
 *   the task preempted for a moment by another program stays in its phase). A change of
 *   that task ends a phase; it is named by its task (the comm at the phase's end).
 *
 * O(n log n) in segments. 0, -EINVAL (a task ending before it starts, two tasks of one tid
 * starting together, a segment of an unknown tid, segments of a task that are apart,
 * overlap or are out of order, an unknown state, end_tid not a task), -E2BIG (more than
 * 2^32 segments) or -ENOMEM; on error the results are left empty. Waker tids that are not
 * tasks (or not yet) are blocked steps; cycles of wakers cannot hold the walk in place.
 */
int sp_timeline_analyze(struct sp_timeline *tl, int ncpus);

#endif
