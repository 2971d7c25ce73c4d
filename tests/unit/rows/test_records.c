// SPDX-License-Identifier: BSD-2-Clause
/*
 * Raw map records (src/rows/records.c): copies of keys and values past the first
 * allocation, reserve and its overflow check, free and reuse, the size check the row builders
 * make, and the index by a __u64 key (found, missing, duplicate keys, wrong key size).
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"
#include "rows/records.h"

struct val {
	uint32_t a;
	char name[12];
};

static void add(struct sp_records *r, uint64_t key, uint32_t a)
{
	struct val v = { .a = a };

	snprintf(v.name, sizeof(v.name), "v%u", a);
	ck_assert_int_eq(sp_records_add(r, &key, &v), 0);
}

START_TEST(add_and_read)
{
	struct sp_records r;

	sp_records_init(&r, sizeof(uint64_t), sizeof(struct val));
	ck_assert_uint_eq(r.n, 0);
	ck_assert_uint_eq(r.failed, 0);
	ck_assert_ptr_null(r.keys);
	for (uint32_t i = 0; i < 1000; i++) /* past the first 64 */
		add(&r, 1000 + i, i);
	ck_assert_uint_eq(r.n, 1000);
	ck_assert_uint_ge(r.cap, 1000);
	for (size_t i = 0; i < r.n; i++) {
		const struct val *v = sp_records_value(&r, i);
		uint64_t k;

		memcpy(&k, sp_records_key(&r, i), sizeof(k));
		ck_assert_uint_eq(k, 1000 + i);
		ck_assert_uint_eq(v->a, i);
		ck_assert_int_eq(strncmp(v->name, "v", 1), 0);
	}
	ck_assert_str_eq(((const struct val *)sp_records_value(&r, 999))->name, "v999");
	sp_records_free(&r);
	ck_assert_uint_eq(r.n, 0);
	ck_assert_uint_eq(r.cap, 0);
	ck_assert_ptr_null(r.keys);
	ck_assert_ptr_null(r.values);
	/* the sizes stay: usable again */
	ck_assert_uint_eq(r.key_size, sizeof(uint64_t));
	ck_assert_uint_eq(r.value_size, sizeof(struct val));
	add(&r, 5, 5);
	ck_assert_uint_eq(r.n, 1);
	sp_records_free(&r);
	sp_records_free(NULL);
}
END_TEST

START_TEST(reserve)
{
	struct sp_records r;
	void *keys;

	sp_records_init(&r, 4, 16);
	ck_assert_int_eq(sp_records_reserve(&r, 10), 0);
	ck_assert_uint_eq(r.cap, 10);
	ck_assert_uint_eq(r.n, 0);
	keys = r.keys;
	ck_assert_int_eq(sp_records_reserve(&r, 5), 0); /* smaller: nothing moves */
	ck_assert_uint_eq(r.cap, 10);
	ck_assert_ptr_eq(r.keys, keys);
	/* a count whose bytes overflow size_t: refused, r unchanged */
	ck_assert_int_eq(sp_records_reserve(&r, SIZE_MAX / 8), -ENOMEM);
	ck_assert_uint_eq(r.cap, 10);
	sp_records_free(&r);
	/* empty values (a set of keys) */
	sp_records_init(&r, 8, 0);
	ck_assert_int_eq(sp_records_reserve(&r, 3), 0);
	sp_records_free(&r);
}
END_TEST

START_TEST(sizes)
{
	struct sp_records r;

	sp_records_init(&r, 8, sizeof(struct val));
	/* empty: any sizes will do, nothing to misread */
	ck_assert(sp_records_are(&r, 8, sizeof(struct val)));
	ck_assert(sp_records_are(&r, 4, 4));
	add(&r, 1, 1);
	ck_assert(sp_records_are(&r, 8, sizeof(struct val)));
	ck_assert(!sp_records_are(&r, 8, sizeof(struct val) + 8));
	ck_assert(!sp_records_are(&r, 4, sizeof(struct val)));
	sp_records_free(&r);
}
END_TEST

START_TEST(index_u64)
{
	struct sp_records r;
	struct sp_records_index x;
	const struct val *v;

	sp_records_init(&r, sizeof(uint64_t), sizeof(struct val));
	/* empty */
	ck_assert_int_eq(sp_records_index_u64(&x, &r), 0);
	ck_assert_ptr_null(sp_records_find_u64(&x, 0));
	sp_records_index_free(&x);
	for (uint32_t i = 0; i < 5000; i++)
		add(&r, (uint64_t)i * 7919 + ((uint64_t)i << 40), i);
	add(&r, 0, 77777);
	add(&r, UINT64_MAX, 88888); /* a key that is -1 as a long */
	add(&r, 7919, 99999);	    /* a key seen before: the first record wins */
	ck_assert_int_eq(sp_records_index_u64(&x, &r), 0);
	for (uint32_t i = 1; i < 5000; i++) {
		v = sp_records_find_u64(&x, (uint64_t)i * 7919 + ((uint64_t)i << 40));
		ck_assert_ptr_nonnull(v);
		ck_assert_uint_eq(v->a, i);
	}
	ck_assert_uint_eq(((const struct val *)sp_records_find_u64(&x, 0))->a, 0);
	ck_assert_ptr_nonnull(sp_records_find_u64(&x, UINT64_MAX));
	ck_assert_uint_eq(((const struct val *)sp_records_find_u64(&x, UINT64_MAX))->a, 88888);
	ck_assert_ptr_null(sp_records_find_u64(&x, 1));
	ck_assert_ptr_null(sp_records_find_u64(&x, 7918));
	sp_records_index_free(&x);
	sp_records_free(&r);
}
END_TEST

START_TEST(index_wrong_key_size)
{
	struct sp_records r;
	struct sp_records_index x;
	uint32_t k = 1, v = 2;

	sp_records_init(&r, sizeof(k), sizeof(v));
	ck_assert_int_eq(sp_records_index_u64(&x, &r), 0); /* no record: nothing misread */
	sp_records_index_free(&x);
	ck_assert_int_eq(sp_records_add(&r, &k, &v), 0);
	ck_assert_int_eq(sp_records_index_u64(&x, &r), -EINVAL);
	ck_assert_ptr_null(sp_records_find_u64(&x, 1));
	sp_records_index_free(&x);
	sp_records_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("records");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, add_and_read);
	tcase_add_test(tc, reserve);
	tcase_add_test(tc, sizes);
	tcase_add_test(tc, index_u64);
	tcase_add_test(tc, index_wrong_key_size);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
