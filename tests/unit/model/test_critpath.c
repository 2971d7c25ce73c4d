// SPDX-License-Identifier: BSD-2-Clause
/*
 * The critical path, parallelism and serial phases (src/model/critpath.c) on timelines built
 * by hand: a serial tail, a pipe chain, make forking cc1 and waiting for it, time
 * waiting for a CPU, a sleep without waker, an empty timeline, bad input and cycles; a
 * random timeline checked against a brute-force count; 10^6 segments for speed.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../unit.h"
#include "model/critpath.h"
#include "model/model.h"

#define US 1000ULL
#define MS 1000000ULL

static void tl_free(struct sp_timeline *tl)
{
	for (size_t i = 0; i < tl->ntasks; i++)
		free(tl->tasks[i].comm);
	free(tl->tasks);
	for (size_t i = 0; i < tl->nsegs; i++) {
		free(tl->segs[i].comm);
		free(tl->segs[i].caller);
		free(tl->segs[i].wait);
		free(tl->segs[i].waker_comm);
		free(tl->segs[i].waker);
	}
	free(tl->segs);
	for (size_t i = 0; i < tl->ncp; i++) {
		free(tl->cp[i].comm);
		free(tl->cp[i].caller);
	}
	free(tl->cp);
	for (size_t i = 0; i < tl->ncp_ranks; i++) {
		free(tl->cp_ranks[i].comm);
		free(tl->cp_ranks[i].caller);
	}
	free(tl->cp_ranks);
	free(tl->running);
	free(tl->runnable);
	for (size_t i = 0; i < tl->nserial; i++)
		free(tl->serial[i].comm);
	free(tl->serial);
	memset(tl, 0, sizeof(*tl));
}

static char *dup_or_null(const char *s)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	ck_assert_ptr_nonnull(d);
	return d;
}

static void task(struct sp_timeline *tl, int tid, int parent, const char *comm, uint64_t start,
		 uint64_t end)
{
	struct sp_tl_task *t = SP_ARRAY_ADD(tl->tasks, tl->ntasks, tl->tasks_cap);

	ck_assert_ptr_nonnull(t);
	t->tid = tid;
	t->pid = tid;
	t->parent_tid = parent;
	t->comm = dup_or_null(comm);
	t->start_ns = start;
	t->end_ns = end;
	t->exited = true;
}

/* A segment [start, end) of tid; blocked ones are woken by waker (0: none). */
static struct sp_tl_seg *seg(struct sp_timeline *tl, int tid, const char *comm,
			     enum sp_tl_state state, uint64_t start, uint64_t end,
			     const char *caller, int waker)
{
	struct sp_tl_seg *s = SP_ARRAY_ADD(tl->segs, tl->nsegs, tl->segs_cap);

	ck_assert_ptr_nonnull(s);
	s->tid = tid;
	s->state = state;
	s->start_ns = start;
	s->ns = end - start;
	s->comm = dup_or_null(comm);
	s->cpu = state == SP_TL_RUNNING ? 0 : -1;
	s->caller = dup_or_null(caller);
	s->waker_tid = waker;
	return s;
}

#define R(tl, tid, comm, a, b) seg(tl, tid, comm, SP_TL_RUNNING, a, b, NULL, 0)
#define Q(tl, tid, comm, a, b, why) seg(tl, tid, comm, SP_TL_RUNNABLE, a, b, why, 0)
#define B(tl, tid, comm, a, b, caller, waker) seg(tl, tid, comm, SP_TL_BLOCKED, a, b, caller, waker)

static uint64_t bucket(const struct sp_par_bucket *v, size_t n, int count)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].n == count)
			return v[i].ns;
	return 0;
}

/* What holds for every result: the path tiles [end - total, end) in time order, etc. */
static void check_invariants(const struct sp_timeline *tl)
{
	uint64_t sum = 0, rsum = 0, ssum = 0, run = 0, rq = 0;

	for (size_t i = 0; i < tl->ncp; i++) {
		ck_assert_uint_gt(tl->cp[i].ns, 0);
		if (i)
			ck_assert_uint_eq(tl->cp[i].start_ns,
					  tl->cp[i - 1].start_ns + tl->cp[i - 1].ns);
		ck_assert(tl->cp[i].state == SP_TL_RUNNING || !tl->cp[i].alone);
		sum += tl->cp[i].ns;
	}
	ck_assert_uint_eq(sum, tl->cp_total_ns);
	for (size_t i = 0; i < tl->ncp_ranks; i++) {
		if (i)
			ck_assert_uint_ge(tl->cp_ranks[i - 1].ns, tl->cp_ranks[i].ns);
		rsum += tl->cp_ranks[i].ns;
	}
	ck_assert_uint_eq(rsum, tl->cp_total_ns);
	for (size_t i = 0; i < tl->nserial; i++) {
		ck_assert_uint_ge(tl->serial[i].ns, SP_SERIAL_MIN_NS);
		if (i)
			ck_assert_uint_ge(tl->serial[i].start_ns,
					  tl->serial[i - 1].start_ns + tl->serial[i - 1].ns);
		ssum += tl->serial[i].ns;
	}
	ck_assert_uint_eq(ssum, tl->serial_ns);
	for (size_t i = 0; i < tl->nrunning; i++) {
		ck_assert_uint_gt(tl->running[i].ns, 0);
		if (i)
			ck_assert_int_gt(tl->running[i].n, tl->running[i - 1].n);
		run += tl->running[i].ns;
	}
	for (size_t i = 0; i < tl->nrunnable; i++) {
		ck_assert_uint_gt(tl->runnable[i].ns, 0);
		if (i)
			ck_assert_int_gt(tl->runnable[i].n, tl->runnable[i - 1].n);
		rq += tl->runnable[i].ns;
	}
	ck_assert_uint_eq(run, rq);
}

