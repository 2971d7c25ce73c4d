// SPDX-License-Identifier: BSD-2-Clause
/*
 * Lock kinds from contention_begin's flags (src/rows/lockflags.c): the flag sets each
 * kernel slow path passes, and the combinations no kernel emits.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "../unit.h"
#include "rows/lockflags.h"
#include "schedprof/lock.h"

#define S SP_LCB_F_SPIN
#define R SP_LCB_F_READ
#define W SP_LCB_F_WRITE
#define RT SP_LCB_F_RT
#define PC SP_LCB_F_PERCPU
#define MX SP_LCB_F_MUTEX

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

int main(void)
{
	Suite *s = suite_create("lockflags");
	TCase *tc = tcase_create("flags");

	tcase_add_test(tc, kinds_from_kernel_callers);
	tcase_add_test(tc, kinds_no_kernel_emits);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
