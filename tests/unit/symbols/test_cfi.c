// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CFI compiler (src/symbols/cfi.c) on the fixture cfitarget.c as tests/meson.build builds
 * it: every kind of row at the function that has it, the compiled functions of gcc and clang
 * (-O2 -fomit-frame-pointer: CFA = SP + n throughout), the PLT, .debug_frame from a separate
 * debug file, the row bound, and a corrupt .eh_frame (no crash, nothing made up).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../unit.h"
#include "symbols/cfi.h"

/* The address and size of symbol name in path's .symtab, or of section name when sect. */
static void sym(const char *path, const char *name, bool sect, uint64_t *addr, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstr;
	bool found = false;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ne(elf_version(EV_CURRENT), EV_NONE);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	ck_assert_int_eq(elf_getshdrstrndx(elf, &shstr), 0);
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		ck_assert_ptr_nonnull(gelf_getshdr(scn, &sh));
		if (sect) {
			const char *n = elf_strptr(elf, shstr, sh.sh_name);

			if (n && !strcmp(n, name)) {
				*addr = sh.sh_addr;
				*size = sh.sh_size;
				found = true;
			}
			continue;
		}
		if (sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize && !found; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s))
				continue;
			n = elf_strptr(elf, sh.sh_link, s.st_name);
			if (n && !strcmp(n, name)) {
				*addr = s.st_value;
				*size = s.st_size;
				found = true;
			}
		}
	}
	elf_end(elf);
	close(fd);
	ck_assert_msg(found, "%s: no %s", path, name);
}

/* The row at symbol name + off of path in t. */
static const struct cfi_row *row_at(const struct cfi_table *t, const char *path,
				    const char *name, uint64_t off)
{
	uint64_t addr, size;

	sym(path, name, false, &addr, &size);
	return cfi_table_find(t, addr + off);
}

static void assert_kind(const struct cfi_table *t, const char *path, const char *name,
			uint64_t off, enum cfi_cfa kind, int32_t cfa_off)
{
	const struct cfi_row *r = row_at(t, path, name, off);

	ck_assert_msg(r, "%s+%llu: no row", name, (unsigned long long)off);
	ck_assert_msg(r->cfa == kind, "%s+%llu: %s, not %s", name, (unsigned long long)off,
		      cfi_cfa_name(r->cfa), cfi_cfa_name(kind));
	ck_assert_int_eq(r->cfa_off, cfa_off);
}

/* cfi_f1..cfi_f8 of path: every address has a row, CFA = SP + n, n in [8, 64], the return
 * address at CFA - 8; their entry is SP + 8. */
static void assert_compiled(const struct cfi_table *t, const char *path)
{
	char name[16];
	int i;

	for (i = 1; i <= 8; i++) {
		uint64_t addr, size, a;

		snprintf(name, sizeof(name), "cfi_f%d", i);
		sym(path, name, false, &addr, &size);
		ck_assert_uint_gt(size, 0);
		assert_kind(t, path, name, 0, CFI_CFA_SP, 8);
		for (a = addr; a < addr + size; a++) {
			const struct cfi_row *r = cfi_table_find(t, a);

			ck_assert_msg(r, "%s+%llu: no row", name, (unsigned long long)(a - addr));
			ck_assert_int_eq(r->cfa, CFI_CFA_SP);
			ck_assert_int_ge(r->cfa_off, 8);
			ck_assert_int_le(r->cfa_off, 64);
		}
	}
}

static void assert_sorted(const struct cfi_table *t)
{
	size_t i;

	for (i = 1; i < t->n; i++)
		ck_assert_uint_ge(t->rows[i].pc, t->rows[i - 1].pc + t->rows[i - 1].len);
}

