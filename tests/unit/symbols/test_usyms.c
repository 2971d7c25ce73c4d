// SPDX-License-Identifier: BSD-2-Clause
/*
 * usyms (user frames of processes that have exited: raw IPs through snapshots, build-id
 * frames, zero-padded short build-ids, the vdso, deleted files), on the
 * symtarget ELF files that tests/meson.build builds (PIE, non-PIE, md5 build-id).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbols/elfsyms.h"
#include "symbols/procmaps.h"
#include "symbols/usyms.h"

#define NFUNCS 3
static const char *const func_names[NFUNCS] = { "sp_target_alpha", "sp_target_beta",
						 "sp_target_big" };
static const char *const targets[] = { SYMTARGET_PIE, SYMTARGET_NOPIE };

/* A running symtarget: it printed its functions' addresses and waits for stdin's EOF. */
struct child {
	pid_t pid;
	int in_fd;
	uint64_t addr[NFUNCS];
};

static void child_start(const char *path, struct child *c)
{
	int in[2], out[2];
	char line[256];
	FILE *f;
	int got = 0;

	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(out), 0);
	c->pid = fork();
	ck_assert_int_ge(c->pid, 0);
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	f = fdopen(out[0], "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) && strcmp(line, "ready\n")) {
		char name[64];
		unsigned long long a;

		if (sscanf(line, "%63s %llx", name, &a) != 2)
			continue;
		for (int i = 0; i < NFUNCS; i++) {
			if (!strcmp(name, func_names[i])) {
				c->addr[i] = a;
				got++;
			}
		}
	}
	fclose(f);
	ck_assert_int_eq(got, NFUNCS);
}

