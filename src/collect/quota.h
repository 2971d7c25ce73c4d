/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CPU quotas and steal for the schedules view's budget: the cgroups with a CFS quota at the
 * start (so BPF checks throttling only when there is one), their cpu.stat over the run, the
 * throttled cgroups named from the ids BPF kept, and /proc/stat's steal over the run.
 */
#ifndef SCHEDPROF_COLLECT_QUOTA_H
#define SCHEDPROF_COLLECT_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/model.h"
#include "rows/records.h"

struct cgq_quota {
	char *path;
	uint64_t quota_us, period_us;
	uint64_t nr0, throttled0; /* cpu.stat at the start */
};

struct cgq_state {
	char *root; /* the mount of the hierarchy that has the cpu controller; NULL: none */
	bool v2;
	struct cgq_quota *q;
	size_t nq;
	struct sp_cpu_steal *steal0; /* /proc/stat at the start */
	size_t nsteal0;
	bool has_steal0;
};

/* Finds the cpu controller's hierarchy and the cgroups in it with a quota. 0 or -errno. */
int cgq_scan(struct cgq_state *st);
/* /proc/stat's steal now, as the run's start. */
void cgq_steal_start(struct cgq_state *st);
/*
 * The budget's throttlers from cg_ns (__u64 cgroup id -> __u64 throttled ns): each id's
 * directory, its nearest ancestor with a quota, that one's cpu.stat over the run; and the
 * steal over the run. 0 or -ENOMEM.
 */
int cgq_fill(struct cgq_state *st, const struct sp_records *cg_ns, struct sp_budget *b);
void cgq_free(struct cgq_state *st);

#endif
