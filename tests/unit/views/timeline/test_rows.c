// SPDX-License-Identifier: BSD-2-Clause
/*
 * The timeline's state machine (src/views/timeline/rows.c): events into tasks and segments.
 * Each case feeds hand-made events (as BPF writes them) and checks the segments, and that
 * each task's segments tile its life; a seeded random stream of events (lost, duplicated,
 * out of order) must keep that property too.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "../../unit.h"
#include "model/critpath.h"
#include "views/timeline/rows.h"
#include "schedprof/fold.h"
#include "schedprof/timeline.h"

#define T0 1000000000ULL /* the run's start, in the events' clock */
#define PIPE_READ 0xffffffff81001000ULL
#define DO_WAIT 0xffffffff81002000ULL
#define MUTEX_LOCK 0xffffffff81003000ULL

static char *name_of(void *arg, uint64_t ip)
{
	char buf[32];

	(*(int *)arg)++;
	switch (ip) {
	case SP_CALLER_UNKNOWN:
		return strdup("[unknown]");
	case PIPE_READ:
		return strdup("anon_pipe_read");
	case DO_WAIT:
		return strdup("do_wait");
	case MUTEX_LOCK:
		return strdup("some_lock_user");
	}
	snprintf(buf, sizeof(buf), "0x%" PRIx64, ip);
	return strdup(buf);
}

/* The comm that the events give task tid (a test renames it here): NULL, "t<tid>". */
static const char *names[128];

static void comm_set(char dst[TASK_COMM_LEN], int tid)
{
	memset(dst, 0, TASK_COMM_LEN);
	if (tid >= 0 && tid < 128 && names[tid])
		snprintf(dst, TASK_COMM_LEN, "%s", names[tid]);
	else
		snprintf(dst, TASK_COMM_LEN, "t%d", tid);
}

/* A comm as BPF gives it: NUL-padded, not terminated at TASK_COMM_LEN bytes. */
static void comm_str(char dst[TASK_COMM_LEN], const char *s)
{
	size_t n = strlen(s);

	memset(dst, 0, TASK_COMM_LEN);
	memcpy(dst, s, n < TASK_COMM_LEN ? n : TASK_COMM_LEN);
}

static void hdr(struct sp_tl_hdr *h, int type, uint64_t ts, int cpu)
{
	h->ts = T0 + ts;
	h->type = (__u16)type;
	h->cpu = (__u16)cpu;
}


/* A switch at ts (ns after the start) from prev, which ran for ran ns, to next (0: not traced). */
static int sw_ran(struct tl_builder *b, uint64_t ts, int cpu, int prev, unsigned int state,
		  uint64_t caller, uint32_t wait, int next, uint64_t ran)
{
	struct sp_tl_switch e;

	memset(&e, 0, sizeof(e));
	hdr(&e.h, SP_TL_EV_SWITCH, ts, cpu);
	e.prev_tid = e.prev_pid = (__u32)prev;
	e.prev_ran = ran;
	e.prev_state = state;
	e.caller = caller;
	e.wait = wait;
	e.next_tid = e.next_pid = (__u32)next;
	if (prev)
		comm_set(e.prev_comm, prev);
	if (next)
		comm_set(e.next_comm, next);
	e.flags = (prev ? SP_TL_PREV_TRACED : 0) | (next ? SP_TL_NEXT_TRACED : 0);
	return tl_builder_add(b, &e, sizeof(e));
}

/*
 * A switch on cpu at ts of any tasks (0: the idle task): prev, traced or not (its runtime 0:
 * the run all stolen), preempted (state 0) with affinity cpus, or going to sleep in caller;
 * next, traced or not; flags: more of struct sp_tl_switch's.
 */
static int sw_flags(struct tl_builder *b, uint64_t ts, int cpu, int prev, bool prev_traced,
		    unsigned int state, uint64_t caller, uint64_t cpus, int next, bool next_traced,
		    unsigned int flags)
{
	struct sp_tl_switch e;

	memset(&e, 0, sizeof(e));
	hdr(&e.h, SP_TL_EV_SWITCH, ts, cpu);
	e.prev_tid = e.prev_pid = (__u32)prev;
	e.prev_state = state;
	e.caller = caller;
	e.prev_cpus = cpus;
	e.next_tid = e.next_pid = (__u32)next;
	if (prev)
		comm_set(e.prev_comm, prev);
	if (next)
		comm_set(e.next_comm, next);
	e.prev_cg = prev ? 1000u + (unsigned int)prev : 0;
	e.next_cg = next ? 1000u + (unsigned int)next : 0;
	e.flags = (prev_traced ? SP_TL_PREV_TRACED : 0) | (next_traced ? SP_TL_NEXT_TRACED : 0) |
		  flags;
	return tl_builder_add(b, &e, sizeof(e));
}

static int sw_any(struct tl_builder *b, uint64_t ts, int cpu, int prev, bool prev_traced,
		  unsigned int state, uint64_t caller, uint64_t cpus, int next, bool next_traced)
{
	return sw_flags(b, ts, cpu, prev, prev_traced, state, caller, cpus, next, next_traced, 0);
}

/* A switch whose prev's runtime is not given (0: its switch-in is never placed from it). */
static int sw(struct tl_builder *b, uint64_t ts, int cpu, int prev, unsigned int state,
	      uint64_t caller, uint32_t wait, int next)
{
	return sw_ran(b, ts, cpu, prev, state, caller, wait, next, 0);
}

