// SPDX-License-Identifier: BSD-2-Clause
/*
 * The schedules view's row builder (src/collect/sched_rows.c) on hand-made map records and
 * the fixture kallsyms: the wait class (pipe from the caller's name), rows that name alike
 * merged with their comms, stacks that symbolize alike merged, and every count kept:
 * row counts add up to the records', entries the dump lost go to lost_rows/missing_stacks.
 */
#include <errno.h>
#include "model.h"
#include "rows_fixture.h"
#include "sched_rows.h"
#include "schedprof/sched.h"

static struct sched_maps m;
static struct sp_run run;

static void setup(void)
{
	fixture_load();
	sp_records_init(&m.callers, sizeof(struct sp_caller_key), sizeof(struct sp_caller_val));
	sp_records_init(&m.stack_counts, sizeof(struct sp_stack_key), sizeof(struct sp_stack_val));
	sp_records_init(&m.stacks, sizeof(__u64), sizeof(struct sp_stack));
	sp_run_init(&run);
}

static void teardown(void)
{
	sched_maps_free(&m);
	sp_run_free(&run);
	fixture_free();
}

static void add_caller(uint64_t caller, uint32_t wait, const char *comm, uint64_t count,
		       uint64_t ns, uint64_t max)
{
	struct sp_caller_key k = { .caller = caller, .wait = wait };
	struct sp_caller_val v = { .count = count, .offcpu_ns = ns, .max_ns = max };

	SET_COMM(k.comm, comm);
	ck_assert_int_eq(sp_records_add(&m.callers, &k, &v), 0);
}

static void add_stack_count(uint64_t stack, uint64_t caller, uint32_t wait, uint32_t tgid,
			    const char *comm, uint64_t count, uint64_t ns)
{
	struct sp_stack_key k = { .stack = stack, .caller = caller, .wait = wait, .tgid = tgid };
	struct sp_stack_val v = { .count = count, .offcpu_ns = ns };

	SET_COMM(k.comm, comm);
	ck_assert_int_eq(sp_records_add(&m.stack_counts, &k, &v), 0);
}

static void add_stack(__u64 id, const uint64_t *ips, uint32_t nr)
{
	add_kstack_to(&m.stacks, id, ips, nr);
}

static const struct sp_sched_row *row(const char *caller, const char *wait)
{
	for (size_t i = 0; i < run.sched.nrows; i++) {
		const struct sp_sched_row *r = &run.sched.rows[i];

		if (!strcmp(r->caller, caller) && !strcmp(r->wait ? r->wait : "-", wait))
			return r;
	}
	ck_abort_msg("no row %s/%s", caller, wait);
	return NULL;
}

START_TEST(wait_classes)
{
	ck_assert_str_eq(sched_wait_name(SP_WAIT_NONE, "anon_pipe_read"), "pipe");
	ck_assert_str_eq(sched_wait_name(SP_WAIT_NONE, "pipe_write"), "pipe");
	ck_assert_str_eq(sched_wait_name(SP_WAIT_NONE, "pipe_wait_readable"), "pipe");
	/* a lock or io found in BPF wins over the name */
	ck_assert_str_eq(sched_wait_name(SP_WAIT_MUTEX, "anon_pipe_read"), "mutex");
	ck_assert_str_eq(sched_wait_name(SP_WAIT_IO, "do_exit"), "io");
	ck_assert_ptr_null(sched_wait_name(SP_WAIT_NONE, "do_exit"));
}
END_TEST

