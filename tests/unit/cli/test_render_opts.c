// SPDX-License-Identifier: BSD-2-Clause
/*
 * The render options (src/cli/render_opts.c, compiled into this test with cli.c for its
 * usage errors): the defaults, every good value, every bad value with its exact two-line
 * usage error on stderr and the options left unchanged, and -ENOENT, silently, for an option
 * that is not theirs.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "base/log.h"
#include "cli/render_opts.h"
#include "model/view.h"

static void no_help(void)
{
}

static const struct cli_cmd cmd = { "report", no_help };

static void setup(void)
{
	log_set_level(LOG_WARN);
	log_set_prefix("schedprof");
}

/* One option applied to o; what it printed on stderr (malloc'd) in *ret_err. */
static int ropt(struct render_opts *o, int c, const char *arg, char **ret_err)
{
	struct capture cap;
	int r;

	capture_start(&cap);
	r = render_opts_parse(&cmd, o, c, arg);
	*ret_err = capture_end(&cap, NULL);
	return r;
}

START_TEST(render_defaults_and_values)
{
	struct render_opts o;
	char *err;

	render_opts_init(&o);
	ck_assert_int_eq(o.format, SP_FMT_TABLE);
	/* every view the run holds, the timeline too (trace collects SP_VIEW_ALL) */
	ck_assert_uint_eq(o.views, SP_VIEW_EVERY);
	ck_assert_uint_eq(o.nrows, 20);
	ck_assert_uint_eq(o.nstacks, 3);
	ck_assert(!o.stacks && !o.lock_stacks && !o.lines);
	ck_assert_int_eq(o.group, SP_GROUP_CALLER);
	ck_assert_int_eq(o.value, SP_VALUE_COUNT);
	ck_assert_int_eq(o.lock_sort, SP_LOCK_SORT_WAIT);

	ck_assert_int_eq(ropt(&o, 'f', "pprof", &err), 0);
	ck_assert_int_eq(o.format, SP_FMT_PPROF);
	free(err);
	ck_assert_int_eq(ropt(&o, RENDER_OPT_VIEWS, "locks,schedules", &err), 0);
	ck_assert_uint_eq(o.views, SP_VIEW_LOCKS | SP_VIEW_SCHED);
	free(err);
	ck_assert_int_eq(ropt(&o, 'n', "0", &err), 0);
	ck_assert_uint_eq(o.nrows, 0);
	free(err);
	ck_assert_int_eq(ropt(&o, 'n', "1000000", &err), 0);
	ck_assert_uint_eq(o.nrows, 1000000);
	free(err);
	ck_assert_int_eq(ropt(&o, RENDER_OPT_STACK_ROWS, "1", &err), 0);
	ck_assert_uint_eq(o.nstacks, 1);
	free(err);
	ck_assert_int_eq(ropt(&o, RENDER_OPT_BY, "comm", &err), 0);
	ck_assert_int_eq(o.group, SP_GROUP_COMM);
	free(err);
	ck_assert_int_eq(ropt(&o, RENDER_OPT_BY, "caller", &err), 0);
	ck_assert_int_eq(o.group, SP_GROUP_CALLER);
	free(err);
	ck_assert_int_eq(ropt(&o, RENDER_OPT_VALUE, "time", &err), 0);
	ck_assert_int_eq(o.value, SP_VALUE_TIME);
	free(err);
	ck_assert_int_eq(ropt(&o, RENDER_OPT_SORT, "max", &err), 0);
	ck_assert_int_eq(o.lock_sort, SP_LOCK_SORT_MAX);
	free(err);
	ck_assert_int_eq(ropt(&o, RENDER_OPT_SORT, "count", &err), 0);
	ck_assert_int_eq(o.lock_sort, SP_LOCK_SORT_COUNT);
	free(err);
	ck_assert_int_eq(ropt(&o, RENDER_OPT_STACKS, NULL, &err), 0);
	ck_assert_str_eq(err, "");
	free(err);
	ck_assert_int_eq(ropt(&o, RENDER_OPT_LOCK_STACKS, NULL, &err), 0);
	ck_assert(o.stacks && o.lock_stacks);
	ck_assert_str_eq(err, "");
	free(err);
	ck_assert_int_eq(ropt(&o, RENDER_OPT_LINES, NULL, &err), 0);
	ck_assert(o.lines);
	ck_assert_str_eq(err, "");
	free(err);
}
END_TEST

START_TEST(render_bad_values)
{
	static const struct {
		int c;
		const char *arg, *msg;
	} bad[] = {
		{ 'f', "flame", "schedprof report: unknown format 'flame'\n" },
		{ RENDER_OPT_VIEWS, "sched", NULL }, /* every view named: view_list_msg() */
		{ 'n', "-1", "schedprof report: -n: '-1' is not a number (0..1000000)\n" },
		{ 'n', "1000001", "schedprof report: -n: 1000001 is out of range (0..1000000)\n" },
		{ RENDER_OPT_STACK_ROWS, "0", "schedprof report: --stack-rows: 0 is out of range (1..1000)\n" },
		{ RENDER_OPT_STACK_ROWS, "1001", "schedprof report: --stack-rows: 1001 is out of range (1..1000)\n" },
		{ RENDER_OPT_BY, "pid", "schedprof report: bad --by 'pid' (comm or caller)\n" },
		{ RENDER_OPT_VALUE, "ns", "schedprof report: bad --value 'ns' (count or time)\n" },
		{ RENDER_OPT_SORT, "avg", "schedprof report: bad --sort 'avg' (wait, count or max)\n" },
	};
	struct render_opts o, before;
	char *err;

	render_opts_init(&o);
	before = o;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[256], views[128] = "";

		ck_assert_int_eq(ropt(&o, bad[i].c, bad[i].arg, &err), EXIT_USAGE);
		for (size_t v = 0; !bad[i].msg && v < sp_nviews; v++)
			snprintf(views + strlen(views), sizeof(views) - strlen(views), "%s%s",
				 v ? ", " : "", sp_views[v]->name);
		if (bad[i].msg)
			snprintf(want, sizeof(want), "%sTry 'schedprof report --help'.\n",
				 bad[i].msg);
		else
			snprintf(want, sizeof(want), "schedprof report: bad view list '%s' (%s)\n"
				 "Try 'schedprof report --help'.\n", bad[i].arg, views);
		ck_assert_str_eq(err, want);
		free(err);
	}
	ck_assert(!memcmp(&o, &before, sizeof(o))); /* nothing changed */
	/* not a render option: -ENOENT, silently, o unchanged */
	ck_assert_int_eq(ropt(&o, 'o', "out.txt", &err), -ENOENT);
	ck_assert_str_eq(err, "");
	free(err);
	ck_assert(!memcmp(&o, &before, sizeof(o)));
	/* the help names every format */
	ck_assert_ptr_nonnull(strstr(render_opts_help(), "table, json, folded, pprof, svg, html"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("render_opts");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, render_defaults_and_values);
	tcase_add_test(tc, render_bad_values);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
