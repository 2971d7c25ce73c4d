// SPDX-License-Identifier: BSD-2-Clause
/*
 * Per-boot caches (src/loader/bootcache.c) in a temporary directory: what is stored loads
 * back; another magic, another size, another kernel release or boot id, a short file, a
 * missing file or a symbolic link give no data; a second store replaces the first and leaves
 * no temporary file behind.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../unit.h"
#include "loader/bootcache.h"

struct data {
	unsigned long long a, b;
	char name[24];
};

static char dir[64];

static void setup(void)
{
	unit_tmpdir_make(dir, sizeof(dir), "bootcache");
}

static void teardown(void)
{
	unit_tmpdir_remove(dir);
}

static size_t entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* The whole file, for tampering. */
static char *slurp(const char *name, size_t *ret_len)
{
	char path[256];
	struct stat st;
	char *buf;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*ret_len = (size_t)st.st_size;
	return buf;
}

static void spill(const char *name, const char *buf, size_t len)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static const struct data D = { 1, 0xfeedfacecafebeefULL, "fold config" };

START_TEST(round_trip)
{
	struct data got;

	memset(&got, 0, sizeof(got));
	ck_assert_int_eq(boot_cache_load(dir, "fold", "foldcfg1", &got, sizeof(got)), -ENOENT);
	ck_assert_int_eq(boot_cache_store(dir, "fold", "foldcfg1", &D, sizeof(D)), 0);
	ck_assert_int_eq(boot_cache_load(dir, "fold", "foldcfg1", &got, sizeof(got)), 0);
	ck_assert(!memcmp(&got, &D, sizeof(D)));
	/* another kind of cache in the same directory stays apart */
	ck_assert_int_eq(boot_cache_load(dir, "kfeat", "foldcfg1", &got, sizeof(got)), -ENOENT);
	/* a second store replaces the first, and no temporary file is left */
	got.a = 2;
	ck_assert_int_eq(boot_cache_store(dir, "fold", "foldcfg1", &got, sizeof(got)), 0);
	memset(&got, 0, sizeof(got));
	ck_assert_int_eq(boot_cache_load(dir, "fold", "foldcfg1", &got, sizeof(got)), 0);
	ck_assert_uint_eq(got.a, 2);
	ck_assert_uint_eq(entries(), 1);
}
END_TEST

/* Data of another layout is never read into the caller's struct. */
START_TEST(other_magic_or_size)
{
	struct data got = { 0 };
	char big[sizeof(struct data) + 8];

	ck_assert_int_eq(boot_cache_store(dir, "fold", "foldcfg1", &D, sizeof(D)), 0);
	ck_assert_int_eq(boot_cache_load(dir, "fold", "foldcfg2", &got, sizeof(got)), -ENOENT);
	ck_assert_int_eq(boot_cache_load(dir, "fold", "foldcfg", &got, sizeof(got)), -ENOENT);
	ck_assert_int_eq(boot_cache_load(dir, "fold", "foldcfg1", &got, sizeof(got) - 8), -ENOENT);
	ck_assert_int_eq(boot_cache_load(dir, "fold", "foldcfg1", big, sizeof(big)), -ENOENT);
	ck_assert_uint_eq(got.a, 0); /* untouched */
	/* a magic of 15 characters is fine; too long is refused on both sides */
	ck_assert_int_eq(boot_cache_store(dir, "m", "123456789012345", &D, sizeof(D)), 0);
	ck_assert_int_eq(boot_cache_load(dir, "m", "123456789012345", &got, sizeof(got)), 0);
	ck_assert_int_eq(boot_cache_store(dir, "m", "12345678901234567", &D, sizeof(D)), -EINVAL);
	ck_assert_int_eq(boot_cache_load(dir, "m", "12345678901234567", &got, sizeof(got)),
			 -EINVAL);
}
END_TEST

/* Replace the first occurrence of what in the stored file (which must hold it). */
static void tamper(const char *name, const char *what)
{
	size_t len;
	char *buf = slurp(name, &len), *p = memmem(buf, len, what, strlen(what));

	ck_assert_msg(p != NULL, "the cache file does not hold '%s'", what);
	p[0] = p[0] == 'x' ? 'y' : 'x';
	spill(name, buf, len);
	free(buf);
}

/* Written by another boot: refused, although magic and size match. */
START_TEST(stale_boot_id)
{
	char boot_id[64] = "";
	struct data got = { 0 };
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(boot_id, sizeof(boot_id), f));
	fclose(f);
	boot_id[strcspn(boot_id, "\n")] = 0;
	ck_assert_int_eq(boot_cache_store(dir, "fold", "foldcfg1", &D, sizeof(D)), 0);
	tamper("fold", boot_id);
	ck_assert_int_eq(boot_cache_load(dir, "fold", "foldcfg1", &got, sizeof(got)), -ENOENT);
	ck_assert_uint_eq(got.a, 0);
}
END_TEST

/* Written by another kernel release (a file copied from elsewhere, say): refused too. */
START_TEST(stale_release)
{
	struct utsname u;
	struct data got = { 0 };

	ck_assert_int_eq(uname(&u), 0);
	ck_assert_int_eq(boot_cache_store(dir, "fold", "foldcfg1", &D, sizeof(D)), 0);
	tamper("fold", u.release);
	ck_assert_int_eq(boot_cache_load(dir, "fold", "foldcfg1", &got, sizeof(got)), -ENOENT);
}
END_TEST

START_TEST(short_file_and_links)
{
	struct data got = { 0 };
	char target[256], link[256];
	size_t len;
	char *buf;

	ck_assert_int_eq(boot_cache_store(dir, "fold", "foldcfg1", &D, sizeof(D)), 0);
	buf = slurp("fold", &len);
	spill("short", buf, len - 1);
	ck_assert_int_eq(boot_cache_load(dir, "short", "foldcfg1", &got, sizeof(got)), -ENOENT);
	free(buf);
	/* a symbolic link is not followed, even to a valid cache */
	snprintf(target, sizeof(target), "%s/fold", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	ck_assert_int_eq(symlink(target, link), 0);
	ck_assert_int_lt(boot_cache_load(dir, "link", "foldcfg1", &got, sizeof(got)), 0);
	ck_assert_uint_eq(got.a, 0);
	/* nor written through */
	ck_assert_int_eq(boot_cache_store(dir, "link", "foldcfg1", &D, sizeof(D)), 0);
	{
		struct stat st;

		ck_assert_int_eq(lstat(link, &st), 0);
		ck_assert(S_ISREG(st.st_mode)); /* replaced by the rename, not followed */
	}
	/* a directory that does not exist */
	ck_assert_int_eq(boot_cache_store("/nonexistent/dir", "fold", "foldcfg1", &D, sizeof(D)),
			 -ENOENT);
	ck_assert_int_eq(boot_cache_load("/nonexistent/dir", "fold", "foldcfg1", &got, sizeof(got)),
			 -ENOENT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bootcache");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, other_magic_or_size);
	tcase_add_test(tc, stale_boot_id);
	tcase_add_test(tc, stale_release);
	tcase_add_test(tc, short_file_and_links);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
