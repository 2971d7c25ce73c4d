/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A CPU-bound workload whose hot loop is an inlined function (--lines), built
 * -O2 -g with frame pointers: main() calls the noinline inl_spin_outer(), which calls the
 * always_inline inl_spin_inner() in a loop for MS milliseconds, inlined into inl_spin_outer()
 * (DW_TAG_inlined_subroutine). About half the samples' PCs are in inl_spin_inner()'s own loop,
 * the other half in the noinline inl_spin_leaf() it calls (so the inlined call is a caller's
 * frame there). The "LINE:" comments mark the lines test_lines.sh expects: the inner loop's
 * body, its call of inl_spin_leaf(), and the call in inl_spin_outer() that inlined it.
 *
 *   inlspin MS
 *
 * Prints "inlspin: N" (the result, so that the loop is not optimized away).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) void inl_spin_tick(uint64_t *x)
{
	__asm__ volatile("" : : "r"(x) : "memory");
}

/*
 * Not inlined: its samples' stacks have the inlined call as a caller's frame. It calls
 * inl_spin_tick() so that it is no leaf function, which gcc builds without a frame pointer
 * whatever -mno-omit-leaf-frame-pointer says (gcc 12): its caller would be lost.
 */
__attribute__((noinline)) uint64_t inl_spin_leaf(uint64_t x)
{
	for (int i = 0; i < 2000000; i++)
		x = x * 2862933555777941757ULL + 3037000493ULL + (x >> 31);
	inl_spin_tick(&x);
	return x;
}

static inline __attribute__((always_inline)) uint64_t inl_spin_inner(uint64_t x)
{
	for (int i = 0; i < 2000000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL + (x >> 29); /* LINE:inner */
	return inl_spin_leaf(x); /* LINE:leafcall */
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

__attribute__((noinline)) uint64_t inl_spin_outer(uint64_t seed, uint64_t ms)
{
	uint64_t end = now_ms() + ms, x = seed;

	do {
		x = inl_spin_inner(x); /* LINE:call */
	} while (now_ms() < end);
	return x;
}

int main(int argc, char **argv)
{
	uint64_t ms = argc > 1 ? strtoull(argv[1], NULL, 10) : 500;

	printf("inlspin: %llu\n", (unsigned long long)inl_spin_outer((uint64_t)argc, ms));
	return 0;
}
