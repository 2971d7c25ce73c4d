/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The warehouse read back (src/fleet/warehouse.c) without a server: --since/--until times,
 * the SQL (selection, one row per interval and key before the sums), and answers turned into
 * a run (rows grouped, totals, losses, a bad answer refused with its line).
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"
#include "fleet/warehouse.h"

static int64_t t(const char *s)
{
	int64_t v = -1;

	ck_assert_msg(warehouse_parse_time(s, 1000000, &v) == 0, "%s", s);
	return v;
}

START_TEST(times)
{
	int64_t v;

	ck_assert_int_eq(t("2026-11-30T22:00:00Z"), 1796076000);
	ck_assert_int_eq(t("2026-11-30t22:00:00.123z"), 1796076000);
	ck_assert_int_eq(t("2026-11-30T23:00:00+01:00"), 1796076000);
	ck_assert_int_eq(t("2026-11-30T21:30:00-00:30"), 1796076000);
	ck_assert_int_eq(t("2026-11-30"), 1796076000 - 22 * 3600);
	ck_assert_int_eq(t("now"), 1000000);
	ck_assert_int_eq(t("-90s"), 1000000 - 90);
	ck_assert_int_eq(t("-15m"), 1000000 - 900);
	ck_assert_int_eq(t("-1h"), 1000000 - 3600);
	ck_assert_int_eq(t("-7d"), 1000000 - 7 * 86400);
	ck_assert_int_eq(t("-2w"), 1000000 - 14 * 86400);
	for (const char *const *s = (const char *const[]){ "2026-11-30T22:00:00", "2026-02-31",
							  "2026-13-01", "-1y", "-h", "-1", "1h",
							  "yesterday", "2026-11-30T25:00:00Z",
							  "2026-11-30T22:00:00Zx", "-99999999999w",
							  NULL };
	     *s; s++)
		ck_assert_msg(warehouse_parse_time(*s, 1000000, &v) == -EINVAL, "%s", *s);
}
END_TEST

START_TEST(sql)
{
	const char *hosts[] = { "web1", "o'brien" };
	struct warehouse_select sel = { .hosts = hosts, .nhosts = 2, .has_since = true,
					.since = 100, .has_until = true, .until = 200 };
	char *q = warehouse_sql(WAREHOUSE_SCHEDULES, "fleetdb", &sel, NULL);

	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_nonnull(strstr(q, "FROM fleetdb.schedules WHERE 1 AND host IN ('web1',"
					"'o\\'brien') AND interval_start >= toDateTime(100) AND "
					"interval_start < toDateTime(200)"));
	/* one row per interval and key (a re-sent interval counts once), then the sums */
	ck_assert_ptr_nonnull(strstr(q, "any(count)"));
	ck_assert_ptr_nonnull(strstr(q, "any(runq_ns) AS q"));
	free(q);
	q = warehouse_sql(WAREHOUSE_LOCKS, "fleetdb", &sel, NULL);
	ck_assert_ptr_nonnull(strstr(q, "GROUP BY host, boot_id, seq, caller, kind, lock, comm)"));
	free(q);
	q = warehouse_sql(WAREHOUSE_SCHEDULES, "fleetdb", &sel, NULL);
	ck_assert_ptr_nonnull(strstr(q, "GROUP BY host, boot_id, seq, caller, wait, comm) GROUP BY "
					"caller, wait, comm ORDER BY caller, wait, comm FORMAT "
					"TabSeparated"));
	free(q);
	q = warehouse_sql(WAREHOUSE_COLUMNS, "fleetdb", &sel, NULL);
	ck_assert_ptr_nonnull(strstr(q, "FROM system.columns WHERE database = 'fleetdb' AND "
					"(table = 'schedules' AND name IN ('blocked_ns', "));
	ck_assert_ptr_nonnull(strstr(q, "OR table = 'profile' AND name = 'hz' OR table = "
					"'cpu_takers' AND name = 'ns')"));
	free(q);
	sel = (struct warehouse_select){ 0 };
	q = warehouse_sql(WAREHOUSE_META, "schedprof", &sel, NULL);
	ck_assert_ptr_nonnull(q);
	for (const char *const *tb = (const char *const[]){ "schedprof.schedules WHERE 1 UNION",
							   "schedprof.profile WHERE 1 UNION",
							   "schedprof.locks WHERE 1 UNION",
							   "schedprof.losses WHERE 1)", NULL };
	     *tb; tb++)
		ck_assert_msg(strstr(q, *tb), "%s not in %s", *tb, q);
	free(q);
}
END_TEST

