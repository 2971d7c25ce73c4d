// SPDX-License-Identifier: BSD-2-Clause
/*
 * Intervals (src/model/run_delta.c): an interval's run is the end's cumulative run minus the
 * start's, matched row by row; rows that appear, rows with nothing new (left out), comms,
 * stacks and wakers; what cannot subtract is "since the start"; the intervals of a trace add
 * up to its final run, exactly; a whole fixture run minus nothing is itself, minus itself is
 * empty.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"
#include "model/model.h"
#include "model/run_delta.h"
#include "model/view.h"

static char *sdup(const char *s)
{
	char *d = s ? strdup(s) : NULL;

	ck_assert(!s || d);
	return d;
}

static struct sp_sched_row *srow(struct sp_run *r, const char *caller, const char *wait,
				 uint64_t count, uint64_t ns, uint64_t max)
{
	struct sp_sched_row *row = sp_sched_add_row(&r->sched);

	ck_assert_ptr_nonnull(row);
	r->sched.present = true;
	r->sched.total += count;
	r->sched.voluntary += count;
	row->caller = sdup(caller);
	row->wait = sdup(wait);
	row->count = count;
	row->offcpu_ns = ns;
	row->blocked_ns = ns - ns / 4;
	row->runq_ns = ns / 4;
	row->max_ns = max;
	row->runq_max_ns = max / 2;
	return row;
}

static void stack(struct sp_stack_list *l, const char *comm, int pid, uint64_t count,
		  uint64_t ns, const char *f0, const char *f1)
{
	struct sp_stack_row *s = sp_stack_list_add(l);

	ck_assert_ptr_nonnull(s);
	s->comm = sdup(comm);
	s->pid = pid;
	s->frames = calloc(2, sizeof(char *));
	ck_assert_ptr_nonnull(s->frames);
	s->frames[0] = sdup(f0);
	s->frames[1] = sdup(f1);
	s->nframes = 2;
	s->count = count;
	s->time_ns = ns;
}

static void waker(struct sp_waker_list *l, const char *comm, const char *fn, uint64_t count)
{
	struct sp_waker *w = SP_ARRAY_ADD(l->v, l->n, l->cap);

	ck_assert_ptr_nonnull(w);
	w->comm = sdup(comm);
	w->function = sdup(fn);
	w->count = count;
}

static struct sp_sched_row *find(struct sp_sched_view *v, const char *caller)
{
	for (size_t i = 0; i < v->nrows; i++)
		if (!strcmp(v->rows[i].caller, caller))
			return &v->rows[i];
	return NULL;
}

/*
 * The cumulative run at step k (0, 1, 2) of a made-up trace: pipe grows every step, with a
 * comm and a stack that appear at step 1; do_wait appears at step 1; futex only at step 0..2
 * without change after step 0 (left out of later intervals); wakers by comm and function.
 */
static void cumulative(struct sp_run *r, int k)
{
	static const uint64_t pipe_n[] = { 10, 25, 40 }, wait_n[] = { 0, 3, 7 };
	struct sp_sched_row *row;

	sp_run_init(r);
	r->schema = sdup(SP_SCHEMA);
	r->ncpus = 2;
	r->target.mode = SP_TARGET_COMMAND;
	r->target.command = sdup("make -j2");
	row = srow(r, "anon_pipe_read", "pipe", pipe_n[k], pipe_n[k] * 1000, 900 + k);
	ck_assert_int_eq(sp_comm_list_add(&row->comms, "cat", pipe_n[k] - (k ? 5 : 0),
					  (pipe_n[k] - (k ? 5 : 0)) * 1000, 900), 0);
	if (k)
		ck_assert_int_eq(sp_comm_list_add(&row->comms, "sort", 5, 5000, 1000), 0);
	stack(&row->stacks, "cat", 11, pipe_n[k] - (k ? 5 : 0), 0, "schedule", "anon_pipe_read");
	if (k)
		stack(&row->stacks, "sort", 12, 5, 5000, "schedule", "anon_pipe_read");
	waker(&row->wakers, "yes", "anon_pipe_write", pipe_n[k] - 1);
	waker(&row->wakers, "[irq]", NULL, 1);
	row->unfinished = k == 2 ? 1 : 0;
	if (wait_n[k])
		srow(r, "do_wait", "child", wait_n[k], wait_n[k] * 1000000, 5000);
	srow(r, "futex_wait", NULL, 2, 2000, 1000);
	r->sched.budget.present = true;
	r->sched.budget.oncpu_ns = 1000 * (k + 1);
	r->sched.budget.blocked.pipe = 100 * (k + 1);
	r->sched.budget.blocked_ns = 100 * (k + 1);
	r->sched.budget.tasks = 3 + k;
	r->sched.preempted = k;
	r->sched.total += k;
}

