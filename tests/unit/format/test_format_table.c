/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The table (src/format/format_table.c) of the fixture runs, line by line where it matters:
 * the header (target, times, kernel), each view's section in order, -n with its "more rows"
 * line, --by comm, --stacks with --stack-rows, --views, and the shared helpers (shares,
 * rows shown, the target line). The golden test compares whole outputs; this one says which
 * part broke.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"
#include "format/render.h"

/* s starts with pre */
#define ck_assert_starts(s, pre) ck_assert_msg(!strncmp(s, pre, strlen(pre)), "starts: %.200s", s)
/* a and b both found, a first */
#define ck_assert_before(a, b) ck_assert(((a) != NULL) && ((b) != NULL) && ((a) < (b)))

static struct render_opts table_opts(void)
{
	return (struct render_opts){ .format = SP_FMT_TABLE, .views = SP_VIEW_ALL, .nrows = 20,
				     .nstacks = 3 };
}

static char *table(const char *fixture, const struct render_opts *o)
{
	struct sp_run run;
	char *out;

	unit_load(fixture, &run);
	out = unit_render(&run, o, NULL);
	sp_run_free(&run);
	return out;
}

/* The line of out starting with prefix (at a line start), or NULL. */
static const char *line(const char *out, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, prefix, n))
			return p;
	return NULL;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

START_TEST(header)
{
	struct render_opts o = table_opts();
	char *out = table(FIX("run_a.json"), &o);

	ck_assert_starts(out, "command: make -s -j2 CFLAGS=-O2 (exit 0)\n"
			      "elapsed 9.100s, user 14.900s, sys 2.400s, CPU 190% of 2 CPUs"
			      "  [6.18.44, vm]\n\n");
	ck_assert_ptr_nonnull(line(out, "schedules: 40000 total, 38000 voluntary (95.0%), "
					"2000 preempted (5.0%)\n"));
	ck_assert_ptr_nonnull(line(out, "     COUNT   SHARE    OFF-CPU        MAX  WAIT          "
					"CALLER\n"));
	ck_assert_ptr_nonnull(line(out, "     36099   90.2%     7.900s     12.1ms  pipe          "
					"anon_pipe_read\n"));
	ck_assert_ptr_nonnull(line(out, "       401    1.0%      2.0ms    100.0us  rwsem-write   "
					"ext4_buffered_write_iter\n"));
	ck_assert_ptr_null(strstr(out, "stack #"));
	ck_assert_ptr_null(strstr(out, "more rows"));
	free(out);
	/* pids, no rusage; system-wide */
	out = table(FIX("run_full.json"), &o);
	ck_assert_starts(out, "pids: 1234,5678 and descendants\nelapsed 2.000s  [6.18.44, vm]\n\n");
	free(out);
	out = table(FIX("run_min.json"), &o);
	ck_assert_starts(out, "system-wide\nelapsed 1.0us  [6.18.44, vm]\n\n");
	free(out);
}
END_TEST

/* Every view of the full fixture, in the order schedules, profile, locks; --views picks. */
START_TEST(sections)
{
	struct render_opts o = table_opts();
	char *out = table(FIX("run_full.json"), &o);
	const char *sched = line(out, "schedules: 120 total"), *prof = line(out, "profile: 1000 samples"),
		   *locks = line(out, "locks: 31 contentions"), *sleep = line(out, "sleepers: ");

	ck_assert_before(sched, prof);
	ck_assert_before(prof, locks);
	ck_assert_before(locks, sleep);
	ck_assert_ptr_nonnull(line(out, "  note: 5 schedules are in the totals but in no row"));
	ck_assert_ptr_nonnull(line(out, "       600   70.6%  main_loop                            "
					"/usr/bin/demo\n"));
	ck_assert_ptr_nonnull(strstr(out, "pipe.mutex                      pipe_read  (1 gave up)\n"));
	ck_assert_ptr_nonnull(line(out, "  demo: 2 tasks slept 2.5ms in mutex on pipe.mutex, from "
					"pipe_read  (20 sleeps, max 300.0us)\n"));
	free(out);
	o.views = SP_VIEW_PROFILE | SP_VIEW_LOCKS;
	out = table(FIX("run_full.json"), &o);
	ck_assert_ptr_null(line(out, "schedules:"));
	ck_assert_ptr_nonnull(line(out, "profile:"));
	ck_assert_ptr_nonnull(line(out, "locks:"));
	free(out);
	/* a view the run does not hold: the header alone */
	o.views = SP_VIEW_PROFILE;
	out = table(FIX("run_a.json"), &o);
	ck_assert_uint_eq(count_lines(out), 2);
	free(out);
}
END_TEST

