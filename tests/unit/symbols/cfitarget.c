/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CFI compiler's fixture (test_cfi.c), built by tests/meson.build with gcc and clang at
 * -O2 -fomit-frame-pointer, lazily bound (so that .plt has its CFA expression), split into a
 * stripped copy and a debug file, and with its .eh_frame overwritten.
 * main -> cfi_f1 -> ... -> cfi_f8 are ordinary compiled code. The cfi_rule_* functions are
 * written in assembly, each with the one CFI rule that its name says, so that every kind of
 * row is present whatever the compiler does; cfi_nocfi and cfi_blob (64 KB) have no CFI.
 * None of them is run.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cfichain.h"

volatile unsigned long cfi_sink;

CFI_NOIPA unsigned long cfi_f8(unsigned long x)
{
	unsigned long i;

	for (i = 0; i < x; i++)
		cfi_sink += i;
	return cfi_sink;
}

/*
 * CFA = rsp + 8, then + 16 past a push; CFA = rbp + 16 with rbp saved at CFA - 16; CFA by an
 * expression (*(rsp + 8)); CFA = r12 + 8; CFA = rbx + 16 with rbx saved at CFA - 16 (a
 * realigned stack); the return address saved elsewhere than CFA - 8;
 * the return address undefined (an outermost frame); a signal frame; no CFI.
 */
__asm__(".text\n"
	".globl cfi_rule_sp\n.type cfi_rule_sp,@function\ncfi_rule_sp:\n"
	".cfi_startproc\n"
	"push %rbx\n.cfi_adjust_cfa_offset 8\n.cfi_offset rbx, -16\n"
	"pop %rbx\n.cfi_adjust_cfa_offset -8\n.cfi_restore rbx\n"
	"ret\n.cfi_endproc\n.size cfi_rule_sp, .-cfi_rule_sp\n"

	".globl cfi_rule_fp\n.type cfi_rule_fp,@function\ncfi_rule_fp:\n"
	".cfi_startproc\n"
	"push %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset rbp, -16\n"
	"mov %rsp, %rbp\n.cfi_def_cfa_register rbp\n"
	"nop\nnop\n"
	"leave\n.cfi_def_cfa rsp, 8\n"
	"ret\n.cfi_endproc\n.size cfi_rule_fp, .-cfi_rule_fp\n"

	".globl cfi_rule_expr\n.type cfi_rule_expr,@function\ncfi_rule_expr:\n"
	".cfi_startproc\n"
	/* DW_CFA_def_cfa_expression, 3 bytes: DW_OP_breg7 8, DW_OP_deref */
	".cfi_escape 0x0f, 0x03, 0x77, 0x08, 0x06\n"
	"ret\n.cfi_endproc\n.size cfi_rule_expr, .-cfi_rule_expr\n"

	".globl cfi_rule_reg\n.type cfi_rule_reg,@function\ncfi_rule_reg:\n"
	".cfi_startproc\n"
	".cfi_def_cfa r12, 8\n"
	"ret\n.cfi_endproc\n.size cfi_rule_reg, .-cfi_rule_reg\n"

	/* as ld.so's _dl_runtime_resolve: the entry SP kept in RBX, the stack realigned */
	".globl cfi_rule_bx\n.type cfi_rule_bx,@function\ncfi_rule_bx:\n"
	".cfi_startproc\n"
	"push %rbx\n.cfi_adjust_cfa_offset 8\n.cfi_offset rbx, -16\n"
	"mov %rsp, %rbx\n.cfi_def_cfa_register rbx\n"
	"and $-64, %rsp\n"
	"mov %rbx, %rsp\n.cfi_def_cfa_register rsp\n"
	"pop %rbx\n.cfi_adjust_cfa_offset -8\n.cfi_restore rbx\n"
	"ret\n.cfi_endproc\n.size cfi_rule_bx, .-cfi_rule_bx\n"

	".globl cfi_rule_ra\n.type cfi_rule_ra,@function\ncfi_rule_ra:\n"
	".cfi_startproc\n"
	".cfi_offset rip, -16\n"
	"ret\n.cfi_endproc\n.size cfi_rule_ra, .-cfi_rule_ra\n"

	/* glibc's __vfork: the return address popped into RDI around the system call */
	".globl cfi_rule_ra_di\n.type cfi_rule_ra_di,@function\ncfi_rule_ra_di:\n"
	".cfi_startproc\n"
	"pop %rdi\n.cfi_adjust_cfa_offset -8\n.cfi_register rip, rdi\n"
	"nop\n"
	"push %rdi\n.cfi_adjust_cfa_offset 8\n.cfi_rel_offset rip, 0\n"
	"ret\n.cfi_endproc\n.size cfi_rule_ra_di, .-cfi_rule_ra_di\n"

	".globl cfi_rule_end\n.type cfi_rule_end,@function\ncfi_rule_end:\n"
	".cfi_startproc\n"
	".cfi_undefined rip\n"
	"ret\n.cfi_endproc\n.size cfi_rule_end, .-cfi_rule_end\n"

	".globl cfi_rule_signal\n.type cfi_rule_signal,@function\ncfi_rule_signal:\n"
	".cfi_startproc\n.cfi_signal_frame\n"
	"nop\n"
	"ret\n.cfi_endproc\n.size cfi_rule_signal, .-cfi_rule_signal\n"

	".globl cfi_nocfi\n.type cfi_nocfi,@function\ncfi_nocfi:\n"
	"nop\nnop\nnop\nnop\nnop\nnop\nnop\nnop\n"
	"ret\n.size cfi_nocfi, .-cfi_nocfi\n"

	/* 64 KB of code without CFI (as JIT stubs or hand-written code), then a function with */
	".globl cfi_blob\n.type cfi_blob,@function\ncfi_blob:\n"
	".fill 65536, 1, 0x90\nret\n.size cfi_blob, .-cfi_blob\n"
	".globl cfi_after_blob\n.type cfi_after_blob,@function\ncfi_after_blob:\n"
	".cfi_startproc\nret\n.cfi_endproc\n.size cfi_after_blob, .-cfi_after_blob\n");

int main(int argc, char **argv)
{
	(void)argv;
	/* a call through the PLT */
	printf("%lu\n", cfi_f1((unsigned long)argc));
	return 0;
}
