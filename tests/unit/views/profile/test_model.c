// SPDX-License-Identifier: BSD-2-Clause
/*
 * The profile view's table and JSON from a model built by hand (the numbers of the classic
 * study's profile: 66,260 ticks, 54,227 in cpu_idle): header, ranking, notes, --by comm,
 * --stacks, -n, view selection, the JSON keys docs/json.md documents, and the JSON read back
 * rendering the same table.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_reader.h"
#include "model/model.h"
#include "model/model_json.h"
#include "format/render.h"

/* a and b both found, a first */
#define ck_assert_before(a, b) ck_assert(((a) != NULL) && ((b) != NULL) && ((a) < (b)))

static char *xs(const char *s)
{
	char *d = strdup(s);

	ck_assert_ptr_nonnull(d);
	return d;
}

static struct sp_profile_row *add_row(struct sp_profile_view *v, const char *fn, const char *obj)
{
	struct sp_profile_row *r = sp_profile_add_row(v);

	ck_assert_ptr_nonnull(r);
	r->function = xs(fn);
	r->object = xs(obj);
	return r;
}

static void add_comm(struct sp_profile_row *r, const char *comm, uint64_t n)
{
	ck_assert_int_eq(sp_comm_list_add(&r->comms, comm, n, 0, 0), 0);
	r->samples += n;
}

/* frames/objects alternate in the varargs, NULL-terminated */
static void add_stack(struct sp_profile_row *r, const char *comm, uint64_t n, size_t nframes,
		      const char *const *fo)
{
	struct sp_stack_row *s = sp_stack_list_add(&r->stacks);

	ck_assert_ptr_nonnull(s);
	s->comm = xs(comm);
	s->count = n;
	s->frames = calloc(nframes, sizeof(char *));
	s->objects = calloc(nframes, sizeof(char *));
	ck_assert(s->frames && s->objects);
	for (size_t i = 0; i < nframes; i++) {
		s->frames[i] = xs(fo[2 * i]);
		s->objects[i] = xs(fo[2 * i + 1]);
	}
	s->nframes = nframes;
}

static void make_run(struct sp_run *run)
{
	struct sp_profile_view *v = &run->profile;
	struct sp_profile_row *r;
	static const char *const st1[] = { "page_remove_rmap", "[kernel]", "zap_pte_range",
					   "[kernel]", "main", "/usr/bin/cc1" };
	static const char *const st2[] = { "page_remove_rmap", "[kernel]", "do_exit", "[kernel]" };

	sp_run_init(run);
	run->schema = xs(SP_SCHEMA);
	run->version = xs("0.1.0");
	run->kernel = xs("6.18.0");
	run->hostname = xs("vm");
	run->options = xs("trace -- make");
	run->ncpus = 2;
	run->elapsed_ns = 1000000000;
	run->target.mode = SP_TARGET_COMMAND;
	run->target.command = xs("make -j2");
	run->target.exit_status = 0;
	v->present = true;
	v->hz = 99;
	v->cpus = 2;
	v->callchains = true;
	v->total = 66260;
	v->idle = 54227;
	v->target = 11330;
	v->other = 703;
	v->unsymbolized = 1000;
	v->user_truncated = 12;
	r = add_row(v, "page_remove_rmap", "[kernel]");
	add_comm(r, "cc1", 4000);
	add_comm(r, "as", 1000);
	add_stack(r, "cc1", 3000, 3, st1);
	add_stack(r, "as", 1000, 2, st2);
	r = add_row(v, "yyparse", "/usr/bin/cc1");
	add_comm(r, "cc1", 5330);
	r = add_row(v, "[unknown]", "[unknown]");
	add_comm(r, "cc1", 700);
	add_comm(r, "as", 300);
	sp_profile_sort(v);
}

static char *render(const struct sp_run *run, const struct render_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(render_run(run, o, f), 0);
	fclose(f);
	return buf;
}

static struct render_opts table_opts(void)
{
	return (struct render_opts){ .format = SP_FMT_TABLE, .views = SP_VIEW_ALL, .nrows = 20,
				     .nstacks = 3 };
}

