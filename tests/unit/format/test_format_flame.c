/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flame graphs (src/format/format_flame.c): SVG and HTML of a fixture run (the root, a
 * comm, frames with counts and shares, no fetch of another document), XML escaping and
 * U+FFFD for invalid UTF-8; the height fitted to the frames wide enough to see, the colours
 * of kernel, user and pseudo frames, and the differential graphs of diff -f html.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"
#include "format/diff.h"

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

	unit_load(FIX("run_a.json"), &run);
	out = unit_render_fmt(&run, SP_FMT_SVG, SP_VIEW_SCHED, SP_VALUE_COUNT, NULL);
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
	out = unit_render_fmt(&run, SP_FMT_HTML, SP_VIEW_SCHED, SP_VALUE_TIME, NULL);
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
	out = unit_render_fmt(&run, SP_FMT_SVG, SP_VIEW_SCHED, SP_VALUE_COUNT, NULL);
	ck_assert_ptr_nonnull(strstr(out, "&lt;b&gt;&amp;&quot;x&quot;\xef\xbf\xbd\xef\xbf\xbd"));
	ck_assert_ptr_null(strstr(out, "<b>"));
	ck_assert_ptr_null(strchr(out, '\x01'));
	free(out);
	sp_run_free(&run);
}
END_TEST

/* The fill of the first frame whose tooltip starts with title ("name\nobject\n..."). */
static void frame_fill(const char *doc, const char *title, unsigned int rgb[3])
{
	const char *p = strstr(doc, title), *fill;

	ck_assert_msg(p, "no frame '%s'", title);
	fill = strstr(p, "fill=\"rgb(");
	ck_assert_ptr_nonnull(fill);
	ck_assert_int_eq(sscanf(fill, "fill=\"rgb(%u,%u,%u)", &rgb[0], &rgb[1], &rgb[2]), 3);
}

