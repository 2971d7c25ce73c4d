// SPDX-License-Identifier: BSD-2-Clause
/*
 * The per-boot caches' one format (src/loader/cache.c) in a temporary directory: what is
 * stored loads back; another kind, another size, another kernel release, boot id or build,
 * a damaged, short, long, world-writable or foreign file, a missing file or a symbolic link
 * give no data; a second store replaces the first and leaves no temporary file behind;
 * --no-cache reads and writes nothing; show says why a file is not used, clear removes
 * schedprof's files only. Kinds of a file per entry: names checked, a damaged entry
 * refused, the least recently used removed to stay within the bound, listed by show.
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
#include <time.h>
#include <unistd.h>

#include "../unit.h"
#include "loader/cache.h"

struct data {
	unsigned long long a, b;
	char name[24];
};

static char dir[64];

static void setup(void)
{
	unit_tmpdir_make(dir, sizeof(dir), "cache");
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
#define FOLD "fold.cache"

START_TEST(round_trip)
{
	struct data got;

	memset(&got, 0, sizeof(got));
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), -ENOENT);
	ck_assert_int_eq(cache_store(dir, CACHE_FOLD, &D, sizeof(D)), 0);
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), 0);
	ck_assert(!memcmp(&got, &D, sizeof(D)));
	/* another kind in the same directory stays apart */
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_PREEMPT, &got, sizeof(got)), -ENOENT);
	/* a second store replaces the first, and no temporary file is left */
	got.a = 2;
	ck_assert_int_eq(cache_store(dir, CACHE_FOLD, &got, sizeof(got)), 0);
	memset(&got, 0, sizeof(got));
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), 0);
	ck_assert_uint_eq(got.a, 2);
	ck_assert_uint_eq(entries(), 1);
}
END_TEST

/* Data of another size, or another kind's file under this kind's name: never read. */
START_TEST(other_kind_or_size)
{
	struct data got = { 0 };
	char big[sizeof(struct data) + 8];
	size_t len;
	char *buf;
	void *p;

	ck_assert_int_eq(cache_store(dir, CACHE_FOLD, &D, sizeof(D)), 0);
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got) - 8), -ENOENT);
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, big, sizeof(big)), -ENOENT);
	ck_assert_int_eq(cache_load(dir, CACHE_FOLD, sizeof(D) - 1, &p, &len), -ENOENT);
	ck_assert_uint_eq(got.a, 0); /* untouched */
	ck_assert_int_eq(cache_load(dir, CACHE_FOLD, sizeof(D), &p, &len), 0);
	ck_assert_uint_eq(len, sizeof(D));
	free(p);
	/* the fold file renamed to the preempt count's: its header names its kind */
	buf = slurp(FOLD, &len);
	spill(cache_file_name(CACHE_PREEMPT), buf, len);
	free(buf);
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_PREEMPT, &got, sizeof(got)), -ENOENT);
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

/* Written by another boot: refused, although kind and size match. */
START_TEST(stale_boot_id)
{
	char boot_id[64] = "";
	struct data got = { 0 };
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(boot_id, sizeof(boot_id), f));
	fclose(f);
	boot_id[strcspn(boot_id, "\n")] = 0;
	ck_assert_int_eq(cache_store(dir, CACHE_FOLD, &D, sizeof(D)), 0);
	tamper(FOLD, boot_id);
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), -ENOENT);
	ck_assert_uint_eq(got.a, 0);
}
END_TEST

/* Written by another kernel release (a file copied from elsewhere, say): refused too. */
START_TEST(stale_release)
{
	struct utsname u;
	struct data got = { 0 };

	ck_assert_int_eq(uname(&u), 0);
	ck_assert_int_eq(cache_store(dir, CACHE_FOLD, &D, sizeof(D)), 0);
	tamper(FOLD, u.release);
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), -ENOENT);
}
END_TEST

/* Flips bits of the stored file's byte at off (from the end when negative). */
static void flip(const char *name, long off, char bits)
{
	size_t len;
	char *buf = slurp(name, &len);

	buf[off < 0 ? (long)len + off : off] ^= bits;
	spill(name, buf, len);
	free(buf);
}