START_TEST(rows_merge_by_name_and_wait)
{
	uint64_t sum = 0;

	/* two addresses in anon_pipe_read: one row, wait "pipe", two comms */
	add_caller(A("anon_pipe_read", 0x10), SP_WAIT_NONE, "cat", 3, 300, 200);
	add_caller(A("anon_pipe_read", 0x80), SP_WAIT_NONE, "sort", 4, 400, 150);
	add_caller(A("anon_pipe_read", 0x80), SP_WAIT_NONE, "cat", 1, 50, 50);
	/* the same caller waiting for a mutex: another row */
	add_caller(A("anon_pipe_read", 0x10), SP_WAIT_MUTEX, "cat", 2, 20, 10);
	add_caller(A("path_openat", 0x4), SP_WAIT_RWSEM_WRITE, "touch", 5, 5000, 4000);
	add_caller(SP_CALLER_PREEMPTED, SP_WAIT_NONE, "cc1", 7, 70, 30);
	add_caller(SP_CALLER_IDLE, SP_WAIT_NONE, "swapper/0", 9, 90, 20);
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg), 0);

	ck_assert_uint_eq(run.sched.nrows, 5);
	ck_assert_uint_eq(row("anon_pipe_read", "pipe")->count, 8);
	ck_assert_uint_eq(row("anon_pipe_read", "pipe")->offcpu_ns, 750);
	ck_assert_uint_eq(row("anon_pipe_read", "pipe")->max_ns, 200);
	ck_assert_uint_eq(row("anon_pipe_read", "pipe")->comms.n, 2);
	ck_assert_uint_eq(row("anon_pipe_read", "mutex")->count, 2);
	ck_assert_uint_eq(row("path_openat", "rwsem-write")->count, 5);
	ck_assert_uint_eq(row("[preempted]", "-")->count, 7);
	ck_assert_uint_eq(row("cpu_idle", "-")->count, 9);
	/* exact: every record's count is in one row */
	for (size_t i = 0; i < run.sched.nrows; i++)
		sum += run.sched.rows[i].count;
	ck_assert_uint_eq(sum, 3 + 4 + 1 + 2 + 5 + 7 + 9);
	/* sorted by count */
	ck_assert_str_eq(run.sched.rows[0].caller, "cpu_idle");
	ck_assert_uint_eq(run.sched.lost_rows, 0);
	ck_assert_uint_eq(run.sched.missing_stacks, 0);
}
END_TEST

START_TEST(stacks_merge_and_missing)
{
	uint64_t caller = A("anon_pipe_read", 0x10);
	/* two stacks that differ only in offsets: they symbolize alike */
	uint64_t s1[] = { A("bpf_trace_run4", 0x40), A("__schedule", 0x300), A("schedule", 0x30),
			  caller, A("do_syscall_64", 0x20) };
	uint64_t s2[] = { A("bpf_trace_run4", 0x48), A("__schedule", 0x310), A("schedule", 0x38),
			  A("anon_pipe_read", 0x90), A("do_syscall_64", 0x28) };
	const struct sp_sched_row *r;

	add_caller(caller, SP_WAIT_NONE, "cat", 10, 1000, 500);
	add_stack(11, s1, 5);
	add_stack(22, s2, 5);
	add_stack_count(11, caller, SP_WAIT_NONE, 100, "cat", 4, 400);
	add_stack_count(22, caller, SP_WAIT_NONE, 100, "cat", 3, 300);
	add_stack_count(11, caller, SP_WAIT_NONE, 200, "cat", 2, 200); /* another process */
	add_stack_count(33, caller, SP_WAIT_NONE, 100, "cat", 1, 100); /* stack lost by the dump */
	m.callers.failed = 2;
	m.stack_counts.failed = 1;
	run.sched.lost_rows = 5; /* from BPF: kept */
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg), 0);

	r = row("anon_pipe_read", "pipe");
	ck_assert_uint_eq(r->stacks.n, 2);
	ck_assert_uint_eq(r->stacks.v[0].count, 7); /* sorted by count */
	ck_assert_uint_eq(r->stacks.v[0].time_ns, 700);
	ck_assert_int_eq(r->stacks.v[0].pid, 100);
	ck_assert_uint_eq(r->stacks.v[0].nframes, 4); /* from __schedule */
	ck_assert_str_eq(r->stacks.v[0].frames[0], "__schedule");
	ck_assert_str_eq(r->stacks.v[0].frames[2], "anon_pipe_read");
	ck_assert_uint_eq(r->stacks.v[1].count, 2);
	ck_assert_int_eq(r->stacks.v[1].pid, 200);
	/* nothing silently dropped */
	ck_assert_uint_eq(run.sched.lost_rows, 5 + 2);
	ck_assert_uint_eq(run.sched.missing_stacks, 1 + 1);
}
END_TEST

/*
 * The row map was full: the rows of (caller, wait, comm) it could not hold are in lost_rows,
 * but the stack map still had room for their stacks. Those stacks must show under no row
 * (not under the row of another comm, nor as a row of their own): rows + lost = total, and
 * a row's stacks never exceed it.
 */