START_TEST(test_cfi_rule_kinds)
{
	struct cfi_table t;
	const struct cfi_row *r;
	uint64_t plt, plt_size;
	int k;

	ck_assert_int_eq(cfi_compile(CFITARGET_GCC, NULL, 0, &t), 0);
	assert_sorted(&t);
	/* push rbx: SP + 8, then SP + 16 */
	assert_kind(&t, CFITARGET_GCC, "cfi_rule_sp", 0, CFI_CFA_SP, 8);
	assert_kind(&t, CFITARGET_GCC, "cfi_rule_sp", 1, CFI_CFA_SP, 16);
	ck_assert_int_eq(row_at(&t, CFITARGET_GCC, "cfi_rule_sp", 1)->fp, CFI_FP_SAME);
	/* push rbp (1 byte), mov rsp, rbp (3 bytes): then FP + 16, rbp saved at CFA - 16 */
	assert_kind(&t, CFITARGET_GCC, "cfi_rule_fp", 1, CFI_CFA_SP, 16);
	assert_kind(&t, CFITARGET_GCC, "cfi_rule_fp", 4, CFI_CFA_FP, 16);
	r = row_at(&t, CFITARGET_GCC, "cfi_rule_fp", 4);
	ck_assert_int_eq(r->fp, CFI_FP_AT);
	ck_assert_int_eq(r->fp_off, -16);
	assert_kind(&t, CFITARGET_GCC, "cfi_rule_expr", 0, CFI_CFA_EXPR, 0);
	assert_kind(&t, CFITARGET_GCC, "cfi_rule_reg", 0, CFI_CFA_REG, 8);
	/* push rbx (1 byte): RBX saved at CFA - 16; mov rsp, rbx (3 bytes): CFA = RBX + 16 */
	assert_kind(&t, CFITARGET_GCC, "cfi_rule_bx", 0, CFI_CFA_SP, 8);
	ck_assert_int_eq(row_at(&t, CFITARGET_GCC, "cfi_rule_bx", 0)->bx, CFI_FP_SAME);
	assert_kind(&t, CFITARGET_GCC, "cfi_rule_bx", 1, CFI_CFA_SP, 16);
	assert_kind(&t, CFITARGET_GCC, "cfi_rule_bx", 4, CFI_CFA_BX, 16);
	r = row_at(&t, CFITARGET_GCC, "cfi_rule_bx", 4);
	ck_assert_int_eq(r->bx, CFI_FP_AT);
	ck_assert_int_eq(r->bx_off, -16);
	ck_assert_int_eq(r->fp, CFI_FP_SAME);
	assert_kind(&t, CFITARGET_GCC, "cfi_rule_ra", 0, CFI_CFA_RA, 8);
	assert_kind(&t, CFITARGET_GCC, "cfi_rule_ra_di", 0, CFI_CFA_SP, 8);
	assert_kind(&t, CFITARGET_GCC, "cfi_rule_ra_di", 1, CFI_CFA_RA_DI, 0);
	assert_kind(&t, CFITARGET_GCC, "cfi_rule_ra_di", 3, CFI_CFA_SP, 8);
	assert_kind(&t, CFITARGET_GCC, "cfi_rule_end", 0, CFI_CFA_END, 8);
	assert_kind(&t, CFITARGET_GCC, "cfi_rule_signal", 0, CFI_CFA_SIGNAL, 0);
	/* _start's return address is undefined too */
	assert_kind(&t, CFITARGET_GCC, "_start", 0, CFI_CFA_END, 8);
	/* no CFI: no row, and counted as not covered */
	ck_assert_ptr_null(row_at(&t, CFITARGET_GCC, "cfi_nocfi", 0));
	ck_assert_ptr_null(row_at(&t, CFITARGET_GCC, "cfi_blob", 0));
	ck_assert_ptr_null(row_at(&t, CFITARGET_GCC, "cfi_blob", 65535));
	ck_assert_uint_lt(t.stats.covered_bytes + 65536, t.stats.code_bytes);
	/* the function after the gap is found, without a lookup for every byte of the gap */
	assert_kind(&t, CFITARGET_GCC, "cfi_after_blob", 0, CFI_CFA_SP, 8);
	ck_assert_uint_lt(t.stats.lookups, 1000);
	/* the PLT's entries after PLT0 (16 bytes): its CFA expression */
	sym(CFITARGET_GCC, ".plt", true, &plt, &plt_size);
	ck_assert_uint_ge(plt_size, 32);
	r = cfi_table_find(&t, plt + 16);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->cfa, CFI_CFA_PLT);
	ck_assert_int_eq(r->cfa_off, 11);
	/* every kind is counted */
	for (k = 0; k < CFI_CFA_KINDS; k++)
		ck_assert_msg(t.stats.rows[k] > 0, "no %s row", cfi_cfa_name(k));
	ck_assert_uint_eq(t.stats.from_debug, 0);
	assert_compiled(&t, CFITARGET_GCC);
	cfi_table_free(&t);
}
END_TEST

START_TEST(test_cfi_clang)
{
	struct cfi_table t;

	ck_assert_int_eq(cfi_compile(CFITARGET_CLANG, NULL, 0, &t), 0);
	assert_sorted(&t);
	assert_compiled(&t, CFITARGET_CLANG);
	assert_kind(&t, CFITARGET_CLANG, "cfi_rule_expr", 0, CFI_CFA_EXPR, 0);
	cfi_table_free(&t);
}
END_TEST

