/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The locks view's part of the one sched_switch program (sched.bpf.c sp_switch): the sleeps
 * inside a sleeping-lock contention. lock.bpf.c defines the task storage it shares with
 * lock_begin and lock_end.
 */
#ifndef SCHEDPROF_LOCK_BPF_H
#define SCHEDPROF_LOCK_BPF_H

#include "common.bpf.h"
#include "schedprof/lock.h"

#ifdef SP_LOCK_DEFINE /* in lock.bpf.c */
SP_TASK_MAP(lock_task, struct sp_lock_task);
#else
extern SP_TASK_MAP(lock_task, struct sp_lock_task);
#endif

/* Asleep inside a contention: switched out not runnable, until switched in again. */
static __always_inline void lock_on_switch(struct task_struct *prev, struct task_struct *next,
					   unsigned int prev_state, __u64 now)
{
	struct sp_lock_task *r;
	__u64 d;

	if (prev_state != 0) { /* not TASK_RUNNING: asleep, not preempted */
		r = bpf_task_storage_get(&lock_task, prev, 0, 0);
		if (r && r->p.ts)
			r->sleep_ts = now;
	}
	r = bpf_task_storage_get(&lock_task, next, 0, 0);
	if (!r || !r->sleep_ts)
		return;
	d = now - r->sleep_ts;
	r->sleep_ts = 0;
	if (!r->p.ts)
		return;
	r->offcpu_ns += d;
	r->nsleeps++;
	if (d > r->max_sleep_ns)
		r->max_sleep_ns = d;
}

#endif
