/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for `schedprof diff`'s engine: the rows and deltas of two fixture runs (rows on
 * one side only included, ranking by absolute change), a run against itself (all zeros),
 * times instead of counts, views present in one run only, the table and JSON outputs, and
 * saturation at INT64_MAX.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/diff.h"
#include "base/json_reader.h"
#include "model/model_json.h"

#define FIX(name) FIXTURES_DIR "/" name
#define ALL_VIEWS (SP_VIEW_SCHED | SP_VIEW_PROFILE | SP_VIEW_LOCKS)

static void load_ok(const char *path, struct sp_run *run)
{
	char err[256];
	int rc = sp_run_load_json(path, run, err, sizeof(err));

	ck_assert_msg(rc == 0, "%s: %d: %s", path, rc, err);
}

static char *write_mem(const struct sp_diff *d, bool json, unsigned int nrows)
{
	struct sp_diff_opts o = { "a.json", "b.json", nrows };
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(json ? sp_diff_write_json(d, &o, m) : sp_diff_write_table(d, &o, m), 0);
	ck_assert_int_eq(fclose(m), 0);
	return buf;
}

static void check_row(const struct sp_diff_row *r, const char *name, const char *detail,
		      bool in_a, uint64_t a, bool in_b, uint64_t b)
{
	ck_assert_str_eq(r->name, name);
	if (detail)
		ck_assert_str_eq(r->detail, detail);
	else
		ck_assert_ptr_null(r->detail);
	ck_assert_int_eq(r->in_a, in_a);
	ck_assert_int_eq(r->in_b, in_b);
	ck_assert_uint_eq(r->a, a);
	ck_assert_uint_eq(r->b, b);
}

START_TEST(test_diff_rows)
{
	struct sp_run a, b;
	struct sp_diff d;
	const struct sp_diff_view *v;

	load_ok(FIX("run_a.json"), &a);
	load_ok(FIX("run_b.json"), &b);
	ck_assert_int_eq(sp_diff_build(&a, &b, ALL_VIEWS, SP_VALUE_COUNT, &d), 0);
	ck_assert_uint_eq(d.nviews, 1);
	v = &d.views[0];
	ck_assert_str_eq(v->key, "schedules");
	ck_assert(v->in_a && v->in_b);
	ck_assert_uint_eq(v->a_total, 40000);
	ck_assert_uint_eq(v->b_total, 3329);
	ck_assert_uint_eq(v->nrows, 5);
	/* ranked by absolute change */
	check_row(&v->rows[0], "anon_pipe_read", "pipe", true, 36099, true, 12);
	check_row(&v->rows[1], "ext4_buffered_write_iter", "rwsem-write", true, 401, false, 0);
	check_row(&v->rows[2], "[preempted]", NULL, true, 2000, true, 1800);
	check_row(&v->rows[3], "pipe_write", "pipe", false, 0, true, 17);
	check_row(&v->rows[4], "do_wait", NULL, true, 1500, true, 1500);
	ck_assert_int_eq(sp_diff_delta(v->rows[0].a, v->rows[0].b), -36087);
	ck_assert_int_eq(sp_diff_delta(v->rows[3].a, v->rows[3].b), 17);
	sp_diff_free(&d);
	sp_diff_free(&d); /* twice is harmless */

	/* times */
	ck_assert_int_eq(sp_diff_build(&a, &b, ALL_VIEWS, SP_VALUE_TIME, &d), 0);
	v = &d.views[0];
	ck_assert_uint_eq(v->a_total, 9202000000ULL);
	ck_assert_uint_eq(v->b_total, 1154000000ULL);
	check_row(&v->rows[0], "anon_pipe_read", "pipe", true, 7900000000ULL, true, 1000000);
	check_row(&v->rows[1], "do_wait", NULL, true, 1000000000ULL, true, 900000000ULL);
	sp_diff_free(&d);
	sp_run_free(&a);
	sp_run_free(&b);
}
END_TEST

