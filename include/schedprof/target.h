/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Types of the traced-task set shared by all BPF objects (bpf/target.bpf.c). */
#ifndef SCHEDPROF_TARGET_H
#define SCHEDPROF_TARGET_H

/* Value of the `targ_tgids` map: a process named by the user or a descendant. */
struct sp_target {
	__u32 live; /* 1 while one of its threads has not exited */
	__u32 pad;
};

struct sp_target_stats {
	__u64 forks;	   /* traced tasks created after attach */
	__u64 exits;	   /* traced processes whose last thread exited */
	__u64 map_full;	   /* descendants not added to targ_tgids (map full) */
	__u64 storage_fail;/* task storage could not be created */
};

#endif