static void ck_step(const struct sp_cp_seg *c, const char *comm, int tid, enum sp_tl_state state,
		    const char *caller, bool alone, uint64_t start, uint64_t ns)
{
	ck_assert_str_eq(c->comm, comm);
	ck_assert_int_eq(c->tid, tid);
	ck_assert_int_eq(c->state, state);
	if (caller)
		ck_assert_str_eq(c->caller, caller);
	else
		ck_assert_ptr_null(c->caller);
	ck_assert_int_eq(c->alone, alone);
	ck_assert_uint_eq(c->start_ns, start);
	ck_assert_uint_eq(c->ns, ns);
}

/*
 * A serial tail: sh forks two workers, which burn 1 s in parallel; then one burns
 * 1 s alone while sh waits for it. sh is woken by the first worker's exit in between.
 */
static void serial_tail(struct sp_timeline *tl)
{
	memset(tl, 0, sizeof(*tl));
	task(tl, 1, 0, "sh", 0, 2010 * MS);
	R(tl, 1, "sh", 0, 2 * MS);
	B(tl, 1, "sh", 2 * MS, 1000 * MS, "do_wait", 2);
	Q(tl, 1, "sh", 1000 * MS, 1001 * MS, "[woken]");
	R(tl, 1, "sh", 1001 * MS, 1002 * MS);
	B(tl, 1, "sh", 1002 * MS, 2000 * MS, "do_wait", 3);
	Q(tl, 1, "sh", 2000 * MS, 2001 * MS, "[woken]");
	R(tl, 1, "sh", 2001 * MS, 2010 * MS);
	task(tl, 2, 1, "short", 1 * MS, 1000 * MS);
	Q(tl, 2, "short", 1 * MS, 1500 * US, "[new]");
	R(tl, 2, "short", 1500 * US, 1000 * MS);
	task(tl, 3, 1, "tail", 2 * MS, 2000 * MS);
	Q(tl, 3, "tail", 2 * MS, 2500 * US, "[new]");
	R(tl, 3, "tail", 2500 * US, 2000 * MS);
	tl->end_tid = 1;
	tl->end_ns = 2010 * MS;
}

START_TEST(test_serial_tail)
{
	struct sp_timeline tl;

	serial_tail(&tl);
	ck_assert_int_eq(sp_timeline_analyze(&tl, 2), 0);
	check_invariants(&tl);
	/* the whole job: sh's fork, then tail's 2 s, then sh's exit; short is off the path */
	ck_assert_uint_eq(tl.cp_total_ns, 2010 * MS);
	ck_assert_uint_eq(tl.ncp, 9);
	ck_step(&tl.cp[0], "sh", 1, SP_TL_RUNNING, NULL, true, 0, 1500 * US);
	ck_step(&tl.cp[1], "sh", 1, SP_TL_RUNNING, NULL, false, 1500 * US, 500 * US);
	ck_step(&tl.cp[2], "tail", 3, SP_TL_RUNNABLE, "[new]", false, 2 * MS, 500 * US);
	ck_step(&tl.cp[3], "tail", 3, SP_TL_RUNNING, NULL, false, 2500 * US, 997500 * US);
	ck_step(&tl.cp[4], "tail", 3, SP_TL_RUNNING, NULL, true, 1000 * MS, 1 * MS);
	ck_step(&tl.cp[5], "tail", 3, SP_TL_RUNNING, NULL, false, 1001 * MS, 1 * MS);
	ck_step(&tl.cp[6], "tail", 3, SP_TL_RUNNING, NULL, true, 1002 * MS, 998 * MS);
	ck_step(&tl.cp[7], "sh", 1, SP_TL_RUNNABLE, "[woken]", false, 2000 * MS, 1 * MS);
	ck_step(&tl.cp[8], "sh", 1, SP_TL_RUNNING, NULL, true, 2001 * MS, 9 * MS);
	/* tail alone, tail with others, sh alone, sh waiting for a CPU, tail's, sh with others */
	ck_assert_uint_eq(tl.ncp_ranks, 6);
	ck_assert_str_eq(tl.cp_ranks[0].comm, "tail");
	ck_assert(tl.cp_ranks[0].alone);
	ck_assert_uint_eq(tl.cp_ranks[0].ns, 999 * MS);
	ck_assert_str_eq(tl.cp_ranks[1].comm, "tail");
	ck_assert(!tl.cp_ranks[1].alone);
	ck_assert_uint_eq(tl.cp_ranks[1].ns, 998500 * US);
	/* one serial phase: tail alone from sh's last wait to tail's exit */
	ck_assert_uint_eq(tl.nserial, 1);
	ck_assert_str_eq(tl.serial[0].comm, "tail");
	ck_assert_int_eq(tl.serial[0].tid, 3);
	ck_assert_uint_eq(tl.serial[0].start_ns, 1002 * MS);
	ck_assert_uint_eq(tl.serial[0].ns, 998 * MS);
	ck_assert_uint_eq(tl.serial_ns, 998 * MS);
	/* 0 running while sh waits for a CPU at the end; 2 while both workers burn */
	ck_assert_uint_eq(tl.nrunning, 3);
	ck_assert_uint_eq(bucket(tl.running, tl.nrunning, 0), 1 * MS);
	ck_assert_uint_eq(bucket(tl.running, tl.nrunning, 1), 1010 * MS);
	ck_assert_uint_eq(bucket(tl.running, tl.nrunning, 2), 999 * MS);
	ck_assert_uint_eq(tl.nrunnable, 2);
	ck_assert_uint_eq(bucket(tl.runnable, tl.nrunnable, 0), 2007 * MS);
	ck_assert_uint_eq(bucket(tl.runnable, tl.nrunnable, 1), 3 * MS);
	tl_free(&tl);
}
END_TEST

