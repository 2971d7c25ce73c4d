/* SPDX-License-Identifier: BSD-2-Clause */
/* Builds the caller-folding configuration (include/schedprof/fold.h) from kallsyms. */
#ifndef SCHEDPROF_FOLDCFG_H
#define SCHEDPROF_FOLDCFG_H

#include <linux/types.h>
#include "schedprof/fold.h"

struct ksyms;

/* 0, or -ENOENT when the kernel's __sched_text bounds are missing. */
int fold_cfg_build(const struct ksyms *ks, struct sp_fold_cfg *cfg);
/*
 * The configuration depends only on the running kernel's addresses, fixed for one boot
 * (KASLR included), while reading /proc/kallsyms costs the kernel a walk of every symbol. It
 * is cached in dir (NULL: /run/schedprof) under the boot id (cache.h), so start-up does
 * not wait for kallsyms after the first run of a boot. 0, -ENOENT (no valid cache) or -errno.
 */
int fold_cfg_cache_load(const char *dir, struct sp_fold_cfg *cfg);
int fold_cfg_cache_store(const char *dir, const struct sp_fold_cfg *cfg);

#endif
