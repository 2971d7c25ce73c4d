// SPDX-License-Identifier: BSD-2-Clause
/*
 * The schedules view's row builder (src/views/schedules/rows.c) on hand-made map records and
 * the fixture kallsyms: the wait class (pipe from the caller's name), rows that name alike
 * merged with their comms, stacks that symbolize alike merged, and every count kept:
 * row counts add up to the records', entries the dump lost go to lost_rows/missing_stacks.
 * The BLOCKED/RUNQ split, run-queue percentiles from the log2 histogram, wakers,
 * the sleeps in progress at the stop, and the budget by wait class.
 */
#include <errno.h>
#include "model/model.h"
#include "../../rows/rows_fixture.h"
#include "views/schedules/rows.h"
#include "schedprof/sched.h"

static struct sched_maps m;
static struct sp_run run;

static void setup(void)
{
	fixture_load();
	sp_records_init(&m.callers, sizeof(struct sp_caller_key), sizeof(struct sp_caller_val));
	sp_records_init(&m.stack_counts, sizeof(struct sp_stack_key), sizeof(struct sp_stack_val));
	sp_records_init(&m.stacks, sizeof(__u64), sizeof(struct sp_stack));
	sp_records_init(&m.wakers, sizeof(struct sp_waker_key), sizeof(__u64));
	sp_records_init(&m.takers, sizeof(struct sp_taker_key), sizeof(struct sp_taker_val));
	sp_records_init(&m.in_progress, sizeof(__u32), sizeof(struct sp_sleep));
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
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg, NULL), 0);

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
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg, NULL), 0);

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
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg, NULL), 0);

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
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg, NULL), 0);
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
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg, NULL), 0);
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
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg, NULL), -EINVAL);
	ck_assert_uint_eq(run.sched.nrows, 0);
}
END_TEST

/* A row record with the run-queue fields: hist[i] waits in slot i. */
static void add_split(uint64_t caller, const char *comm, uint64_t count, uint64_t blocked,
		      uint64_t runq, uint64_t runq_max, uint64_t window_blocked,
		      const uint32_t *hist, int nslots)
{
	struct sp_caller_key k = { .caller = caller };
	struct sp_caller_val v = { .count = count, .offcpu_ns = blocked + runq,
				   .max_ns = blocked + runq, .blocked_ns = blocked,
				   .runq_ns = runq, .runq_max_ns = runq_max,
				   .window_blocked_ns = window_blocked };

	SET_COMM(k.comm, comm);
	for (int i = 0; i < nslots; i++)
		v.runq_hist[i] = hist[i];
	ck_assert_int_eq(sp_records_add(&m.callers, &k, &v), 0);
}

static void add_waker(uint64_t caller, const char *comm, uint32_t ctx, const char *wcomm,
		      uint64_t fn, uint64_t count)
{
	struct sp_waker_key k = { .row.caller = caller, .ctx = ctx, .function = fn };

	SET_COMM(k.row.comm, comm);
	if (wcomm)
		SET_COMM(k.comm, wcomm);
	ck_assert_int_eq(sp_records_add(&m.wakers, &k, &count), 0);
}

START_TEST(runq_percentiles)
{
	uint64_t h[SP_RUNQ_SLOTS] = { 0 };

	ck_assert_uint_eq(sched_runq_percentile(h, 0.5, 0), 0);
	/* 98 waits in [1024, 2048), 2 in [2^20, 2^21): p50 and p99 are slot upper bounds */
	h[10] = 98;
	h[20] = 2;
	ck_assert_uint_eq(sched_runq_percentile(h, 0.50, 1500000), 2047);
	ck_assert_uint_eq(sched_runq_percentile(h, 0.98, 1500000), 2047);
	ck_assert_uint_eq(sched_runq_percentile(h, 0.99, 1500000), 1500000); /* capped by max */
	ck_assert_uint_eq(sched_runq_percentile(h, 0.99, 3000000), (2ULL << 20) - 1);
	/* one wait: every percentile is it (rank 1) */
	memset(h, 0, sizeof(h));
	h[0] = 1;
	ck_assert_uint_eq(sched_runq_percentile(h, 0.01, 1), 1);
	/* the last slot is open-ended: the max */
	memset(h, 0, sizeof(h));
	h[SP_RUNQ_SLOTS - 1] = 3;
	ck_assert_uint_eq(sched_runq_percentile(h, 0.5, 1ULL << 40), 1ULL << 40);
}
END_TEST

