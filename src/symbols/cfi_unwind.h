/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A user stack unwound in user space by the rows of cfi.h (perf's way): from the
 * registers at an event and a copy of the stack above SP, the return addresses, each frame's
 * CFA found by its row. SP, FP and RBX are followed from frame to frame (RBX for the frames
 * whose CFA it holds). Where an object has no row for a frame (JIT or hand-written code)
 * the frame pointer chain is followed instead, and counted. The walk ends with a reason.
 *
 * Pure: the rows come from the caller's find(), memory only from the copy.
 */
#ifndef SCHEDPROF_CFI_UNWIND_H
#define SCHEDPROF_CFI_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "symbols/cfi.h"

/* Why a walk ended. */
enum unwind_stop {
	UNWIND_END,	/* the outermost frame (return address undefined, or 0) */
	UNWIND_DEPTH,	/* the caller's array is full */
	UNWIND_NOOBJ,	/* an address in no object find() knows */
	UNWIND_NOCFI,	/* no row, and no frame pointer to follow */
	UNWIND_CUT,	/* the same where the object's table was cut at its limit */
	UNWIND_MEMORY,	/* a read outside the stack copy */
	UNWIND_EXPR,	/* a row of kind CFI_CFA_EXPR, CFI_CFA_REG or CFI_CFA_RA, or of
			   CFI_CFA_BX where RBX was lost by an inner frame */
	UNWIND_LOOP,	/* the CFA did not move up the stack */
	UNWIND_STOPS
};

struct unwind_regs {
	uint64_t ip, sp, bp, bx;
	uint64_t di; /* RDI at the event (CFI_CFA_RA_DI), 0: not known */
};

/* A copy of user memory [base, base + len). */
struct unwind_stack {
	uint64_t base;
	const uint8_t *data;
	size_t len;
};

/*
 * The row for address ip of the process (the frame's PC, or its return address - 1), into
 * *row: 0 and a row, 0 and NULL when ip's object has no CFI there, 1 and NULL when it has
 * CFI but none there (hand-written code that ends its FDE early: glibc's clone and clone3
 * around their system call, a leaf that pushed nothing), -E2BIG when it has no row there
 * because its table was cut at its limit, -ENOENT when ip is in no object.
 */
typedef int (*unwind_find_fn)(void *ctx, uint64_t ip, const struct cfi_row **row);

struct unwind_result {
	size_t n;		/* addresses in ips: the PC, then return addresses */
	size_t fp_frames;	/* frames found by the frame pointer, where find() had no row */
	size_t fp_cut;		/* ... of them, where the object's table was cut */
	size_t signal_frames;	/* signal frames crossed */
	uint64_t used;		/* bytes of the copy the walk read up to (its last CFA - SP) */
	enum unwind_stop stop;
};

/* Unwinds into ips (max entries, max > 0). */
void cfi_unwind(const struct unwind_regs *regs, const struct unwind_stack *stack,
		unwind_find_fn find, void *ctx, uint64_t *ips, size_t max,
		struct unwind_result *res);

/*
 * How the walk left the frame at ips[i], reduced to what a walker without rows can repeat
 * for the same address (the BPF walk of --stacks learns these, bpf/ustack.bpf.h):
 * CFA = SP or FP + cfa_off, the return address at CFA - 8, the caller's FP as fp says.
 */
enum unwind_how {
	UNWIND_HOW_SP,	   /* CFA = SP + cfa_off (a PLT entry's too, for this exact address) */
	UNWIND_HOW_FP,	   /* CFA = FP + cfa_off (a frame-pointer step where no row was) */
	UNWIND_HOW_SIGNAL, /* a signal frame: the interrupted registers in the ucontext at SP */
	UNWIND_HOW_END,	   /* the outermost frame */
	UNWIND_HOW_RA_DI,  /* CFA = SP + cfa_off, the return address in RDI (the first frame) */
	UNWIND_HOW_NONE,   /* not left: the walk stopped here (res->stop says why) or the rule
			      needs more than SP and FP (RBX) */
};

struct unwind_step {
	int32_t cfa_off;
	int16_t fp_off; /* fp == CFI_FP_AT: the caller's FP at CFA + fp_off */
	uint8_t how;	/* enum unwind_how */
	uint8_t fp;	/* enum cfi_fp */
	uint8_t exact;	/* ips[i] is a PC of its own (the leaf, or interrupted by a signal),
			   not a return address: its row is its own, not its call's */
	uint8_t pad[3];
};

/* cfi_unwind(), and in steps (max entries) how each frame of ips was left. */
void cfi_unwind_steps(const struct unwind_regs *regs, const struct unwind_stack *stack,
		      unwind_find_fn find, void *ctx, uint64_t *ips, struct unwind_step *steps,
		      size_t max, struct unwind_result *res);

/* "end", "depth", "no-object", "no-cfi", "table-cut", "memory", "expression", "loop". */
const char *unwind_stop_name(enum unwind_stop s);

#endif /* SCHEDPROF_CFI_UNWIND_H */