static void add(struct warehouse_run *w, enum warehouse_query q, const char *body)
{
	char msg[128] = "";
	int err = warehouse_add_result(w, q, body, strlen(body), msg, sizeof(msg));

	ck_assert_msg(err == 0, "%d: %s", err, msg);
}

START_TEST(rows_to_run)
{
	struct warehouse_run w;
	struct sp_run *r = &w.run;

	warehouse_run_init(&w);
	add(&w, WAREHOUSE_META, "a\t6.1\t100\t160\t60\nb\t6.1\t90\t150\t59\nb\t6.2\t150\t170\t20\n");
	/* the row's split on one of its comm lines (count, time, max, then blocked, runq,
	 * throttled, migrated, migrated runq, runq max) */
	add(&w, WAREHOUSE_SCHEDULES, "[preempted]\t\tcc1\t4\t40\t20\t0\t40\t25\t1\t9\t20\n"
				     "anon_pipe_read\tpipe\t[other]\t1\t10\t30\t0\t0\t0\t0\t0\t0\n"
				     "anon_pipe_read\tpipe\tcat\t2\t20\t15\t0\t0\t0\t0\t0\t0\n"
				     "anon_pipe_read\tpipe\tsort\t5\t30\t9\t0\t0\t0\t0\t0\t0\n"
				     "do_wait\tchild\tsh\\tx\t1\t1000\t1000\t990\t10\t0\t0\t0\t10\n");
	/* who took the CPU: to the rows of the same caller and wait; alike ones merged */
	add(&w, WAREHOUSE_TAKERS, "[preempted]\t\tpreempted-by\tcc1\t/job\tinside\t3\t30\n"
				  "[preempted]\t\tpreempted-by\tcc1\t/job\tinside\t1\t5\n"
				  "[preempted]\t\tran-before\tkworker/0:1\t\toutside\t2\t8\n"
				  "gone\t\tran-before\tx\t\toutside\t1\t1\n");
	add(&w, WAREHOUSE_PROFILE, "main\t/usr/bin/x\tx\t7\t99\nclear_page_erms\t[kernel]\tcc1\t4\t0\n"
				   "clear_page_erms\t[kernel]\tx\t5\t199\n");
	add(&w, WAREHOUSE_LOCKS, "pipe_read\tmutex\tpipe.mutex\tcat\t3\t300\t200\n"
				 "pipe_read\tmutex\tpipe.mutex\tsort\t1\t50\t50\n");
	add(&w, WAREHOUSE_LOSSES, "schedules.lost_rows\t2\nspool.dropped_intervals\t3\n"
				  "odd.thing\t4\n"
				  "profile.lost\t0\n");
	ck_assert_int_eq(warehouse_run_finish(&w), 0);

	ck_assert_uint_eq(w.nhosts, 2);
	ck_assert_uint_eq(w.intervals, 139);
	ck_assert_str_eq(w.hosts, "a, b");
	ck_assert_str_eq(w.kernels, "6.1, 6.2");
	ck_assert_uint_eq(w.nkernels, 2);
	ck_assert_str_eq(r->hostname, "2 hosts");
	ck_assert_str_eq(r->kernel, "2 kernels");
	ck_assert_uint_eq(r->start_unix_ns, 90000000000ull);
	ck_assert_uint_eq(r->elapsed_ns, 80000000000ull);

	ck_assert(r->sched.present);
	ck_assert_uint_eq(r->sched.nrows, 3); /* anon_pipe_read's comms in one row */
	ck_assert_str_eq(r->sched.rows[0].caller, "anon_pipe_read");
	ck_assert_str_eq(r->sched.rows[0].wait, "pipe");
	ck_assert_uint_eq(r->sched.rows[0].count, 8); /* [other] counts in the row ... */
	ck_assert_uint_eq(r->sched.rows[0].offcpu_ns, 60);
	ck_assert_uint_eq(r->sched.rows[0].max_ns, 30);
	ck_assert_uint_eq(r->sched.rows[0].comms.n, 2); /* ... and is none of its comms */
	ck_assert_str_eq(r->sched.rows[0].comms.v[0].comm, "sort");
	ck_assert(!r->sched.rows[0].has_runq); /* no split: all 0 */
	ck_assert_str_eq(r->sched.rows[1].caller, "[preempted]");
	ck_assert_ptr_null(r->sched.rows[1].wait); /* '' is no wait class */
	ck_assert(r->sched.rows[1].has_runq);
	ck_assert_uint_eq(r->sched.rows[1].runq_ns, 40);
	ck_assert_uint_eq(r->sched.rows[1].takers.n, 2);
	ck_assert_str_eq(r->sched.rows[1].takers.v[0].comm, "cc1"); /* by time */
	ck_assert_uint_eq(r->sched.rows[1].takers.v[0].count, 4);
	ck_assert_uint_eq(r->sched.rows[1].takers.v[0].ns, 35);
	ck_assert_str_eq(r->sched.rows[1].takers.v[0].cgroup, "/job");
	ck_assert_ptr_null(r->sched.rows[1].takers.v[1].cgroup); /* '' is unknown */
	ck_assert_str_eq(r->sched.rows[1].takers.v[1].where, "outside");
	ck_assert_uint_eq(r->sched.takers.n, 2); /* the view's sum */
	ck_assert_uint_eq(r->sched.rows[1].throttled_ns, 25);
	ck_assert_uint_eq(r->sched.rows[1].migrated, 1);
	ck_assert_uint_eq(r->sched.rows[1].migrated_runq_ns, 9);
	ck_assert_uint_eq(r->sched.rows[1].runq_max_ns, 20);
	ck_assert(r->sched.rows[2].has_runq);
	ck_assert_uint_eq(r->sched.rows[2].blocked_ns, 990);
	ck_assert_str_eq(r->sched.rows[2].comms.v[0].comm, "sh\tx"); /* unescaped */
	ck_assert_uint_eq(r->sched.lost_rows, 2);
	ck_assert_uint_eq(r->sched.total, 15); /* rows + lost */
	ck_assert_uint_eq(r->sched.preempted, 4);
	ck_assert_uint_eq(r->sched.voluntary, 11);

	ck_assert_uint_eq(r->profile.nrows, 2);
	ck_assert_str_eq(r->profile.rows[0].function, "clear_page_erms");
	ck_assert_uint_eq(r->profile.rows[0].samples, 9);
	ck_assert_uint_eq(r->profile.rows[0].comms.n, 2);
	ck_assert_str_eq(r->profile.rows[0].comms.v[0].comm, "x");
	ck_assert_uint_eq(r->profile.total, 16);
	ck_assert_uint_eq(r->profile.target, 16);
	ck_assert_uint_eq(r->profile.hz, 199); /* the highest rate of the rows (0: not recorded) */
	ck_assert(r->locks.present && r->locks.available);
	ck_assert_uint_eq(r->locks.nrows, 1);
	ck_assert_uint_eq(r->locks.total, 4);
	ck_assert_uint_eq(r->locks.rows[0].wait_ns, 350);
	ck_assert_uint_eq(r->locks.rows[0].comms.n, 2);
	ck_assert_str_eq(r->locks.rows[0].lock, "pipe.mutex");
	ck_assert_uint_eq(w.spool_dropped, 3);
	ck_assert_str_eq(w.other_losses, "odd.thing 4, cpu_takers.without_row 1");
	warehouse_run_free(&w);
}
END_TEST

