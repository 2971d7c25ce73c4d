// SPDX-License-Identifier: BSD-2-Clause
/*
 * User symbolization beyond an object's own symbol table: separate debug files by build-id
 * (libc6-dbg) and by .gnu_debuglink (CRC checked), function starts from .eh_frame in
 * stripped files, C++ and Rust demangling, DWARF file:line and inlined calls, and
 * /tmp/perf-PID.map for JIT code.
 * Expected addresses come from nm (binutils), not from the code under test.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/demangle.h"
#include "symbols/elfsyms.h"
#include "model/model.h"
#include "symbols/resym.h"
#include "symbols/procmaps.h"
#include "symbols/usyms.h"

#include "symtarget_fixture.h"

#if !defined(SYMTARGET_NOPIE) || !defined(SYMTARGET_NOPIE_STRIPPED) ||                        \
	!defined(SYMTARGET_LINKED) || !defined(SYMTARGET_BADLINK) || !defined(CXXTARGET) ||   \
	!defined(INLTARGET) || !defined(INLTARGET_STRIPPED) || !defined(INLTARGET_DEBUG) ||   \
	!defined(INLTARGET_SRC) || !defined(INLTARGET_CLANG)
#error "the target paths must be defined by tests/meson.build"
#endif

/* The value of symbol `name` as nm prints it; false when absent. */
static bool nm_addr(const char *file, const char *name, uint64_t *ret)
{
	char cmd[PATH_MAX + 32], line[1024];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm '%s'", file);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (!found && fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char type, sym[900];

		if (sscanf(line, "%llx %c %899s", &a, &type, sym) == 3 && !strcmp(sym, name)) {
			*ret = a;
			found = true;
		}
	}
	pclose(p);
	return found;
}

static struct elf_syms *open_with(const char *path, const char *debug_dir, bool dwarf)
{
	struct elf_syms_opts o = { .debug_dir = debug_dir, .dwarf = dwarf };
	struct elf_syms *es = elf_syms__open_opts(path, &o);

	ck_assert_msg(es, "%s: %s", path, strerror(errno));
	return es;
}

/* The file offset of a link-time address, through the file's own program headers. */
static uint64_t offset_of(const struct elf_syms *es, uint64_t vaddr)
{
	uint64_t off;

	ck_assert_int_eq(elf_syms__vaddr_to_offset(es, vaddr, &off), 0);
	return off;
}

/* Under CI a missing prerequisite fails; elsewhere the test says why and passes. */
static bool need(bool ok, const char *what)
{
	if (!ok && getenv("CI") && !strcmp(getenv("CI"), "true"))
		ck_abort_msg("missing: %s (scripts/setup.sh --tests installs it)", what);
	if (!ok)
		fprintf(stderr, "skipped: missing %s\n", what);
	return ok;
}

static const char *libc_path(void)
{
	static const char *const cands[] = { "/lib/x86_64-linux-gnu/libc.so.6",
					     "/usr/lib/x86_64-linux-gnu/libc.so.6",
					     "/lib/aarch64-linux-gnu/libc.so.6" };

	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		if (!access(cands[i], R_OK))
			return cands[i];
	}
	return NULL;
}

/* libc6-dbg's file for libc; false when not installed. */
static bool libc_debug_file(const char *libc, char *path, size_t size)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	char hex[2 * ELF_BUILD_ID_MAX + 1];
	size_t len;

	ck_assert_int_eq(elf_read_build_id(libc, id, sizeof(id), &len), 0);
	elf_build_id_hex(id, len, hex, sizeof(hex));
	snprintf(path, size, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	return !access(path, R_OK);
}

