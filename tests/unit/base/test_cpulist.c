// SPDX-License-Identifier: BSD-2-Clause
/*
 * CPU lists in the kernel's format (src/base/cpulist.c): ranges, order and duplicates,
 * the bounds, syntax errors, and reading a file (missing, not a list, the machine's own).
 * The cases of test_usyms.c's test_cpulist are here as they were (parse_and_read): that one
 * goes when test_usyms.c is next edited.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit.h"
#include "base/cpulist.h"

START_TEST(parse_and_read)
{
	static const struct {
		const char *s;
		int n;
		int cpus[8];
	} ok[] = {
		{ "0\n", 1, { 0 } },
		{ "0-1\n", 2, { 0, 1 } },
		{ "0,2-4,7", 5, { 0, 2, 3, 4, 7 } },
		{ "3,1,1-2", 3, { 1, 2, 3 } },
		{ "5-5", 1, { 5 } },
		{ "8191", 1, { 8191 } },
	};
	static const char *const bad[] = {
		"", "\n", "-1", "1-", "2-1", "a", "0,,1", "0,", ",0", "8192", "0-8192", "0-1x",
		"0 1", "0\n\n", "99999999999999999999",
	};
	int *cpus;
	size_t n;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ck_assert_msg(!cpulist_parse(ok[i].s, &cpus, &n), "'%s' rejected", ok[i].s);
		ck_assert_uint_eq(n, (size_t)ok[i].n);
		for (int k = 0; k < ok[i].n; k++)
			ck_assert_int_eq(cpus[k], ok[i].cpus[k]);
		free(cpus);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(cpulist_parse(bad[i], &cpus, &n) == -EINVAL, "'%s' accepted", bad[i]);
	ck_assert_int_eq(cpulist_read("/nonexistent/online", &cpus, &n), -ENOENT);
	ck_assert_int_eq(cpulist_read(FIXTURES_DIR "/maps.txt", &cpus, &n), -EINVAL);
	/* the machine's own list */
	ck_assert_int_eq(cpulist_read("/sys/devices/system/cpu/online", &cpus, &n), 0);
	ck_assert_uint_ge(n, 1);
	free(cpus);
}
END_TEST

/* Every CPU at once, overlapping ranges, and a refusal that leaves the outputs alone. */
START_TEST(whole_range)
{
	int *cpus = NULL, sentinel = 0;
	size_t n = 0;

	ck_assert_int_eq(cpulist_parse("0-8191", &cpus, &n), 0);
	ck_assert_uint_eq(n, CPULIST_MAX_CPU + 1);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(cpus[i], (int)i);
	free(cpus);
	ck_assert_int_eq(cpulist_parse("10-20,0-15,18,8191,4-4", &cpus, &n), 0);
	ck_assert_uint_eq(n, 22);
	ck_assert_int_eq(cpus[0], 0);
	ck_assert_int_eq(cpus[20], 20);
	ck_assert_int_eq(cpus[21], 8191);
	free(cpus);
	/* leading zeros are digits like others */
	ck_assert_int_eq(cpulist_parse("007", &cpus, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(cpus[0], 7);
	free(cpus);
	cpus = &sentinel;
	n = 99;
	ck_assert_int_eq(cpulist_parse("1-3,x", &cpus, &n), -EINVAL);
	ck_assert_ptr_eq(cpus, &sentinel);
	ck_assert_uint_eq(n, 99);
}
END_TEST

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/sp_cpulist_XXXXXX");
	int fd;

	ck_assert_ptr_nonnull(path);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

START_TEST(read_files)
{
	char *path;
	int *cpus;
	size_t n;

	path = write_tmp("0-3,6\n");
	ck_assert_int_eq(cpulist_read(path, &cpus, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_int_eq(cpus[4], 6);
	free(cpus);
	unlink(path);
	free(path);
	/* an empty file is no list */
	path = write_tmp("");
	ck_assert_int_eq(cpulist_read(path, &cpus, &n), -EINVAL);
	unlink(path);
	free(path);
	/* a directory cannot be read as a list */
	ck_assert_int_lt(cpulist_read("/tmp", &cpus, &n), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cpulist");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, parse_and_read);
	tcase_add_test(tc, whole_range);
	tcase_add_test(tc, read_files);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
