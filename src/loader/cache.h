/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What start-up learns about the running kernel holds for one boot (KASLR included) and costs
 * milliseconds to learn again: it is kept in /run/schedprof, one file per kind, all in one
 * format. A file is used only when it was written for this boot (its boot id), this kernel
 * (its release) and this build of schedprof (the executable's GNU build-id), when its data
 * is whole (its size and a hash of it), and when it is a regular file of root's or this
 * user's that no one else may write (a cache is trusted only as far as its writer is: a run
 * with capabilities but not root reads root's). Anything else is no cache: the caller learns
 * it again and writes it anew.
 *
 * A run's results never depend on a cache: each kind holds what the run would learn anyway,
 * from what any reader of it may learn (the kernel's world-readable BTF: shared, 0644), or
 * only for its writer (kernel addresses, hidden from a user without CAP_SYSLOG: 0600).
 */
#ifndef SCHEDPROF_CACHE_H
#define SCHEDPROF_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CACHE_DIR "/run/schedprof"

enum cache_kind {
	CACHE_FOLD,	 /* the scheduler's and locks' text ranges (foldcfg.h): addresses */
	CACHE_FEATURES,	 /* the kernel's BPF features (kfeatures.h) */
	CACHE_PREEMPT,	 /* where the preempt count is (views/schedules/collect.c) */
	CACHE_ATTACH,	 /* the attach targets' BTF IDs (attach_ids.h) */
	CACHE_CORE_BTF,	 /* the BTF CO-RE relocates against (corebtf.h) */
	CACHE_CFI,	 /* user objects' unwind tables (symbols/cfi_pack.h): a file per object */
	CACHE__N,
};

/* Its file's name in the directory ("fold.cache"), and what it holds, for `cache show`. */
const char *cache_file_name(enum cache_kind kind);
const char *cache_what(enum cache_kind kind);

/* --no-cache: from now on nothing is read or written (every load is -ENOENT). */
void cache_disable(void);
bool cache_disabled(void);

/*
 * The data of kind in dir (NULL: CACHE_DIR), at most max bytes: *ret_data (malloc'd) and
 * *ret_size. 0, -ENOENT (no valid cache) or -ENOMEM.
 */
int cache_load(const char *dir, enum cache_kind kind, size_t max, void **ret_data,
	       size_t *ret_size);
/* The same for data of exactly size bytes, into data. */
int cache_load_fixed(const char *dir, enum cache_kind kind, void *data, size_t size);
/*
 * Writes it atomically (creating CACHE_DIR, root's 0755, when dir is NULL), readable by
 * anyone or by its writer only as the kind says. 0 (also when disabled) or -errno.
 */
int cache_store(const char *dir, enum cache_kind kind, const void *data, size_t size);

/*
 * Kinds of a file per entry (CACHE_CFI), named KIND-ENTRY.cache, entry of [0-9a-z-] and at
 * most 96 characters: the same checks as cache_load(). A file read is marked used (its
 * mtime), and cache_store_entry() removes the kind's least recently used files while the
 * kind's would pass max_total bytes. 0, -ENOENT, -EINVAL (entry), -EFBIG (the entry alone
 * passes max_total), or as cache_load() and cache_store().
 */
int cache_load_entry(const char *dir, enum cache_kind kind, const char *entry, size_t max,
		     void **ret_data, size_t *ret_size);
int cache_store_entry(const char *dir, enum cache_kind kind, const char *entry,
		      const void *data, size_t size, uint64_t max_total);

/*
 * `schedprof cache show`: each file of dir, whether this run would use it and why not.
 * 0 or -errno (-EIO: a write error on f).
 */
int cache_show(const char *dir, FILE *f);
/* `schedprof cache clear`: removes schedprof's files of dir; how many in *ret_n. 0 or -errno. */
int cache_clear(const char *dir, unsigned int *ret_n);

#endif
