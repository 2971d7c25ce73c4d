// SPDX-License-Identifier: BSD-2-Clause
/*
 * The locks view's pure parts: lock kinds from contention_begin's flags, the begin/end
 * pairing that bpf/lock.bpf.c runs (include/schedprof/lock_pair.h), lock names from
 * kallsyms data symbols and BPF name ids, and ranking.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include "ksyms.h"
#include "lockflags.h"
#include "lockname.h"
#include "model.h"
#include "schedprof/lock_pair.h"

#define S SP_LCB_F_SPIN
#define R SP_LCB_F_READ
#define W SP_LCB_F_WRITE
#define RT SP_LCB_F_RT
#define PC SP_LCB_F_PERCPU
#define MX SP_LCB_F_MUTEX

/* ---- flags ---- */

START_TEST(kinds_from_kernel_callers)
{
	static const struct {
		uint32_t flags;
		const char *kind;
		bool sleeping;
	} t[] = {
		{ S, "spinlock", false },		/* queued_spin_lock_slowpath */
		{ S | R, "rwlock-read", false },	/* queued_read_lock_slowpath */
		{ S | W, "rwlock-write", false },	/* queued_write_lock_slowpath */
		{ R, "rwsem-read", true },		/* rwsem_down_read_slowpath */
		{ W, "rwsem-write", true },		/* rwsem_down_write_slowpath */
		{ MX, "mutex", true },			/* __mutex_lock_common, queued */
		{ MX | S, "mutex", true },		/* __mutex_lock_common, optimistic spin */
		{ 0, "semaphore", true },		/* __down_common */
		{ RT, "rt-mutex", true },		/* rt_mutex_slowlock */
		{ RT | S, "rt-spinlock", true },	/* rtlock_slowlock: PREEMPT_RT sleeps */
		{ RT | R, "rt-rw-read", true },		/* rwbase_read_lock */
		{ RT | W, "rt-rw-write", true },	/* rwbase_write_lock */
		{ PC | R, "percpu-rwsem-read", true },	/* percpu_rwsem_wait */
		{ PC | W, "percpu-rwsem-write", true },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ck_assert_msg(!strcmp(lockflags_kind(t[i].flags), t[i].kind), "0x%x: %s, expected %s",
			      t[i].flags, lockflags_kind(t[i].flags), t[i].kind);
		ck_assert_msg(lockflags_sleeping(t[i].flags) == t[i].sleeping, "0x%x sleeping",
			      t[i].flags);
	}
}
END_TEST

START_TEST(kinds_no_kernel_emits)
{
	static const uint32_t bad[] = { R | W, S | R | W, MX | R, MX | W, MX | RT, PC | S,
					PC | RT | R, RT | S | R, 1u << 6, 1u << 31, S | (1u << 7) };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!strcmp(lockflags_kind(bad[i]), "unknown"), "0x%x: %s", bad[i],
			      lockflags_kind(bad[i]));
}
END_TEST

START_TEST(flags_norm)
{
	ck_assert_uint_eq(sp_lock_flags_norm(MX | S), MX);
	ck_assert_uint_eq(sp_lock_flags_norm(MX), MX);
	ck_assert_uint_eq(sp_lock_flags_norm(S | R), S | R);
	ck_assert_uint_eq(sp_lock_flags_norm(W), W);
}
END_TEST

/* ---- pairing (per task: sleeping locks) ---- */

