/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An object's unwind rows (symbols/cfi.h) kept in the per-boot cache (bootcache.h) under its
 * build id, so that a run after the first does not compile them again (cc1: 441669 rows, 10
 * MB, 0.45 s of CPU). A file the cache holds is used only when its rows are well formed
 * (sorted, not overlapping, known kinds); otherwise the object is compiled again and the file
 * replaced. Objects without a build id are compiled every time.
 */
#ifndef SCHEDPROF_CFI_CACHE_H
#define SCHEDPROF_CFI_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "cfi.h"

/*
 * The rows of path (with debug_path's .debug_frame; NULL: none) into *t, from dir's cache
 * (NULL: the boot cache's directory) or compiled and then stored there; *cached (may be
 * NULL) says which. The same returns as cfi_compile(); a cached table of more than max_rows
 * rows gives -E2BIG like a compiled one. A cache that cannot be written loses nothing but time.
 */
int cfi_cache_get(const char *dir, const char *path, const char *debug_path, size_t max_rows,
		  struct cfi_table *t, bool *cached);

#endif /* SCHEDPROF_CFI_CACHE_H */
