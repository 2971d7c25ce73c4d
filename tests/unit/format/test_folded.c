/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for the stack formats' common ground (samples.c) and the folded format: exact
 * lines for a fixture run, totals equal to the views' totals (counts and times, all three
 * views), the per-comm remainders and [lost], trimming at the row's frame, name escaping,
 * and the pprof and flame graph back ends on the same samples (gzip output, frames present).
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_json.h"
#include "render.h"
#include "samples.h"

#define FIX(name) FIXTURES_DIR "/" name

static void load_ok(const char *path, struct sp_run *run)
{
	char err[256];
	int rc = sp_run_load_json(path, run, err, sizeof(err));

	ck_assert_msg(rc == 0, "%s: %d: %s", path, rc, err);
}

static char *render_mem(const struct sp_run *run, enum sp_format format, unsigned int views,
			enum sp_value value, size_t *ret_len)
{
	struct render_opts o = { .format = format, .views = views, .nrows = 20, .nstacks = 3,
				 .value = value };
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(render_run(run, &o, m), 0);
	ck_assert_int_eq(fclose(m), 0);
	if (ret_len)
		*ret_len = len;
	return buf;
}

/* Sum of the values of folded text; checks every line's shape on the way. */
static uint64_t folded_total(const char *text, size_t *ret_lines)
{
	uint64_t total = 0;
	size_t lines = 0;

	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n'), *sp;
		char *end;
		unsigned long long v;

		ck_assert_msg(nl != NULL, "last line has no newline");
		sp = nl;
		while (sp > p && sp[-1] != ' ')
			sp--;
		ck_assert_msg(sp > p + 1, "line without a stack: %.*s", (int)(nl - p), p);
		v = strtoull(sp, &end, 10);
		ck_assert_msg(end == nl && v > 0, "bad value in: %.*s", (int)(nl - p), p);
		total += v;
		lines++;
		p = nl + 1;
	}
	if (ret_lines)
		*ret_lines = lines;
	return total;
}