START_TEST(task_mutex_several_begins)
{
	struct sp_lock_pending p = { 0 }, out;

	/* __mutex_lock_common: spin, queue, spin again as first waiter, then the end */
	ck_assert_int_eq(sp_pair_task_begin(&p, 0x1000, MX | S, 100), SP_PAIR_NEW);
	p.caller = 0xc0ffee;
	ck_assert_int_eq(sp_pair_task_begin(&p, 0x1000, MX, 150), SP_PAIR_AGAIN);
	ck_assert_int_eq(sp_pair_task_begin(&p, 0x1000, MX | S, 170), SP_PAIR_AGAIN);
	ck_assert_uint_eq(p.ts, 100);	  /* the first begin's time stands */
	ck_assert_uint_eq(p.caller, 0xc0ffee); /* and its caller */
	ck_assert_int_eq(sp_pair_task_end(&p, 0x1000, 400, &out), 1);
	ck_assert_uint_eq(out.ts, 300);
	ck_assert_uint_eq(out.lock, 0x1000);
	ck_assert_uint_eq(sp_lock_flags_norm(out.flags), MX);
	ck_assert_uint_eq(p.ts, 0);
	/* a second end: nothing in progress */
	ck_assert_int_eq(sp_pair_task_end(&p, 0x1000, 500, &out), 0);
}
END_TEST

START_TEST(task_end_mismatch_and_replace)
{
	struct sp_lock_pending p = { 0 }, out = { 0 };

	ck_assert_int_eq(sp_pair_task_end(&p, 0x1000, 10, &out), 0); /* end without begin */
	ck_assert_int_eq(sp_pair_task_begin(&p, 0x1000, W, 10), SP_PAIR_NEW);
	ck_assert_int_eq(sp_pair_task_end(&p, 0x2000, 20, &out), 0); /* another lock's end */
	ck_assert_uint_eq(p.ts, 10);					 /* untouched */
	/* a begin on another lock while one is in progress: the old one's end was lost */
	ck_assert_int_eq(sp_pair_task_begin(&p, 0x2000, R, 30), SP_PAIR_REPLACED);
	ck_assert_int_eq(sp_pair_task_end(&p, 0x1000, 40, &out), 0);
	ck_assert_int_eq(sp_pair_task_end(&p, 0x2000, 45, &out), 1);
	ck_assert_uint_eq(out.ts, 15);
	ck_assert_uint_eq(out.flags, R);
	/* a clock that went backwards gives 0, never a huge wait */
	ck_assert_int_eq(sp_pair_task_begin(&p, 0x3000, W, 100), SP_PAIR_NEW);
	ck_assert_int_eq(sp_pair_task_end(&p, 0x3000, 90, &out), 1);
	ck_assert_uint_eq(out.ts, 0);
}
END_TEST

/* ---- pairing (per CPU: spinning locks) ---- */

START_TEST(spin_nested)
{
	struct sp_lock_spin_stack s = { 0 };
	struct sp_lock_pending *e, out;

	/* the task spins on A; an interrupt spins on B; then the qrwlock case: A's wait_lock */
	e = sp_pair_spin_push(&s, 0xa, S, 100);
	ck_assert_ptr_nonnull(e);
	e->caller = 1;
	ck_assert_ptr_nonnull(sp_pair_spin_push(&s, 0xb, S, 110));
	ck_assert_uint_eq(s.depth, 2);
	ck_assert_int_eq(sp_pair_spin_pop(&s, 0xb, 130, &out), 1);
	ck_assert_uint_eq(out.ts, 20);
	ck_assert_uint_eq(out.lock, 0xb);
	ck_assert_uint_eq(s.depth, 1);
	ck_assert_int_eq(sp_pair_spin_pop(&s, 0xc, 140, &out), 0); /* never begun here */
	ck_assert_uint_eq(s.depth, 1);
	ck_assert_int_eq(sp_pair_spin_pop(&s, 0xa, 150, &out), 1);
	ck_assert_uint_eq(out.ts, 50);
	ck_assert_uint_eq(out.caller, 1);
	ck_assert_uint_eq(s.depth, 0);
	ck_assert_int_eq(sp_pair_spin_pop(&s, 0xa, 160, &out), 0);
}
END_TEST