/*
 * A task runs 300 ms while another waits for a CPU in the middle: the CPU it waits for is
 * not idle, so the phases are the 100 ms before and after. Then make alone: running 99 ms
 * and preempted 1 ms is one phase of 100 ms (one task wants a CPU all along).
 */
START_TEST(test_serial_needs_idle_cpus)
{
	struct sp_timeline tl = { 0 };

	task(&tl, 1, 0, "ld", 0, 300 * MS);
	R(&tl, 1, "ld", 0, 300 * MS);
	task(&tl, 2, 0, "make", 0, 400 * MS);
	B(&tl, 2, "make", 0, 100 * MS, "do_select", 0);
	Q(&tl, 2, "make", 100 * MS, 200 * MS, "[woken]");
	B(&tl, 2, "make", 200 * MS, 300 * MS, "do_wait", 1);
	R(&tl, 2, "make", 300 * MS, 399 * MS);
	Q(&tl, 2, "make", 399 * MS, 400 * MS, "[preempted]");
	tl.end_tid = 2;
	tl.end_ns = 400 * MS;
	ck_assert_int_eq(sp_timeline_analyze(&tl, 2), 0);
	check_invariants(&tl);
	ck_assert_uint_eq(tl.nserial, 3);
	ck_assert_str_eq(tl.serial[0].comm, "ld");
	ck_assert_uint_eq(tl.serial[0].start_ns, 0);
	ck_assert_uint_eq(tl.serial[0].ns, 100 * MS);
	ck_assert_uint_eq(tl.serial[1].start_ns, 200 * MS);
	ck_assert_uint_eq(tl.serial[1].ns, 100 * MS);
	ck_assert_str_eq(tl.serial[2].comm, "make");
	ck_assert_uint_eq(tl.serial[2].start_ns, 300 * MS);
	ck_assert_uint_eq(tl.serial[2].ns, 100 * MS);
	ck_assert_uint_eq(tl.serial_ns, 300 * MS);
	tl_free(&tl);
}
END_TEST

/* One CPU: no phase is serial, since no other CPU idled. */
START_TEST(test_serial_one_cpu)
{
	struct sp_timeline tl;

	serial_tail(&tl);
	ck_assert_int_eq(sp_timeline_analyze(&tl, 1), 0);
	ck_assert_uint_eq(tl.nserial, 0);
	ck_assert_uint_eq(tl.serial_ns, 0);
	ck_assert_uint_eq(tl.cp_total_ns, 2010 * MS);
	tl_free(&tl);
}
END_TEST

/* A second analysis replaces the first's results (and frees them: ASan would see a leak). */
START_TEST(test_replaces_results)
{
	struct sp_timeline tl;
	size_t ncp, nranks;

	serial_tail(&tl);
	ck_assert_int_eq(sp_timeline_analyze(&tl, 2), 0);
	ncp = tl.ncp;
	nranks = tl.ncp_ranks;
	ck_assert_int_eq(sp_timeline_analyze(&tl, 2), 0);
	ck_assert_uint_eq(tl.ncp, ncp);
	ck_assert_uint_eq(tl.ncp_ranks, nranks);
	ck_assert_uint_eq(tl.nserial, 1);
	ck_assert_uint_eq(tl.serial_ns, 998 * MS);
	ck_assert_uint_eq(tl.nrunning, 3);
	tl_free(&tl);
}
END_TEST

