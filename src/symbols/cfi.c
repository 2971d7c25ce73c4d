// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CFI compiler (cfi.h): every address of the object's executable sections is looked up
 * in libdw's CFI, a row at a time (libdw gives the range its rules hold for), and the rules
 * classified into struct cfi_row.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/cfi.h"
#include "symbols/elfsyms.h"

/* The x86-64 psABI's DWARF register numbers. */
#define DW_X86_64_RDI 5
#define DW_X86_64_RBX 3
#define DW_X86_64_RBP 6
#define DW_X86_64_RSP 7
#define DW_X86_64_RA 16

/* The .eh_frame_hdr search table's encodings that we read: almost every linker's. */
#define EH_PE_PCREL_SDATA4 0x1b
#define EH_PE_UDATA4 0x03
#define EH_PE_DATAREL_SDATA4 0x3b

/* One ELF file open for its CFI. */
struct cfi_src {
	int fd;
	Elf *elf;
	Dwarf *dw;	/* its DWARF, for .debug_frame; NULL when it has none */
	Dwarf_CFI *eh;	/* .eh_frame, NULL when absent */
	Dwarf_CFI *dbg; /* .debug_frame, NULL when absent */
	/* where .eh_frame's FDEs start, sorted (.eh_frame_hdr's table); NULL when unknown */
	uint64_t *starts;
	size_t nstarts;
};

static void src_close(struct cfi_src *s)
{
	free(s->starts);
	if (s->eh)
		dwarf_cfi_end(s->eh);
	if (s->dw)
		dwarf_end(s->dw); /* ends s->dbg too */
	if (s->elf)
		elf_end(s->elf);
	if (s->fd >= 0)
		close(s->fd);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

/*
 * s->starts from .eh_frame_hdr's binary search table, when it has the usual encodings and is
 * sorted; otherwise none (the compiler then looks up every address of a gap).
 */
static void read_fde_starts(struct cfi_src *s)
{
	Elf_Scn *scn = elf_section_by_name(s->elf, ".eh_frame_hdr");
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	const uint8_t *p;
	GElf_Shdr sh;
	uint32_t n, i;

	if (!d || !d->d_buf || d->d_size < 12 || !gelf_getshdr(scn, &sh))
		return;
	p = d->d_buf;
	if (p[0] != 1 || p[1] != EH_PE_PCREL_SDATA4 || p[2] != EH_PE_UDATA4 ||
	    p[3] != EH_PE_DATAREL_SDATA4)
		return;
	memcpy(&n, p + 8, 4);
	if (!n || n > (d->d_size - 12) / 8)
		return;
	s->starts = malloc(n * sizeof(*s->starts));
	if (!s->starts)
		return;
	for (i = 0; i < n; i++) {
		int32_t loc;

		memcpy(&loc, p + 12 + 8 * (size_t)i, 4);
		s->starts[i] = sh.sh_addr + (uint64_t)(int64_t)loc;
		if (i && s->starts[i] < s->starts[i - 1]) {
			free(s->starts);
			s->starts = NULL;
			return;
		}
	}
	s->nstarts = n;
}

/* The first FDE start above pc, or hi when none is known below hi. */
static uint64_t next_start(const struct cfi_src *s, uint64_t pc, uint64_t hi)
{
	size_t lo = 0, n = s->nstarts;

	while (lo < n) {
		size_t mid = lo + (n - lo) / 2;

		if (s->starts[mid] <= pc)
			lo = mid + 1;
		else
			n = mid;
	}
	return lo < s->nstarts && s->starts[lo] < hi ? s->starts[lo] : hi;
}

static int src_open(const char *path, bool want_eh, struct cfi_src *s)
{
	GElf_Ehdr eh;

	memset(s, 0, sizeof(*s));
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0)
		return -errno;
	s->elf = elf_begin(s->fd, ELF_C_READ_MMAP, NULL);
	if (!s->elf || elf_kind(s->elf) != ELF_K_ELF || !gelf_getehdr(s->elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		src_close(s);
		return -ENOEXEC;
	}
	if (want_eh) {
		s->eh = dwarf_getcfi_elf(s->elf);
		if (s->eh)
			read_fde_starts(s);
	}
	s->dw = dwarf_begin_elf(s->elf, DWARF_C_READ, NULL);
	if (s->dw)
		s->dbg = dwarf_getcfi(s->dw);
	return 0;
}

static bool is_op(const Dwarf_Op *op, uint8_t atom, uint64_t number)
{
	return op->atom == atom && op->number == number;
}

/* The lazy-binding PLT's CFA: rsp + 8 + (((rip & 15) >= N) << 3). N, or 0 when not it. */
static int plt_threshold(const Dwarf_Op *ops, size_t n)
{
	if (n != 9 || !is_op(&ops[0], DW_OP_breg7, 8) || !is_op(&ops[1], DW_OP_breg16, 0) ||
	    ops[2].atom != DW_OP_lit15 || ops[3].atom != DW_OP_and ||
	    ops[4].atom < DW_OP_lit1 || ops[4].atom > DW_OP_lit15 || ops[5].atom != DW_OP_ge ||
	    ops[6].atom != DW_OP_lit3 || ops[7].atom != DW_OP_shl || ops[8].atom != DW_OP_plus)
		return 0;
	return ops[4].atom - DW_OP_lit0;
}

/* A register + offset in one operation: its register and offset, else false. */
static bool breg(const Dwarf_Op *ops, size_t n, uint64_t *reg, int64_t *off)
{
	if (n != 1)
		return false;
	if (ops[0].atom == DW_OP_bregx) {
		*reg = ops[0].number;
		*off = (int64_t)ops[0].number2;
		return true;
	}
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		*reg = ops[0].atom - DW_OP_breg0;
		*off = (int64_t)ops[0].number;
		return true;
	}
	return false;
}

