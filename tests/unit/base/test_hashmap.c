/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for the hash table (src/base/hashmap.c): add/set/find/delete against a plain
 * array as the reference, through growth and backward-shift deletion, with a hash that
 * collides on purpose; string keys; struct keys by bytes; iteration visits each entry once.
 */
#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"

/* Few buckets on purpose: long probe runs, wrap-around and shifts across them. */
static uint64_t bad_hash(long key, void *ctx)
{
	(void)ctx;
	return (uint64_t)key % 7 + ((uint64_t)key % 7 == 3 ? 0xfffffffffffffff0ULL : 0);
}

START_TEST(test_against_reference)
{
	enum { N = 4000 };
	static long ref[N]; /* value + 1, 0 = absent */
	struct hashmap *m = hashmap__new(_i ? bad_hash : hashmap_long_hash, hashmap_long_equal,
					 NULL);
	unsigned int seed = 42;
	size_t len = 0;

	ck_assert_ptr_nonnull(m);
	memset(ref, 0, sizeof(ref));
	for (int step = 0; step < (_i ? 20000 : 200000); step++) {
		long k = rand_r(&seed) % N, v = rand_r(&seed), got = -1, ok = -1, ov = -1;
		int op = rand_r(&seed) % 4;

		if (op == 0) {
			int err = hashmap__add(m, k, v);

			ck_assert_int_eq(err, ref[k] ? -EEXIST : 0);
			if (!ref[k]) {
				ref[k] = v + 1;
				len++;
			}
		} else if (op == 1) {
			ck_assert_int_eq(hashmap__set(m, k, v, &ok, &ov), 0);
			if (ref[k]) {
				ck_assert_int_eq(ok, k);
				ck_assert_int_eq(ov, ref[k] - 1);
			} else {
				len++;
			}
			ref[k] = v + 1;
		} else if (op == 2) {
			ck_assert_int_eq(hashmap__delete(m, k, &ok, &ov), ref[k] != 0);
			if (ref[k]) {
				ck_assert_int_eq(ov, ref[k] - 1);
				ref[k] = 0;
				len--;
			}
		} else {
			ck_assert_int_eq(hashmap__find(m, k, &got), ref[k] != 0);
			if (ref[k])
				ck_assert_int_eq(got, ref[k] - 1);
		}
		ck_assert_uint_eq(hashmap__size(m), len);
	}
	for (long k = 0; k < N; k++) {
		long got;

		ck_assert_int_eq(hashmap__find(m, k, &got), ref[k] != 0);
		if (ref[k])
			ck_assert_int_eq(got, ref[k] - 1);
	}
	{
		struct hashmap_entry *e;
		size_t seen = 0;

		hashmap__for_each_entry(m, e) {
			ck_assert(ref[e->key] != 0);
			seen++;
		}
		ck_assert_uint_eq(seen, len);
	}
	hashmap__free(m);
}
END_TEST

START_TEST(test_strings)
{
	struct hashmap m;
	char buf[32];
	long v;

	hashmap__init(&m, hashmap_str_hash, hashmap_str_equal, NULL);
	ck_assert(!hashmap__find(&m, (long)"x", NULL)); /* empty: no slots yet */
	ck_assert_int_eq(hashmap__reserve(&m, 1000), 0);
	for (int i = 0; i < 1000; i++) {
		snprintf(buf, sizeof(buf), "sym_%d", i);
		ck_assert_int_eq(hashmap__add(&m, (long)strdup(buf), i), 0);
	}
	ck_assert_int_eq(hashmap__add(&m, (long)"sym_7", 1), -EEXIST);
	ck_assert(hashmap__find(&m, (long)"sym_999", &v));
	ck_assert_int_eq(v, 999);
	hashmap__find_entry(&m, (long)"sym_5")->value = 55;
	ck_assert(hashmap__find(&m, (long)"sym_5", &v));
	ck_assert_int_eq(v, 55);
	ck_assert(!hashmap__find(&m, (long)"sym_1000", NULL));
	hashmap__clear_with(&m, hashmap_free_key); /* the strdup'd keys */
	ck_assert_uint_eq(hashmap__size(&m), 0);
	hashmap__clear_with(NULL, hashmap_free_key);
	hashmap__free(NULL);
}
END_TEST

/* Struct keys by their leading bytes: the fields after the key part do not count. */
START_TEST(test_mem_keys)
{
	struct file {
		uint32_t major, minor;
		uint64_t inode;
		int result; /* not part of the key */
	} a = { 8, 1, 42, 1 }, b = { 8, 1, 43, 2 }, key = { 8, 1, 42, 99 };
	struct hashmap m;
	long v;

	hashmap__init(&m, hashmap_mem_hash, hashmap_mem_equal,
		      (void *)offsetof(struct file, result));
	ck_assert_int_eq(hashmap__add(&m, (long)&a, 1), 0);
	ck_assert_int_eq(hashmap__add(&m, (long)&b, 2), 0);
	ck_assert_int_eq(hashmap__add(&m, (long)&key, 3), -EEXIST);
	ck_assert(hashmap__find(&m, (long)&key, &v));
	ck_assert_int_eq(v, 1);
	key.inode = 44;
	ck_assert(!hashmap__find(&m, (long)&key, NULL));
	hashmap__clear(&m);
}
END_TEST

static Suite *hashmap_suite(void)
{
	Suite *s = suite_create("hashmap");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_against_reference, 0, 2);
	tcase_add_test(tc, test_strings);
	tcase_add_test(tc, test_mem_keys);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(hashmap_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