/* Written by another build of schedprof (its build-id in the header): refused. */
START_TEST(other_build)
{
	struct data got = { 0 };

	ck_assert_int_eq(cache_store(dir, CACHE_FOLD, &D, sizeof(D)), 0);
	/* the build-id: 40 hex digits after magic, version, kind, name, boot id, release */
	flip(FOLD, 16 + 4 + 4 + 16 + 40 + 65, 1);
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), -ENOENT);
}
END_TEST

/* One byte of the data changed: the hash tells; the file is not used. */
START_TEST(damaged_data)
{
	struct data got = { 0 };

	ck_assert_int_eq(cache_store(dir, CACHE_FOLD, &D, sizeof(D)), 0);
	flip(FOLD, -3, 0x20);
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), -ENOENT);
	ck_assert_uint_eq(got.a, 0);
	/* stored again: used again */
	ck_assert_int_eq(cache_store(dir, CACHE_FOLD, &D, sizeof(D)), 0);
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), 0);
}
END_TEST

START_TEST(short_long_open_and_links)
{
	struct data got = { 0 };
	char target[256], link[256], path[256];
	size_t len;
	char *buf;

	ck_assert_int_eq(cache_store(dir, CACHE_FOLD, &D, sizeof(D)), 0);
	buf = slurp(FOLD, &len);
	spill(FOLD, buf, len - 1);
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), -ENOENT);
	buf = realloc(buf, len + 1);
	ck_assert_ptr_nonnull(buf);
	buf[len] = 0;
	spill(FOLD, buf, len + 1);
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), -ENOENT);
	/* whole, but writable by others: not trusted */
	spill(FOLD, buf, len);
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, FOLD);
	ck_assert_int_eq(chmod(path, 0666), 0);
	memset(&got, 0, sizeof(got));
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), -ENOENT);
	/* another user's (not root's): not trusted either */
	ck_assert_int_eq(chmod(path, 0644), 0);
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(path, 65534, 65534), 0);
		ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), -ENOENT);
	}
	free(buf);
	/* a symbolic link is not followed, even to a valid cache */
	ck_assert_int_eq(cache_store(dir, CACHE_PREEMPT, &D, sizeof(D)), 0);
	snprintf(target, sizeof(target), "%s/%s", dir, cache_file_name(CACHE_PREEMPT));
	snprintf(link, sizeof(link), "%s/%s", dir, FOLD);
	ck_assert_int_eq(unlink(link), 0);
	ck_assert_int_eq(symlink(target, link), 0);
	ck_assert_int_lt(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), 0);
	ck_assert_uint_eq(got.a, 0);
	/* nor written through */
	ck_assert_int_eq(cache_store(dir, CACHE_FOLD, &D, sizeof(D)), 0);
	{
		struct stat st;

		ck_assert_int_eq(lstat(link, &st), 0);
		ck_assert(S_ISREG(st.st_mode)); /* replaced by the rename, not followed */
	}
	/* a directory that does not exist */
	ck_assert_int_eq(cache_store("/nonexistent/dir", CACHE_FOLD, &D, sizeof(D)), -ENOENT);
	ck_assert_int_eq(cache_load_fixed("/nonexistent/dir", CACHE_FOLD, &got, sizeof(got)),
			 -ENOENT);
}
END_TEST

/* The writer's only (kernel addresses) or anyone's (what the BTF says), as the kind says. */
START_TEST(modes_by_kind)
{
	char path[256];
	struct stat st;

	ck_assert_int_eq(cache_store(dir, CACHE_FOLD, &D, sizeof(D)), 0);
	ck_assert_int_eq(cache_store(dir, CACHE_ATTACH, &D, sizeof(D)), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, FOLD);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	snprintf(path, sizeof(path), "%s/%s", dir, cache_file_name(CACHE_ATTACH));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0644);
}
END_TEST

