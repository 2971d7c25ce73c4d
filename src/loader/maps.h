/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one BPF map walker: every hash map a collector reads is dumped here into raw records
 * (records.h), which the row builders turn into the model. Batch lookups where the kernel
 * has them (Linux 5.6), else get_next_key + lookup, one entry at a time.
 */
#ifndef SCHEDPROF_MAPS_H
#define SCHEDPROF_MAPS_H

#include "rows/records.h"

/*
 * Dumps every entry of the hash map fd (key and value sizes from the map; per-CPU maps give
 * one value per possible CPU, each rounded up to 8 bytes) into ret, which it initializes.
 * An entry seen but not read (deleted between get_next_key and lookup, or any lookup
 * error) is counted in ret->failed, never skipped silently. 0 or -errno; on failure ret
 * holds what was read (free it with sp_records_free).
 */
int map_dump(int fd, struct sp_records *ret);

/* How map_dump_how() walks: as map_dump() does, or one way only (for tests). */
enum map_dump_how {
	MAP_DUMP_AUTO = 0,    /* batch where the kernel has it, else one by one */
	MAP_DUMP_BATCH,	      /* batch only: -EOPNOTSUPP where the kernel lacks it */
	MAP_DUMP_ONE_BY_ONE,  /* get_next_key + lookup */
};

int map_dump_how(int fd, enum map_dump_how how, struct sp_records *ret);

/*
 * Says at -v how many entries of a view's row map and its two stack maps could not be read
 * (deleted or unreadable during the dump; the row builders count them as lost rows and
 * missing stacks).
 */
void map_dump_report(const char *view, const char *rows, const struct sp_records *row_rec,
		     const struct sp_records *stack_a, const struct sp_records *stack_b);

/*
 * The per-CPU values of key 0 of the per-CPU array fd, each of size bytes (a multiple of 8),
 * into per (ncpus of them, for ncpus possible CPUs). 0 or -errno.
 */
int map_pcpu_read(int fd, void *per, size_t size, int ncpus);

/*
 * Adds up the per-CPU values of key 0 of the per-CPU array fd into sum (size bytes, all of
 * it __u64 counters: added word by word), for ncpus possible CPUs. 0 or -errno (sum then
 * zeroed).
 */
int map_pcpu_sum(int fd, void *sum, size_t size, int ncpus);

struct bpf_map;
/*
 * Before load: each of the n maps to one entry, for a view that is not selected or not kept
 * (a preallocated map's memory, and the zeroing of it at every start, for nothing). A map the
 * skeleton lacks (NULL) is passed over.
 */
void maps_shrink_n(struct bpf_map *const *maps, size_t n);
#define maps_shrink(...)                                                                        \
	maps_shrink_n((struct bpf_map *const[]){ __VA_ARGS__ },                                  \
		      sizeof((struct bpf_map *const[]){ __VA_ARGS__ }) / sizeof(struct bpf_map *))

#endif
