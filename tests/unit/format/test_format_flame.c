/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flame graphs (src/format/format_flame.c): SVG and HTML of a fixture run (the root, a
 * comm, frames with counts and shares, no fetch of another document), XML escaping and
 * U+FFFD for invalid UTF-8.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"

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

int main(void)
{
	Suite *s = suite_create("format_flame");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_flame_output);
	tcase_add_test(tc, test_flame_escaping);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
