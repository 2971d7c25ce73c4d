// SPDX-License-Identifier: BSD-2-Clause
/* Unwinding a copied user stack by CFI rows (cfi_unwind.h). x86-64 only. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "symbols/cfi_unwind.h"

/*
 * The kernel's rt_sigframe on x86-64: a handler returns into the trampoline with SP at the
 * struct ucontext, whose uc_mcontext.gregs (after uc_flags, uc_link and uc_stack: 40 bytes)
 * hold the interrupted registers, REG_RBP 10th, REG_RBX 11th, REG_RSP 15th, REG_RIP 16th.
 */
#define UC_GREGS 40
#define UC_RBP (UC_GREGS + 10 * 8)
#define UC_RBX (UC_GREGS + 11 * 8)
#define UC_RSP (UC_GREGS + 15 * 8)
#define UC_RIP (UC_GREGS + 16 * 8)

/* Linux's mmap_min_addr as Debian sets it (and the kernel's default): no code below */
#define UNWIND_MIN_ADDR 0x10000

/* Reads the word at addr of the copy; *used keeps the highest end read. */
static bool rd(const struct unwind_stack *s, uint64_t addr, uint64_t *v, uint64_t *used)
{
	if (addr < s->base || s->len < 8 || addr - s->base > s->len - 8)
		return false;
	memcpy(v, s->data + (addr - s->base), 8);
	if (addr - s->base + 8 > *used)
		*used = addr - s->base + 8;
	return true;
}

/*
 * The caller's value of a register that a row of rule `rule` (enum cfi_fp) saves at CFA + off,
 * from its value v in this frame: false when the copy does not hold it. A slot below SP has
 * been popped already (an epilogue whose CFI does not say so): the register holds the
 * caller's value again.
 */
static bool saved(const struct unwind_stack *s, uint8_t rule, int16_t off, uint64_t cfa,
		  uint64_t sp, uint64_t *v, bool *known, uint64_t *used)
{
	if (rule == CFI_FP_AT && cfa + (uint64_t)(int64_t)off >= sp) {
		if (!rd(s, cfa + (uint64_t)(int64_t)off, v, used))
			return false;
		*known = true;
	} else if (rule == CFI_FP_UNDEF) {
		*known = false;
	}
	return true;
}

/* Records how frame n - 1 (the last in ips) is left, when steps are asked for. */
static void step(struct unwind_step *steps, size_t n, bool exact, uint8_t how, int64_t cfa_off,
		 uint8_t fp, int16_t fp_off)
{
	if (!steps || !n)
		return;
	steps[n - 1] = (struct unwind_step){ .cfa_off = (int32_t)cfa_off, .fp_off = fp_off,
					     .how = how, .fp = fp, .exact = exact };
}

void cfi_unwind(const struct unwind_regs *regs, const struct unwind_stack *stack,
		unwind_find_fn find, void *ctx, uint64_t *ips, size_t max,
		struct unwind_result *res)
{
	cfi_unwind_steps(regs, stack, find, ctx, ips, NULL, max, res);
}