/* _int_malloc is internal to libc (not in .dynsym): only libc6-dbg names it. */
START_TEST(test_libc_dbg_names_internal_function)
{
	const char *libc = libc_path();
	char dbg[PATH_MAX];
	struct elf_syms *es;
	struct usym s;
	uint64_t vaddr, off;

	if (!need(libc, "libc.so.6") || !need(libc_debug_file(libc, dbg, sizeof(dbg)), "libc6-dbg"))
		return;
	ck_assert(nm_addr(dbg, "_int_malloc", &vaddr));

	es = open_with(libc, NULL, false);
	off = offset_of(es, vaddr);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(elf_syms__lookup_sym(es, off + 0x10, false, &s), 0);
	ck_assert_str_eq(s.name, "_int_malloc");
	ck_assert_uint_eq(s.sym_off, 0x10);
	ck_assert_uint_eq(s.func_start, off);
	ck_assert_str_eq(elf_syms__debug_path(es), dbg);
	elf_syms__free(es);

	/* without the debug directory: .dynsym does not cover it, .eh_frame gives its start */
	es = open_with(libc, "", false);
	ck_assert_ptr_null(elf_syms__debug_path(es));
	ck_assert_uint_gt(elf_syms__nr_fdes(es), 1000);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(elf_syms__lookup_sym(es, off + 0x10, false, &s), 0);
	ck_assert_ptr_null(s.name);
	ck_assert_uint_eq(s.func_start, off);
	elf_syms__free(es);
}
END_TEST

/* The same through usyms, by build-id, as the profile resolves frames of exited processes. */
START_TEST(test_libc_dbg_through_usyms)
{
	struct usyms_opts o = { .debug_dir = NULL };
	const char *libc = libc_path();
	uint8_t id[ELF_BUILD_ID_MAX];
	char dbg[PATH_MAX];
	struct elf_syms *es;
	struct usyms *u;
	struct usym s;
	uint64_t vaddr, off;
	size_t len;

	if (!need(libc, "libc.so.6") || !need(libc_debug_file(libc, dbg, sizeof(dbg)), "libc6-dbg"))
		return;
	ck_assert(nm_addr(dbg, "_int_malloc", &vaddr));
	es = open_with(libc, "", false);
	off = offset_of(es, vaddr);
	elf_syms__free(es);
	ck_assert_int_eq(elf_read_build_id(libc, id, sizeof(id), &len), 0);

	u = usyms__new(&o);
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(usyms__add_file(u, libc), 0);
	ck_assert_int_eq(usyms__resolve_build_id(u, id, len, off + 4, &s), 0);
	ck_assert_str_eq(s.name, "_int_malloc");
	ck_assert_str_eq(s.object, libc);
	ck_assert_uint_eq(s.offset, off + 4);
	ck_assert_uint_eq(s.build_id_len, len);
	ck_assert_mem_eq(s.build_id, id, len);
	usyms__free(u);
}
END_TEST

/* A stripped non-PIE (no .dynsym functions either): .eh_frame still gives function starts. */
START_TEST(test_stripped_func_start)
{
	struct elf_syms *full = open_with(SYMTARGET_NOPIE, "", false);
	struct elf_syms *es = open_with(SYMTARGET_NOPIE_STRIPPED, "", false);
	static const char *const names[] = { "sp_target_alpha", "sp_target_beta", "sp_target_big" };
	struct usym s;

	ck_assert_uint_eq(elf_syms__count(es), 0);
	ck_assert_uint_gt(elf_syms__nr_fdes(es), 3);
	ck_assert_uint_eq(elf_syms__nr_fdes(full), 0); /* .symtab: not needed */
	for (size_t i = 0; i < 3; i++) {
		uint64_t vaddr, off;

		ck_assert(nm_addr(SYMTARGET_NOPIE, names[i], &vaddr));
		off = offset_of(full, vaddr);
		ck_assert_int_eq(elf_syms__lookup_sym(es, off + 3, false, &s), 0);
		ck_assert_ptr_null(s.name);
		ck_assert_uint_eq(s.func_start, off);
		/* the same address with symbols: the same start */
		ck_assert_int_eq(elf_syms__lookup_sym(full, off + 3, false, &s), 0);
		ck_assert_str_eq(s.name, names[i]);
		ck_assert_uint_eq(s.func_start, off);
	}
	elf_syms__free(es);
	elf_syms__free(full);
}
END_TEST

