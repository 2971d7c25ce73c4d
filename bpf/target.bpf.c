// SPDX-License-Identifier: GPL-2.0-only
/* Follows descendants of traced tasks: fork marks the child, exit retires the tgid. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#define SP_TARGET_DEFINE
#include "target.bpf.h"

const volatile __u32 targ_all = 0;
struct sp_target_stats target_stats;

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sp_fork, struct task_struct *parent, struct task_struct *child)
{
	struct sp_target v = { .live = 1 };
	__u32 tgid;

	if (targ_all || !task_is_traced(parent))
		return 0;
	__sync_fetch_and_add(&target_stats.forks, 1);
	if (!bpf_task_storage_get(&traced, child, 0, BPF_LOCAL_STORAGE_GET_F_CREATE))
		sp_drop(target_stats.storage_fail);
	if (child->pid != child->tgid)
		return 0; /* a new thread: its process is in the map already */
	tgid = child->tgid;
	if (bpf_map_update_elem(&targ_tgids, &tgid, &v, BPF_ANY))
		sp_drop(target_stats.map_full);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sp_exit, struct task_struct *p)
{
	__u32 tgid;

	if (targ_all || p->pid != p->tgid)
		return 0;
	tgid = p->tgid;
	if (bpf_map_delete_elem(&targ_tgids, &tgid) == 0)
		__sync_fetch_and_add(&target_stats.exits, 1);
	return 0;
}