START_TEST(split_merges_and_percentiles)
{
	uint32_t h1[SP_RUNQ_SLOTS] = { [10] = 60 }, h2[SP_RUNQ_SLOTS] = { [10] = 39, [22] = 1 };
	const struct sp_sched_row *r;

	/* one row from two comms and two addresses: sums, max of maxes, merged histogram */
	add_split(A("anon_pipe_read", 0x10), "as", 60, 6000, 90000, 1900, 6000, h1, SP_RUNQ_SLOTS);
	add_split(A("anon_pipe_read", 0x20), "cc1", 40, 4000, 5000000, 4000000, 4000, h2,
		  SP_RUNQ_SLOTS);
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg, NULL), 0);
	r = row("anon_pipe_read", "pipe");
	ck_assert(r->has_runq);
	ck_assert_uint_eq(r->count, 100);
	ck_assert_uint_eq(r->blocked_ns, 10000);
	ck_assert_uint_eq(r->runq_ns, 5090000);
	ck_assert_uint_eq(r->blocked_ns + r->runq_ns, r->offcpu_ns);
	ck_assert_uint_eq(r->runq_max_ns, 4000000);
	ck_assert_uint_eq(r->runq_p50_ns, 2047);
	ck_assert_uint_eq(r->runq_p99_ns, 2047); /* rank 99 of 100 is still in slot 10 */
	ck_assert_uint_eq(r->unfinished, 0);
	ck_assert(!run.sched.budget.present); /* no budget sums: none made up */
}
END_TEST

START_TEST(wakers_by_comm_and_function)
{
	uint64_t caller = A("anon_pipe_read", 0x10);
	const struct sp_sched_row *r;

	add_split(caller, "as", 10, 100, 100, 10, 100, NULL, 0);
	add_split(caller, "ld", 5, 100, 100, 10, 100, NULL, 0);
	/* cc1 from two offsets in the same function, and for two sleeper comms: one waker */
	add_waker(caller, "as", SP_WAKER_TASK, "cc1", A("path_openat", 0x10), 6);
	add_waker(caller, "as", SP_WAKER_TASK, "cc1", A("path_openat", 0x30), 2);
	add_waker(caller, "ld", SP_WAKER_TASK, "cc1", A("path_openat", 0x10), 3);
	add_waker(caller, "as", SP_WAKER_HARDIRQ, "ignored", SP_WAKER_TIMER, 1);
	add_waker(caller, "ld", SP_WAKER_SOFTIRQ, NULL, SP_WAKER_UNKNOWN, 2);
	/* the waker of a lost row (not in the row map): in no row */
	add_waker(A("do_exit", 0x10), "sh", SP_WAKER_TASK, "make", A("path_openat", 0x10), 9);
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg, NULL), 0);
	ck_assert_uint_eq(run.sched.nrows, 1);
	r = row("anon_pipe_read", "pipe");
	ck_assert_uint_eq(r->wakers.n, 3);
	ck_assert_str_eq(r->wakers.v[0].comm, "cc1");
	ck_assert_str_eq(r->wakers.v[0].function, "path_openat");
	ck_assert_uint_eq(r->wakers.v[0].count, 11);
	ck_assert_str_eq(r->wakers.v[1].comm, "[softirq]");
	ck_assert_str_eq(r->wakers.v[1].function, "[unknown]");
	ck_assert_uint_eq(r->wakers.v[1].count, 2);
	ck_assert_str_eq(r->wakers.v[2].comm, "[irq]");
	ck_assert_str_eq(r->wakers.v[2].function, "[timer]");
}
END_TEST

static void add_taker(uint64_t caller, const char *comm, uint32_t kind, const char *tcomm,
		      uint64_t cg, uint32_t inside, uint64_t count, uint64_t ns)
{
	struct sp_taker_key k = { .row.caller = caller, .kind = kind, .cgroup = cg,
				  .inside = inside };
	struct sp_taker_val v = { .count = count, .ns = ns };

	SET_COMM(k.row.comm, comm);
	SET_COMM(k.comm, tcomm);
	ck_assert_int_eq(sp_records_add(&m.takers, &k, &v), 0);
}

