/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hand-built timelines for the timeline outputs' tests (test_format_trace_event.c,
 * test_format_timeline.c): a small job whose every segment, wake-up and critical-path step is
 * known, and a big one of generated segments.
 *
 * The small job (times in microseconds, 2 CPUs, 10 ms):
 *   make 100   running 0-500 (cpu 0), blocked in do_nanosleep (sleep, woken by [irq]) 500-700,
 *              runnable [woken] 700-750, running 750-1000 (cpu 0; forks cc1 and as),
 *              blocked in do_wait (child) 1000-9000, woken by as 300 from do_notify_parent,
 *              runnable [woken] 9000-9100, running 9100-10000 (cpu 1), exits
 *   cc1 200    runnable [new] 1000-1050, running 1050-3000 (cpu 1: wakes as), runnable
 *              [preempted] 3000-3200, running 3200-6000 (cpu 1), exits
 *   as 300     runnable [new] 1000-1100, running 1100-2000 (cpu 0), blocked in anon_pipe_read
 *              (pipe) 2000-3000 woken by cc1 200 from anon_pipe_write, runnable [woken]
 *              3000-3100, running 3100-9000 (cpu 0: wakes make), exits
 *   as-helper 301 (process 300)  blocked in futex_wait_queue (other) 1500-10000, unfinished
 * Wake-ups by traced tasks: 2 (cc1 -> as, as -> make).
 */
#ifndef SCHEDPROF_TEST_TIMELINE_FIXTURE_H
#define SCHEDPROF_TEST_TIMELINE_FIXTURE_H

#include <check.h>
#include <stdint.h>
#include <string.h>
#include "model/model.h"
#include "base/util.h"

#define US 1000ULL

static inline void tlf_task(struct sp_timeline *tl, int tid, int pid, int parent,
			    const char *comm, uint64_t start, uint64_t end, bool exited)
{
	struct sp_tl_task *t = SP_ARRAY_ADD(tl->tasks, tl->ntasks, tl->tasks_cap);

	ck_assert_ptr_nonnull(t);
	*t = (struct sp_tl_task){ tid, pid, parent, xstrdup(comm), start, end, exited };
}

static inline struct sp_tl_seg *tlf_seg(struct sp_timeline *tl, int tid, const char *comm,
					enum sp_tl_state state, uint64_t start, uint64_t end,
					int cpu, const char *caller)
{
	struct sp_tl_seg *s = SP_ARRAY_ADD(tl->segs, tl->nsegs, tl->segs_cap);

	ck_assert_ptr_nonnull(s);
	s->tid = tid;
	s->state = state;
	s->start_ns = start;
	s->ns = end - start;
	s->comm = xstrdup(comm);
	s->cpu = state == SP_TL_RUNNING ? cpu : -1;
	s->caller = xstrdup(caller);
	return s;
}

static inline void tlf_woken(struct sp_tl_seg *s, const char *wait, int waker_tid,
			     const char *waker_comm, const char *waker)
{
	s->wait = xstrdup(wait);
	s->waker_tid = waker_tid;
	s->waker_comm = xstrdup(waker_comm);
	s->waker = xstrdup(waker);
}

static inline void tlf_cp(struct sp_timeline *tl, const char *comm, int tid,
			  enum sp_tl_state state, const char *caller, uint64_t start, uint64_t end)
{
	struct sp_cp_seg *c = SP_ARRAY_ADD(tl->cp, tl->ncp, tl->cp_cap);

	ck_assert_ptr_nonnull(c);
	*c = (struct sp_cp_seg){ .comm = xstrdup(comm), .tid = tid, .state = state,
				 .caller = xstrdup(caller), .start_ns = start, .ns = end - start };
	tl->cp_total_ns += end - start;
}

static inline void tlf_rank(struct sp_timeline *tl, const char *comm, enum sp_tl_state state,
			    const char *caller, uint64_t ns)
{
	struct sp_cp_rank *r = SP_ARRAY_ADD(tl->cp_ranks, tl->ncp_ranks, tl->cp_ranks_cap);

	ck_assert_ptr_nonnull(r);
	*r = (struct sp_cp_rank){ .comm = xstrdup(comm), .state = state, .caller = xstrdup(caller),
				  .ns = ns };
}

static inline void tlf_par(struct sp_par_bucket **v, size_t *n, size_t *cap, int tasks,
			   uint64_t ns)
{
	struct sp_par_bucket *b = sp_array_add((void **)v, n, cap, sizeof(**v));

	ck_assert_ptr_nonnull(b);
	*b = (struct sp_par_bucket){ tasks, ns };
}