/* tid, of affinity cpus, woken at ts by waker (traced or not) in context ctx. */
static int wake_cpus(struct tl_builder *b, uint64_t ts, int tid, int waker, bool traced, int ctx,
		     uint64_t cpus)
{
	struct sp_tl_wake e;

	memset(&e, 0, sizeof(e));
	hdr(&e.h, SP_TL_EV_WAKE, ts, 0);
	e.tid = e.pid = (__u32)tid;
	e.cpus = cpus;
	comm_set(e.comm, tid);
	e.ctx = (__u32)ctx;
	if (ctx == SP_TL_CTX_TASK) {
		e.waker_tid = e.waker_pid = (__u32)waker;
		e.waker_traced = traced;
		comm_set(e.waker_comm, waker);
	}
	return tl_builder_add(b, &e, sizeof(e));
}

static int wake(struct tl_builder *b, uint64_t ts, int tid, int waker, bool traced, int ctx)
{
	return wake_cpus(b, ts, tid, waker, traced, ctx, 0);
}

static int fork_ev(struct tl_builder *b, uint64_t ts, int parent, int child)
{
	struct sp_tl_fork e;

	memset(&e, 0, sizeof(e));
	hdr(&e.h, SP_TL_EV_FORK, ts, 0);
	e.parent_tid = e.parent_pid = (__u32)parent;
	e.tid = e.pid = (__u32)child;
	comm_set(e.comm, parent); /* a child has its parent's comm until it execs */
	return tl_builder_add(b, &e, sizeof(e));
}

static int task_ev(struct tl_builder *b, int type, uint64_t ts, int tid, const char *comm)
{
	struct sp_tl_task_ev e;

	memset(&e, 0, sizeof(e));
	hdr(&e.h, type, ts, 0);
	e.tid = e.pid = (__u32)tid;
	if (comm)
		comm_str(e.comm, comm);
	else
		comm_set(e.comm, tid);
	return tl_builder_add(b, &e, sizeof(e));
}

static void tl_free(struct sp_timeline *tl)
{
	for (size_t i = 0; i < tl->ntasks; i++)
		free(tl->tasks[i].comm);
	for (size_t i = 0; i < tl->nsegs; i++) {
		struct sp_tl_seg *s = &tl->segs[i];

		free(s->comm);
		free(s->caller);
		free(s->wait);
		free(s->waker_comm);
		free(s->waker);
	}
	free(tl->tasks);
	free(tl->segs);
	memset(tl, 0, sizeof(*tl));
}

/* Each task's segments, together and in order, tile [start_ns, end_ns). */
static void check_tiling(const struct sp_timeline *tl)
{
	size_t at = 0;

	for (size_t i = 0; i < tl->ntasks; i++) {
		const struct sp_tl_task *t = &tl->tasks[i];
		uint64_t cur = t->start_ns;

		ck_assert_uint_le(t->start_ns, t->end_ns);
		for (; at < tl->nsegs && tl->segs[at].tid == t->tid && tl->segs[at].start_ns >= t->start_ns &&
		       (tl->segs[at].start_ns < t->end_ns || !tl->segs[at].ns); at++) {
			const struct sp_tl_seg *s = &tl->segs[at];

			ck_assert_msg(s->start_ns == cur, "task %d: segment at %" PRIu64 ", expected %" PRIu64,
				      t->tid, s->start_ns, cur);
			ck_assert_uint_gt(s->ns, 0);
			ck_assert(s->state == SP_TL_RUNNING ? s->cpu >= 0 && !s->caller
							   : s->cpu == -1 && s->caller);
			ck_assert(s->state == SP_TL_BLOCKED || (!s->wait && !s->waker_comm));
			ck_assert_ptr_nonnull(s->comm);
			cur += s->ns;
		}
		ck_assert_msg(cur == t->end_ns, "task %d ends at %" PRIu64 ", its segments at %" PRIu64,
			      t->tid, t->end_ns, cur);
	}
	ck_assert_uint_eq(at, tl->nsegs);
}

static int finish(struct tl_builder *b, uint64_t end, int job, struct sp_timeline *tl)
{
	int calls = 0, err;

	memset(tl, 0, sizeof(*tl));
	err = tl_builder_finish(b, end, job, name_of, &calls, tl, NULL);
	tl_builder_free(b);
	check_tiling(tl);
	return err;
}

static const struct sp_tl_task *task_of(const struct sp_timeline *tl, int tid)
{
	for (size_t i = 0; i < tl->ntasks; i++)
		if (tl->tasks[i].tid == tid)
			return &tl->tasks[i];
	ck_abort_msg("no task %d", tid);
	return NULL;
}

/* The k-th segment of tid. */
static const struct sp_tl_seg *seg_of(const struct sp_timeline *tl, int tid, size_t k)
{
	for (size_t i = 0; i < tl->nsegs; i++)
		if (tl->segs[i].tid == tid && !k--)
			return &tl->segs[i];
	ck_abort_msg("task %d has too few segments", tid);
	return NULL;
}

static size_t nsegs_of(const struct sp_timeline *tl, int tid)
{
	size_t n = 0;

	for (size_t i = 0; i < tl->nsegs; i++)
		n += tl->segs[i].tid == tid;
	return n;
}

static void check_seg(const struct sp_tl_seg *s, enum sp_tl_state state, uint64_t start,
		      uint64_t ns, const char *caller)
{
	ck_assert_int_eq(s->state, state);
	ck_assert_uint_eq(s->start_ns, start);
	ck_assert_uint_eq(s->ns, ns);
	if (caller)
		ck_assert_str_eq(s->caller, caller);
	else
		ck_assert_ptr_null(s->caller);
}

