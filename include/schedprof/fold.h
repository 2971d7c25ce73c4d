/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The caller-folding rule, shared by the BPF programs (one frame per bpf_loop() step) and
 * by user space (unit tests on fixture kallsyms, src/loader/foldcfg.c builds the configuration).
 *
 * The caller of schedule() is the first frame outside the scheduler, locking and cpuidle
 * text (the rule the kernel uses for wchan). Sleeping-lock slow paths outside those
 * sections (percpu_rwsem_wait, __rt_mutex_slowlock_locked on 6.x) and scheduler helpers
 * that call __schedule() themselves (do_task_dead) are folded too. Frames before the first
 * folded frame belong to the tracepoint and the BPF program, and are skipped.
 */
#ifndef SCHEDPROF_FOLD_H
#define SCHEDPROF_FOLD_H

#include "schedprof/limits.h"

/* What a voluntary switch waited for, found from the frames folded away. */
enum sp_wait {
	SP_WAIT_NONE = 0,
	SP_WAIT_RWSEM_READ,
	SP_WAIT_RWSEM_WRITE,
	SP_WAIT_MUTEX,
	SP_WAIT_SEMAPHORE,
	SP_WAIT_RTMUTEX,
	SP_WAIT_PERCPU_RWSEM,
	SP_WAIT_IO,
	SP_WAIT__MAX,
	/* not a wait class: a scheduler helper outside __sched text (do_task_dead), folded */
	SP_WAIT__FOLD = 0xff,
};

struct sp_lock_range {
	__u64 start;
	__u64 end;
	__u32 wait; /* enum sp_wait */
	__u32 pad;
};

/* Address ranges of the wake-up machinery and of the timer functions that wake (wakers). */
#define SP_MAX_WAKE_RANGES 64
#define SP_MAX_TIMER_RANGES 8

struct sp_range {
	__u64 start;
	__u64 end;
};

/* Where to fold a stack: filled from kallsyms by src/loader/foldcfg.c. */
struct sp_fold_cfg {
	__u64 text_start[3]; /* __sched_text, __lock_text, __cpuidle_text */
	__u64 text_end[3];
	__u64 io_start[2];   /* io_schedule, io_schedule_timeout */
	__u64 io_end[2];
	__u32 nr_lock_ranges;
	__u32 pad;
	struct sp_lock_range lock_ranges[SP_MAX_LOCK_RANGES];
	/* the wake-up machinery (try_to_wake_up, __wake_up_common, ...), neighbours merged */
	__u32 nr_wake_ranges;
	__u32 nr_timer_ranges;
	struct sp_range wake_ranges[SP_MAX_WAKE_RANGES];
	/* timer callbacks that wake (hrtimer_wakeup, process_timeout, ...) and their dispatchers */
	struct sp_range timer_ranges[SP_MAX_TIMER_RANGES];
};

/* Pseudo callers: never kernel addresses. */
#define SP_CALLER_UNKNOWN 0ULL	 /* the stack could not be read, or never left the scheduler */
#define SP_CALLER_PREEMPTED 1ULL /* switched out while TASK_RUNNING */
#define SP_CALLER_IDLE 2ULL	 /* the idle task (with -a) */

struct sp_fold_state {
	__u64 caller; /* SP_CALLER_UNKNOWN until found */
	__u32 wait;   /* enum sp_wait */
	__u32 seen_sched;
};

static inline __u32 sp_fold_wait_of(const struct sp_fold_cfg *cfg, __u64 ip)
{
	__u32 n = cfg->nr_lock_ranges;

	for (int i = 0; i < 2; i++)
		if (ip >= cfg->io_start[i] && ip < cfg->io_end[i])
			return SP_WAIT_IO;
	for (int i = 0; i < SP_MAX_LOCK_RANGES; i++) {
		if (i >= (int)n)
			break;
		if (ip >= cfg->lock_ranges[i].start && ip < cfg->lock_ranges[i].end)
			return cfg->lock_ranges[i].wait;
	}
	return SP_WAIT_NONE;
}

static inline int sp_fold_in_text(const struct sp_fold_cfg *cfg, __u64 ip)
{
	for (int i = 0; i < 3; i++)
		if (ip >= cfg->text_start[i] && ip < cfg->text_end[i])
			return 1;
	return 0;
}

