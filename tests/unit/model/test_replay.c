// SPDX-License-Identifier: BSD-2-Clause
/*
 * The what-if model (src/model/depgraph.c, replay.c, whatif.c) on timelines built by hand,
 * with exact answers: a chain, a fork-join, a pipeline, fixed delays, slicing, a cycle of
 * tied wake-ups; without=; the options; and the fixture run with a timeline.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../unit.h"
#include "../format/timeline_fixture.h"
#include "model/cp_stacks.h"
#include "model/depgraph.h"
#include "model/model.h"
#include "model/replay.h"
#include "model/whatif.h"

#define MS 1000000ULL

/* Frees a timeline built here (its strings malloc'd, as a run's). */
static void tl_free(struct sp_timeline *tl)
{
	struct sp_run run;

	sp_run_init(&run);
	run.timeline = *tl;
	sp_run_free(&run);
	memset(tl, 0, sizeof(*tl));
}

static void task(struct sp_timeline *tl, int tid, int parent, uint64_t start, uint64_t end)
{
	tlf_task(tl, tid, tid, parent, "t", start, end, true);
	tl->present = true;
}

/* A segment on CPU tid % 2 when running; a blocked one of wait, woken by waker (0: none). */
static void seg(struct sp_timeline *tl, int tid, enum sp_tl_state state, uint64_t start,
		uint64_t end, const char *caller, const char *wait, int waker)
{
	tlf_woken(tlf_seg(tl, tid, NULL, state, start, end, tid % 2, caller), wait, waker, NULL,
		  NULL);
}

#define R(tl, tid, a, b) seg(tl, tid, SP_TL_RUNNING, (a) * MS, (b) * MS, NULL, NULL, 0)
#define Q(tl, tid, a, b) seg(tl, tid, SP_TL_RUNNABLE, (a) * MS, (b) * MS, "[woken]", NULL, 0)
#define B(tl, tid, a, b, caller, wait, waker) \
	seg(tl, tid, SP_TL_BLOCKED, (a) * MS, (b) * MS, caller, wait, waker)

/* The wall time of tl's graph replayed on cpus CPUs (0: unlimited) with slices of slice. */
static uint64_t wall(const struct sp_timeline *tl, int cpus, uint64_t slice)
{
	struct sp_depgraph g;
	struct sp_replay_result r;

	ck_assert_int_eq(sp_depgraph_build(tl, NULL, NULL, &g), 0);
	ck_assert_int_eq(sp_replay(&g, cpus, slice, &r), 0);
	ck_assert_uint_eq(r.forced, 0);
	ck_assert_uint_eq(r.work_ns, g.work_ns);
	sp_depgraph_free(&g);
	return r.wall_ns;
}

/* A wakes B at its end, B wakes C at its end: 30 ms whatever the CPUs. */
static void chain(struct sp_timeline *tl, const char *b_caller)
{
	memset(tl, 0, sizeof(*tl));
	task(tl, 1, 0, 0, 10 * MS);
	R(tl, 1, 0, 10);
	task(tl, 2, 0, 0, 21 * MS);
	B(tl, 2, 0, 10, b_caller, NULL, 1);
	Q(tl, 2, 10, 11);
	R(tl, 2, 11, 21);
	task(tl, 3, 0, 0, 31 * MS);
	B(tl, 3, 0, 21, "pipe_read", "pipe", 2);
	R(tl, 3, 21, 31);
}