/* A task alive at the start: switched in, sleeps in a pipe, woken by a traced task, exits. */
START_TEST(sleep_wake_exit)
{
	struct tl_builder *b = tl_builder_new(T0, 0);
	struct sp_timeline tl;
	const struct sp_tl_seg *s;
	struct tl_counts c;

	ck_assert_int_eq(sw(b, 100, 1, 0, 0, 0, 0, 10), 0);
	ck_assert_int_eq(sw(b, 300, 1, 10, 1, PIPE_READ, SP_WAIT_NONE, 0), 0);
	ck_assert_int_eq(wake(b, 500, 10, 11, true, SP_TL_CTX_TASK), 0);
	ck_assert_int_eq(sw(b, 600, 0, 0, 0, 0, 0, 10), 0);
	ck_assert_int_eq(task_ev(b, SP_TL_EV_EXIT, 700, 10, NULL), 0);
	/* exiting, it is preempted once more (in exit_mm, say) before its last switch */
	ck_assert_int_eq(sw(b, 702, 0, 10, 0, 0, 0, 0), 0);
	ck_assert_int_eq(sw(b, 705, 0, 0, 0, 0, 0, 10), 0);
	ck_assert_int_eq(sw(b, 710, 0, 10, 0x80, 0, 0, 0), 0);
	tl_builder_counts(b, &c);
	ck_assert_uint_eq(c.events, 8);
	ck_assert_uint_eq(c.bad + c.dropped + c.truncated_ns, 0);
	ck_assert_int_eq(finish(b, 1000, 0, &tl), 0);
	ck_assert_uint_eq(tl.ntasks, 1);
	ck_assert_int_eq(tl.tasks[0].tid, 10);
	ck_assert_str_eq(tl.tasks[0].comm, "t10");
	ck_assert_uint_eq(tl.tasks[0].start_ns, 0); /* alive at attach */
	ck_assert_uint_eq(tl.tasks[0].end_ns, 710); /* its last switch-out, not its exit event */
	ck_assert(tl.tasks[0].exited);
	ck_assert_uint_eq(tl.nsegs, 7);
	check_seg(seg_of(&tl, 10, 0), SP_TL_RUNNABLE, 0, 100, "[unknown]");
	check_seg(seg_of(&tl, 10, 1), SP_TL_RUNNING, 100, 200, NULL);
	ck_assert_int_eq(seg_of(&tl, 10, 1)->cpu, 1);
	s = seg_of(&tl, 10, 2);
	check_seg(s, SP_TL_BLOCKED, 300, 200, "anon_pipe_read");
	ck_assert_str_eq(s->wait, "pipe");
	ck_assert_int_eq(s->waker_tid, 11);
	ck_assert_str_eq(s->waker_comm, "t11");
	ck_assert_ptr_null(s->waker);
	ck_assert(!s->unfinished);
	check_seg(seg_of(&tl, 10, 3), SP_TL_RUNNABLE, 500, 100, "[woken]");
	check_seg(seg_of(&tl, 10, 4), SP_TL_RUNNING, 600, 102, NULL);
	ck_assert_int_eq(seg_of(&tl, 10, 4)->cpu, 0);
	check_seg(seg_of(&tl, 10, 5), SP_TL_RUNNABLE, 702, 3, "[preempted]");
	check_seg(seg_of(&tl, 10, 6), SP_TL_RUNNING, 705, 5, NULL);
	/* every task exited: the job ends with the last */
	ck_assert_uint_eq(tl.end_ns, 710);
	ck_assert_int_eq(tl.end_tid, 10);
	tl_free(&tl);
}
END_TEST

/* Preempted: runnable "[preempted]"; wakers in interrupts, and untraced wakers. */
START_TEST(preempt_and_wakers)
{
	struct tl_builder *b = tl_builder_new(T0, 0);
	struct sp_timeline tl;
	const struct sp_tl_seg *s;

	ck_assert_int_eq(sw(b, 10, 0, 0, 0, 0, 0, 20), 0);
	ck_assert_int_eq(sw(b, 20, 0, 20, 0, 0, 0, 0), 0); /* preempted */
	ck_assert_int_eq(sw(b, 30, 1, 0, 0, 0, 0, 20), 0);
	ck_assert_int_eq(sw(b, 40, 1, 20, 1, DO_WAIT, SP_WAIT_NONE, 0), 0);
	ck_assert_int_eq(wake(b, 50, 20, 0, false, SP_TL_CTX_IRQ), 0);
	ck_assert_int_eq(sw(b, 60, 1, 0, 0, 0, 0, 20), 0);
	ck_assert_int_eq(sw(b, 70, 1, 20, 2, MUTEX_LOCK, SP_WAIT_MUTEX, 0), 0);
	ck_assert_int_eq(wake(b, 80, 20, 99, false, SP_TL_CTX_TASK), 0); /* untraced waker */
	ck_assert_int_eq(sw(b, 90, 1, 0, 0, 0, 0, 20), 0);
	ck_assert_int_eq(sw(b, 95, 1, 20, 1, 0, SP_WAIT_NONE, 0), 0); /* caller unknown */
	ck_assert_int_eq(wake(b, 97, 20, 0, false, SP_TL_CTX_SOFTIRQ), 0);
	ck_assert_int_eq(finish(b, 100, 0, &tl), 0);
	check_seg(seg_of(&tl, 20, 2), SP_TL_RUNNABLE, 20, 10, "[preempted]");
	s = seg_of(&tl, 20, 4);
	check_seg(s, SP_TL_BLOCKED, 40, 10, "do_wait");
	ck_assert_str_eq(s->wait, "child");
	ck_assert_int_eq(s->waker_tid, 0);
	ck_assert_str_eq(s->waker_comm, "[irq]");
	s = seg_of(&tl, 20, 7);
	check_seg(s, SP_TL_BLOCKED, 70, 10, "some_lock_user");
	ck_assert_str_eq(s->wait, "mutex");
	ck_assert_int_eq(s->waker_tid, 0); /* not traced: named, not followed */
	ck_assert_str_eq(s->waker_comm, "t99");
	s = seg_of(&tl, 20, 10);
	check_seg(s, SP_TL_BLOCKED, 95, 2, "[unknown]");
	ck_assert_str_eq(s->wait, "other");
	ck_assert_str_eq(s->waker_comm, "[softirq]");
	/* still runnable at the end: cut there, unfinished, and the job ends at the trace's end */
	s = seg_of(&tl, 20, 11);
	check_seg(s, SP_TL_RUNNABLE, 97, 3, "[woken]");
	ck_assert(s->unfinished);
	ck_assert_uint_eq(nsegs_of(&tl, 20), 12);
	ck_assert(!task_of(&tl, 20)->exited);
	ck_assert_uint_eq(task_of(&tl, 20)->end_ns, 100);
	ck_assert_uint_eq(tl.end_ns, 100);
	ck_assert_int_eq(tl.end_tid, 20);
	tl_free(&tl);
}
END_TEST

