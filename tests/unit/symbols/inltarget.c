/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A DWARF target for test_debuginfo, built with -O2 -g: sp_inl_outer() calls the always_inline
 * sp_inl_inner() once, whose body holds the global label sp_inl_here (the test finds its
 * address with nm). The "LINE:" comments mark the lines the test expects: the label inside the
 * inlined function, and the call that inlined it.
 */
#include <stdint.h>
#include <stdio.h>

volatile uint64_t sp_inl_sink;

static inline __attribute__((always_inline)) uint64_t sp_inl_inner(uint64_t x)
{
	sp_inl_sink += x * 7;
	__asm__ volatile(".globl sp_inl_here\nsp_inl_here:\n\tnop" ::: "memory"); /* LINE:inner */
	return sp_inl_sink ^ x;
}

__attribute__((noinline)) uint64_t sp_inl_outer(uint64_t x)
{
	uint64_t r = x + 1;

	r += sp_inl_inner(r); /* LINE:call */
	return r * 5;
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("%lu\n", (unsigned long)sp_inl_outer((uint64_t)argc));
	return 0;
}
