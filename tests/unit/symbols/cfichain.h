/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The call chain of the CFI fixtures (cfitarget.c, cfistack.c): cfi_f1 -> ... -> cfi_f7 ->
 * cfi_f8, which the including file defines after this. Each level keeps a value live across
 * its call, so that it has a frame of its own, and is neither inlined nor folded.
 */
#ifndef SCHEDPROF_CFICHAIN_H
#define SCHEDPROF_CFICHAIN_H

#if defined(__clang__)
#define CFI_NOIPA __attribute__((noinline))
#else
#define CFI_NOIPA __attribute__((noipa))
#endif

CFI_NOIPA unsigned long cfi_f8(unsigned long x);

#define CFI_LEVEL(name, next)                                                                  \
	CFI_NOIPA unsigned long name(unsigned long x)                                          \
	{                                                                                      \
		unsigned long keep = x * 2654435761u;                                          \
		unsigned long r = next(x);                                                     \
		return r ^ keep;                                                               \
	}
CFI_LEVEL(cfi_f7, cfi_f8)
CFI_LEVEL(cfi_f6, cfi_f7)
CFI_LEVEL(cfi_f5, cfi_f6)
CFI_LEVEL(cfi_f4, cfi_f5)
CFI_LEVEL(cfi_f3, cfi_f4)
CFI_LEVEL(cfi_f2, cfi_f3)
CFI_LEVEL(cfi_f1, cfi_f2)

#endif /* SCHEDPROF_CFICHAIN_H */