/* .gnu_debuglink next to the file, with its CRC; a debug file whose CRC differs is refused. */
START_TEST(test_debuglink)
{
	struct elf_syms *full = open_with(SYMTARGET_NOPIE, "", false);
	struct elf_syms *es;
	struct usym s;
	uint64_t vaddr, off;

	/* static: in .symtab only */
	ck_assert(nm_addr(SYMTARGET_NOPIE, "sp_target_local", &vaddr));
	off = offset_of(full, vaddr);
	elf_syms__free(full);

	es = open_with(SYMTARGET_LINKED, "", false);
	ck_assert_ptr_nonnull(elf_syms__debug_path(es));
	ck_assert_int_eq(elf_syms__lookup_sym(es, off + 1, false, &s), 0);
	ck_assert_str_eq(s.name, "sp_target_local");
	elf_syms__free(es);

	es = open_with(SYMTARGET_BADLINK, "", false);
	ck_assert_ptr_null(elf_syms__debug_path(es));
	ck_assert_int_eq(elf_syms__lookup_sym(es, off + 1, false, &s), 0); /* an FDE still */
	ck_assert_ptr_null(s.name);
	elf_syms__free(es);
}
END_TEST

/* Real mangled names: g++ (cxxtarget) and rustc 1.95 (legacy and v0 manglings of r.rs). */
START_TEST(test_demangle_strings)
{
	static const char *const cases[][2] = {
		{ "_ZN5sp_ns6WorkerIiE3runEi", "sp_ns::Worker<int>::run(int)" },
		{ "_ZN5sp_ns5twiceIlEET_S1_", "long sp_ns::twice<long>(long)" },
		{ "_Z18ggc_internal_allocmPFvPvEmm",
		  "ggc_internal_alloc(unsigned long, void (*)(void*), unsigned long, unsigned long)" },
		/* Rust legacy: the hash is dropped */
		{ "_ZN1r6shapes6Circle4area17h03c1f913d348e25bE", "r::shapes::Circle::area" },
		{ "_ZN1r11generic_sum17h9723949f37ebf69dE", "r::generic_sum" },
		/* Rust v0 */
		{ "_RNvMNtCs6GmmlP4bgsG_1r6shapesNtB2_6Circle4area", "<r::shapes::Circle>::area" },
		{ "_RINvCs6GmmlP4bgsG_1r11generic_summEB2_", "r::generic_sum::<u32>" },
	};
	char *d;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		d = sp_demangle(cases[i][0]);
		ck_assert_msg(d, "%s", cases[i][0]);
		ck_assert_str_eq(d, cases[i][1]);
		free(d);
	}
	errno = 0;
	ck_assert_ptr_null(sp_demangle("main"));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(sp_demangle("_Znot_really"));
}
END_TEST

/* Lookups in a C++ binary: name demangled, system_name the symbol table's. */
START_TEST(test_demangle_lookup)
{
	static const char *const cases[][2] = {
		{ "_ZN5sp_ns6WorkerIiE3runEi", "sp_ns::Worker<int>::run(int)" },
		{ "_ZN5sp_ns5twiceIlEET_S1_", "long sp_ns::twice<long>(long)" },
		{ "_ZN5sp_ns4overEl", "sp_ns::over(long)" },
		{ "_ZN5sp_ns4overEd", "sp_ns::over(double)" },
	};
	struct elf_syms *es = open_with(CXXTARGET, "", false);
	struct usym s;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t vaddr;

		ck_assert_msg(nm_addr(CXXTARGET, cases[i][0], &vaddr), "%s", cases[i][0]);
		ck_assert_int_eq(elf_syms__lookup_sym(es, offset_of(es, vaddr), false, &s), 0);
		ck_assert_str_eq(s.name, cases[i][1]);
		ck_assert_str_eq(s.system_name, cases[i][0]);
		/* the old interface keeps the table's name */
		ck_assert_str_eq(elf_syms__lookup_vaddr(es, vaddr, NULL), cases[i][0]);
	}
	elf_syms__free(es);
}
END_TEST

