// SPDX-License-Identifier: BSD-2-Clause
/*
 * The schedules view's table (src/views/schedules/model.c) on a run built by hand: the
 * summary line (idle only when there is some), the notes for missing stacks and lost rows,
 * the columns (no wait class as "-"), -n, --by comm, and
 * --stacks with times; the BLOCKED/RUNQ columns only when the rows have the
 * split, the budget lines, the wakers and the sleeps in progress under a row.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../../unit.h"
#include "model/model.h"
#include "model/model_json.h"

#define ck_assert_before(a, b) ck_assert(((a) != NULL) && ((b) != NULL) && ((a) < (b)))

static struct sp_sched_row *add_row(struct sp_run *run, const char *caller, const char *wait)
{
	struct sp_sched_row *r = sp_sched_add_row(&run->sched);

	ck_assert_ptr_nonnull(r);
	r->caller = strdup(caller);
	r->wait = wait ? strdup(wait) : NULL;
	return r;
}

static void comm(struct sp_sched_row *r, const char *name, uint64_t count, uint64_t ns,
		 uint64_t max)
{
	ck_assert_int_eq(sp_comm_list_add(&r->comms, name, count, ns, max), 0);
	r->count += count;
	r->offcpu_ns += ns;
	if (max > r->max_ns)
		r->max_ns = max;
}

static void make_run(struct sp_run *run)
{
	struct sp_sched_row *r;

	sp_run_init(run);
	run->sched.present = true;
	r = add_row(run, "pipe_read", "pipe");
	comm(r, "cat", 60, 3000000, 100000);
	comm(r, "sort", 20, 1000000, 900000);
	r = add_row(run, "[preempted]", NULL);
	comm(r, "sort", 30, 5000, 1000);
	r = add_row(run, "cpu_idle", NULL);
	comm(r, "swapper/0", 10, 1000000000, 500000000);
	run->sched.total = 120;
	run->sched.voluntary = 70;
	run->sched.preempted = 30;
	run->sched.idle = 10;
	sp_sched_sort(&run->sched);
}

static char *table(const struct sp_run *run, const struct render_opts *opts)
{
	struct render_opts o = *opts;

	o.format = SP_FMT_TABLE;
	o.views = SP_VIEW_SCHED;
	return unit_render(run, &o, NULL);
}

START_TEST(summary_and_rows)
{
	struct render_opts o = { .nrows = 20, .nstacks = 3 };
	struct sp_run run;
	char *out;

	make_run(&run);
	out = table(&run, &o);
	ck_assert_ptr_nonnull(strstr(out, "\nschedules: 120 total, 70 voluntary (58.3%), 30 preempted "
					  "(25.0%), 10 idle\n"
					  "     COUNT   SHARE    OFF-CPU        MAX  WAIT          CALLER\n"
					  "        80   66.7%      4.0ms    900.0us  pipe          pipe_read\n"
					  "        30   25.0%      5.0us      1.0us  -             [preempted]\n"
					  "        10    8.3%     1.000s    500.0ms  -             cpu_idle\n"));
	ck_assert_ptr_null(strstr(out, "note:"));
	ck_assert_ptr_null(strstr(out, "more rows"));
	free(out);
	/* notes; no idle: not mentioned */
	run.sched.idle = 0;
	run.sched.missing_stacks = 7;
	run.sched.lost_rows = 9;
	o.nrows = 2;
	out = table(&run, &o);
	ck_assert_ptr_nonnull(strstr(out, "30 preempted (25.0%)\n"
					  "  note: 7 schedules have no kernel stack"));
	ck_assert_ptr_nonnull(strstr(out, "  note: 9 schedules are in the totals but in no row"));
	ck_assert_ptr_nonnull(strstr(out, "[preempted]\n  (1 more rows: -n 0 shows all)\n"));
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(by_comm)
{
	struct render_opts o = { .nrows = 20, .nstacks = 3, .group = SP_GROUP_COMM };
	struct sp_run run;
	const char *cat, *sort, *sw;
	char *out;

	make_run(&run);
	out = table(&run, &o);
	cat = strstr(out, "\ncat: 60 schedules (50.0%)\n");
	sort = strstr(out, "\nsort: 50 schedules (41.7%)\n");
	sw = strstr(out, "\nswapper/0: 10 schedules (8.3%)\n");
	ck_assert_before(cat, sort);
	ck_assert_before(sort, sw);
	/* within sort, the rows come in the view's ranking (pipe_read, 80 in all, before
	 * [preempted], 30), not by sort's own counts (20 and 30): "close enough", says
	 * print_by_comm; the profile view ranks by the comm's counts
	 * (tests/unit/views/profile/test_model.c) */
	ck_assert_before(strstr(sort, "        20   16.7%      1.0ms    900.0us  pipe          "
				      "pipe_read\n"),
			 strstr(sort, "        30   25.0%      5.0us      1.0us  -             "
				      "[preempted]\n"));
	ck_assert_before(sort, strstr(sort, "pipe_read"));
	ck_assert_before(strstr(sort, "pipe_read"), sw);
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(stacks)
{
	static const char *const frames[] = { "__schedule", "pipe_read" };
	static const char *const objects[] = { "[kernel]", "[kernel]" };
	struct render_opts o = { .nrows = 1, .nstacks = 3, .stacks = true };
	struct sp_run run;
	struct sp_stack_row *s;
	char *out;

	make_run(&run);
	for (int pid = 1; pid <= 2; pid++) { /* two processes of cat: one stack in the table */
		s = sp_stack_list_add(&run.sched.rows[0].stacks);
		s->comm = strdup("cat");
		s->pid = pid;
		s->count = 20;
		s->time_ns = 500000;
		s->frames = calloc(2, sizeof(char *));
		s->objects = calloc(2, sizeof(char *));
		for (int i = 0; i < 2; i++) {
			s->frames[i] = strdup(frames[i]);
			s->objects[i] = strdup(objects[i]);
		}
		s->nframes = 2;
	}
	out = table(&run, &o);
	ck_assert_ptr_nonnull(strstr(out, "pipe_read\n"
					  "        stack #1: 40 (50.0%), off-CPU 1.0ms, comm cat\n"
					  "          __schedule\n"
					  "          pipe_read\n"
					  "  (2 more rows: -n 0 shows all)\n"));
	ck_assert_ptr_null(strstr(out, "stack #2"));
	free(out);
	sp_run_free(&run);
}
END_TEST

static void waker(struct sp_sched_row *r, const char *comm, const char *fn, uint64_t count)
{
	struct sp_waker *w = SP_ARRAY_ADD(r->wakers.v, r->wakers.n, r->wakers.cap);

	ck_assert_ptr_nonnull(w);
	w->comm = strdup(comm);
	w->function = fn ? strdup(fn) : NULL;
	w->count = count;
}

/* make_run with the split on the pipe_read and [preempted] rows (sorted: rows 0 and 1). */
static void make_split_run(struct sp_run *run)
{
	struct sp_sched_row *r;

	make_run(run);
	r = &run->sched.rows[0]; /* pipe_read: 80, 4.0ms */
	ck_assert_str_eq(r->caller, "pipe_read");
	r->has_runq = true;
	r->blocked_ns = 3000000;
	r->runq_ns = 1000000;
	r->runq_p50_ns = 8000;
	r->runq_p99_ns = 65000;
	r->runq_max_ns = 70000;
	r = &run->sched.rows[1]; /* [preempted]: all of it waiting for a CPU */
	ck_assert_str_eq(r->caller, "[preempted]");
	r->has_runq = true;
	r->runq_ns = r->offcpu_ns;
	r->runq_p99_ns = r->runq_max_ns = 1000;
}

START_TEST(runq_columns)
{
	struct render_opts o = { .nrows = 20, .nstacks = 3 };
	struct sp_run run;
	char *out;

	make_split_run(&run);
	out = table(&run, &o);
	ck_assert_ptr_nonnull(strstr(out,
		"     COUNT   SHARE    OFF-CPU        MAX    BLOCKED       RUNQ   RUNQ-P99   RUNQ-MAX  WAIT          CALLER\n"
		"        80   66.7%      4.0ms    900.0us      3.0ms      1.0ms     65.0us     70.0us  pipe          pipe_read\n"
		"        30   25.0%      5.0us      1.0us        0ns      5.0us      1.0us      1.0us  -             [preempted]\n"
		/* a row without the split (cpu_idle here) has none of it */
		"        10    8.3%     1.000s    500.0ms          -          -          -          -  -             cpu_idle\n"));
	free(out);
	/* a longest wait without a p99 (a warehouse's rows): "-", not 0ns */
	run.sched.rows[0].runq_p99_ns = 0;
	out = table(&run, &o);
	ck_assert_ptr_nonnull(strstr(out, "      3.0ms      1.0ms          -     70.0us  pipe          pipe_read\n"));
	free(out);
	/* without any row with the split: the columns of before */
	for (size_t i = 0; i < run.sched.nrows; i++)
		run.sched.rows[i].has_runq = false;
	out = table(&run, &o);
	ck_assert_ptr_null(strstr(out, "RUNQ"));
	ck_assert_ptr_nonnull(strstr(out, "     COUNT   SHARE    OFF-CPU        MAX  WAIT          CALLER\n"));
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(budget)
{
	struct render_opts o = { .nrows = 20, .nstacks = 3 };
	struct sp_budget *b;
	struct sp_run run;
	char *out;

	make_run(&run);
	out = table(&run, &o);
	ck_assert_ptr_null(strstr(out, "budget"));
	free(out);
	b = &run.sched.budget;
	b->present = true;
	b->tasks = 3;
	b->oncpu_ns = 6000000000ULL;
	b->runq_ns = 1000000000ULL;
	b->blocked.pipe = 1000000000ULL;
	b->blocked.child = 2000000000ULL;
	b->blocked.other = 0;
	b->blocked.sleep = 500000000ULL;
	b->blocked_ns = 3500000000ULL;
	out = table(&run, &o);
	/* shares of the task time, 10.5s; classes largest first, none at 0 */
	ck_assert_ptr_nonnull(strstr(out, "10 idle\n"
		"budget: 3 tasks, 10.500s task time: on CPU 6.000s (57.1%), waiting for a CPU 1.000s "
		"(9.5%), blocked 3.500s (33.3%)\n"
		"  blocked in: child 2.000s (19.0%), pipe 1.000s (9.5%), sleep 500.0ms (4.8%)\n"
		"     COUNT"));
	free(out);
	/* --timeline's misses: the rows with the most, ties in row order, at most 3 */
	b->idle_miss_ns = 30000;
	b->missed_wakeups = 1;
	run.sched.rows[0].idle_miss_ns = 10000;
	run.sched.rows[1].idle_miss_ns = 10000;
	run.sched.rows[2].idle_miss_ns = 10000;
	out = table(&run, &o);
	ck_assert_ptr_nonnull(strstr(out, "  while an allowed CPU sat idle: 30.0us of the wait for a "
					  "CPU (0.0%), 1 wake-up onto a busy CPU; pipe_read 10.0us, "
					  "[preempted] 10.0us, cpu_idle 10.0us\n"));
	free(out);
	run.sched.rows[1].idle_miss_ns = 20000;
	run.sched.rows[2].idle_miss_ns = 0;
	out = table(&run, &o);
	ck_assert_ptr_nonnull(strstr(out, "wake-up onto a busy CPU; [preempted] 20.0us, pipe_read "
					  "10.0us\n"));
	free(out);
	b->idle_miss_ns = b->missed_wakeups = 0;
	run.sched.rows[0].idle_miss_ns = run.sched.rows[1].idle_miss_ns = 0;
	/* nothing blocked: no second line */
	memset(&b->blocked, 0, sizeof(b->blocked));
	b->blocked_ns = 0;
	b->tasks = 1;
	out = table(&run, &o);
	ck_assert_ptr_nonnull(strstr(out, "budget: 1 task, 7.000s task time: on CPU 6.000s (85.7%), "
					  "waiting for a CPU 1.000s (14.3%), blocked 0ns (0.0%)\n"
					  "     COUNT"));
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(wakers_and_unfinished)
{
	struct render_opts o = { .nrows = 20, .nstacks = 3 };
	struct sp_run run;
	struct sp_sched_row *r;
	char *out;

	make_split_run(&run);
	r = &run.sched.rows[0];
	waker(r, "sort", "anon_pipe_write", 97);
	waker(r, "[irq]", NULL, 1);
	waker(r, "make", "do_exit", 1);
	waker(r, "cc1", "x", 1);
	r->unfinished = 2;
	run.sched.rows[1].unfinished = 1;
	out = table(&run, &o);
	ck_assert_ptr_nonnull(strstr(out, "pipe_read\n"
		"        2 sleeps in progress at the end (charged up to it)\n"
		"        woken by sort (anon_pipe_write) 97.0%, [irq] 1.0%, make (do_exit) 1.0%, 1 more\n"
		"        30"));
	ck_assert_ptr_nonnull(strstr(out, "[preempted]\n"
					  "        1 sleep in progress at the end (charged up to it)\n"
					  "        10"));
	free(out);
	/* --by comm: under each comm's line, the whole row's (all comms when it has several) */
	o.group = SP_GROUP_COMM;
	out = table(&run, &o);
	ck_assert_ptr_nonnull(strstr(out, "  pipe          pipe_read\n"
		"        2 sleeps (all comms) in progress at the end (charged up to it)\n"
		"        woken (all comms) by sort (anon_pipe_write) 97.0%, [irq] 1.0%, make (do_exit) 1.0%, 1 more\n"));
	/* [preempted] has one comm: no "(all comms)" */
	ck_assert_ptr_nonnull(strstr(out, "[preempted]\n"
					  "        1 sleep in progress at the end (charged up to it)\n"));
	free(out);
	sp_run_free(&run);
}
END_TEST

static void taker(struct sp_sched_row *r, const char *kind, const char *comm,
		  const char *cgroup, const char *where, uint64_t count, uint64_t ns)
{
	struct sp_cpu_taker *t = SP_ARRAY_ADD(r->takers.v, r->takers.n, r->takers.cap);

	ck_assert_ptr_nonnull(t);
	t->kind = strdup(kind);
	t->comm = strdup(comm);
	t->cgroup = cgroup ? strdup(cgroup) : NULL;
	t->where = strdup(where);
	t->count = count;
	t->ns = ns;
}

/*
 * Who took a row's CPU: a line per kind, the top three by time, then how many more; the root
 * cgroup (and an unknown one) unsaid; as JSON, each taker with its keys, and back.
 */
START_TEST(cpu_takers)
{
	struct render_opts o = { .nrows = 20, .nstacks = 3 };
	struct sp_run run, back;
	struct sp_sched_row *r;
	char *out;

	make_split_run(&run);
	r = &run.sched.rows[1];
	taker(r, "preempted-by", "spin", "/job", "outside", 40, 1200000000);
	taker(r, "ran-before", "spin", "/", "outside", 118, 1100000000);
	taker(r, "ran-before", "sort", NULL, "inside", 2, 3000000);
	taker(r, "ran-before", "a", "/", "outside", 1, 2000);
	taker(r, "ran-before", "b", "/", "outside", 1, 1000);
	sp_sched_sort(&run.sched);
	out = table(&run, &o);
	ck_assert_ptr_nonnull(strstr(out, "[preempted]\n"
		"        preempted by: spin (outside /job) 40 times, 1.200s of waits after\n"
		"        ran before the switch-ins: spin (outside) 118 times, 1.100s of the waits; "
		"sort (inside) 2 times, 3.0ms of the waits; a (outside) 1 time, 2.0us of the waits; "
		"1 more\n"));
	free(out);
	o.format = SP_FMT_JSON;
	o.views = SP_VIEW_SCHED;
	out = unit_render(&run, &o, NULL);
	ck_assert_ptr_nonnull(strstr(out, "{\"kind\": \"preempted-by\", \"comm\": \"spin\", "
					  "\"cgroup\": \"/job\", \"where\": \"outside\", "
					  "\"count\": 40, \"ns\": 1200000000}"));
	ck_assert_ptr_nonnull(strstr(out, "\"cgroup\": null, \"where\": \"inside\""));
	char err[256];

	ck_assert_int_eq(sp_run_from_json(out, strlen(out), &back, err, sizeof(err)), 0);
	ck_assert_uint_eq(back.sched.rows[1].takers.n, 5);
	ck_assert_str_eq(back.sched.rows[1].takers.v[0].kind, "preempted-by");
	ck_assert_str_eq(back.sched.rows[1].takers.v[1].comm, "spin");
	ck_assert_ptr_null(back.sched.rows[1].takers.v[2].cgroup);
	sp_run_free(&back);
	free(out);
	/* the view's sum: the same taker of two rows once, kinds and cgroups apart */
	taker(&run.sched.rows[0], "ran-before", "spin", "/", "outside", 2, 100000000);
	ck_assert_int_eq(sp_sched_sum_takers(&run.sched), 0);
	ck_assert_uint_eq(run.sched.takers.n, 5);
	/* 1.200s each: by count then */
	ck_assert_str_eq(run.sched.takers.v[0].kind, "ran-before");
	ck_assert_str_eq(run.sched.takers.v[0].comm, "spin");
	ck_assert_uint_eq(run.sched.takers.v[0].count, 120);
	ck_assert_uint_eq(run.sched.takers.v[0].ns, 1200000000);
	ck_assert_str_eq(run.sched.takers.v[1].kind, "preempted-by");
	ck_assert_uint_eq(run.sched.takers.v[1].count, 40);
	sp_run_free(&run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("view_schedules");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, summary_and_rows);
	tcase_add_test(tc, by_comm);
	tcase_add_test(tc, stacks);
	tcase_add_test(tc, runq_columns);
	tcase_add_test(tc, budget);
	tcase_add_test(tc, wakers_and_unfinished);
	tcase_add_test(tc, cpu_takers);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