/*
 * A switch-in missed (the kernel's stream has gaps): the switch-out that follows places the
 * run from prev's runtime, on its CPU, after a preemption and after a sleep; a runtime longer
 * than the time off CPU starts the run where that time did.
 */
START_TEST(switch_in_missed)
{
	struct tl_builder *b = tl_builder_new(T0, 0);
	struct sp_timeline tl;

	ck_assert_int_eq(sw(b, 10, 0, 0, 0, 0, 0, 30), 0);
	ck_assert_int_eq(sw_ran(b, 20, 0, 30, 0, 0, 0, 0, 10), 0); /* preempted */
	ck_assert_int_eq(sw_ran(b, 100, 1, 30, 0, 0, 0, 0, 60), 0); /* its switch-in at 40 missed */
	ck_assert_int_eq(sw(b, 110, 1, 0, 0, 0, 0, 30), 0);
	ck_assert_int_eq(sw_ran(b, 120, 1, 30, 1, PIPE_READ, SP_WAIT_NONE, 0, 10), 0);
	ck_assert_int_eq(wake(b, 130, 30, 0, false, SP_TL_CTX_IRQ), 0);
	ck_assert_int_eq(sw_ran(b, 150, 0, 30, 0, 0, 0, 0, 500), 0); /* missed; ran from 130 */
	ck_assert_int_eq(finish(b, 200, 0, &tl), 0);
	check_seg(seg_of(&tl, 30, 1), SP_TL_RUNNING, 10, 10, NULL);
	check_seg(seg_of(&tl, 30, 2), SP_TL_RUNNABLE, 20, 20, "[preempted]");
	check_seg(seg_of(&tl, 30, 3), SP_TL_RUNNING, 40, 60, NULL);
	ck_assert_int_eq(seg_of(&tl, 30, 3)->cpu, 1);
	check_seg(seg_of(&tl, 30, 4), SP_TL_RUNNABLE, 100, 10, "[preempted]");
	check_seg(seg_of(&tl, 30, 5), SP_TL_RUNNING, 110, 10, NULL);
	check_seg(seg_of(&tl, 30, 6), SP_TL_BLOCKED, 120, 10, "anon_pipe_read");
	check_seg(seg_of(&tl, 30, 7), SP_TL_RUNNING, 130, 20, NULL);
	ck_assert_int_eq(seg_of(&tl, 30, 7)->cpu, 0);
	check_seg(seg_of(&tl, 30, 8), SP_TL_RUNNABLE, 150, 50, "[preempted]");
	ck_assert_uint_eq(nsegs_of(&tl, 30), 9);
	tl_free(&tl);
}
END_TEST

/*
 * A wake-up that reaches the buffer before the switch-out it ends (two CPUs): asleep until
 * the wake-up when it came after the switch-out; not asleep at all when before; and a
 * wake-up that found the task awake long before its sleep does not end that sleep.
 */
START_TEST(wake_races_switch_out)
{
	struct tl_builder *b = tl_builder_new(T0, 0);
	struct sp_timeline tl;
	const struct sp_tl_seg *s;

	ck_assert_int_eq(sw(b, 100, 0, 0, 0, 0, 0, 30), 0);
	ck_assert_int_eq(wake(b, 210, 30, 31, true, SP_TL_CTX_TASK), 0);
	ck_assert_int_eq(sw(b, 200, 0, 30, 1, PIPE_READ, 0, 0), 0);
	ck_assert_int_eq(sw(b, 300, 0, 0, 0, 0, 0, 30), 0);
	ck_assert_int_eq(wake(b, 390, 30, 31, true, SP_TL_CTX_TASK), 0);
	ck_assert_int_eq(sw(b, 400, 0, 30, 1, PIPE_READ, 0, 0), 0);
	ck_assert_int_eq(sw(b, 500, 0, 0, 0, 0, 0, 30), 0);
	ck_assert_int_eq(wake(b, 510, 30, 31, true, SP_TL_CTX_TASK), 0);
	ck_assert_int_eq(sw(b, 5000000, 0, 30, 1, PIPE_READ, 0, 0), 0);
	ck_assert_int_eq(finish(b, 6000000, 0, &tl), 0);
	s = seg_of(&tl, 30, 2);
	check_seg(s, SP_TL_BLOCKED, 200, 10, "anon_pipe_read");
	ck_assert_int_eq(s->waker_tid, 31);
	check_seg(seg_of(&tl, 30, 3), SP_TL_RUNNABLE, 210, 90, "[woken]");
	check_seg(seg_of(&tl, 30, 4), SP_TL_RUNNING, 300, 100, NULL);
	check_seg(seg_of(&tl, 30, 5), SP_TL_RUNNABLE, 400, 100, "[woken]");
	check_seg(seg_of(&tl, 30, 6), SP_TL_RUNNING, 500, 5000000 - 500, NULL);
	s = seg_of(&tl, 30, 7);
	check_seg(s, SP_TL_BLOCKED, 5000000, 1000000, "anon_pipe_read");
	ck_assert_ptr_null(s->waker_comm); /* never woken: cut by the end */
	ck_assert(s->unfinished);
	tl_free(&tl);
}
END_TEST

