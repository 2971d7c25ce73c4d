// SPDX-License-Identifier: BSD-2-Clause
/*
 * /proc/PID/maps parsing (src/symbols/procmaps.c): every field of the fixture (paths with
 * spaces, " (deleted)", anonymous mappings, pseudo paths), find at boundaries and in gaps,
 * malformed lines, sorting, and the maps of live and reaped processes; the executable mappings
 * alone, by PROCMAP_QUERY and by the text, alike.
 *
 * test_maps_fixture and test_maps_malformed are test_elfsyms.c's, copied unchanged (that file
 * is another helper's: the lead drops them there); test_maps_live is its first half, with a
 * reaped child of our own instead of a symtarget.
 */
#include <check.h>
#include <stdbool.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit.h"
#include "symbols/procmaps.h"

START_TEST(test_maps_fixture)
{
	struct proc_map *maps;
	const struct proc_map *m;
	size_t n, i;

	ck_assert_int_eq(proc_maps__parse_file(FIXTURES_DIR "/maps.txt", &maps, &n), 0);
	ck_assert_uint_eq(n, 12);

	ck_assert_uint_eq(maps[1].start, 0x55d0c8a02000ULL);
	ck_assert_uint_eq(maps[1].end, 0x55d0c8b40000ULL);
	ck_assert_uint_eq(maps[1].pgoff, 0x2000);
	ck_assert_uint_eq(maps[1].dev_major, 0xfd);
	ck_assert_uint_eq(maps[1].dev_minor, 1);
	ck_assert_uint_eq(maps[1].inode, 1835043);
	ck_assert_str_eq(maps[1].perms, "r-xp");
	ck_assert_str_eq(maps[1].path, "/usr/bin/cc1");

	ck_assert_str_eq(maps[3].path, "[heap]");
	ck_assert_str_eq(maps[4].path, ""); /* anonymous, with the kernel's trailing space */
	ck_assert_str_eq(maps[4].perms, "rw-p");
	ck_assert_uint_eq(maps[4].inode, 0);

	ck_assert_str_eq(maps[5].path, "/tmp/my build dir/lib two.so");
	ck_assert_uint_eq(maps[5].dev_major, 0x103);
	ck_assert_uint_eq(maps[5].dev_minor, 2);
	ck_assert_uint_eq(maps[5].pgoff, 0x1000);
	ck_assert_str_eq(maps[6].path, "/tmp/ccXyZ.o (deleted)");
	ck_assert_uint_eq(maps[6].dev_minor, 0x1b);
	ck_assert_str_eq(maps[9].path, "[stack]");
	ck_assert_str_eq(maps[10].path, "[vdso]");
	ck_assert_str_eq(maps[11].path, "[vsyscall]");
	ck_assert_uint_eq(maps[11].start, 0xffffffffff600000ULL);
	ck_assert_str_eq(maps[11].perms, "--xp");

	/* find: boundaries, gaps, outside */
	for (i = 0; i < n; i++) {
		ck_assert_ptr_eq(proc_maps__find(maps, n, maps[i].start), &maps[i]);
		ck_assert_ptr_eq(proc_maps__find(maps, n, maps[i].end - 1), &maps[i]);
	}
	ck_assert_ptr_eq(proc_maps__find(maps, n, 0x55d0c8a02000ULL), &maps[1]); /* adjacent */
	ck_assert_ptr_null(proc_maps__find(maps, n, 0x55d0c8b80000ULL));	   /* end of [2] */
	ck_assert_ptr_null(proc_maps__find(maps, n, 0x7f2a14001000ULL));	   /* gap */
	ck_assert_ptr_null(proc_maps__find(maps, n, 0));
	ck_assert_ptr_null(proc_maps__find(maps, n, 0xffffffffff601000ULL));
	ck_assert_ptr_null(proc_maps__find(maps, 0, 0x55d0c8a02000ULL));

	m = proc_maps__find(maps, n, 0x7f2a14828000ULL + 0x1234);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->pgoff + 0x7f2a14828000ULL + 0x1234 - m->start, 0x28000 + 0x1234);
	proc_maps__free(maps, n);
	proc_maps__free(NULL, 0);
}
END_TEST

