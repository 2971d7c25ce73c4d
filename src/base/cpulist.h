/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CPU lists in the kernel's format ("0-3,5,7-8", as in /sys/devices/system/cpu/online): the
 * CPUs the profile view opens one sampling event on.
 */
#ifndef SCHEDPROF_CPULIST_H
#define SCHEDPROF_CPULIST_H

#include <stddef.h>

/* Highest CPU number accepted (the kernel's NR_CPUS limit is 8192). */
#define CPULIST_MAX_CPU 8191

/*
 * Parses s (a trailing newline is allowed) into the sorted CPU numbers, without duplicates.
 * Returns 0, -EINVAL (syntax, a decreasing range, a CPU above CPULIST_MAX_CPU, or an empty
 * list), or -ENOMEM. The caller frees *ret_cpus.
 */
int cpulist_parse(const char *s, int **ret_cpus, size_t *ret_n);
/* Same, from a file: 0, -errno from fopen(), -EINVAL, -ENOMEM. */
int cpulist_read(const char *path, int **ret_cpus, size_t *ret_n);

#endif
