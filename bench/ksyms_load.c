/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench/ksyms_load.c -- the kallsyms table (src/symbols/ksyms.c) of the running kernel: the
 * memory one load keeps (RSS growth, its peak, malloc'ed bytes) and the load time (min and
 * median of N loads). Built against a build's core library by bench/rss.sh:
 *   cc -O2 -D_GNU_SOURCE -Isrc bench/ksyms_load.c build/src/libsp{symbols,model,base}.a \
 *      -lelf -ldw -lz -liberty -ldl -o ksyms_load && sudo ./ksyms_load [N]
 * LOOKUPS=1 also times 1M address lookups and a lookup by name of every 7th symbol.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "symbols/ksyms.h"

static long rss_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = atol(line + strlen(key) + 1);
	fclose(f);
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 15;
	double t[64];
	long r0 = rss_kb("VmRSS"), h0 = rss_kb("VmHWM");
	struct mallinfo2 m0 = mallinfo2(), m1;
	struct ksyms *ks = ksyms__load(NULL);
	long r1 = rss_kb("VmRSS"), h1 = rss_kb("VmHWM");

	if (!ks) {
		perror("ksyms__load(/proc/kallsyms)");
		return 1;
	}
	m1 = mallinfo2();
	printf("symbols %zu: RSS +%ld KB (peak +%ld KB), malloc'ed in use +%zu KB (arena %zu + mmapped %zu)\n",
	       ksyms__count(ks), r1 - r0, h1 - h0,
	       (m1.uordblks + m1.hblkhd - m0.uordblks - m0.hblkhd) / 1024, m1.uordblks / 1024,
	       m1.hblkhd / 1024);
	if (getenv("LOOKUPS")) {
		double a = now();
		size_t found = 0;
		const struct ksym *s0 = ksyms__at(ks, 0), *sl = ksyms__at(ks, ksyms__count(ks) - 1);
		uint64_t lo = s0->addr, hi = sl->addr;
		for (int i = 0; i < 1000000; i++)
			found += ksyms__map_addr(ks, lo + (hi - lo) / 1000000 * i, NULL) != NULL;
		printf("1M map_addr: %.1f ms (%zu found), RSS %ld KB\n", now() - a, found, rss_kb("VmRSS") - r0);
		a = now();
		found = 0;
		for (size_t i = 0; i < ksyms__count(ks); i += 7)
			found += ksyms__get(ks, ksyms__at(ks, i)->name) != NULL;
		printf("gets: %.1f ms (%zu found), RSS %ld KB\n", now() - a, found, rss_kb("VmRSS") - r0);
	}
	ksyms__free(ks);
	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++) {
		double a = now();

		ks = ksyms__load(NULL);
		t[i] = now() - a;
		ksyms__free(ks);
	}
	qsort(t, n, sizeof(t[0]), cmpd);
	printf("load: min %.2f ms, median %.2f ms (%d runs)\n", t[0], t[n / 2], n);
	return 0;
}