static void child_finish(struct child *c)
{
	int status;

	close(c->in_fd);
	ck_assert_int_eq(waitpid(c->pid, &status, 0), c->pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static const char *name_at(struct usyms *u, int pid, uint64_t image, uint64_t ip)
{
	struct usym s;

	return usyms__resolve_ip(u, pid, image, ip, &s) ? NULL : s.name;
}

static bool same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* ---- raw IPs, named after the process exited ---- */

START_TEST(test_resolve_ip_after_exit)
{
	const char *path = targets[_i];
	struct usyms *u;
	struct child c;
	struct usym s;

	u = usyms__new(&(struct usyms_opts){ .debug_dir = "" });
	ck_assert_ptr_nonnull(u);
	child_start(path, &c);
	ck_assert_int_eq(usyms__add_pid(u, c.pid, 5), 0);
	ck_assert_int_eq(usyms__add_pid(u, c.pid, 5), 0); /* a newer snapshot of the same image */
	ck_assert_uint_eq(usyms__nr_images(u), 1);
	child_finish(&c);
	ck_assert_int_eq(usyms__add_pid(u, c.pid, 6), -ESRCH);
	ck_assert_uint_eq(usyms__nr_images(u), 1);

	for (int i = 0; i < NFUNCS; i++) {
		uint64_t a = c.addr[i], end = a;

		ck_assert_int_eq(usyms__resolve_ip(u, c.pid, 5, a, &s), 0);
		ck_assert_str_eq(s.name, func_names[i]);
		ck_assert_str_eq(s.object, path);
		ck_assert_uint_eq(s.sym_off, 0);
		/* the last byte is still the function, the next one is not */
		while (same(name_at(u, c.pid, 5, end + 1), func_names[i]) && end - a < 65536)
			end++;
		ck_assert_uint_gt(end, a);
		ck_assert_int_eq(usyms__resolve_ip(u, c.pid, 5, end, &s), 0);
		ck_assert_uint_eq(s.sym_off, end - a);
		ck_assert(!same(name_at(u, c.pid, 5, end + 1), func_names[i]));
		ck_assert(!same(name_at(u, c.pid, 5, a - 1), func_names[i]));
		/* another image of the same pid was never seen */
		ck_assert_int_eq(usyms__resolve_ip(u, c.pid, 6, a, &s), -ESRCH);
		ck_assert_int_eq(usyms__resolve_ip(u, c.pid + 1, 5, a, &s), -ESRCH);
	}
	/* nothing mapped there (page zero), and past the end of the address space */
	ck_assert_int_eq(usyms__resolve_ip(u, c.pid, 5, 0x10, &s), -ENOENT);
	ck_assert_int_eq(usyms__resolve_ip(u, c.pid, 5, UINT64_MAX, &s), -ENOENT);
	usyms__free(u);
	usyms__free(NULL);
}
END_TEST

/* The pages of pid's executable mappings (its mm->exec_vm), as the kernel counts them. */
static uint64_t exec_pages(int pid)
{
	struct proc_map *maps;
	uint64_t pages = 0;
	size_t n;

	ck_assert_int_eq(proc_maps__read_exec(pid, &maps, &n), 0);
	for (size_t i = 0; i < n; i++)
		pages += (maps[i].end - maps[i].start) / (uint64_t)getpagesize();
	proc_maps__free(maps, n);
	return pages;
}

/*
 * A process forked without exec takes the snapshot of the one it was forked from, if its code
 * is as large; that one is read first when there is none.
 */
START_TEST(test_add_pid_as_forked)
{
	const int kid = INT_MAX, kid2 = INT_MAX - 1, kid3 = INT_MAX - 2;
	struct usyms *u;
	struct child c;
	struct usym s;
	uint64_t pages;

	u = usyms__new(&(struct usyms_opts){ .debug_dir = "" });
	ck_assert_ptr_nonnull(u);
	child_start(SYMTARGET_PIE, &c);
	pages = exec_pages(c.pid);
	ck_assert_int_eq(usyms__add_pid(u, c.pid, 5), 0);
	ck_assert_int_eq(usyms__add_pid_as(u, kid, 9, c.pid, 5, pages), 0);
	ck_assert_uint_eq(usyms__nr_images(u), 2);
	/* code of another size: mapped or unmapped since the fork, the snapshot is not its */
	ck_assert_int_eq(usyms__add_pid_as(u, kid2, 9, c.pid, 5, pages + 1), -ENOENT);
	ck_assert_int_eq(usyms__add_pid_as(u, kid2, 9, c.pid, 5, pages + 1), -ENOENT);
	ck_assert_uint_eq(usyms__nr_images(u), 2);
	/* no snapshot yet of the image forked from: it is read */
	ck_assert_int_eq(usyms__add_pid_as(u, kid3, 9, c.pid, 7, pages), 0);
	ck_assert_uint_eq(usyms__nr_images(u), 4);
	child_finish(&c);
	for (int i = 0; i < NFUNCS; i++) {
		ck_assert_int_eq(usyms__resolve_ip(u, kid, 9, c.addr[i], &s), 0);
		ck_assert_str_eq(s.name, func_names[i]);
		ck_assert_str_eq(s.object, SYMTARGET_PIE);
		ck_assert_int_eq(usyms__resolve_ip(u, kid3, 9, c.addr[i], &s), 0);
		ck_assert_str_eq(s.name, func_names[i]);
		ck_assert_int_eq(usyms__resolve_ip(u, kid2, 9, c.addr[i], &s), -ESRCH);
	}
	/* the process forked from is gone: nothing read, nothing copied */
	ck_assert_int_eq(usyms__add_pid_as(u, kid2, 9, c.pid, 8, pages), -ENOENT);
	usyms__free(u);
}
END_TEST

/*
 * A look at an image whose process is exiting: its mm is gone while /proc/PID still exists
 * (a zombie here; at the announcement's time, a process inside exit()), so its maps read
 * empty. That is no snapshot: the one taken while it lived keeps naming its raw IPs.
 */
START_TEST(test_snapshot_of_exiting_process)
{
	const char *path = targets[0];
	struct usyms *u;
	struct child c;
	siginfo_t info;

	u = usyms__new(&(struct usyms_opts){ .debug_dir = "" });
	ck_assert_ptr_nonnull(u);
	child_start(path, &c);
	ck_assert_int_eq(usyms__add_pid(u, c.pid, 5), 0);
	close(c.in_fd);
	/* exited, not reaped: /proc/PID stays, its maps are empty */
	ck_assert_int_eq(waitid(P_PID, (id_t)c.pid, &info, WEXITED | WNOWAIT), 0);
	ck_assert_int_eq(usyms__add_pid(u, c.pid, 5), -ESRCH);
	ck_assert_int_eq(usyms__add_pid(u, c.pid, 7), -ESRCH); /* nor a first one */
	ck_assert_uint_eq(usyms__nr_images(u), 1);
	for (int i = 0; i < NFUNCS; i++)
		ck_assert_str_eq(name_at(u, c.pid, 5, c.addr[i]), func_names[i]);
	ck_assert_int_eq(waitpid(c.pid, NULL, 0), c.pid);
	usyms__free(u);
}
END_TEST

/*
 * usyms__trim (the agent's, between intervals): an exited process's image stays while raw IPs
 * need it, and goes one trim after the first that found the process gone and none needed it.
 */
START_TEST(test_trim_images)
{
	const char *path = targets[0];
	struct usyms *u;
	struct child c, live;
	struct usym s;

	u = usyms__new(&(struct usyms_opts){ .debug_dir = "" });
	ck_assert_ptr_nonnull(u);
	child_start(path, &c);
	/* the second child must not keep the first one's stdin open */
	ck_assert_int_eq(fcntl(c.in_fd, F_SETFD, FD_CLOEXEC), 0);
	child_start(path, &live);
	ck_assert_int_eq(usyms__add_pid(u, c.pid, 5), 0);
	ck_assert_int_eq(usyms__add_pid(u, live.pid, 1), 0);
	usyms__trim(u); /* alive: stays */
	usyms__trim(u);
	ck_assert_str_eq(name_at(u, c.pid, 5, c.addr[0]), func_names[0]);
	child_finish(&c);
	usyms__trim(u); /* finds it gone */
	ck_assert_str_eq(name_at(u, c.pid, 5, c.addr[1]), func_names[1]);
	usyms__trim(u); /* gone at the last trim, used since: stays */
	ck_assert_str_eq(name_at(u, c.pid, 5, c.addr[2]), func_names[2]);
	usyms__trim(u); /* the same */
	usyms__trim(u); /* gone and not used since the last trim: goes */
	ck_assert_int_eq(usyms__resolve_ip(u, c.pid, 5, c.addr[0], &s), -ESRCH);
	/* the living process's image is never trimmed */
	for (int i = 0; i < 3; i++)
		usyms__trim(u);
	ck_assert_str_eq(name_at(u, live.pid, 1, live.addr[2]), func_names[2]);
	child_finish(&live);
	usyms__free(u);
}
END_TEST

/* ---- build-id frames ---- */

/* The file offset of each function, from the child's mappings. */
static void file_offsets(const struct child *c, uint64_t *offs)
{
	struct proc_map *maps;
	size_t n;

	ck_assert_int_eq(proc_maps__read(c->pid, &maps, &n), 0);
	for (int i = 0; i < NFUNCS; i++) {
		const struct proc_map *m = proc_maps__find(maps, n, c->addr[i]);

		ck_assert_ptr_nonnull(m);
		offs[i] = m->pgoff + c->addr[i] - m->start;
	}
	proc_maps__free(maps, n);
}

START_TEST(test_resolve_build_id)
{
	uint8_t id[ELF_BUILD_ID_MAX], md5[20] = { 0 };
	uint64_t offs[NFUNCS], md5_offs[NFUNCS];
	size_t len, md5_len;
	struct usyms *u;
	struct child c;
	struct usym s;

	ck_assert_int_eq(elf_read_build_id(SYMTARGET_PIE, id, sizeof(id), &len), 0);
	ck_assert_uint_eq(len, 20);
	ck_assert_int_eq(elf_read_build_id(SYMTARGET_MD5, md5, sizeof(md5), &md5_len), 0);
	ck_assert_uint_eq(md5_len, 16);
	child_start(SYMTARGET_PIE, &c);
	file_offsets(&c, offs);
	child_finish(&c);
	child_start(SYMTARGET_MD5, &c);
	file_offsets(&c, md5_offs);
	child_finish(&c);

	u = usyms__new(&(struct usyms_opts){ .debug_dir = "" });
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(usyms__resolve_build_id(u, id, 20, offs[0], &s), -ENOENT);
	ck_assert_int_eq(usyms__add_file(u, SYMTARGET_PIE), 0);
	ck_assert_int_eq(usyms__add_file(u, SYMTARGET_MD5), 0);
	for (int i = 0; i < NFUNCS; i++) {
		ck_assert_int_eq(usyms__resolve_build_id(u, id, 20, offs[i], &s), 0);
		ck_assert_str_eq(s.name, func_names[i]);
		ck_assert_str_eq(s.object, SYMTARGET_PIE);
		/* as BPF reports it: 16 bytes of md5 and 4 bytes of zero padding */
		ck_assert_int_eq(usyms__resolve_build_id(u, md5, 20, md5_offs[i], &s), 0);
		ck_assert_str_eq(s.name, func_names[i]);
		ck_assert_str_eq(s.object, SYMTARGET_MD5);
		ck_assert_int_eq(usyms__resolve_build_id(u, md5, 16, md5_offs[i], &s), 0);
		ck_assert_str_eq(s.name, func_names[i]);
	}
	/* known object, no function at offset 0 (the ELF header) */
	ck_assert_int_eq(usyms__resolve_build_id(u, id, 20, 0, &s), 0);
	ck_assert_ptr_null(s.name);
	ck_assert_str_eq(s.object, SYMTARGET_PIE);
	/* padding is only stripped when it is zero; bad lengths */
	md5[19] = 1;
	ck_assert_int_eq(usyms__resolve_build_id(u, md5, 20, md5_offs[0], &s), -ENOENT);
	ck_assert_int_eq(usyms__resolve_build_id(u, id, 0, offs[0], &s), -EINVAL);
	ck_assert_int_eq(usyms__resolve_build_id(u, id, ELF_BUILD_ID_MAX + 1, 0, &s), -EINVAL);
	ck_assert_int_eq(usyms__add_file(u, SYMTARGET_NOID), -ENODATA);
	usyms__free(u);
}
END_TEST

/* ---- the vdso has no file: named from the tracer's own copy ---- */

START_TEST(test_vdso)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	struct usyms *u;
	struct usym s;
	int named = 0;

	if (!base)
		return; /* no vdso on this machine: nothing to name */
	u = usyms__new(NULL);
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(usyms__add_pid(u, getpid(), 1), 0);
	for (uint64_t off = 0; off < 16384; off++) {
		int err = usyms__resolve_ip(u, getpid(), 1, base + off, &s);

		if (err == -ENOENT)
			break; /* past the vdso's text mapping */
		ck_assert_int_eq(err, 0);
		ck_assert_str_eq(s.object, "[vdso]");
		if (s.name) {
			named++;
			ck_assert_msg(strstr(s.name, "time") || strstr(s.name, "cpu") ||
					      strstr(s.name, "vdso") || strstr(s.name, "getrandom"),
				      "unexpected vdso function %s", s.name);
		}
	}
	ck_assert_int_gt(named, 0);
	usyms__free(u);
}
END_TEST

/* ---- a file deleted while its process runs (as a rebuilt compiler would be) ---- */

START_TEST(test_deleted_file)
{
	char path[] = "/tmp/usyms-test-XXXXXX", cmd[PATH_MAX + 64];
	struct usyms *u;
	struct child c;
	struct usym s;
	int fd;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 755 %s", SYMTARGET_PIE, path, path);
	ck_assert_int_eq(system(cmd), 0);
	child_start(path, &c);
	ck_assert_int_eq(unlink(path), 0);
	u = usyms__new(&(struct usyms_opts){ .debug_dir = "" });
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(usyms__add_pid(u, c.pid, 1), 0);
	child_finish(&c);
	ck_assert_int_eq(usyms__resolve_ip(u, c.pid, 1, c.addr[1], &s), 0);
	ck_assert_ptr_nonnull(strstr(s.object, " (deleted)"));
	/* /proc/PID/map_files (privileged) still reads the deleted file's build-id and symbols */
	if (geteuid() == 0) {
		ck_assert_ptr_nonnull(s.name);
		ck_assert_str_eq(s.name, func_names[1]);
	}
	usyms__free(u);
}
END_TEST

static Suite *usyms_suite(void)
{
	Suite *s = suite_create("usyms");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_resolve_ip_after_exit, 0, 2);
	tcase_add_test(tc, test_resolve_build_id);
	tcase_add_test(tc, test_vdso);
	tcase_add_test(tc, test_deleted_file);
	tcase_add_test(tc, test_trim_images);
	tcase_add_test(tc, test_snapshot_of_exiting_process);
	tcase_add_test(tc, test_add_pid_as_forked);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(usyms_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
