// SPDX-License-Identifier: BSD-2-Clause
/*
 * The begin/end pairing of lock contentions that src/views/locks/locks.bpf.c runs, in plain C
 * (include/schedprof/lock_pair.h): flag normalization, per task for sleeping locks (several
 * begins, mismatched ends, a lost end), per CPU for spinning locks (nesting, the same lock
 * nested, a begin still pending, overflow and orphans).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <linux/types.h>

#include "../unit.h"
#include "schedprof/lock_pair.h"

#define S SP_LCB_F_SPIN
#define R SP_LCB_F_READ
#define W SP_LCB_F_WRITE
#define RT SP_LCB_F_RT
#define PC SP_LCB_F_PERCPU
#define MX SP_LCB_F_MUTEX

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

int main(void)
{
	Suite *s = suite_create("lock_pair");
	TCase *flags = tcase_create("flags"), *pair = tcase_create("pairing");

	tcase_add_test(flags, flags_norm);
	tcase_add_test(pair, task_mutex_several_begins);
	tcase_add_test(pair, task_end_mismatch_and_replace);
	tcase_add_test(pair, spin_nested);
	tcase_add_test(pair, spin_same_lock_nested);
	tcase_add_test(pair, spin_pending_entry);
	tcase_add_test(pair, spin_overflow_and_orphans);
	suite_add_tcase(s, flags);
	suite_add_tcase(s, pair);
	return unit_run(s);
}
