// SPDX-License-Identifier: BSD-2-Clause
/*
 * Compiled CFI tables as bytes and back (src/symbols/cfi_pack.c): the fixture cfitarget's
 * table round-trips row for row with its statistics and cut flag; another build-id or row
 * limit is stale; and bytes that are not a packed table are refused, never trusted: every
 * truncation, every single byte flipped in the head and in a row, rows out of order,
 * overlapping or empty, kinds out of range, a row count that lies.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"
#include "symbols/cfi_pack.h"

static struct cfi_table tab;
static const struct cfi_pack_key key = { .build_id = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
						       13, 14, 15, 16, 17, 18, 19, 20 },
					 .id_len = 20,
					 .max_rows = 1000000 };

static void setup(void)
{
	ck_assert_int_eq(cfi_compile(CFITARGET_GCC, NULL, key.max_rows, &tab), 0);
	ck_assert_uint_gt(tab.n, 10);
}

static void teardown(void)
{
	cfi_table_free(&tab);
}

static void pack(const struct cfi_table *t, bool cut, unsigned char **data, size_t *size)
{
	ck_assert_int_eq(cfi_pack(&key, t, cut, (void **)data, size), 0);
}

START_TEST(test_round_trip)
{
	struct cfi_table back;
	unsigned char *data;
	size_t size;
	bool cut;

	for (int c = 0; c < 2; c++) {
		pack(&tab, c, &data, &size);
		ck_assert_int_eq(cfi_unpack(&key, data, size, &back, &cut), 0);
		ck_assert_int_eq(cut, c);
		ck_assert_uint_eq(back.n, tab.n);
		for (size_t i = 0; i < tab.n; i++) {
			const struct cfi_row *a = &tab.rows[i], *b = &back.rows[i];

			ck_assert(a->pc == b->pc && a->len == b->len && a->cfa_off == b->cfa_off &&
				  a->fp_off == b->fp_off && a->bx_off == b->bx_off &&
				  a->cfa == b->cfa && a->fp == b->fp && a->bx == b->bx);
		}
		ck_assert_mem_eq(&back.stats, &tab.stats, sizeof(tab.stats));
		/* searchable as the compiled one */
		ck_assert_ptr_eq(cfi_table_find(&back, tab.rows[tab.n / 2].pc),
				 &back.rows[tab.n / 2]);
		cfi_table_free(&back);
		free(data);
	}
}
END_TEST

START_TEST(test_stale)
{
	struct cfi_pack_key other = key;
	struct cfi_table back;
	unsigned char *data;
	size_t size;
	bool cut;

	pack(&tab, false, &data, &size);
	other.build_id[19] ^= 1;
	ck_assert_int_eq(cfi_unpack(&other, data, size, &back, &cut), -ESTALE);
	other = key;
	other.id_len = 16;
	ck_assert_int_eq(cfi_unpack(&other, data, size, &back, &cut), -ESTALE);
	other = key;
	other.max_rows = 10;
	ck_assert_int_eq(cfi_unpack(&other, data, size, &back, &cut), -ESTALE);
	ck_assert_ptr_null(back.rows);
	other.id_len = CFI_PACK_ID_MAX + 1;
	ck_assert_int_eq(cfi_pack(&other, &tab, false, (void **)&data, &size), -EINVAL);
	free(data);
}
END_TEST

/* Not a table: refused, with nothing left allocated. */
static void refused(const unsigned char *data, size_t size)
{
	struct cfi_table back;
	bool cut = true;
	int err = cfi_unpack(&key, data, size, &back, &cut);

	ck_assert_msg(err == -EBADMSG || err == -ESTALE, "size %zu: %d", size, err);
	ck_assert_ptr_null(back.rows);
	ck_assert_uint_eq(back.n, 0);
	ck_assert(!cut);
}

