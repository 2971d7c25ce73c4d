// SPDX-License-Identifier: BSD-2-Clause
/*
 * The timeline view (src/views/timeline/model.c): its table (the critical path as
 * a sentence and a ranked table, the parallelism with its means, the serial phases, lost
 * events), the stack formats on a run with only a timeline (nothing to draw, no failure),
 * nested rows (sp_schema_path), and its diff: the ranked critical path compared in time
 * whatever --value says, the budget and the parallelism in the table and the JSON.
 */
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../unit.h"
#include "format/diff.h"
#include "base/json_reader.h"
#include "model/model.h"
#include "model/schema.h"
#include "model/view.h"

#define MS 1000000ULL

static char *table(const struct sp_run *run, unsigned int views, unsigned int nrows)
{
	struct render_opts o = { .format = SP_FMT_TABLE, .views = views, .nrows = nrows,
				 .nstacks = 3 };

	return unit_render(run, &o, NULL);
}

START_TEST(state_names)
{
	ck_assert_str_eq(sp_tl_state_name(SP_TL_RUNNING), "running");
	ck_assert_str_eq(sp_tl_state_name(SP_TL_RUNNABLE), "runnable");
	ck_assert_str_eq(sp_tl_state_name(SP_TL_BLOCKED), "blocked");
	ck_assert_str_eq(sp_tl_state_name((enum sp_tl_state)7), "?");
	ck_assert_str_eq(sp_tl_state_name((enum sp_tl_state)-1), "?");
}
END_TEST

START_TEST(par_mean)
{
	const struct sp_par_bucket h[] = { { 0, 1 * MS }, { 2, 2 * MS }, { 1, 1 * MS } };

	ck_assert_double_eq_tol(sp_par_mean(h, 3), 5.0 / 4.0, 1e-12); /* (0 + 4 + 1) / 4 */
	ck_assert_double_eq(sp_par_mean(h, 0), 0.0);
	ck_assert_double_eq(sp_par_mean(h, 1), 0.0); /* all the time with 0 */
}
END_TEST