START_TEST(test_chain)
{
	struct sp_timeline tl;
	struct sp_depgraph g;

	chain(&tl, "pipe_read");
	ck_assert_int_eq(sp_depgraph_build(&tl, NULL, NULL, &g), 0);
	ck_assert_uint_eq(g.ntasks, 3);
	ck_assert_uint_eq(g.nbursts, 3);
	ck_assert_uint_eq(g.nedges, 2);
	ck_assert_uint_eq(g.counts.wakes, 2);
	ck_assert_uint_eq(g.counts.fixed, 0);
	ck_assert_uint_eq(g.work_ns, 30 * MS);
	ck_assert_uint_eq(g.end_ns, 31 * MS);
	/* A's wake-up of B is at the end of A's 10 ms */
	ck_assert_uint_eq(g.edges[0].src, 0);
	ck_assert_uint_eq(g.edges[0].dst, 1);
	ck_assert_uint_eq(g.edges[0].offset_ns, 10 * MS);
	ck_assert_uint_eq(g.bursts[1].edge, 0);
	ck_assert_uint_eq(g.bursts[0].ntrig, 1);
	sp_depgraph_free(&g);
	/* the runnable millisecond of B is the CPUs' to decide: gone with free CPUs */
	ck_assert_uint_eq(wall(&tl, 1, 0), 30 * MS);
	ck_assert_uint_eq(wall(&tl, 2, 0), 30 * MS);
	ck_assert_uint_eq(wall(&tl, 0, 0), 30 * MS);
	ck_assert_uint_eq(wall(&tl, 1, 3 * MS), 30 * MS);
	tl_free(&tl);
}
END_TEST

/*
 * make runs 1 ms, forks four cc1 of 100 ms each at 1 ms and waits for the last; then runs
 * 1 ms: 1 + 400 / P + 1 ms up to 4 CPUs.
 */
static void fork_join(struct sp_timeline *tl)
{
	memset(tl, 0, sizeof(*tl));
	task(tl, 1, 0, 0, 202 * MS);
	R(tl, 1, 0, 1);
	B(tl, 1, 1, 201, "do_wait", NULL, 5);
	R(tl, 1, 201, 202);
	for (int c = 2; c <= 5; c++) {
		uint64_t a = c <= 3 ? 1 : 101;

		task(tl, c, 1, 1 * MS, (a + 100) * MS);
		if (a > 1)
			seg(tl, c, SP_TL_RUNNABLE, 1 * MS, a * MS, "[new]", NULL, 0);
		R(tl, c, a, a + 100);
	}
}

START_TEST(test_fork_join)
{
	struct sp_timeline tl;
	struct sp_depgraph g;

	fork_join(&tl);
	ck_assert_int_eq(sp_depgraph_build(&tl, NULL, NULL, &g), 0);
	ck_assert_uint_eq(g.nbursts, 6);
	ck_assert_uint_eq(g.counts.forks, 4);
	ck_assert_uint_eq(g.counts.wakes, 1);
	for (int c = 1; c <= 4; c++)
		ck_assert(g.tasks[c].forked);
	ck_assert(!g.tasks[0].forked);
	ck_assert_uint_eq(g.bursts[0].ntrig, 4); /* make's first burst forks all four */
	sp_depgraph_free(&g);
	ck_assert_uint_eq(wall(&tl, 1, 0), 402 * MS);
	ck_assert_uint_eq(wall(&tl, 2, 0), 202 * MS);
	ck_assert_uint_eq(wall(&tl, 4, 0), 102 * MS);
	ck_assert_uint_eq(wall(&tl, 16, 0), 102 * MS);
	ck_assert_uint_eq(wall(&tl, 0, 0), 102 * MS);
	tl_free(&tl);
}
END_TEST

/*
 * A producer computes 10 ms per item and writes it (waking the consumer); the consumer
 * takes 5 ms per item: 35 ms on 2 CPUs, 45 ms on 1 (it runs after the producer's 30).
 */
static void pipeline(struct sp_timeline *tl)
{
	memset(tl, 0, sizeof(*tl));
	task(tl, 1, 0, 0, 30 * MS);
	R(tl, 1, 0, 30);
	task(tl, 2, 0, 0, 35 * MS);
	B(tl, 2, 0, 10, "pipe_read", "pipe", 1);
	R(tl, 2, 10, 15);
	B(tl, 2, 15, 20, "pipe_read", "pipe", 1);
	R(tl, 2, 20, 25);
	B(tl, 2, 25, 30, "pipe_read", "pipe", 1);
	R(tl, 2, 30, 35);
}

