/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Pairing lock:contention_begin with lock:contention_end: plain C, no helpers, so the same
 * code runs in src/views/locks/locks.bpf.c and in the unit tests
 * (tests/unit/rows/test_lock_pair.c).
 *
 * Sleeping locks are timed per task: the waiter can sleep and wake on another CPU. A mutex
 * emits several begins for one end (__mutex_lock_common: MUTEX|SPIN before the optimistic
 * spin, MUTEX once queued, MUTEX|SPIN again each time it spins as first waiter), so a begin
 * on the lock already in progress keeps the first begin's time.
 *
 * Spinning locks are timed per CPU (the spinner never leaves it, preemption is off) on a
 * small stack: an interrupt can contend on another spinlock while the task spins, and the
 * qrwlock slow paths contend on their own wait_lock inside the rwlock's contention.
 */
#ifndef SCHEDPROF_LOCK_PAIR_H
#define SCHEDPROF_LOCK_PAIR_H

#include "schedprof/lock.h"

/* Sleeping locks are everything but plain spinlocks and rwlocks (SPIN without MUTEX or RT). */
static inline int sp_lock_flags_sleeping(__u32 flags)
{
	return !(flags & SP_LCB_F_SPIN) || (flags & (SP_LCB_F_MUTEX | SP_LCB_F_RT));
}

/* One key per kind: a mutex's optimistic-spin bit says nothing about the lock. */
static inline __u32 sp_lock_flags_norm(__u32 flags)
{
	return (flags & SP_LCB_F_MUTEX) ? SP_LCB_F_MUTEX : flags;
}

/*
 * The time a begin records while its program still walks the stack; the real time is written
 * last. An end that finds it on this CPU interrupted that program, and its own begin was
 * skipped by the kernel's recursion guard (an interrupt's read_lock of the rwlock the task
 * is spinning to write): it must not pair with the task's entry.
 */
#define SP_LOCK_TS_PENDING 1ULL

enum sp_pair_begin {
	SP_PAIR_NEW = 0,  /* a new contention: the caller walks the stack, names the lock */
	SP_PAIR_AGAIN,	  /* another begin of the contention in progress: nothing to do */
	SP_PAIR_REPLACED, /* a begin on another lock while one was in progress (its end lost) */
};

/* Starts a contention in p: caller, stack and name are filled later by the begin program. */
static inline void sp_pair_start(struct sp_lock_pending *p, __u64 lock, __u32 flags, __u64 now)
{
	p->lock = lock;
	p->ts = now;
	p->flags = flags;
	p->caller = 0;
	p->stack = 0;
	p->name = 0;
}

static inline int sp_pair_task_begin(struct sp_lock_pending *p, __u64 lock, __u32 flags, __u64 now)
{
	int r = SP_PAIR_NEW;

	if (p->ts) {
		if (p->lock == lock) {
			p->flags = flags;
			return SP_PAIR_AGAIN;
		}
		r = SP_PAIR_REPLACED;
	}
	sp_pair_start(p, lock, flags, now);
	return r;
}

/* 1 and *out (out->ts = the wait) when lock is the one in progress; else 0, nothing changes. */
static inline int sp_pair_task_end(struct sp_lock_pending *p, __u64 lock, __u64 now,
				   struct sp_lock_pending *out)
{
	if (!p->ts || p->lock != lock)
		return 0;
	*out = *p;
	out->ts = now > p->ts ? now - p->ts : 0;
	p->ts = 0;
	return 1;
}

/* The entry to fill for a new spinning contention, or NULL when nested too deep. */
static inline struct sp_lock_pending *sp_pair_spin_push(struct sp_lock_spin_stack *s, __u64 lock,
							 __u32 flags, __u64 now)
{
	struct sp_lock_pending *p;
	__u32 d = s->depth;

	if (d >= SP_LOCK_SPIN_NEST)
		return 0;
	p = &s->e[d];
	sp_pair_start(p, lock, flags, now);
	s->depth = d + 1;
	return p;
}

/*
 * Matches an end, innermost first, skipping entries still being filled (SP_LOCK_TS_PENDING).
 * Returns 0 when no entry holds lock (an end whose begin was not seen), else 1 + the number of entries above the match, which are dropped: their
 * ends were lost (attached or detached between them, or a program run skipped by the
 * kernel's recursion guard).
 */
static inline int sp_pair_spin_pop(struct sp_lock_spin_stack *s, __u64 lock, __u64 now,
				   struct sp_lock_pending *out)
{
	__u32 d = s->depth;

	for (int i = SP_LOCK_SPIN_NEST - 1; i >= 0; i--) {
		if ((__u32)i >= d || s->e[i].lock != lock || s->e[i].ts == SP_LOCK_TS_PENDING)
			continue;
		*out = s->e[i];
		out->ts = now > s->e[i].ts ? now - s->e[i].ts : 0;
		s->depth = i;
		return 1 + (int)(d - 1 - i);
	}
	return 0;
}

#endif