/* Two histograms side by side: unsorted, repeated, huge n (a crafted file) in n log n. */
START_TEST(par_pairs)
{
	const struct sp_par_bucket a[] = { { INT_MAX, 5 }, { 1, 2 }, { 0, 1 }, { 1, 3 } };
	const struct sp_par_bucket b[] = { { 2, 7 }, { 0, UINT64_MAX } };
	struct sp_par_pair *p;
	struct sp_run run;
	size_t n;
	char *out;

	ck_assert_int_eq(sp_par_pairs(a, 4, b, 2, &p, &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(p[0].n, 0);
	ck_assert_uint_eq(p[0].a, 1);
	ck_assert_uint_eq(p[0].b, INT64_MAX); /* sums saturate, as every diff sum */
	ck_assert_int_eq(p[1].n, 1);
	ck_assert_uint_eq(p[1].a, 5); /* 2 + 3 */
	ck_assert_uint_eq(p[1].b, 0);
	ck_assert_int_eq(p[2].n, 2);
	ck_assert_uint_eq(p[2].b, 7);
	ck_assert_int_eq(p[3].n, INT_MAX);
	free(p);
	ck_assert_int_eq(sp_par_pairs(a, 0, b, 0, &p, &n), 0);
	ck_assert_uint_eq(n, 0);
	free(p);

	/* the table: one line per n present, whatever n */
	sp_run_init(&run);
	run.timeline.present = true;
	for (size_t i = 0; i < 4; i++)
		*SP_ARRAY_ADD(run.timeline.running, run.timeline.nrunning, run.timeline.running_cap) = a[i];
	out = table(&run, SP_VIEW_TIMELINE, 20);
	ck_assert_ptr_nonnull(strstr(out, "     TASKS    RUNNING   SHARE   RUNNABLE   SHARE\n"
					  "         0        1ns    9.1%        0ns    0.0%\n"
					  "         1        5ns   45.5%        0ns    0.0%\n"
					  "2147483647        5ns   45.5%        0ns    0.0%\n"
					  "serial"));
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(table_fixture)
{
	struct sp_run run;
	char *out;

	unit_load(FIX("run_tl.json"), &run);
	out = table(&run, SP_VIEW_TIMELINE, 20);
	ck_assert_ptr_null(strstr(out, "schedules:")); /* the timeline only */
	ck_assert_ptr_nonnull(strstr(out,
		"\ntimeline: 4 tasks, 21 segments, 40 events (ring buffer 4.0 MiB)\n"
		"critical path: 2.490s of 2.500s elapsed, back from the end of make (tid 500) at 2.490s\n"
		"  ld running 52.2%, cc1 running 36.9%, ld in io_schedule 4.0%, make running 3.0%\n"
		"     SHARE       TIME  ON THE PATH\n"
		"     52.2%     1.300s  ld running\n"));
	ck_assert_ptr_nonnull(strstr(out, "      2.0%     50.0ms  cc1 waiting for a CPU ([preempted])\n"));
	/* no rank of the fixture is marked alone */
	ck_assert_ptr_null(strstr(out, "running alone"));
	ck_assert_ptr_nonnull(strstr(out,
		"parallelism: 1.26 tasks running on average (2 CPUs), 0.05 runnable\n"
		"     TASKS    RUNNING   SHARE   RUNNABLE   SHARE\n"
		"         0    125.0ms    5.0%     2.375s   95.4%\n"
		"         1     1.585s   63.7%    110.0ms    4.4%\n"
		"         2    780.0ms   31.3%      5.0ms    0.2%\n"
		"serial phases (one task running or runnable, CPUs idle, at least 100ms): 3, 1.400s (56.0% of elapsed)\n"
		"     START       TIME  COMM (TID)\n"
		"   900.0ms    100.0ms  cc1 (501)\n"));
	ck_assert_ptr_null(strstr(out, "lost"));
	free(out);
	/* -n: the ranked path and the phases; the histogram is whole */
	out = table(&run, SP_VIEW_TIMELINE, 1);
	ck_assert_ptr_nonnull(strstr(out, "ld running\n  (8 more rows: -n 0 shows all)\nparallelism"));
	ck_assert_ptr_nonnull(strstr(out, "cc1 (501)\n  (2 more rows: -n 0 shows all)\n"));
	ck_assert_ptr_nonnull(strstr(out, "         2    780.0ms"));
	free(out);
	/* not selected: not shown; the default views (SP_VIEW_ALL) leave it out */
	out = table(&run, SP_VIEW_ALL, 20);
	ck_assert_ptr_null(strstr(out, "timeline:"));
	ck_assert_ptr_nonnull(strstr(out, "schedules:"));
	free(out);
	sp_run_free(&run);
}
END_TEST

/* An empty timeline, lost events, an end task not in tasks, a buffer under 1 MiB. */
START_TEST(table_edges)
{
	struct sp_run run;
	char *out;

	sp_run_init(&run);
	run.timeline.present = true;
	run.timeline.lost = 12;
	run.timeline.events = 100;
	run.timeline.buffer_bytes = 65536;
	run.timeline.end_tid = 77;
	run.ncpus = 4;
	out = table(&run, SP_VIEW_EVERY, 20);
	ck_assert_ptr_nonnull(strstr(out,
		"\ntimeline: 0 tasks, 0 segments, 100 events (ring buffer 64.0 KiB)\n"
		"  note: 12 events lost (the ring buffer was full: give it more room); the timeline "
		"and what follows from it have gaps\n"
		"critical path (from incomplete data: events lost): 0ns of 0ns elapsed, back from "
		"the end of ? (tid 77) at 0ns\n"
		"parallelism (from incomplete data: events lost): 0.00 tasks running on average "
		"(4 CPUs), 0.00 runnable\n"
		"serial phases (one task running or runnable, CPUs idle, at least 100ms; from "
		"incomplete data: events lost): 0, 0ns\n"));
	ck_assert_ptr_null(strstr(out, "SHARE"));
	free(out);
	sp_run_free(&run);
}
END_TEST

/* The stack formats with only a timeline: nothing to draw, but a valid output. */
/* A rank marked alone (critpath.c: no other task of the job ran) says so, apart. */
START_TEST(alone)
{
	struct sp_run run;
	struct sp_timeline *tl;
	struct sp_cp_rank *r;
	char *out;

	sp_run_init(&run);
	tl = &run.timeline;
	tl->present = true;
	tl->cp_total_ns = 1000 * MS;
	for (int i = 0; i < 2; i++) {
		r = SP_ARRAY_ADD(tl->cp_ranks, tl->ncp_ranks, tl->cp_ranks_cap);
		ck_assert_ptr_nonnull(r);
		r->comm = strdup(i ? "a" : "ld");
		r->alone = !i;
		r->ns = (uint64_t)(i ? 400 : 600) * MS;
	}
	out = table(&run, SP_VIEW_TIMELINE, 20);
	ck_assert_ptr_nonnull(strstr(out, "\n  ld running alone 60.0%, a running 40.0%\n"));
	ck_assert_ptr_nonnull(strstr(out, "     60.0%    600.0ms  ld running alone\n"));
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(stack_formats)
{
	static const enum sp_format formats[] = { SP_FMT_FOLDED, SP_FMT_PPROF, SP_FMT_SVG,
						  SP_FMT_HTML };
	struct sp_run run;
	size_t len;
	char *out;

	unit_load(FIX("run_tl.json"), &run);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		out = unit_render_fmt(&run, formats[i], SP_VIEW_TIMELINE, SP_VALUE_COUNT, &len);
		if (formats[i] == SP_FMT_FOLDED)
			ck_assert_uint_eq(len, 0);
		else
			ck_assert_uint_gt(len, 0);
		if (formats[i] == SP_FMT_HTML)
			ck_assert_ptr_nonnull(strstr(out, "This run has no view with stacks to draw."));
		free(out);
	}
	/* with the schedules too, they draw the schedules */
	out = unit_render_fmt(&run, SP_FMT_FOLDED, SP_VIEW_EVERY, SP_VALUE_COUNT, &len);
	ck_assert_ptr_nonnull(strstr(out, "make;do_syscall_64;do_wait 2\n"));
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(nested_rows)
{
	const struct sp_view_ops *v = &sp_view_timeline;
	const struct sp_field *f;
	struct sp_run run;
	const char *rows;
	size_t off, size;

	f = sp_schema_path(v->schema, "critical_path.ranked", &off);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->type, SP_T_ARRAY);
	ck_assert_uint_eq(off, 0);
	ck_assert_ptr_nonnull(sp_schema_path(v->schema, "segments", &off));
	ck_assert_ptr_null(sp_schema_path(v->schema, "critical_path.nope", &off));
	ck_assert_ptr_null(sp_schema_path(v->schema, "segments.x", &off)); /* not an object */
	ck_assert_ptr_null(sp_schema_path(v->schema, "critical", &off));   /* a prefix */
	f = sp_schema_path(sp_view_schedules.schema, "budget.blocked.child", &off);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(off, offsetof(struct sp_sched_view, budget.blocked));
	ck_assert_uint_eq(f->off, offsetof(struct sp_budget_blocked, child));

	unit_load(FIX("run_tl.json"), &run);
	ck_assert_uint_eq(sp_view_rows(v, &run, "critical_path.ranked", &rows, &size), 9);
	ck_assert_ptr_eq(rows, (const char *)run.timeline.cp_ranks);
	ck_assert_uint_eq(size, sizeof(struct sp_cp_rank));
	ck_assert_uint_eq(sp_view_rows(v, &run, NULL, &rows, &size), 0);
	sp_run_free(&run);
}
END_TEST

static char *diff_out(const struct sp_diff *d, bool json)
{
	struct sp_diff_opts o = { "a.json", "b.json", 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(json ? sp_diff_write_json(d, &o, m) : sp_diff_write_table(d, &o, m), 0);
	ck_assert_int_eq(fclose(m), 0);
	return buf;
}

START_TEST(diff_table)
{
	struct sp_run a, b;
	struct sp_diff d;
	const struct sp_diff_view *cp = NULL;
	char *out;

	unit_load(FIX("run_tl.json"), &a);
	unit_load(FIX("run_tl_b.json"), &b);
	/* --value count: the critical path is still in time */
	ck_assert_int_eq(sp_diff_build(&a, &b, SP_VIEW_EVERY, SP_VALUE_COUNT, &d), 0);
	for (size_t i = 0; i < d.nviews; i++)
		if (!strcmp(d.views[i].key, "critical_path"))
			cp = &d.views[i];
	ck_assert_ptr_nonnull(cp);
	ck_assert_int_eq(cp->value, SP_VALUE_TIME);
	ck_assert_int_eq(d.views[0].value, SP_VALUE_COUNT); /* schedules: as asked */
	ck_assert_uint_eq(cp->a_total, 2490 * MS);
	ck_assert_uint_eq(cp->b_total, 2990 * MS);
	ck_assert_str_eq(cp->rows[0].name, "ld");
	ck_assert_ptr_null(cp->rows[0].detail);
	ck_assert_uint_eq(cp->rows[0].a, 1300 * MS);
	ck_assert_uint_eq(cp->rows[0].b, 1800 * MS);
	out = diff_out(&d, false);
	ck_assert_ptr_nonnull(strstr(out,
		"critical path          2.490s -> 2.990s (+20.1%)\n"
		"serial time            1.400s -> 1.900s (+35.7%)\n"
		"budget: tasks          4 -> 5 (+25.0%)\n"
		"  task time            5.765s -> 7.065s (+22.5%)\n"
		"  on CPU               3.145s -> 3.645s (+15.9%)\n"
		"  waiting for a CPU    120.0ms -> 120.0ms (+0.0%)\n"
		"  blocked              2.500s -> 3.300s (+32.0%)\n"
		"    pipe               0ns -> 300.0ms (new)\n"
		"    io                 120.0ms -> 120.0ms (+0.0%)\n"
		"    child              2.380s -> 2.880s (+21.0%)\n"));
	ck_assert_ptr_null(strstr(out, "    sleep")); /* 0 in both */
	ck_assert_ptr_nonnull(strstr(out,
		"critical path by comm and caller (time on the critical path): 2.490s -> 2.990s (+20.1%)\n"
		"           A            B        DELTA     OF A  COMM (CALLER)\n"
		"      1.300s       1.800s     +500.0ms   +20.1%  ld (running)\n"));
	ck_assert_ptr_nonnull(strstr(out, "     100.0ms      100.0ms          0ns    +0.0%  ld (io_schedule)\n"));
	ck_assert_ptr_nonnull(strstr(out,
		"\nparallelism: mean running 1.26 -> 1.22 (-0.04), mean runnable 0.05 -> 0.04 (-0.01)\n"
		"           A            B        DELTA  TASKS RUNNING\n"
		"     125.0ms      125.0ms          0ns  0\n"
		"      1.585s       2.085s     +500.0ms  1\n"
		"     780.0ms      780.0ms          0ns  2\n"
		"           A            B        DELTA  TASKS RUNNABLE\n"
		"      2.375s       2.875s     +500.0ms  0\n"));
	free(out);
	sp_diff_free(&d);
	/*
	 * --views schedules: no critical path table, no parallelism (the summary has the
	 * totals of every view both runs have, as before); the budget stays
	 */
	ck_assert_int_eq(sp_diff_build(&a, &b, SP_VIEW_SCHED, SP_VALUE_COUNT, &d), 0);
	out = diff_out(&d, false);
	ck_assert_ptr_null(strstr(out, "critical path by"));
	ck_assert_ptr_null(strstr(out, "parallelism"));
	ck_assert_ptr_nonnull(strstr(out, "budget: tasks"));
	free(out);
	sp_diff_free(&d);
	/* --views timeline: no budget */
	ck_assert_int_eq(sp_diff_build(&a, &b, SP_VIEW_TIMELINE, SP_VALUE_COUNT, &d), 0);
	out = diff_out(&d, false);
	ck_assert_ptr_null(strstr(out, "budget"));
	ck_assert_ptr_nonnull(strstr(out, "parallelism: mean"));
	free(out);
	sp_diff_free(&d);
	/* one run without either: neither section */
	a.sched.budget.present = false;
	a.timeline.present = false;
	ck_assert_int_eq(sp_diff_build(&a, &b, SP_VIEW_EVERY, SP_VALUE_COUNT, &d), 0);
	out = diff_out(&d, false);
	ck_assert_ptr_null(strstr(out, "budget"));
	ck_assert_ptr_null(strstr(out, "parallelism"));
	ck_assert_ptr_nonnull(strstr(out, "(time on the critical path): only in B"));
	free(out);
	sp_diff_free(&d);
	sp_run_free(&a);
	sp_run_free(&b);
}
END_TEST

static const struct json_value *get(const struct json_value *o, const char *path)
{
	char key[64];

	while (o && *path) {
		size_t n = strcspn(path, ".");

		ck_assert_uint_lt(n, sizeof(key));
		memcpy(key, path, n);
		key[n] = '\0';
		o = json_get(o, key);
		path += n + (path[n] == '.');
	}
	ck_assert_msg(o != NULL, "no %s", path);
	return o;
}

static uint64_t get_u64(const struct json_value *o, const char *path)
{
	uint64_t v = 0;

	ck_assert(json_u64(get(o, path), &v));
	return v;
}

START_TEST(diff_json)
{
	struct sp_run a, b;
	struct sp_diff d;
	struct json_value *doc;
	const struct json_value *views, *h, *v;
	char err[128], *out;
	bool cp_seen = false;

	unit_load(FIX("run_tl.json"), &a);
	unit_load(FIX("run_tl_b.json"), &b);
	ck_assert_int_eq(sp_diff_build(&a, &b, SP_VIEW_EVERY, SP_VALUE_COUNT, &d), 0);
	out = diff_out(&d, true);
	doc = json_parse(out, strlen(out), err, sizeof(err));
	ck_assert_msg(doc != NULL, "%s", err);
	ck_assert_uint_eq(get_u64(doc, "summary.critical_path_ns.b"), 2990 * MS);
	ck_assert_uint_eq(get_u64(doc, "summary.serial_ns.a"), 1400 * MS);
	ck_assert_uint_eq(get_u64(doc, "summary.budget.task_ns.a"), 5765 * MS);
	ck_assert_uint_eq(get_u64(doc, "summary.budget.blocked.child.b"), 2880 * MS);
	ck_assert_uint_eq(get_u64(doc, "summary.budget.blocked.pipe.delta"), 300 * MS);
	ck_assert_int_eq(json_type(get(doc, "summary.budget.blocked.pipe.delta_pct")), JSON_NULL);
	ck_assert_uint_eq(json_len(get(doc, "summary.budget.blocked")), 11); /* every class */
	h = get(doc, "summary.parallelism.running");
	ck_assert_uint_eq(json_len(h), 3);
	ck_assert_uint_eq(get_u64(json_at(h, 1), "running"), 1);
	ck_assert_uint_eq(get_u64(json_at(h, 1), "delta"), 500 * MS);
	ck_assert_uint_eq(json_len(get(doc, "summary.parallelism.runnable")), 3);
	{
		double m = 0;

		ck_assert(json_double(get(doc, "summary.parallelism.mean_running.a"), &m));
		ck_assert_double_eq_tol(m, (125.0 * 0 + 1585.0 * 1 + 780.0 * 2) / 2490.0, 1e-9);
	}
	views = get(doc, "views");
	for (size_t i = 0; i < json_len(views); i++) {
		v = json_at(views, i);
		if (strcmp(json_str(get(v, "view")), "critical_path")) {
			ck_assert_ptr_null(json_get(v, "value")); /* the diff's */
			continue;
		}
		cp_seen = true;
		ck_assert_str_eq(json_str(get(v, "value")), "time");
		ck_assert_str_eq(json_str(get(json_at(get(v, "rows"), 0), "name")), "ld");
		ck_assert_int_eq(json_type(get(json_at(get(v, "rows"), 0), "detail")), JSON_NULL);
	}
	ck_assert(cp_seen);
	json_free(doc);
	free(out);
	sp_diff_free(&d);
	/* --value time: the critical path's entry has no "value" of its own */
	ck_assert_int_eq(sp_diff_build(&a, &b, SP_VIEW_TIMELINE, SP_VALUE_TIME, &d), 0);
	out = diff_out(&d, true);
	doc = json_parse(out, strlen(out), err, sizeof(err));
	ck_assert_ptr_nonnull(doc);
	ck_assert_ptr_null(json_get(json_at(get(doc, "views"), 0), "value"));
	ck_assert_ptr_null(json_get(get(doc, "summary"), "budget"));
	json_free(doc);
	free(out);
	sp_diff_free(&d);
	sp_run_free(&a);
	sp_run_free(&b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("view_timeline");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, state_names);
	tcase_add_test(tc, par_mean);
	tcase_add_test(tc, par_pairs);
	tcase_add_test(tc, table_fixture);
	tcase_add_test(tc, table_edges);
	tcase_add_test(tc, alone);
	tcase_add_test(tc, stack_formats);
	tcase_add_test(tc, nested_rows);
	tcase_add_test(tc, diff_table);
	tcase_add_test(tc, diff_json);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