/* not inlined: gcc 12 takes the memstream buffers of unit.h for dangling locals */
static __attribute__((noinline)) unsigned int count_str(const char *doc, const char *what)
{
	unsigned int n = 0;

	for (const char *p = strstr(doc, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/*
 * run_deep: 20000 samples, the deepest stack (60 frames, 10 samples) 0.59 px wide. It is in
 * the document (wider than 0.1 px) but does not set the height: the kernel stack does, the
 * deepest level at least 12 px wide in all (depth 9: 66 + 10 x 16 + 28 px); the frames of the
 * tower above depth 9 are hidden, and a note counts them.
 */
START_TEST(test_flame_height_fit)
{
	struct sp_run run;
	char *out;

	unit_load(FIX("run_deep.json"), &run);
	out = unit_render_fmt(&run, SP_FMT_SVG, SP_VIEW_PROFILE, SP_VALUE_COUNT, NULL);
	ck_assert_ptr_nonnull(strstr(out, "width=\"1200\" height=\"254\" viewBox=\"0 0 1200 254\""));
	ck_assert_ptr_nonnull(strstr(out, "data-d=\"9\"><title>clear_page_erms"));
	/* recurse at depths 4..61: 4..9 drawn, 10..61 hidden */
	ck_assert_ptr_nonnull(strstr(out, "data-d=\"9\"><title>recurse"));
	ck_assert_ptr_nonnull(strstr(out, "data-d=\"10\" style=\"display:none\"><title>recurse"));
	ck_assert_ptr_nonnull(strstr(out, "data-d=\"61\" style=\"display:none\"><title>recurse"));
	ck_assert_uint_eq(count_str(out, "style=\"display:none\"><title>"), 52);
	ck_assert_ptr_nonnull(strstr(out, ">52 frames of thin, deeper stacks hidden: click a frame "
					  "to zoom in</text>"));
	free(out);
	sp_run_free(&run);
}
END_TEST

/* Kernel frames warm, user frames green, pseudo frames grey, comms blue; and a legend. */
START_TEST(test_flame_kinds)
{
	struct sp_run run;
	unsigned int c[3];
	char *out;

	unit_load(FIX("run_full.json"), &run);
	out = unit_render_fmt(&run, SP_FMT_HTML, SP_VIEW_SCHED | SP_VIEW_PROFILE, SP_VALUE_COUNT,
			      NULL);
	frame_fill(out, "<title>clear_page_erms\n[kernel]\n", c);
	ck_assert_msg(c[0] >= 215 && c[1] >= 90 && c[1] < 180 && c[2] < 50, "kernel %u,%u,%u",
		      c[0], c[1], c[2]);
	frame_fill(out, "<title>main_loop\n/usr/bin/demo\n", c);
	ck_assert_msg(c[0] < 130 && c[1] >= 170 && c[2] < 110, "user %u,%u,%u", c[0], c[1], c[2]);
	frame_fill(out, "<title>[preempted]\n", c);
	ck_assert_msg(c[0] == c[1] && c[2] == c[0] + 5, "pseudo %u,%u,%u", c[0], c[1], c[2]);
	frame_fill(out, "<title>demo\nprocess name\n", c);
	ck_assert_msg(c[2] >= 215 && c[0] < 150, "comm %u,%u,%u", c[0], c[1], c[2]);
	ck_assert_uint_eq(count_str(out, "<g class=\"legend\">"), 2);
	ck_assert_ptr_nonnull(strstr(out, ">kernel</text>"));
	free(out);
	sp_run_free(&run);
}
END_TEST

/* diff -f html of two fixture runs, in *ret (the caller frees it) */
static void diff_html(const char *fa, const char *fb, enum sp_value value, char **ret)
{
	struct sp_diff_opts o = { "a.json", "b.json", 0 };
	struct sp_run a, b;
	struct sp_diff d = { 0 };
	size_t len = 0;
	FILE *m = open_memstream(ret, &len);

	ck_assert_ptr_nonnull(m);
	unit_load(fa, &a);
	unit_load(fb, &b);
	ck_assert_int_eq(sp_diff_build(&a, &b, SP_VIEW_SCHED | SP_VIEW_PROFILE | SP_VIEW_LOCKS,
				       value, &d), 0);
	ck_assert_int_eq(sp_diff_write_html(&d, &o, m), 0);
	ck_assert_int_eq(fclose(m), 0);
	sp_diff_free(&d);
	sp_run_free(&a);
	sp_run_free(&b);
}

/*
 * run_a -> run_b: the after graph then the before graph; cc1's [preempted] grew 1500 -> 1800
 * (red in both), as's anon_pipe_read shrank (blue), pipe_write is new (red, after graph
 * only), the 16099 schedules of cc1's reads are gone (blue, before graph only).
 */
START_TEST(test_flame_diff)
{
	unsigned int c[3];
	const char *before;
	char *out = NULL;

	diff_html(FIX("run_a.json"), FIX("run_b.json"), SP_VALUE_COUNT, &out);

	ck_assert(!strncmp(out, "<!DOCTYPE html>", 15));
	no_fetch(out);
	ck_assert_uint_eq(count_str(out, "<svg class=\"flame\""), 2);
	ck_assert_ptr_nonnull(strstr(out, "data-diff=\"after\""));
	before = strstr(out, "data-diff=\"before\"");
	ck_assert_ptr_nonnull(before);
	ck_assert_ptr_nonnull(strstr(out, "before: a.json, 40000 schedules; after: b.json, 3329 schedules"));
	frame_fill(out, "<title>[preempted]\nbefore: 1500 schedules\n"
			"after: 1800 schedules\nchange: +300 (+20.0%)", c);
	ck_assert_msg(c[0] == 255 && c[1] == c[2] && c[1] < 232, "grew %u,%u,%u", c[0], c[1], c[2]);
	frame_fill(before, "<title>[preempted]\nbefore: 1500 schedules\n", c);
	ck_assert_msg(c[0] == 255 && c[1] == c[2] && c[1] < 232, "grew %u,%u,%u", c[0], c[1], c[2]);
	frame_fill(out, "<title>anon_pipe_read\n[kernel]\nbefore: 19990 schedules\n"
			"after: 12 schedules\nchange: -19978 (-99.9%)", c);
	ck_assert_msg(c[2] == 255 && c[0] == c[1] && c[0] < 100, "shrank %u,%u,%u", c[0], c[1],
		      c[2]);
	frame_fill(out, "change: +17 (new: only in the after run)", c);
	ck_assert_msg(c[0] == 255 && c[1] == c[2], "new %u,%u,%u", c[0], c[1], c[2]);
	ck_assert_ptr_null(strstr(before, "(new: only in the after run)"));
	ck_assert_ptr_nonnull(strstr(before, "change: -16099 (gone: only in the before run)"));
	ck_assert(strstr(out, "(gone: only in the before run)") > before);
	free(out);
}
END_TEST

/* A run against itself: every frame unchanged, grey; none red or blue. */
START_TEST(test_flame_diff_same)
{
	char *out = NULL;

	diff_html(FIX("run_full.json"), FIX("run_full.json"), SP_VALUE_TIME, &out);

	ck_assert_uint_eq(count_str(out, "<svg class=\"flame\""), 6);
	ck_assert_uint_eq(count_str(out, "\nchange: none</title>"), count_str(out, "<g class=\"f\""));
	ck_assert_uint_eq(count_str(out, "<g class=\"f\""),
			  count_str(out, "fill=\"rgb(232,232,232)\"/><text"));
	free(out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("format_flame");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_flame_output);
	tcase_add_test(tc, test_flame_escaping);
	tcase_add_test(tc, test_flame_height_fit);
	tcase_add_test(tc, test_flame_kinds);
	tcase_add_test(tc, test_flame_diff);
	tcase_add_test(tc, test_flame_diff_same);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