/* The run around a timeline: command make, 2 CPUs, 10 ms. */
static inline void tlf_run(struct sp_run *run)
{
	sp_run_init(run);
	run->schema = xstrdup(SP_SCHEMA);
	run->version = xstrdup("0.1.0");
	run->kernel = xstrdup("6.18.0");
	run->hostname = xstrdup("host");
	run->ncpus = 2;
	run->start_unix_ns = 1700000000000000000ULL;
	run->elapsed_ns = 10000 * US;
	run->target.mode = SP_TARGET_COMMAND;
	run->target.command = xstrdup("make");
	run->options = xstrdup("trace --timeline -- make");
	run->timeline.present = true;
	run->timeline.buffer_bytes = 1 << 20;
}

static inline void tlf_small(struct sp_run *run)
{
	struct sp_timeline *tl = &run->timeline;
	struct sp_tl_seg *s;

	tlf_run(run);
	tl->events = 42;
	tl->end_ns = 10000 * US;
	tl->end_tid = 100;
	tlf_task(tl, 100, 100, 0, "make", 0, 10000 * US, true);
	tlf_task(tl, 200, 200, 100, "cc1", 1000 * US, 6000 * US, true);
	tlf_task(tl, 300, 300, 100, "as", 1000 * US, 9000 * US, true);
	tlf_task(tl, 301, 300, 300, "as-helper", 1500 * US, 10000 * US, false);

	tlf_seg(tl, 100, "make", SP_TL_RUNNING, 0, 500 * US, 0, NULL);
	s = tlf_seg(tl, 100, "make", SP_TL_BLOCKED, 500 * US, 700 * US, 0, "do_nanosleep");
	tlf_woken(s, "sleep", 0, "[irq]", NULL);
	tlf_seg(tl, 100, "make", SP_TL_RUNNABLE, 700 * US, 750 * US, 0, "[woken]");
	tlf_seg(tl, 100, "make", SP_TL_RUNNING, 750 * US, 1000 * US, 0, NULL);
	s = tlf_seg(tl, 100, "make", SP_TL_BLOCKED, 1000 * US, 9000 * US, 0, "do_wait");
	tlf_woken(s, "child", 300, "as", "do_notify_parent");
	tlf_seg(tl, 100, "make", SP_TL_RUNNABLE, 9000 * US, 9100 * US, 0, "[woken]");
	tlf_seg(tl, 100, "make", SP_TL_RUNNING, 9100 * US, 10000 * US, 1, NULL);

	tlf_seg(tl, 200, "cc1", SP_TL_RUNNABLE, 1000 * US, 1050 * US, 0, "[new]");
	tlf_seg(tl, 200, "cc1", SP_TL_RUNNING, 1050 * US, 3000 * US, 1, NULL);
	tlf_seg(tl, 200, "cc1", SP_TL_RUNNABLE, 3000 * US, 3200 * US, 0, "[preempted]");
	tlf_seg(tl, 200, "cc1", SP_TL_RUNNING, 3200 * US, 6000 * US, 1, NULL);

	tlf_seg(tl, 300, "as", SP_TL_RUNNABLE, 1000 * US, 1100 * US, 0, "[new]");
	tlf_seg(tl, 300, "as", SP_TL_RUNNING, 1100 * US, 2000 * US, 0, NULL);
	s = tlf_seg(tl, 300, "as", SP_TL_BLOCKED, 2000 * US, 3000 * US, 0, "anon_pipe_read");
	tlf_woken(s, "pipe", 200, "cc1", "anon_pipe_write");
	tlf_seg(tl, 300, "as", SP_TL_RUNNABLE, 3000 * US, 3100 * US, 0, "[woken]");
	tlf_seg(tl, 300, "as", SP_TL_RUNNING, 3100 * US, 9000 * US, 0, NULL);

	s = tlf_seg(tl, 301, "as-helper", SP_TL_BLOCKED, 1500 * US, 10000 * US, 0,
		    "futex_wait_queue");
	s->wait = xstrdup("other");
	s->unfinished = true;

	tlf_cp(tl, "make", 100, SP_TL_RUNNING, NULL, 0, 1000 * US);
	tlf_cp(tl, "cc1", 200, SP_TL_RUNNABLE, "[new]", 1000 * US, 1050 * US);
	tlf_cp(tl, "cc1", 200, SP_TL_RUNNING, NULL, 1050 * US, 3000 * US);
	tlf_cp(tl, "as", 300, SP_TL_RUNNABLE, "[woken]", 3000 * US, 3100 * US);
	tlf_cp(tl, "as", 300, SP_TL_RUNNING, NULL, 3100 * US, 9000 * US);
	tlf_cp(tl, "make", 100, SP_TL_RUNNABLE, "[woken]", 9000 * US, 9100 * US);
	tlf_cp(tl, "make", 100, SP_TL_RUNNING, NULL, 9100 * US, 10000 * US);
	tlf_rank(tl, "as", SP_TL_RUNNING, NULL, 5900 * US);
	tlf_rank(tl, "cc1", SP_TL_RUNNING, NULL, 1950 * US);
	tlf_rank(tl, "make", SP_TL_RUNNING, NULL, 1900 * US);
	tlf_rank(tl, "make", SP_TL_RUNNABLE, "[woken]", 100 * US);
	tlf_rank(tl, "as", SP_TL_RUNNABLE, "[woken]", 100 * US);
	tlf_rank(tl, "cc1", SP_TL_RUNNABLE, "[new]", 50 * US);

	tlf_par(&tl->running, &tl->nrunning, &tl->running_cap, 0, 350 * US);
	tlf_par(&tl->running, &tl->nrunning, &tl->running_cap, 1, 6800 * US);
	tlf_par(&tl->running, &tl->nrunning, &tl->running_cap, 2, 2850 * US);
	tlf_par(&tl->runnable, &tl->nrunnable, &tl->runnable_cap, 0, 9450 * US);
	tlf_par(&tl->runnable, &tl->nrunnable, &tl->runnable_cap, 1, 450 * US);
	tlf_par(&tl->runnable, &tl->nrunnable, &tl->runnable_cap, 2, 100 * US);
	{
		struct sp_serial_phase *p = SP_ARRAY_ADD(tl->serial, tl->nserial, tl->serial_cap);

		ck_assert_ptr_nonnull(p);
		*p = (struct sp_serial_phase){ xstrdup("as"), 300, 6000 * US, 3000 * US };
		tl->serial_ns = 3000 * US;
	}
}