/* cat | wc: wc blocked in the pipe is explained by cat's running until the wake-up. */
START_TEST(test_pipe_chain)
{
	struct sp_timeline tl = { 0 };

	task(&tl, 10, 0, "cat", 0, 60 * MS);
	R(&tl, 10, "cat", 0, 50 * MS);
	B(&tl, 10, "cat", 50 * MS, 60 * MS, "anon_pipe_write", 0)->unfinished = true;
	task(&tl, 11, 0, "wc", 0, 60 * MS);
	B(&tl, 11, "wc", 0, 50 * MS, "anon_pipe_read", 10);
	Q(&tl, 11, "wc", 50 * MS, 51 * MS, "[woken]");
	R(&tl, 11, "wc", 51 * MS, 60 * MS);
	tl.end_tid = 11;
	tl.end_ns = 60 * MS;
	ck_assert_int_eq(sp_timeline_analyze(&tl, 2), 0);
	check_invariants(&tl);
	ck_assert_uint_eq(tl.cp_total_ns, 60 * MS);
	ck_assert_uint_eq(tl.ncp, 3);
	ck_step(&tl.cp[0], "cat", 10, SP_TL_RUNNING, NULL, true, 0, 50 * MS);
	ck_step(&tl.cp[1], "wc", 11, SP_TL_RUNNABLE, "[woken]", false, 50 * MS, 1 * MS);
	ck_step(&tl.cp[2], "wc", 11, SP_TL_RUNNING, NULL, true, 51 * MS, 9 * MS);
	ck_assert_uint_eq(tl.ncp_ranks, 3);
	ck_assert_str_eq(tl.cp_ranks[0].comm, "cat");
	ck_assert_uint_eq(tl.cp_ranks[0].ns, 50 * MS);
	ck_assert_str_eq(tl.cp_ranks[1].comm, "wc");
	ck_assert_int_eq(tl.cp_ranks[1].state, SP_TL_RUNNING);
	ck_assert_uint_eq(tl.cp_ranks[1].ns, 9 * MS);
	ck_assert_int_eq(tl.cp_ranks[2].state, SP_TL_RUNNABLE);
	ck_assert_uint_eq(tl.cp_ranks[2].ns, 1 * MS);
	tl_free(&tl);
}
END_TEST

/* make forks cc1 and waits in do_wait until cc1's exit wakes it. */
START_TEST(test_fork_exit_chain)
{
	struct sp_timeline tl = { 0 };

	task(&tl, 1, 0, "make", 0, 110 * MS);
	R(&tl, 1, "make", 0, 11 * MS);
	B(&tl, 1, "make", 11 * MS, 100 * MS, "do_wait", 2);
	Q(&tl, 1, "make", 100 * MS, 101 * MS, "[woken]");
	R(&tl, 1, "make", 101 * MS, 110 * MS);
	task(&tl, 2, 1, "cc1", 10 * MS, 100 * MS);
	Q(&tl, 2, "cc1", 10 * MS, 12 * MS, "[new]");
	R(&tl, 2, "cc1", 12 * MS, 100 * MS);
	tl.end_tid = 1;
	tl.end_ns = 110 * MS;
	ck_assert_int_eq(sp_timeline_analyze(&tl, 4), 0);
	check_invariants(&tl);
	ck_assert_uint_eq(tl.cp_total_ns, 110 * MS);
	ck_assert_uint_eq(tl.ncp, 5);
	/* make's fork at 10 ms: the path goes back into make there, not at make's wait */
	ck_step(&tl.cp[0], "make", 1, SP_TL_RUNNING, NULL, true, 0, 10 * MS);
	ck_step(&tl.cp[1], "cc1", 2, SP_TL_RUNNABLE, "[new]", false, 10 * MS, 2 * MS);
	ck_step(&tl.cp[2], "cc1", 2, SP_TL_RUNNING, NULL, true, 12 * MS, 88 * MS);
	ck_step(&tl.cp[3], "make", 1, SP_TL_RUNNABLE, "[woken]", false, 100 * MS, 1 * MS);
	ck_step(&tl.cp[4], "make", 1, SP_TL_RUNNING, NULL, true, 101 * MS, 9 * MS);
	/* make's wait for cc1 is not on the path: cc1's work explains it */
	for (size_t i = 0; i < tl.ncp_ranks; i++)
		ck_assert_int_ne(tl.cp_ranks[i].state, SP_TL_BLOCKED);
	ck_assert_str_eq(tl.cp_ranks[0].comm, "cc1");
	ck_assert_uint_eq(tl.cp_ranks[0].ns, 88 * MS);
	tl_free(&tl);
}
END_TEST

/* A task preempted by a hog on one CPU: the 20 ms it waited are "waiting for a CPU". */
START_TEST(test_runnable)
{
	struct sp_timeline tl = { 0 };

	task(&tl, 1, 0, "work", 0, 40 * MS);
	R(&tl, 1, "work", 0, 10 * MS);
	Q(&tl, 1, "work", 10 * MS, 31 * MS, "[preempted]");
	R(&tl, 1, "work", 31 * MS, 40 * MS);
	task(&tl, 2, 0, "hog", 0, 40 * MS);
	Q(&tl, 2, "hog", 0, 10 * MS, "[preempted]");
	R(&tl, 2, "hog", 10 * MS, 31 * MS);
	Q(&tl, 2, "hog", 31 * MS, 40 * MS, "[preempted]");
	tl.end_tid = 1;
	tl.end_ns = 40 * MS;
	ck_assert_int_eq(sp_timeline_analyze(&tl, 1), 0);
	check_invariants(&tl);
	ck_assert_uint_eq(tl.cp_total_ns, 40 * MS);
	ck_assert_uint_eq(tl.ncp, 3);
	ck_step(&tl.cp[1], "work", 1, SP_TL_RUNNABLE, "[preempted]", false, 10 * MS, 21 * MS);
	ck_assert_uint_eq(tl.ncp_ranks, 2);
	ck_assert_int_eq(tl.cp_ranks[0].state, SP_TL_RUNNABLE);
	ck_assert_str_eq(tl.cp_ranks[0].caller, "[preempted]");
	ck_assert_uint_eq(tl.cp_ranks[0].ns, 21 * MS);
	ck_assert_int_eq(tl.cp_ranks[1].state, SP_TL_RUNNING);
	ck_assert(tl.cp_ranks[1].alone);
	ck_assert_uint_eq(tl.cp_ranks[1].ns, 19 * MS);
	ck_assert_uint_eq(tl.nrunning, 1);
	ck_assert_uint_eq(bucket(tl.running, tl.nrunning, 1), 40 * MS);
	ck_assert_uint_eq(bucket(tl.runnable, tl.nrunnable, 1), 40 * MS);
	ck_assert_uint_eq(tl.nserial, 0);
	tl_free(&tl);
}
END_TEST

