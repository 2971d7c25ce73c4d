// SPDX-License-Identifier: BSD-2-Clause
/*
 * The locks view's row builder (src/views/locks/rows.c) on hand-made map records and the
 * fixture kallsyms: locks named from BPF's name ids, runqueue addresses or raw addresses,
 * rows that name alike merged (two inodes' i_rwsem from one caller are one row) with their
 * owners and stacks, sleepers joined into rows and groups with distinct task counts, and
 * every count kept: lost rows and lost stacks are counted.
 */
#include <errno.h>
#include "views/locks/rows.h"
#include "symbols/lockname.h"
#include "model/model.h"
#include "../../rows/rows_fixture.h"
#include "schedprof/lock.h"
#include "schedprof/sched.h"

#define INODE1 0xffff888000001000ULL
#define INODE2 0xffff888000002000ULL
#define RQ1 0xffff88807fc2c000ULL

static struct lock_maps m;
static struct sp_lock_view v;
static const uint64_t rq[2] = { 0, RQ1 };

static void setup(void)
{
	fixture_load();
	sp_records_init(&m.stat, sizeof(struct sp_lock_key), sizeof(struct sp_lock_val));
	sp_records_init(&m.owners, sizeof(struct sp_lock_owner_key),
			sizeof(struct sp_lock_owner_val));
	sp_records_init(&m.stack_counts, sizeof(struct sp_lock_stack_key),
			sizeof(struct sp_lock_stack_val));
	sp_records_init(&m.stacks, sizeof(__u64), sizeof(struct sp_stack));
	sp_records_init(&m.sleepers, sizeof(struct sp_lock_sleep_key),
			sizeof(struct sp_lock_sleep_val));
	memset(&v, 0, sizeof(v));
}

static void teardown(void)
{
	struct sp_run run;

	lock_maps_free(&m);
	sp_run_init(&run);
	run.locks = v;
	sp_run_free(&run);
	fixture_free();
}

static void add_stat(uint64_t caller, uint64_t lock, uint32_t name, const char *comm,
		     uint64_t count, uint64_t wait, uint64_t max, uint64_t failed)
{
	struct sp_lock_key k = { .caller = caller, .lock = lock, .flags = SP_LCB_F_WRITE,
				 .name = name };
	struct sp_lock_val val = { .count = count, .wait_ns = wait, .max_ns = max,
				   .failed = failed };

	SET_COMM(k.comm, comm);
	ck_assert_int_eq(sp_records_add(&m.stat, &k, &val), 0);
}

static void add_owner(uint64_t caller, uint64_t lock, uint32_t name, const char *owner,
		      uint64_t count)
{
	struct sp_lock_owner_key k = { .caller = caller, .lock = lock, .flags = SP_LCB_F_WRITE,
				       .name = name };
	struct sp_lock_owner_val val = { .count = count, .wait_ns = count * 10 };

	SET_COMM(k.owner, owner);
	ck_assert_int_eq(sp_records_add(&m.owners, &k, &val), 0);
}

static void add_stack_count(uint64_t stack, uint64_t caller, uint64_t lock, uint32_t tgid,
			    uint64_t count)
{
	struct sp_lock_stack_key k = { .stack = stack, .caller = caller, .lock = lock,
				       .flags = SP_LCB_F_WRITE, .name = SP_LNAME_INODE_RWSEM,
				       .tgid = tgid };
	struct sp_lock_stack_val val = { .count = count, .wait_ns = count * 100 };

	SET_COMM(k.comm, "touch");
	ck_assert_int_eq(sp_records_add(&m.stack_counts, &k, &val), 0);
}

static void add_stack(__u64 id, const uint64_t *ips, uint32_t nr)
{
	add_kstack_to(&m.stacks, id, ips, nr);
}

static void add_sleep(uint64_t caller, uint64_t lock, uint32_t pid, const char *comm,
		      uint64_t sleeps, uint64_t ns, uint64_t max)
{
	struct sp_lock_sleep_key k = { .caller = caller, .lock = lock, .flags = SP_LCB_F_WRITE,
				       .name = SP_LNAME_INODE_RWSEM, .pid = pid };
	struct sp_lock_sleep_val val = { .contentions = 1, .sleeps = sleeps, .offcpu_ns = ns,
					 .max_ns = max };

	SET_COMM(k.comm, comm);
	ck_assert_int_eq(sp_records_add(&m.sleepers, &k, &val), 0);
}

static const struct sp_lock_row *row(const char *caller, const char *lock)
{
	for (size_t i = 0; i < v.nrows; i++)
		if (!strcmp(v.rows[i].caller, caller) && !strcmp(v.rows[i].lock, lock))
			return &v.rows[i];
	ck_abort_msg("no row %s %s", caller, lock);
	return NULL;
}

