/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Spends its time in the C library (malloc, free: Debian builds libc without frame pointers)
 * under libc_spin_churn() <- main, which are built with frame pointers: the
 * profile's -g stacks must reach them through the library's frames. Its locals are small, so
 * the caller's frame record is near the stack pointer. usage: libcspin [SECONDS]
 * Prints "libcspin: N" (the number of allocations).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *slot[1024];

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long libc_spin_churn(double secs)
{
	double end = now() + secs;
	unsigned long n = 0;
	unsigned int r = 1;

	while (now() < end) {
		for (int i = 0; i < 100000; i++) {
			unsigned int k;

			r = r * 1103515245 + 12345;
			k = (r >> 8) & 1023;
			free(slot[k]);
			slot[k] = malloc(16 + (r >> 20) % 4000);
			if (slot[k])
				memset(slot[k], 1, 16);
			n++;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	printf("libcspin: %lu\n", libc_spin_churn(argc > 1 ? atof(argv[1]) : 1));
	return 0;
}