/*
 * Takers alike merge across the waiting tasks' comms and a CPU's pending slot (the same key
 * twice); kinds, cgroups and inside/outside stay apart; rows lost, or records of no count, add
 * nothing; by time.
 */
START_TEST(takers_merge_and_rank)
{
	const struct sp_sched_row *r;

	add_split(SP_CALLER_PREEMPTED, "cc1", 10, 100, 100, 10, 100, NULL, 0);
	add_split(SP_CALLER_PREEMPTED, "as", 5, 100, 100, 10, 100, NULL, 0);
	add_taker(SP_CALLER_PREEMPTED, "cc1", SP_TAKER_PREEMPTOR, "spin", 7, 0, 4, 400);
	add_taker(SP_CALLER_PREEMPTED, "as", SP_TAKER_PREEMPTOR, "spin", 7, 0, 2, 300);
	add_taker(SP_CALLER_PREEMPTED, "as", SP_TAKER_PREEMPTOR, "spin", 7, 0, 1, 50); /* slot */
	add_taker(SP_CALLER_PREEMPTED, "cc1", SP_TAKER_PREEMPTOR, "spin", 8, 0, 1, 1000);
	add_taker(SP_CALLER_PREEMPTED, "cc1", SP_TAKER_PREEMPTOR, "spin", 7, 1, 1, 10);
	add_taker(SP_CALLER_PREEMPTED, "cc1", SP_TAKER_BEFORE, "spin", 7, 0, 6, 600);
	add_taker(SP_CALLER_PREEMPTED, "cc1", SP_TAKER_BEFORE, "make", 7, 1, 0, 0);
	add_taker(A("do_exit", 0x10), "sh", SP_TAKER_BEFORE, "spin", 7, 0, 9, 900); /* lost row */
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg, NULL), 0);
	ck_assert_uint_eq(run.sched.nrows, 1);
	r = row("[preempted]", "-");
	ck_assert_uint_eq(r->takers.n, 4);
	ck_assert_str_eq(r->takers.v[0].kind, "preempted-by");
	ck_assert_uint_eq(r->takers.v[0].cgroup_id, 8);
	ck_assert_uint_eq(r->takers.v[0].ns, 1000);
	ck_assert_str_eq(r->takers.v[1].kind, "preempted-by");
	ck_assert_str_eq(r->takers.v[1].comm, "spin");
	ck_assert_str_eq(r->takers.v[1].where, "outside");
	ck_assert_uint_eq(r->takers.v[1].cgroup_id, 7);
	ck_assert_uint_eq(r->takers.v[1].count, 7);
	ck_assert_uint_eq(r->takers.v[1].ns, 750);
	ck_assert_str_eq(r->takers.v[2].kind, "ran-before");
	ck_assert_uint_eq(r->takers.v[2].count, 6);
	ck_assert_str_eq(r->takers.v[3].where, "inside");
	ck_assert_uint_eq(r->takers.v[3].ns, 10);
}
END_TEST

START_TEST(wakers_without_function)
{
	uint64_t caller = A("anon_pipe_read", 0x10);
	const struct sp_sched_row *r;

	add_split(caller, "as", 10, 100, 100, 10, 100, NULL, 0);
	add_waker(caller, "as", SP_WAKER_TASK, "cc1", SP_WAKER_NOT_WALKED, 7);
	add_waker(caller, "as", SP_WAKER_TASK, "make", SP_WAKER_NOT_WALKED, 7);
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg, NULL), 0);
	r = row("anon_pipe_read", "pipe");
	ck_assert_uint_eq(r->wakers.n, 2);
	ck_assert_ptr_null(r->wakers.v[0].function);
	ck_assert_str_eq(r->wakers.v[0].comm, "cc1"); /* equal counts: by name */
	ck_assert_str_eq(r->wakers.v[1].comm, "make");
}
END_TEST

/* A task's state at the stop, as the iterator writes it. */
static void add_task(uint32_t pid, uint32_t state, uint64_t ts, uint64_t ts_in, uint64_t wake,
		     uint64_t caller, const char *comm, const char *wcomm)
{
	struct sp_sleep s = { .ts = ts, .ts_in = ts_in, .wake_ts = wake, .state = state,
			      .pid = pid, .key.caller = caller };

	SET_COMM(s.key.comm, comm);
	if (wcomm)
		SET_COMM(s.waker_comm, wcomm);
	ck_assert_int_eq(sp_records_add(&m.in_progress, &pid, &s), 0);
}

