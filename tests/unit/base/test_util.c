// SPDX-License-Identifier: BSD-2-Clause
/*
 * src/base/util.c: strict number parsing (bounds, signs, spaces, overflow, trailing bytes),
 * seconds, pid lists, argument joining, array growth (zeroed), UTF-8 sequences and their
 * fix-up, and durations.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../unit.h"
#include "base/util.h"

START_TEST(u64_accepts)
{
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = {
		{ "0", 0 }, { "7", 7 }, { "42", 42 }, { "007", 7 },
		{ "18446744073709551615", UINT64_MAX },
	};
	uint64_t v;

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		v = 12345;
		ck_assert_msg(parse_u64(ok[i].s, 0, UINT64_MAX, &v) == 0, "'%s' rejected", ok[i].s);
		ck_assert_uint_eq(v, ok[i].v);
	}
	/* the bounds are inclusive */
	ck_assert_int_eq(parse_u64("1", 1, 3, &v), 0);
	ck_assert_int_eq(parse_u64("3", 1, 3, &v), 0);
	ck_assert_uint_eq(v, 3);
}
END_TEST

START_TEST(u64_refuses)
{
	static const char *const bad[] = { "", "-1", "+1", " 1", "1 ", "1x", "x1", "0x10", "1.5",
					   "1e3", "\n", "1\n" };
	uint64_t v = 99;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(parse_u64(bad[i], 0, UINT64_MAX, &v) == -EINVAL, "'%s' accepted",
			      bad[i]);
	ck_assert_int_eq(parse_u64(NULL, 0, 10, &v), -EINVAL);
	/* out of range: -ERANGE, for the bounds as for overflow */
	ck_assert_int_eq(parse_u64("0", 1, 3, &v), -ERANGE);
	ck_assert_int_eq(parse_u64("4", 1, 3, &v), -ERANGE);
	ck_assert_int_eq(parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	ck_assert_int_eq(parse_u64("99999999999999999999999", 0, UINT64_MAX, &v), -ERANGE);
	/* a refused string leaves *ret alone */
	ck_assert_uint_eq(v, 99);
}
END_TEST

START_TEST(seconds)
{
	static const char *const bad[] = { "", "0", "0.0", "-1", "+1", " 1", "1s", "x", "inf",
					   "nan", "1e8", "0.0000000001", "1,5" };
	uint64_t ns = 7;

	ck_assert_int_eq(parse_seconds("2", &ns), 0);
	ck_assert_uint_eq(ns, 2 * NSEC_PER_SEC);
	ck_assert_int_eq(parse_seconds("0.5", &ns), 0);
	ck_assert_uint_eq(ns, NSEC_PER_SEC / 2);
	ck_assert_int_eq(parse_seconds(".25", &ns), 0);
	ck_assert_uint_eq(ns, NSEC_PER_SEC / 4);
	ck_assert_int_eq(parse_seconds("0.000000001", &ns), 0);
	ck_assert_uint_eq(ns, 1);
	ck_assert_int_eq(parse_seconds("10000000", &ns), 0); /* the largest: 1e7 s */
	ck_assert_uint_eq(ns, 10000000ULL * NSEC_PER_SEC);
	ns = 7;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(parse_seconds(bad[i], &ns) == -EINVAL, "'%s' accepted", bad[i]);
	ck_assert_int_eq(parse_seconds(NULL, &ns), -EINVAL);
}
END_TEST

START_TEST(strings)
{
	char *const argv[] = { "make", "-j2", "all" };
	char *s;

	ck_assert_ptr_null(xstrdup(NULL));
	s = xstrdup("abc");
	ck_assert_str_eq(s, "abc");
	free(s);
	s = join_args(3, argv);
	ck_assert_str_eq(s, "make -j2 all");
	free(s);
	s = join_args(1, argv);
	ck_assert_str_eq(s, "make");
	free(s);
	s = join_args(0, argv);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

/* Exact names, "prefix*", "prefix*suffix" (foldcfg.c, waitclass.c). */
START_TEST(names)
{
	ck_assert(name_matches("do_wait", "do_wait"));
	ck_assert(!name_matches("do_wait_thread", "do_wait"));
	ck_assert(name_matches("__mutex_lock_slowpath", "__mutex_lock*"));
	ck_assert(name_matches("__mutex_lock", "__mutex_lock*"));
	ck_assert(!name_matches("mutex_lock", "__mutex_lock*"));
	ck_assert(name_matches("schedule_timeout_interruptible", "schedule_timeout_*interruptible"));
	ck_assert(name_matches("schedule_timeout_uninterruptible",
			       "schedule_timeout_*interruptible"));
	ck_assert(!name_matches("schedule_timeout", "schedule_timeout_*interruptible"));
	ck_assert(!name_matches("schedule_timeout_idle", "schedule_timeout_*interruptible"));
	/* prefix and suffix may not overlap in the name */
	ck_assert(!name_matches("ab", "ab*b"));
}
END_TEST

START_TEST(grow_zeroes)
{
	int *v = NULL;
	size_t cap = 0;

	ck_assert_int_eq(grow((void **)&v, &cap, 0, sizeof(*v)), 0); /* nothing needed */
	ck_assert_ptr_null(v);
	ck_assert_int_eq(grow((void **)&v, &cap, 1, sizeof(*v)), 0);
	ck_assert_uint_ge(cap, 1);
	for (size_t i = 0; i < cap; i++)
		ck_assert_int_eq(v[i], 0);
	for (size_t i = 0; i < cap; i++)
		v[i] = -1;
	ck_assert_int_eq(grow((void **)&v, &cap, 1000, sizeof(*v)), 0);
	ck_assert_uint_ge(cap, 1000);
	ck_assert_int_eq(v[0], -1); /* kept */
	for (size_t i = 16; i < cap; i++)
		ck_assert_msg(v[i] == 0, "v[%zu] not zeroed", i);
	/* already big enough: nothing moves */
	{
		int *old = v;
		size_t oldcap = cap;

		ck_assert_int_eq(grow((void **)&v, &cap, cap, sizeof(*v)), 0);
		ck_assert_ptr_eq(v, old);
		ck_assert_uint_eq(cap, oldcap);
	}
	free(v);
}
END_TEST

START_TEST(utf8)
{
	static const struct {
		const char *s;
		size_t n, len;
	} t[] = {
		{ "a", 1, 1 },
		{ "\xc3\xa9", 2, 2 },		/* U+00E9 */
		{ "\xe2\x82\xac", 3, 3 },	/* U+20AC */
		{ "\xf0\x9f\x98\x80", 4, 4 },	/* U+1F600 */
		{ "\xf4\x8f\xbf\xbf", 4, 4 },	/* U+10FFFF */
		{ "\xc3\xa9", 1, 0 },		/* truncated */
		{ "\xe2\x82", 2, 0 },
		{ "\xc0\xaf", 2, 0 },		/* overlong */
		{ "\xc1\xbf", 2, 0 },
		{ "\xe0\x9f\xbf", 3, 0 },	/* overlong below U+0800 */
		{ "\xf0\x8f\xbf\xbf", 4, 0 },	/* overlong below U+10000 */
		{ "\xed\xa0\x80", 3, 0 },	/* surrogate */
		{ "\xed\x9f\xbf", 3, 3 },	/* U+D7FF, just below */
		{ "\xf4\x90\x80\x80", 4, 0 },	/* above U+10FFFF */
		{ "\xf5\x80\x80\x80", 4, 0 },
		{ "\x80", 1, 0 },		/* stray continuation */
		{ "\xff", 1, 0 },
		{ "\xe2\x28\xa1", 3, 0 },	/* bad second byte */
		{ "\xe2\x82\x28", 3, 0 },	/* bad third byte */
	};
	char *s;

	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		ck_assert_msg(utf8_seq_len((const unsigned char *)t[i].s, t[i].n) == t[i].len,
			      "case %zu: %zu, expected %zu", i,
			      utf8_seq_len((const unsigned char *)t[i].s, t[i].n), t[i].len);
	s = utf8_fix("ok \xc3\xa9 \xff\xe2\x82 \xf0\x9f\x98\x80");
	ck_assert_str_eq(s, "ok \xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xf0\x9f\x98\x80");
	free(s);
	s = utf8_fix("");
	ck_assert_str_eq(s, "");
	free(s);
	s = utf8_fix("\x80\x80\x80"); /* the worst case: 3 bytes out per byte in */
	ck_assert_str_eq(s, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	free(s);
}
END_TEST

START_TEST(durations)
{
	static const struct {
		uint64_t ns;
		const char *s;
	} t[] = {
		{ 0, "0ns" },		  { 78, "78ns" },	    { 999, "999ns" },
		{ 1000, "1.0us" },	  { 456000, "456.0us" },    { 1000000, "1.0ms" },
		{ 12300000, "12.3ms" },	  { NSEC_PER_SEC, "1.000s" }, { 1234000000, "1.234s" },
		{ 3600 * NSEC_PER_SEC, "3600.000s" },
	};
	char buf[32], small[4];

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		ck_assert_ptr_eq(fmt_duration(t[i].ns, buf, sizeof(buf)), buf);
		ck_assert_str_eq(buf, t[i].s);
	}
	/* a small buffer cuts, never overflows */
	ck_assert_str_eq(fmt_duration(1234000000, small, sizeof(small)), "1.2");
}
END_TEST

START_TEST(clocks)
{
	uint64_t a = now_ns(CLOCK_MONOTONIC), b = now_ns(CLOCK_MONOTONIC);

	ck_assert_uint_gt(a, 0);
	ck_assert_uint_ge(b, a);
	/* the realtime clock is past 2020 */
	ck_assert_uint_gt(now_ns(CLOCK_REALTIME), 1577836800ULL * NSEC_PER_SEC);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("util");
	TCase *parse = tcase_create("parse"), *str = tcase_create("strings");

	tcase_add_test(parse, u64_accepts);
	tcase_add_test(parse, names);
	tcase_add_test(parse, u64_refuses);
	tcase_add_test(parse, seconds);
	tcase_add_test(str, strings);
	tcase_add_test(str, grow_zeroes);
	tcase_add_test(str, utf8);
	tcase_add_test(str, durations);
	tcase_add_test(str, clocks);
	suite_add_tcase(s, parse);
	suite_add_tcase(s, str);
	return unit_run(s);
}
