/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A symbolization target for test_elfsyms: built as PIE and non-PIE (and stripped copies) by
 * tests/meson.build. It prints the runtime address of each function ("name 0xaddr" lines),
 * then "ready", and stays alive until stdin reaches EOF so the test can read /proc/PID/maps.
 * The functions are global (exported to .dynsym with -rdynamic), distinct (noipa keeps gcc
 * from folding identical bodies), and sp_target_big is large. sp_target_local is static, so
 * only .symtab has it.
 */
#include <stdint.h>
#include <stdio.h>

#if defined(__clang__)
#define SP_NOIPA __attribute__((noinline))
#else
#define SP_NOIPA __attribute__((noipa))
#endif

volatile uint64_t sp_sink;

SP_NOIPA uint64_t sp_target_alpha(uint64_t x)
{
	return x * 3 + 1;
}

SP_NOIPA uint64_t sp_target_beta(uint64_t x)
{
	return (x ^ 0x5a5a) * 7 - 2;
}

static SP_NOIPA uint64_t sp_target_local(uint64_t x)
{
	return x / 3 + 11;
}

#define STEP(k) sp_sink = sp_sink * (k) + (x ^ (k))
#define STEP8(k) STEP(k); STEP(k + 1); STEP(k + 2); STEP(k + 3); \
	STEP(k + 4); STEP(k + 5); STEP(k + 6); STEP(k + 7)

SP_NOIPA uint64_t sp_target_big(uint64_t x)
{
	STEP8(11); STEP8(23); STEP8(37); STEP8(51); STEP8(67); STEP8(83);
	STEP8(101); STEP8(127); STEP8(151); STEP8(179);
	return sp_sink;
}

int main(void)
{
	uint64_t (*const fns[])(uint64_t) = { sp_target_alpha, sp_target_beta, sp_target_big };
	static const char *const names[] = { "sp_target_alpha", "sp_target_beta", "sp_target_big" };
	unsigned int i;
	int c;

	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		sp_sink += fns[i](i);
		printf("%s %p\n", names[i], (void *)(uintptr_t)fns[i]);
	}
	sp_sink += sp_target_local(sp_sink);
	printf("ready\n");
	fflush(stdout);
	while ((c = getchar()) != EOF)
		;
	return 0;
}