START_TEST(test_pipeline)
{
	struct sp_timeline tl;
	struct sp_depgraph g;

	pipeline(&tl);
	ck_assert_int_eq(sp_depgraph_build(&tl, NULL, NULL, &g), 0);
	ck_assert_uint_eq(g.nbursts, 4);
	ck_assert_uint_eq(g.nedges, 3);
	/* the producer's one burst fires at 10, 20 and 30 ms of its work */
	ck_assert_uint_eq(g.bursts[0].ntrig, 3);
	ck_assert_uint_eq(g.edges[0].offset_ns, 10 * MS);
	ck_assert_uint_eq(g.edges[1].offset_ns, 20 * MS);
	ck_assert_uint_eq(g.edges[2].offset_ns, 30 * MS);
	sp_depgraph_free(&g);
	ck_assert_uint_eq(wall(&tl, 2, 0), 35 * MS);
	ck_assert_uint_eq(wall(&tl, 0, 0), 35 * MS);
	ck_assert_uint_eq(wall(&tl, 1, 0), 45 * MS);
	tl_free(&tl);
}
END_TEST

/*
 * make on one CPU: it forks a child that runs 10 ms while make waits for the CPU, and forks
 * the next only after that child's exit, which no wake-up shows (make never slept). The
 * exit cuts make's burst: 23 ms on 2 CPUs too, not 12.
 */
START_TEST(test_exit_edge)
{
	struct sp_timeline tl = { 0 };
	struct sp_depgraph g;

	task(&tl, 1, 0, 0, 23 * MS);
	R(&tl, 1, 0, 1);
	seg(&tl, 1, SP_TL_RUNNABLE, 1 * MS, 11 * MS, "[preempted]", NULL, 0);
	R(&tl, 1, 11, 12);
	seg(&tl, 1, SP_TL_RUNNABLE, 12 * MS, 22 * MS, "[preempted]", NULL, 0);
	R(&tl, 1, 22, 23);
	task(&tl, 2, 1, 1 * MS, 11 * MS);
	R(&tl, 2, 1, 11);
	task(&tl, 3, 1, 12 * MS, 22 * MS);
	R(&tl, 3, 12, 22);
	ck_assert_int_eq(sp_depgraph_build(&tl, NULL, NULL, &g), 0);
	ck_assert_uint_eq(g.counts.exits, 2);
	ck_assert_uint_eq(g.counts.forks, 2);
	ck_assert_uint_eq(g.nbursts, 5);
	sp_depgraph_free(&g);
	ck_assert_uint_eq(wall(&tl, 1, 0), 23 * MS);
	ck_assert_uint_eq(wall(&tl, 2, 0), 23 * MS);
	ck_assert_uint_eq(wall(&tl, 0, 3 * MS), 23 * MS);
	tl_free(&tl);
}
END_TEST

/*
 * A child forked at 10 ms sleeps 5 ms on a timer before it runs: it still waits for its fork.
 * Replayed on 2 CPUs behind two tasks of 20 ms, the parent runs from 20 to 35 ms and forks at
 * 30, so the child runs from 35 to 45 ms (not from 20, 10 + 5 ms after its measured start).
 */
START_TEST(test_fork_then_sleep)
{
	struct sp_timeline tl = { 0 };
	struct sp_depgraph g;

	for (int t = 3; t <= 4; t++) {
		task(&tl, t, 0, 0, 20 * MS);
		R(&tl, t, 0, 20);
	}
	task(&tl, 1, 0, 0, 20 * MS);
	R(&tl, 1, 0, 10);
	seg(&tl, 1, SP_TL_RUNNABLE, 10 * MS, 15 * MS, "[preempted]", NULL, 0);
	R(&tl, 1, 15, 20);
	task(&tl, 2, 1, 10 * MS, 25 * MS);
	B(&tl, 2, 10, 15, "do_nanosleep", NULL, 0);
	R(&tl, 2, 15, 25);
	ck_assert_int_eq(sp_depgraph_build(&tl, NULL, NULL, &g), 0);
	ck_assert_uint_eq(g.counts.forks, 1);
	ck_assert(g.tasks[3].forked);
	ck_assert_uint_eq(g.bursts[g.tasks[3].first].delay_ns, 5 * MS);
	sp_depgraph_free(&g);
	ck_assert_uint_eq(wall(&tl, 2, 0), 45 * MS);
	ck_assert_uint_eq(wall(&tl, 0, 0), 25 * MS);
	tl_free(&tl);
}
END_TEST

