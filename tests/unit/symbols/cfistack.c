/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The unwinder's fixture (test_cfi_unwind.c), built -O2 -fomit-frame-pointer by
 * tests/meson.build: `cfistack OUT [signal]` calls main -> cfi_f1 -> ... -> cfi_f8 ->
 * cfi_dump (with "signal": cfi_f8 sends itself SIGUSR1, whose handler calls cfi_dump), which
 * writes its registers and a copy of its stack to OUT and /proc/self/maps to OUT.maps, as an
 * event's copy of the user stack would be taken.
 * OUT: struct { uint64_t ip, sp, bp, len; } then len bytes of the stack from sp up.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfichain.h"

static const char *out_path;
static unsigned char stack_copy[1 << 20];
volatile unsigned long cfi_sink;

/* The end of the mapping holding addr, from /proc/self/maps; 0 when none. */
static uint64_t mapping_end(uint64_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t lo, hi, end = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && addr >= lo && addr < hi)
			end = hi;
	if (f)
		fclose(f);
	return end;
}

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "r"), *out = fopen(to, "w");
	char buf[4096];
	size_t n;

	if (!in || !out)
		exit(1);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			exit(1);
	fclose(in);
	if (fclose(out))
		exit(1);
}

CFI_NOIPA void cfi_dump(void)
{
	uint64_t hdr[4], end = mapping_end((uint64_t)(uintptr_t)&hdr);
	char maps[4096];
	FILE *f;

	/* what the event's registers would be, here */
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(hdr[0]), "=r"(hdr[1]), "=r"(hdr[2]));
	hdr[3] = end - hdr[1];
	if (!end || hdr[3] > sizeof(stack_copy))
		exit(1);
	memcpy(stack_copy, (void *)(uintptr_t)hdr[1], hdr[3]);
	f = fopen(out_path, "w");
	if (!f || fwrite(hdr, sizeof(hdr), 1, f) != 1 || fwrite(stack_copy, 1, hdr[3], f) != hdr[3] ||
	    fclose(f))
		exit(1);
	snprintf(maps, sizeof(maps), "%s.maps", out_path);
	copy_file("/proc/self/maps", maps);
}

static void on_signal(int sig)
{
	/* not a tail call: the handler keeps its frame */
	cfi_dump();
	cfi_sink += (unsigned long)sig;
}

CFI_NOIPA unsigned long cfi_f8(unsigned long x)
{
	if (x & 1)
		raise(SIGUSR1);
	else
		cfi_dump();
	return cfi_sink + x;
}


int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	out_path = argv[1];
	signal(SIGUSR1, on_signal);
	cfi_sink = cfi_f1(argc > 2 && !strcmp(argv[2], "signal"));
	return 0;
}
