// SPDX-License-Identifier: BSD-2-Clause
/*
 * usnap (when a copied stack's process has its mappings read again), on this test's own
 * process: code mapped after the first snapshot, as the dynamic loader maps libc after a
 * process's first stack.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collect/usnap.h"
#include "symbols/usyms.h"
#include "../unit.h"

#define IMAGE 7
/* below every mapping of a process: mmap_min_addr */
#define NOWHERE 0x1000

struct mapped {
	void *addr;
	size_t len;
	uint64_t pages;
};

/* This test's executable mapped again, as code: a new file mapping that adds to exec_vm. */
static struct mapped map_code(void)
{
	struct mapped m = { .len = 4 * (size_t)getpagesize() };
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	m.addr = mmap(NULL, m.len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ck_assert_ptr_ne(m.addr, MAP_FAILED);
	close(fd);
	m.pages = m.len / (size_t)getpagesize();
	return m;
}

START_TEST(test_usnap_code_size)
{
	struct usyms *u = usyms__new(&(struct usyms_opts){ 0 });
	struct usyms_mapping where;
	struct usnap s;
	uint64_t pages, now_pages;
	struct mapped m;
	int pid = getpid();

	ck_assert_ptr_nonnull(u);
	usnap_init(&s);
	/* the time limit out of the way: only the code size reads again below */
	s.again_ns = UINT64_MAX;

	/* no snapshot of the image: read at its first copy */
	ck_assert_int_eq(usnap_for_ip(&s, u, pid, IMAGE, 0, (uintptr_t)&usnap_for_ip), 0);
	ck_assert_uint_eq(s.snapshots, 1);
	ck_assert_int_eq(usyms__image_pages(u, pid, IMAGE, &pages), 0);
	ck_assert_uint_gt(pages, 0);

	/* a PC in no file (JIT code) at the snapshot's own size: read again once */
	ck_assert_int_eq(usnap_for_ip(&s, u, pid, IMAGE, pages, NOWHERE), 0);
	ck_assert_uint_eq(s.resnaps, 1);
	ck_assert_int_eq(usnap_for_ip(&s, u, pid, IMAGE, pages, NOWHERE), 0);
	ck_assert_uint_eq(s.resnaps, 1);

	/*
	 * Code mapped since, and a copy that saw it: read again at once, though the time
	 * limit has not passed, and the new code is then in the snapshot
	 */
	m = map_code();
	ck_assert_int_eq(usyms__map_ip(u, pid, IMAGE, (uintptr_t)m.addr, &where), -ENOENT);
	ck_assert_int_eq(usnap_for_ip(&s, u, pid, IMAGE, pages + m.pages, (uintptr_t)m.addr), 0);
	ck_assert_uint_eq(s.resnaps, 2);
	ck_assert_int_eq(usyms__map_ip(u, pid, IMAGE, (uintptr_t)m.addr, &where), 0);
	ck_assert_uint_eq(where.offset, 0);
	ck_assert_int_eq(usyms__image_pages(u, pid, IMAGE, &now_pages), 0);
	ck_assert_uint_eq(now_pages, pages + m.pages);

	/* a PC in no file at the size now held: the time limit's */
	ck_assert_int_eq(usnap_for_ip(&s, u, pid, IMAGE, now_pages, NOWHERE), 0);
	ck_assert_uint_eq(s.resnaps, 2);
	/* a PC the snapshot holds: nothing to read, whatever the size */
	ck_assert_int_eq(usnap_for_ip(&s, u, pid, IMAGE, now_pages + 1, (uintptr_t)m.addr), 0);
	ck_assert_uint_eq(s.resnaps, 2);

	/*
	 * A size the process no longer has (the copy older than an munmap): read again once
	 * for it, not for each copy of that size
	 */
	ck_assert_int_eq(munmap(m.addr, m.len), 0);
	ck_assert_int_eq(usnap_for_ip(&s, u, pid, IMAGE, now_pages + 1, NOWHERE), 0);
	ck_assert_uint_eq(s.resnaps, 3);
	ck_assert_int_eq(usyms__image_pages(u, pid, IMAGE, &now_pages), 0);
	ck_assert_uint_eq(now_pages, pages);
	ck_assert_int_eq(usnap_for_ip(&s, u, pid, IMAGE, pages + 1, NOWHERE), 0);
	ck_assert_uint_eq(s.resnaps, 4);
	ck_assert_int_eq(usnap_for_ip(&s, u, pid, IMAGE, pages + 1, NOWHERE), 0);
	ck_assert_uint_eq(s.resnaps, 4);
	/* unknown (a copy without the size): the time limit's */
	ck_assert_int_eq(usnap_for_ip(&s, u, pid, IMAGE, 0, NOWHERE), 0);
	ck_assert_uint_eq(s.resnaps, 4);
	ck_assert_uint_eq(s.snapshots, 1);

	usnap_free(&s);
	usyms__free(u);
}
END_TEST

/* The time limit: a PC in no file reads again once it has passed, whatever the size. */
START_TEST(test_usnap_again)
{
	struct usyms *u = usyms__new(&(struct usyms_opts){ 0 });
	struct usnap s;
	int pid = getpid();

	ck_assert_ptr_nonnull(u);
	usnap_init(&s);
	s.again_ns = 0;
	ck_assert_int_eq(usnap_for_ip(&s, u, pid, IMAGE, 0, NOWHERE), 0);
	ck_assert_uint_eq(s.snapshots, 1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(usnap_for_ip(&s, u, pid, IMAGE, 0, NOWHERE), 0);
	ck_assert_uint_eq(s.resnaps, 3);
	/* a process gone: nothing read, no error */
	ck_assert_int_eq(usnap_for_ip(&s, u, INT32_MAX, IMAGE, 0, NOWHERE), 0);
	ck_assert_uint_eq(s.snapshots, 2);
	usnap_free(&s);
	usyms__free(u);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("usnap");
	TCase *tc = tcase_create("usnap");

	tcase_add_test(tc, test_usnap_code_size);
	tcase_add_test(tc, test_usnap_again);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