/* Two tasks run 10 ms, sleep 50 ms on a timer, run 10 ms: 70 ms on 2 CPUs, 80 on 1. */
START_TEST(test_fixed_delay)
{
	struct sp_timeline tl = { 0 };
	struct sp_depgraph g;

	for (int t = 1; t <= 2; t++) {
		task(&tl, t, 0, 0, 70 * MS);
		R(&tl, t, 0, 10);
		B(&tl, t, 10, 60, "do_nanosleep", NULL, 0);
		R(&tl, t, 60, 70);
	}
	ck_assert_int_eq(sp_depgraph_build(&tl, NULL, NULL, &g), 0);
	ck_assert_uint_eq(g.counts.fixed, 2);
	ck_assert_uint_eq(g.counts.fixed_ns, 100 * MS);
	ck_assert_uint_eq(g.bursts[1].delay_ns, 50 * MS);
	sp_depgraph_free(&g);
	ck_assert_uint_eq(wall(&tl, 2, 0), 70 * MS);
	ck_assert_uint_eq(wall(&tl, 1, 0), 80 * MS);
	tl_free(&tl);
}
END_TEST

/*
 * Three tasks of 10 ms from 0 on 2 CPUs: 20 ms when each keeps its CPU, 16 ms in slices of
 * 3 ms (A B | C A | B C | A B | C A(1) B(1) | C C).
 */
START_TEST(test_slices)
{
	struct sp_timeline tl = { 0 };

	for (int t = 1; t <= 3; t++) {
		task(&tl, t, 0, 0, 10 * MS);
		R(&tl, t, 0, 10);
	}
	ck_assert_uint_eq(wall(&tl, 2, 0), 20 * MS);
	ck_assert_uint_eq(wall(&tl, 2, 3 * MS), 16 * MS);
	ck_assert_uint_eq(wall(&tl, 1, 3 * MS), 30 * MS);
	ck_assert_uint_eq(wall(&tl, 3, 3 * MS), 10 * MS);
	tl_free(&tl);
}
END_TEST

/* Two tasks each woken by the other at the same instant: a cycle, released, and it ends. */
START_TEST(test_cycle)
{
	struct sp_timeline tl = { 0 };
	struct sp_depgraph g;
	struct sp_replay_result r;

	task(&tl, 1, 0, 0, 20 * MS);
	B(&tl, 1, 0, 10, "futex_wait_queue", NULL, 2);
	R(&tl, 1, 10, 20);
	task(&tl, 2, 0, 0, 20 * MS);
	B(&tl, 2, 0, 10, "futex_wait_queue", NULL, 1);
	R(&tl, 2, 10, 20);
	ck_assert_int_eq(sp_depgraph_build(&tl, NULL, NULL, &g), 0);
	ck_assert_uint_eq(g.nedges, 2);
	ck_assert_int_eq(sp_replay(&g, 2, 0, &r), 0);
	ck_assert_uint_eq(r.forced, 1);
	ck_assert_uint_eq(r.wall_ns, 10 * MS);
	ck_assert_int_eq(sp_replay(&g, -1, 0, &r), -EINVAL);
	sp_depgraph_free(&g);
	tl_free(&tl);
}
END_TEST

/*
 * 40,000 pairs of tasks, each pair woken by each other at the same instant: every pair is a
 * cycle that the replay must release, and it does so without a scan of every task per
 * release (which took 9.5 s of CPU here).
 */