/* show: each kind, used or why not; clear: ours only. */
START_TEST(show_and_clear)
{
	char *out = NULL, path[256];
	size_t len = 0;
	unsigned int n;
	FILE *f;

	ck_assert_int_eq(cache_store(dir, CACHE_FOLD, &D, sizeof(D)), 0);
	ck_assert_int_eq(cache_store(dir, CACHE_ATTACH, &D, sizeof(D)), 0);
	tamper(cache_file_name(CACHE_ATTACH), "fold config");
	spill("notes.txt", "x", 1);
	spill("core.btf", "x", 1); /* an older build's */
	f = open_memstream(&out, &len);
	ck_assert_int_eq(cache_show(dir, f), 0);
	fclose(f);
	ck_assert_msg(strstr(out, "fold.cache") && strstr(out, " yes "), "%s", out);
	ck_assert_msg(strstr(out, "attach.cache") && strstr(out, "(damaged)"), "%s", out);
	ck_assert_msg(strstr(out, "preempt.cache") && strstr(out, "absent"), "%s", out);
	free(out);
	ck_assert_int_eq(cache_clear(dir, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(entries(), 1);
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	ck_assert_int_eq(access(path, F_OK), 0);
	ck_assert_int_eq(cache_clear("/nonexistent/dir", &n), 0);
	ck_assert_uint_eq(n, 0);
}
END_TEST

/* --no-cache: a valid file is not read, and nothing is written. */
START_TEST(disabled)
{
	struct data got = { 0 };

	ck_assert_int_eq(cache_store(dir, CACHE_FOLD, &D, sizeof(D)), 0);
	cache_disable();
	ck_assert(cache_disabled());
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), -ENOENT);
	ck_assert_int_eq(cache_store(dir, CACHE_ATTACH, &D, sizeof(D)), 0);
	ck_assert_uint_eq(entries(), 1);
}
END_TEST

/* The mtime of dir/name, set sec seconds in the past. */
static void age(const char *name, int sec)
{
	struct timespec ts[2];
	char path[256];

	ck_assert_int_eq(clock_gettime(CLOCK_REALTIME, &ts[0]), 0);
	ts[0].tv_sec -= sec;
	ts[1] = ts[0];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static bool present(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* A file per entry: stored, loaded, named only by [0-9a-z-], its damage refused. */
START_TEST(entries_round_trip)
{
	size_t size = 0;
	void *got = NULL;

	ck_assert_int_eq(cache_store_entry(dir, CACHE_CFI, "ab12-100", &D, sizeof(D), 1 << 20), 0);
	ck_assert(present("cfi-ab12-100.cache"));
	ck_assert_int_eq(cache_load_entry(dir, CACHE_CFI, "ab12-100", 1024, &got, &size), 0);
	ck_assert_uint_eq(size, sizeof(D));
	ck_assert_mem_eq(got, &D, sizeof(D));
	free(got);
	ck_assert_int_eq(cache_load_entry(dir, CACHE_CFI, "ab12-101", 1024, &got, &size), -ENOENT);
	/* too large for the reader */
	ck_assert_int_eq(cache_load_entry(dir, CACHE_CFI, "ab12-100", 8, &got, &size), -ENOENT);
	tamper("cfi-ab12-100.cache", "fold config");
	ck_assert_int_eq(cache_load_entry(dir, CACHE_CFI, "ab12-100", 1024, &got, &size), -ENOENT);
	/* a kind of one file has no entries */
	ck_assert_int_eq(cache_store_entry(dir, CACHE_FOLD, "ab", &D, sizeof(D), 1 << 20), -EINVAL);
	ck_assert_int_eq(cache_clear(dir, &(unsigned int){ 0 }), 0);
	ck_assert_uint_eq(entries(), 0);
}
END_TEST

START_TEST(entries_names)
{
	static const char *const bad[] = {
		"", "../fold", "AB", "a/b", "a.b", "a b",
		/* 97 characters */
		"0123456789012345678901234567890123456789012345678901234567890123456789"
		"012345678901234567890123456",
	};
	size_t size;
	void *got;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(cache_store_entry(dir, CACHE_CFI, bad[i], &D, sizeof(D), 1 << 20),
				 -EINVAL);
		ck_assert_int_eq(cache_load_entry(dir, CACHE_CFI, bad[i], 1024, &got, &size),
				 -EINVAL);
	}
	ck_assert_uint_eq(entries(), 0);
}
END_TEST

/* Within the bound: the least recently used go first; a load marks its file used. */
START_TEST(entries_evicted)
{
	uint64_t one = sizeof(D) + 208; /* the header and D */
	size_t size;
	void *got;

	ck_assert_int_eq(cache_store_entry(dir, CACHE_CFI, "a", &D, sizeof(D), 3 * one), 0);
	ck_assert_int_eq(cache_store_entry(dir, CACHE_CFI, "b", &D, sizeof(D), 3 * one), 0);
	ck_assert_int_eq(cache_store_entry(dir, CACHE_CFI, "c", &D, sizeof(D), 3 * one), 0);
	age("cfi-a.cache", 30);
	age("cfi-b.cache", 20);
	age("cfi-c.cache", 10);
	/* a is used now: b is the oldest */
	ck_assert_int_eq(cache_load_entry(dir, CACHE_CFI, "a", 1024, &got, &size), 0);
	free(got);
	spill("fold.cache", "x", 1); /* another kind's file counts for nothing */
	ck_assert_int_eq(cache_store_entry(dir, CACHE_CFI, "d", &D, sizeof(D), 3 * one), 0);
	ck_assert(present("cfi-a.cache") && !present("cfi-b.cache"));
	ck_assert(present("cfi-c.cache") && present("cfi-d.cache") && present("fold.cache"));
	/* replacing an entry removes nothing else */
	ck_assert_int_eq(cache_store_entry(dir, CACHE_CFI, "d", &D, sizeof(D), 3 * one), 0);
	ck_assert_uint_eq(entries(), 4);
	/* two slots' worth: two go */
	ck_assert_int_eq(cache_store_entry(dir, CACHE_CFI, "e", &D, sizeof(D), 2 * one), 0);
	ck_assert(present("cfi-e.cache"));
	ck_assert_uint_eq(entries(), 3);
	/* larger than the bound alone */
	ck_assert_int_eq(cache_store_entry(dir, CACHE_CFI, "f", &D, sizeof(D), one - 1), -EFBIG);
	ck_assert(!present("cfi-f.cache"));
}
END_TEST

START_TEST(entries_shown)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_int_eq(cache_store_entry(dir, CACHE_CFI, "a", &D, sizeof(D), 1 << 20), 0);
	ck_assert_int_eq(cache_store_entry(dir, CACHE_CFI, "b", &D, sizeof(D), 1 << 20), 0);
	tamper("cfi-b.cache", "fold config");
	f = open_memstream(&out, &len);
	ck_assert_int_eq(cache_show(dir, f), 0);
	fclose(f);
	ck_assert_msg(strstr(out, "cfi-*.cache") && strstr(out, " 1/2 ") &&
			      strstr(out, "(2 files)"),
		      "%s", out);
	free(out);
}
END_TEST

