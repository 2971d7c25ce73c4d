/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one binary search of the symbol tables (ELF symbols, perf map entries, DWARF unit
 * ranges): arrays of structs sorted by a uint64_t start address, searched for where an
 * address would go.
 */
#ifndef SCHEDPROF_ADDRSEARCH_H
#define SCHEDPROF_ADDRSEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The index of the first of the n elements (each size bytes, sorted by the uint64_t at byte
 * key_off) whose key is greater than addr; n when none is. The candidates that may contain
 * addr are the ones before it.
 */
static inline size_t addr_upper_bound(const void *base, size_t n, size_t size, size_t key_off,
				      uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t key;

		memcpy(&key, (const char *)base + mid * size + key_off, sizeof(key));
		if (key <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif /* SCHEDPROF_ADDRSEARCH_H */
