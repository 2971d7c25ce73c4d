/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Separate debug files from debuginfod servers (DEBUGINFOD_URLS), through libdebuginfod loaded
 * with dlopen() on first use: schedprof runs without it, and then this finds nothing. The files
 * land in libdebuginfod's cache ($DEBUGINFOD_CACHE_PATH, else ~/.cache/debuginfod_client), so
 * a second run (or `report` later) finds them without the network.
 *
 * Not thread-safe: one client for the process, created on first use.
 */
#ifndef SCHEDPROF_DEBUGINFOD_H
#define SCHEDPROF_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* DEBUGINFOD_URLS is set and not empty. */
bool sp_debuginfod_enabled(void);
/*
 * The path of the debug file of a build-id, fetched or from the cache: 0 and *ret_path
 * (malloc'd), -ENOSYS (disabled, or libdebuginfod missing), -ENOENT (the servers do not have it),
 * -ENOMEM, or another -errno from libdebuginfod.
 */
int sp_debuginfod_find_debuginfo(const uint8_t *id, size_t id_len, char **ret_path);

#endif /* SCHEDPROF_DEBUGINFOD_H */
