/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the row builder tests (test_*_rows.c) share: the fixture kallsyms and its fold
 * configuration, addresses of its symbols, map records made by hand, and the Check runner.
 */
#ifndef SCHEDPROF_TEST_ROWS_FIXTURE_H
#define SCHEDPROF_TEST_ROWS_FIXTURE_H

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "rows/records.h"
#include "../kallsyms_fixture.h"

/* A comm as BPF writes it: TASK_COMM_LEN bytes, NUL-terminated only when shorter. */
#define SET_COMM(dst, s) memcpy(dst, s, strnlen(s, sizeof(dst)))

/* Adds a kernel stack record (struct sp_stack, struct sp_prof_kstack: nr, pad, ip[]). */
static void add_kstack_to(struct sp_records *r, __u64 id, const uint64_t *ips, uint32_t nr)
{
	char *buf = calloc(1, r->value_size);

	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_le(8 + nr * sizeof(ips[0]), r->value_size);
	memcpy(buf, &nr, sizeof(nr));
	memcpy(buf + 8, ips, nr * sizeof(ips[0]));
	ck_assert_int_eq(sp_records_add(r, &id, buf), 0);
	free(buf);
}

/* Runs tests[0..n) with setup/teardown around each; the exit status of main. */
static int run_tests(const char *name, const TTest *const *tests, size_t n, void (*setup)(void),
		     void (*teardown)(void))
{
	Suite *s = suite_create(name);
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	for (size_t i = 0; i < n; i++)
		tcase_add_test(tc, tests[i]);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