START_TEST(first_interval_is_the_run)
{
	struct sp_run c, d;
	struct sp_delta_stats st;

	cumulative(&c, 0);
	sp_run_init(&d);
	ck_assert_int_eq(sp_run_delta(NULL, &c, &d, &st), 0);
	ck_assert_uint_eq(st.negative + st.vanished, 0);
	ck_assert_uint_eq(d.sched.nrows, 2);
	ck_assert_uint_eq(d.sched.total, c.sched.total);
	ck_assert_str_eq(d.target.command, "make -j2");
	ck_assert_uint_eq(find(&d.sched, "anon_pipe_read")->wakers.n, 2);
	sp_run_free(&c);
	sp_run_free(&d);
}
END_TEST

START_TEST(rows_appear_and_rest)
{
	struct sp_run a, b, d;
	struct sp_delta_stats st;
	struct sp_sched_row *pipe, *wait;

	cumulative(&a, 0);
	cumulative(&b, 1);
	sp_run_init(&d);
	ck_assert_int_eq(sp_run_delta(&a, &b, &d, &st), 0);
	ck_assert_uint_eq(st.negative, 0);
	ck_assert_uint_eq(st.vanished, 0);
	/* futex_wait did not change: not in the interval */
	ck_assert_ptr_null(find(&d.sched, "futex_wait"));
	ck_assert_uint_eq(d.sched.nrows, 2);
	pipe = find(&d.sched, "anon_pipe_read");
	wait = find(&d.sched, "do_wait");
	ck_assert_ptr_nonnull(pipe);
	ck_assert_ptr_nonnull(wait);
	ck_assert_uint_eq(pipe->count, 15);
	ck_assert_uint_eq(pipe->offcpu_ns, 15000);
	ck_assert_uint_eq(pipe->blocked_ns + pipe->runq_ns, 15000);
	ck_assert_uint_eq(pipe->max_ns, 901); /* since the start */
	ck_assert_uint_eq(pipe->runq_max_ns, 450);
	/* ranked by the interval: pipe 15 before do_wait 3 */
	ck_assert_str_eq(d.sched.rows[0].caller, "anon_pipe_read");
	/* comms: cat 10 -> 20, sort new with 5 */
	ck_assert_uint_eq(pipe->comms.n, 2);
	for (size_t i = 0; i < pipe->comms.n; i++)
		ck_assert_uint_eq(pipe->comms.v[i].count, 10 - 5 * !strcmp(pipe->comms.v[i].comm, "sort"));
	/* stacks: cat's grew by 10, sort's is new */
	ck_assert_uint_eq(pipe->stacks.n, 2);
	ck_assert_uint_eq(pipe->stacks.v[0].count + pipe->stacks.v[1].count, 15);
	/* wakers: yes +15, [irq] unchanged and left out; its NULL function kept apart */
	ck_assert_uint_eq(pipe->wakers.n, 1);
	ck_assert_str_eq(pipe->wakers.v[0].comm, "yes");
	ck_assert_str_eq(pipe->wakers.v[0].function, "anon_pipe_write");
	ck_assert_uint_eq(pipe->wakers.v[0].count, 15);
	ck_assert_uint_eq(wait->count, 3);
	ck_assert_str_eq(wait->wait, "child");
	ck_assert_uint_eq(d.sched.budget.oncpu_ns, 1000);
	ck_assert_uint_eq(d.sched.budget.blocked.pipe, 100);
	ck_assert_uint_eq(d.sched.budget.tasks, 4); /* since the start */
	ck_assert_uint_eq(d.sched.total, 15 + 3 + 1);
	ck_assert_uint_eq(d.sched.preempted, 1);
	sp_run_free(&a);
	sp_run_free(&b);
	sp_run_free(&d);
}
END_TEST