/* The line of the source that carries marker "LINE:<tag>". */
static unsigned int marker_line(const char *tag)
{
	char line[512], want[64];
	unsigned int n = 0;
	FILE *f = fopen(INLTARGET_SRC, "r");

	ck_assert_ptr_nonnull(f);
	snprintf(want, sizeof(want), "/* LINE:%s */", tag);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, want)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	ck_abort_msg("no marker %s", tag);
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

static void check_inlined(const struct usym *s)
{
	ck_assert_str_eq(s->name, "sp_inl_outer");
	ck_assert_uint_eq(s->ninlined, 1);
	ck_assert_str_eq(s->inlined[0].name, "sp_inl_inner");
	ck_assert_ptr_nonnull(s->inlined[0].file);
	ck_assert(ends_with(s->inlined[0].file, "/inltarget.c"));
	ck_assert_uint_eq(s->inlined[0].line, marker_line("inner"));
	ck_assert_ptr_nonnull(s->file);
	ck_assert(ends_with(s->file, "/inltarget.c"));
	ck_assert_uint_eq(s->line, marker_line("call"));
}

/*
 * -O2 -g, an always_inline function: its frame, then the caller's at the call's line; built by
 * gcc, and by clang (no .debug_aranges: the units' own ranges find the unit).
 */
START_TEST(test_dwarf_inlined)
{
	const char *target = _i ? INLTARGET_CLANG : INLTARGET;
	struct elf_syms *es = open_with(target, "", true);
	struct usym s;
	uint64_t vaddr, outer;

	ck_assert(nm_addr(target, "sp_inl_here", &vaddr));
	ck_assert(nm_addr(target, "sp_inl_outer", &outer));
	ck_assert_int_eq(elf_syms__lookup_sym(es, offset_of(es, vaddr), true, &s), 0);
	check_inlined(&s);
	/* without lines: nothing of it */
	ck_assert_int_eq(elf_syms__lookup_sym(es, offset_of(es, vaddr), false, &s), 0);
	ck_assert_ptr_null(s.file);
	ck_assert_uint_eq(s.ninlined, 0);
	/* the function's first instruction: not in the inlined code */
	ck_assert_int_eq(elf_syms__lookup_sym(es, offset_of(es, outer), true, &s), 0);
	ck_assert_uint_eq(s.ninlined, 0);
	ck_assert_uint_gt(s.line, 0);
	elf_syms__free(es);
}
END_TEST