START_TEST(test_many_cycles)
{
	struct sp_timeline tl = { 0 };
	struct sp_depgraph g;
	struct sp_replay_result r;
	struct timespec a, b;
	double secs;

	for (int i = 0; i < 40000; i++) {
		int t = 2 * i + 1;
		uint64_t at = (uint64_t)i * MS;

		task(&tl, t, 0, at, at + 20 * MS);
		B(&tl, t, i, i + 10, "futex_wait_queue", NULL, t + 1);
		R(&tl, t, i + 10, i + 20);
		task(&tl, t + 1, 0, at, at + 20 * MS);
		B(&tl, t + 1, i, i + 10, "futex_wait_queue", NULL, t);
		R(&tl, t + 1, i + 10, i + 20);
	}
	ck_assert_int_eq(sp_depgraph_build(&tl, NULL, NULL, &g), 0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	ck_assert_int_eq(sp_replay(&g, 2, 0, &r), 0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	ck_assert_uint_eq(r.forced, 40000);
	ck_assert_msg(secs < 0.5 * SLOWDOWN, "the replay of 40,000 cycles took %.2f s of CPU",
		      secs);
	sp_depgraph_free(&g);
	tl_free(&tl);
}
END_TEST

/* Bad input: a segment of no task; a task's segments apart. */
START_TEST(test_bad_input)
{
	struct sp_timeline tl = { 0 };
	struct sp_depgraph g;

	task(&tl, 1, 0, 0, 10 * MS);
	R(&tl, 7, 0, 10);
	ck_assert_int_eq(sp_depgraph_build(&tl, NULL, NULL, &g), -EINVAL);
	ck_assert_uint_eq(g.nbursts, 0);
	tl_free(&tl);
	task(&tl, 1, 0, 0, 30 * MS);
	task(&tl, 2, 0, 0, 30 * MS);
	R(&tl, 1, 0, 10);
	R(&tl, 2, 0, 10);
	R(&tl, 1, 10, 20);
	ck_assert_int_eq(sp_depgraph_build(&tl, NULL, NULL, &g), -EINVAL);
	tl_free(&tl);
	/* two bursts of 2^62 ns each on 1 CPU in 3 ms slices: longer slices, not 10^12 events */
	task(&tl, 1, 0, 0, 1ULL << 62);
	seg(&tl, 1, SP_TL_RUNNING, 0, 1ULL << 62, NULL, NULL, 0);
	task(&tl, 2, 0, 0, 1ULL << 62);
	seg(&tl, 2, SP_TL_RUNNING, 0, 1ULL << 62, NULL, NULL, 0);
	ck_assert_uint_eq(wall(&tl, 1, 3 * MS), 1ULL << 63);
	tl_free(&tl);
	/* empty: nothing to replay, a wall of 0 */
	ck_assert_int_eq(sp_depgraph_build(&tl, NULL, NULL, &g), 0);
	ck_assert_uint_eq(wall(&tl, 4, 0), 0);
	sp_depgraph_free(&g);
}
END_TEST

static const struct sp_whatif_pred *pred(const struct sp_whatif_case *c, size_t n, int cpus)
{
	for (size_t i = 0; i < n; i++)
		if (c->preds[i].cpus == cpus)
			return &c->preds[i];
	ck_abort_msg("no prediction for %d CPUs", cpus);
	return NULL;
}

/* without=CALLER on the chain: B need not wait for A, and saves 10 ms on 2 CPUs. */
START_TEST(test_without)
{
	struct sp_run run;
	struct sp_whatif_opts o = { 0 };
	struct sp_whatif w;
	char why[256];

	sp_run_init(&run);
	chain(&run.timeline, "futex_wait_queue");
	ck_assert_int_eq(sp_whatif_parse(&o, "cpus=2,1", why, sizeof(why)), 0);
	ck_assert_int_eq(sp_whatif_parse(&o, "without=futex_wait_queue", why, sizeof(why)), 0);
	ck_assert_int_eq(sp_whatif_parse(&o, "without=futex_*", why, sizeof(why)), 0);
	ck_assert_int_eq(sp_whatif_compute(&run, &o, &w, why, sizeof(why)), 0);
	ck_assert_uint_eq(w.npreds, 2);
	ck_assert_uint_eq(w.ncases, 3);
	ck_assert_int_eq(w.traced_cpus, 2);
	ck_assert_uint_eq(w.measured_ns, 31 * MS);
	ck_assert_uint_eq(w.cases[0].cp_ns, 30 * MS);
	ck_assert_uint_eq(pred(&w.cases[0], 2, 1)->wall_ns, 30 * MS);
	ck_assert_uint_eq(pred(&w.cases[0], 2, 2)->bound_ns, 30 * MS);
	for (size_t k = 1; k < 3; k++) {
		ck_assert_uint_eq(w.cases[k].sleeps, 1);
		ck_assert_uint_eq(w.cases[k].sleep_ns, 10 * MS);
		ck_assert_uint_eq(pred(&w.cases[k], 2, 2)->wall_ns, 20 * MS);
		ck_assert_uint_eq(pred(&w.cases[k], 2, 2)->saving_ns, 10 * MS);
		ck_assert_uint_eq(pred(&w.cases[k], 2, 1)->wall_ns, 30 * MS);
		ck_assert_uint_eq(pred(&w.cases[k], 2, 1)->saving_ns, 0);
	}
	sp_whatif_free(&w);
	sp_whatif_opts_free(&o);
	/* a class: pipe is C's wait */
	ck_assert_int_eq(sp_whatif_parse(&o, "without=pipe", why, sizeof(why)), 0);
	ck_assert_int_eq(sp_whatif_compute(&run, &o, &w, why, sizeof(why)), 0);
	ck_assert_uint_eq(w.npreds, 5); /* the default CPU counts */
	ck_assert_uint_eq(w.cases[1].sleeps, 1);
	ck_assert_uint_eq(pred(&w.cases[1], 5, 16)->wall_ns, 20 * MS);
	sp_whatif_free(&w);
	sp_whatif_opts_free(&o);
	/* nothing matches: refused, with the reason */
	ck_assert_int_eq(sp_whatif_parse(&o, "without=io", why, sizeof(why)), 0);
	ck_assert_int_eq(sp_whatif_compute(&run, &o, &w, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "no sleep"));
	sp_whatif_opts_free(&o);
	ck_assert_int_eq(sp_whatif_parse(&o, "without=mutex:nosuch", why, sizeof(why)), 0);
	ck_assert_int_eq(sp_whatif_compute(&run, &o, &w, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "locks view"));
	sp_whatif_opts_free(&o);
	sp_run_free(&run);
}
END_TEST

/* without=KIND:LOCK: the sleeps of that kind from the callers the locks view saw on the lock. */
START_TEST(test_without_lock)
{
	struct sp_run run;
	struct sp_whatif_opts o = { 0 };
	struct sp_whatif w;
	struct sp_lock_row *row;
	char why[256];

	sp_run_init(&run);
	chain(&run.timeline, "do_unlinkat");
	free(run.timeline.segs[1].wait);
	run.timeline.segs[1].wait = strdup("rwsem-write");
	run.locks.present = run.locks.available = true;
	row = sp_lock_add_row(&run.locks);
	ck_assert_ptr_nonnull(row);
	row->caller = strdup("do_unlinkat");
	row->kind = strdup("rwsem-write");
	row->lock = strdup("inode.i_rwsem");
	ck_assert_int_eq(sp_whatif_parse(&o, "cpus=2", why, sizeof(why)), 0);
	ck_assert_int_eq(sp_whatif_parse(&o, "without=rwsem-write:inode.i_rwsem", why,
					 sizeof(why)), 0);
	ck_assert_int_eq(sp_whatif_compute(&run, &o, &w, why, sizeof(why)), 0);
	ck_assert_uint_eq(w.cases[1].sleeps, 1);
	ck_assert_uint_eq(w.cases[1].preds[0].wall_ns, 20 * MS);
	sp_whatif_free(&w);
	sp_whatif_opts_free(&o);
	/* another lock of that kind: none of these sleeps */
	ck_assert_int_eq(sp_whatif_parse(&o, "without=rwsem-write:other.lock", why, sizeof(why)),
			 0);
	ck_assert_int_eq(sp_whatif_compute(&run, &o, &w, why, sizeof(why)), -EINVAL);
	sp_whatif_opts_free(&o);
	sp_run_free(&run);
}
END_TEST

/* Waiting for a child is refused, by class, caller or a pattern that matches do_wait. */
START_TEST(test_refuse_child)
{
	static const char *const specs[] = { "without=child", "without=do_wait",
					     "without=do_*", "without=kernel_wait4" };
	struct sp_run run;
	char why[256];

	sp_run_init(&run);
	fork_join(&run.timeline);
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct sp_whatif_opts o = { 0 };
		struct sp_whatif w;

		ck_assert_int_eq(sp_whatif_parse(&o, specs[i], why, sizeof(why)), 0);
		ck_assert_int_eq(sp_whatif_compute(&run, &o, &w, why, sizeof(why)), -EINVAL);
		ck_assert_msg(strstr(why, "child"), "%s: %s", specs[i], why);
		sp_whatif_opts_free(&o);
	}
	sp_run_free(&run);
}
END_TEST

START_TEST(test_options)
{
	static const char *const bad[] = { "cpus=", "cpus=0", "cpus=1,", "cpus=a", "cpus=2x",
					   "cpus=4097", "cpus=-1", "cpus=+2", "without=",
					   "speed=2", "cpus" };
	struct sp_whatif_opts o = { 0 };
	struct sp_run run;
	struct sp_whatif w;
	char why[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		ck_assert_msg(sp_whatif_parse(&o, bad[i], why, sizeof(why)) == -EINVAL, "%s",
			      bad[i]);
		ck_assert_msg(why[0], "%s: no reason", bad[i]);
	}
	sp_whatif_opts_free(&o);
	/* at most SP_WHATIF_MAX_COUNTS CPU counts, SP_WHATIF_MAX_WITHOUT cases */
	{
		char many[1024];
		int at = snprintf(many, sizeof(many), "cpus=1");

		for (int i = 2; i <= SP_WHATIF_MAX_COUNTS + 1; i++)
			at += snprintf(many + at, sizeof(many) - (size_t)at, ",%d", i);
		ck_assert_int_eq(sp_whatif_parse(&o, many, why, sizeof(why)), -EINVAL);
		sp_whatif_opts_free(&o);
		for (int i = 0; i < SP_WHATIF_MAX_WITHOUT; i++)
			ck_assert_int_eq(sp_whatif_parse(&o, "without=pipe", why, sizeof(why)), 0);
		ck_assert_int_eq(sp_whatif_parse(&o, "without=pipe", why, sizeof(why)), -EINVAL);
		sp_whatif_opts_free(&o);
	}
	ck_assert_int_eq(sp_whatif_parse(&o, "cpus=8,1,8,2", why, sizeof(why)), 0);
	ck_assert_uint_eq(o.ncpus, 3);
	ck_assert_int_eq(o.cpus[0], 1);
	ck_assert_int_eq(o.cpus[2], 8);
	/* a run without a timeline */
	sp_run_init(&run);
	ck_assert_int_eq(sp_whatif_compute(&run, &o, &w, why, sizeof(why)), -ENODATA);
	ck_assert_ptr_nonnull(strstr(why, "--timeline"));
	sp_run_free(&run);
	sp_whatif_opts_free(&o);
}
END_TEST

/* The fixture: what holds for any graph, and its counts. */
START_TEST(test_fixture)
{
	struct sp_run run;
	struct sp_whatif_opts o = { 0 };
	struct sp_whatif w;
	char why[256];

	unit_load(FIX("run_tl.json"), &run);
	ck_assert_int_eq(sp_whatif_parse(&o, "cpus=1,2,3,4,8,64", why, sizeof(why)), 0);
	ck_assert_int_eq(sp_whatif_compute(&run, &o, &w, why, sizeof(why)), 0);
	ck_assert_uint_eq(w.tasks, run.timeline.ntasks);
	ck_assert_uint_gt(w.bursts, 0);
	ck_assert_uint_eq(w.counts.forks, 3);
	for (size_t i = 0; i < w.npreds; i++) {
		const struct sp_whatif_pred *p = &w.cases[0].preds[i];

		/* no replay beats work / P or the critical path; more CPUs never hurt here */
		ck_assert_uint_ge(p->wall_ns, p->bound_ns);
		ck_assert_uint_ge(p->wall_ns, w.cases[0].cp_ns);
		if (i)
			ck_assert_uint_le(p->wall_ns, w.cases[0].preds[i - 1].wall_ns);
		ck_assert(p->cp_share > 0 && p->cp_share <= 1.0);
	}
	ck_assert_uint_eq(w.cases[0].preds[w.npreds - 1].wall_ns, w.cases[0].cp_ns);
	sp_whatif_free(&w);
	sp_whatif_opts_free(&o);
	sp_run_free(&run);
}
END_TEST

/*
 * The fixture's critical path as folded stacks: one line per (comm, state, caller), the
 * lines adding up to the path's total; no timeline: -ENODATA.
 */
START_TEST(test_cp_stacks)
{
	struct sp_run run, cp;
	uint64_t sum = 0;
	size_t lines = 0;
	char *out, *line, *save;

	unit_load(FIX("run_tl.json"), &run);
	ck_assert_uint_gt(run.timeline.ncp_ranks, 1);
	ck_assert_int_eq(sp_cp_stacks_run(&run, &cp), 0);
	ck_assert(cp.sched.present);
	ck_assert_uint_eq(cp.sched.total, run.timeline.ncp_ranks);
	out = unit_render_fmt(&cp, SP_FMT_FOLDED, SP_VIEW_SCHED, SP_VALUE_TIME, NULL);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *sp = strrchr(line, ' ');

		ck_assert_ptr_nonnull(sp);
		sum += strtoull(sp + 1, NULL, 10);
		lines++;
	}
	ck_assert_uint_eq(lines, run.timeline.ncp_ranks);
	ck_assert_uint_eq(sum, run.timeline.cp_total_ns);
	free(out);
	out = unit_render_fmt(&cp, SP_FMT_FOLDED, SP_VIEW_SCHED, SP_VALUE_TIME, NULL);
	ck_assert_ptr_nonnull(strstr(out, "ld;[blocked];io_schedule 100000000\n"));
	free(out);
	sp_run_free(&cp);
	sp_run_free(&run);
	sp_run_init(&run);
	ck_assert_int_eq(sp_cp_stacks_run(&run, &cp), -ENODATA);
	sp_run_free(&run);
}
END_TEST

static Suite *replay_suite(void)
{
	Suite *s = suite_create("replay");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_chain);
	tcase_add_test(tc, test_fork_join);
	tcase_add_test(tc, test_pipeline);
	tcase_add_test(tc, test_exit_edge);
	tcase_add_test(tc, test_fixed_delay);
	tcase_add_test(tc, test_fork_then_sleep);
	tcase_add_test(tc, test_slices);
	tcase_add_test(tc, test_cycle);
	tcase_add_test(tc, test_bad_input);
	tcase_add_test(tc, test_without);
	tcase_add_test(tc, test_without_lock);
	tcase_add_test(tc, test_refuse_child);
	tcase_add_test(tc, test_options);
	tcase_add_test(tc, test_fixture);
	tcase_add_test(tc, test_cp_stacks);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_many_cycles);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(replay_suite());
}