/* Built without unwind tables, stripped: its CFI is only in the debug file's .debug_frame. */
START_TEST(test_cfi_debug_frame)
{
	struct cfi_table t;

	ck_assert_int_eq(cfi_compile(CFITARGET_STRIPPED, NULL, 0, &t), 0);
	ck_assert_ptr_null(row_at(&t, CFITARGET_DEBUG, "cfi_f1", 0));
	cfi_table_free(&t);

	ck_assert_int_eq(cfi_compile(CFITARGET_STRIPPED, CFITARGET_DEBUG, 0, &t), 0);
	ck_assert_uint_gt(t.stats.from_debug, 0);
	assert_compiled(&t, CFITARGET_DEBUG);
	cfi_table_free(&t);

	/* a debug file that cannot be read loses only its rows */
	ck_assert_int_eq(cfi_compile(CFITARGET_STRIPPED, "/nonexistent/x.debug", 0, &t), 0);
	ck_assert_uint_eq(t.stats.from_debug, 0);
	cfi_table_free(&t);
}
END_TEST

START_TEST(test_cfi_bound)
{
	struct cfi_table t;

	ck_assert_int_eq(cfi_compile(CFITARGET_GCC, NULL, 5, &t), -E2BIG);
	ck_assert_uint_eq(t.n, 5);
	cfi_table_free(&t);
	ck_assert_ptr_null(t.rows);
}
END_TEST

START_TEST(test_cfi_bad_input)
{
	struct cfi_table t;
	uint64_t addr, size;

	ck_assert_int_eq(cfi_compile("/nonexistent/cfitarget", NULL, 0, &t), -ENOENT);
	cfi_table_free(&t);
	ck_assert_int_eq(cfi_compile(FIXTURES_DIR "/maps.txt", NULL, 0, &t), -ENOEXEC);
	cfi_table_free(&t);

	/* .eh_frame all 0xff: no row at all; garbage after the first CIE: none made up for
	 * the functions */
	ck_assert_int_eq(cfi_compile(CFITARGET_BAD_FF, NULL, 0, &t), 0);
	ck_assert_uint_eq(t.n, 0);
	ck_assert_uint_eq(t.stats.covered_bytes, 0);
	ck_assert_uint_gt(t.stats.code_bytes, 0);
	cfi_table_free(&t);
	ck_assert_int_eq(cfi_compile(CFITARGET_BAD_TAIL, NULL, 0, &t), 0);
	assert_sorted(&t);
	sym(CFITARGET_GCC, "cfi_f1", false, &addr, &size);
	ck_assert_ptr_null(cfi_table_find(&t, addr));
	cfi_table_free(&t);
}
END_TEST

START_TEST(test_cfi_find)
{
	struct cfi_row rows[] = {
		{.pc = 0x100, .len = 0x10}, {.pc = 0x110, .len = 0x8}, {.pc = 0x200, .len = 1}};
	struct cfi_table t = {.rows = rows, .n = 3};

	ck_assert_ptr_null(cfi_table_find(&t, 0));
	ck_assert_ptr_null(cfi_table_find(&t, 0xff));
	ck_assert_ptr_eq(cfi_table_find(&t, 0x100), &rows[0]);
	ck_assert_ptr_eq(cfi_table_find(&t, 0x10f), &rows[0]);
	ck_assert_ptr_eq(cfi_table_find(&t, 0x110), &rows[1]);
	ck_assert_ptr_null(cfi_table_find(&t, 0x118));
	ck_assert_ptr_eq(cfi_table_find(&t, 0x200), &rows[2]);
	ck_assert_ptr_null(cfi_table_find(&t, 0x201));
	ck_assert_ptr_null(cfi_table_find(&t, UINT64_MAX));
	t.n = 0;
	ck_assert_ptr_null(cfi_table_find(&t, 0x100));
	ck_assert_str_eq(cfi_cfa_name(CFI_CFA_EXPR), "expression");
	ck_assert_str_eq(cfi_cfa_name(CFI_CFA_BX), "bx");
	ck_assert_str_eq(cfi_cfa_name(CFI_CFA_KINDS), "?");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cfi");
	TCase *tc = tcase_create("cfi");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_cfi_rule_kinds);
	tcase_add_test(tc, test_cfi_clang);
	tcase_add_test(tc, test_cfi_debug_frame);
	tcase_add_test(tc, test_cfi_bound);
	tcase_add_test(tc, test_cfi_bad_input);
	tcase_add_test(tc, test_cfi_find);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
