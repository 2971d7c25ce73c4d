/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Tests for elfsyms (procmaps and buildid_cache have their own files), on ELF files built at test time from
 * tests/unit/symtarget.c (PIE, non-PIE, stripped, debug-only, no build-id). Expected symbol
 * addresses and sizes come from a separate libelf walk written here; expected file offsets come
 * from running the target and reading its /proc/PID/maps, so they are what the kernel reports.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buildid_cache.h"
#include "elfsyms.h"
#include "procmaps.h"

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must be defined"
#endif
#if !defined(SYMTARGET_PIE) || !defined(SYMTARGET_NOPIE) || !defined(SYMTARGET_PIE_STRIPPED) || \
	!defined(SYMTARGET_NOPIE_STRIPPED) || !defined(SYMTARGET_NOPIE_DEBUG) ||               \
	!defined(SYMTARGET_NOID)
#error "the SYMTARGET_* paths must be defined by tests/meson.build"
#endif

#include "symtarget_fixture.h"

/* the loop tests run over these two builds */
static const char *const targets[] = { SYMTARGET_PIE, SYMTARGET_NOPIE };

/* "Build ID: <hex>" from readelf -n; false if readelf is not installed. */
static bool readelf_build_id(const char *path, uint8_t *id, size_t *ret_len)
{
	char cmd[PATH_MAX + 64], line[512];
	bool found = false;
	FILE *p;

	if (access("/usr/bin/readelf", X_OK))
		return false;
	snprintf(cmd, sizeof(cmd), "/usr/bin/readelf -n '%s'", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		const char *h = strstr(line, "Build ID: ");
		size_t n = 0;
		unsigned int b;

		if (!h || found)
			continue;
		for (h += strlen("Build ID: "); sscanf(h, "%2x", &b) == 1 && n < ELF_BUILD_ID_MAX;
		     h += 2)
			id[n++] = (uint8_t)b;
		*ret_len = n;
		found = true;
	}
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_msg(found, "readelf -n %s shows no build-id", path);
	return true;
}

/* ---- elfsyms ---- */

START_TEST(test_build_id)
{
	uint8_t a[ELF_BUILD_ID_MAX], b[ELF_BUILD_ID_MAX], r[ELF_BUILD_ID_MAX];
	size_t alen, blen, rlen, len;
	const uint8_t *id;
	struct elf_syms *es;
	char hex[8];

	ck_assert_int_eq(elf_read_build_id(SYMTARGET_PIE, a, sizeof(a), &alen), 0);
	ck_assert_uint_eq(alen, 20); /* --build-id defaults to sha1 */
	ck_assert_int_eq(elf_read_build_id(SYMTARGET_NOPIE, b, sizeof(b), &blen), 0);
	ck_assert_uint_eq(blen, 20);
	ck_assert_msg(memcmp(a, b, 20), "PIE and non-PIE builds share a build-id");

	if (readelf_build_id(SYMTARGET_PIE, r, &rlen)) {
		ck_assert_uint_eq(rlen, alen);
		ck_assert_mem_eq(r, a, alen);
	}

	es = elf_syms__open(SYMTARGET_PIE);
	ck_assert_ptr_nonnull(es);
	ck_assert_int_eq(elf_syms__build_id(es, &id, &len), 0);
	ck_assert_uint_eq(len, alen);
	ck_assert_mem_eq(id, a, alen);
	elf_syms__free(es);

	/* strip keeps the note */
	ck_assert_int_eq(elf_read_build_id(SYMTARGET_PIE_STRIPPED, r, sizeof(r), &rlen), 0);
	ck_assert_uint_eq(rlen, alen);
	ck_assert_mem_eq(r, a, alen);

	ck_assert_int_eq(elf_read_build_id(SYMTARGET_PIE, r, 19, &rlen), -ENOBUFS);

	ck_assert_int_eq(elf_read_build_id(SYMTARGET_NOID, r, sizeof(r), &rlen), -ENODATA);
	es = elf_syms__open(SYMTARGET_NOID);
	ck_assert_ptr_nonnull(es);
	ck_assert_int_eq(elf_syms__build_id(es, &id, &len), -ENODATA);
	ck_assert_uint_gt(elf_syms__count(es), 0);
	elf_syms__free(es);

	/* hex: lowercase, truncated to whole bytes that fit, always terminated */
	r[0] = 0x0a;
	r[1] = 0xBF;
	r[2] = 0x10;
	r[3] = 0x99;
	ck_assert_str_eq(elf_build_id_hex(r, 3, hex, sizeof(hex)), "0abf10");
	ck_assert_str_eq(elf_build_id_hex(r, 4, hex, 6), "0abf");
	ck_assert_str_eq(elf_build_id_hex(r, 4, hex, 1), "");
	ck_assert_str_eq(elf_build_id_hex(r, 4, hex, 5), "0abf");
}
END_TEST

