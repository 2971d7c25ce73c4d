// SPDX-License-Identifier: BSD-2-Clause
/*
 * libdebuginfod (debuginfod.sh serves the debug file of a stripped symtarget over loopback and
 * sets DEBUGINFOD_URLS and DEBUGINFOD_CACHE_PATH): the stripped file's static function gets its
 * name only when usyms_opts.debuginfod is set, registered or known by build-id alone, and the
 * fetched file lands in the cache directory.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/elfsyms.h"
#include "symbols/usyms.h"

#if !defined(SYMTARGET_NOPIE) || !defined(SYMTARGET_NOPIE_STRIPPED)
#error "the target paths must be defined by tests/meson.build"
#endif

static uint64_t local_offset(void)
{
	struct elf_syms_opts o = { .debug_dir = "" };
	struct elf_syms *es = elf_syms__open_opts(SYMTARGET_NOPIE, &o);
	char cmd[PATH_MAX + 64], line[256];
	unsigned long long vaddr = 0;
	uint64_t off;
	FILE *p;

	ck_assert_ptr_nonnull(es);
	snprintf(cmd, sizeof(cmd), "nm '%s' | awk '$3 == \"sp_target_local\" {print $1}'",
		 SYMTARGET_NOPIE);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), p));
	pclose(p);
	ck_assert_int_eq(sscanf(line, "%llx", &vaddr), 1);
	ck_assert_int_eq(elf_syms__vaddr_to_offset(es, vaddr, &off), 0);
	elf_syms__free(es);
	return off;
}

static size_t cache_entries(void)
{
	const char *dir = getenv("DEBUGINFOD_CACHE_PATH");
	size_t n = 0;
	struct dirent *d;
	DIR *dp;

	ck_assert_ptr_nonnull(dir);
	dp = opendir(dir);
	if (!dp)
		return 0;
	while ((d = readdir(dp)))
		n += strspn(d->d_name, "0123456789abcdef") == strlen(d->d_name) &&
		     strlen(d->d_name) >= 32; /* build-id directories */
	closedir(dp);
	return n;
}

START_TEST(test_debuginfod_names_stripped)
{
	struct usyms_opts o = { .debug_dir = "" };
	uint64_t off = local_offset();
	uint8_t id[ELF_BUILD_ID_MAX];
	char hex[2 * ELF_BUILD_ID_MAX + 1];
	struct usyms *u;
	struct usym s;
	size_t len;

	ck_assert_ptr_nonnull(getenv("DEBUGINFOD_URLS"));
	ck_assert_int_eq(elf_read_build_id(SYMTARGET_NOPIE_STRIPPED, id, sizeof(id), &len), 0);
	elf_build_id_hex(id, len, hex, sizeof(hex));

	/* not asked: no name, and nothing fetched */
	u = usyms__new(&o);
	ck_assert_int_eq(usyms__add_file(u, SYMTARGET_NOPIE_STRIPPED), 0);
	ck_assert_int_eq(usyms__resolve_build_id(u, id, len, off, &s), 0);
	ck_assert_ptr_null(s.name);
	usyms__free(u);
	ck_assert_uint_eq(cache_entries(), 0);

	o.debuginfod = true;
	u = usyms__new(&o);
	ck_assert_int_eq(usyms__add_file(u, SYMTARGET_NOPIE_STRIPPED), 0);
	ck_assert_int_eq(usyms__resolve_build_id(u, id, len, off + 2, &s), 0);
	ck_assert_ptr_nonnull(s.name);
	ck_assert_str_eq(s.name, "sp_target_local");
	ck_assert_uint_eq(s.sym_off, 2);
	ck_assert_str_eq(s.object, SYMTARGET_NOPIE_STRIPPED);
	usyms__free(u);
	ck_assert_uint_eq(cache_entries(), 1);

	/* a build-id nobody registered (report on a saved run) */
	u = usyms__new(&o);
	ck_assert_int_eq(usyms__resolve_build_id_hex(u, hex, off, &s), 0);
	ck_assert_str_eq(s.name, "sp_target_local");
	/* one the server does not have */
	ck_assert_int_eq(usyms__resolve_build_id_hex(u, "00112233445566778899aabbccddeeff00112233",
						     off, &s), -ENOENT);
	usyms__free(u);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("debuginfod");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_debuginfod_names_stripped);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
