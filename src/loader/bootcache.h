/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What start-up learns about the running kernel (the fold configuration from kallsyms, the
 * kernel features from BTF) holds for one boot (KASLR included) and costs tens of ms to learn
 * again. It is cached in a file per kind, under the kernel release and the boot id.
 */
#ifndef SCHEDPROF_BOOTCACHE_H
#define SCHEDPROF_BOOTCACHE_H

#include <stddef.h>

/*
 * Reads dir/name (dir NULL: /run/schedprof) into data when it was written by this boot with
 * the same magic (at most 15 characters) and size. 0, -ENOENT (no valid cache) or -errno.
 */
int boot_cache_load(const char *dir, const char *name, const char *magic, void *data, size_t size);
/*
 * The same for data of any size up to max: *ret_data (malloc'd) and *ret_size. A cache file
 * is trusted only when it is a regular file of root's or this user's, writable by no one else.
 */
int boot_cache_load_alloc(const char *dir, const char *name, const char *magic, size_t max,
			  void **ret_data, size_t *ret_size);
/*
 * Writes it atomically (creating /run/schedprof, 0755, when dir is NULL), readable by its
 * writer only (0600): for what holds kernel addresses (KASLR), which a user that
 * kernel.kptr_restrict hides them from must not read here. 0 or -errno.
 */
int boot_cache_store(const char *dir, const char *name, const char *magic, const void *data,
		     size_t size);
/*
 * The same, readable by anyone (0644): for what anyone can learn anyway (what the kernel's
 * world-readable BTF says), so that a run with capabilities but not root uses root's.
 */
int boot_cache_store_shared(const char *dir, const char *name, const char *magic,
			    const void *data, size_t size);

#endif
