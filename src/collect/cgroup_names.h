/* SPDX-License-Identifier: BSD-2-Clause */
/* cgroup v2 ids (the kernfs node ids BPF reads) named by their paths below the v2 mount. */
#ifndef SCHEDPROF_COLLECT_CGROUP_NAMES_H
#define SCHEDPROF_COLLECT_CGROUP_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include "model/model.h"

/* Where cgroup v2 is mounted: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid system. */
void cgroup2_mount(char *buf, size_t len);

/*
 * Names n ids: names[i] becomes the path of ids[i] below the v2 mount ("/" for its root),
 * allocated, or stays NULL (no such cgroup now: removed since, or id 0). 0 or -ENOMEM.
 */
int cgroup2_names(const uint64_t *ids, size_t n, char **names);

/*
 * The cgroups of v's takers (its rows' and its summed ones) that have none yet, named by
 * their cgroup_id; those not found stay unnamed (null). 0 or -ENOMEM.
 */
int cgroup2_name_takers(struct sp_sched_view *v);

#endif