/*
 * A task throttled by its CPU quota, then preempted: two steps of the path, ranked apart
 * ("work throttled by its CPU quota" and "work waiting for a CPU").
 */
START_TEST(test_throttled)
{
	struct sp_timeline tl = { 0 };

	task(&tl, 1, 0, "work", 0, 40 * MS);
	R(&tl, 1, "work", 0, 10 * MS);
	Q(&tl, 1, "work", 10 * MS, 30 * MS, "[preempted]")->throttled = true;
	Q(&tl, 1, "work", 30 * MS, 35 * MS, "[preempted]");
	R(&tl, 1, "work", 35 * MS, 40 * MS);
	tl.end_tid = 1;
	tl.end_ns = 40 * MS;
	ck_assert_int_eq(sp_timeline_analyze(&tl, 1), 0);
	check_invariants(&tl);
	ck_assert_uint_eq(tl.ncp, 4);
	ck_step(&tl.cp[1], "work", 1, SP_TL_RUNNABLE, "[preempted]", false, 10 * MS, 20 * MS);
	ck_assert(tl.cp[1].throttled);
	ck_step(&tl.cp[2], "work", 1, SP_TL_RUNNABLE, "[preempted]", false, 30 * MS, 5 * MS);
	ck_assert(!tl.cp[2].throttled);
	ck_assert_uint_eq(tl.ncp_ranks, 3);
	ck_assert(tl.cp_ranks[0].throttled);
	ck_assert_uint_eq(tl.cp_ranks[0].ns, 20 * MS);
	ck_assert(!tl.cp_ranks[2].throttled);
	ck_assert_int_eq(tl.cp_ranks[2].state, SP_TL_RUNNABLE);
	ck_assert_uint_eq(tl.cp_ranks[2].ns, 5 * MS);
	tl_free(&tl);
}
END_TEST

/* A sleep: no traced waker, so the path keeps the blocked time, named by its caller. */
START_TEST(test_sleep_without_waker)
{
	struct sp_timeline tl = { 0 };
	struct sp_tl_seg *s;

	task(&tl, 1, 0, "sleep", 0, 110 * MS);
	R(&tl, 1, "sleep", 0, 5 * MS);
	s = B(&tl, 1, "sleep", 5 * MS, 105 * MS, "do_nanosleep", 0);
	s->waker_comm = strdup("[timer]");
	Q(&tl, 1, "sleep", 105 * MS, 106 * MS, "[woken]");
	R(&tl, 1, "sleep", 106 * MS, 110 * MS);
	/* woken by a tid that is no task of the timeline: a blocked step as well */
	task(&tl, 2, 0, "poll", 0, 100 * MS);
	B(&tl, 2, "poll", 0, 100 * MS, "do_sys_poll", 999);
	tl.end_tid = 1;
	tl.end_ns = 110 * MS;
	ck_assert_int_eq(sp_timeline_analyze(&tl, 2), 0);
	check_invariants(&tl);
	ck_assert_uint_eq(tl.cp_total_ns, 110 * MS);
	ck_assert_uint_eq(tl.ncp, 4);
	ck_step(&tl.cp[1], "sleep", 1, SP_TL_BLOCKED, "do_nanosleep", false, 5 * MS, 100 * MS);
	ck_assert_str_eq(tl.cp_ranks[0].caller, "do_nanosleep");
	ck_assert_uint_eq(tl.cp_ranks[0].ns, 100 * MS);
	ck_assert_uint_eq(bucket(tl.running, tl.nrunning, 0), 101 * MS);
	ck_assert_uint_eq(bucket(tl.running, tl.nrunning, 1), 9 * MS);

	tl.end_tid = 2;
	tl.end_ns = 100 * MS;
	ck_assert_int_eq(sp_timeline_analyze(&tl, 2), 0);
	check_invariants(&tl);
	ck_assert_uint_eq(tl.ncp, 1);
	ck_step(&tl.cp[0], "poll", 2, SP_TL_BLOCKED, "do_sys_poll", false, 0, 100 * MS);
	tl_free(&tl);
}
END_TEST

START_TEST(test_empty)
{
	struct sp_timeline tl = { 0 };

	ck_assert_int_eq(sp_timeline_analyze(&tl, 2), 0);
	ck_assert_uint_eq(tl.ncp, 0);
	ck_assert_uint_eq(tl.cp_total_ns, 0);
	ck_assert_uint_eq(tl.ncp_ranks, 0);
	ck_assert_uint_eq(tl.nrunning, 0);
	ck_assert_uint_eq(tl.nrunnable, 0);
	ck_assert_uint_eq(tl.nserial, 0);
	/* a task with no segment (and no comm): time no segment explains */
	task(&tl, 1, 0, NULL, 0, 10 * MS);
	ck_assert_int_eq(sp_timeline_analyze(&tl, 2), 0);
	ck_assert_uint_eq(tl.ncp, 1);
	ck_step(&tl.cp[0], "[unknown]", 1, SP_TL_BLOCKED, "[unknown]", false, 0, 10 * MS);
	ck_assert_str_eq(tl.cp_ranks[0].comm, "[unknown]");
	ck_assert_uint_eq(tl.nrunning, 1);
	ck_assert_uint_eq(bucket(tl.running, tl.nrunning, 0), 10 * MS);
	tl_free(&tl);
}
END_TEST