/* fork, the child's first wake-up and run, its exec (a new comm from there), the job's end. */
START_TEST(fork_exec_job_end)
{
	struct tl_builder *b = tl_builder_new(T0, 0);
	struct sp_timeline tl;
	const struct sp_tl_task *t;

	ck_assert_int_eq(task_ev(b, SP_TL_EV_EXEC, 50, 40, "make"), 0); /* the command */
	ck_assert_int_eq(fork_ev(b, 100, 40, 41), 0);
	ck_assert_int_eq(wake(b, 101, 41, 40, true, SP_TL_CTX_TASK), 0); /* wakeup_new: no change */
	ck_assert_int_eq(sw(b, 150, 1, 0, 0, 0, 0, 41), 0);
	ck_assert_int_eq(task_ev(b, SP_TL_EV_EXEC, 200, 41, "cc1"), 0);
	ck_assert_int_eq(sw(b, 250, 0, 40, 1, DO_WAIT, 0, 0), 0);
	ck_assert_int_eq(task_ev(b, SP_TL_EV_EXIT, 900, 41, "cc1"), 0);
	ck_assert_int_eq(wake(b, 905, 40, 41, true, SP_TL_CTX_TASK), 0);
	ck_assert_int_eq(sw(b, 910, 1, 41, 0x80, 0, 0, 40), 0);
	ck_assert_int_eq(task_ev(b, SP_TL_EV_EXIT, 950, 40, "make"), 0);
	ck_assert_int_eq(sw(b, 960, 1, 40, 0x80, 0, 0, 0), 0);
	/* another task of the job lives on, past the command's end */
	ck_assert_int_eq(sw(b, 970, 0, 0, 0, 0, 0, 42), 0);
	ck_assert_int_eq(finish(b, 2000, 40, &tl), 0);
	ck_assert_uint_eq(tl.ntasks, 3);
	t = task_of(&tl, 40);
	ck_assert_str_eq(t->comm, "t40"); /* its last comm: the switch events say it too */
	ck_assert_uint_eq(t->start_ns, 0);
	ck_assert_uint_eq(t->end_ns, 960);
	t = task_of(&tl, 41);
	ck_assert_str_eq(t->comm, "t41");
	ck_assert_int_eq(t->parent_tid, 40);
	ck_assert_uint_eq(t->start_ns, 100);
	ck_assert_uint_eq(t->end_ns, 910);
	ck_assert(t->exited);
	check_seg(seg_of(&tl, 41, 0), SP_TL_RUNNABLE, 100, 50, "[new]");
	check_seg(seg_of(&tl, 41, 1), SP_TL_RUNNING, 150, 50, NULL);
	ck_assert_str_eq(seg_of(&tl, 41, 0)->comm, "t40"); /* its parent's, until it runs */
	ck_assert_str_eq(seg_of(&tl, 41, 1)->comm, "t41");
	check_seg(seg_of(&tl, 41, 2), SP_TL_RUNNING, 200, 710, NULL);
	ck_assert_str_eq(seg_of(&tl, 41, 2)->comm, "cc1");
	ck_assert_str_eq(seg_of(&tl, 40, 1)->wait, "child");
	ck_assert_int_eq(seg_of(&tl, 40, 1)->waker_tid, 41);
	/* the tasks in order of their start: those alive at attach first */
	ck_assert_int_eq(tl.tasks[2].tid, 41);
	/* the command's end is the job's */
	ck_assert_uint_eq(tl.end_ns, 960);
	ck_assert_int_eq(tl.end_tid, 40);
	tl_free(&tl);
}
END_TEST

/* prctl(PR_SET_NAME) while running splits the running segment; while asleep, not. */
START_TEST(rename_splits)
{
	struct tl_builder *b = tl_builder_new(T0, 0);
	struct sp_timeline tl;

	ck_assert_int_eq(sw(b, 100, 0, 0, 0, 0, 0, 70), 0);
	ck_assert_int_eq(task_ev(b, SP_TL_EV_RENAME, 150, 70, "worker"), 0);
	ck_assert_int_eq(task_ev(b, SP_TL_EV_RENAME, 160, 70, "worker"), 0); /* no change */
	names[70] = "worker";
	ck_assert_int_eq(sw(b, 200, 0, 70, 1, PIPE_READ, 0, 0), 0);
	names[70] = NULL;
	ck_assert_int_eq(task_ev(b, SP_TL_EV_RENAME, 250, 70, "renamed"), 0);
	/* 16 bytes and no NUL, as the kernel may hand them over */
	ck_assert_int_eq(task_ev(b, SP_TL_EV_RENAME, 260, 71, "0123456789abcdefXYZ"), 0);
	ck_assert_int_eq(finish(b, 300, 0, &tl), 0);
	ck_assert_uint_eq(nsegs_of(&tl, 70), 4);
	check_seg(seg_of(&tl, 70, 1), SP_TL_RUNNING, 100, 50, NULL);
	ck_assert_str_eq(seg_of(&tl, 70, 1)->comm, "t70");
	check_seg(seg_of(&tl, 70, 2), SP_TL_RUNNING, 150, 50, NULL);
	ck_assert_str_eq(seg_of(&tl, 70, 2)->comm, "worker");
	check_seg(seg_of(&tl, 70, 3), SP_TL_BLOCKED, 200, 100, "anon_pipe_read");
	ck_assert_str_eq(seg_of(&tl, 70, 3)->comm, "worker");
	ck_assert_str_eq(task_of(&tl, 70)->comm, "renamed");
	ck_assert_str_eq(task_of(&tl, 71)->comm, "0123456789abcdef");
	tl_free(&tl);
}
END_TEST

#define MS 1000000ULL