START_TEST(spin_same_lock_nested)
{
	struct sp_lock_spin_stack s = { 0 };
	struct sp_lock_pending out;

	/* a writer spins on a rwlock, an interrupt reader spins on the same one: inner first */
	sp_pair_spin_push(&s, 0xa, S | W, 100);
	sp_pair_spin_push(&s, 0xa, S | R, 105);
	ck_assert_int_eq(sp_pair_spin_pop(&s, 0xa, 110, &out), 1);
	ck_assert_uint_eq(out.flags, S | R);
	ck_assert_uint_eq(out.ts, 5);
	ck_assert_int_eq(sp_pair_spin_pop(&s, 0xa, 120, &out), 1);
	ck_assert_uint_eq(out.flags, S | W);
	ck_assert_uint_eq(out.ts, 20);
}
END_TEST

START_TEST(spin_pending_entry)
{
	struct sp_lock_spin_stack s = { 0 };
	struct sp_lock_pending *e, out;

	/* the task's begin program is still walking its stack when an interrupt's end for the
	 * same rwlock arrives (the interrupt's begin was skipped): no pairing with it */
	e = sp_pair_spin_push(&s, 0xa, S | W, SP_LOCK_TS_PENDING);
	ck_assert_int_eq(sp_pair_spin_pop(&s, 0xa, 100, &out), 0);
	ck_assert_uint_eq(s.depth, 1);
	e->ts = 120; /* the program finishes */
	ck_assert_int_eq(sp_pair_spin_pop(&s, 0xa, 150, &out), 1);
	ck_assert_uint_eq(out.ts, 30);
	ck_assert_uint_eq(s.depth, 0);
}
END_TEST

START_TEST(spin_overflow_and_orphans)
{
	struct sp_lock_spin_stack s = { 0 };
	struct sp_lock_pending out;

	for (int i = 0; i < SP_LOCK_SPIN_NEST; i++)
		ck_assert_ptr_nonnull(sp_pair_spin_push(&s, 0x100 + i, S, 10 * i));
	ck_assert_ptr_null(sp_pair_spin_push(&s, 0x999, S, 100)); /* too deep: not timed */
	ck_assert_uint_eq(s.depth, SP_LOCK_SPIN_NEST);
	/* the end of the outermost: the three above it lost their ends and go too */
	ck_assert_int_eq(sp_pair_spin_pop(&s, 0x100, 200, &out), SP_LOCK_SPIN_NEST);
	ck_assert_uint_eq(out.ts, 200);
	ck_assert_uint_eq(s.depth, 0);
	/* and the stack is usable again */
	ck_assert_ptr_nonnull(sp_pair_spin_push(&s, 0x5, S, 300));
	ck_assert_int_eq(sp_pair_spin_pop(&s, 0x5, 301, &out), 1);
}
END_TEST

/* ---- names ---- */

static struct ksyms *ks;

static void names_setup(void)
{
	ks = ksyms__load(FIXTURES_DIR "/kallsyms_locks.txt");
	ck_assert_msg(ks, "loading kallsyms_locks.txt: %s", strerror(errno));
}

static void names_teardown(void)
{
	ksyms__free(ks);
	ks = NULL;
}

static enum lockname_source name(const struct lockname_ctx *c, uint64_t addr, uint32_t id,
				 const char *want)
{
	char buf[128];
	enum lockname_source src = lockname_format(c, addr, id, buf, sizeof(buf));

	ck_assert_msg(!strcmp(buf, want), "0x%llx/%u: '%s', expected '%s'",
		      (unsigned long long)addr, id, buf, want);
	return src;
}

START_TEST(names_from_data_symbols)
{
	struct lockname_ctx c = { .ks = ks };

	ck_assert_int_eq(name(&c, 0xffffffff82800000, 0, "tasklist_lock"), LOCKNAME_SYMBOL);
	ck_assert_int_eq(name(&c, 0xffffffff82800040, 0, "css_set_lock"), LOCKNAME_SYMBOL);
	/* a lock inside a static struct: init_mm.mmap_lock at some offset */
	ck_assert_int_eq(name(&c, 0xffffffff82800080 + 0x68, 0, "init_mm+0x68"), LOCKNAME_SYMBOL);
	ck_assert_int_eq(name(&c, 0xffffffffc0a02008, 0, "ext4_lock+0x8 [ext4]"), LOCKNAME_SYMBOL);
}
END_TEST

