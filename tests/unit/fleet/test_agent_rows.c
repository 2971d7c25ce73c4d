// SPDX-License-Identifier: BSD-2-Clause
/*
 * src/fleet/agent_rows.c and spool.c: an interval's rows (one per row and comm, "[other]" for
 * what the comms do not cover, so sums by caller stay exact; the stamp; escaping; losses),
 * the spool's text round trip, and the spool itself (sequence numbers that survive a
 * reopen, oldest first, the limit dropping the oldest but never the interval being sent,
 * leftovers and carried losses found by the next open).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit.h"
#include "fleet/agent_rows.h"
#include "fleet/sink.h"
#include "fleet/spool.h"
#include "base/util.h"

static const struct agent_stamp stamp = {
	.host = "h1", .boot_id = "b-1", .kernel = "6.1.0",
	.start_unix_ns = 1700000000ULL * 1000000000ULL,
	.end_unix_ns = 1700000060ULL * 1000000000ULL + 5, .seq = 42,
};

/* a run: caller anon_pipe_read with comms a (3) and b (4) of a count of 9, and one without comms */
static void make_run(struct sp_run *r)
{
	static struct sp_comm_stat comms[2] = { { "a", 3, 30, 10 }, { "b\"q\n", 4, 40, 20 } };
	static struct sp_sched_row rows[2];
	static struct sp_lock_row locks[1];

	sp_run_init(r);
	rows[0] = (struct sp_sched_row){ .caller = "anon_pipe_read", .wait = "pipe", .count = 9,
					 .offcpu_ns = 100, .max_ns = 50, .blocked_ns = 60,
					 .runq_ns = 40, .throttled_ns = 5, .migrated = 2,
					 .migrated_runq_ns = 30, .runq_max_ns = 25, .has_runq = true };
	rows[0].comms.v = comms;
	rows[0].comms.n = 2;
	static struct sp_cpu_taker takers[2] = {
		{ .kind = "preempted-by", .comm = "hog", .cgroup = "/job", .where = "inside",
		  .count = 4, .ns = 6 },
		{ .kind = "ran-before", .comm = "kworker/0:1", .where = "outside", .count = 1 },
	};

	rows[1] = (struct sp_sched_row){ .caller = "[preempted]", .count = 5, .offcpu_ns = 7 };
	rows[1].takers.v = takers;
	rows[1].takers.n = 2;
	locks[0] = (struct sp_lock_row){ .caller = "f", .kind = "mutex", .lock = "m", .count = 2,
					 .wait_ns = 9, .max_ns = 8 };
	r->sched.rows = rows;
	r->sched.nrows = 2;
	r->sched.lost_rows = 11;
	r->locks.rows = locks;
	r->locks.nrows = 1;
}

START_TEST(rows)
{
	struct agent_batch b;
	struct sp_run r;
	const char *s;

	make_run(&r);
	ck_assert_int_eq(agent_batch_build(&r, &stamp, &b), 0);
	ck_assert_uint_eq(b.seq, 42);
	/* a, b, [other] (9 - 7 = 2), then the row without comms as [other] 5 */
	ck_assert_uint_eq(b.rows[AT_SCHEDULES], 4);
	s = b.t[AT_SCHEDULES].p;
	ck_assert_msg(strstr(s, "{\"host\":\"h1\",\"boot_id\":\"b-1\",\"kernel\":\"6.1.0\","
			     "\"interval_start\":\"2023-11-14 22:13:20\","
			     "\"interval_end\":\"2023-11-14 22:14:20\",\"seq\":42,"
			     "\"caller\":\"anon_pipe_read\",\"wait\":\"pipe\",\"comm\":\"a\","
			     "\"count\":3,\"offcpu_ns\":30,\"max_ns\":10,\"blocked_ns\":60,"
			     "\"runq_ns\":40,\"throttled_ns\":5,\"migrated\":2,"
			     "\"migrated_runq_ns\":30,\"runq_max_ns\":25}\n"), "%s", s);
	/* the row's split on its first comm line only: its lines add up to the row */
	ck_assert_msg(strstr(s, "\"comm\":\"[other]\",\"count\":2,\"offcpu_ns\":30,\"max_ns\":50,"
			     "\"blocked_ns\":0,\"runq_ns\":0,\"throttled_ns\":0,\"migrated\":0,"
			     "\"migrated_runq_ns\":0,\"runq_max_ns\":0}"), "%s", s);
	ck_assert_msg(strstr(s, "\"comm\":\"b\\\"q\\n\",\"count\":4"), "escaping: %s", s);
	ck_assert_msg(strstr(s, "\"comm\":\"[other]\",\"count\":2,\"offcpu_ns\":30,"), "%s", s);
	ck_assert_msg(strstr(s, "\"caller\":\"[preempted]\",\"wait\":\"\",\"comm\":\"[other]\","
			     "\"count\":5,\"offcpu_ns\":7"), "%s", s);
	/* who took the CPU: a line per (row, taker), cgroup '' when unknown */
	ck_assert_uint_eq(b.rows[AT_TAKERS], 2);
	ck_assert_msg(strstr(b.t[AT_TAKERS].p, "\"seq\":42,\"caller\":\"[preempted]\",\"wait\":\"\","
			     "\"kind\":\"preempted-by\",\"comm\":\"hog\",\"cgroup\":\"/job\","
			     "\"side\":\"inside\",\"count\":4,\"ns\":6}\n"), "%s", b.t[AT_TAKERS].p);
	ck_assert_msg(strstr(b.t[AT_TAKERS].p, "\"comm\":\"kworker/0:1\",\"cgroup\":\"\","
			     "\"side\":\"outside\",\"count\":1,\"ns\":0}"), "%s", b.t[AT_TAKERS].p);
	ck_assert_uint_eq(b.rows[AT_LOCKS], 1);
	ck_assert_uint_eq(b.rows[AT_PROFILE], 0);
	/* losses: only what is not zero */
	ck_assert_uint_eq(b.rows[AT_LOSSES], 1);
	ck_assert_msg(strstr(b.t[AT_LOSSES].p, "\"what\":\"schedules.lost_rows\",\"count\":11}"),
		      "%s", b.t[AT_LOSSES].p);
	ck_assert_int_eq(agent_batch_loss(&b, &stamp, "spool.dropped_intervals", 0), 0);
	ck_assert_uint_eq(b.rows[AT_LOSSES], 1);
	agent_batch_free(&b);
}
END_TEST

