/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The build-id cache (src/symbols/buildid_cache.c) on ELF files built at test time from
 * tests/unit/symbols/symtarget.c: files registered and resolved by build-id and file offset,
 * processes registered and resolved after they exit, a debug directory's .build-id tree, and
 * a path rebuilt in place (stale). The four cases and the helpers they use are
 * test_elfsyms.c's, copied unchanged but for a larger path buffer in install_debug_file
 * (gcc's truncation check fires in this file); test_elfsyms.c is another helper's: the lead
 * drops them there, and that file then tests elfsyms alone.
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

#include "../unit.h"
#include "symbols/buildid_cache.h"
#include "symbols/elfsyms.h"
#include "symbols/procmaps.h"
#include "symbols/usyms.h"

#if !defined(SYMTARGET_PIE) || !defined(SYMTARGET_NOPIE) || !defined(SYMTARGET_NOPIE_STRIPPED) || \
	!defined(SYMTARGET_NOPIE_DEBUG) || !defined(SYMTARGET_NOID)
#error "the SYMTARGET_* paths must be defined by tests/meson.build"
#endif

#include "symtarget_fixture.h"

/* ---- buildid_cache ---- */

START_TEST(test_cache_add_file_resolve)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	uint64_t offs[NFUNCS], size, addr, off = 7;
	struct buildid_cache *c;
	const char *sym, *path;
	size_t len, i;

	runtime_offsets(SYMTARGET_PIE, offs);
	ck_assert_int_eq(elf_read_build_id(SYMTARGET_PIE, id, sizeof(id), &len), 0);

	c = buildid_cache__new();
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(buildid_cache__set_debug_dir(c, ""), 0);
	ck_assert_int_eq(buildid_cache__resolve(c, id, len, offs[0], &sym, NULL, &path), -ENOENT);

	ck_assert_int_eq(buildid_cache__add_file(c, SYMTARGET_PIE), 0);
	ck_assert_int_eq(buildid_cache__add_file(c, SYMTARGET_PIE), 0); /* idempotent */
	for (i = 0; i < NFUNCS; i++) {
		ref_func(SYMTARGET_PIE, func_names[i], &addr, &size);
		ck_assert_int_eq(buildid_cache__resolve(c, id, len, offs[i] + size - 1, &sym, &off,
							&path),
				 0);
		ck_assert_ptr_nonnull(sym);
		ck_assert_str_eq(sym, func_names[i]);
		ck_assert_uint_eq(off, size - 1);
		ck_assert_str_eq(path, SYMTARGET_PIE);
	}
	/* known object, no function there */
	ck_assert_int_eq(buildid_cache__resolve(c, id, len, 0, &sym, &off, &path), 0);
	ck_assert_ptr_null(sym);
	ck_assert_uint_eq(off, 0);
	ck_assert_str_eq(path, SYMTARGET_PIE);

	/* unknown and invalid build-ids */
	id[0] ^= 0xff;
	ck_assert_int_eq(buildid_cache__resolve(c, id, len, offs[0], &sym, NULL, &path), -ENOENT);
	ck_assert_int_eq(buildid_cache__resolve(c, id, len, offs[0], &sym, NULL, &path), -ENOENT);
	ck_assert_int_eq(buildid_cache__resolve(c, id, 0, offs[0], &sym, NULL, &path), -EINVAL);
	ck_assert_int_eq(buildid_cache__resolve(c, id, ELF_BUILD_ID_MAX + 1, 0, &sym, NULL, &path),
			 -EINVAL);

	/* files that cannot be registered, twice to check the remembered results */
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(buildid_cache__add_file(c, SYMTARGET_NOID), -ENODATA);
		ck_assert_int_eq(buildid_cache__add_file(c, FIXTURES_DIR "/maps.txt"), -ENOEXEC);
		ck_assert_int_eq(buildid_cache__add_file(c, "/nonexistent/x"), -ENOENT);
		ck_assert_int_eq(buildid_cache__add_file(c, FIXTURES_DIR), -EISDIR);
	}
	buildid_cache__free(c);
	buildid_cache__free(NULL);
}
END_TEST

/*
 * buildid_cache__trim (the agent's, between intervals): the symbols go, the names stay; every
 * lookup before, between and after trims gives the same frame, whether from the names kept,
 * the symbols kept, or the symbols loaded again.
 */