/* Adds the schedules of interval d into the sums (by caller), as a reader of JSON lines would. */
static void accumulate(struct sp_run *sum, const struct sp_run *d)
{
	sum->sched.present = true;
	sum->sched.total += d->sched.total;
	sum->sched.voluntary += d->sched.voluntary;
	sum->sched.preempted += d->sched.preempted;
	for (size_t i = 0; i < d->sched.nrows; i++) {
		const struct sp_sched_row *r = &d->sched.rows[i];
		struct sp_sched_row *s = find(&sum->sched, r->caller);

		if (!s) {
			s = srow(sum, r->caller, r->wait, 0, 0, 0);
			s->blocked_ns = s->runq_ns = 0;
		}
		s->count += r->count;
		s->offcpu_ns += r->offcpu_ns;
		s->blocked_ns += r->blocked_ns;
		s->runq_ns += r->runq_ns;
		s->unfinished = r->unfinished; /* a state: the last interval's is the run's */
		for (size_t j = 0; j < r->comms.n; j++)
			ck_assert_int_eq(sp_comm_list_add(&s->comms, r->comms.v[j].comm,
							  r->comms.v[j].count,
							  r->comms.v[j].time_ns, 0), 0);
		for (size_t j = 0; j < r->wakers.n; j++) {
			size_t w = 0;

			while (w < s->wakers.n && strcmp(s->wakers.v[w].comm, r->wakers.v[j].comm))
				w++;
			if (w == s->wakers.n)
				waker(&s->wakers, r->wakers.v[j].comm, r->wakers.v[j].function, 0);
			s->wakers.v[w].count += r->wakers.v[j].count;
		}
	}
}

START_TEST(intervals_add_up)
{
	struct sp_run runs[3], sum;
	const struct sp_run *fin = &runs[2];

	sp_run_init(&sum);
	for (int k = 0; k < 3; k++) {
		struct sp_run d;
		struct sp_delta_stats st;

		cumulative(&runs[k], k);
		sp_run_init(&d);
		ck_assert_int_eq(sp_run_delta(k ? &runs[k - 1] : NULL, &runs[k], &d, &st), 0);
		ck_assert_uint_eq(st.negative + st.vanished, 0);
		accumulate(&sum, &d);
		sp_run_free(&d);
	}
	ck_assert_uint_eq(sum.sched.total, fin->sched.total);
	ck_assert_uint_eq(sum.sched.preempted, fin->sched.preempted);
	ck_assert_uint_eq(sum.sched.nrows, fin->sched.nrows);
	for (size_t i = 0; i < fin->sched.nrows; i++) {
		const struct sp_sched_row *f = &fin->sched.rows[i];
		struct sp_sched_row *s = find(&sum.sched, f->caller);

		ck_assert_ptr_nonnull(s);
		ck_assert_uint_eq(s->count, f->count);
		ck_assert_uint_eq(s->offcpu_ns, f->offcpu_ns);
		ck_assert_uint_eq(s->blocked_ns, f->blocked_ns);
		ck_assert_uint_eq(s->runq_ns, f->runq_ns);
		ck_assert_uint_eq(s->unfinished, f->unfinished);
		ck_assert_uint_eq(s->comms.n, f->comms.n);
		for (size_t j = 0; j < f->comms.n; j++) {
			size_t m = 0;

			while (m < s->comms.n && strcmp(s->comms.v[m].comm, f->comms.v[j].comm))
				m++;
			ck_assert_uint_lt(m, s->comms.n);
			ck_assert_uint_eq(s->comms.v[m].count, f->comms.v[j].count);
			ck_assert_uint_eq(s->comms.v[m].time_ns, f->comms.v[j].time_ns);
		}
		ck_assert_uint_eq(s->wakers.n, f->wakers.n);
		for (size_t j = 0; j < f->wakers.n; j++) {
			size_t m = 0;

			while (m < s->wakers.n && strcmp(s->wakers.v[m].comm, f->wakers.v[j].comm))
				m++;
			ck_assert_uint_lt(m, s->wakers.n);
			ck_assert_uint_eq(s->wakers.v[m].count, f->wakers.v[j].count);
		}
	}
	for (int k = 0; k < 3; k++)
		sp_run_free(&runs[k]);
	sp_run_free(&sum);
}
END_TEST