START_TEST(test_truncated_and_extended)
{
	unsigned char *data, *big;
	size_t size;

	pack(&tab, false, &data, &size);
	for (size_t n = 0; n < size; n++)
		refused(data, n);
	/* one byte more, and one row's worth more: the count does not match */
	big = calloc(1, size + 24);
	ck_assert_ptr_nonnull(big);
	memcpy(big, data, size);
	refused(big, size + 1);
	refused(big, size + 24);
	free(big);
	free(data);
}
END_TEST

/* The rows' offset in a packed table of n rows (the head's size). */
static size_t head_size(size_t size, size_t n)
{
	return size - n * 24;
}

START_TEST(test_flipped_head)
{
	unsigned char *data;
	size_t size, head;

	pack(&tab, false, &data, &size);
	head = head_size(size, tab.n);
	/* every byte of the head but the statistics (informative only) is checked */
	for (size_t i = 0; i < 8 + 16 + CFI_PACK_ID_MAX + 16; i++) {
		unsigned char *d = malloc(size);

		memcpy(d, data, size);
		d[i] ^= 0x80;
		/* magic, version, sizes, id, limit, count: another table or none */
		refused(d, size);
		free(d);
	}
	ck_assert_uint_gt(head, 8 + 16 + CFI_PACK_ID_MAX + 16);
	free(data);
}
END_TEST

START_TEST(test_bad_rows)
{
	struct cfi_table t = { 0 };
	struct cfi_row rows[3] = {
		{ .pc = 0x1000, .len = 0x10, .cfa = CFI_CFA_SP, .cfa_off = 8 },
		{ .pc = 0x1010, .len = 0x10, .cfa = CFI_CFA_SP, .cfa_off = 16 },
		{ .pc = 0x1020, .len = 0x10, .cfa = CFI_CFA_FP, .cfa_off = 16, .fp = CFI_FP_AT,
		  .fp_off = -16 },
	};
	struct cfi_table back;
	unsigned char *data;
	size_t size;
	bool cut;

	t.rows = rows;
	t.n = 3;
	pack(&t, false, &data, &size);
	ck_assert_int_eq(cfi_unpack(&key, data, size, &back, &cut), 0);
	cfi_table_free(&back);
	free(data);

	rows[1].pc = 0x1008; /* overlaps the first */
	pack(&t, false, &data, &size);
	refused(data, size);
	free(data);
	rows[1].pc = 0x1030; /* out of order */
	pack(&t, false, &data, &size);
	refused(data, size);
	free(data);
	rows[1].pc = 0x1010;
	rows[1].len = 0; /* empty */
	pack(&t, false, &data, &size);
	refused(data, size);
	free(data);
	rows[1].len = 0x10;
	rows[1].cfa = CFI_CFA_KINDS; /* a kind out of range */
	pack(&t, false, &data, &size);
	refused(data, size);
	free(data);
	rows[1].cfa = CFI_CFA_SP;
	rows[2].fp = CFI_FP_KINDS;
	pack(&t, false, &data, &size);
	refused(data, size);
	free(data);
	rows[2].fp = CFI_FP_AT;
	rows[2].pc = UINT64_MAX - 4; /* wraps */
	pack(&t, false, &data, &size);
	refused(data, size);
	free(data);
}
END_TEST

START_TEST(test_empty_table)
{
	struct cfi_table t = { 0 }, back;
	unsigned char *data;
	size_t size;
	bool cut;

	pack(&t, true, &data, &size);
	ck_assert_int_eq(cfi_unpack(&key, data, size, &back, &cut), 0);
	ck_assert_uint_eq(back.n, 0);
	ck_assert(cut);
	ck_assert_ptr_null(cfi_table_find(&back, 0x1000));
	cfi_table_free(&back);
	free(data);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cfi_pack");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_stale);
	tcase_add_test(tc, test_truncated_and_extended);
	tcase_add_test(tc, test_flipped_head);
	tcase_add_test(tc, test_bad_rows);
	tcase_add_test(tc, test_empty_table);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