static int parse_string(const char *text, struct proc_map **maps, size_t *n)
{
	char path[] = "/tmp/sp_maps_XXXXXX";
	int fd = mkstemp(path), err;
	FILE *f;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	err = proc_maps__parse_file(path, maps, n);
	unlink(path);
	return err;
}

START_TEST(test_maps_malformed)
{
	static const char *const bad[] = {
		"garbage\n",
		"1000-2000 r-xp 00000000 08:01\n",		/* no inode */
		"1000 r-xp 00000000 08:01 5 /bin/x\n",		/* no end */
		"2000-1000 r-xp 00000000 08:01 5 /bin/x\n",	/* end < start */
		"1000-2000 r-x 00000000 08:01 5 /bin/x\n",	/* short perms */
		"1000-2000 r-xp 0000zz00 08:01 5 /bin/x\n",	/* bad hex */
		"1000-2000 r-xp 00000000 0801 5 /bin/x\n",	/* dev without ':' */
		"1000-2000 r-xp 00000000 08:01 5x /bin/x\n",	/* junk after inode */
		"10000000000000000-20000000000000000 r-xp 0 0:0 0\n", /* overflow */
	};
	struct proc_map *maps = NULL;
	size_t n = 0, i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse_string(bad[i], &maps, &n) == -EINVAL, "accepted: %s", bad[i]);

	/* unsorted input comes back sorted; blank lines and a missing final newline are fine */
	ck_assert_int_eq(parse_string("3000-4000 r-xp 0 08:01 7 /b\n\n1000-2000 r-xp 10 08:01 5 /a",
				      &maps, &n),
			 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(maps[0].path, "/a");
	ck_assert_uint_eq(maps[0].pgoff, 0x10);
	ck_assert_str_eq(maps[1].path, "/b");
	ck_assert_ptr_eq(proc_maps__find(maps, n, 0x3fff), &maps[1]);
	proc_maps__free(maps, n);

	ck_assert_int_eq(parse_string("", &maps, &n), 0);
	ck_assert_uint_eq(n, 0);
	proc_maps__free(maps, n);

	ck_assert_int_eq(proc_maps__parse_file("/nonexistent/maps", &maps, &n), -ENOENT);
}
END_TEST

START_TEST(test_maps_live)
{
	struct proc_map *maps;
	const struct proc_map *m;
	size_t n;
	pid_t pid;
	int status;

	/* ourselves: this function's code is in an executable file mapping */
	ck_assert_int_eq(proc_maps__read(getpid(), &maps, &n), 0);
	ck_assert_uint_gt(n, 3);
	m = proc_maps__find(maps, n, (uint64_t)(uintptr_t)&parse_string);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(m->perms[2], 'x');
	ck_assert_int_eq(m->path[0], '/');
	ck_assert_uint_ne(m->inode, 0);
	/* sorted, as the file promises */
	for (size_t i = 1; i < n; i++)
		ck_assert_uint_ge(maps[i].start, maps[i - 1].end);
	proc_maps__free(maps, n);

	ck_assert_int_eq(proc_maps__read(0, &maps, &n), -EINVAL);
	ck_assert_int_eq(proc_maps__read(-5, &maps, &n), -EINVAL);

	/* a reaped process is gone */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		pause();
		_exit(0);
	}
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(proc_maps__read(pid, &maps, &n), -ESRCH);
}
END_TEST