START_TEST(test_is_pie)
{
	struct elf_syms *es;

	es = elf_syms__open(SYMTARGET_PIE);
	ck_assert_ptr_nonnull(es);
	ck_assert(elf_syms__is_pie(es));
	ck_assert_str_eq(elf_syms__path(es), SYMTARGET_PIE);
	ck_assert_str_eq(elf_syms__symbols_path(es), SYMTARGET_PIE);
	elf_syms__free(es);

	es = elf_syms__open(SYMTARGET_NOPIE);
	ck_assert_ptr_nonnull(es);
	ck_assert(!elf_syms__is_pie(es));
	elf_syms__free(es);
}
END_TEST

/* first byte, last byte, one past the end and one before the start of each function */
static void check_boundaries(struct elf_syms *es, const char *ref_path)
{
	size_t i;

	for (i = 0; i < NFUNCS; i++) {
		uint64_t addr, size, off = 12345;
		const char *s;

		ref_func(ref_path, func_names[i], &addr, &size);

		s = elf_syms__lookup_vaddr(es, addr, &off);
		ck_assert_ptr_nonnull(s);
		ck_assert_str_eq(s, func_names[i]);
		ck_assert_uint_eq(off, 0);

		s = elf_syms__lookup_vaddr(es, addr + size - 1, &off);
		ck_assert_ptr_nonnull(s);
		ck_assert_str_eq(s, func_names[i]);
		ck_assert_uint_eq(off, size - 1);

		/* past the end: a gap, or a symbol that starts right there */
		s = elf_syms__lookup_vaddr(es, addr + size, &off);
		if (s) {
			ck_assert_str_ne(s, func_names[i]);
			ck_assert_uint_eq(off, 0);
		}
		s = elf_syms__lookup_vaddr(es, addr - 1, &off);
		if (s)
			ck_assert_str_ne(s, func_names[i]);
	}
}

START_TEST(test_vaddr_lookup)
{
	const char *bin = targets[_i];
	uint64_t addr, size, off;
	struct elf_syms *es;

	es = elf_syms__open(bin);
	ck_assert_ptr_nonnull(es);
	ck_assert_uint_gt(elf_syms__count(es), NFUNCS);
	check_boundaries(es, bin);

	ref_func(bin, "sp_target_big", &addr, &size);
	ck_assert_uint_ge(size, 256);
	ck_assert_str_eq(elf_syms__lookup_vaddr(es, addr + size / 2, &off), "sp_target_big");
	ck_assert_uint_eq(off, size / 2);
	ck_assert_str_eq(elf_syms__lookup_vaddr(es, addr + 1, NULL), "sp_target_big");

	/* data and nowhere */
	ref_sym(bin, SHT_SYMTAB, "sp_sink", &addr, &size);
	ck_assert_ptr_null(elf_syms__lookup_vaddr(es, addr, NULL));
	ck_assert_ptr_null(elf_syms__lookup_vaddr(es, 0, NULL));
	ck_assert_ptr_null(elf_syms__lookup_vaddr(es, UINT64_MAX, NULL));
	elf_syms__free(es);
}
END_TEST