static void taker(struct sp_cpu_taker_list *l, const char *kind, const char *comm, uint64_t count,
		  uint64_t ns)
{
	struct sp_cpu_taker *t = SP_ARRAY_ADD(l->v, l->n, l->cap);

	ck_assert_ptr_nonnull(t);
	t->kind = sdup(kind);
	t->comm = sdup(comm);
	t->where = sdup("inside");
	t->count = count;
	t->ns = ns;
}

/*
 * A row's takers can grow in an interval its row has nothing in: BPF keeps a CPU's last
 * takers in slots (struct sp_taker_pcpu) and counts them in the map, which the intervals
 * read, only when a slot is taken by another taker, and the final read adds the slots. The
 * row stays in that interval with its takers' part, and none of its own.
 */
START_TEST(takers_move_alone)
{
	struct sp_run a, b, d;
	struct sp_delta_stats st;
	struct sp_sched_row *row;

	sp_run_init(&a);
	sp_run_init(&b);
	sp_run_init(&d);
	srow(&a, "folio_wait_bit_common", "io", 1, 5000000, 5000000);
	taker(&srow(&a, "anon_pipe_read", "pipe", 10, 1000, 100)->takers, "ran-before", "cat",
	      10, 500);
	row = srow(&b, "folio_wait_bit_common", "io", 1, 5000000, 5000000);
	taker(&row->takers, "ran-before", "schedprof", 1, 3900000);
	taker(&srow(&b, "anon_pipe_read", "pipe", 10, 1000, 100)->takers, "ran-before", "cat",
	      10, 500);
	ck_assert_int_eq(sp_run_delta(&a, &b, &d, &st), 0);
	ck_assert_uint_eq(st.negative + st.vanished, 0);
	/* anon_pipe_read: nothing new, its taker neither */
	ck_assert_ptr_null(find(&d.sched, "anon_pipe_read"));
	row = find(&d.sched, "folio_wait_bit_common");
	ck_assert_ptr_nonnull(row);
	ck_assert_uint_eq(row->count, 0);
	ck_assert_uint_eq(row->offcpu_ns, 0);
	ck_assert_uint_eq(row->comms.n + row->stacks.n + row->wakers.n, 0);
	ck_assert_uint_eq(row->takers.n, 1);
	ck_assert_str_eq(row->takers.v[0].comm, "schedprof");
	ck_assert_uint_eq(row->takers.v[0].count, 1);
	ck_assert_uint_eq(row->takers.v[0].ns, 3900000);
	ck_assert_uint_eq(d.sched.total, 0);
	sp_run_free(&a);
	sp_run_free(&b);
	sp_run_free(&d);
}
END_TEST

/* A row renamed between two reads: its old name vanishes, a smaller count clamps at 0. */
START_TEST(vanished_and_negative_counted)
{
	struct sp_run a, b, d;
	struct sp_delta_stats st;

	sp_run_init(&a);
	sp_run_init(&b);
	sp_run_init(&d);
	srow(&a, "[unknown]", NULL, 5, 500, 10);
	srow(&a, "x", NULL, 9, 900, 10);
	srow(&b, "anon_pipe_read", NULL, 6, 600, 10);
	srow(&b, "x", NULL, 7, 900, 10);
	ck_assert_int_eq(sp_run_delta(&a, &b, &d, &st), 0);
	ck_assert_uint_eq(st.vanished, 1);
	ck_assert_uint_eq(st.negative, 3); /* x: count; total and voluntary 14 -> 13 */
	ck_assert_uint_eq(d.sched.nrows, 1);
	ck_assert_str_eq(d.sched.rows[0].caller, "anon_pipe_read");
	sp_run_free(&a);
	sp_run_free(&b);
	sp_run_free(&d);
}
END_TEST

