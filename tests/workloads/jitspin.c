/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A stand-in for a JIT (perf maps): copies a small x86-64 countdown loop into
 * anonymous PROT_EXEC memory, names it in /tmp/perf-PID.map as a JIT runtime would
 * ("START SIZE name", hex), and runs it for about SECONDS (default 1) of CPU time.
 * usage: jitspin [SECONDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define JIT_NAME "JIT:sp_jit_hot_loop"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
#if defined(__x86_64__)
	/* mov rax, rdi; 1: dec rax; jnz 1b; ret */
	static const unsigned char code[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3 };
	double secs = argc > 1 ? atof(argv[1]) : 1.0, t0;
	uint64_t (*fn)(uint64_t);
	char path[64];
	FILE *map;
	void *mem;

	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	/* a few bytes in, as a JIT's code would sit after its header */
	memcpy((char *)mem + 64, code, sizeof(code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	fprintf(map, "%lx %zx %s\n", (unsigned long)((char *)mem + 64), sizeof(code), JIT_NAME);
	fclose(map);
	fn = (uint64_t (*)(uint64_t))((char *)mem + 64);
	t0 = now();
	while (now() - t0 < secs)
		fn(20 * 1000 * 1000);
	printf("%s\n", path);
	return 0;
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "jitspin: x86-64 only\n");
	return 77;
#endif
}
