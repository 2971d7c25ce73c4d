// SPDX-License-Identifier: BSD-2-Clause
/*
 * CPU quotas and steal from the kernel's text (src/rows/cgquota.c), on fixtures: v2 cpu.max,
 * v1 cpu.cfs_quota_us, cpu.stat of either version, /proc/stat's steal and its delta.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include "../unit.h"
#include "rows/cgquota.h"

START_TEST(cpu_max)
{
	uint64_t q = 9, p = 9;

	ck_assert_int_eq(cgq_parse_cpu_max("20000 100000\n", &q, &p), 0);
	ck_assert_uint_eq(q, 20000);
	ck_assert_uint_eq(p, 100000);
	ck_assert_int_eq(cgq_parse_cpu_max("max 100000\n", &q, &p), 0);
	ck_assert_uint_eq(q, 0); /* no quota */
	ck_assert_int_eq(cgq_parse_cpu_max("max\n", &q, &p), -EINVAL);
	ck_assert_int_eq(cgq_parse_cpu_max("0 100000\n", &q, &p), -EINVAL);
	ck_assert_int_eq(cgq_parse_cpu_max("20000 100000 x\n", &q, &p), -EINVAL);
	ck_assert_int_eq(cgq_parse_us("-1\n", &q), 0);
	ck_assert_uint_eq(q, 0);
	ck_assert_int_eq(cgq_parse_us("50000\n", &q), 0);
	ck_assert_uint_eq(q, 50000);
	ck_assert_int_eq(cgq_parse_us("5x\n", &q), -EINVAL);
}
END_TEST

START_TEST(cpu_stat)
{
	uint64_t nr = 0, ns = 0;

	/* v1: throttled_time in ns */
	ck_assert_int_eq(cgq_parse_cpu_stat("nr_periods 22\nnr_throttled 21\nthrottled_time "
					    "1641011700\nnr_bursts 0\nburst_time 0\n", &nr, &ns), 0);
	ck_assert_uint_eq(nr, 21);
	ck_assert_uint_eq(ns, 1641011700);
	/* v2: throttled_usec in us */
	ck_assert_int_eq(cgq_parse_cpu_stat("usage_usec 5\nuser_usec 4\nsystem_usec 1\n"
					    "nr_periods 3\nnr_throttled 2\nthrottled_usec 1500\n",
					    &nr, &ns), 0);
	ck_assert_uint_eq(nr, 2);
	ck_assert_uint_eq(ns, 1500000);
	/* without bandwidth control */
	ck_assert_int_eq(cgq_parse_cpu_stat("usage_usec 5\n", &nr, &ns), -ENOENT);
}
END_TEST

START_TEST(steal)
{
	const char *t0 = "cpu  1 2 3 4 5 6 7 100 0 0\ncpu0 1 2 3 4 5 6 7 40 0 0\n"
			 "cpu1 1 2 3 4 5 6 7 60 0 0\nintr 5\n";
	const char *t1 = "cpu  1 2 3 4 5 6 7 160 0 0\ncpu0 1 2 3 4 5 6 7 50 0 0\n"
			 "cpu1 1 2 3 4 5 6 7 110 0 0\ncpu2 1 2 3 4 5 6 7 3 0 0\n";
	struct sp_cpu_steal *a = NULL, *b = NULL;
	struct sp_steal s = { 0 };
	size_t na = 0, nb = 0;

	ck_assert_int_eq(cgq_parse_steal(t0, 100, &a, &na), 0);
	ck_assert_uint_eq(na, 2); /* the "cpu" total is not a CPU */
	ck_assert_int_eq(a[1].cpu, 1);
	ck_assert_uint_eq(a[1].steal_ns, 600000000); /* 60 ticks of 10 ms */
	ck_assert_int_eq(cgq_parse_steal(t1, 100, &b, &nb), 0);
	ck_assert_uint_eq(nb, 3);
	ck_assert_int_eq(cgq_steal_delta(&s, a, na, b, nb), 0);
	ck_assert(s.present);
	ck_assert_uint_eq(s.ncpus, 3);
	ck_assert_uint_eq(s.cpus[0].steal_ns, 100000000);
	ck_assert_uint_eq(s.cpus[1].steal_ns, 500000000);
	ck_assert_uint_eq(s.cpus[2].steal_ns, 30000000); /* new since the start: from 0 */
	ck_assert_uint_eq(s.steal_ns, 630000000);
	ck_assert_int_eq(cgq_parse_steal("cpu0 1 2\n", 100, &a, &na), -EINVAL);
	free(a);
	free(b);
	free(s.cpus);
}
END_TEST

START_TEST(throttlers_sorted)
{
	struct sp_throttler t[3] = { { .path = "/b", .throttled_ns = 5 },
				     { .path = "/a", .throttled_ns = 9 },
				     { .path = "/c", .throttled_ns = 5 } };
	struct sp_budget b = { .throttlers = t, .nthrottlers = 3 };

	cgq_sort_throttlers(&b);
	ck_assert_str_eq(t[0].path, "/a");
	ck_assert_str_eq(t[1].path, "/b");
	ck_assert_str_eq(t[2].path, "/c");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cgquota");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, cpu_max);
	tcase_add_test(tc, cpu_stat);
	tcase_add_test(tc, steal);
	tcase_add_test(tc, throttlers_sorted);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
