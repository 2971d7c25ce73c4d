/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Keeps glibc's allocator busy for about SECONDS (default 1): most of its CPU time goes to
 * libc's internal functions (_int_malloc, _int_free, ...), which only libc6-dbg's .symtab
 * names (they are not in libc's .dynsym). usage: mallocspin [SECONDS]
 * The allocator's perturbation (MALLOC_PERTURB_, which meson test sets) is turned off: it
 * fills every block with memset, which would then take up to half of the samples.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define SLOTS 4096

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static void *slot[SLOTS];
	double secs = argc > 1 ? atof(argv[1]) : 1.0, t0 = now();
	uint32_t x = 12345;

	mallopt(M_PERTURB, 0);

	while (now() - t0 < secs) {
		for (int i = 0; i < 100000; i++) {
			x = x * 1103515245 + 12345;
			free(slot[x % SLOTS]);
			/* sizes past the tcache's (1032 bytes) reach _int_malloc and _int_free */
			slot[x % SLOTS] = malloc(1100 + (x >> 16) % 3000);
		}
	}
	for (int i = 0; i < SLOTS; i++)
		free(slot[i]);
	return 0;
}
