/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The checks `schedprof trace` makes before it loads or launches anything, so that a run is
 * never lost at its end for a reason known at its start: the capabilities, whether
 * /proc/kallsyms gives addresses, and whether the maps that --max-* size fit in memory.
 * Each logs its one line itself (these are the CLI's checks, not a library's).
 */
#ifndef SCHEDPROF_PREFLIGHT_H
#define SCHEDPROF_PREFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include "collect/trace.h"

struct bpf_object;

/*
 * CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN for either, in the effective set (uid 0 alone is
 * not enough: capsh --drop, containers). 0, or -EPERM after one line naming what is missing.
 */
int preflight_caps(void);

/*
 * Whether /proc/kallsyms gives this process addresses (CAP_SYSLOG, unless
 * kernel.perf_event_paranoid <= 1 with kernel.kptr_restrict = 0). If not, says so up front
 * in one warning (the report then shows kernel functions as addresses: docs/security.md)
 * and sets *ret_warned; with strict it refuses instead: -EPERM. 0 otherwise.
 */
int preflight_kallsyms(bool strict, bool *ret_warned);

/* Why /proc/kallsyms gives no addresses, for a message: "this process lacks CAP_SYSLOG (...)". */
void preflight_kallsyms_why(char *buf, size_t len);

/*
 * Why perf_event_open() was refused (err -EACCES or -EPERM), for the end of a message: with
 * kernel.perf_event_paranoid above 2 (Debian's default 3), Debian's kernels let only
 * CAP_SYS_ADMIN open perf events, CAP_PERFMON or not. "" when that is not the case.
 */
void preflight_perf_why(int err, char *buf, size_t len);

/*
 * The memory the object's maps can take once full (max_entries x (key + value + the kernel's
 * per-entry overhead), plus hash buckets), against half of MemAvailable: the other half is
 * for their copy in user space when they are read. -ENOMEM after one line saying what fits.
 */
int preflight_map_memory(const struct bpf_object *obj, const struct trace_config *o);

/* The estimate for one map, in bytes (docs/security.md has them per entry). */
unsigned long long preflight_map_bytes(unsigned int type, unsigned int flags, unsigned int key_size,
				       unsigned int value_size, unsigned long long entries, int ncpus);

#endif