START_TEST(test_folded_lines)
{
	static const char expect[] =
		"as;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;"
		"anon_pipe_read 19990\n"
		"cc1;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;"
		"anon_pipe_read 16099\n"
		"as;anon_pipe_read 10\n"
		"cc1;[preempted] 1500\n"
		"as;[preempted] 500\n"
		"make;entry_SYSCALL_64_after_hwframe;do_syscall_64;__do_sys_wait4;kernel_wait4;"
		"do_wait 1500\n"
		"cc1;do_syscall_64;ksys_write;vfs_write;ext4_buffered_write_iter 401\n";
	struct sp_run run;
	char *out;

	load_ok(FIX("run_a.json"), &run);
	out = render_mem(&run, SP_FMT_FOLDED, SP_VIEW_SCHED, SP_VALUE_COUNT, NULL);
	ck_assert_str_eq(out, expect);
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(test_folded_time)
{
	struct sp_run run;
	uint64_t sum = 0;
	char *out;

	load_ok(FIX("run_a.json"), &run);
	out = render_mem(&run, SP_FMT_FOLDED, SP_VIEW_SCHED, SP_VALUE_TIME, NULL);
	/* the remainder of "as" in anon_pipe_read: 4.0s by comm - 3.99s in stacks */
	ck_assert_ptr_nonnull(strstr(out, "\nas;anon_pipe_read 10000000\n"));
	ck_assert_ptr_nonnull(strstr(out, "\ncc1;[preempted] 200000000\n"));
	for (size_t i = 0; i < run.sched.nrows; i++)
		sum += run.sched.rows[i].offcpu_ns;
	ck_assert_uint_eq(folded_total(out, NULL), sum);
	ck_assert_uint_eq(sum, 9202000000ULL);
	free(out);
	sp_run_free(&run);
}
END_TEST

/* Folded totals are the views' totals, in every view of the full fixture. */
START_TEST(test_folded_totals)
{
	struct sp_run run;
	size_t lines;
	char *out;

	load_ok(FIX("run_full.json"), &run);
	/* schedules: rows 115 + lost_rows 5 = total 120 */
	out = render_mem(&run, SP_FMT_FOLDED, SP_VIEW_SCHED, SP_VALUE_COUNT, NULL);
	ck_assert_uint_eq(folded_total(out, NULL), run.sched.total);
	ck_assert_ptr_nonnull(strstr(out, "\n[lost] 5\n"));
	/* no objects: the stack is trimmed at its caller */
	ck_assert_ptr_nonnull(strstr(out, "demo;vfs_read;pipe_read 100\n"));
	free(out);
	/* profile: 600 + 250 = target; the 50 without a stack stay as clear_page_erms */
	out = render_mem(&run, SP_FMT_FOLDED, SP_VIEW_PROFILE, SP_VALUE_COUNT, &lines);
	ck_assert_uint_eq(folded_total(out, &lines), run.profile.target);
	ck_assert_uint_eq(lines, 3);
	ck_assert_ptr_nonnull(strstr(out, "demo;__libc_start_call_main;main;main_loop 600\n"));
	ck_assert_ptr_nonnull(strstr(out, "\ndemo;clear_page_erms 50\n"));
	free(out);
	/* profile time: samples x 1e9/99 ns */
	out = render_mem(&run, SP_FMT_FOLDED, SP_VIEW_PROFILE, SP_VALUE_TIME, NULL);
	ck_assert_uint_eq(folded_total(out, NULL), 850ULL * (1000000000ULL / 99));
	free(out);
	/* locks: contentions, and wait time */
	out = render_mem(&run, SP_FMT_FOLDED, SP_VIEW_LOCKS, SP_VALUE_COUNT, NULL);
	ck_assert_str_eq(out, "demo;vfs_read;pipe_read 30\n");
	free(out);
	out = render_mem(&run, SP_FMT_FOLDED, SP_VIEW_LOCKS, SP_VALUE_TIME, NULL);
	ck_assert_str_eq(out, "demo;vfs_read;pipe_read 3000000\n");
	free(out);
	/* several views selected: the first the run has, in the order schedules, profile, locks */
	out = render_mem(&run, SP_FMT_FOLDED, SP_VIEW_PROFILE | SP_VIEW_LOCKS, SP_VALUE_COUNT,
			 NULL);
	ck_assert_uint_eq(folded_total(out, NULL), 850);
	free(out);
	sp_run_free(&run);
}
END_TEST

static int count_samples(const struct sp_sample *s, void *arg)
{
	uint64_t *sum = arg;

	sum[0] += s->count;
	sum[1] += s->time_ns;
	sum[2]++;
	return 0;
}

static int stop_at_two(const struct sp_sample *s, void *arg)
{
	int *n = arg;

	(void)s;
	return ++*n == 2 ? -EINTR : 0;
}

START_TEST(test_samples_walk)
{
	struct sp_run run;
	uint64_t sum[3] = { 0 };
	int n = 0;

	load_ok(FIX("run_a.json"), &run);
	ck_assert_uint_eq(sp_samples_view(&run, SP_VIEW_SCHED | SP_VIEW_PROFILE), SP_VIEW_SCHED);
	ck_assert_uint_eq(sp_samples_view(&run, SP_VIEW_PROFILE), 0);
	ck_assert_int_eq(sp_samples_for_each(&run, SP_VIEW_SCHED, count_samples, sum), 0);
	ck_assert_uint_eq(sum[0], 40000);
	ck_assert_uint_eq(sum[2], 7);
	/* a callback's error stops the walk and is returned */
	ck_assert_int_eq(sp_samples_for_each(&run, SP_VIEW_SCHED, stop_at_two, &n), -EINTR);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(sp_samples_for_each(&run, 1u << 7, count_samples, sum), -EINVAL);
	sp_run_free(&run);
}
END_TEST

/* Stacks without the row's frame stay whole; more in stacks than in comms is no remainder. */
START_TEST(test_samples_edges)
{
	static const char *const frames[] = { "__schedule", "other_fn", "main" };
	struct sp_run run;
	struct sp_sched_row *r;
	struct sp_stack_row *s;
	char *out;

	sp_run_init(&run);
	run.sched.present = true;
	run.sched.total = 7;
	r = sp_sched_add_row(&run.sched);
	r->caller = strdup("my_caller");
	r->count = 7;
	sp_comm_list_add(&r->comms, "x", 7, 70, 10);
	s = sp_stack_list_add(&r->stacks);
	s->comm = strdup("x");
	s->count = 9; /* inconsistent: more than the comm's count */
	s->time_ns = 90;
	s->frames = calloc(3, sizeof(char *));
	for (int i = 0; i < 3; i++)
		s->frames[i] = strdup(frames[i]);
	s->nframes = 3;
	out = render_mem(&run, SP_FMT_FOLDED, SP_VIEW_SCHED, SP_VALUE_COUNT, NULL);
	ck_assert_str_eq(out, "x;main;other_fn;__schedule 9\n");
	free(out);
	sp_run_free(&run);
}
END_TEST

/* ';' would split a frame, control characters a line: both are replaced. */
START_TEST(test_folded_escaping)
{
	struct sp_run run;
	struct sp_sched_row *r;
	char *out;

	sp_run_init(&run);
	run.sched.present = true;
	r = sp_sched_add_row(&run.sched);
	r->caller = strdup("a;b\nc");
	r->count = 3;
	sp_comm_list_add(&r->comms, "my comm\t1", 2, 0, 0);
	sp_comm_list_add(&r->comms, "", 1, 0, 0);
	out = render_mem(&run, SP_FMT_FOLDED, SP_VIEW_SCHED, SP_VALUE_COUNT, NULL);
	ck_assert_str_eq(out, "my comm?1;a:b?c 2\n[unknown];a:b?c 1\n");
	free(out);
	/* --value time with no times: nothing to draw, an empty (valid) file */
	out = render_mem(&run, SP_FMT_FOLDED, SP_VIEW_SCHED, SP_VALUE_TIME, NULL);
	ck_assert_str_eq(out, "");
	free(out);
	/* a view the run does not have */
	out = render_mem(&run, SP_FMT_FOLDED, SP_VIEW_PROFILE, SP_VALUE_COUNT, NULL);
	ck_assert_str_eq(out, "");
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(test_pprof_output)
{
	struct sp_run run;
	size_t len, len2;
	char *out, *out2;

	load_ok(FIX("run_full.json"), &run);
	out = render_mem(&run, SP_FMT_PPROF, SP_VIEW_PROFILE, SP_VALUE_COUNT, &len);
	ck_assert_uint_gt(len, 20);
	ck_assert_int_eq((unsigned char)out[0], 0x1f); /* gzip */
	ck_assert_int_eq((unsigned char)out[1], 0x8b);
	/* --value does not change pprof: it has both sample types */
	out2 = render_mem(&run, SP_FMT_PPROF, SP_VIEW_PROFILE, SP_VALUE_TIME, &len2);
	ck_assert(len == len2 && !memcmp(out, out2, len));
	free(out);
	free(out2);
	sp_run_free(&run);
	/* an empty run still gives a valid (empty) profile */
	sp_run_init(&run);
	out = render_mem(&run, SP_FMT_PPROF, SP_VIEW_SCHED, SP_VALUE_COUNT, &len);
	ck_assert_uint_gt(len, 10);
	free(out);
	sp_run_free(&run);
}
END_TEST

static void no_fetch(const char *doc)
{
	for (const char *p = strstr(doc, "http"); p; p = strstr(p + 1, "http"))
		ck_assert_msg(!strncmp(p, "http://www.w3.org/2000/svg\"", 27), "a URL: %.40s", p);
	ck_assert_ptr_null(strstr(doc, "src="));
	ck_assert_ptr_null(strstr(doc, "href"));
	ck_assert_ptr_null(strstr(doc, "url("));
	ck_assert_ptr_null(strstr(doc, "@import"));
	ck_assert_ptr_null(strstr(doc, "fetch("));
	ck_assert_ptr_null(strstr(doc, "XMLHttpRequest"));
}

START_TEST(test_flame_output)
{
	struct sp_run run;
	char *out;

	load_ok(FIX("run_a.json"), &run);
	out = render_mem(&run, SP_FMT_SVG, SP_VIEW_SCHED, SP_VALUE_COUNT, NULL);
	ck_assert(!strncmp(out, "<?xml version=\"1.0\"", 19));
	ck_assert_ptr_nonnull(strstr(out, "<svg class=\"flame\" "
					  "xmlns=\"http://www.w3.org/2000/svg\""));
	/* the root, a comm, and a frame wide enough for its name, with counts and shares */
	ck_assert_ptr_nonnull(strstr(out, "<title>all\nthe whole view\n40000 schedules (100.00%)"));
	ck_assert_ptr_nonnull(strstr(out, "<title>anon_pipe_read\n[kernel]\n"
					  "19990 schedules (49.98%)"));
	ck_assert_ptr_nonnull(strstr(out, ">anon_pipe_read</text>"));
	ck_assert_ptr_nonnull(strstr(out, "<![CDATA["));
	/* no fetches: nothing refers to another document (the namespace is a name, not a fetch) */
	no_fetch(out);
	free(out);
	out = render_mem(&run, SP_FMT_HTML, SP_VIEW_SCHED, SP_VALUE_TIME, NULL);
	ck_assert(!strncmp(out, "<!DOCTYPE html>", 15));
	ck_assert_ptr_nonnull(strstr(out, "(width: off-CPU)"));
	ck_assert_ptr_nonnull(strstr(out, "<input id=\"search\""));
	no_fetch(out);
	free(out);
	sp_run_free(&run);
}
END_TEST

/* Names are escaped for XML, and invalid UTF-8 becomes U+FFFD: the SVG stays well-formed. */
START_TEST(test_flame_escaping)
{
	struct sp_run run;
	struct sp_sched_row *r;
	char *out;

	sp_run_init(&run);
	run.sched.present = true;
	r = sp_sched_add_row(&run.sched);
	r->caller = strdup("<b>&\"x\"\x01\xff");
	r->count = 3;
	sp_comm_list_add(&r->comms, "c", 3, 0, 0);
	out = render_mem(&run, SP_FMT_SVG, SP_VIEW_SCHED, SP_VALUE_COUNT, NULL);
	ck_assert_ptr_nonnull(strstr(out, "&lt;b&gt;&amp;&quot;x&quot;\xef\xbf\xbd\xef\xbf\xbd"));
	ck_assert_ptr_null(strstr(out, "<b>"));
	ck_assert_ptr_null(strchr(out, '\x01'));
	free(out);
	sp_run_free(&run);
}
END_TEST

static Suite *folded_suite(void)
{
	Suite *s = suite_create("folded");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_folded_lines);
	tcase_add_test(tc, test_folded_time);
	tcase_add_test(tc, test_folded_totals);
	tcase_add_test(tc, test_samples_walk);
	tcase_add_test(tc, test_samples_edges);
	tcase_add_test(tc, test_folded_escaping);
	tcase_add_test(tc, test_pprof_output);
	tcase_add_test(tc, test_flame_output);
	tcase_add_test(tc, test_flame_escaping);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(folded_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