START_TEST(bad_answers)
{
	static const struct {
		enum warehouse_query q;
		const char *body;
	} bad[] = {
		{ WAREHOUSE_SCHEDULES, "pipe_read\tpipe\tcat\t1\t2\t3\t0\t0\t0\t0\t0\n" }, /* short */
		{ WAREHOUSE_SCHEDULES, "pipe_read\tpipe\tcat\t1\t2\t3\t0\t0\t0\t0\t0\t0\t4\n" },
		{ WAREHOUSE_SCHEDULES, "pipe_read\tpipe\tcat\t1\t2\t3\t0\tx\t0\t0\t0\t0\n" },
		{ WAREHOUSE_PROFILE, "main\tx\tc\t-1\n" },
		{ WAREHOUSE_LOCKS, "a\tb\tc\td\t1\t2\tx\n" },
		{ WAREHOUSE_META, "a\t6.1\t200\t100\t1\n" }, /* ends before it starts */
		{ WAREHOUSE_LOSSES, "Code: 60, e.displayText() = DB::Exception: Table x doesn't "
				    "exist\n" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct warehouse_run w;
		char msg[128] = "";

		warehouse_run_init(&w);
		ck_assert_int_eq(warehouse_add_result(&w, bad[i].q, bad[i].body,
						      strlen(bad[i].body), msg, sizeof(msg)),
				 -EINVAL);
		ck_assert_msg(strstr(msg, "line 1"), "%zu: %s", i, msg);
		warehouse_run_free(&w);
	}
}
END_TEST

/* Tables of an older agent (no split columns, no rate) are read with zeros for them. */
START_TEST(older_table)
{
	struct warehouse_select sel = { 0 };
	struct warehouse_run w;
	char *q;

	warehouse_run_init(&w);
	add(&w, WAREHOUSE_COLUMNS, "");
	ck_assert(!w.sched_split);
	ck_assert(!w.has_takers && !warehouse_query_needed(WAREHOUSE_TAKERS, &w));
	q = warehouse_sql(WAREHOUSE_SCHEDULES, "schedprof", &sel, &w);
	ck_assert_ptr_null(strstr(q, "runq_ns"));
	ck_assert_ptr_nonnull(strstr(q, "0 AS q"));
	free(q);
	q = warehouse_sql(WAREHOUSE_PROFILE, "schedprof", &sel, &w);
	ck_assert_ptr_null(strstr(q, "hz"));
	ck_assert_ptr_nonnull(strstr(q, "0 AS h"));
	free(q);
	add(&w, WAREHOUSE_COLUMNS, "profile.hz\n");
	q = warehouse_sql(WAREHOUSE_PROFILE, "schedprof", &sel, &w);
	ck_assert_ptr_nonnull(strstr(q, "any(hz) AS h"));
	free(q);
	add(&w, WAREHOUSE_COLUMNS, "cpu_takers.ns\nschedules.blocked_ns\nschedules.migrated\n"
				   "schedules.migrated_runq_ns\nschedules.runq_max_ns\n"
				   "schedules.runq_ns\n");
	ck_assert(!w.sched_split); /* throttled_ns is missing */
	ck_assert(w.has_takers && warehouse_query_needed(WAREHOUSE_TAKERS, &w));
	add(&w, WAREHOUSE_COLUMNS, "schedules.throttled_ns\n");
	ck_assert(w.sched_split);
	q = warehouse_sql(WAREHOUSE_SCHEDULES, "schedprof", &sel, &w);
	ck_assert_ptr_nonnull(strstr(q, "any(runq_ns) AS q"));
	free(q);
	warehouse_run_free(&w);
}
END_TEST

START_TEST(empty_selection)
{
	struct warehouse_run w;

	warehouse_run_init(&w);
	add(&w, WAREHOUSE_META, "");
	add(&w, WAREHOUSE_SCHEDULES, "");
	ck_assert_int_eq(warehouse_run_finish(&w), 0);
	ck_assert_uint_eq(w.intervals, 0);
	ck_assert(!w.run.sched.present && !w.run.profile.present && !w.run.locks.present);
	warehouse_run_free(&w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("warehouse");
	TCase *tc = tcase_create("warehouse");

	tcase_add_test(tc, times);
	tcase_add_test(tc, sql);
	tcase_add_test(tc, rows_to_run);
	tcase_add_test(tc, bad_answers);
	tcase_add_test(tc, older_table);
	tcase_add_test(tc, empty_selection);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
