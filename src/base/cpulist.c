/* SPDX-License-Identifier: BSD-2-Clause */
/* CPU list parsing (see cpulist.h): a bitmap of CPULIST_MAX_CPU + 1 bits, then the set bits. */
#include "base/cpulist.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool parse_cpu(const char **p, unsigned int *ret)
{
	const char *s = *p;
	unsigned int v = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (unsigned int)(*s - '0');
		if (v > CPULIST_MAX_CPU)
			return false;
	}
	*p = s;
	*ret = v;
	return true;
}

int cpulist_parse(const char *s, int **ret_cpus, size_t *ret_n)
{
	uint8_t set[(CPULIST_MAX_CPU + 1) / 8] = { 0 };
	const char *p = s;
	size_t n = 0, k = 0;
	int *cpus;

	for (;;) {
		unsigned int lo, hi;

		if (!parse_cpu(&p, &lo))
			return -EINVAL;
		hi = lo;
		if (*p == '-') {
			p++;
			if (!parse_cpu(&p, &hi) || hi < lo)
				return -EINVAL;
		}
		for (unsigned int c = lo; c <= hi; c++) {
			if (!(set[c / 8] & (1u << (c % 8))))
				n++;
			set[c / 8] |= (uint8_t)(1u << (c % 8));
		}
		if (*p != ',')
			break;
		p++;
	}
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	cpus = calloc(n, sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	for (unsigned int c = 0; c <= CPULIST_MAX_CPU; c++)
		if (set[c / 8] & (1u << (c % 8)))
			cpus[k++] = (int)c;
	*ret_cpus = cpus;
	*ret_n = n;
	return 0;
}

int cpulist_read(const char *path, int **ret_cpus, size_t *ret_n)
{
	char buf[4096];
	size_t len;
	FILE *f;
	int err;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (err)
		return err;
	buf[len] = 0;
	return cpulist_parse(buf, ret_cpus, ret_n);
}