/* Lost events: the gap between two segments is "[unknown]", and the path goes on. */
START_TEST(test_gap)
{
	struct sp_timeline tl = { 0 };

	task(&tl, 1, 0, "x", 0, 30 * MS);
	R(&tl, 1, "x", 0, 10 * MS);
	R(&tl, 1, "x", 20 * MS, 30 * MS);
	ck_assert_int_eq(sp_timeline_analyze(&tl, 2), 0);
	check_invariants(&tl);
	ck_assert_uint_eq(tl.cp_total_ns, 30 * MS);
	ck_assert_uint_eq(tl.ncp, 3);
	ck_step(&tl.cp[1], "x", 1, SP_TL_BLOCKED, "[unknown]", false, 10 * MS, 10 * MS);
	tl_free(&tl);
}
END_TEST

static void ck_einval(struct sp_timeline *tl)
{
	ck_assert_int_eq(sp_timeline_analyze(tl, 2), -EINVAL);
	ck_assert_uint_eq(tl->ncp, 0);
	ck_assert_uint_eq(tl->nrunning, 0);
	ck_assert_uint_eq(tl->ncp_ranks, 0);
	tl_free(tl);
}

START_TEST(test_bad_input)
{
	struct sp_timeline tl = { 0 };

	/* overlapping segments */
	task(&tl, 1, 0, "x", 0, 30 * MS);
	R(&tl, 1, "x", 0, 20 * MS);
	Q(&tl, 1, "x", 10 * MS, 30 * MS, "[preempted]");
	ck_einval(&tl);
	/* out of order */
	task(&tl, 1, 0, "x", 0, 30 * MS);
	R(&tl, 1, "x", 10 * MS, 30 * MS);
	Q(&tl, 1, "x", 0, 10 * MS, "[preempted]");
	ck_einval(&tl);
	/* a segment of no task */
	task(&tl, 1, 0, "x", 0, 30 * MS);
	R(&tl, 1, "x", 0, 30 * MS);
	R(&tl, 2, "y", 0, 30 * MS);
	ck_einval(&tl);
	/* segments without tasks */
	R(&tl, 2, "y", 0, 30 * MS);
	ck_einval(&tl);
	/* a task's segments apart */
	task(&tl, 1, 0, "x", 0, 30 * MS);
	task(&tl, 2, 0, "y", 0, 30 * MS);
	R(&tl, 1, "x", 0, 10 * MS);
	R(&tl, 2, "y", 0, 30 * MS);
	R(&tl, 1, "x", 10 * MS, 30 * MS);
	ck_einval(&tl);
	/* an unknown end task */
	task(&tl, 1, 0, "x", 0, 30 * MS);
	R(&tl, 1, "x", 0, 30 * MS);
	tl.end_tid = 7;
	ck_einval(&tl);
	/* a task ending before it starts */
	task(&tl, 1, 0, "x", 30 * MS, 10 * MS);
	ck_einval(&tl);
	/* two tasks of one tid starting together */
	task(&tl, 1, 0, "x", 0, 10 * MS);
	task(&tl, 1, 0, "x", 0, 20 * MS);
	ck_einval(&tl);
	/* an unknown state */
	task(&tl, 1, 0, "x", 0, 30 * MS);
	R(&tl, 1, "x", 0, 30 * MS)->state = (enum sp_tl_state)7;
	ck_einval(&tl);
	/* a segment whose end overflows */
	task(&tl, 1, 0, "x", 0, 30 * MS);
	R(&tl, 1, "x", 10 * MS, 30 * MS)->ns = UINT64_MAX;
	ck_einval(&tl);
}
END_TEST

/* Wakers that wake each other at the same instant, a task its own parent: the walk ends. */
START_TEST(test_cycles)
{
	struct sp_timeline tl = { 0 };

	task(&tl, 1, 2, "a", 0, 20 * MS);
	B(&tl, 1, "a", 0, 10 * MS, "futex_wait", 2);
	R(&tl, 1, "a", 10 * MS, 20 * MS);
	task(&tl, 2, 1, "b", 0, 20 * MS);
	B(&tl, 2, "b", 0, 10 * MS, "futex_wait", 1);
	R(&tl, 2, "b", 10 * MS, 20 * MS);
	task(&tl, 3, 3, "c", 0, 20 * MS);
	R(&tl, 3, "c", 0, 20 * MS);
	tl.end_tid = 1;
	tl.end_ns = 20 * MS;
	ck_assert_int_eq(sp_timeline_analyze(&tl, 2), 0);
	check_invariants(&tl);
	/* a's wait jumps to b at 10 ms; b's wait (woken by a, at the same instant) stays */
	ck_assert_uint_eq(tl.cp_total_ns, 20 * MS);
	ck_assert_uint_eq(tl.ncp, 2);
	ck_step(&tl.cp[0], "b", 2, SP_TL_BLOCKED, "futex_wait", false, 0, 10 * MS);
	ck_step(&tl.cp[1], "a", 1, SP_TL_RUNNING, NULL, false, 10 * MS, 10 * MS);
	tl.end_tid = 3;
	ck_assert_int_eq(sp_timeline_analyze(&tl, 2), 0);
	check_invariants(&tl);
	ck_assert_uint_eq(tl.cp_total_ns, 20 * MS);
	tl_free(&tl);
}
END_TEST