static int build(void)
{
	return lock_rows_build(&v, &m, ks, &cfg, rq, 2, NULL);
}

START_TEST(rows_that_name_alike_merge)
{
	uint64_t caller = A("path_openat", 0x4), sum = 0;
	const struct sp_lock_row *r;

	add_stat(caller, INODE1, SP_LNAME_INODE_RWSEM, "touch", 3, 300, 200, 1);
	add_stat(A("path_openat", 0x40), INODE2, SP_LNAME_INODE_RWSEM, "mv", 2, 500, 400, 0);
	add_stat(caller, 0xffff888000003000ULL, SP_LNAME_NONE, "touch", 4, 40, 10, 0);
	add_stat(caller, RQ1, SP_LNAME_NONE, "touch", 6, 60, 10, 0);
	add_owner(caller, INODE1, SP_LNAME_INODE_RWSEM, "git", 2);
	add_owner(A("path_openat", 0x40), INODE2, SP_LNAME_INODE_RWSEM, "git", 1);
	m.stat.failed = 3;
	v.lost = 1; /* from BPF: kept */
	ck_assert_int_eq(build(), 0);

	ck_assert_uint_eq(v.nrows, 3);
	r = row("path_openat", "inode.i_rwsem");
	ck_assert_str_eq(r->kind, "rwsem-write");
	ck_assert_str_eq(r->source, "layout");
	ck_assert_uint_eq(r->count, 5);
	ck_assert_uint_eq(r->wait_ns, 800);
	ck_assert_uint_eq(r->max_ns, 400);
	ck_assert_uint_eq(r->failed, 1);
	ck_assert_uint_eq(r->comms.n, 2);
	ck_assert_uint_eq(r->owners.n, 1);
	ck_assert_str_eq(r->owners.v[0].comm, "git");
	ck_assert_uint_eq(r->owners.v[0].count, 3);
	ck_assert_str_eq(row("path_openat", "0xffff888000003000")->source, "address");
	ck_assert_str_eq(row("path_openat", lockname_of_id(SP_LNAME_RQ_LOCK))->source, "task");
	for (size_t i = 0; i < v.nrows; i++)
		sum += v.rows[i].count;
	ck_assert_uint_eq(sum, 3 + 2 + 4 + 6); /* exact */
	ck_assert_uint_eq(v.lost, 1 + 3);
}
END_TEST

START_TEST(stacks_merge_across_locks)
{
	uint64_t caller = A("path_openat", 0x4);
	uint64_t s5[] = { A("bpf_trace_run4", 0x40), A("rwsem_down_write_slowpath", 0x100),
			  A("down_write", 0x20), caller, A("do_syscall_64", 0x10) };
	uint64_t s6[] = { A("bpf_trace_run4", 0x48), A("rwsem_down_write_slowpath", 0x180),
			  A("down_write", 0x28), A("path_openat", 0x80), A("do_syscall_64", 0x18) };
	const struct sp_lock_row *r;

	add_stat(caller, INODE1, SP_LNAME_INODE_RWSEM, "touch", 10, 1000, 500, 0);
	add_stat(caller, INODE2, SP_LNAME_INODE_RWSEM, "touch", 2, 200, 100, 0);
	add_stack(5, s5, 5);
	add_stack(6, s6, 5);
	add_stack_count(5, caller, INODE1, 10, 3); /* one stack on two inodes: one entry */
	add_stack_count(5, caller, INODE2, 10, 2);
	add_stack_count(6, caller, INODE1, 10, 4); /* another stack that symbolizes alike */
	add_stack_count(5, caller, INODE1, 11, 1); /* another process */
	add_stack_count(7, caller, INODE1, 10, 5); /* the dump lost this stack */
	m.stack_counts.failed = 1;
	ck_assert_int_eq(build(), 0);

	ck_assert_uint_eq(v.nrows, 1);
	r = row("path_openat", "inode.i_rwsem");
	ck_assert_uint_eq(r->stacks.n, 2);
	sp_lock_sort(&v, SP_LOCK_SORT_WAIT);
	r = row("path_openat", "inode.i_rwsem");
	ck_assert_uint_eq(r->stacks.v[0].count, 9);
	ck_assert_uint_eq(r->stacks.v[0].time_ns, 900);
	ck_assert_int_eq(r->stacks.v[0].pid, 10);
	ck_assert_str_eq(r->stacks.v[0].frames[0], "rwsem_down_write_slowpath");
	ck_assert_uint_eq(r->stacks.v[1].count, 1);
	ck_assert_uint_eq(v.missing_stacks, 5 + 1);
}
END_TEST

/*
 * The row map was full: stacks and owners of the rows it could not hold (counted in lost)
 * show under no row, so rows + failed + lost = total and a row's stacks never exceed it.
 */