START_TEST(text_round_trip)
{
	const char *tables[AT__N];
	struct agent_batch b;
	struct abuf t = { 0 };
	size_t lens[AT__N];
	struct sp_run r;

	make_run(&r);
	ck_assert_int_eq(agent_batch_build(&r, &stamp, &b), 0);
	ck_assert_int_eq(agent_batch_text(&b, &t), 0);
	ck_assert_int_eq(agent_batch_parse(t.p, t.len, tables, lens), 0);
	for (int i = 0; i < AT__N; i++) {
		ck_assert_uint_eq(lens[i], b.t[i].len);
		if (lens[i])
			ck_assert(!memcmp(tables[i], b.t[i].p, lens[i]));
	}
	/* the losses a batch carries, read back from its text (a dropped batch's are carried on) */
	ck_assert_uint_eq(agent_batch_losses(t.p, t.len, "schedules.lost_rows"), 11);
	ck_assert_uint_eq(agent_batch_losses(t.p, t.len, "spool.dropped_intervals"), 0);
	ck_assert_uint_eq(agent_batch_losses("#nosuch\n", 8, "schedules.lost_rows"), 0);
	/* cut short, or a line that is no row: not a batch */
	ck_assert_int_eq(agent_batch_parse(t.p, t.len - 1, tables, lens), -EINVAL);
	ck_assert_int_eq(agent_batch_parse("#nosuch\n{}\n", 11, tables, lens), -EINVAL);
	ck_assert_int_eq(agent_batch_parse("{}\n", 3, tables, lens), -EINVAL);
	ck_assert_int_eq(agent_batch_parse("", 0, tables, lens), 0);
	abuf_free(&t);
	agent_batch_free(&b);
}
END_TEST

static char dir[64];