/*
 * The serial tail as BPF reports it (tests/integration/test_timeline.sh without the machine's
 * other load): the timeline built here, analyzed by critpath.c, has a critical path through
 * sp_tail's whole run and one serial phase, sp_tail's second alone.
 */
START_TEST(serial_tail_analyzed)
{
	struct tl_builder *b = tl_builder_new(T0, 0);
	struct sp_run run;
	struct sp_timeline *tl = &run.timeline;
	int calls = 0;

	sp_run_init(&run);
	names[1] = "main";
	ck_assert_int_eq(task_ev(b, SP_TL_EV_EXEC, 1 * MS, 1, "main"), 0);
	ck_assert_int_eq(fork_ev(b, 10 * MS, 1, 2), 0);
	names[2] = "sp_par";
	ck_assert_int_eq(task_ev(b, SP_TL_EV_RENAME, 10 * MS + 1, 2, "sp_par"), 0);
	ck_assert_int_eq(fork_ev(b, 20 * MS, 1, 3), 0);
	names[3] = "sp_tail";
	ck_assert_int_eq(task_ev(b, SP_TL_EV_RENAME, 20 * MS + 1, 3, "sp_tail"), 0);
	ck_assert_int_eq(sw(b, 25 * MS, 0, 1, 1, DO_WAIT, 0, 2), 0);
	ck_assert_int_eq(sw(b, 30 * MS, 1, 0, 0, 0, 0, 3), 0);
	ck_assert_int_eq(task_ev(b, SP_TL_EV_EXIT, 1029 * MS, 2, NULL), 0);
	ck_assert_int_eq(wake(b, 1029 * MS + 1, 1, 2, true, SP_TL_CTX_TASK), 0);
	ck_assert_int_eq(sw(b, 1030 * MS, 0, 2, 0x80, 0, 0, 1), 0);
	ck_assert_int_eq(sw(b, 1040 * MS, 0, 1, 1, DO_WAIT, 0, 0), 0);
	ck_assert_int_eq(task_ev(b, SP_TL_EV_EXIT, 2029 * MS, 3, NULL), 0);
	ck_assert_int_eq(wake(b, 2029 * MS + 1, 1, 3, true, SP_TL_CTX_TASK), 0);
	ck_assert_int_eq(sw(b, 2030 * MS, 1, 3, 0x80, 0, 0, 1), 0);
	ck_assert_int_eq(task_ev(b, SP_TL_EV_EXIT, 2039 * MS, 1, NULL), 0);
	ck_assert_int_eq(sw(b, 2040 * MS, 1, 1, 0x80, 0, 0, 0), 0);
	memset(names, 0, sizeof(names));
	ck_assert_int_eq(tl_builder_finish(b, 2100 * MS, 1, name_of, &calls, tl, NULL), 0);
	tl_builder_free(b);
	check_tiling(tl);
	ck_assert_uint_eq(tl->end_ns, 2040 * MS);
	ck_assert_int_eq(tl->end_tid, 1);
	ck_assert_int_eq(sp_timeline_analyze(tl, 2), 0);
	ck_assert_uint_eq(tl->cp_total_ns, 2040 * MS);
	ck_assert_uint_eq(tl->nserial, 1);
	ck_assert_str_eq(tl->serial[0].comm, "sp_tail");
	ck_assert_int_eq(tl->serial[0].tid, 3);
	ck_assert_uint_eq(tl->serial[0].start_ns, 1040 * MS);
	ck_assert_uint_eq(tl->serial[0].ns, 2029 * MS + 1 - 1040 * MS); /* until main is woken */
	ck_assert_uint_gt(tl->ncp_ranks, 0);
	ck_assert_str_eq(tl->cp_ranks[0].comm, "sp_tail");
	ck_assert_int_eq(tl->cp_ranks[0].state, SP_TL_RUNNING);
	sp_run_free(&run);
}
END_TEST

/* A tid used again after its task ended: a second task, from its fork. Events before t0. */
START_TEST(tid_reuse_and_early_events)
{
	struct tl_builder *b = tl_builder_new(T0, 0);
	struct sp_timeline tl;
	struct sp_tl_switch e;

	memset(&e, 0, sizeof(e));
	e.h.ts = T0 - 500; /* between the attach and the start: at 0 */
	e.h.type = SP_TL_EV_SWITCH;
	e.next_tid = e.next_pid = 50;
	e.flags = SP_TL_NEXT_TRACED;
	comm_set(e.next_comm, 50);
	ck_assert_int_eq(tl_builder_add(b, &e, sizeof(e)), 0);
	ck_assert_int_eq(task_ev(b, SP_TL_EV_EXIT, 100, 50, NULL), 0);
	ck_assert_int_eq(sw(b, 110, 0, 50, 0x80, 0, 0, 0), 0);
	ck_assert_int_eq(fork_ev(b, 200, 51, 50), 0);
	ck_assert_int_eq(finish(b, 300, 0, &tl), 0);
	ck_assert_uint_eq(tl.ntasks, 3);
	ck_assert_int_eq(tl.tasks[0].tid, 50);
	ck_assert_uint_eq(tl.tasks[0].end_ns, 110);
	check_seg(&tl.segs[0], SP_TL_RUNNING, 0, 110, NULL);
	ck_assert_int_eq(tl.tasks[2].tid, 50);
	ck_assert_uint_eq(tl.tasks[2].start_ns, 200);
	ck_assert_int_eq(tl.tasks[2].parent_tid, 51);
	/* the forking parent, alive at attach, still running: the job ends with the trace */
	ck_assert_uint_eq(tl.end_ns, 300);
	ck_assert_int_eq(tl.end_tid, 51);
	tl_free(&tl);
}
END_TEST

static const struct tl_runq_row *runq_row(const struct tl_runq *rq, const char *caller)
{
	for (size_t i = 0; i < rq->n; i++)
		if (!strcmp(rq->v[i].caller, caller))
			return &rq->v[i];
	ck_abort_msg("no runq row %s", caller);
	return NULL;
}