/*
 * The path reaches a waker that was itself blocked then (timestamps of two CPUs that
 * disagree): that wait ended after the wake-up, so its waker explains nothing before it.
 */
START_TEST(test_waker_blocked_then)
{
	struct sp_timeline tl = { 0 };

	task(&tl, 1, 0, "a", 0, 20 * MS);
	B(&tl, 1, "a", 0, 10 * MS, "anon_pipe_read", 2);
	R(&tl, 1, "a", 10 * MS, 20 * MS);
	task(&tl, 2, 0, "b", 0, 20 * MS);
	R(&tl, 2, "b", 0, 5 * MS);
	B(&tl, 2, "b", 5 * MS, 15 * MS, "futex_wait", 3);
	R(&tl, 2, "b", 15 * MS, 20 * MS);
	task(&tl, 3, 0, "c", 0, 20 * MS);
	R(&tl, 3, "c", 0, 20 * MS);
	tl.end_tid = 1;
	ck_assert_int_eq(sp_timeline_analyze(&tl, 4), 0);
	check_invariants(&tl);
	ck_assert_uint_eq(tl.cp_total_ns, 20 * MS);
	ck_assert_uint_eq(tl.ncp, 3);
	ck_step(&tl.cp[0], "b", 2, SP_TL_RUNNING, NULL, false, 0, 5 * MS);
	ck_step(&tl.cp[1], "b", 2, SP_TL_BLOCKED, "futex_wait", false, 5 * MS, 5 * MS);
	ck_step(&tl.cp[2], "a", 1, SP_TL_RUNNING, NULL, false, 10 * MS, 10 * MS);
	tl_free(&tl);
}
END_TEST

/* ---- random timelines ---- */

static uint64_t rnd_state = 88172645463325252ULL;

static uint64_t rnd(uint64_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state % n;
}

static const char *const comms[] = { "make", "cc1", "as", "ld", "sh" };

/*
 * ntasks tasks of nsegs segments each, of unit-long random durations (1..maxlen units), each
 * task forked by an earlier one at its start; blocked segments woken by a random tid (or 0,
 * or no task's). Strings shared: tl_free_random frees them.
 */
static void random_timeline(struct sp_timeline *tl, size_t ntasks, size_t nsegs, uint64_t unit,
			    uint64_t maxlen, uint64_t span)
{
	memset(tl, 0, sizeof(*tl));
	tl->tasks = calloc(ntasks, sizeof(*tl->tasks));
	tl->segs = calloc(ntasks * nsegs, sizeof(*tl->segs));
	ck_assert_ptr_nonnull(tl->tasks);
	ck_assert_ptr_nonnull(tl->segs);
	tl->tasks_cap = ntasks;
	tl->segs_cap = ntasks * nsegs;
	for (size_t i = 0; i < ntasks; i++) {
		struct sp_tl_task *t = &tl->tasks[tl->ntasks++];
		uint64_t at = i ? rnd(span) * unit : 0;
		enum sp_tl_state st = SP_TL_RUNNABLE;

		t->tid = (int)(100 + i);
		t->pid = t->tid;
		t->parent_tid = i ? (int)(100 + rnd(i)) : 0;
		t->comm = (char *)comms[rnd(5)];
		t->start_ns = at;
		for (size_t j = 0; j < nsegs; j++) {
			struct sp_tl_seg *s = &tl->segs[tl->nsegs++];
			uint64_t len = (1 + rnd(maxlen)) * unit;

			s->tid = t->tid;
			s->state = st;
			s->start_ns = at;
			s->ns = len;
			s->comm = t->comm;
			if (st == SP_TL_BLOCKED) {
				s->caller = (char *)"do_wait";
				s->waker_tid = rnd(4) ? (int)(100 + rnd(ntasks + 10)) : 0;
				st = SP_TL_RUNNABLE;
			} else if (st == SP_TL_RUNNABLE) {
				s->caller = (char *)"[woken]";
				st = SP_TL_RUNNING;
			} else {
				/* running again: a segment split (migration, lost events) */
				uint64_t r = rnd(4);

				st = r == 0 ? SP_TL_RUNNING : r == 1 ? SP_TL_RUNNABLE : SP_TL_BLOCKED;
			}
			at += len;
		}
		t->end_ns = at;
	}
}

static void tl_free_random(struct sp_timeline *tl)
{
	for (size_t i = 0; i < tl->ntasks; i++)
		tl->tasks[i].comm = NULL;
	for (size_t i = 0; i < tl->nsegs; i++) {
		tl->segs[i].comm = NULL;
		tl->segs[i].caller = NULL;
	}
	tl_free(tl);
}