void cfi_unwind_steps(const struct unwind_regs *regs, const struct unwind_stack *stack,
		      unwind_find_fn find, void *ctx, uint64_t *ips, struct unwind_step *steps,
		      size_t max, struct unwind_result *res)
{
	uint64_t ip = regs->ip, sp = regs->sp, bp = regs->bp, bx = regs->bx;
	/* the PC itself, not a return address: its row is its own, not its call's */
	bool exact = true;
	/* RBX holds the frame's value (not lost by an inner frame's rule) */
	bool bx_known = true;
	uint64_t *u = &res->used;

	memset(res, 0, sizeof(*res));
	ips[res->n++] = ip;
	step(steps, res->n, true, UNWIND_HOW_NONE, 0, CFI_FP_UNDEF, 0);
	for (;;) {
		const struct cfi_row *row = NULL;
		uint64_t cfa, ra, nbp = bp, nbx = bx;
		bool fp_known = true;
		int rc;

		if (res->n >= max) {
			res->stop = UNWIND_DEPTH;
			return;
		}
		rc = find(ctx, exact ? ip : ip - 1, &row);
		if (rc < 0 && rc != -E2BIG) {
			res->stop = UNWIND_NOOBJ;
			return;
		}
		if (!row && rc == 1 && exact) {
			/*
			 * A PC of its own in code whose object has CFI but not here: a leaf that
			 * pushed nothing (glibc's clone3, where the parent blocks in the system
			 * call), its return address at SP
			 */
			if (!rd(stack, sp, &ra, u)) {
				res->stop = UNWIND_MEMORY;
				return;
			}
			/*
			 * ... but a word below the lowest address a process can map is no
			 * return address: a program's first instruction (the loader's _start,
			 * which has no CFI, as execve returns), where SP holds argc
			 */
			if (ra < UNWIND_MIN_ADDR) {
				step(steps, res->n, exact, UNWIND_HOW_END, 0, CFI_FP_UNDEF, 0);
				res->stop = UNWIND_END;
				return;
			}
			cfa = sp + 8;
			step(steps, res->n, exact, UNWIND_HOW_SP, 8, CFI_FP_SAME, 0);
		} else if (!row) {
			/* no CFI here: a frame pointer chain, if there is one */
			if (!bp || bp < sp) {
				res->stop = rc ? UNWIND_CUT : UNWIND_NOCFI;
				return;
			}
			if (!rd(stack, bp, &nbp, u) || !rd(stack, bp + 8, &ra, u)) {
				res->stop = UNWIND_MEMORY;
				return;
			}
			cfa = bp + 16;
			step(steps, res->n, exact, UNWIND_HOW_FP, 16, CFI_FP_AT, -16);
			/* where a frame without CFI keeps the caller's RBX is not known */
			bx_known = false;
			res->fp_frames++;
			if (rc)
				res->fp_cut++;
		} else {
			switch (row->cfa) {
			case CFI_CFA_SP:
				cfa = sp + (uint64_t)(int64_t)row->cfa_off;
				break;
			case CFI_CFA_FP:
				cfa = bp + (uint64_t)(int64_t)row->cfa_off;
				break;
			case CFI_CFA_PLT:
				cfa = sp + 8 + ((ip & 15) >= (uint64_t)row->cfa_off ? 8 : 0);
				break;
			case CFI_CFA_BX:
				if (!bx_known) {
					res->stop = UNWIND_EXPR;
					return;
				}
				cfa = bx + (uint64_t)(int64_t)row->cfa_off;
				break;
			case CFI_CFA_SIGNAL:
				if (!rd(stack, sp + UC_RBP, &bp, u) || !rd(stack, sp + UC_RBX, &bx, u) ||
				    !rd(stack, sp + UC_RIP, &ip, u) || !rd(stack, sp + UC_RSP, &sp, u)) {
					res->stop = UNWIND_MEMORY;
					return;
				}
				/* the interrupted PC is exact: no call precedes it */
				step(steps, res->n, exact, UNWIND_HOW_SIGNAL, 0, CFI_FP_UNDEF, 0);
				bx_known = true;
				res->signal_frames++;
				ips[res->n++] = ip;
				step(steps, res->n, true, UNWIND_HOW_NONE, 0, CFI_FP_UNDEF, 0);
				exact = true;
				continue;
			case CFI_CFA_END:
				step(steps, res->n, exact, UNWIND_HOW_END, 0, CFI_FP_UNDEF, 0);
				res->stop = UNWIND_END;
				return;
			case CFI_CFA_RA_DI:
				/* only where the event's registers are this frame's */
				if (res->n != 1 || !regs->di) {
					res->stop = UNWIND_EXPR;
					return;
				}
				cfa = sp + (uint64_t)(int64_t)row->cfa_off;
				break;
			default:
				res->stop = UNWIND_EXPR;
				return;
			}
			if (row->cfa == CFI_CFA_RA_DI) {
				ra = regs->di;
			} else if (cfa <= sp) {
				res->stop = UNWIND_LOOP;
				return;
			} else if (!rd(stack, cfa - 8, &ra, u)) {
				res->stop = UNWIND_MEMORY;
				return;
			}
			if (!saved(stack, row->fp, row->fp_off, cfa, sp, &nbp, &fp_known, u) ||
			    !saved(stack, row->bx, row->bx_off, cfa, sp, &nbx, &bx_known, u)) {
				res->stop = UNWIND_MEMORY;
				return;
			}
			if (!fp_known)
				nbp = 0;
			/* a frame by SP or FP alone; a PLT entry's CFA for this very address */
			if (row->cfa != CFI_CFA_BX)
				step(steps, res->n, exact,
				     row->cfa == CFI_CFA_FP	 ? UNWIND_HOW_FP
				     : row->cfa == CFI_CFA_RA_DI ? UNWIND_HOW_RA_DI
								 : UNWIND_HOW_SP,
				     (int64_t)(cfa - (row->cfa == CFI_CFA_FP ? bp : sp)), row->fp,
				     row->fp_off);
		}
		if (!ra) {
			res->stop = UNWIND_END;
			return;
		}
		ips[res->n++] = ra;
		step(steps, res->n, false, UNWIND_HOW_NONE, 0, CFI_FP_UNDEF, 0);
		ip = ra;
		sp = cfa;
		bp = nbp;
		bx = nbx;
		exact = false;
	}
}

const char *unwind_stop_name(enum unwind_stop s)
{
	static const char *const names[UNWIND_STOPS] = {
		[UNWIND_END] = "end",	      [UNWIND_DEPTH] = "depth",
		[UNWIND_NOOBJ] = "no-object", [UNWIND_NOCFI] = "no-cfi",
		[UNWIND_CUT] = "table-cut",   [UNWIND_MEMORY] = "memory",
		[UNWIND_EXPR] = "expression", [UNWIND_LOOP] = "loop",
	};

	return (unsigned)s < UNWIND_STOPS ? names[s] : "?";
}