/*
 * Feeds one frame, leaf first, whose class is known: in the scheduler's text (in_text), its
 * wait class w (sp_fold_wait_of()). Returns 1 once the caller is known (later frames change
 * nothing).
 */
static inline int sp_fold_step_known(struct sp_fold_state *st, __u64 ip, int in_text, __u32 w)
{
	if (st->caller != SP_CALLER_UNKNOWN)
		return 1;
	if (in_text || (st->seen_sched && w != SP_WAIT_NONE)) {
		st->seen_sched = 1;
		if (st->wait == SP_WAIT_NONE && w != SP_WAIT__FOLD)
			st->wait = w;
		return 0;
	}
	if (st->seen_sched) {
		st->caller = ip;
		return 1;
	}
	return 0;
}

/* Feeds one frame, leaf first. Returns 1 once the caller is known (later frames change nothing). */
static inline int sp_fold_step(struct sp_fold_state *st, const struct sp_fold_cfg *cfg, __u64 ip)
{
	if (st->caller != SP_CALLER_UNKNOWN)
		return 1;
	return sp_fold_step_known(st, ip, sp_fold_in_text(cfg, ip), sp_fold_wait_of(cfg, ip));
}

/*
 * The waker's function: the first frame outside the wake-up machinery (the rule of the
 * schedule() caller, with the machinery in place of the scheduler's text). Frames before the
 * first machinery frame are the tracepoint's and the BPF program's. A timer callback or
 * dispatcher at or above that frame makes it SP_WAKER_TIMER.
 */
#define SP_WAKER_NOT_WALKED 0ULL /* without --wakers */
#define SP_WAKER_UNKNOWN 1ULL	 /* the stack could not be read, or never left the machinery */
#define SP_WAKER_TIMER 2ULL	 /* "[timer]" */

struct sp_wake_fold_state {
	__u64 function; /* SP_WAKER_UNKNOWN until found */
	__u32 seen;	/* a machinery frame was seen */
	__u32 done;
};

/* Whether ip is in one of r[0..n) (sorted by address, disjoint: as foldcfg.c builds them). */
static inline int sp_fold_in_ranges(const struct sp_range *r, __u32 n, __u32 max, __u64 ip)
{
	__u32 lo = 0, hi = n < max ? n : max; /* binary search in [lo, hi) */

	for (int i = 0; i < 8 && lo < hi; i++) { /* 2^8 > SP_MAX_WAKE_RANGES */
		__u32 mid = (lo + hi) / 2;

		if (mid >= max)
			return 0;
		if (ip < r[mid].start)
			hi = mid;
		else if (ip >= r[mid].end)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

/*
 * Feeds one frame of a waker's stack, leaf first, whose classes are known: in the wake-up
 * machinery, in a timer's code. Returns 1 once nothing can change.
 */
static inline int sp_wake_fold_step_known(struct sp_wake_fold_state *st, __u64 ip, int in_wake,
					  int in_timer)
{
	if (st->done)
		return 1;
	if (st->function == SP_WAKER_UNKNOWN && in_wake) {
		st->seen = 1;
		return 0;
	}
	if (!st->seen)
		return 0;
	if (in_timer) {
		st->function = SP_WAKER_TIMER;
		st->done = 1;
		return 1;
	}
	if (st->function == SP_WAKER_UNKNOWN)
		st->function = ip;
	return 0; /* on: a timer dispatcher further up makes it [timer] */
}

/* Feeds one frame of a waker's stack, leaf first. Returns 1 once nothing can change. */
static inline int sp_wake_fold_step(struct sp_wake_fold_state *st, const struct sp_fold_cfg *cfg,
				    __u64 ip)
{
	if (st->done)
		return 1;
	return sp_wake_fold_step_known(
		st, ip,
		st->function == SP_WAKER_UNKNOWN &&
			sp_fold_in_ranges(cfg->wake_ranges, cfg->nr_wake_ranges, SP_MAX_WAKE_RANGES, ip),
		st->seen &&
			sp_fold_in_ranges(cfg->timer_ranges, cfg->nr_timer_ranges, SP_MAX_TIMER_RANGES, ip));
}

#endif
