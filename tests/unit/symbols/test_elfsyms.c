/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Tests for elfsyms (procmaps and buildid_cache have their own files), on ELF files built at test time from
 * tests/unit/symbols/symtarget.c (PIE, non-PIE, stripped, debug-only, no build-id). Expected symbol
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

#include "symbols/buildid_cache.h"
#include "symbols/elfsyms.h"
#include "symbols/procmaps.h"
#include "symbols/usyms.h"

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

/* ---- names read on demand (the tables keep offsets into the file's string table) ---- */

#if !defined(MANYFUNCS) || !defined(MANYFUNCS_STRIPPED)
#error "MANYFUNCS and MANYFUNCS_STRIPPED must be defined by tests/meson.build"
#endif

struct ref_ent {
	uint64_t addr, size;
	int rank;
	char *name;
	bool global;
};

static int ref_rank(unsigned char bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

/* By address, larger first, then rank, then name: the first of an (addr, size) group is the
 * name the tables must give for it. */
static int ref_cmp(const void *a, const void *b)
{
	const struct ref_ent *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return strcmp(x->name, y->name);
}

/* Every sized function symbol of path's sh_type tables, read with libelf, sorted (ref_cmp). */
static struct ref_ent *ref_funcs(const char *path, GElf_Word sh_type, size_t *ret_n)
{
	struct ref_ent *v = NULL;
	Elf_Scn *scn = NULL;
	size_t n = 0;
	Elf *elf;
	int fd;

	ck_assert_int_ne(elf_version(EV_CURRENT), EV_NONE);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != sh_type)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *s;
			GElf_Sym sym;

			ck_assert(gelf_getsym(data, (int)i, &sym));
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if ((GELF_ST_TYPE(sym.st_info) != STT_FUNC) || !sym.st_size ||
			    sym.st_shndx == SHN_UNDEF || !s || !*s)
				continue;
			v = realloc(v, (n + 1) * sizeof(*v));
			ck_assert_ptr_nonnull(v);
			v[n++] = (struct ref_ent){ sym.st_value, sym.st_size,
						   ref_rank(GELF_ST_BIND(sym.st_info)), strdup(s),
						   GELF_ST_BIND(sym.st_info) == STB_GLOBAL };
		}
	}
	elf_end(elf);
	close(fd);
	qsort(v, n, sizeof(*v), ref_cmp);
	*ret_n = n;
	return v;
}

static void ref_funcs_free(struct ref_ent *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/* Every function of ref (a group per address and size) is named as the reference says. */
static void check_all_names(struct elf_syms *es, const struct ref_ent *ref, size_t n)
{
	size_t groups = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t off;

		if (i && ref[i].addr == ref[i - 1].addr && ref[i].size == ref[i - 1].size)
			continue;
		groups++;
		ck_assert_str_eq(elf_syms__lookup_vaddr(es, ref[i].addr + ref[i].size - 1, &off),
				 ref[i].name);
		ck_assert_uint_eq(off, ref[i].size - 1);
	}
	ck_assert_uint_eq(elf_syms__count(es), groups);
	ck_assert_uint_eq(elf_syms__name_errors(es), 0);
}