/* Unfinished sleeps are those in progress at the interval's end: a state, never negative. */
START_TEST(unfinished_is_a_state)
{
	struct sp_run a, b, d;
	struct sp_delta_stats st;

	sp_run_init(&a);
	sp_run_init(&b);
	sp_run_init(&d);
	srow(&a, "f", NULL, 5, 500, 1)->unfinished = 2;
	srow(&b, "f", NULL, 6, 600, 1)->unfinished = 0;
	srow(&a, "g", NULL, 5, 500, 1)->unfinished = 0;
	srow(&b, "g", NULL, 5, 500, 1)->unfinished = 1;
	ck_assert_int_eq(sp_run_delta(&a, &b, &d, &st), 0);
	ck_assert_uint_eq(st.negative, 0);
	ck_assert_uint_eq(d.sched.nrows, 2);
	ck_assert_str_eq(d.sched.rows[0].caller, "f");
	ck_assert_uint_eq(d.sched.rows[0].unfinished, 0);
	/* g: nothing ended, one sleep in progress: a row of its own */
	ck_assert_uint_eq(d.sched.rows[1].count, 0);
	ck_assert_uint_eq(d.sched.rows[1].unfinished, 1);
	sp_run_free(&a);
	sp_run_free(&b);
	sp_run_free(&d);
}
END_TEST

/* The same caller with two waits (and none) are three rows: NULL is not "". */
START_TEST(keys_with_null)
{
	struct sp_run a, b, d;

	sp_run_init(&a);
	sp_run_init(&b);
	sp_run_init(&d);
	srow(&a, "f", NULL, 1, 100, 1);
	srow(&a, "f", "", 2, 200, 1);
	srow(&b, "f", NULL, 1, 100, 1);
	srow(&b, "f", "", 5, 500, 1);
	srow(&b, "f", "io", 4, 400, 1);
	ck_assert_int_eq(sp_run_delta(&a, &b, &d, NULL), 0);
	ck_assert_uint_eq(d.sched.nrows, 2);
	ck_assert_uint_eq(d.sched.rows[0].count, 4);
	ck_assert_str_eq(d.sched.rows[0].wait, "io");
	ck_assert_uint_eq(d.sched.rows[1].count, 3);
	ck_assert_str_eq(d.sched.rows[1].wait, "");
	sp_run_free(&a);
	sp_run_free(&b);
	sp_run_free(&d);
}
END_TEST

/* Every view of a full fixture: minus nothing it renders as itself; minus itself, empty. */
START_TEST(fixture_identity_and_empty)
{
	struct render_opts o = { .format = SP_FMT_JSON, .views = SP_VIEW_ALL };
	struct sp_run run, d, z;
	struct sp_delta_stats st;
	char *want, *got;

	unit_load(FIX("run_full.json"), &run);
	sp_run_init(&d);
	sp_run_init(&z);
	ck_assert_int_eq(sp_run_delta(NULL, &run, &d, &st), 0);
	ck_assert_uint_eq(st.negative + st.vanished, 0);
	sp_lock_sort(&run.locks, SP_LOCK_SORT_WAIT);
	want = unit_render(&run, &o, NULL);
	got = unit_render(&d, &o, NULL);
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(sp_run_delta(&run, &run, &z, &st), 0);
	ck_assert_uint_eq(st.negative + st.vanished, 0);
	ck_assert(z.sched.present && z.profile.present && z.locks.present);
	ck_assert_uint_eq(z.sched.nrows + z.profile.nrows + z.locks.nrows, 0);
	ck_assert_uint_eq(z.locks.nsleepers + z.locks.ngroups, 0);
	ck_assert_uint_eq(z.sched.total + z.profile.total + z.locks.total, 0);
	ck_assert(run.profile.nrows > 0 && run.locks.nrows > 0 && run.locks.ngroups > 0);
	free(want);
	free(got);
	sp_run_free(&run);
	sp_run_free(&d);
	sp_run_free(&z);
}
END_TEST

/*
 * The profile's and the locks' rows of a fixture, a little later: only what grew is in the
 * interval (a contention row with its comm, owner and stack; a sleeper, a group and its
 * caller; a function with its comm and stack), with the amounts it grew by.
 */