/*
 * Two CPUs. Task 1 (traced, either CPU) is preempted on CPU 0 by 200 (untraced) while CPU 1
 * sits idle for part of its wait; later it sleeps, is woken while 200 holds CPU 0 and CPU 1 is
 * idle again (a missed wake-up). Task 2, pinned to CPU 0, waits the same way: no miss.
 */
START_TEST(runq_idle_and_takers)
{
	struct tl_builder *b = tl_builder_new(T0, 0);
	struct sp_timeline tl;
	struct tl_runq rq;
	const struct tl_runq_row *r;
	int calls = 0;

	memset(&tl, 0, sizeof(tl));
	/* CPU 1: 100 ran from the start until 10, then idle until 50, 300 until 110, idle */
	ck_assert_int_eq(sw_any(b, 10, 1, 100, false, 1, 0, 0, 0, false), 0);
	/* CPU 0: 1 preempted by 200 at 20 while its CPU quota is throttled, back at 80 */
	ck_assert_int_eq(sw_flags(b, 20, 0, 1, true, 0, 0, 3, 200, false, SP_TL_PREV_THROTTLED), 0);
	ck_assert_int_eq(sw_any(b, 50, 1, 0, false, 0, 0, 0, 300, false), 0);
	ck_assert_int_eq(sw_any(b, 80, 0, 200, false, 0, 0, 3, 1, true), 0);
	/* 1 sleeps at 100, 200 runs; woken at 120 with CPU 1 idle since 110; runs at 150 */
	ck_assert_int_eq(sw_any(b, 100, 0, 1, true, 1, DO_WAIT, 3, 200, false), 0);
	ck_assert_int_eq(sw_any(b, 110, 1, 300, false, 1, 0, 0, 0, false), 0);
	ck_assert_int_eq(wake_cpus(b, 120, 1, 0, false, SP_TL_CTX_IRQ, 3), 0);
	/* 2, pinned to CPU 0, woken at 130 while 200 runs: waits, but no CPU it may use is idle */
	ck_assert_int_eq(wake_cpus(b, 130, 2, 0, false, SP_TL_CTX_IRQ, 1), 0);
	ck_assert_int_eq(sw_any(b, 150, 0, 200, false, 0, 0, 3, 1, true), 0);
	ck_assert_int_eq(sw_any(b, 160, 0, 1, true, 1, DO_WAIT, 3, 2, true), 0);
	ck_assert_int_eq(tl_builder_finish(b, 200, 0, name_of, &calls, &tl, &rq), 0);
	tl_builder_free(b);
	check_tiling(&tl);

	/* preempted: [20, 80) behind 200, CPU 1 idle in [20, 50): 30 */
	r = runq_row(&rq, "[preempted]");
	ck_assert_uint_eq(r->waits, 1);
	ck_assert_uint_eq(r->idle_miss_ns, 30);
	ck_assert_uint_eq(r->missed_wakeups, 0);
	ck_assert_uint_eq(r->takers.n, 1);
	ck_assert_str_eq(r->takers.v[0].comm, "t200");
	ck_assert_str_eq(r->takers.v[0].kind, "ran-during");
	ck_assert_str_eq(r->takers.v[0].where, "outside");
	ck_assert_uint_eq(r->takers.v[0].cgroup_id, 1200);
	ck_assert_uint_eq(r->takers.v[0].ns, 60);
	ck_assert_uint_eq(r->takers.v[0].count, 1);
	/* do_wait: 1's [120, 150) behind 200 with CPU 1 idle (30, a missed wake-up); 2's
	 * [130, 160) behind 200 then 1 (inside), pinned: no miss */
	r = runq_row(&rq, "do_wait");
	ck_assert_uint_eq(r->waits, 1);
	ck_assert_uint_eq(r->idle_miss_ns, 30);
	ck_assert_uint_eq(r->missed_wakeups, 1);
	ck_assert_uint_eq(rq.idle_miss_ns, 60);
	ck_assert_uint_eq(rq.missed_wakeups, 1);
	/* 1's segments: its preempted wait throttled; its run [80, 100) all stolen (runtime 0) */
	for (size_t i = 0; i < tl.nsegs; i++) {
		const struct sp_tl_seg *g = &tl.segs[i];

		if (g->tid != 1)
			continue;
		ck_assert_int_eq(g->throttled, g->state == SP_TL_RUNNABLE && g->start_ns == 20);
		if (g->state == SP_TL_RUNNING && g->start_ns == 80)
			ck_assert_uint_eq(g->stolen_ns, 20);
		if (g->state == SP_TL_RUNNING && g->start_ns == 0)
			ck_assert_uint_eq(g->stolen_ns, 0); /* its switch-in not seen: unknown */
	}
	/* capped at the CPUs' steal: scaled down, never up */
	tl_cap_stolen(&tl, 1000);
	for (size_t i = 0; i < tl.nsegs; i++)
		if (tl.segs[i].tid == 1 && tl.segs[i].start_ns == 80)
			ck_assert_uint_eq(tl.segs[i].stolen_ns, 20);
	tl_cap_stolen(&tl, 0);
	for (size_t i = 0; i < tl.nsegs; i++)
		ck_assert_uint_eq(tl.segs[i].stolen_ns, 0);
	tl_runq_free(&rq);
	tl_free(&tl);
}
END_TEST

/*
 * A wake-up that reaches the buffer after the switch-in it led to (older than it): the sleep
 * that ended there gets its waker; the task runs on.
 */