START_TEST(rows_limit)
{
	struct render_opts o = table_opts();
	char *out;
	const char *p;

	o.nrows = 2;
	o.views = SP_VIEW_SCHED;
	out = table(FIX("run_a.json"), &o);
	p = line(out, "      2000    5.0%    300.0ms      5.0ms  -             [preempted]\n");
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(strchr(p, '\n') + 1, "  (2 more rows: -n 0 shows all)\n");
	ck_assert_ptr_null(strstr(out, "do_wait"));
	free(out);
	/* -n 0: every row, no "more rows" */
	o.nrows = 0;
	out = table(FIX("run_a.json"), &o);
	ck_assert_ptr_nonnull(strstr(out, "ext4_buffered_write_iter\n"));
	ck_assert_ptr_null(strstr(out, "more rows"));
	free(out);
	/* -n at least the rows: the same */
	o.nrows = 4;
	out = table(FIX("run_a.json"), &o);
	ck_assert_ptr_null(strstr(out, "more rows"));
	free(out);
}
END_TEST

START_TEST(by_comm)
{
	struct render_opts o = table_opts();
	char *out;
	const char *as, *cc1, *make;

	o.group = SP_GROUP_COMM;
	out = table(FIX("run_a.json"), &o);
	as = line(out, "as: 20500 schedules (51.2%)\n");
	cc1 = line(out, "cc1: 18000 schedules (45.0%)\n");
	make = line(out, "make: 1500 schedules (3.8%)\n");
	ck_assert_before(as, cc1);
	ck_assert_before(cc1, make);
	/* each comm's own rows, ranked by its own counts, with shares of the whole view */
	ck_assert_before(line(as, "     20000   50.0%     4.000s     12.1ms  pipe          "
				  "anon_pipe_read\n"), cc1);
	ck_assert_before(line(cc1, "     16099   40.2%     3.900s     10.0ms  pipe          "
				   "anon_pipe_read\n"),
			 line(cc1, "      1500    3.8%    200.0ms      5.0ms  -             "
				   "[preempted]\n"));
	ck_assert_ptr_nonnull(line(make, "      1500    3.8%     1.000s    900.0ms  -             "
					 "do_wait\n"));
	free(out);
}
END_TEST

START_TEST(stacks)
{
	static const char expect[] =
		"     36099   90.2%     7.900s     12.1ms  pipe          anon_pipe_read\n"
		"        stack #1: 19990 (55.4%), off-CPU 3.990s, comm as\n"
		"          __schedule\n"
		"          schedule\n"
		"          anon_pipe_read\n"
		"          vfs_read\n"
		"          ksys_read\n"
		"          do_syscall_64\n"
		"          entry_SYSCALL_64_after_hwframe\n"
		"        (1 more stacks)\n"
		"  (3 more rows: -n 0 shows all)\n";
	struct render_opts o = table_opts();
	char *out;
	const char *p;

	o.stacks = true;
	o.nstacks = 1;
	o.nrows = 1;
	o.views = SP_VIEW_SCHED;
	out = table(FIX("run_a.json"), &o);
	p = line(out, "     36099");
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p, expect);
	free(out);
	/* --stack-rows 3: both stacks, no "more stacks" */
	o.nstacks = 3;
	out = table(FIX("run_a.json"), &o);
	ck_assert_ptr_nonnull(strstr(out, "        stack #2: 16099 (44.6%), off-CPU 3.900s, comm cc1\n"));
	ck_assert_ptr_null(strstr(out, "more stacks"));
	free(out);
}
END_TEST

START_TEST(helpers)
{
	struct render_opts o = table_opts();
	struct sp_target_info t = { .mode = SP_TARGET_COMMAND, .command = "sleep 1",
				    .exit_status = 130 };
	int pids[] = { 1, 22 };
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	ck_assert(sp_pct(1, 4) == 25.0);
	ck_assert(sp_pct(5, 0) == 0.0); /* no total: no share, no NaN */
	o.nrows = 3;
	ck_assert_uint_eq(sp_rows_shown(10, &o), 3);
	ck_assert_uint_eq(sp_rows_shown(2, &o), 2);
	o.nrows = 0;
	ck_assert_uint_eq(sp_rows_shown(10, &o), 10);

	m = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(m);
	sp_print_target(&t, m);
	fputc('|', m);
	t.exit_status = -1; /* not known: no exit */
	t.command = NULL;
	sp_print_target(&t, m);
	fputc('|', m);
	t.mode = SP_TARGET_PIDS;
	t.pids = pids;
	t.npids = 2;
	sp_print_target(&t, m);
	fputc('|', m);
	t.mode = SP_TARGET_ALL;
	sp_print_target(&t, m);
	fputc('|', m);
	sp_print_more_rows(3, 3, m);
	sp_print_more_rows(3, 10, m);
	ck_assert_int_eq(fclose(m), 0);
	ck_assert_str_eq(buf, "command: sleep 1 (exit 130)|command: ?|pids: 1,22|system-wide|"
			      "  (7 more rows: -n 0 shows all)\n");
	free(buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("format_table");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, header);
	tcase_add_test(tc, sections);
	tcase_add_test(tc, rows_limit);
	tcase_add_test(tc, by_comm);
	tcase_add_test(tc, stacks);
	tcase_add_test(tc, helpers);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
