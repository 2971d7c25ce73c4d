// SPDX-License-Identifier: BSD-2-Clause
/*
 * Lock names (src/symbols/lockname.c) on the fixture kallsyms: data symbols and offsets in
 * them, boundaries that name nothing, BPF name ids and runqueue locks, truncation.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "../unit.h"
#include "symbols/ksyms.h"
#include "symbols/lockname.h"
#include "schedprof/lock.h"

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

int main(void)
{
	Suite *s = suite_create("lockname");
	TCase *names = tcase_create("names");

	tcase_add_checked_fixture(names, names_setup, names_teardown);
	tcase_add_test(names, names_from_data_symbols);
	tcase_add_test(names, names_not_from_boundaries);
	tcase_add_test(names, names_from_ids_and_runqueues);
	tcase_add_test(names, names_truncate);
	suite_add_tcase(s, names);
	return unit_run(s);
}
