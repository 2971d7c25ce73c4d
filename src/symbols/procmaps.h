/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * /proc/PID/maps parsing: the address ranges of a process and the files behind them, so a user
 * IP can be turned into (file, file offset) = (path, pgoff + ip - start) while the process lives.
 */
#ifndef SCHEDPROF_PROCMAPS_H
#define SCHEDPROF_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>

struct proc_map {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;	     /* file offset of start, in bytes */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	char perms[5]; /* "r-xp" */
	/* "" anonymous, "[vdso]", "[stack]", "[heap]", or a file path as the kernel prints it:
	 * it may contain spaces and keeps a " (deleted)" suffix */
	char *path;
};

/* Returns 0, -ESRCH if the process is gone, -EINVAL for a malformed line, -errno. */
int proc_maps__read(int pid, struct proc_map **ret_maps, size_t *ret_n);
/*
 * The executable mappings only, sorted: what naming user frames needs (not the vsyscall
 * page). Through the PROCMAP_QUERY ioctl where the kernel has it (6.11), which visits only
 * those mappings and escapes no path, else /proc/PID/maps filtered (always so with the test
 * hook SCHEDPROF_TEST_MAPS_TEXT). Returns as proc_maps__read().
 */
int proc_maps__read_exec(int pid, struct proc_map **ret_maps, size_t *ret_n);
/* The same by PROCMAP_QUERY only: -ENOTTY where the kernel does not have it. */
int proc_maps__query_exec(int pid, struct proc_map **ret_maps, size_t *ret_n);
/* Same for a file in the maps format (fixtures, saved snapshots). Maps come back sorted. */
int proc_maps__parse_file(const char *path, struct proc_map **ret_maps, size_t *ret_n);
void proc_maps__free(struct proc_map *maps, size_t n);
/* The mapping containing ip, or NULL. */
const struct proc_map *proc_maps__find(const struct proc_map *maps, size_t n, uint64_t ip);

#endif /* SCHEDPROF_PROCMAPS_H */