/* ret[] (n) is exactly the executable mappings of all[] (nall), field by field. */
static void check_exec_of(const struct proc_map *all, size_t nall, const struct proc_map *ret,
			  size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < nall; i++) {
		if (all[i].perms[2] != 'x' || !strcmp(all[i].path, "[vsyscall]"))
			continue;
		ck_assert_uint_lt(k, n);
		ck_assert_uint_eq(ret[k].start, all[i].start);
		ck_assert_uint_eq(ret[k].end, all[i].end);
		ck_assert_uint_eq(ret[k].pgoff, all[i].pgoff);
		ck_assert_uint_eq(ret[k].inode, all[i].inode);
		ck_assert_uint_eq(ret[k].dev_major, all[i].dev_major);
		ck_assert_uint_eq(ret[k].dev_minor, all[i].dev_minor);
		ck_assert_str_eq(ret[k].perms, all[i].perms);
		ck_assert_str_eq(ret[k].path, all[i].path);
		k++;
	}
	ck_assert_uint_eq(k, n);
}

/* Whether this kernel has PROCMAP_QUERY (6.11). */
static bool kernel_has_query(void)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;

	ck_assert_int_eq(uname(&u), 0);
	ck_assert_int_ge(sscanf(u.release, "%u.%u", &major, &minor), 2);
	return major > 6 || (major == 6 && minor >= 11);
}

START_TEST(test_maps_exec)
{
	struct proc_map *all, *ex, *q;
	size_t nall, nex, nq;
	void *anon;
	pid_t pid;
	int status, err;

	/* an anonymous executable mapping (a JIT's) is one, without a path */
	anon = mmap(NULL, 3 * 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(anon, MAP_FAILED);
	ck_assert_int_eq(proc_maps__read(getpid(), &all, &nall), 0);
	ck_assert_int_eq(proc_maps__read_exec(getpid(), &ex, &nex), 0);
	ck_assert_uint_gt(nex, 2);
	ck_assert_uint_lt(nex, nall);
	check_exec_of(all, nall, ex, nex);
	proc_maps__free(ex, nex);
	/* by the text, as on a kernel without the ioctl */
	ck_assert_int_eq(setenv("SCHEDPROF_TEST_MAPS_TEXT", "1", 1), 0);
	ck_assert_int_eq(proc_maps__read_exec(getpid(), &ex, &nex), 0);
	ck_assert_int_eq(unsetenv("SCHEDPROF_TEST_MAPS_TEXT"), 0);
	check_exec_of(all, nall, ex, nex);
	ck_assert_ptr_nonnull(proc_maps__find(ex, nex, (uint64_t)(uintptr_t)anon));
	ck_assert_str_eq(proc_maps__find(ex, nex, (uint64_t)(uintptr_t)anon)->path, "");
	ck_assert_ptr_nonnull(proc_maps__find(ex, nex, (uint64_t)(uintptr_t)&kernel_has_query));

	/* the ioctl alone: on a kernel that has it, the same answer */
	err = proc_maps__query_exec(getpid(), &q, &nq);
	if (kernel_has_query()) {
		ck_assert_int_eq(err, 0);
		check_exec_of(all, nall, q, nq);
		proc_maps__free(q, nq);
	} else {
		ck_assert_int_eq(err, -ENOTTY);
	}
	proc_maps__free(all, nall);
	proc_maps__free(ex, nex);
	munmap(anon, 3 * 4096);

	ck_assert_int_eq(proc_maps__read_exec(0, &ex, &nex), -EINVAL);
	ck_assert_int_eq(proc_maps__query_exec(-1, &ex, &nex), -EINVAL);

	/* a zombie has no mappings: gone for the ioctl, none for the text */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid)
		_exit(0);
	ck_assert_int_eq(waitid(P_PID, (id_t)pid, NULL, WEXITED | WNOWAIT), 0);
	err = proc_maps__read_exec(pid, &ex, &nex);
	if (!err) {
		ck_assert_uint_eq(nex, 0);
		proc_maps__free(ex, nex);
	} else {
		ck_assert_int_eq(err, -ESRCH);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	/* and a reaped one is gone */
	ck_assert_int_eq(proc_maps__read_exec(pid, &ex, &nex), -ESRCH);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("procmaps");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_maps_fixture);
	tcase_add_test(tc, test_maps_malformed);
	tcase_add_test(tc, test_maps_live);
	tcase_add_test(tc, test_maps_exec);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