/* A stripped copy finds its DWARF in the debug file under <debug_dir>/.build-id/. */
START_TEST(test_dwarf_from_debug_dir)
{
	char dir[] = "/tmp/sp-dbgdir-XXXXXX", cmd[PATH_MAX], hex[2 * ELF_BUILD_ID_MAX + 1];
	struct usyms_opts o = { .lines = true };
	uint8_t id[ELF_BUILD_ID_MAX];
	struct elf_syms *full;
	struct usyms *u;
	struct usym s;
	uint64_t vaddr, off;
	size_t len;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(elf_read_build_id(INLTARGET_STRIPPED, id, sizeof(id), &len), 0);
	elf_build_id_hex(id, len, hex, sizeof(hex));
	install_debug_file(dir, INLTARGET_STRIPPED, INLTARGET_DEBUG);

	ck_assert(nm_addr(INLTARGET, "sp_inl_here", &vaddr));
	full = open_with(INLTARGET, "", false);
	off = offset_of(full, vaddr);
	elf_syms__free(full);

	o.debug_dir = dir;
	u = usyms__new(&o);
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(usyms__add_file(u, INLTARGET_STRIPPED), 0);
	ck_assert_int_eq(usyms__resolve_build_id(u, id, len, off, &s), 0);
	check_inlined(&s);
	ck_assert_str_eq(s.object, INLTARGET_STRIPPED);
	usyms__free(u);

	/* the hex form report uses, on a build-id nobody registered: the debug file alone */
	u = usyms__new(&o);
	ck_assert_int_eq(usyms__resolve_build_id_hex(u, hex, off, &s), 0);
	check_inlined(&s);
	ck_assert_int_eq(usyms__resolve_build_id_hex(u, "12x4", off, &s), -EINVAL);
	ck_assert_int_eq(usyms__resolve_build_id_hex(u, "abc", off, &s), -EINVAL);
	ck_assert_int_eq(usyms__resolve_build_id_hex(u, "0123456789abcdef0123", off, &s),
			 -ENOENT);
	usyms__free(u);

	snprintf(cmd, sizeof(cmd), "rm -r '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static void write_file(const char *path, const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* /tmp/perf-PID.map: hex START SIZE name; later lines win; re-read when the file grows. */
START_TEST(test_perf_map)
{
	char dir[] = "/tmp/sp-perfmap-XXXXXX", path[PATH_MAX], link[PATH_MAX];
	struct usyms *u = usyms__new(NULL);
	struct usym s;

	ck_assert_ptr_nonnull(u);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(usyms__set_perf_map_dir(u, dir), 0);
	snprintf(path, sizeof(path), "%s/perf-4242.map", dir);
	ck_assert_int_eq(usyms__resolve_perf_map(u, 4242, 0x7f0000001000, &s), -ENOENT);

	write_file(path, "w", "7f0000001000 100 LazyCompile:*fib /app/fib.js:1\n"
			      "this line is not a mapping\n"
			      "0x7f0000002000 0x40 stub with spaces\n"
			      "7f0000001080 10 Inner:reused\n");
	ck_assert_int_eq(usyms__resolve_perf_map(u, 4242, 0x7f0000001010, &s), 0);
	ck_assert_str_eq(s.name, "LazyCompile:*fib /app/fib.js:1");
	ck_assert_uint_eq(s.sym_off, 0x10);
	ck_assert_str_eq(s.object, path);
	ck_assert_int_eq(usyms__resolve_perf_map(u, 4242, 0x7f0000001084, &s), 0);
	ck_assert_str_eq(s.name, "Inner:reused");
	ck_assert_int_eq(usyms__resolve_perf_map(u, 4242, 0x7f0000001090, &s), 0);
	ck_assert_str_eq(s.name, "LazyCompile:*fib /app/fib.js:1");
	ck_assert_int_eq(usyms__resolve_perf_map(u, 4242, 0x7f000000203f, &s), 0);
	ck_assert_str_eq(s.name, "stub with spaces");
	ck_assert_int_eq(usyms__resolve_perf_map(u, 4242, 0x7f0000002040, &s), -ENOENT);
	ck_assert_int_eq(usyms__resolve_perf_map(u, 4242, 0x7f0000000fff, &s), -ENOENT);

	/* the JIT wrote more code since */
	write_file(path, "a", "7f0000003000 20 later_code\n");
	ck_assert_int_eq(usyms__resolve_perf_map(u, 4242, 0x7f0000003004, &s), 0);
	ck_assert_str_eq(s.name, "later_code");
	/* a raw IP of a process never snapshotted */
	ck_assert_int_eq(usyms__resolve_ip(u, 4242, 1, 0x7f0000002001, &s), 0);
	ck_assert_str_eq(s.name, "stub with spaces");
	ck_assert_int_eq(usyms__resolve_ip(u, 4242, 1, 0x1000, &s), -ESRCH);

	unlink(path);

	/* /tmp is everyone's: no symlinks, and no map of another user's for a process not theirs */
	snprintf(path, sizeof(path), "%s/real.map", dir);
	write_file(path, "w", "7f0000001000 100 planted\n");
	snprintf(link, sizeof(link), "%s/perf-4243.map", dir);
	ck_assert_int_eq(symlink(path, link), 0);
	ck_assert_int_eq(usyms__resolve_perf_map(u, 4243, 0x7f0000001010, &s), -ENOENT);
	unlink(link);
	if (geteuid() == 0) {
		/* pid_max is at most 2^22: this pid cannot exist */
		snprintf(link, sizeof(link), "%s/perf-%d.map", dir, 1 << 23);
		write_file(link, "w", "7f0000001000 100 planted\n");
		ck_assert_int_eq(chown(link, 65534, 65534), 0);
		ck_assert_int_eq(usyms__resolve_perf_map(u, 1 << 23, 0x7f0000001010, &s), -ENOENT);
		ck_assert_int_eq(chown(link, 0, 0), 0);
		ck_assert_int_eq(usyms__resolve_perf_map(u, 1 << 23, 0x7f0000001010, &s), 0);
		ck_assert_str_eq(s.name, "planted");
		unlink(link);
	}
	unlink(path);
	rmdir(dir);
	usyms__free(u);
}
END_TEST


START_TEST(test_resym_unresolved_form)
{
	ck_assert(sp_resym_is_unresolved("libc.so.6+0x97360", "/usr/lib/x86_64-linux-gnu/libc.so.6"));
	ck_assert(sp_resym_is_unresolved("cc1+0x1a2b3c", "cc1"));
	ck_assert(!sp_resym_is_unresolved("libc.so.6+0x", "/lib/libc.so.6"));
	ck_assert(!sp_resym_is_unresolved("libc.so.6+0x12g", "/lib/libc.so.6"));
	ck_assert(!sp_resym_is_unresolved("libc.so.6+0x1A", "/lib/libc.so.6"));
	ck_assert(!sp_resym_is_unresolved("cc1+0x10", "/usr/bin/cc"));
	ck_assert(!sp_resym_is_unresolved("malloc", "/lib/libc.so.6"));
	ck_assert(!sp_resym_is_unresolved("x+0x10", NULL));
}
END_TEST

static struct sp_frame_info *one_info(uint64_t addr, const char *build_id)
{
	struct sp_frame_info *fi = calloc(1, sizeof(*fi));

	ck_assert_ptr_nonnull(fi);
	fi->addr = addr;
	fi->build_id = strdup(build_id);
	return fi;
}

/* A run built in memory (malloc'd strings, no pool): two rows of one stripped function merge. */
START_TEST(test_resym_malloced_run)
{
	struct sp_resym_opts o = { .debug_dir = "" };
	struct elf_syms *full = open_with(SYMTARGET_NOPIE, "", false);
	uint8_t id[ELF_BUILD_ID_MAX];
	char hex[2 * ELF_BUILD_ID_MAX + 1], name[64];
	struct sp_resym_stats st;
	struct sp_run run;
	uint64_t vaddr, off;
	size_t len;

	ck_assert(nm_addr(SYMTARGET_NOPIE, "sp_target_big", &vaddr));
	off = offset_of(full, vaddr);
	elf_syms__free(full);
	ck_assert_int_eq(elf_read_build_id(SYMTARGET_NOPIE, id, sizeof(id), &len), 0);
	elf_build_id_hex(id, len, hex, sizeof(hex));

	sp_run_init(&run);
	run.profile.present = true;
	for (int i = 0; i < 2; i++) {
		struct sp_profile_row *row = sp_array_add((void **)&run.profile.rows,
							  &run.profile.nrows, &run.profile.cap,
							  sizeof(*row));
		struct sp_stack_row *s;

		ck_assert_ptr_nonnull(row);
		snprintf(name, sizeof(name), "symtarget_nopie+0x%" PRIx64, off + 8 * (uint64_t)i);
		row->function = strdup(name);
		row->object = strdup(SYMTARGET_NOPIE);
		row->info = one_info(off + 8 * (uint64_t)i, hex);
		row->samples = 3 + (uint64_t)i;
		ck_assert_int_eq(sp_comm_list_add(&row->comms, i ? "b" : "a", row->samples, 0, 0), 0);
		s = sp_array_add((void **)&row->stacks.v, &row->stacks.n, &row->stacks.cap,
				 sizeof(*s));
		s->nframes = 1;
		s->frames = calloc(1, sizeof(char *));
		s->objects = calloc(1, sizeof(char *));
		s->frames[0] = strdup(name);
		s->objects[0] = strdup(SYMTARGET_NOPIE);
		s->info = one_info(off + 8 * (uint64_t)i, hex);
		s->comm = strdup(i ? "b" : "a");
		s->count = row->samples;
	}
	run.profile.target = run.profile.total = 7;
	run.profile.unsymbolized = 7;

	ck_assert_int_eq(sp_resym_run(&run, &o, &st), 0);
	ck_assert_uint_eq(st.renamed, 4);
	ck_assert_uint_eq(st.rows_merged, 1);
	ck_assert_uint_eq(run.profile.nrows, 1);
	ck_assert_str_eq(run.profile.rows[0].function, "sp_target_big");
	ck_assert_uint_eq(run.profile.rows[0].samples, 7);
	ck_assert_uint_eq(run.profile.rows[0].comms.n, 2);
	ck_assert_uint_eq(run.profile.rows[0].stacks.n, 2); /* other addresses: kept apart */
	ck_assert_str_eq(run.profile.rows[0].stacks.v[0].frames[0], "sp_target_big");
	ck_assert_uint_eq(run.profile.unsymbolized, 0);
	sp_run_free(&run);
}
END_TEST

/* A frame of a stack built in memory: name, object ("[kernel]" or a path), address, build-id. */
static void push_frame(struct sp_stack_row *s, const char *name, const char *object,
		       uint64_t addr, const char *build_id)
{
	size_t i = s->nframes++;

	s->frames = realloc(s->frames, s->nframes * sizeof(char *));
	s->objects = realloc(s->objects, s->nframes * sizeof(char *));
	s->info = realloc(s->info, s->nframes * sizeof(*s->info));
	ck_assert(s->frames && s->objects && s->info);
	s->frames[i] = strdup(name);
	s->objects[i] = strdup(object);
	s->info[i] = (struct sp_frame_info){ .addr = addr,
					     .build_id = build_id ? strdup(build_id) : NULL };
}

/*
 * report --lines on a run traced without it: the call inlined at a user frame's address is
 * inserted before it as a frame of its own (inlined, at the same address, its own line), the
 * caller gets the call's line, the parallel arrays stay parallel, and two stacks that became
 * alike (one frame unresolved when traced) merge. A profile stack's leaf (kept as its
 * function's start) gets its line but no inlined frame; the frame before an inlined one none
 * again.
 */
START_TEST(test_resym_inserts_inlined)
{
	struct sp_resym_opts o = { .debug_dir = "", .lines = true };
	struct elf_syms *es = open_with(INLTARGET, "", false);
	uint8_t id[ELF_BUILD_ID_MAX];
	char hex[2 * ELF_BUILD_ID_MAX + 1], unres[64];
	struct sp_resym_stats st;
	struct sp_stack_row *s;
	struct sp_sched_row *row;
	struct sp_profile_row *prow;
	struct sp_run run;
	uint64_t vaddr, here, outer;
	size_t len;

	ck_assert(nm_addr(INLTARGET, "sp_inl_here", &vaddr));
	here = offset_of(es, vaddr);
	ck_assert(nm_addr(INLTARGET, "sp_inl_outer", &vaddr));
	outer = offset_of(es, vaddr);
	elf_syms__free(es);
	ck_assert_int_eq(elf_read_build_id(INLTARGET, id, sizeof(id), &len), 0);
	elf_build_id_hex(id, len, hex, sizeof(hex));
	snprintf(unres, sizeof(unres), "inltarget+0x%" PRIx64, here);

	sp_run_init(&run);
	run.sched.present = true;
	row = sp_array_add((void **)&run.sched.rows, &run.sched.nrows, &run.sched.cap,
			   sizeof(*row));
	ck_assert_ptr_nonnull(row);
	row->caller = strdup("futex_wait");
	row->count = 5;
	for (int i = 0; i < 2; i++) {
		s = sp_array_add((void **)&row->stacks.v, &row->stacks.n, &row->stacks.cap,
				 sizeof(*s));
		ck_assert_ptr_nonnull(s);
		s->comm = strdup("inltarget");
		s->count = 2 + (uint64_t)i;
		push_frame(s, "futex_wait", "[kernel]", 0xffffffff81000000ULL, NULL);
		push_frame(s, i ? unres : "sp_inl_outer", INLTARGET, here, hex);
		push_frame(s, "main", INLTARGET, outer - 1, hex);
	}
	/* already symbolized with --lines: the inlined frame is there, nothing is added */
	s = sp_array_add((void **)&row->stacks.v, &row->stacks.n, &row->stacks.cap, sizeof(*s));
	s->comm = strdup("other");
	s->count = 1;
	push_frame(s, "sp_inl_inner", INLTARGET, here, hex);
	s->info[0].inlined = true;
	s->info[0].file = strdup("inltarget.c");
	s->info[0].line = 1;
	push_frame(s, "sp_inl_outer", INLTARGET, here, hex);

	run.profile.present = true;
	prow = sp_array_add((void **)&run.profile.rows, &run.profile.nrows, &run.profile.cap,
			    sizeof(*prow));
	prow->function = strdup("sp_inl_outer");
	prow->object = strdup(INLTARGET);
	prow->samples = 1;
	s = sp_array_add((void **)&prow->stacks.v, &prow->stacks.n, &prow->stacks.cap,
			 sizeof(*s));
	s->comm = strdup("inltarget");
	s->count = 1;
	push_frame(s, "sp_inl_outer", INLTARGET, here, hex); /* a leaf: no inlined call */
	push_frame(s, "sp_inl_outer", INLTARGET, here, hex); /* a caller: it is */
	run.profile.target = run.profile.total = 1;

	ck_assert_int_eq(sp_resym_run(&run, &o, &st), 0);
	ck_assert_uint_eq(st.inlined, 3); /* two stacks (merged after), one profile stack */
	ck_assert_uint_eq(row->stacks.n, 2); /* the two became one */
	s = &row->stacks.v[0];
	ck_assert_uint_eq(s->count, 5);
	ck_assert_uint_eq(s->nframes, 4);
	ck_assert_str_eq(s->frames[0], "futex_wait");
	ck_assert_str_eq(s->frames[1], "sp_inl_inner");
	ck_assert_str_eq(s->objects[1], INLTARGET);
	ck_assert(s->info[1].inlined);
	ck_assert_uint_eq(s->info[1].addr, here);
	ck_assert_str_eq(s->info[1].build_id, hex);
	ck_assert(ends_with(s->info[1].file, "/inltarget.c"));
	ck_assert_uint_eq(s->info[1].line, marker_line("inner"));
	ck_assert_str_eq(s->frames[2], "sp_inl_outer");
	ck_assert(!s->info[2].inlined);
	ck_assert_uint_eq(s->info[2].line, marker_line("call"));
	ck_assert_str_eq(s->frames[3], "main");
	ck_assert_str_eq(s->objects[3], INLTARGET);
	s = &row->stacks.v[1];
	ck_assert_uint_eq(s->nframes, 2);
	ck_assert_uint_eq(s->info[0].line, 1);

	s = &run.profile.rows[0].stacks.v[0];
	ck_assert_uint_eq(s->nframes, 3);
	ck_assert_str_eq(s->frames[0], "sp_inl_outer");
	ck_assert(!s->info[0].inlined);
	ck_assert_uint_eq(s->info[0].line, marker_line("call"));
	ck_assert_str_eq(s->frames[1], "sp_inl_inner");
	ck_assert(s->info[1].inlined);
	ck_assert_str_eq(s->frames[2], "sp_inl_outer");
	ck_assert_uint_eq(s->info[2].line, marker_line("call"));
	sp_run_free(&run);
}
END_TEST

static Suite *debuginfo_suite(void)
{
	Suite *s = suite_create("debuginfo");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_libc_dbg_names_internal_function);
	tcase_add_test(tc, test_libc_dbg_through_usyms);
	tcase_add_test(tc, test_stripped_func_start);
	tcase_add_test(tc, test_debuglink);
	tcase_add_test(tc, test_demangle_strings);
	tcase_add_test(tc, test_demangle_lookup);
	tcase_add_loop_test(tc, test_dwarf_inlined, 0, 2);
	tcase_add_test(tc, test_dwarf_from_debug_dir);
	tcase_add_test(tc, test_perf_map);
	tcase_add_test(tc, test_resym_unresolved_form);
	tcase_add_test(tc, test_resym_malloced_run);
	tcase_add_test(tc, test_resym_inserts_inlined);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(debuginfo_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