START_TEST(names_not_from_boundaries)
{
	struct lockname_ctx c = { .ks = ks };

	/* section markers and far offsets name nothing: the address stands */
	ck_assert_int_eq(name(&c, 0xffffffff82900010, 0, "0xffffffff82900010"), LOCKNAME_ADDRESS);
	ck_assert_int_eq(name(&c, 0xffffffff82000100, 0, "0xffffffff82000100"), LOCKNAME_ADDRESS);
	ck_assert_int_eq(name(&c, 0xffffffff82801080 + 0x20000, 0, "0xffffffff82821080"),
			 LOCKNAME_ADDRESS);
	ck_assert_int_eq(name(&c, 0xffffffff82801080 + 0xfff0, 0, "big_table+0xfff0"),
			 LOCKNAME_SYMBOL);
	/* a text address is no lock name; a heap address has no symbol */
	ck_assert_int_eq(name(&c, 0xffffffff81000108, 0, "0xffffffff81000108"), LOCKNAME_ADDRESS);
	ck_assert_int_eq(name(&c, 0xffff888100001000, 0, "0xffff888100001000"), LOCKNAME_ADDRESS);
	/* no kallsyms at all */
	c.ks = NULL;
	ck_assert_int_eq(name(&c, 0xffffffff82800000, 0, "0xffffffff82800000"), LOCKNAME_ADDRESS);
}
END_TEST

START_TEST(names_from_ids_and_runqueues)
{
	uint64_t rq[4] = { 0xffff88807dc2d000, 0, 0xffff88807dd2d000, 0 };
	struct lockname_ctx c = { .ks = ks, .rq_locks = rq, .nrq = 4 };

	/* a BPF name id wins over everything, with its source */
	ck_assert_int_eq(name(&c, 0xffff888100001000, SP_LNAME_INODE_RWSEM, "inode.i_rwsem"),
			 LOCKNAME_LAYOUT);
	ck_assert_int_eq(name(&c, 0xffff888100001000, SP_LNAME_MMAP_LOCK, "mm_struct.mmap_lock"),
			 LOCKNAME_TASK);
	ck_assert_int_eq(name(&c, 0xffff888100001000, SP_LNAME_PIPE_MUTEX, "pipe_inode_info.mutex"),
			 LOCKNAME_LAYOUT);
	ck_assert_int_eq(name(&c, 0xffff888100001000, SP_LNAME_MMAP_LOCK_WAIT,
			      "mm_struct.mmap_lock.wait_lock"), LOCKNAME_TASK);
	/* out-of-range ids are ignored, not trusted */
	ck_assert_int_eq(name(&c, 0xffffffff82800000, SP_LNAME__MAX, "tasklist_lock"),
			 LOCKNAME_SYMBOL);
	ck_assert_int_eq(name(&c, 0xffffffff82800000, 12345, "tasklist_lock"), LOCKNAME_SYMBOL);
	/* runqueue locks of any CPU; a zero entry (CPU not probed) matches nothing */
	ck_assert_int_eq(name(&c, 0xffff88807dd2d000, 0, "rq.__lock"), LOCKNAME_TASK);
	ck_assert_int_eq(name(&c, 0, 0, "0x0"), LOCKNAME_ADDRESS);
	for (uint32_t id = 1; id < SP_LNAME__MAX; id++)
		ck_assert_msg(lockname_of_id(id) && strchr(lockname_of_id(id), '.'),
			      "id %u has no type.field name", id);
	ck_assert_ptr_null(lockname_of_id(0));
	ck_assert_str_eq(lockname_source_name(LOCKNAME_LAYOUT), "layout");
	ck_assert_str_eq(lockname_source_name((enum lockname_source)99), "address");
}
END_TEST