START_TEST(test_diff_table)
{
	struct sp_run a, b;
	struct sp_diff d;
	char *out;

	load_ok(FIX("run_a.json"), &a);
	load_ok(FIX("run_b.json"), &b);
	ck_assert_int_eq(sp_diff_build(&a, &b, ALL_VIEWS, SP_VALUE_COUNT, &d), 0);
	out = write_mem(&d, false, 20);
	ck_assert_ptr_nonnull(strstr(out, "A: a.json  command: make -s -j2 CFLAGS=-O2 (exit 0)"));
	ck_assert_ptr_nonnull(strstr(out, "\nelapsed                9.100s -> 4.200s (-53.8%)\n"));
	ck_assert_ptr_nonnull(strstr(out, "\nschedules              40000 -> 3329 (-91.7%)\n"));
	ck_assert_ptr_nonnull(strstr(out, "\nCPU use                190% -> 186% "
					  "(of 2 -> 2 CPUs)\n"));
	ck_assert_ptr_nonnull(strstr(out, "\nschedules by caller (count): 40000 -> 3329 "
					  "(-91.7%)\n"));
	ck_assert_ptr_nonnull(strstr(out,
		"\n       36099           12       -36087   -90.2%  anon_pipe_read (pipe)\n"));
	ck_assert_ptr_nonnull(strstr(out,
		"\n         401            -         -401    -1.0%  ext4_buffered_write_iter "
		"(rwsem-write)  [only in A]\n"));
	ck_assert_ptr_nonnull(strstr(out,
		"\n           -           17          +17    +0.0%  pipe_write (pipe)  "
		"[only in B]\n"));
	ck_assert_ptr_nonnull(strstr(out,
		"\n        1500         1500            0    +0.0%  do_wait\n"));
	free(out);
	/* -n 2 */
	out = write_mem(&d, false, 2);
	ck_assert_ptr_null(strstr(out, "do_wait"));
	ck_assert_ptr_nonnull(strstr(out, "  (3 more rows: -n 0 shows all)\n"));
	free(out);
	sp_diff_free(&d);
	sp_run_free(&a);
	sp_run_free(&b);
}
END_TEST

/* A run against itself: every row on both sides, every delta zero. */
START_TEST(test_diff_self)
{
	static const char *const files[] = { FIX("run_a.json"), FIX("run_full.json") };
	struct sp_run a, b;
	struct sp_diff d;
	size_t rows = 0;
	char *out;

	load_ok(files[_i], &a);
	load_ok(files[_i], &b);
	for (int value = 0; value < 2; value++) {
		ck_assert_int_eq(sp_diff_build(&a, &b, ALL_VIEWS, (enum sp_value)value, &d), 0);
		for (size_t i = 0; i < d.nviews; i++) {
			const struct sp_diff_view *v = &d.views[i];

			ck_assert(v->in_a && v->in_b);
			ck_assert_uint_eq(v->a_total, v->b_total);
			for (size_t j = 0; j < v->nrows; j++, rows++) {
				ck_assert(v->rows[j].in_a && v->rows[j].in_b);
				ck_assert_uint_eq(v->rows[j].a, v->rows[j].b);
			}
		}
		out = write_mem(&d, false, 0);
		ck_assert_ptr_null(strstr(out, "[only in"));
		ck_assert_ptr_nonnull(strstr(out, "(+0.0%)"));
		free(out);
		sp_diff_free(&d);
	}
	ck_assert_uint_gt(rows, 4);
	sp_run_free(&a);
	sp_run_free(&b);
}
END_TEST

/* Views in one run only: all their rows are on that side. */
START_TEST(test_diff_one_sided_views)
{
	struct sp_run a, b;
	struct sp_diff d;
	char *out;

	load_ok(FIX("run_full.json"), &a);
	load_ok(FIX("run_a.json"), &b);
	ck_assert_int_eq(sp_diff_build(&a, &b, ALL_VIEWS, SP_VALUE_COUNT, &d), 0);
	ck_assert_uint_eq(d.nviews, 4);
	ck_assert_str_eq(d.views[1].key, "profile");
	ck_assert(d.views[1].in_a && !d.views[1].in_b);
	ck_assert_uint_eq(d.views[1].a_total, 850);
	check_row(&d.views[1].rows[0], "main_loop", "/usr/bin/demo", true, 600, false, 0);
	ck_assert_str_eq(d.views[2].key, "locks");
	ck_assert_str_eq(d.views[2].rows[0].extra, "pipe.mutex");
	ck_assert_str_eq(d.views[3].key, "lock_sleepers");
	ck_assert_uint_eq(d.views[3].rows[0].a, 20);
	out = write_mem(&d, false, 20);
	ck_assert_ptr_nonnull(strstr(out, "\nprofile by function (count): only in A\n"));
	ck_assert_ptr_nonnull(strstr(out, "pipe_read (mutex pipe.mutex)  [only in A]\n"));
	free(out);
	sp_diff_free(&d);
	/* -v profile only */
	ck_assert_int_eq(sp_diff_build(&a, &b, SP_VIEW_PROFILE, SP_VALUE_COUNT, &d), 0);
	ck_assert_uint_eq(d.nviews, 1);
	sp_diff_free(&d);
	sp_run_free(&a);
	sp_run_free(&b);
}
END_TEST