START_TEST(test_table)
{
	struct render_opts o = table_opts();
	struct sp_run run;
	char *out, *p, *q;

	make_run(&run);
	out = render(&run, &o);
	ck_assert_msg(strstr(out, "\nprofile: 66260 samples @ 99 Hz on 2 CPUs: cpu_idle 81.8%, job "
				  "17.1%, other 1.1%\n"),
		      "header: %s", out);
	ck_assert_ptr_nonnull(strstr(out, "note: 1000 of the 11330 job samples (8.8%) could not be "
					  "symbolized"));
	ck_assert_ptr_nonnull(strstr(out, "note: 12 samples have a truncated user stack"));
	/* ranked by samples, share of the target samples */
	p = strstr(out, "      5330   47.0%  yyparse");
	q = strstr(out, "      5000   44.1%  page_remove_rmap");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(q);
	ck_assert_before(p, q);
	q = strchr(p, '\n');
	ck_assert_msg(q && memmem(p, (size_t)(q - p), "  /usr/bin/cc1", 14),
		      "object of the yyparse row");
	ck_assert_ptr_null(strstr(out, "stack #")); /* no --stacks */
	free(out);

	/* -n 1 */
	o.nrows = 1;
	out = render(&run, &o);
	ck_assert_ptr_nonnull(strstr(out, "(2 more rows: -n 0 shows all)"));
	ck_assert_ptr_null(strstr(out, "page_remove_rmap"));
	free(out);

	/* --stacks: kernel frames bare, user frames with their object */
	o = table_opts();
	o.stacks = true;
	o.nstacks = 1;
	out = render(&run, &o);
	p = strstr(out, "stack #1: 3000 (60.0%), comm cc1\n"
			"          page_remove_rmap\n"
			"          zap_pte_range\n"
			"          main /usr/bin/cc1\n"
			"        (1 more stacks)\n");
	ck_assert_msg(p != NULL, "stacks: %s", out);
	free(out);

	/* a warehouse's older rows: neither the rate nor the CPUs recorded */
	o = table_opts();
	run.profile.hz = 0;
	run.profile.cpus = 0;
	out = render(&run, &o);
	ck_assert_msg(strstr(out, "\nprofile: 66260 samples: cpu_idle 81.8%, job 17.1%, other "
				  "1.1%\n"),
		      "header without rate: %s", out);
	free(out);

	/* only the schedules view: no profile section */
	o.views = SP_VIEW_SCHED;
	out = render(&run, &o);
	ck_assert_ptr_null(strstr(out, "profile:"));
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(test_by_comm)
{
	struct render_opts o = table_opts();
	struct sp_run run;
	char *out, *cc1, *as;

	make_run(&run);
	o.group = SP_GROUP_COMM;
	out = render(&run, &o);
	cc1 = strstr(out, "\ncc1: 10030 samples (88.5%)\n");
	as = strstr(out, "\nas: 1300 samples (11.5%)\n");
	ck_assert_msg(cc1 && as && cc1 < as, "by comm: %s", out);
	/* within cc1, its own counts rank the functions */
	ck_assert_ptr_nonnull(strstr(cc1, "      5330   47.0%  yyparse"));
	ck_assert_before(strstr(cc1, "yyparse"),
			 strstr(cc1, "      4000   35.3%  page_remove_rmap"));
	ck_assert_before(strstr(cc1, "page_remove_rmap"),
			 strstr(cc1, "       700    6.2%  [unknown]"));
	ck_assert_ptr_nonnull(strstr(as, "      1000    8.8%  page_remove_rmap"));
	ck_assert_ptr_null(strstr(as, "yyparse"));
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(test_json)
{
	struct render_opts o = { .format = SP_FMT_JSON, .views = SP_VIEW_ALL };
	struct render_opts t = table_opts();
	const struct json_value *p, *fn, *st;
	struct json_value *doc;
	struct sp_run run, back;
	char *out, *table1, *table2, err[256];
	uint64_t n;
	bool b;

	make_run(&run);
	out = render(&run, &o);
	doc = json_parse(out, strlen(out), err, sizeof(err));
	ck_assert_msg(doc != NULL, "%s", err);
	ck_assert_ptr_null(json_get(doc, "schedules")); /* not present in this run */
	p = json_get(doc, "profile");
	ck_assert_int_eq(json_type(p), JSON_OBJECT);
	ck_assert(json_u64(json_get(p, "hz"), &n) && n == 99);
	ck_assert(json_u64(json_get(p, "cpus"), &n) && n == 2);
	ck_assert(json_bool(json_get(p, "callchains"), &b) && b);
	ck_assert(json_u64(json_get(p, "total"), &n) && n == 66260);
	ck_assert(json_u64(json_get(p, "idle"), &n) && n == 54227);
	ck_assert(json_u64(json_get(p, "target"), &n) && n == 11330);
	ck_assert(json_u64(json_get(p, "other"), &n) && n == 703);
	ck_assert(json_u64(json_get(p, "unsymbolized"), &n) && n == 1000);
	ck_assert(json_u64(json_get(p, "lost"), &n) && n == 0);
	ck_assert(json_u64(json_get(p, "missing_stacks"), &n) && n == 0);
	ck_assert(json_u64(json_get(p, "user_truncated"), &n) && n == 12);
	ck_assert_uint_eq(json_len(json_get(p, "functions")), 3);
	fn = json_at(json_get(p, "functions"), 1);
	ck_assert_str_eq(json_str(json_get(fn, "function")), "page_remove_rmap");
	ck_assert_str_eq(json_str(json_get(fn, "object")), "[kernel]");
	ck_assert(json_u64(json_get(fn, "samples"), &n) && n == 5000);
	ck_assert(json_u64(json_get(json_get(json_get(fn, "comms"), "as"), "samples"), &n) &&
		  n == 1000);
	st = json_at(json_get(fn, "stacks"), 0);
	ck_assert_str_eq(json_str(json_get(st, "comm")), "cc1");
	ck_assert(json_u64(json_get(st, "count"), &n) && n == 3000);
	ck_assert_str_eq(json_str(json_at(json_get(st, "frames"), 2)), "main");
	ck_assert_str_eq(json_str(json_at(json_get(st, "objects"), 2)), "/usr/bin/cc1");
	/* the per-comm summary of the target samples */
	ck_assert(json_u64(json_get(json_get(json_get(p, "comms"), "cc1"), "samples"), &n) &&
		  n == 10030);
	ck_assert_str_eq(json_key_at(json_get(p, "comms"), 0), "cc1");
	json_free(doc);

	/* read back, it renders the same table */
	ck_assert_int_eq(sp_run_from_json(out, strlen(out), &back, err, sizeof(err)), 0);
	t.stacks = true;
	table1 = render(&run, &t);
	table2 = render(&back, &t);
	ck_assert_str_eq(table1, table2);
	free(table1);
	free(table2);
	free(out);
	sp_run_free(&back);

	/* -v schedules leaves the profile out of the document */
	o.views = SP_VIEW_SCHED;
	out = render(&run, &o);
	ck_assert_ptr_null(strstr(out, "\"profile\""));
	free(out);
	sp_run_free(&run);
}
END_TEST

static Suite *profile_view_suite(void)
{
	Suite *s = suite_create("view_profile");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_by_comm);
	tcase_add_test(tc, test_json);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(profile_view_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