static void check_funcs(struct buildid_cache *c, const uint8_t *id, size_t len,
			const uint64_t *offs, uint64_t delta)
{
	for (size_t i = 0; i < NFUNCS; i++) {
		uint64_t addr, size;
		struct usym s;

		ref_func(SYMTARGET_PIE, func_names[i], &addr, &size);
		if (delta >= size)
			continue;
		ck_assert_int_eq(buildid_cache__lookup(c, id, len, offs[i] + delta, &s), 0);
		ck_assert_ptr_nonnull(s.name);
		ck_assert_str_eq(s.name, func_names[i]);
		ck_assert_uint_eq(s.sym_off, delta);
		ck_assert_uint_eq(s.func_start, offs[i]);
		ck_assert_uint_eq(s.offset, offs[i] + delta);
		ck_assert_str_eq(s.object, SYMTARGET_PIE);
		ck_assert_uint_eq(s.build_id_len, len);
	}
}

START_TEST(test_cache_trim)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	uint64_t offs[NFUNCS];
	struct buildid_cache *c;
	struct usym s;
	size_t len;

	runtime_offsets(SYMTARGET_PIE, offs);
	ck_assert_int_eq(elf_read_build_id(SYMTARGET_PIE, id, sizeof(id), &len), 0);
	c = buildid_cache__new();
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(buildid_cache__set_debug_dir(c, ""), 0);
	ck_assert_int_eq(buildid_cache__add_file(c, SYMTARGET_PIE), 0);
	check_funcs(c, id, len, offs, 1); /* symbols loaded */
	buildid_cache__trim(c);		  /* kept: the last interval needed them */
	check_funcs(c, id, len, offs, 1); /* from the symbols; the names are kept now */
	buildid_cache__trim(c);
	check_funcs(c, id, len, offs, 1); /* from the names: the symbols are not needed */
	buildid_cache__trim(c);		  /* so they go */
	check_funcs(c, id, len, offs, 1); /* the names */
	check_funcs(c, id, len, offs, 2); /* new frames: the symbols loaded again */
	buildid_cache__trim(c);
	buildid_cache__trim(c); /* the names not looked up since the last trim go */
	check_funcs(c, id, len, offs, 1);
	check_funcs(c, id, len, offs, 2);
	/* a frame no symbol covers keeps no name */
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(buildid_cache__lookup(c, id, len, 0, &s), 0);
		ck_assert_ptr_null(s.name);
		ck_assert_str_eq(s.object, SYMTARGET_PIE);
		buildid_cache__trim(c);
	}
	buildid_cache__free(c);
}
END_TEST

START_TEST(test_cache_add_pid_after_exit)
{
	uint8_t pie_id[ELF_BUILD_ID_MAX], libc_id[ELF_BUILD_ID_MAX];
	size_t pie_len, libc_len = 0, n, i;
	const char *sym, *path;
	struct buildid_cache *c;
	struct proc_map *maps;
	struct child ch;
	uint64_t offs[NFUNCS];

	ck_assert_int_eq(elf_read_build_id(SYMTARGET_PIE, pie_id, sizeof(pie_id), &pie_len), 0);
	c = buildid_cache__new();
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(buildid_cache__set_debug_dir(c, ""), 0);

	child_start(SYMTARGET_PIE, &ch);
	ck_assert_int_eq(proc_maps__read(ch.pid, &maps, &n), 0);
	for (i = 0; i < NFUNCS; i++) {
		const struct proc_map *m = proc_maps__find(maps, n, ch.addr[i]);

		ck_assert_ptr_nonnull(m);
		offs[i] = m->pgoff + ch.addr[i] - m->start;
	}
	/* some other executable mapping with a build-id: the C library, usually */
	for (i = 0; i < n && !libc_len; i++) {
		if (maps[i].perms[2] == 'x' && strstr(maps[i].path, "libc") &&
		    elf_read_build_id(maps[i].path, libc_id, sizeof(libc_id), &libc_len))
			libc_len = 0;
	}
	proc_maps__free(maps, n);
	ck_assert_int_eq(buildid_cache__add_pid(c, ch.pid), 0);
	ck_assert_int_eq(buildid_cache__add_pid(c, ch.pid), 0);
	child_finish(&ch);

	ck_assert_int_eq(buildid_cache__add_pid(c, ch.pid), -ESRCH);
	for (i = 0; i < NFUNCS; i++) {
		ck_assert_int_eq(buildid_cache__resolve(c, pie_id, pie_len, offs[i], &sym, NULL,
							&path),
				 0);
		ck_assert_ptr_nonnull(sym);
		ck_assert_str_eq(sym, func_names[i]);
	}
	if (libc_len) {
		ck_assert_int_eq(buildid_cache__resolve(c, libc_id, libc_len, 0, &sym, NULL, &path),
				 0);
		ck_assert_ptr_nonnull(strstr(path, "libc"));
	}
	buildid_cache__free(c);
}
END_TEST

