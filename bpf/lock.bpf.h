/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The locks view's part of the one sched_switch program (sched.bpf.c sp_switch): the sleeps
 * inside a sleeping-lock contention. Its per-task state (struct sp_lock_task) lives in the
 * one task storage of every view (target.bpf.h struct sp_task), shared with lock_begin and
 * lock_end: sp_switch looks prev's and next's storage up once for all its parts.
 */
#ifndef SCHEDPROF_LOCK_BPF_H
#define SCHEDPROF_LOCK_BPF_H

#include "common.bpf.h"
#include "target.bpf.h"
#include "schedprof/lock.h"

/* t's lock state, in its task storage (created with BPF_LOCAL_STORAGE_GET_F_CREATE). */
static __always_inline struct sp_lock_task *lock_task_get(struct task_struct *t, __u64 flags)
{
	struct sp_task *ts = bpf_task_storage_get(&traced, t, 0, flags);

	return ts ? &ts->lock : NULL;
}

/*
 * Asleep inside a contention: switched out not runnable, until switched in again. In two
 * halves, each given the task's storage (NULL: none): next's switch-in, prev's switch-out.
 * Global functions (defined in sched.bpf.c): the verifier checks each once, not once per
 * path of the rest of sp_switch (inlined, their branches doubled the schedules part's walks).
 */
__noinline int lock_switch_in(struct sp_task *nt, __u64 now);
__noinline int lock_switch_out(struct sp_task *pt, __u32 prev_state, __u64 now);

#endif
