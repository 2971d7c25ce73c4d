/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The locks view's part of the one sched_switch program (schedules.bpf.c sp_switch): the sleeps
 * inside a sleeping-lock contention, in locks.bpf.c. shared.bpf.c defines the task storage it
 * shares with lock_begin and lock_end.
 */
#ifndef SCHEDPROF_LOCK_BPF_H
#define SCHEDPROF_LOCK_BPF_H

#include "common.bpf.h"
#include "target.bpf.h"
#include "schedprof/lock.h"

#ifdef SP_LOCK_DEFINE /* in shared.bpf.c */
SP_TASK_MAP(, lock_task, struct sp_lock_task);
#else
SP_TASK_MAP(extern, lock_task, struct sp_lock_task);
#endif

/*
 * t's lock state. With BPF_LOCAL_STORAGE_GET_F_CREATE (lock_begin: t is current and
 * traced), first t's `traced` storage (created too) is flagged has_lock, so a switch looks
 * lock_task up only for the tasks that have one: NULL when either cannot be had.
 */
static __always_inline struct sp_lock_task *lock_task_get(struct task_struct *t, __u64 flags)
{
	struct sp_task *ts;

	if (flags & BPF_LOCAL_STORAGE_GET_F_CREATE) {
		ts = traced_get(t, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!ts)
			return NULL;
		ts->has_lock = 1;
	}
	return SP_TASK_GET(lock_task, struct sp_lock_task, t, flags);
}

/*
 * Asleep inside a contention: switched out not runnable, until switched in again. In two
 * halves, each given the task's `traced` storage (NULL: none), whose flags say whether its
 * lock_task storage needs a lookup (done by sp_switch: r, NULL when not), next's switch-in
 * and prev's switch-out. Global functions (defined in locks.bpf.c): the verifier checks each
 * once, not once per path of the rest of sp_switch (inlined, their branches doubled the
 * schedules part's walks).
 */
__noinline int lock_switch_in(struct sp_task *nt, struct sp_lock_task *r, __u64 now);
__noinline int lock_switch_out(struct sp_task *pt, struct sp_lock_task *r, __u64 now);

/*
 * Whether a switch needs the task's lock_task: next asleep in a contention, prev with one
 * (global too: an inlined test of the flags, hoisted by the compiler above the locks view's
 * flag, split the verifier's walk of the schedules part even with the locks view off).
 */
__noinline int lock_in_needs(struct sp_task *nt);
__noinline int lock_out_needs(struct sp_task *pt, __u32 prev_state);

#endif
