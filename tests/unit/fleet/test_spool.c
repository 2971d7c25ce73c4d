// SPDX-License-Identifier: BSD-2-Clause
/*
 * src/fleet/spool.c at its edges: whose directory it takes (the agent's user's, writable by no
 * one else, not through a link), one opener at a time, the directory made with its parents (0700), temporary
 * files never written through a link, a seq file that is no sequence number (or the end of
 * the range) refused rather than wrapped, empty, non-gzip and linked batches unreadable, and
 * the carried losses rewritten in place.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../unit.h"
#include "fleet/spool.h"

static char base[64];

static void setup(void)
{
	snprintf(base, sizeof(base), "/tmp/test_spool_edges.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	ck_assert_int_eq(system(cmd), 0);
}

static void put_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

START_TEST(trust)
{
	char dir[128], why[512], link[192];
	struct spool *s;

	snprintf(dir, sizeof(dir), "%s/open", base);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(chmod(dir, 01777), 0);
	ck_assert_int_eq(spool_open(dir, 1 << 20, &s, why, sizeof(why)), -EPERM);
	ck_assert_ptr_null(s);
	ck_assert_ptr_nonnull(strstr(why, "writable by its group or others (mode 1777)"));
	ck_assert_int_eq(chmod(dir, 0720), 0);
	ck_assert_int_eq(spool_open(dir, 1 << 20, &s, why, sizeof(why)), -EPERM);
	ck_assert_int_eq(chmod(dir, 0700), 0);
	ck_assert_int_eq(spool_open(dir, 1 << 20, &s, why, sizeof(why)), 0);
	spool_close(s);
	/* a link to a directory that would pass: refused all the same */
	snprintf(link, sizeof(link), "%s/link", base);
	ck_assert_int_eq(symlink(dir, link), 0);
	ck_assert_int_eq(spool_open(link, 1 << 20, &s, why, sizeof(why)), -ELOOP);
	ck_assert_ptr_nonnull(strstr(why, "symbolic link"));
	if (geteuid() == 0) { /* another user's */
		ck_assert_int_eq(chown(dir, 65534, 65534), 0);
		ck_assert_int_eq(spool_open(dir, 1 << 20, &s, why, sizeof(why)), -EPERM);
		ck_assert_ptr_nonnull(strstr(why, "belongs to uid 65534, not to this agent's user"));
	}
}
END_TEST