START_TEST(wake_after_switch_in)
{
	struct tl_builder *b = tl_builder_new(T0, 0);
	struct sp_timeline tl;

	ck_assert_int_eq(sw(b, 100, 0, 1, 1, DO_WAIT, 0, 0), 0);
	ck_assert_int_eq(sw(b, 200, 0, 0, 0, 0, 0, 1), 0);
	ck_assert_int_eq(wake(b, 190, 1, 0, false, SP_TL_CTX_IRQ), 0);
	ck_assert_int_eq(finish(b, 300, 0, &tl), 0);
	ck_assert_uint_eq(tl.nsegs, 3);
	check_seg(&tl.segs[1], SP_TL_BLOCKED, 100, 100, "do_wait");
	ck_assert_str_eq(tl.segs[1].waker_comm, "[irq]");
	check_seg(&tl.segs[2], SP_TL_RUNNING, 200, 100, NULL);
	tl_free(&tl);
}
END_TEST

START_TEST(bad_events)
{
	struct tl_builder *b = tl_builder_new(T0, 0);
	struct sp_tl_switch e;
	struct sp_timeline tl;
	struct tl_counts c;

	memset(&e, 0, sizeof(e));
	e.h.type = SP_TL_EV_SWITCH;
	ck_assert_int_eq(tl_builder_add(b, &e, sizeof(e) - 1), -EINVAL);
	ck_assert_int_eq(tl_builder_add(b, &e, 4), -EINVAL);
	e.h.type = 77;
	ck_assert_int_eq(tl_builder_add(b, &e, sizeof(e)), -EINVAL);
	e.h.type = 0;
	ck_assert_int_eq(tl_builder_add(b, &e, sizeof(e)), -EINVAL);
	tl_builder_counts(b, &c);
	ck_assert_uint_eq(c.events, 4);
	ck_assert_uint_eq(c.bad, 4);
	ck_assert_int_eq(finish(b, 10, 0, &tl), 0);
	ck_assert_uint_eq(tl.ntasks, 0);
	ck_assert_uint_eq(tl.nsegs, 0);
	ck_assert_uint_eq(tl.end_ns, 10);
	tl_free(&tl);
}
END_TEST

/* The segment limit: every task cut at the event that reached it, later events dropped. */
START_TEST(segment_limit)
{
	struct tl_builder *b = tl_builder_new(T0, 40);
	struct sp_timeline tl;
	struct tl_counts c;
	uint64_t ts = 10;

	for (int i = 0; i < 100; i++, ts += 10) {
		ck_assert_int_eq(sw(b, ts, 0, i ? 60 + (i + 1) % 2 : 0, 1, PIPE_READ, 0, 60 + i % 2), 0);
		ck_assert_int_eq(wake(b, ts + 5, 60 + (i + 1) % 2, 60 + i % 2, true, 0), 0);
	}
	tl_builder_counts(b, &c);
	ck_assert_uint_gt(c.dropped, 100);
	ck_assert_uint_gt(c.truncated_ns, 0);
	ck_assert_uint_lt(c.truncated_ns, 300);
	ck_assert_int_eq(finish(b, 5000, 0, &tl), 0);
	ck_assert_uint_le(tl.nsegs, 40);
	for (size_t i = 0; i < tl.ntasks; i++) {
		ck_assert_uint_eq(tl.tasks[i].end_ns, c.truncated_ns);
		ck_assert(!tl.tasks[i].exited);
	}
	ck_assert(tl.segs[tl.nsegs - 1].unfinished);
	ck_assert_uint_eq(tl.end_ns, c.truncated_ns);
	tl_free(&tl);
}
END_TEST

/* Any stream (events lost, repeated, out of order, tids reused) still tiles every task. */
START_TEST(random_streams_tile)
{
	for (unsigned int seed = 1; seed <= 200; seed++) {
		struct tl_builder *b = tl_builder_new(T0, seed % 3 ? 0 : 64);
		struct sp_timeline tl;
		uint64_t ts = 0;

		srand(seed);
		for (int i = 0; i < 300; i++) {
			int tid = 1 + rand() % 6, other = 1 + rand() % 6;
			uint64_t t;

			ts += (uint64_t)(rand() % 1000);
			t = ts;
			if (rand() % 8 == 0 && ts >= 300) /* reserved late, on another CPU */
				t -= (uint64_t)(rand() % 300);
			switch (rand() % 7) {
			case 0:
				sw(b, t, rand() % 2, tid, 0, 0, 0, other == tid ? 0 : other);
				break;
			case 1:
				sw(b, t, rand() % 2, tid, 1 + (rand() % 3 ? 0 : 0x80), PIPE_READ, 0, 0);
				break;
			case 2:
				sw(b, t, rand() % 2, 0, 0, 0, 0, tid);
				break;
			case 3:
				wake(b, t, tid, other, rand() % 2, rand() % 3);
				break;
			case 4:
				fork_ev(b, t, tid, other);
				break;
			case 5:
				task_ev(b, SP_TL_EV_EXEC, t, tid, rand() % 2 ? "x" : "y");
				break;
			default:
				task_ev(b, SP_TL_EV_EXIT, t, tid, NULL);
				break;
			}
		}
		ck_assert_int_eq(finish(b, ts + 1000, seed % 2 ? 1 : 0, &tl), 0);
		tl_free(&tl);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tl_build");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, sleep_wake_exit);
	tcase_add_test(tc, preempt_and_wakers);
	tcase_add_test(tc, wake_races_switch_out);
	tcase_add_test(tc, switch_in_missed);
	tcase_add_test(tc, fork_exec_job_end);
	tcase_add_test(tc, rename_splits);
	tcase_add_test(tc, serial_tail_analyzed);
	tcase_add_test(tc, tid_reuse_and_early_events);
	tcase_add_test(tc, bad_events);
	tcase_add_test(tc, wake_after_switch_in);
	tcase_add_test(tc, runq_idle_and_takers);
	tcase_add_test(tc, segment_limit);
	tcase_add_test(tc, random_streams_tile);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