START_TEST(test_cache_debug_dir)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	char root[PATH_MAX];
	struct buildid_cache *c;
	const char *sym, *path;
	uint64_t offs[NFUNCS];
	size_t len, i;

	runtime_offsets(SYMTARGET_NOPIE, offs);
	ck_assert_int_eq(elf_read_build_id(SYMTARGET_NOPIE, id, sizeof(id), &len), 0);
	make_tmpdir(root, sizeof(root));
	install_debug_file(root, SYMTARGET_NOPIE, SYMTARGET_NOPIE_DEBUG);

	/* nothing registered: found through <root>/.build-id/xx/rest.debug */
	c = buildid_cache__new();
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(buildid_cache__set_debug_dir(c, root), 0);
	for (i = 0; i < NFUNCS; i++) {
		ck_assert_int_eq(buildid_cache__resolve(c, id, len, offs[i], &sym, NULL, &path), 0);
		ck_assert_ptr_nonnull(sym);
		ck_assert_str_eq(sym, func_names[i]);
		ck_assert_ptr_nonnull(strstr(path, root));
	}
	buildid_cache__free(c);

	/* the stripped file registered: its path is reported, symbols from the debug file */
	c = buildid_cache__new();
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(buildid_cache__set_debug_dir(c, root), 0);
	ck_assert_int_eq(buildid_cache__add_file(c, SYMTARGET_NOPIE_STRIPPED), 0);
	ck_assert_int_eq(buildid_cache__resolve(c, id, len, offs[0], &sym, NULL, &path), 0);
	ck_assert_str_eq(sym, func_names[0]);
	ck_assert_str_eq(path, SYMTARGET_NOPIE_STRIPPED);
	buildid_cache__free(c);
	rm_rf(root);
}
END_TEST

START_TEST(test_cache_stale_path)
{
	char root[PATH_MAX], path[PATH_MAX + 16];
	uint8_t id[ELF_BUILD_ID_MAX];
	struct buildid_cache *c;
	const char *sym, *p;
	uint64_t offs[NFUNCS];
	size_t len;

	runtime_offsets(SYMTARGET_PIE, offs);
	ck_assert_int_eq(elf_read_build_id(SYMTARGET_PIE, id, sizeof(id), &len), 0);
	make_tmpdir(root, sizeof(root));
	snprintf(path, sizeof(path), "%s/tool", root);
	copy_file(SYMTARGET_PIE, path);

	c = buildid_cache__new();
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(buildid_cache__set_debug_dir(c, ""), 0);
	ck_assert_int_eq(buildid_cache__add_file(c, path), 0);
	/* rebuilt in place before we symbolize: the path no longer has that build-id */
	copy_file(SYMTARGET_NOPIE, path);
	ck_assert_int_eq(buildid_cache__resolve(c, id, len, offs[0], &sym, NULL, &p), 0);
	ck_assert_ptr_null(sym);
	ck_assert_str_eq(p, path);

	/* another copy with the right contents registered later is used */
	ck_assert_int_eq(buildid_cache__add_file(c, SYMTARGET_PIE), 0);
	ck_assert_int_eq(buildid_cache__resolve(c, id, len, offs[0], &sym, NULL, &p), 0);
	ck_assert_ptr_nonnull(sym);
	ck_assert_str_eq(sym, func_names[0]);
	ck_assert_str_eq(p, SYMTARGET_PIE);
	buildid_cache__free(c);
	rm_rf(root);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("buildid_cache");
	TCase *tc = tcase_create("buildid_cache");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_cache_add_file_resolve);
	tcase_add_test(tc, test_cache_add_pid_after_exit);
	tcase_add_test(tc, test_cache_debug_dir);
	tcase_add_test(tc, test_cache_stale_path);
	tcase_add_test(tc, test_cache_trim);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