START_TEST(test_diff_json)
{
	struct sp_run a, b;
	struct sp_diff d;
	struct json_value *doc;
	const struct json_value *v, *row;
	char *out, err[128];
	uint64_t u;
	int64_t i;
	double pct;

	load_ok(FIX("run_a.json"), &a);
	load_ok(FIX("run_b.json"), &b);
	ck_assert_int_eq(sp_diff_build(&a, &b, ALL_VIEWS, SP_VALUE_COUNT, &d), 0);
	out = write_mem(&d, true, 2); /* -n does not cut the JSON */
	doc = json_parse(out, strlen(out), err, sizeof(err));
	ck_assert_msg(doc != NULL, "%s", err);
	ck_assert_str_eq(json_str(json_get(doc, "schema")), "schedprof-diff/1");
	ck_assert_str_eq(json_str(json_get(json_get(doc, "a"), "file")), "a.json");
	ck_assert(json_u64(json_get(json_get(json_get(doc, "summary"), "schedules"), "b"), &u));
	ck_assert_uint_eq(u, 3329);
	v = json_at(json_get(doc, "views"), 0);
	ck_assert_str_eq(json_str(json_get(v, "view")), "schedules");
	ck_assert_uint_eq(json_len(json_get(v, "rows")), 5);
	row = json_at(json_get(v, "rows"), 0);
	ck_assert_str_eq(json_str(json_get(row, "name")), "anon_pipe_read");
	ck_assert(json_i64(json_get(row, "delta"), &i));
	ck_assert_int_eq(i, -36087);
	ck_assert(json_double(json_get(row, "delta_pct_of_a_total"), &pct));
	ck_assert(pct < -90.21 && pct > -90.22);
	row = json_at(json_get(v, "rows"), 3); /* pipe_write: only in B */
	ck_assert_int_eq(json_type(json_get(row, "a")), JSON_NULL);
	ck_assert(json_u64(json_get(row, "b"), &u));
	ck_assert_uint_eq(u, 17);
	json_free(doc);
	free(out);
	sp_diff_free(&d);
	sp_run_free(&a);
	sp_run_free(&b);
}
END_TEST

START_TEST(test_diff_saturation)
{
	ck_assert_int_eq(sp_diff_delta(0, UINT64_MAX), INT64_MAX);
	ck_assert_int_eq(sp_diff_delta(UINT64_MAX, 0), -INT64_MAX);
	ck_assert_int_eq(sp_diff_delta(5, 3), -2);
	ck_assert_int_eq(sp_diff_delta(7, 7), 0);
}
END_TEST

/* Rows with the same key in one run (a hand-edited file) are summed, saturating. */
START_TEST(test_diff_duplicate_keys)
{
	struct sp_run a, b;
	struct sp_diff d;

	sp_run_init(&a);
	sp_run_init(&b);
	a.sched.present = b.sched.present = true;
	for (int i = 0; i < 3; i++) {
		struct sp_sched_row *r = sp_sched_add_row(&a.sched);

		r->caller = strdup("x");
		r->count = INT64_MAX / 2;
	}
	ck_assert_int_eq(sp_diff_build(&a, &b, SP_VIEW_SCHED, SP_VALUE_COUNT, &d), 0);
	ck_assert_uint_eq(d.views[0].nrows, 1);
	ck_assert_uint_eq(d.views[0].rows[0].a, INT64_MAX);
	ck_assert(!d.views[0].rows[0].in_b);
	ck_assert_uint_eq(d.views[0].a_total, 0);
	sp_diff_free(&d);
	sp_run_free(&a);
	sp_run_free(&b);
}
END_TEST

static Suite *diff_suite(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_diff_rows);
	tcase_add_test(tc, test_diff_table);
	tcase_add_loop_test(tc, test_diff_self, 0, 2);
	tcase_add_test(tc, test_diff_one_sided_views);
	tcase_add_test(tc, test_diff_json);
	tcase_add_test(tc, test_diff_saturation);
	tcase_add_test(tc, test_diff_duplicate_keys);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(diff_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