START_TEST(profile_and_locks_grow)
{
	struct sp_run a, b, d;
	struct sp_delta_stats st;
	struct sp_lock_row *lr;
	struct sp_profile_row *pr;

	unit_load(FIX("run_full.json"), &a);
	unit_load(FIX("run_full.json"), &b);
	sp_run_init(&d);
	lr = &b.locks.rows[0];
	lr->count += 3;
	lr->wait_ns += 300;
	lr->comms.v[0].count += 3;
	lr->comms.v[0].time_ns += 300;
	lr->owners.v[0].count += 1;
	lr->stacks.v[0].count += 2;
	b.locks.total += 3;
	b.locks.sleepers[0].count += 2;
	b.locks.sleepers[0].offcpu_ns += 2000;
	b.locks.groups[0].count += 1;
	b.locks.groups[0].callers.v[0].count += 1;
	pr = &b.profile.rows[1];
	pr->samples += 5;
	pr->comms.v[0].count += 5;
	pr->stacks.v[0].count += 5;
	b.profile.total += 5;
	b.profile.target += 5;
	b.elapsed_ns += 1000;
	ck_assert_int_eq(sp_run_delta(&a, &b, &d, &st), 0);
	ck_assert_uint_eq(st.negative + st.vanished, 0);
	ck_assert_uint_eq(d.sched.nrows, 0);
	ck_assert_uint_eq(d.locks.total, 3);
	ck_assert_uint_eq(d.locks.nrows, 1);
	ck_assert_uint_eq(d.locks.rows[0].count, 3);
	ck_assert_uint_eq(d.locks.rows[0].wait_ns, 300);
	ck_assert_uint_eq(d.locks.rows[0].max_ns, lr->max_ns); /* since the start */
	ck_assert_str_eq(d.locks.rows[0].lock, lr->lock);
	ck_assert_str_eq(d.locks.rows[0].source, lr->source);
	ck_assert_uint_eq(d.locks.rows[0].comms.n, 1);
	ck_assert_uint_eq(d.locks.rows[0].comms.v[0].time_ns, 300);
	ck_assert_uint_eq(d.locks.rows[0].owners.n, 1);
	ck_assert_uint_eq(d.locks.rows[0].owners.v[0].count, 1);
	ck_assert_uint_eq(d.locks.rows[0].owners.v[0].time_ns, 0);
	ck_assert_uint_eq(d.locks.rows[0].stacks.n, 1);
	ck_assert_uint_eq(d.locks.rows[0].stacks.v[0].count, 2);
	ck_assert_uint_eq(d.locks.rows[0].stacks.v[0].nframes, lr->stacks.v[0].nframes);
	ck_assert_uint_eq(d.locks.nsleepers, 1);
	ck_assert_uint_eq(d.locks.sleepers[0].count, 2);
	ck_assert_uint_eq(d.locks.sleepers[0].offcpu_ns, 2000);
	ck_assert_uint_eq(d.locks.sleepers[0].tasks, b.locks.sleepers[0].tasks);
	ck_assert_uint_eq(d.locks.ngroups, 1);
	ck_assert_uint_eq(d.locks.groups[0].count, 1);
	ck_assert_uint_eq(d.locks.groups[0].offcpu_ns, 0);
	ck_assert_uint_eq(d.locks.groups[0].callers.n, 1);
	ck_assert_uint_eq(d.profile.total, 5);
	ck_assert_uint_eq(d.profile.nrows, 1);
	ck_assert_str_eq(d.profile.rows[0].function, pr->function);
	ck_assert_uint_eq(d.profile.rows[0].samples, 5);
	ck_assert_uint_eq(d.profile.rows[0].comms.v[0].count, 5);
	ck_assert_uint_eq(d.profile.rows[0].stacks.v[0].count, 5);
	ck_assert_str_eq(d.profile.rows[0].stacks.v[0].objects[0], pr->stacks.v[0].objects[0]);
	sp_run_free(&a);
	sp_run_free(&b);
	sp_run_free(&d);
}
END_TEST

/*
 * Every view's caller-cache counts are counters: an interval has its own, in the locks view
 * as in the schedules view; verify_all is a setting, the budget's tasks a number since the
 * start.
 */
