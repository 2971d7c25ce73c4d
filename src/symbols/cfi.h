/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unwind rows compiled from an x86-64 object's call frame information: its
 * .eh_frame, and the .debug_frame of its separate debug file for the code .eh_frame leaves
 * out. Read with libdw; each row says, for a range of link-time virtual addresses, how to find
 * the caller's frame from this one's SP and FP:
 *   CFA = SP + cfa_off or FP + cfa_off (the rules an unwinder without a DWARF interpreter can
 *   follow), the caller's FP and RBX (unchanged, or saved at CFA + an offset), and the
 *   return address at CFA - 8, which is where the x86-64 ABI's call puts it.
 * A row that none of these describe keeps its kind, so that a walk that meets it stops with a
 * reason and the table says how much of the object is like that. Three shapes are recognised
 * beyond the plain rules: the lazy-binding PLT's CFA expression (CFA = SP + 8, + 8 more past
 * the stub's push), the kernel's signal trampoline (the interrupted registers are in the
 * ucontext at SP), and a CFA of RBX + offset, where a frame that realigns its stack keeps the
 * SP it came in with (the dynamic loader's lazy-binding resolver, _dl_runtime_resolve), with
 * where the caller's RBX is.
 *
 * Addresses without CFI get no row (cfi_table_find() says -ENOENT): the caller falls back to
 * frame pointers there. Adjacent rows with equal rules are merged. Not thread-safe.
 */
#ifndef SCHEDPROF_CFI_H
#define SCHEDPROF_CFI_H

#include <stddef.h>
#include <stdint.h>

/*
 * How a row finds the CFA. The first five can be followed; the rest stop a walk, but for
 * CFI_CFA_RA_DI where a walk starts.
 */
enum cfi_cfa {
	CFI_CFA_SP,	/* SP + cfa_off */
	CFI_CFA_FP,	/* FP + cfa_off */
	CFI_CFA_PLT,	/* SP + 8, + 8 when (PC & 15) >= cfa_off: a lazy-binding PLT entry */
	CFI_CFA_BX,	/* RBX + cfa_off */
	CFI_CFA_SIGNAL, /* a signal frame: the interrupted registers in the ucontext at SP */
	CFI_CFA_END,	/* the outermost frame: the return address is undefined (_start) */
	CFI_CFA_EXPR,	/* a DWARF expression not recognised */
	CFI_CFA_REG,	/* a register other than SP, FP and RBX + offset */
	CFI_CFA_RA,	/* the return address is not at CFA - 8 */
	/*
	 * CFA = SP + cfa_off and the return address in RDI, which glibc's __vfork pops it
	 * into around its system call: followed in the frame where the walk starts only, whose
	 * registers are the event's
	 */
	CFI_CFA_RA_DI,
	CFI_CFA_KINDS
};

/* Where the caller's FP (or RBX) is. */
enum cfi_fp {
	CFI_FP_SAME,  /* unchanged by this frame */
	CFI_FP_AT,    /* saved at CFA + fp_off (bx_off) */
	CFI_FP_UNDEF, /* lost (call-clobbered, or an expression or register rule) */
	CFI_FP_KINDS
};

struct cfi_row {
	uint64_t pc;	 /* first address (link-time virtual address) */
	uint32_t len;	 /* addresses covered: [pc, pc + len) */
	int32_t cfa_off; /* see enum cfi_cfa */
	int16_t fp_off;	 /* CFI_FP_AT: the offset from the CFA */
	int16_t bx_off;	 /* bx CFI_FP_AT: the offset from the CFA */
	uint8_t cfa;	 /* enum cfi_cfa */
	uint8_t fp;	 /* enum cfi_fp */
	uint8_t bx;	 /* enum cfi_fp, for RBX */
};

/* What compiling found. */
struct cfi_stats {
	uint64_t rows[CFI_CFA_KINDS]; /* rows kept, by kind (after merging) */
	uint64_t from_debug;	      /* row ranges read from a .debug_frame */
	uint64_t code_bytes;	      /* bytes of executable sections */
	uint64_t covered_bytes;	      /* ... that rows cover */
	uint64_t lookups;	      /* addresses looked up in libdw (its cost) */
};

struct cfi_table {
	struct cfi_row *rows; /* sorted by pc, not overlapping */
	size_t n, cap;
	struct cfi_stats stats;
};

/*
 * Compiles path's CFI, and debug_path's .debug_frame (NULL: none) where path has none, into
 * *t (zeroed first; cfi_table_free() it, also after an error). max_rows bounds the table
 * (0: no bound). 0 (an object without CFI gives an empty table), -errno of open(),
 * -ENOEXEC (not a 64-bit x86 ELF), -E2BIG (more than max_rows rows: t holds the first
 * max_rows), -ENOMEM.
 */
int cfi_compile(const char *path, const char *debug_path, size_t max_rows, struct cfi_table *t);
void cfi_table_free(struct cfi_table *t);

/* The row covering vaddr, or NULL (no CFI there). */
const struct cfi_row *cfi_table_find(const struct cfi_table *t, uint64_t vaddr);

/*
 * "sp", "fp", "plt", "bx", "signal", "end", "expression", "register", "return-address",
 * "return-address-in-rdi".
 */
const char *cfi_cfa_name(enum cfi_cfa k);

#endif /* SCHEDPROF_CFI_H */
