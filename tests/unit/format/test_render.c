/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * src/format/render.c: format, view and value names (exact, case-sensitive, view lists),
 * which formats are binary, and render_run's dispatch: each format's own output on the same
 * run, an unknown format refused with nothing written, a failing stream reported.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"
#include "format/render.h"
#include "base/util.h"

static const struct {
	const char *name;
	enum sp_format format;
	bool binary;
	const char *start; /* what the output starts with */
} formats[] = {
	{ "table", SP_FMT_TABLE, false, "command: make" },
	{ "json", SP_FMT_JSON, false, "{\n  \"schema\": \"schedprof/1\"" },
	{ "folded", SP_FMT_FOLDED, false, "as;entry_SYSCALL_64_after_hwframe;" },
	{ "pprof", SP_FMT_PPROF, true, "\x1f\x8b" },
	{ "svg", SP_FMT_SVG, true, "<?xml version=\"1.0\"" },
	{ "html", SP_FMT_HTML, true, "<!DOCTYPE html>" },
};

START_TEST(format_names)
{
	static const char *const bad[] = { "", "TABLE", "Json", "jso", "jsonx", "svg ", "flame",
					   "text" };
	enum sp_format f;

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		f = (enum sp_format)-1;
		ck_assert_int_eq(render_parse_format(formats[i].name, &f), 0);
		ck_assert_int_eq(f, formats[i].format);
		ck_assert_msg(render_format_is_binary(f) == formats[i].binary, "%s binary",
			      formats[i].name);
	}
	f = SP_FMT_HTML;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(render_parse_format(bad[i], &f) == -EINVAL, "'%s' accepted", bad[i]);
	ck_assert_int_eq(f, SP_FMT_HTML); /* untouched */
	ck_assert(!render_format_is_binary((enum sp_format)99));
	/* the help's list: every name, in order, the same on every call */
	ck_assert_str_eq(render_format_names(),
			 "table, json, folded, pprof, svg, html, trace-event, timeline");
	ck_assert_str_eq(render_format_names(),
			 "table, json, folded, pprof, svg, html, trace-event, timeline");
	/* the timeline's formats (test_format_trace_event.c, test_format_timeline.c) */
	ck_assert_int_eq(render_parse_format("trace-event", &f), 0);
	ck_assert_int_eq(f, SP_FMT_TRACE_EVENT);
	ck_assert(!render_format_is_binary(f));
	ck_assert_int_eq(render_parse_format("timeline", &f), 0);
	ck_assert_int_eq(f, SP_FMT_TIMELINE);
	ck_assert(render_format_is_binary(f));
	ck_assert(render_format_is_timeline(SP_FMT_TIMELINE));
	ck_assert(render_format_is_timeline(SP_FMT_TRACE_EVENT));
	ck_assert(!render_format_is_timeline(SP_FMT_HTML));
	ck_assert(!render_format_is_timeline(SP_FMT_JSON));
}
END_TEST

START_TEST(view_names)
{
	static const char *const bad[] = { "", ",", "sched", "Schedules", "schedules,,locks",
					   ",schedules", "schedules,lock", "all" };
	unsigned int v = 0;

	ck_assert_int_eq(render_parse_views("schedules", &v), 0);
	ck_assert_uint_eq(v, SP_VIEW_SCHED);
	ck_assert_int_eq(render_parse_views("profile", &v), 0);
	ck_assert_uint_eq(v, SP_VIEW_PROFILE);
	ck_assert_int_eq(render_parse_views("locks", &v), 0);
	ck_assert_uint_eq(v, SP_VIEW_LOCKS);
	ck_assert_int_eq(render_parse_views("locks,schedules", &v), 0);
	ck_assert_uint_eq(v, SP_VIEW_LOCKS | SP_VIEW_SCHED);
	ck_assert_int_eq(render_parse_views("profile,profile", &v), 0);
	ck_assert_uint_eq(v, SP_VIEW_PROFILE);
	ck_assert_int_eq(render_parse_views("schedules,profile,locks", &v), 0);
	ck_assert_uint_eq(v, SP_VIEW_ALL);
	ck_assert_int_eq(render_parse_views("timeline", &v), 0);
	ck_assert_uint_eq(v, SP_VIEW_TIMELINE);
	ck_assert_int_eq(render_parse_views("schedules,profile,locks,timeline", &v), 0);
	ck_assert_uint_eq(v, SP_VIEW_ALL | SP_VIEW_TIMELINE);
	ck_assert_uint_eq(SP_VIEW_ALL & SP_VIEW_TIMELINE, 0); /* not collected by default */
	v = 12345;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(render_parse_views(bad[i], &v) == -EINVAL, "'%s' accepted", bad[i]);
	ck_assert_uint_eq(v, 12345);
}
END_TEST

START_TEST(value_names)
{
	enum sp_value v = SP_VALUE_TIME;

	ck_assert_int_eq(render_parse_value("count", &v), 0);
	ck_assert_int_eq(v, SP_VALUE_COUNT);
	ck_assert_int_eq(render_parse_value("time", &v), 0);
	ck_assert_int_eq(v, SP_VALUE_TIME);
	ck_assert_int_eq(render_parse_value("Time", &v), -EINVAL);
	ck_assert_int_eq(render_parse_value("", &v), -EINVAL);
	ck_assert_int_eq(render_parse_value("counts", &v), -EINVAL);
	ck_assert_int_eq(v, SP_VALUE_TIME);
}
END_TEST

/* Each format reaches its own back end: the output starts as that format does. */
START_TEST(dispatch)
{
	struct sp_run run;

	unit_load(FIX("run_a.json"), &run);
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		size_t len;
		char *out = unit_render_fmt(&run, formats[i].format, SP_VIEW_ALL, SP_VALUE_COUNT,
					    &len);

		ck_assert_msg(len >= strlen(formats[i].start) &&
				      !memcmp(out, formats[i].start, strlen(formats[i].start)),
			      "%s starts with '%.20s'", formats[i].name, out);
		free(out);
	}
	sp_run_free(&run);
}
END_TEST

START_TEST(unknown_format)
{
	struct render_opts o = { .format = (enum sp_format)99, .views = SP_VIEW_ALL };
	struct sp_run run;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	unit_load(FIX("run_a.json"), &run);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(render_run(&run, &o, m), -EINVAL);
	ck_assert_int_eq(fclose(m), 0);
	ck_assert_uint_eq(len, 0);
	free(buf);
	sp_run_free(&run);
}
END_TEST

/* A stream that takes nothing (/dev/full, unbuffered): every format says so. */
START_TEST(write_errors)
{
	struct sp_run run;

	unit_load(FIX("run_full.json"), &run);
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		struct render_opts o = { .format = formats[i].format, .views = SP_VIEW_ALL,
					 .nrows = 20, .nstacks = 3 };
		FILE *f = fopen("/dev/full", "w");
		int err;

		ck_assert_ptr_nonnull(f);
		setvbuf(f, NULL, _IONBF, 0);
		err = render_run(&run, &o, f);
		ck_assert_msg(err < 0, "%s to /dev/full: %d", formats[i].name, err);
		fclose(f);
	}
	sp_run_free(&run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("render");
	TCase *names = tcase_create("names"), *run = tcase_create("render_run");

	tcase_add_test(names, format_names);
	tcase_add_test(names, view_names);
	tcase_add_test(names, value_names);
	tcase_add_test(run, dispatch);
	tcase_add_test(run, unknown_format);
	tcase_add_test(run, write_errors);
	suite_add_tcase(s, names);
	suite_add_tcase(s, run);
	return unit_run(s);
}