/*
 * Kernel addresses are used where kallsyms shows them: 6.1's kallsyms starts with per-CPU
 * symbols that are absolute at 0 for every reader; a restricted one is all zeros.
 */
START_TEST(addresses_by_kallsyms)
{
	struct data got = { 0 };

	ck_assert_int_eq(cache_store(dir, CACHE_FOLD, &D, sizeof(D)), 0);
	setenv("SCHEDPROF_TEST_KALLSYMS", _i ? FIX("kallsyms_restricted.txt") : FIX("kallsyms.txt"),
	       1);
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got)), _i ? -ENOENT : 0);
	/* a kind without addresses is read either way */
	ck_assert_int_eq(cache_store(dir, CACHE_ATTACH, &D, sizeof(D)), 0);
	ck_assert_int_eq(cache_load_fixed(dir, CACHE_ATTACH, &got, sizeof(got)), 0);
	unsetenv("SCHEDPROF_TEST_KALLSYMS");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, other_kind_or_size);
	tcase_add_test(tc, stale_boot_id);
	tcase_add_test(tc, stale_release);
	tcase_add_test(tc, other_build);
	tcase_add_test(tc, damaged_data);
	tcase_add_test(tc, short_long_open_and_links);
	tcase_add_test(tc, modes_by_kind);
	tcase_add_test(tc, show_and_clear);
	tcase_add_test(tc, disabled);
	tcase_add_test(tc, entries_round_trip);
	tcase_add_test(tc, entries_names);
	tcase_add_test(tc, entries_evicted);
	tcase_add_test(tc, entries_shown);
	/* in a process each: what kallsyms shows is read once per process */
	tcase_add_loop_test(tc, addresses_by_kallsyms, 0, 2);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
