// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unwind rows in the per-boot cache (src/collect/cfi_cache.c), on the CFI compiler's fixture:
 * compiled then stored, then read back the same; a debug file's rows under a name of their
 * own; a corrupt or truncated file compiled again and replaced; the row bound on a cached
 * table.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../unit.h"
#include "cfi_cache.h"
#include "elfsyms.h"

static void assert_same(const struct cfi_table *a, const struct cfi_table *b)
{
	size_t i;

	ck_assert_uint_eq(a->n, b->n);
	for (i = 0; i < a->n; i++) {
		ck_assert_uint_eq(a->rows[i].pc, b->rows[i].pc);
		ck_assert_uint_eq(a->rows[i].len, b->rows[i].len);
		ck_assert_int_eq(a->rows[i].cfa, b->rows[i].cfa);
		ck_assert_int_eq(a->rows[i].cfa_off, b->rows[i].cfa_off);
		ck_assert_int_eq(a->rows[i].fp, b->rows[i].fp);
		ck_assert_int_eq(a->rows[i].fp_off, b->rows[i].fp_off);
	}
	ck_assert_int_eq(memcmp(&a->stats, &b->stats, sizeof(a->stats)), 0);
}

/* dir's cache file of path ("-d" for the debug file's table) into buf. */
static void cache_file(const char *dir, const char *path, bool debug, char *buf, size_t len)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	char hex[2 * ELF_BUILD_ID_MAX + 1];
	size_t n;

	ck_assert_int_eq(elf_read_build_id(path, id, sizeof(id), &n), 0);
	elf_build_id_hex(id, n, hex, sizeof(hex));
	snprintf(buf, len, "%s/cfi-%s%s", dir, hex, debug ? "-d" : "");
}

START_TEST(test_cfi_cache_round_trip)
{
	struct cfi_table want, t;
	char dir[64], file[256];
	bool cached = true;
	struct stat st;

	unit_tmpdir_make(dir, sizeof(dir), "cficache");
	ck_assert_int_eq(cfi_compile(CFITARGET_GCC, NULL, 0, &want), 0);
	ck_assert_uint_gt(want.n, 10);

	ck_assert_int_eq(cfi_cache_get(dir, CFITARGET_GCC, NULL, 0, &t, &cached), 0);
	ck_assert(!cached);
	assert_same(&want, &t);
	cfi_table_free(&t);
	cache_file(dir, CFITARGET_GCC, false, file, sizeof(file));
	ck_assert_int_eq(stat(file, &st), 0);

	ck_assert_int_eq(cfi_cache_get(dir, CFITARGET_GCC, NULL, 0, &t, &cached), 0);
	ck_assert(cached);
	assert_same(&want, &t);
	ck_assert_ptr_nonnull(cfi_table_find(&t, want.rows[want.n / 2].pc));
	cfi_table_free(&t);

	/* the bound holds for a cached table too */
	ck_assert_int_eq(cfi_cache_get(dir, CFITARGET_GCC, NULL, 3, &t, &cached), -E2BIG);
	ck_assert(cached);
	ck_assert_uint_eq(t.n, 3);
	cfi_table_free(&t);
	cfi_table_free(&want);

	/* with a debug file: its own entry, not the table without it */
	ck_assert_int_eq(cfi_cache_get(dir, CFITARGET_STRIPPED, NULL, 0, &t, &cached), 0);
	ck_assert(!cached);
	ck_assert_uint_eq(t.stats.from_debug, 0);
	cfi_table_free(&t);
	ck_assert_int_eq(cfi_cache_get(dir, CFITARGET_STRIPPED, CFITARGET_DEBUG, 0, &t, &cached),
			 0);
	ck_assert(!cached);
	ck_assert_uint_gt(t.stats.from_debug, 0);
	cfi_table_free(&t);
	ck_assert_int_eq(cfi_cache_get(dir, CFITARGET_STRIPPED, CFITARGET_DEBUG, 0, &t, &cached),
			 0);
	ck_assert(cached);
	ck_assert_uint_gt(t.stats.from_debug, 0);
	cfi_table_free(&t);
	unit_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_cfi_cache_corrupt)
{
	struct cfi_table want, t;
	char dir[64], file[256];
	bool cached = true;
	struct stat st;
	int fd;

	unit_tmpdir_make(dir, sizeof(dir), "cficache");
	ck_assert_int_eq(cfi_compile(CFITARGET_GCC, NULL, 0, &want), 0);
	ck_assert_int_eq(cfi_cache_get(dir, CFITARGET_GCC, NULL, 0, &t, &cached), 0);
	cfi_table_free(&t);
	cache_file(dir, CFITARGET_GCC, false, file, sizeof(file));
	ck_assert_int_eq(stat(file, &st), 0);

	/* the last row's kind out of range: compiled again, and the file replaced */
	fd = open(file, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "\xff", 1, st.st_size - 6), 1);
	close(fd);
	ck_assert_int_eq(cfi_cache_get(dir, CFITARGET_GCC, NULL, 0, &t, &cached), 0);
	ck_assert(!cached);
	assert_same(&want, &t);
	cfi_table_free(&t);
	ck_assert_int_eq(cfi_cache_get(dir, CFITARGET_GCC, NULL, 0, &t, &cached), 0);
	ck_assert(cached);
	assert_same(&want, &t);
	cfi_table_free(&t);

	/* two rows swapped (no longer sorted) */
	fd = open(file, O_RDWR);
	ck_assert_int_ge(fd, 0);
	{
		char a[24], b[24];

		ck_assert_int_eq(pread(fd, a, 24, st.st_size - 48), 24);
		ck_assert_int_eq(pread(fd, b, 24, st.st_size - 24), 24);
		ck_assert_int_eq(pwrite(fd, b, 24, st.st_size - 48), 24);
		ck_assert_int_eq(pwrite(fd, a, 24, st.st_size - 24), 24);
	}
	close(fd);
	ck_assert_int_eq(cfi_cache_get(dir, CFITARGET_GCC, NULL, 0, &t, &cached), 0);
	ck_assert(!cached);
	assert_same(&want, &t);
	cfi_table_free(&t);

	/* truncated */
	ck_assert_int_eq(truncate(file, st.st_size - 5), 0);
	ck_assert_int_eq(cfi_cache_get(dir, CFITARGET_GCC, NULL, 0, &t, &cached), 0);
	ck_assert(!cached);
	assert_same(&want, &t);
	cfi_table_free(&t);
	cfi_table_free(&want);

	/* a cache that cannot be written: compiled each time, nothing lost */
	ck_assert_int_eq(cfi_cache_get("/nonexistent/cfi", CFITARGET_GCC, NULL, 0, &t, &cached),
			 0);
	ck_assert(!cached);
	ck_assert_uint_gt(t.n, 10);
	cfi_table_free(&t);
	unit_tmpdir_remove(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cfi_cache");
	TCase *tc = tcase_create("cfi_cache");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_cfi_cache_round_trip);
	tcase_add_test(tc, test_cfi_cache_corrupt);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
