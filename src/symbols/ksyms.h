/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel symbol table, read from /proc/kallsyms (or a copy of it), to name kernel stack
 * frames and the addresses of static locks.
 *
 * kallsyms gives no sizes, so each symbol's size is estimated as the distance to the next higher
 * symbol of the same object (vmlinux, or one module); the last symbol of an object gets
 * KSYMS_LAST_SIZE. Section end markers (_etext, __sched_text_end, __end_rodata, _edata, _end...)
 * get size 0, so the space after them up to the next symbol is a gap that names nothing.
 *
 * Several names at one address (aliases) are ordered deterministically, best first: real names
 * before section markers, before __pfx_/__cfi_ padding symbols, before end markers; then global
 * before weak before local; then fewer leading underscores; then by name. Lookups by address
 * return the best text (or data) name at the address found.
 *
 * When every address reads as 0 (kptr_restrict, or not root) the table is "restricted": names
 * are still there, but address lookups always fail.
 */
#ifndef SCHEDPROF_KSYMS_H
#define SCHEDPROF_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* KSYM_NAME_LEN is 512 since Linux 6.1 (Rust symbols): names up to 511 chars. */
#define KSYMS_NAME_MAX 511
/* Size given to the last symbol of an object (vmlinux without an end marker, or a module). */
#define KSYMS_LAST_SIZE 4096

struct ksyms;

struct ksym {
	uint64_t addr;
	/* Estimated: the distance to the next symbol of the same object, bounded. */
	uint64_t size;
	const char *name;   /* at most KSYMS_NAME_MAX chars */
	const char *module; /* NULL for vmlinux, else the name without brackets, e.g. "ext4" */
	char type;	    /* the kallsyms type letter as read: t T w W d D b B r R ... */
};

/*
 * path NULL means /proc/kallsyms. NULL + errno on failure: fopen() errors (ENOENT, EACCES...),
 * ENOMEM, EINVAL when the file holds no parsable symbol line.
 * Malformed lines and names longer than KSYMS_NAME_MAX are skipped and counted (ksyms__skipped);
 * absolute (a/A) and undefined (U) entries are ignored.
 */
struct ksyms *ksyms__load(const char *path);
void ksyms__free(struct ksyms *ks);

/*
 * The struct ksym the lookups below return are made on demand (the table itself is compact)
 * and kept until ksyms__free(): a pointer stays valid, and the same symbol always gives the
 * same pointer. Lookups fill that cache (and the by-name index), so one thread at a time.
 * NULL also when out of memory.
 */
size_t ksyms__count(const struct ksyms *ks);
/* Sorted by address, aliases best first; NULL when i is out of range. */
const struct ksym *ksyms__at(const struct ksyms *ks, size_t i);
/*
 * The same symbol copied into *ret, nothing kept: for a walk over all of them (ksyms__at()
 * would make and keep every one). false when i is out of range. The strings belong to ks.
 */
bool ksyms__sym(const struct ksyms *ks, size_t i, struct ksym *ret);
/* By exact name; with duplicates (static functions), the one with the lowest address. */
const struct ksym *ksyms__get(const struct ksyms *ks, const char *name);

/*
 * The text symbol (t T w W) containing addr, or NULL: before the first one, past the symbol's
 * size (a gap, e.g. a data symbol or an end marker follows), or restricted.
 * *ret_offset (may be NULL) gets addr - symbol address.
 */
const struct ksym *ksyms__map_addr(const struct ksyms *ks, uint64_t addr, uint64_t *ret_offset);
/* Same for data symbols (d D b B r R, and g G s S v V), e.g. to name tasklist_lock. */
const struct ksym *ksyms__map_data(const struct ksyms *ks, uint64_t addr, uint64_t *ret_offset);

/* True when every address read as 0 (kptr_restrict, or not privileged). */
bool ksyms__restricted(const struct ksyms *ks);
/*
 * Whether the kallsyms file at path shows this process addresses, without loading it: 1 when
 * its first text symbol (t T w W) has a non-zero address, 0 when it reads 0 (hidden:
 * kptr_restrict, or not privileged). Not the first line: x86-64 kernels before 6.15 start
 * with per-CPU symbols at offsets from 0 ("0000000000000000 A fixed_percpu_data") even when
 * every address is shown. -ENODATA without a text symbol, -errno when it cannot be read.
 */
int ksyms__file_shows_addresses(const char *path);
/* Lines rejected while loading: malformed, or names longer than KSYMS_NAME_MAX. */
size_t ksyms__skipped(const struct ksyms *ks);

/*
 * The addresses of two symbols bounding a range, e.g. "__sched_text_start", "__sched_text_end".
 * 0, -ENOENT if either is missing, -EPERM if restricted, -EINVAL if end is before start.
 */
int ksyms__range(const struct ksyms *ks, const char *start_sym, const char *end_sym,
		 uint64_t *ret_start, uint64_t *ret_end);

#endif /* SCHEDPROF_KSYMS_H */