/*
 * A register's rule as an offset from the CFA ("saved at CFA + off"): 1 and *off, 0 when
 * it is another rule; *same and *undef say which of those two it is when it is one.
 */
static int reg_rule(Dwarf_Frame *f, int regno, int64_t *off, bool *same, bool *undef)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t n = 0;

	*same = *undef = false;
	if (dwarf_frame_register(f, regno, mem, &ops, &n) != 0) {
		*undef = true;
		return 0;
	}
	if (n == 0) {
		*same = ops == NULL;
		*undef = ops != NULL;
		return 0;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return 0;
	if (n == 1) {
		*off = 0;
		return 1;
	}
	if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return 1;
	}
	return 0;
}

/* Whether frame f's return address is the value of RDI (DW_CFA_register rip, rdi). */
static bool ra_in_rdi(Dwarf_Frame *f)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t n = 0;
	uint64_t reg;
	int64_t off;

	if (dwarf_frame_register(f, DW_X86_64_RA, mem, &ops, &n) != 0 || n != 1)
		return false;
	if (ops[0].atom == DW_OP_regx)
		return ops[0].number == DW_X86_64_RDI;
	if (ops[0].atom == DW_OP_reg0 + DW_X86_64_RDI)
		return true;
	return breg(ops, n, &reg, &off) && reg == DW_X86_64_RDI && off == 0;
}

/* Where frame f saved the caller's register regno (enum cfi_fp), its offset into *at_off. */
static uint8_t saved_rule(Dwarf_Frame *f, int regno, int16_t *at_off)
{
	bool same, undef;
	int64_t off;

	*at_off = 0;
	if (reg_rule(f, regno, &off, &same, &undef) == 1) {
		if (off < INT16_MIN || off > INT16_MAX)
			return CFI_FP_UNDEF;
		*at_off = (int16_t)off;
		return CFI_FP_AT;
	}
	return same ? CFI_FP_SAME : CFI_FP_UNDEF;
}

/* Classifies frame f into *r (pc and len are the caller's). */
static void classify(Dwarf_Frame *f, bool signal, struct cfi_row *r)
{
	Dwarf_Op *ops = NULL;
	size_t n = 0;
	uint64_t reg;
	int64_t off;
	bool same, undef;
	int plt;

	r->cfa = CFI_CFA_EXPR;
	r->cfa_off = 0;
	if (dwarf_frame_cfa(f, &ops, &n) == 0 && n > 0) {
		if (breg(ops, n, &reg, &off) && off >= INT32_MIN && off <= INT32_MAX) {
			r->cfa = reg == DW_X86_64_RSP	? CFI_CFA_SP
				 : reg == DW_X86_64_RBP ? CFI_CFA_FP
				 : reg == DW_X86_64_RBX ? CFI_CFA_BX
							: CFI_CFA_REG;
			r->cfa_off = (int32_t)off;
		} else if ((plt = plt_threshold(ops, n)) > 0) {
			r->cfa = CFI_CFA_PLT;
			r->cfa_off = plt;
		}
	}
	if (signal) {
		/* the kernel's trampoline: its CFI describes the ucontext, which we read directly */
		r->cfa = CFI_CFA_SIGNAL;
		r->cfa_off = 0;
	} else if (r->cfa <= CFI_CFA_BX) {
		if (reg_rule(f, DW_X86_64_RA, &off, &same, &undef) == 1 && off == -8)
			;
		else if (r->cfa == CFI_CFA_SP && ra_in_rdi(f))
			r->cfa = CFI_CFA_RA_DI;
		else
			r->cfa = undef ? CFI_CFA_END : CFI_CFA_RA;
	}

	r->fp = saved_rule(f, DW_X86_64_RBP, &r->fp_off);
	/*
	 * RBX is callee-saved (the psABI): a frame whose CFI does not say where it saved it has
	 * not changed it. libdw's initial rule for it is "undefined", which no compiler writes.
	 */
	r->bx = saved_rule(f, DW_X86_64_RBX, &r->bx_off);
	if (r->bx == CFI_FP_UNDEF)
		r->bx = CFI_FP_SAME;
}

static bool same_rules(const struct cfi_row *a, const struct cfi_row *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->fp == b->fp &&
	       a->fp_off == b->fp_off && a->bx == b->bx && a->bx_off == b->bx_off;
}