START_TEST(lock_and_parents)
{
	char dir[128], why[512], want[128];
	struct spool *s, *s2;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/a/b/spool", base);
	ck_assert_int_eq(spool_open(dir, 1 << 20, &s, why, sizeof(why)), 0);
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	snprintf(want, sizeof(want), "%s/a", base);
	ck_assert_int_eq(stat(want, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	/* a second opener, even in this process (flock: per open file) */
	ck_assert_int_eq(spool_open(dir, 1 << 20, &s2, why, sizeof(why)), -EBUSY);
	snprintf(want, sizeof(want), "another agent (pid %d) uses it", (int)getpid());
	ck_assert_ptr_nonnull(strstr(why, want));
	spool_close(s);
	ck_assert_int_eq(spool_open(dir, 1 << 20, &s2, why, sizeof(why)), 0);
	spool_close(s2);
}
END_TEST

START_TEST(seq_file)
{
	static const char *const bad[] = { "18446744073709551615\n", "9223372036854775808\n",
					   "garbage\n", "\n", "", "12 \n", "-1\n", "0\n", "7\n\n" };
	char dir[128], why[512];
	struct spool *s;
	uint64_t seq;

	snprintf(dir, sizeof(dir), "%s/seq", base);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put_file(dir, "seq", bad[i]);
		ck_assert_msg(spool_open(dir, 1 << 20, &s, why, sizeof(why)) == -EBADMSG,
			      "seq '%s' taken", bad[i]);
		ck_assert_ptr_nonnull(strstr(why, "its seq file holds '"));
	}
	/* the last number there is: used, then no more (never 0) */
	put_file(dir, "seq", "9223372036854775807\n");
	ck_assert_int_eq(spool_open(dir, 1 << 20, &s, why, sizeof(why)), 0);
	ck_assert_int_eq(spool_next_seq(s, &seq), 0);
	ck_assert_uint_eq(seq, SPOOL_SEQ_MAX);
	ck_assert_int_eq(spool_next_seq(s, &seq), -EOVERFLOW);
	spool_close(s);
}
END_TEST

START_TEST(no_links)
{
	char dir[128], why[512], victim[128], link[192], buf[64];
	struct spool *s;
	uint64_t seq, n, first, last;

	snprintf(dir, sizeof(dir), "%s/links", base);
	snprintf(victim, sizeof(victim), "%s/victim", base);
	put_file(base, "victim", "secret\n");
	ck_assert_int_eq(spool_open(dir, 1 << 20, &s, why, sizeof(why)), 0);
	/* planted after the open (which removes leftovers) */
	snprintf(link, sizeof(link), "%s/seq.tmp", dir);
	ck_assert_int_eq(symlink(victim, link), 0);
	snprintf(link, sizeof(link), "%s/00000000000000000001.batch.tmp", dir);
	ck_assert_int_eq(symlink(victim, link), 0);
	ck_assert_int_eq(spool_next_seq(s, &seq), 0);
	ck_assert_uint_eq(seq, 1);
	ck_assert_int_eq(spool_put(s, seq, "x", 1, &n, &first, &last), 0);
	read_file(victim, buf, sizeof(buf));
	ck_assert_str_eq(buf, "secret\n");
	snprintf(link, sizeof(link), "%s/seq", dir);
	read_file(link, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2\n");
	spool_close(s);
}
END_TEST

START_TEST(unreadable)
{
	char dir[128], why[512], victim[128], link[192], *text;
	struct spool *s;
	uint64_t seq;
	size_t len;

	snprintf(dir, sizeof(dir), "%s/bad", base);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	put_file(dir, "00000000000000000003.batch", "");
	put_file(dir, "00000000000000000004.batch", "not gzip\n");
	snprintf(victim, sizeof(victim), "%s/victim", base);
	put_file(base, "victim", "secret\n");
	snprintf(link, sizeof(link), "%s/00000000000000000005.batch", dir);
	ck_assert_int_eq(symlink(victim, link), 0);
	ck_assert_int_eq(spool_open(dir, 1 << 20, &s, why, sizeof(why)), 0);
	ck_assert_int_eq(spool_take(s, &seq, &text, &len), -ENODATA);
	ck_assert_uint_eq(seq, 3);
	ck_assert_int_eq(spool_take(s, &seq, &text, &len), -EBADMSG);
	ck_assert_uint_eq(seq, 4);
	ck_assert_int_eq(spool_take(s, &seq, &text, &len), -EBADMSG); /* a link: not read */
	ck_assert_uint_eq(seq, 5);
	ck_assert_int_eq(spool_take(s, &seq, &text, &len), -ENOENT);
	ck_assert_int_eq(access(victim, F_OK), 0);
	spool_close(s);
}
END_TEST

START_TEST(carry_in_place)
{
	char dir[128], why[512], path[192];
	struct spool *s;
	struct stat st, st2;
	uint64_t d, u;

	snprintf(dir, sizeof(dir), "%s/carry", base);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	put_file(dir, "carry", "5 1\n"); /* as earlier versions wrote it */
	ck_assert_int_eq(spool_open(dir, 1 << 20, &s, why, sizeof(why)), 0);
	spool_carry_load(s, &d, &u);
	ck_assert_uint_eq(d, 5);
	ck_assert_uint_eq(u, 1);
	snprintf(path, sizeof(path), "%s/carry", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(spool_carry_save(s, 123456789012ULL, 7), 0);
	ck_assert_int_eq(stat(path, &st2), 0);
	ck_assert_uint_eq(st.st_ino, st2.st_ino); /* the same file, no new one */
	ck_assert_int_eq(st.st_size, st2.st_size);
	spool_close(s);
	ck_assert_int_eq(spool_open(dir, 1 << 20, &s, why, sizeof(why)), 0);
	spool_carry_load(s, &d, &u);
	ck_assert_uint_eq(d, 123456789012ULL);
	ck_assert_uint_eq(u, 7);
	spool_close(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spool");
	TCase *tc = tcase_create("edges");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, trust);
	tcase_add_test(tc, lock_and_parents);
	tcase_add_test(tc, seq_file);
	tcase_add_test(tc, no_links);
	tcase_add_test(tc, unreadable);
	tcase_add_test(tc, carry_in_place);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