START_TEST(test_offset_lookup_runtime)
{
	const char *bin = targets[_i];
	uint64_t offs[NFUNCS], vaddr;
	struct elf_syms *es;
	size_t i;

	runtime_offsets(bin, offs);
	es = elf_syms__open(bin);
	ck_assert_ptr_nonnull(es);
	for (i = 0; i < NFUNCS; i++) {
		uint64_t addr, size, off = 1;
		const char *s;

		ref_func(bin, func_names[i], &addr, &size);
		ck_assert_int_eq(elf_syms__offset_to_vaddr(es, offs[i], &vaddr), 0);
		ck_assert_uint_eq(vaddr, addr);

		s = elf_syms__lookup_offset(es, offs[i], &off);
		ck_assert_ptr_nonnull(s);
		ck_assert_str_eq(s, func_names[i]);
		ck_assert_uint_eq(off, 0);

		s = elf_syms__lookup_offset(es, offs[i] + size - 1, &off);
		ck_assert_ptr_nonnull(s);
		ck_assert_str_eq(s, func_names[i]);
		ck_assert_uint_eq(off, size - 1);

		s = elf_syms__lookup_offset(es, offs[i] + size, &off);
		if (s) {
			ck_assert_str_ne(s, func_names[i]);
			ck_assert_uint_eq(off, 0);
		}
	}
	/* the ELF header is mapped but holds no code; far past the file is not mapped */
	ck_assert_ptr_null(elf_syms__lookup_offset(es, 0, NULL));
	ck_assert_int_eq(elf_syms__offset_to_vaddr(es, 1ULL << 40, &vaddr), -ERANGE);
	ck_assert_ptr_null(elf_syms__lookup_offset(es, 1ULL << 40, NULL));
	elf_syms__free(es);
}
END_TEST

START_TEST(test_dynsym_fallback)
{
	struct elf_syms *full, *es;
	uint64_t a, s, offs[NFUNCS];
	size_t i;

	/* the stripped copy really has no .symtab left */
	ck_assert(!ref_sym(SYMTARGET_PIE_STRIPPED, SHT_SYMTAB, "sp_target_alpha", &a, &s));
	ck_assert(ref_sym(SYMTARGET_PIE_STRIPPED, SHT_DYNSYM, "sp_target_alpha", &a, &s));

	full = elf_syms__open(SYMTARGET_PIE);
	es = elf_syms__open_opts(SYMTARGET_PIE_STRIPPED, &(struct elf_syms_opts){ .debug_dir = "" });
	ck_assert_ptr_nonnull(full);
	ck_assert_ptr_nonnull(es);
	ck_assert_uint_gt(elf_syms__count(es), 0);
	ck_assert_uint_lt(elf_syms__count(es), elf_syms__count(full));
	ck_assert_str_eq(elf_syms__symbols_path(es), SYMTARGET_PIE_STRIPPED);
	check_boundaries(es, SYMTARGET_PIE);
	/* a static function is only in .symtab */
	ref_func(SYMTARGET_PIE, "sp_target_local", &a, &s);
	ck_assert_str_eq(elf_syms__lookup_vaddr(full, a, NULL), "sp_target_local");
	ck_assert_ptr_null(elf_syms__lookup_vaddr(es, a, NULL));

	/* same layout, so the offsets of the unstripped run apply */
	runtime_offsets(SYMTARGET_PIE, offs);
	for (i = 0; i < NFUNCS; i++)
		ck_assert_str_eq(elf_syms__lookup_offset(es, offs[i], NULL), func_names[i]);
	elf_syms__free(es);
	elf_syms__free(full);
}
END_TEST

