/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The unwind tables kept between runs in the per-boot cache (CACHE_CFI, loader/cache.h), as
 * the store a ucfi reads and writes them through (symbols/ucfi.h), for whichever module
 * unwinds copies: -v names each table read or compiled, and what could not be kept is
 * counted.
 */
#ifndef SCHEDPROF_CFI_STORE_H
#define SCHEDPROF_CFI_STORE_H

#include <stdint.h>
#include "symbols/ucfi.h"

struct cfi_store {
	struct ucfi_store store;
	const char *who;      /* the view named in -v's lines */
	uint64_t table_bytes; /* the cache's bound for all tables */
	uint64_t failed;      /* tables not kept, and the last error */
	int err;
};

/*
 * Sets s up; returns the store for ucfi_opts, or NULL under --no-cache (no build-id read,
 * nothing packed). table_bytes: 0 is UCFI_DEF_BYTES.
 */
const struct ucfi_store *cfi_store_init(struct cfi_store *s, const char *who,
					uint64_t table_bytes);

#endif