START_TEST(caller_caches_subtract)
{
	struct sp_run a, b, d;

	unit_load(FIX("run_full.json"), &a);
	unit_load(FIX("run_full.json"), &b);
	sp_run_init(&d);
	a.sched.cache = (struct sp_caller_cache){ .present = true, .fast = 40, .verified = 2 };
	b.sched.cache = (struct sp_caller_cache){ .present = true, .fast = 100, .verified = 7,
						  .mismatched = 1, .verify_all = true };
	a.locks.cache = (struct sp_caller_cache){ .present = true, .fast = 4, .attributed = 9 };
	b.locks.cache = (struct sp_caller_cache){ .present = true, .fast = 10, .verified = 3,
						  .attributed = 12 };
	a.sched.budget = (struct sp_budget){ .present = true, .tasks = 2, .oncpu_ns = 10 };
	b.sched.budget = (struct sp_budget){ .present = true, .tasks = 3, .oncpu_ns = 50,
					     .blocked.io = 9 };
	ck_assert_int_eq(sp_run_delta(&a, &b, &d, NULL), 0);
	ck_assert(d.sched.cache.present && d.sched.cache.verify_all);
	ck_assert_uint_eq(d.sched.cache.fast, 60);
	ck_assert_uint_eq(d.sched.cache.verified, 5);
	ck_assert_uint_eq(d.sched.cache.mismatched, 1);
	ck_assert(d.locks.cache.present);
	ck_assert_uint_eq(d.locks.cache.fast, 6);
	ck_assert_uint_eq(d.locks.cache.verified, 3);
	ck_assert_uint_eq(d.locks.cache.attributed, 3);
	ck_assert(d.sched.budget.present);
	ck_assert_uint_eq(d.sched.budget.tasks, 3);
	ck_assert_uint_eq(d.sched.budget.oncpu_ns, 40);
	ck_assert_uint_eq(d.sched.budget.blocked.io, 9);
	sp_run_free(&a);
	sp_run_free(&b);
	sp_run_free(&d);
}
END_TEST

/*
 * Every U64 of every view says what it is over time as its name does: a maximum ("max") is
 * SP_MAX, a percentile ("_p50", "_p99") or a number of distinct tasks SP_SINCE; the rest
 * (counts, times) subtract. A field added with the wrong kind fails here, not in an
 * interval that reports a maximum's difference.
 */
static void check_kinds(const struct sp_schema *s, unsigned int *n)
{
	for (size_t i = 0; i < s->nfields; i++) {
		const struct sp_field *f = &s->fields[i];
		unsigned int kind = f->flags & (SP_MAX | SP_SINCE | SP_STATE);

		if (f->sub)
			check_kinds(f->sub, n);
		if (f->type != SP_T_U64)
			continue;
		++*n;
		if (strstr(f->key, "max"))
			ck_assert_msg(kind == SP_MAX, "%s.%s: a maximum", s->name, f->key);
		else if (strstr(f->key, "_p5") || strstr(f->key, "_p9") || !strcmp(f->key, "tasks"))
			ck_assert_msg(kind == SP_SINCE, "%s.%s: since the start", s->name, f->key);
		else if (strcmp(f->key, "unfinished"))
			ck_assert_msg(kind == 0, "%s.%s: a counter", s->name, f->key);
	}
}

START_TEST(field_kinds_by_name)
{
	unsigned int n = 0;

	for (size_t i = 0; i < sp_nviews; i++)
		if (!sp_views[i]->whole_run)
			check_kinds(sp_views[i]->schema, &n);
	ck_assert_uint_gt(n, 50);
}
END_TEST

/* Frame infos on the stacks of the cat row (addr base, build-id "b1"), as a collector sets them. */
static void give_infos(struct sp_run *r, uint64_t base)
{
	struct sp_stack_row *s = &find(&r->sched, "anon_pipe_read")->stacks.v[0];

	s->info = calloc(2, sizeof(*s->info));
	ck_assert_ptr_nonnull(s->info);
	s->info[0] = (struct sp_frame_info){ .addr = base, .build_id = sdup("b1"),
					     .system_name = sdup("_Z4readv"), .line = 7 };
	s->info[1].addr = base + 0x10;
}

/*
 * An interval's stacks carry their frame infos (copied, the cumulative runs
 * freed after), and a stack matches the earlier one only with the same identities.
 */