START_TEST(split_rules)
{
	struct sp_sleep s = { .ts = 1000, .key.caller = A("anon_pipe_read", 0x10) };
	struct sched_split sp;

	/* woken after the switch-out: BLOCKED to the wake-up, RUNQ after */
	s.wake_ts = 1300;
	sched_split(&s, 2000, &sp);
	ck_assert_uint_eq(sp.blocked, 300);
	ck_assert_uint_eq(sp.runq, 700);
	ck_assert(sp.woken);
	/* woken while going to sleep: all RUNQ, the waker counts */
	s.wake_ts = 900;
	sched_split(&s, 2000, &sp);
	ck_assert_uint_eq(sp.blocked, 0);
	ck_assert_uint_eq(sp.runq, 1000);
	ck_assert(sp.woken);
	/* no wake-up seen: all BLOCKED */
	s.wake_ts = 0;
	sched_split(&s, 2000, &sp);
	ck_assert_uint_eq(sp.blocked, 1000);
	ck_assert(!sp.woken);
	/* preempted: all RUNQ, no waker */
	s.key.caller = SP_CALLER_PREEMPTED;
	s.wake_ts = 1500;
	sched_split(&s, 2000, &sp);
	ck_assert_uint_eq(sp.runq, 1000);
	ck_assert(!sp.woken);
	/* the window */
	ck_assert_uint_eq(sched_in_window(0, 10, 20), 0);
	ck_assert_uint_eq(sched_in_window(15, 10, 20), 5);
	ck_assert_uint_eq(sched_in_window(5, 10, 20), 10);
	ck_assert_uint_eq(sched_in_window(25, 10, 20), 0);
}
END_TEST

/*
 * The budget: BPF's sums, each row's blocked time in the window by its wait class, and what
 * is in progress at the stop. For a fixed set of tasks it adds up to tasks x elapsed.
 */
START_TEST(budget_sums)
{
	uint64_t pipe = A("anon_pipe_read", 0x10), lost = A("path_openat", 0x10);
	const struct sp_sched_row *r;
	const struct sp_budget *b = &run.sched.budget;

	/* window [10000, 20000]; three tasks */
	m.t0 = 10000;
	m.stop = 20000;
	m.has_budget = true;
	m.budget = (struct sp_budget_counts){ .oncpu_ns = 3000, .runq_ns = 1000,
					      .blocked_norow_ns = 500, .tasks = 3 };
	add_split(pipe, "cat", 4, 2000, 500, 300, 1500, NULL, 0); /* 500 of it before t0 */
	add_caller(SP_CALLER_PREEMPTED, SP_WAIT_NONE, "cat", 2, 0, 0);
	/* at the stop: cat running since 19000; sort asleep in the pipe since 18000, woken at
	 * 19500; a new task waiting since 19800; one asleep in a row the map lost */
	add_task(1, SP_TS_RUNNING, 0, 19000, 0, 0, "cat", NULL);
	add_task(2, SP_TS_OFF, 18000, 0, 19500, pipe, "cat", "sort");
	add_task(3, SP_TS_NEW, 0, 0, 19800, 0, "x", NULL);
	add_task(4, SP_TS_OFF, 17000, 0, 0, lost, "y", NULL);
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg, NULL), 0);

	r = row("anon_pipe_read", "pipe");
	ck_assert_uint_eq(r->unfinished, 1);
	ck_assert_uint_eq(r->count, 4); /* switch-outs only */
	ck_assert_uint_eq(r->blocked_ns, 2000 + 1500);
	ck_assert_uint_eq(r->runq_ns, 500 + 500);
	ck_assert_uint_eq(r->wakers.n, 1);
	ck_assert_str_eq(r->wakers.v[0].comm, "sort");
	ck_assert(b->present);
	ck_assert_uint_eq(b->tasks, 3);
	ck_assert_uint_eq(b->oncpu_ns, 3000 + 1000);
	ck_assert_uint_eq(b->runq_ns, 1000 + 500 + 200);
	ck_assert_uint_eq(b->blocked.pipe, 1500 + 1500);
	ck_assert_uint_eq(b->blocked.other, 500 + 3000); /* no row: since the start, and lost */
	ck_assert_uint_eq(b->blocked_ns, b->blocked.pipe + b->blocked.other);
}
END_TEST