START_TEST(test_many_symbols)
{
	struct ref_ent *ref;
	struct elf_syms *es;
	size_t n, mem, name_bytes = 0;
	uint64_t a, s;

	ref = ref_funcs(MANYFUNCS, SHT_SYMTAB, &n);
	/* more than one chunk of symbols (256) and names over many 8 KB windows */
	ck_assert_uint_gt(n, 2048);
	for (size_t i = 0; i < n; i++)
		name_bytes += strlen(ref[i].name) + 1;
	ck_assert_uint_gt(name_bytes, 64 * 1024);

	es = elf_syms__open(MANYFUNCS);
	ck_assert_ptr_nonnull(es);
	/* no name is held before it is looked up */
	mem = elf_syms__mem(es);
	ck_assert_uint_lt(mem, elf_syms__count(es) * 40 + 4096);
	check_all_names(es, ref, n);
	ck_assert_uint_gt(elf_syms__mem(es), mem + name_bytes / 2);
	/* the aliases: the smallest name of the globals at an address */
	ref_func(MANYFUNCS, "sp_many_alias_b", &a, &s);
	ck_assert_str_eq(elf_syms__lookup_vaddr(es, a, NULL), "sp_many_alias_a");
	ref_func(MANYFUNCS, "sp_many_zalias", &a, &s);
	ck_assert_str_eq(elf_syms__lookup_vaddr(es, a, NULL),
			 "sp_many_func_133333_with_a_name_long_enough_to_fill_the_string_table");
	elf_syms__free(es);
	ref_funcs_free(ref, n);
}
END_TEST

/* The stripped copy: .dynsym's names, and .eh_frame's function starts for the static ones. */
START_TEST(test_many_symbols_stripped)
{
	struct ref_ent *ref, *dyn;
	struct elf_syms *es;
	size_t n, ndyn, nstatic = 0;

	ref = ref_funcs(MANYFUNCS, SHT_SYMTAB, &n);
	dyn = ref_funcs(MANYFUNCS_STRIPPED, SHT_DYNSYM, &ndyn);
	ck_assert_uint_gt(ndyn, 1024);
	es = elf_syms__open_opts(MANYFUNCS_STRIPPED, &(struct elf_syms_opts){ .debug_dir = "" });
	ck_assert_ptr_nonnull(es);
	check_all_names(es, dyn, ndyn);
	/* more FDEs than one window of .eh_frame_hdr holds (1024 per 8 KB) */
	ck_assert_uint_gt(elf_syms__nr_fdes(es), 2048);
	for (size_t i = 0; i < n; i++) {
		struct usym u;
		uint64_t off;

		if (ref[i].global)
			continue;
		nstatic++;
		ck_assert_int_eq(elf_syms__vaddr_to_offset(es, ref[i].addr, &off), 0);
		ck_assert_int_eq(elf_syms__lookup_sym(es, off + ref[i].size - 1, false, &u), 0);
		ck_assert_ptr_null(u.name);
		ck_assert_uint_eq(u.func_start, off);
	}
	ck_assert_uint_ge(nstatic, 1024);
	elf_syms__free(es);
	ref_funcs_free(dyn, ndyn);
	ref_funcs_free(ref, n);
}
END_TEST