START_TEST(stacks_and_owners_of_lost_rows)
{
	uint64_t caller = A("path_openat", 0x4);
	uint64_t s5[] = { A("rwsem_down_write_slowpath", 0x100), A("down_write", 0x20), caller };
	const struct sp_lock_row *r;

	add_stat(caller, INODE1, SP_LNAME_INODE_RWSEM, "touch", 3, 300, 200, 0);
	add_stack(5, s5, 3);
	add_stack_count(5, caller, INODE1, 10, 3);
	add_stack_count(5, caller, 0xffff888000003000ULL, 10, 4); /* its row was lost */
	add_owner(caller, INODE1, SP_LNAME_INODE_RWSEM, "git", 2);
	add_owner(caller, 0xffff888000003000ULL, SP_LNAME_NONE, "git", 4); /* row lost */
	v.lost = 4;
	v.total = 7;
	ck_assert_int_eq(build(), 0);

	ck_assert_uint_eq(v.nrows, 1);
	r = row("path_openat", "inode.i_rwsem");
	ck_assert_uint_eq(r->stacks.n, 1);
	ck_assert_uint_eq(r->stacks.v[0].count, 3);
	ck_assert_uint_eq(r->owners.n, 1);
	ck_assert_uint_eq(r->owners.v[0].count, 2);
	ck_assert_uint_eq(r->count + r->failed + v.lost, v.total);
	ck_assert_uint_eq(v.missing_stacks, 0);
}
END_TEST

START_TEST(sleepers_join_rows_and_groups)
{
	uint64_t c1 = A("path_openat", 0x4), c2 = A("open_last_lookups", 0x8);

	add_sleep(c1, INODE1, 100, "touch", 2, 20, 15);
	add_sleep(c1, INODE2, 101, "touch", 1, 30, 30); /* another inode: the same row */
	add_sleep(c2, INODE1, 100, "touch", 4, 40, 12);
	add_sleep(c2, INODE1, 200, "mv", 1, 5, 5);
	ck_assert_int_eq(build(), 0);

	ck_assert_uint_eq(v.nsleepers, 2);
	ck_assert_str_eq(v.sleepers[0].caller, "path_openat");
	ck_assert_str_eq(v.sleepers[0].lock, "inode.i_rwsem");
	ck_assert_uint_eq(v.sleepers[0].tasks, 2);
	ck_assert_uint_eq(v.sleepers[0].count, 3);
	ck_assert_uint_eq(v.sleepers[0].offcpu_ns, 50);
	ck_assert_uint_eq(v.sleepers[0].max_ns, 30);
	ck_assert_uint_eq(v.sleepers[1].tasks, 2);
	ck_assert_uint_eq(v.sleepers[1].comms.n, 2);
	ck_assert_uint_eq(v.ngroups, 2);
	ck_assert_str_eq(v.groups[0].comm, "touch");
	ck_assert_uint_eq(v.groups[0].tasks, 2); /* pids 100 and 101, 100 from two callers */
	ck_assert_uint_eq(v.groups[0].count, 7);
	ck_assert_uint_eq(v.groups[0].callers.n, 2);
	ck_assert_str_eq(v.groups[1].comm, "mv");
	ck_assert_uint_eq(v.groups[1].tasks, 1);
}
END_TEST

START_TEST(many_locks_linear)
{
	uint64_t caller = A("path_openat", 0x4);

	/* 20000 unnamed locks, each from two comms: 20000 rows, found by index */
	for (uint64_t i = 0; i < 20000; i++) {
		add_stat(caller, 0xffff888100000000ULL + i * 64, SP_LNAME_NONE, "a", 1, 1, 1, 0);
		add_stat(caller, 0xffff888100000000ULL + i * 64, SP_LNAME_NONE, "b", 1, 1, 1, 0);
	}
	ck_assert_int_eq(build(), 0);
	ck_assert_uint_eq(v.nrows, 20000);
	for (size_t i = 0; i < v.nrows; i++)
		ck_assert_uint_eq(v.rows[i].count, 2);
}
END_TEST

START_TEST(wrong_record_size)
{
	__u64 id = 1;
	struct sp_stack st = {};

	sp_records_free(&m.stat);
	sp_records_init(&m.stat, sizeof(id), sizeof(st));
	ck_assert_int_eq(sp_records_add(&m.stat, &id, &st), 0);
	ck_assert_int_eq(build(), -EINVAL);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
		rows_that_name_alike_merge,
		stacks_merge_across_locks,
		stacks_and_owners_of_lost_rows,
		sleepers_join_rows_and_groups,
		many_locks_linear,
		wrong_record_size,
	};

	return run_tests("lock_rows", tests, sizeof(tests) / sizeof(tests[0]), setup, teardown);
}