START_TEST(names_truncate)
{
	struct lockname_ctx c = { .ks = ks };
	char buf[8];

	memset(buf, 'x', sizeof(buf));
	lockname_format(&c, 0xffffffffc0a02008, 0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "ext4_lo");
	lockname_format(&c, 0xffff888100001000, 0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0xffff8");
}
END_TEST

/* ---- ranking ---- */

START_TEST(sort_keys)
{
	struct sp_lock_view v = { 0 };
	static const struct {
		const char *caller;
		uint64_t count, wait, max;
	} rows[] = {
		{ "a", 10, 500, 100 }, { "b", 50, 200, 20 }, { "c", 5, 300, 290 }, { "d", 50, 200, 20 },
	};

	for (size_t i = 0; i < 4; i++) {
		struct sp_lock_row *r = sp_lock_add_row(&v);

		ck_assert_ptr_nonnull(r);
		r->caller = strdup(rows[i].caller);
		r->kind = strdup("mutex");
		r->lock = strdup("x");
		r->count = rows[i].count;
		r->wait_ns = rows[i].wait;
		r->max_ns = rows[i].max;
	}
	sp_lock_sort(&v, SP_LOCK_SORT_WAIT);
	ck_assert_str_eq(v.rows[0].caller, "a");
	ck_assert_str_eq(v.rows[1].caller, "c");
	ck_assert_str_eq(v.rows[2].caller, "b"); /* tie with d on every key: by name */
	ck_assert_str_eq(v.rows[3].caller, "d");
	sp_lock_sort(&v, SP_LOCK_SORT_COUNT);
	ck_assert_str_eq(v.rows[0].caller, "b");
	ck_assert_str_eq(v.rows[1].caller, "d");
	ck_assert_str_eq(v.rows[2].caller, "a");
	sp_lock_sort(&v, SP_LOCK_SORT_MAX);
	ck_assert_str_eq(v.rows[0].caller, "c");
	ck_assert_str_eq(v.rows[1].caller, "a");
	ck_assert_int_lt(sp_lock_row_cmp(&v.rows[0], &v.rows[1], SP_LOCK_SORT_MAX), 0);
	ck_assert_int_eq(sp_lock_row_cmp(&v.rows[0], &v.rows[0], SP_LOCK_SORT_WAIT), 0);
	for (size_t i = 0; i < v.nrows; i++) {
		free(v.rows[i].caller);
		free(v.rows[i].kind);
		free(v.rows[i].lock);
	}
	free(v.rows);
}
END_TEST

/* Sleepers and groups by off-CPU time, then count, then names; a group's callers by time. */
START_TEST(sleeper_sort_keys)
{
	struct sp_run run;
	struct sp_lock_view *v = &run.locks;
	static const struct {
		const char *name, *kind;
		uint64_t count, offcpu;
	} rows[] = {
		{ "a", "mutex", 1, 100 }, { "b", "mutex", 5, 300 }, { "c", "rwsem", 9, 300 },
		{ "c", "mutex", 9, 300 }, { NULL, "mutex", 2, 50 },
	};
	struct sp_sleeper_group *g;

	sp_run_init(&run);
	for (size_t i = 0; i < 5; i++) {
		struct sp_sleeper_row *r = sp_sleeper_add_row(v);

		g = sp_sleeper_add_group(v);
		ck_assert_ptr_nonnull(r);
		ck_assert_ptr_nonnull(g);
		r->caller = rows[i].name ? strdup(rows[i].name) : NULL; /* NULL ranks as "" */
		g->comm = rows[i].name ? strdup(rows[i].name) : NULL;
		r->kind = strdup(rows[i].kind);
		g->kind = strdup(rows[i].kind);
		r->count = g->count = rows[i].count;
		r->offcpu_ns = g->offcpu_ns = rows[i].offcpu;
	}
	ck_assert_int_eq(sp_comm_list_add(&g->callers, "few", 9, 10, 0), 0);
	ck_assert_int_eq(sp_comm_list_add(&g->callers, "long", 1, 90, 0), 0);
	sp_lock_sort(v, SP_LOCK_SORT_WAIT);
	ck_assert_str_eq(v->sleepers[0].caller, "c");
	ck_assert_str_eq(v->sleepers[0].kind, "mutex");
	ck_assert_str_eq(v->sleepers[1].kind, "rwsem");
	ck_assert_str_eq(v->sleepers[2].caller, "b");
	ck_assert_str_eq(v->sleepers[3].caller, "a");
	ck_assert_ptr_null(v->sleepers[4].caller);
	ck_assert_str_eq(v->groups[0].comm, "c");
	ck_assert_str_eq(v->groups[1].kind, "rwsem");
	ck_assert_ptr_null(v->groups[4].comm);
	ck_assert_str_eq(v->groups[4].callers.v[0].comm, "long");
	sp_run_free(&run);
}
END_TEST

/* Schedules by count, then off-CPU time, then caller and wait (NULL as ""). */
START_TEST(sched_sort_keys)
{
	struct sp_run run;
	static const struct {
		const char *caller, *wait;
		uint64_t count, offcpu;
	} rows[] = {
		{ "x", "io", 3, 10 }, { "y", NULL, 7, 1 }, { "x", NULL, 3, 10 }, { "z", "io", 3, 20 },
	};

	sp_run_init(&run);
	for (size_t i = 0; i < 4; i++) {
		struct sp_sched_row *r = sp_sched_add_row(&run.sched);

		ck_assert_ptr_nonnull(r);
		r->caller = strdup(rows[i].caller);
		r->wait = rows[i].wait ? strdup(rows[i].wait) : NULL;
		r->count = rows[i].count;
		r->offcpu_ns = rows[i].offcpu;
	}
	sp_sched_sort(&run.sched);
	ck_assert_str_eq(run.sched.rows[0].caller, "y");
	ck_assert_str_eq(run.sched.rows[1].caller, "z");
	ck_assert_str_eq(run.sched.rows[2].caller, "x");
	ck_assert_ptr_null(run.sched.rows[2].wait);
	ck_assert_str_eq(run.sched.rows[3].wait, "io");
	sp_run_free(&run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("locks");
	TCase *flags = tcase_create("flags"), *pair = tcase_create("pairing");
	TCase *names = tcase_create("names"), *misc = tcase_create("misc");
	SRunner *sr;
	int failed;

	tcase_add_test(flags, kinds_from_kernel_callers);
	tcase_add_test(flags, kinds_no_kernel_emits);
	tcase_add_test(flags, flags_norm);
	tcase_add_test(pair, task_mutex_several_begins);
	tcase_add_test(pair, task_end_mismatch_and_replace);
	tcase_add_test(pair, spin_nested);
	tcase_add_test(pair, spin_same_lock_nested);
	tcase_add_test(pair, spin_pending_entry);
	tcase_add_test(pair, spin_overflow_and_orphans);
	tcase_add_checked_fixture(names, names_setup, names_teardown);
	tcase_add_test(names, names_from_data_symbols);
	tcase_add_test(names, names_not_from_boundaries);
	tcase_add_test(names, names_from_ids_and_runqueues);
	tcase_add_test(names, names_truncate);
	tcase_add_test(misc, sort_keys);
	tcase_add_test(misc, sleeper_sort_keys);
	tcase_add_test(misc, sched_sort_keys);
	suite_add_tcase(s, flags);
	suite_add_tcase(s, pair);
	suite_add_tcase(s, names);
	suite_add_tcase(s, misc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