static void rm_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(spool_queue)
{
	char text[1000], *got;
	uint64_t seq, n, first, last, bytes;
	struct spool *s;
	size_t len;

	snprintf(dir, sizeof(dir), "/tmp/test_spool.%d", (int)getpid());
	srandom(1); /* incompressible: the gzip'd file is about as large as the text */
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (char)random();
	ck_assert_int_eq(spool_open(dir, 2500, &s, NULL, 0), 0);
	for (int i = 1; i <= 2; i++) {
		ck_assert_int_eq(spool_next_seq(s, &seq), 0);
		ck_assert_uint_eq(seq, i);
		ck_assert_int_eq(spool_put(s, seq, text, sizeof(text), &n, &first, &last), 0);
		ck_assert_uint_eq(n, 0);
	}
	/* the oldest is being sent: the third drops the second, not it */
	ck_assert_int_eq(spool_take(s, &seq, &got, &len), 0);
	ck_assert_uint_eq(seq, 1);
	ck_assert_uint_eq(len, sizeof(text));
	ck_assert(!memcmp(got, text, len)); /* the same bytes back */
	free(got);
	ck_assert_int_eq(spool_next_seq(s, &seq), 0);
	ck_assert_int_eq(spool_put(s, seq, text, sizeof(text), &n, &first, &last), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(first, 2);
	ck_assert_uint_eq(last, 2);
	spool_done(s, 1, true);
	ck_assert_uint_eq(spool_count(s, &bytes), 1);
	ck_assert_uint_ge(bytes, sizeof(text)); /* gzip's header and stored blocks */
	ck_assert_uint_lt(bytes, sizeof(text) + 100);
	ck_assert_int_eq(spool_put(s, 99, text, 0, &n, &first, &last), 0); /* an empty batch */
	ck_assert_int_eq(spool_carry_save(s, 5, 1), 0);
	spool_close(s);
	/* reopened: seq goes on, interval 3 is still there, and the carried losses */
	ck_assert_int_eq(spool_open(dir, 2500, &s, NULL, 0), 0);
	ck_assert_int_eq(spool_next_seq(s, &seq), 0);
	ck_assert_uint_eq(seq, 100);
	ck_assert_int_eq(spool_take(s, &seq, &got, &len), 0);
	ck_assert_uint_eq(seq, 3);
	free(got);
	spool_done(s, seq, false); /* not delivered: stays */
	ck_assert_int_eq(spool_take(s, &seq, &got, &len), 0);
	ck_assert_uint_eq(seq, 3);
	free(got);
	spool_done(s, seq, true);
	ck_assert_int_eq(spool_take(s, &seq, &got, &len), 0); /* then the empty one */
	ck_assert_uint_eq(seq, 99);
	ck_assert_uint_eq(len, 0);
	free(got);
	spool_done(s, seq, true);
	ck_assert_int_eq(spool_take(s, &seq, &got, &len), -ENOENT);
	{
		uint64_t d, u;

		spool_carry_load(s, &d, &u);
		ck_assert_uint_eq(d, 5);
		ck_assert_uint_eq(u, 1);
		spool_carry_load(s, &d, &u); /* kept until saved again */
		ck_assert_uint_eq(d, 5);
		ck_assert_int_eq(spool_carry_save(s, 0, 0), 0);
		spool_carry_load(s, &d, &u);
		ck_assert_uint_eq(d, 0);
		ck_assert_uint_eq(u, 0);
	}
	spool_close(s);
	/* a file gone behind the spool's back: an error once, then out of the queue */
	{
		char path[128];
		FILE *f;

		snprintf(path, sizeof(path), "%s/00000000000000000200.batch", dir);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs("not gzip", f);
		fclose(f);
		ck_assert_int_eq(spool_open(dir, 2500, &s, NULL, 0), 0);
		ck_assert_int_eq(unlink(path), 0);
		ck_assert_int_eq(spool_take(s, &seq, &got, &len), -EIO);
		ck_assert_uint_eq(seq, 200);
		ck_assert_int_eq(spool_take(s, &seq, &got, &len), -ENOENT);
		spool_close(s);
	}
	rm_dir();
}
END_TEST

START_TEST(spool_too_big)
{
	char text[3000];
	uint64_t n, first, last;
	struct spool *s;

	snprintf(dir, sizeof(dir), "/tmp/test_spool2.%d", (int)getpid());
	srandom(2);
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (char)random();
	ck_assert_int_eq(spool_open(dir, 2500, &s, NULL, 0), 0);
	ck_assert_int_eq(spool_put(s, 1, text, sizeof(text), &n, &first, &last), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(first, 1);
	ck_assert_uint_eq(spool_count(s, NULL), 0);
	spool_close(s);
	rm_dir();
}
END_TEST

START_TEST(schema_statements)
{
	static const char sql[] = "-- a comment; with a semicolon\n"
				  "CREATE DATABASE IF NOT EXISTS schedprof;\n\n"
				  "CREATE TABLE schedprof.t (a UInt8) -- the column\n"
				  "ENGINE = MergeTree ORDER BY a /*TTL*/;\n";
	char **v = sink_schema_statements(sql, "fleet", "TTL x");

	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(v[0], "CREATE DATABASE IF NOT EXISTS fleet");
	ck_assert_str_eq(v[1], "CREATE TABLE fleet.t (a UInt8) \nENGINE = MergeTree ORDER BY a TTL x");
	ck_assert_ptr_null(v[2]);
	sink_free_statements(v);
	v = sink_schema_statements(sql, "schedprof", NULL);
	ck_assert_str_eq(v[1], "CREATE TABLE schedprof.t (a UInt8) \nENGINE = MergeTree ORDER BY a ");
	sink_free_statements(v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agent_rows");
	TCase *tc = tcase_create("rows");

	tcase_add_test(tc, rows);
	tcase_add_test(tc, text_round_trip);
	tcase_add_test(tc, spool_queue);
	tcase_add_test(tc, spool_too_big);
	tcase_add_test(tc, schema_statements);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