/* The histograms and serial phases against a count unit by unit. */
START_TEST(test_random_brute_force)
{
	enum { NTASKS = 40, NSEGS = 30, SPAN = 600 };
	const uint64_t unit = 10 * MS;
	size_t all_phases = 0, all_alone = 0;

	for (int round = 0; round < 40; round++) {
		size_t ntasks = 1 + rnd(NTASKS);
		struct sp_timeline tl;
		uint64_t end, nunits;
		int *run, *rq, *who;
		uint64_t hrun[NTASKS + 1] = { 0 }, hrq[NTASKS + 1] = { 0 }, serial = 0;
		size_t nphases = 0;

		random_timeline(&tl, ntasks, NSEGS, unit, 8, SPAN);
		end = 0;
		for (size_t i = 0; i < tl.ntasks; i++)
			if (tl.tasks[i].end_ns > end)
				end = tl.tasks[i].end_ns;
		end -= rnd(50) * unit; /* the job may end before some task */
		tl.end_ns = end;
		nunits = end / unit;
		run = calloc(nunits, sizeof(*run));
		rq = calloc(nunits, sizeof(*rq));
		who = calloc(nunits, sizeof(*who));
		for (size_t i = 0; i < tl.nsegs; i++) {
			const struct sp_tl_seg *s = &tl.segs[i];

			for (uint64_t u = s->start_ns / unit; u < (s->start_ns + s->ns) / unit && u < nunits;
			     u++) {
				if (s->state == SP_TL_RUNNING) {
					run[u]++;
					who[u] = s->tid;
				} else if (s->state == SP_TL_RUNNABLE) {
					rq[u]++;
					if (!run[u])
						who[u] = s->tid;
				}
			}
		}
		for (uint64_t u = 0; u < nunits; u++) {
			hrun[run[u]] += unit;
			hrq[rq[u]] += unit;
		}
		for (uint64_t u = 0; u < nunits;) {
			uint64_t v = u;

			if (run[u] + rq[u] != 1) {
				u++;
				continue;
			}
			while (v < nunits && run[v] + rq[v] == 1 && who[v] == who[u])
				v++;
			if ((v - u) * unit >= SP_SERIAL_MIN_NS) {
				ck_assert_uint_lt(nphases, 1000);
				nphases++;
				serial += (v - u) * unit;
			}
			u = v;
		}
		ck_assert_int_eq(sp_timeline_analyze(&tl, 4), 0);
		check_invariants(&tl);
		for (int n = 0; n <= NTASKS; n++) {
			ck_assert_uint_eq(bucket(tl.running, tl.nrunning, n), hrun[n]);
			ck_assert_uint_eq(bucket(tl.runnable, tl.nrunnable, n), hrq[n]);
		}
		ck_assert_uint_eq(tl.nserial, nphases);
		ck_assert_uint_eq(tl.serial_ns, serial);
		all_phases += nphases;
		/* a running step is alone where nothing else ran */
		for (size_t i = 0; i < tl.ncp; i++) {
			const struct sp_cp_seg *c = &tl.cp[i];

			if (c->state != SP_TL_RUNNING)
				continue;
			for (uint64_t u = c->start_ns / unit; u < (c->start_ns + c->ns) / unit; u++)
				ck_assert_int_eq(c->alone, run[u] == 1);
			all_alone += c->alone;
		}
		/* the path ends at the last task's end, clipped to the job's */
		ck_assert_uint_gt(tl.ncp, 0);
		ck_assert_uint_eq(tl.cp[tl.ncp - 1].start_ns + tl.cp[tl.ncp - 1].ns, end);
		free(run);
		free(rq);
		free(who);
		tl_free_random(&tl);
	}
	/* the rounds had phases and alone steps to check */
	ck_assert_uint_gt(all_phases, 10);
	ck_assert_uint_gt(all_alone, 10);
}
END_TEST

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 10^6 segments (a big compile job's) in well under a second of CPU. */
START_TEST(test_speed)
{
	struct sp_timeline tl;
	double t0, dt;

	random_timeline(&tl, 5000, 200, US, 500, 20000000);
	t0 = cpu_seconds();
	ck_assert_int_eq(sp_timeline_analyze(&tl, 8), 0);
	dt = cpu_seconds() - t0;
	fprintf(stderr, "critpath: 10^6 segments in %.3f s of CPU\n", dt);
	ck_assert_msg(dt < 0.5 * SLOWDOWN, "%.3f s", dt);
	check_invariants(&tl);
	ck_assert_uint_gt(tl.ncp, 0);
	ck_assert_uint_gt(tl.nrunning, 1);
	tl_free_random(&tl);
}
END_TEST

static Suite *critpath_suite(void)
{
	Suite *s = suite_create("critpath");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_serial_tail);
	tcase_add_test(tc, test_serial_needs_idle_cpus);
	tcase_add_test(tc, test_serial_one_cpu);
	tcase_add_test(tc, test_replaces_results);
	tcase_add_test(tc, test_pipe_chain);
	tcase_add_test(tc, test_fork_exit_chain);
	tcase_add_test(tc, test_runnable);
	tcase_add_test(tc, test_throttled);
	tcase_add_test(tc, test_sleep_without_waker);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_gap);
	tcase_add_test(tc, test_bad_input);
	tcase_add_test(tc, test_cycles);
	tcase_add_test(tc, test_waker_blocked_then);
	tcase_add_test(tc, test_random_brute_force);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_speed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(critpath_suite());
}