/*
 * ntasks tasks of nsegs segments each, cycling running (1 us), runnable (2 us), blocked
 * (3 us; woken by the previous task), all within 6 * nsegs / 3 us.
 */
static inline void tlf_big(struct sp_run *run, int ntasks, int nsegs)
{
	struct sp_timeline *tl = &run->timeline;
	uint64_t end = (uint64_t)(nsegs / 3 + 1) * 6 * US;

	tlf_run(run);
	run->elapsed_ns = end;
	tl->end_ns = end;
	tl->end_tid = 1000;
	for (int t = 0; t < ntasks; t++) {
		char comm[16];

		snprintf(comm, sizeof(comm), "worker/%d", t % 7);
		tlf_task(tl, 1000 + t, 1000, t ? 1000 : 0, comm, 0, end, false);
	}
	for (int t = 0; t < ntasks; t++) {
		uint64_t at = 0;

		for (int i = 0; i < nsegs; i++) {
			enum sp_tl_state st = (enum sp_tl_state)(i % 3);
			uint64_t ns = (uint64_t)(i % 3 + 1) * US;
			struct sp_tl_seg *s = tlf_seg(tl, 1000 + t, tl->tasks[t].comm, st, at,
						      at + ns, t % 2, st == SP_TL_RUNNABLE
						      ? "[woken]" : st == SP_TL_BLOCKED ? "do_wait" : NULL);

			if (st == SP_TL_BLOCKED && t)
				tlf_woken(s, "child", 1000 + t - 1, "worker", NULL);
			at += ns;
		}
	}
	for (int i = 0; i < nsegs; i++)
		tlf_cp(tl, "worker/0", 1000, (enum sp_tl_state)(i % 3), NULL,
		       (uint64_t)i * 2 * US, (uint64_t)i * 2 * US + US);
}

/* The small job with cc1's [preempted] wait throttled and 300 us of its first run stolen. */
static inline void tlf_throttle_and_steal(struct sp_run *run)
{
	for (size_t i = 0; i < run->timeline.nsegs; i++) {
		struct sp_tl_seg *s = &run->timeline.segs[i];

		if (s->tid == 200 && s->start_ns == 1050 * US)
			s->stolen_ns = 300 * US;
		if (s->tid == 200 && s->start_ns == 3000 * US)
			s->throttled = true;
	}
}

#endif
