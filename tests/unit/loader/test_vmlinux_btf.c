// SPDX-License-Identifier: BSD-2-Clause
/*
 * The kernel's BTF from a mapping (src/loader/vmlinux_btf.c), without root: a BTF file built
 * here with libbpf's writer API reads back the same, bad files are errors, and on the running
 * kernel both vmlinux_btf_map() and the btf__load_vmlinux_btf() this test links (the module's,
 * which replaces libbpf's) give byte for byte what libbpf's own reader gives.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "../unit.h"
#include "loader/vmlinux_btf.h"

static char path[] = "/tmp/test_vmlinux_btf.XXXXXX";

/* data into a new file, named in path */
static void write_file(const void *data, size_t len)
{
	int fd;

	strcpy(path + strlen(path) - 6, "XXXXXX");
	fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* a and b hold the same BTF: the same types, the same raw bytes */
static void assert_same(const struct btf *a, const struct btf *b)
{
	uint32_t la, lb;
	const void *ra = btf__raw_data(a, &la), *rb = btf__raw_data(b, &lb);

	ck_assert_uint_eq(btf__type_cnt(a), btf__type_cnt(b));
	ck_assert_uint_eq(la, lb);
	ck_assert(!memcmp(ra, rb, la));
}

START_TEST(built_file)
{
	struct btf *w = btf__new_empty(), *r;
	const void *raw;
	uint32_t len;
	int id;

	ck_assert_ptr_nonnull(w);
	id = btf__add_int(w, "int", 4, BTF_INT_SIGNED);
	ck_assert_int_gt(id, 0);
	ck_assert_int_gt(btf__add_struct(w, "task_struct", 8), 0);
	ck_assert_int_eq(btf__add_field(w, "pid", id, 0, 0), 0);
	raw = btf__raw_data(w, &len);
	write_file(raw, len);
	r = vmlinux_btf_map(path);
	unlink(path);
	ck_assert_msg(r, "mapping a BTF file: %s", strerror(errno));
	assert_same(w, r);
	ck_assert_int_gt(btf__find_by_name_kind(r, "task_struct", BTF_KIND_STRUCT), 0);
	btf__free(r);
	btf__free(w);
}
END_TEST

START_TEST(bad_files)
{
	static const char junk[] = "not BTF at all, not even its magic";

	errno = 0;
	ck_assert_ptr_null(vmlinux_btf_map("/nonexistent/vmlinux"));
	ck_assert_int_eq(errno, ENOENT);
	write_file("", 0);
	errno = 0;
	ck_assert_ptr_null(vmlinux_btf_map(path));
	ck_assert_int_eq(errno, EINVAL);
	unlink(path);
	write_file(junk, sizeof(junk));
	errno = 0;
	ck_assert_ptr_null(vmlinux_btf_map(path));
	ck_assert_int_ne(errno, 0);
	unlink(path);
}
END_TEST

/* sysfs maps the kernel's BTF since Linux 6.16 */
static bool kernel_maps_btf(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	ck_assert_int_eq(uname(&u), 0);
	sscanf(u.release, "%d.%d", &major, &minor);
	return major > 6 || (major == 6 && minor >= 16);
}

START_TEST(running_kernel)
{
	struct btf *own, *mapped, *loaded;

	if (access(VMLINUX_BTF_PATH, R_OK)) {
		/* a kernel without BTF: schedprof refuses to run there anyway */
		ck_assert_ptr_null(vmlinux_btf_map(VMLINUX_BTF_PATH));
		return;
	}
	own = btf__parse_raw(VMLINUX_BTF_PATH);
	ck_assert_ptr_nonnull(own);
	mapped = vmlinux_btf_map(VMLINUX_BTF_PATH);
	if (kernel_maps_btf())
		ck_assert_msg(mapped, "mapping %s: %s", VMLINUX_BTF_PATH, strerror(errno));
	if (mapped) {
		assert_same(own, mapped);
		btf__free(mapped);
	}
	/* this module's, or libbpf's where the kernel cannot map it: the same BTF either way */
	loaded = btf__load_vmlinux_btf();
	ck_assert_ptr_nonnull(loaded);
	assert_same(own, loaded);
	ck_assert_int_gt(btf__find_by_name_kind(loaded, "task_struct", BTF_KIND_STRUCT), 0);
	btf__free(loaded);
	btf__free(own);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmlinux_btf");
	TCase *tc = tcase_create("map");

	tcase_add_test(tc, built_file);
	tcase_add_test(tc, bad_files);
	tcase_add_test(tc, running_kernel);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