/*
 * CPU quotas and steal: a row's throttled part of RUNQ from BPF; a preempted task still
 * waiting at the stop with a throttled entry charged as throttled to the stop, one without
 * as waiting; the budget's throttled sum; stolen time from the signed sum, clamped.
 */
START_TEST(throttled_and_stolen)
{
	const struct sp_budget *b = &run.sched.budget;
	struct sp_caller_key k = { .caller = SP_CALLER_PREEMPTED };
	struct sp_caller_val v = { .count = 5, .offcpu_ns = 900, .runq_ns = 900,
				   .throttled_ns = 700 };
	struct sp_throttled t = { .cg = 42 };
	const struct sp_sched_row *r;
	__u32 pid = 7;

	SET_COMM(k.comm, "spin");
	ck_assert_int_eq(sp_records_add(&m.callers, &k, &v), 0);
	m.t0 = 10000;
	m.stop = 20000;
	m.has_budget = true;
	m.steal_split = true;
	m.budget = (struct sp_budget_counts){ .oncpu_ns = 3000, .runq_ns = 900,
					      .throttled_ns = 700, .tasks = 2,
					      .stolen_ns = (__u64)-100 + 400 };
	sp_records_init(&m.throttled, sizeof(__u32), sizeof(struct sp_throttled));
	ck_assert_int_eq(sp_records_add(&m.throttled, &pid, &t), 0);
	/* pid 7 preempted and throttled since 19000, pid 8 preempted (not throttled) since 19500 */
	add_task(7, SP_TS_OFF, 19000, 0, 0, SP_CALLER_PREEMPTED, "spin", NULL);
	add_task(8, SP_TS_OFF, 19500, 0, 0, SP_CALLER_PREEMPTED, "spin", NULL);
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg, NULL), 0);

	r = row("[preempted]", "-");
	ck_assert_uint_eq(r->runq_ns, 900 + 1000 + 500);
	ck_assert_uint_eq(r->throttled_ns, 700 + 1000);
	ck_assert_uint_eq(r->unfinished, 2);
	ck_assert_uint_eq(b->runq_ns, 900 + 1000 + 500);
	ck_assert_uint_eq(b->throttled_ns, 700 + 1000);
	ck_assert(b->steal.present && b->steal.split);
	ck_assert_uint_eq(b->steal.stolen_ns, 300);
	/* a negative sum (jitter) is none */
	sp_run_free(&run);
	sp_run_init(&run);
	m.budget.stolen_ns = (__u64)-5;
	ck_assert_int_eq(sched_rows_build(&run.sched, &m, ks, &cfg, NULL), 0);
	ck_assert_uint_eq(run.sched.budget.steal.stolen_ns, 0);
}
END_TEST