/* Appends r, merged into the last row when contiguous with it and alike. */
static int push(struct cfi_table *t, const struct cfi_row *r, size_t max_rows)
{
	struct cfi_row *last = t->n ? &t->rows[t->n - 1] : NULL;

	if (last && last->pc + last->len == r->pc && same_rules(last, r) &&
	    (uint64_t)last->len + r->len <= UINT32_MAX) {
		last->len += r->len;
		return 0;
	}
	if (max_rows && t->n >= max_rows)
		return -E2BIG;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct cfi_row *rows = realloc(t->rows, cap * sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		t->rows = rows;
		t->cap = cap;
	}
	t->rows[t->n++] = *r;
	return 0;
}

/* The frame of CFI c at pc, with its range; false when c has none there. */
static bool lookup(Dwarf_CFI *c, uint64_t pc, Dwarf_Frame **f, Dwarf_Addr *start,
		   Dwarf_Addr *end, bool *signal)
{
	*f = NULL;
	if (!c || dwarf_cfi_addrframe(c, pc, f) != 0 || !*f)
		return false;
	if (dwarf_frame_info(*f, start, end, signal) < 0 || *end <= pc || *start > pc) {
		free(*f);
		*f = NULL;
		return false;
	}
	return true;
}

/* Compiles the section [lo, hi) into t. */
static int compile_range(const struct cfi_src *obj, const struct cfi_src *dbg, uint64_t lo,
			 uint64_t hi, size_t max_rows, struct cfi_table *t)
{
	Dwarf_CFI *cfis[3] = {obj->eh, obj->dbg, dbg ? dbg->dbg : NULL};
	uint64_t pc = lo;
	/* a gap can be skipped to .eh_frame's next FDE when no .debug_frame may cover it */
	bool skip = obj->starts && !cfis[1] && !cfis[2];
	int rc;

	while (pc < hi) {
		Dwarf_Frame *f = NULL;
		Dwarf_Addr start, end;
		struct cfi_row r;
		bool signal = false;
		size_t i;

		for (i = 0; i < 3 && !lookup(cfis[i], pc, &f, &start, &end, &signal); i++)
			;
		t->stats.lookups++;
		if (!f) {
			pc = skip ? next_start(obj, pc, hi) : pc + 1;
			continue;
		}
		if (end > hi)
			end = hi;
		if (end - pc > UINT32_MAX)
			end = pc + UINT32_MAX;
		memset(&r, 0, sizeof(r));
		r.pc = pc;
		r.len = (uint32_t)(end - pc);
		classify(f, signal, &r);
		free(f);
		if (i >= 1)
			t->stats.from_debug++;
		t->stats.covered_bytes += r.len;
		rc = push(t, &r, max_rows);
		if (rc)
			return rc;
		pc = end;
	}
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct cfi_row *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

int cfi_compile(const char *path, const char *debug_path, size_t max_rows, struct cfi_table *t)
{
	struct cfi_src obj, dbg;
	Elf_Scn *scn = NULL;
	size_t i;
	int rc;

	memset(t, 0, sizeof(*t));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	rc = src_open(path, true, &obj);
	if (rc)
		return rc;
	/* a debug file that cannot be read only loses its .debug_frame */
	if (!debug_path || src_open(debug_path, false, &dbg) != 0) {
		memset(&dbg, 0, sizeof(dbg));
		dbg.fd = -1;
	}
	while (!rc && (scn = elf_nextscn(obj.elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR) ||
		    sh.sh_addr + sh.sh_size < sh.sh_addr)
			continue;
		t->stats.code_bytes += sh.sh_size;
		rc = compile_range(&obj, &dbg, sh.sh_addr, sh.sh_addr + sh.sh_size, max_rows, t);
	}
	src_close(&dbg);
	src_close(&obj);
	/* sections come in file order, which need not be address order; they do not overlap */
	if (t->n)
		qsort(t->rows, t->n, sizeof(*t->rows), row_cmp);
	for (i = 0; i < t->n; i++)
		t->stats.rows[t->rows[i].cfa]++;
	return rc;
}

void cfi_table_free(struct cfi_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const struct cfi_row *cfi_table_find(const struct cfi_table *t, uint64_t vaddr)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cfi_row *r = &t->rows[mid];

		if (vaddr < r->pc)
			hi = mid;
		else if (vaddr - r->pc >= r->len)
			lo = mid + 1;
		else
			return r;
	}
	return NULL;
}

const char *cfi_cfa_name(enum cfi_cfa k)
{
	static const char *const names[CFI_CFA_KINDS] = {
		[CFI_CFA_SP] = "sp",		 [CFI_CFA_FP] = "fp",
		[CFI_CFA_PLT] = "plt",		 [CFI_CFA_BX] = "bx",
		[CFI_CFA_SIGNAL] = "signal",
		[CFI_CFA_END] = "end",		 [CFI_CFA_EXPR] = "expression",
		[CFI_CFA_REG] = "register",	 [CFI_CFA_RA] = "return-address",
		[CFI_CFA_RA_DI] = "return-address-in-rdi",
	};

	return (unsigned)k < CFI_CFA_KINDS ? names[k] : "?";
}
