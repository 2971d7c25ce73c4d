/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's features (kfeatures.h) found by loading the probe programs (bpf/probes.bpf.c):
 * all of them at once, and when the kernel refuses that, one feature's at a time. Once per
 * boot: the answer is cached (kfeatures_cache_*()), and a warm start reads only the cache.
 * Needs the privileges of the trace itself.
 */
#ifndef SCHEDPROF_FEATPROBE_H
#define SCHEDPROF_FEATPROBE_H

struct sp_features;

/*
 * Probes the running kernel into f, and reads its config for the features that come from
 * there (kfeatures_config_splits_steal()): 0, or -errno when it could not tell (no privilege).
 */
int featprobe_run(struct sp_features *f);

/*
 * The features from the boot's cache, else probed and cached; -v logs them and where they
 * came from. 0 or -errno (f untouched), said in one line.
 */
int featprobe_get(struct sp_features *f);

#endif
