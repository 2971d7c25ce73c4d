/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CPU quotas and steal from the kernel's text files, without reading them: cgroup v1
 * cpu.cfs_quota_us/cpu.cfs_period_us, v2 cpu.max, either's cpu.stat, and /proc/stat's steal
 * per CPU. The collector (collect/quota.c) reads the files; the unit tests give fixtures.
 */
#ifndef SCHEDPROF_CGQUOTA_H
#define SCHEDPROF_CGQUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/model.h"

/*
 * v2 cpu.max ("max 100000", "20000 100000"): *ret_quota_us 0 for "max" (no quota). 0 or
 * -EINVAL.
 */
int cgq_parse_cpu_max(const char *text, uint64_t *ret_quota_us, uint64_t *ret_period_us);
/* v1 cpu.cfs_quota_us ("-1": none, 0 returned) or cpu.cfs_period_us. 0 or -EINVAL. */
int cgq_parse_us(const char *text, uint64_t *ret_us);
/*
 * cpu.stat: nr_throttled and the throttled time in ns (v1 throttled_time is ns, v2
 * throttled_usec is µs). 0, or -ENOENT when it has neither.
 */
int cgq_parse_cpu_stat(const char *text, uint64_t *ret_nr, uint64_t *ret_throttled_ns);
/*
 * /proc/stat's steal per CPU ("cpuN" lines, the 8th value, in clock ticks of hz per second)
 * into *ret (malloc'd, by CPU number as listed). 0, -EINVAL or -ENOMEM.
 */
int cgq_parse_steal(const char *text, long hz, struct sp_cpu_steal **ret, size_t *ret_n);
/*
 * The steal of the run: end - start per CPU (a CPU missing at the start counts from 0),
 * into s (its cpus and steal_ns; present set). 0 or -ENOMEM.
 */
int cgq_steal_delta(struct sp_steal *s, const struct sp_cpu_steal *start, size_t nstart,
		    const struct sp_cpu_steal *end, size_t nend);
/* Sorts b's throttlers by throttled_ns, desc (then path). */
void cgq_sort_throttlers(struct sp_budget *b);

#endif