/* The per-CPU rows and wakers as dumped: summed, maxima of maxima, then one value each. */
START_TEST(pcpu_fold)
{
	struct sched_maps p = {};
	struct sp_caller_key k = { .caller = 7, .wait = 1 };
	struct sp_waker_key wk = {};
	struct sp_caller_val cv[3] = {
		{ .count = 1, .offcpu_ns = 10, .max_ns = 9, .runq_max_ns = 4, .window_blocked_ns = 2 },
		{ .count = 2, .offcpu_ns = 20, .max_ns = 15, .runq_max_ns = 3 },
		{ .count = 4, .blocked_ns = 5, .runq_ns = 6, .max_ns = 1, .unfinished = 1,
		  .throttled_ns = 3 },
	};
	__u64 wv[3] = { 1, 0, 5 };
	struct sp_taker_key tk = {};
	struct sp_taker_val tv[3] = { { 1, 100 }, { 0, 0 }, { 2, 350 } };
	const struct sp_taker_val *t;
	const struct sp_caller_val *v;

	cv[0].runq_hist[0] = 1;
	cv[2].runq_hist[0] = 2;
	cv[1].runq_hist[SP_RUNQ_SLOTS - 1] = 3;
	sp_records_init(&p.callers, sizeof(k), sizeof(cv));
	sp_records_init(&p.wakers, sizeof(wk), sizeof(wv));
	ck_assert_int_eq(sp_records_add(&p.callers, &k, cv), 0);
	k.caller = 8;
	cv[0].count = 100;
	ck_assert_int_eq(sp_records_add(&p.callers, &k, cv), 0);
	ck_assert_int_eq(sp_records_add(&p.wakers, &wk, wv), 0);
	sp_records_init(&p.takers, sizeof(tk), sizeof(tv));
	ck_assert_int_eq(sp_records_add(&p.takers, &tk, tv), 0);
	ck_assert_int_eq(sched_fold_pcpu(&p, 2), -EINVAL); /* not 2 CPUs' values */
	ck_assert_int_eq(sched_fold_pcpu(&p, 3), 0);
	ck_assert_uint_eq(p.callers.value_size, sizeof(struct sp_caller_val));
	ck_assert_uint_eq(p.wakers.value_size, sizeof(__u64));
	v = sp_records_value(&p.callers, 0);
	ck_assert_uint_eq(v->count, 7);
	ck_assert_uint_eq(v->offcpu_ns, 30);
	ck_assert_uint_eq(v->blocked_ns, 5);
	ck_assert_uint_eq(v->runq_ns, 6);
	ck_assert_uint_eq(v->max_ns, 15);
	ck_assert_uint_eq(v->runq_max_ns, 4);
	ck_assert_uint_eq(v->unfinished, 1);
	ck_assert_uint_eq(v->window_blocked_ns, 2);
	ck_assert_uint_eq(v->throttled_ns, 3);
	ck_assert_uint_eq(v->runq_hist[0], 3);
	ck_assert_uint_eq(v->runq_hist[SP_RUNQ_SLOTS - 1], 3);
	v = sp_records_value(&p.callers, 1);
	ck_assert_uint_eq(((const struct sp_caller_key *)sp_records_key(&p.callers, 1))->caller, 8);
	ck_assert_uint_eq(v->count, 106);
	ck_assert_uint_eq(*(const __u64 *)sp_records_value(&p.wakers, 0), 6);
	/* a taker's count and its time, both summed */
	t = sp_records_value(&p.takers, 0);
	ck_assert_uint_eq(t->count, 3);
	ck_assert_uint_eq(t->ns, 450);
	ck_assert_int_eq(sched_fold_pcpu(&p, 1), 0); /* already folded: unchanged */
	ck_assert_uint_eq(((const struct sp_caller_val *)sp_records_value(&p.callers, 1))->count, 106);
	sched_maps_free(&p);
}
END_TEST

static void taker_put(struct sp_records *r, __u64 caller, const char *comm, __u64 count, __u64 ns)
{
	struct sp_taker_key k = { .row.caller = caller, .kind = SP_TAKER_BEFORE };
	struct sp_taker_val v = { count, ns };

	strncpy(k.comm, comm, sizeof(k.comm) - 1);
	ck_assert_int_eq(sp_records_add(r, &k, &v), 0);
}

static const struct sp_taker_val *taker_get(const struct sp_records *r, __u64 caller,
					    const char *comm)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct sp_taker_key *k = sp_records_key(r, i);

		if (k->row.caller == caller && !strcmp(k->comm, comm))
			return sp_records_value(r, i);
	}
	return NULL;
}

/*
 * Reads while the programs run: a slot's record sums with the map's of the same key; a read
 * that missed a taker on its way from a slot to the map keeps the last read's counts, and a
 * key only the last read had stays.
 */
