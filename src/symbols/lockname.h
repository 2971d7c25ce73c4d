/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Names a contended lock: "inode.i_rwsem" (the type and field that hold it, found in BPF),
 * "rq.__lock" (a runqueue), "tasklist_lock" (a static lock's kallsyms data symbol), else its
 * address. Pure functions over kallsyms and the runqueue-lock table: unit-tested.
 */
#ifndef SCHEDPROF_LOCKNAME_H
#define SCHEDPROF_LOCKNAME_H

#include <stddef.h>
#include <stdint.h>

struct ksyms;

/* How the name was found, from certain to none. */
enum lockname_source {
	LOCKNAME_TASK = 0, /* an object reached from the waiting task in BPF (or each CPU's rq) */
	LOCKNAME_LAYOUT,   /* an object recognised in BPF by a pointer that points back */
	LOCKNAME_SYMBOL,   /* a kallsyms data symbol (kernels with CONFIG_KALLSYMS_ALL) */
	LOCKNAME_ADDRESS,  /* not named */
};

struct lockname_ctx {
	const struct ksyms *ks;	  /* may be NULL */
	const uint64_t *rq_locks; /* each CPU's runqueue lock address (0 = unknown) */
	size_t nrq;
};

/* "mm_struct.mmap_lock" for an enum sp_lock_name, NULL for none or out of range. */
const char *lockname_of_id(uint32_t id);
/* "task", "layout", "symbol", "address". */
const char *lockname_source_name(enum lockname_source src);

/*
 * Writes the lock's name into buf (always NUL-terminated, truncated to len) and returns
 * how it was found. Order: the BPF name id, a runqueue lock, a data symbol ("sym" or
 * "sym+0x10", " [module]" appended for a module's), the address "0xffff...".
 */
enum lockname_source lockname_format(const struct lockname_ctx *c, uint64_t addr, uint32_t id,
				     char *buf, size_t len);

#endif
