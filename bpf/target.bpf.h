/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The traced-task set, shared by every BPF object: each object declares these maps and
 * user space makes them one (bpf_map__reuse_fd() onto target.bpf.o's maps) before load.
 *
 * A task is traced when it carries the `traced` task-storage mark (set at fork for
 * descendants of traced tasks) or its tgid is in `targ_tgids` (processes named by the user
 * or found under them in /proc at attach). Task storage outlives sched_process_exit, so the
 * final switch of an exiting task (do_exit -> do_task_dead) is still attributed.
 */
#ifndef SCHEDPROF_TARGET_BPF_H
#define SCHEDPROF_TARGET_BPF_H

#include "schedprof/limits.h"
#include "schedprof/target.h"

/* -a: every task but the idle tasks. */
const volatile __u32 targ_all = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SP_DEF_TARGETS);
	__type(key, __u32);
	__type(value, struct sp_target);
} targ_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sp_traced);
} traced SEC(".maps");

static __always_inline bool task_is_traced(struct task_struct *t)
{
	__u32 tgid;

	if (targ_all)
		return t->pid != 0;
	if (bpf_task_storage_get(&traced, t, 0, 0))
		return true;
	tgid = t->tgid;
	if (!bpf_map_lookup_elem(&targ_tgids, &tgid))
		return false;
	/* Mark it, so its last switches still count after its tgid leaves the map. */
	bpf_task_storage_get(&traced, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	return true;
}

#endif