START_TEST(test_debug_file_fallback)
{
	char root[PATH_MAX];
	struct elf_syms *es;
	uint64_t offs[NFUNCS];
	size_t i;

	/* non-PIE without -rdynamic: .dynsym holds only undefined imports */
	es = elf_syms__open_opts(SYMTARGET_NOPIE_STRIPPED,
				 &(struct elf_syms_opts){ .debug_dir = "" });
	ck_assert_ptr_nonnull(es);
	ck_assert_uint_eq(elf_syms__count(es), 0);
	ck_assert_ptr_null(elf_syms__lookup_vaddr(es, 0x401000, NULL));
	elf_syms__free(es);

	make_tmpdir(root, sizeof(root));
	install_debug_file(root, SYMTARGET_NOPIE_STRIPPED, SYMTARGET_NOPIE_DEBUG);
	es = elf_syms__open_opts(SYMTARGET_NOPIE_STRIPPED, &(struct elf_syms_opts){ .debug_dir = root });
	ck_assert_ptr_nonnull(es);
	ck_assert_uint_gt(elf_syms__count(es), NFUNCS);
	ck_assert_ptr_nonnull(strstr(elf_syms__symbols_path(es), root));
	ck_assert_str_eq(elf_syms__path(es), SYMTARGET_NOPIE_STRIPPED);
	check_boundaries(es, SYMTARGET_NOPIE);
	/* offsets go through the stripped file's own program headers */
	runtime_offsets(SYMTARGET_NOPIE, offs);
	for (i = 0; i < NFUNCS; i++)
		ck_assert_str_eq(elf_syms__lookup_offset(es, offs[i], NULL), func_names[i]);
	elf_syms__free(es);

	/* the debug file opened on its own: the offsets are rebuilt from p_vaddr/p_align */
	es = elf_syms__open_opts(SYMTARGET_NOPIE_DEBUG, &(struct elf_syms_opts){ .debug_dir = "" });
	ck_assert_ptr_nonnull(es);
	for (i = 0; i < NFUNCS; i++)
		ck_assert_str_eq(elf_syms__lookup_offset(es, offs[i], NULL), func_names[i]);
	elf_syms__free(es);

	/* a debug file under the wrong build-id is ignored */
	rm_rf(root);
	make_tmpdir(root, sizeof(root));
	install_debug_file(root, SYMTARGET_NOPIE_STRIPPED, SYMTARGET_PIE);
	es = elf_syms__open_opts(SYMTARGET_NOPIE_STRIPPED, &(struct elf_syms_opts){ .debug_dir = root });
	ck_assert_ptr_nonnull(es);
	ck_assert_uint_eq(elf_syms__count(es), 0);
	elf_syms__free(es);
	rm_rf(root);
}
END_TEST

START_TEST(test_open_errors)
{
	char root[PATH_MAX], path[PATH_MAX + 16];
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t len;
	int fd;

	errno = 0;
	ck_assert_ptr_null(elf_syms__open("/nonexistent/schedprof/file"));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(elf_read_build_id("/nonexistent/schedprof/file", id, sizeof(id), &len),
			 -ENOENT);

	errno = 0;
	ck_assert_ptr_null(elf_syms__open(FIXTURES_DIR "/maps.txt"));
	ck_assert_int_eq(errno, ENOEXEC);
	ck_assert_int_eq(elf_read_build_id(FIXTURES_DIR "/maps.txt", id, sizeof(id), &len),
			 -ENOEXEC);

	errno = 0;
	ck_assert_ptr_null(elf_syms__open(FIXTURES_DIR));
	ck_assert_int_eq(errno, EISDIR);

	make_tmpdir(root, sizeof(root));
	snprintf(path, sizeof(path), "%s/empty", root);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	errno = 0;
	ck_assert_ptr_null(elf_syms__open(path));
	ck_assert_int_eq(errno, ENOEXEC);

	/* a truncated ELF: the magic, then nothing */
	snprintf(path, sizeof(path), "%s/truncated", root);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "\177ELF\002\001\001", 7), 7);
	close(fd);
	errno = 0;
	ck_assert_ptr_null(elf_syms__open(path));
	ck_assert_int_eq(errno, ENOEXEC);
	rm_rf(root);

	elf_syms__free(NULL);
}
END_TEST

static Suite *elfsyms_suite(void)
{
	const int ntargets = (int)(sizeof(targets) / sizeof(targets[0]));
	Suite *s = suite_create("elfsyms");
	TCase *tc;

	tc = tcase_create("elfsyms");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_build_id);
	tcase_add_test(tc, test_is_pie);
	tcase_add_loop_test(tc, test_vaddr_lookup, 0, ntargets);
	tcase_add_loop_test(tc, test_offset_lookup_runtime, 0, ntargets);
	tcase_add_test(tc, test_dynsym_fallback);
	tcase_add_test(tc, test_debug_file_fallback);
	tcase_add_test(tc, test_open_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(elfsyms_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