START_TEST(frame_info_kept)
{
	struct sp_run a, b, d;
	struct sp_delta_stats st;
	struct sp_profile_row *pr;
	const struct sp_stack_row *s;

	cumulative(&a, 1);
	cumulative(&b, 2);
	give_infos(&a, 0x400);
	give_infos(&b, 0x400);
	pr = sp_profile_add_row(&b.profile);
	ck_assert_ptr_nonnull(pr);
	b.profile.present = true;
	b.profile.total = b.profile.target = pr->samples = 3;
	pr->function = sdup("hot");
	pr->object = sdup("/bin/x");
	pr->info = calloc(1, sizeof(*pr->info));
	ck_assert_ptr_nonnull(pr->info);
	pr->info->build_id = sdup("b2");
	pr->info->addr = 0x99;
	sp_run_init(&d);
	ck_assert_int_eq(sp_run_delta(&a, &b, &d, &st), 0);
	sp_run_free(&b);
	s = &find(&d.sched, "anon_pipe_read")->stacks.v[0];
	ck_assert_str_eq(s->comm, "cat");
	ck_assert_uint_eq(s->count, 15); /* 35 - 20: matched */
	ck_assert_ptr_nonnull(s->info);
	ck_assert_uint_eq(s->info[0].addr, 0x400);
	ck_assert_str_eq(s->info[0].build_id, "b1");
	ck_assert_str_eq(s->info[0].system_name, "_Z4readv");
	ck_assert_uint_eq(s->info[0].line, 7);
	ck_assert_ptr_null(s->info[1].build_id);
	ck_assert_uint_eq(s->info[1].addr, 0x410);
	ck_assert_str_eq(d.profile.rows[0].info->build_id, "b2");
	ck_assert_uint_eq(d.profile.rows[0].info->addr, 0x99);
	sp_run_free(&d);
	/* another address: another stack, all of its count new */
	cumulative(&b, 2);
	give_infos(&b, 0x800);
	sp_run_init(&d);
	ck_assert_int_eq(sp_run_delta(&a, &b, &d, &st), 0);
	s = &find(&d.sched, "anon_pipe_read")->stacks.v[0];
	ck_assert_uint_eq(s->count, 35);
	ck_assert_uint_eq(s->info[0].addr, 0x800);
	sp_run_free(&a);
	sp_run_free(&b);
	sp_run_free(&d);
}
END_TEST

/* The interval object is written in a JSON line and read back; absent in a whole run. */
START_TEST(interval_round_trip)
{
	struct render_opts o = { .format = SP_FMT_JSON, .views = SP_VIEW_ALL };
	struct sp_run run, back;
	char *text, err[256], path[] = "/tmp/sp_delta_XXXXXX";
	int fd;

	unit_load(FIX("run_min.json"), &run);
	text = unit_render(&run, &o, NULL);
	ck_assert_ptr_null(strstr(text, "\"interval\""));
	free(text);
	run.interval.present = true;
	run.interval.index = 3;
	run.interval.start_ns = 2000000000;
	run.interval.end_ns = 3000000000;
	text = unit_render(&run, &o, NULL);
	ck_assert_ptr_nonnull(strstr(text, "\"interval\""));
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	ck_assert_int_eq(sp_run_load_json(path, &back, err, sizeof(err)), 0);
	unlink(path);
	ck_assert(back.interval.present);
	ck_assert_uint_eq(back.interval.index, 3);
	ck_assert_uint_eq(back.interval.start_ns, 2000000000);
	ck_assert_uint_eq(back.interval.end_ns, 3000000000);
	free(text);
	sp_run_free(&run);
	sp_run_free(&back);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("run_delta");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, first_interval_is_the_run);
	tcase_add_test(tc, rows_appear_and_rest);
	tcase_add_test(tc, intervals_add_up);
	tcase_add_test(tc, takers_move_alone);
	tcase_add_test(tc, vanished_and_negative_counted);
	tcase_add_test(tc, keys_with_null);
	tcase_add_test(tc, unfinished_is_a_state);
	tcase_add_test(tc, fixture_identity_and_empty);
	tcase_add_test(tc, profile_and_locks_grow);
	tcase_add_test(tc, caller_caches_subtract);
	tcase_add_test(tc, field_kinds_by_name);
	tcase_add_test(tc, interval_round_trip);
	tcase_add_test(tc, frame_info_kept);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