/* An old mtime, so that any write afterwards changes it even within one clock tick. */
static void set_old_mtime(const char *path)
{
	struct timespec ts[2] = { { 946684800, 0 }, { 946684800, 0 } };

	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

START_TEST(test_file_replaced)
{
	char root[PATH_MAX], path[PATH_MAX + 16], other[PATH_MAX + 16];
	uint64_t alpha, beta, big, s, off;
	struct elf_syms *es;
	struct usym u;
	int fd;

	ref_func(SYMTARGET_PIE, "sp_target_alpha", &alpha, &s);
	ref_func(SYMTARGET_PIE, "sp_target_beta", &beta, &s);
	ref_func(SYMTARGET_PIE, "sp_target_big", &big, &s);
	make_tmpdir(root, sizeof(root));
	snprintf(path, sizeof(path), "%s/target", root);

	/* rewritten in place, same size: a byte of the string table changes */
	copy_file(SYMTARGET_PIE, path);
	set_old_mtime(path);
	es = elf_syms__open(path);
	ck_assert_ptr_nonnull(es);
	ck_assert_str_eq(elf_syms__lookup_vaddr(es, alpha, NULL), "sp_target_alpha");
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "X", 1, 0x40), 1);
	close(fd);
	ck_assert_ptr_null(elf_syms__lookup_vaddr(es, beta, NULL));
	ck_assert_uint_eq(elf_syms__name_errors(es), 1);
	/* a name read before stays; the function start needs no name */
	ck_assert_str_eq(elf_syms__lookup_vaddr(es, alpha, NULL), "sp_target_alpha");
	ck_assert_int_eq(elf_syms__vaddr_to_offset(es, big, &off), 0);
	ck_assert_int_eq(elf_syms__lookup_sym(es, off + 1, false, &u), 0);
	ck_assert_ptr_null(u.name);
	ck_assert_uint_eq(u.func_start, off);
	elf_syms__free(es);

	/* replaced by another file (a rebuild renamed over it) */
	copy_file(SYMTARGET_PIE, path);
	es = elf_syms__open(path);
	ck_assert_ptr_nonnull(es);
	snprintf(other, sizeof(other), "%s/new", root);
	copy_file(SYMTARGET_NOPIE, other);
	ck_assert_int_eq(rename(other, path), 0);
	ck_assert_ptr_null(elf_syms__lookup_vaddr(es, alpha, NULL));
	ck_assert_uint_eq(elf_syms__name_errors(es), 1);
	elf_syms__free(es);

	/* the same after a first name was read: the descriptor kept since reads the old file */
	copy_file(SYMTARGET_PIE, path);
	es = elf_syms__open(path);
	ck_assert_ptr_nonnull(es);
	ck_assert_str_eq(elf_syms__lookup_vaddr(es, alpha, NULL), "sp_target_alpha");
	copy_file(SYMTARGET_NOPIE, other);
	ck_assert_int_eq(rename(other, path), 0);
	ck_assert_str_eq(elf_syms__lookup_vaddr(es, beta, NULL), "sp_target_beta");
	ck_assert_uint_eq(elf_syms__name_errors(es), 0);
	elf_syms__free(es);

	/* removed */
	copy_file(SYMTARGET_PIE, path);
	es = elf_syms__open(path);
	ck_assert_ptr_nonnull(es);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_ptr_null(elf_syms__lookup_vaddr(es, alpha, NULL));
	ck_assert_uint_eq(elf_syms__name_errors(es), 1);
	elf_syms__free(es);

	/* a /proc path that cannot be opened again (as map_files after the process exits): the
	 * descriptor is kept, the names are still read */
	copy_file(SYMTARGET_PIE, path);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	snprintf(other, sizeof(other), "/proc/self/fd/%d", fd);
	es = elf_syms__open(other);
	ck_assert_ptr_nonnull(es);
	close(fd);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_str_eq(elf_syms__lookup_vaddr(es, beta, NULL), "sp_target_beta");
	ck_assert_uint_eq(elf_syms__name_errors(es), 0);
	elf_syms__free(es);
	rm_rf(root);
}
END_TEST

static size_t open_fds(void)
{
	char path[64];
	size_t n = 0;

	for (int fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += !access(path, F_OK);
	}
	return n;
}

/* Name reads keep a few descriptors open, never one per file, and free() closes them. */
START_TEST(test_kept_fds)
{
	struct elf_syms *es[40];
	uint64_t alpha, s;
	size_t before = open_fds(), i;

	ref_func(SYMTARGET_PIE, "sp_target_alpha", &alpha, &s);
	for (i = 0; i < 40; i++) {
		es[i] = elf_syms__open(SYMTARGET_PIE);
		ck_assert_ptr_nonnull(es[i]);
		ck_assert_str_eq(elf_syms__lookup_vaddr(es[i], alpha, NULL), "sp_target_alpha");
	}
	ck_assert_uint_gt(open_fds(), before);
	ck_assert_uint_le(open_fds(), before + 16);
	for (i = 0; i < 40; i++)
		elf_syms__free(es[i]);
	ck_assert_uint_eq(open_fds(), before);
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
	tcase_add_test(tc, test_many_symbols);
	tcase_add_test(tc, test_many_symbols_stripped);
	tcase_add_test(tc, test_file_replaced);
	tcase_add_test(tc, test_kept_fds);
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