START_TEST(takers_settle)
{
	struct sp_records rec, seen;
	const struct sp_taker_val *v;

	sp_records_init(&rec, sizeof(struct sp_taker_key), sizeof(struct sp_taker_val));
	sp_records_init(&seen, sizeof(struct sp_taker_key), sizeof(struct sp_taker_val));
	taker_put(&rec, 1, "cat", 10, 100); /* the map's */
	taker_put(&rec, 1, "cat", 5, 50);   /* a slot's */
	taker_put(&rec, 2, "sort", 3, 30);
	ck_assert_int_eq(sched_slots_settle(&rec, &seen), 0);
	ck_assert_uint_eq(rec.n, 2);
	ck_assert_uint_eq(seen.n, 2);
	v = taker_get(&rec, 1, "cat");
	ck_assert_uint_eq(v->count, 15);
	ck_assert_uint_eq(v->ns, 150);
	/* the next read: cat's slot in neither part; sort's slot gone (to the map, missed) */
	sp_records_free(&rec);
	sp_records_init(&rec, sizeof(struct sp_taker_key), sizeof(struct sp_taker_val));
	taker_put(&rec, 1, "cat", 12, 120);
	taker_put(&rec, 3, "ls", 1, 7);
	ck_assert_int_eq(sched_slots_settle(&rec, &seen), 0);
	ck_assert_uint_eq(rec.n, 3);
	v = taker_get(&rec, 1, "cat");
	ck_assert_uint_eq(v->count, 15);
	ck_assert_uint_eq(v->ns, 150);
	v = taker_get(&rec, 2, "sort");
	ck_assert_uint_eq(v->count, 3);
	ck_assert_uint_eq(taker_get(&rec, 3, "ls")->count, 1);
	/* the stop's read: exact, and at least every earlier one */
	sp_records_free(&rec);
	sp_records_init(&rec, sizeof(struct sp_taker_key), sizeof(struct sp_taker_val));
	taker_put(&rec, 1, "cat", 20, 190);
	taker_put(&rec, 2, "sort", 4, 40);
	taker_put(&rec, 3, "ls", 1, 7);
	ck_assert_int_eq(sched_slots_settle(&rec, &seen), 0);
	ck_assert_uint_eq(rec.n, 3);
	ck_assert_uint_eq(taker_get(&rec, 1, "cat")->ns, 190);
	ck_assert_uint_eq(taker_get(&rec, 2, "sort")->count, 4);
	ck_assert_uint_eq(taker_get(&seen, 2, "sort")->count, 4);
	sp_records_free(&rec);
	sp_records_free(&seen);
}
END_TEST

/* The wakers' records settle the same way, by their one word; failed and sizes are kept. */
START_TEST(wakers_settle)
{
	struct sp_records rec, seen;
	struct sp_waker_key k = { .function = 7 };
	__u64 n;

	sp_records_init(&rec, sizeof(k), sizeof(n));
	sp_records_init(&seen, sizeof(k), sizeof(n));
	n = 9;
	ck_assert_int_eq(sp_records_add(&rec, &k, &n), 0); /* the map's */
	n = 2;
	ck_assert_int_eq(sp_records_add(&rec, &k, &n), 0); /* a slot's */
	rec.failed = 1;
	ck_assert_int_eq(sched_slots_settle(&rec, &seen), 0);
	ck_assert_uint_eq(rec.n, 1);
	ck_assert_uint_eq(rec.failed, 1);
	ck_assert_uint_eq(*(const __u64 *)sp_records_value(&rec, 0), 11);
	/* a read that missed the slot's move keeps 11 */
	sp_records_free(&rec);
	sp_records_init(&rec, sizeof(k), sizeof(n));
	n = 9;
	ck_assert_int_eq(sp_records_add(&rec, &k, &n), 0);
	ck_assert_int_eq(sched_slots_settle(&rec, &seen), 0);
	ck_assert_uint_eq(*(const __u64 *)sp_records_value(&rec, 0), 11);
	/* records of other sizes than the last read's are refused, and left as they were */
	sp_records_free(&rec);
	sp_records_init(&rec, sizeof(struct sp_taker_key), sizeof(struct sp_taker_val));
	taker_put(&rec, 1, "cat", 1, 1);
	ck_assert_int_eq(sched_slots_settle(&rec, &seen), -EINVAL);
	ck_assert_uint_eq(rec.n, 1);
	ck_assert_uint_eq(seen.n, 1);
	sp_records_free(&rec);
	sp_records_free(&seen);
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
		runq_percentiles,
		split_merges_and_percentiles,
		wakers_by_comm_and_function,
		throttled_and_stolen,
		wakers_without_function,
		takers_merge_and_rank,
		split_rules,
		budget_sums,
		pcpu_fold,
		takers_settle,
		wakers_settle,
	};

	return run_tests("sched_rows", tests, sizeof(tests) / sizeof(tests[0]), setup, teardown);
}