START_TEST(stacks_of_lost_rows)
{
	uint64_t caller = A("anon_pipe_read", 0x10), other = A("do_exit", 0x10);
	uint64_t s1[] = { A("__schedule", 0x300), A("schedule", 0x30), caller };
	uint64_t s2[] = { A("__schedule", 0x300), A("schedule", 0x30), other };
	const struct sp_sched_row *r;
	uint64_t in_rows = 0, in_stacks = 0;

	add_caller(caller, SP_WAIT_NONE, "cat", 5, 500, 100);
	add_stack(11, s1, 3);
	add_stack(22, s2, 3);
	add_stack_count(11, caller, SP_WAIT_NONE, 100, "cat", 5, 500);
	add_stack_count(11, caller, SP_WAIT_NONE, 300, "sh", 7, 700); /* row (.., sh) lost */
	add_stack_count(22, other, SP_WAIT_NONE, 300, "sh", 3, 300);  /* row (do_exit) lost */
	run.sched.lost_rows = 10;
	run.sched.total = 15;
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg), 0);

	ck_assert_uint_eq(run.sched.nrows, 1);
	r = row("anon_pipe_read", "pipe");
	ck_assert_uint_eq(r->stacks.n, 1);
	ck_assert_str_eq(r->stacks.v[0].comm, "cat");
	for (size_t i = 0; i < run.sched.nrows; i++) {
		in_rows += run.sched.rows[i].count;
		for (size_t j = 0; j < run.sched.rows[i].stacks.n; j++)
			in_stacks += run.sched.rows[i].stacks.v[j].count;
		ck_assert_uint_le(in_stacks, in_rows);
	}
	ck_assert_uint_eq(in_rows + run.sched.lost_rows, run.sched.total);
	ck_assert_uint_eq(run.sched.missing_stacks, 0);
}
END_TEST

START_TEST(many_rows_linear)
{
	/* 20000 distinct callers (raw addresses): the index keeps this fast */
	for (uint64_t i = 0; i < 20000; i++)
		add_caller(0x1000 + i * 16, SP_WAIT_NONE, "x", 1, 1, 1);
	for (uint64_t i = 0; i < 20000; i++)
		add_caller(0x1000 + i * 16, SP_WAIT_NONE, "y", 1, 1, 1);
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg), 0);
	ck_assert_uint_eq(run.sched.nrows, 20000);
	for (size_t i = 0; i < run.sched.nrows; i++)
		ck_assert_uint_eq(run.sched.rows[i].count, 2);
}
END_TEST

START_TEST(many_stacks_one_row)
{
	uint64_t caller = A("anon_pipe_read", 0x10);

	/* 20000 distinct stacks behind one row, each seen twice (two stack ids): merged by index */
	add_caller(caller, SP_WAIT_NONE, "cat", 40000, 1, 1);
	for (uint64_t i = 0; i < 40000; i++) {
		uint64_t ips[] = { A("__schedule", 0x10), caller, 0x1000 + (i % 20000) * 16 };

		add_stack(i + 1, ips, 3);
		add_stack_count(i + 1, caller, SP_WAIT_NONE, 1, "cat", 1, 1);
	}
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg), 0);
	ck_assert_uint_eq(run.sched.nrows, 1);
	ck_assert_uint_eq(run.sched.rows[0].stacks.n, 20000);
	for (size_t i = 0; i < run.sched.rows[0].stacks.n; i++)
		ck_assert_uint_eq(run.sched.rows[0].stacks.v[i].count, 2);
}
END_TEST

START_TEST(wrong_record_size)
{
	struct sp_caller_val v = {};
	char k[4] = "abc";

	sp_records_free(&m.callers);
	sp_records_init(&m.callers, sizeof(k), sizeof(v));
	ck_assert_int_eq(sp_records_add(&m.callers, k, &v), 0);
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg), -EINVAL);
	ck_assert_uint_eq(run.sched.nrows, 0);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
		wait_classes,
		rows_merge_by_name_and_wait,
		stacks_merge_and_missing,
		stacks_of_lost_rows,
		many_rows_linear,
		many_stacks_one_row,
		wrong_record_size,
	};

	return run_tests("sched_rows", tests, sizeof(tests) / sizeof(tests[0]), setup, teardown);
}
