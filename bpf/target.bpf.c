// SPDX-License-Identifier: GPL-2.0-only
/*
 * Maintains the traced set: fork marks the children of traced tasks, exec adds the launched
 * command (only then: its wait at the launcher's gate is schedprof's, not the job's), and exit
 * marks the exiting task (its last switch, in do_task_dead, comes after this tracepoint) and
 * retires its tgid once the whole thread group is dead.
 *
 * Retired, not deleted: a sibling thread that decremented signal->live just before the last
 * one may reach this tracepoint after it, unmarked if it slept since attach; the tgid must
 * still name it traced then. User space deletes retired tgids at its next pass (200 ms).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#define SP_TARGET_DEFINE
#include "target.bpf.h"

const volatile __u32 targ_all = 0;
const volatile __u32 targ_all_cmd = 0;
const volatile __u64 targ_cgid = 0;
const volatile __u32 targ_cg_level = 0;
const volatile __u32 targ_tids_on = 0;
/* -- COMMAND: the held child's pid, set before it is released; 0 once it has exec'd */
__u32 targ_exec_pid = 0;
struct sp_target_stats target_stats;

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sp_fork, struct task_struct *parent, struct task_struct *child)
{
	struct sp_target v = { .live = 1 };
	__u32 tgid;

	if (!task_in_set(parent))
		return 0;
	__sync_fetch_and_add(&target_stats.forks, 1);
	if (!task_mark(child))
		sp_drop(target_stats.storage_fail);
	if (child->pid != child->tgid)
		return 0; /* a new thread: its process is in the map already */
	tgid = child->tgid;
	if (bpf_map_update_elem(&targ_tgids, &tgid, &v, BPF_ANY))
		sp_drop(target_stats.map_full);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sp_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct sp_target v = { .live = 1 };
	__u32 tgid = p->tgid;

	if (!targ_exec_pid || tgid != targ_exec_pid)
		return 0;
	targ_exec_pid = 0;
	if (!task_mark(p))
		sp_drop(target_stats.storage_fail);
	if (bpf_map_update_elem(&targ_tgids, &tgid, &v, BPF_ANY))
		sp_drop(target_stats.map_full);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sp_exit, struct task_struct *p)
{
	struct sp_target *v;
	__u32 tgid, tid;

	/* -t: the thread is gone (user space ends the trace once every one is) */
	if (targ_tids_on) {
		tid = p->pid;
		v = bpf_map_lookup_elem(&targ_tids, &tid);
		if (v && __sync_fetch_and_and(&v->live, 0))
			__sync_fetch_and_add(&target_stats.exits, 1);
		return 0;
	}
	/*
	 * Marks it: a task asleep since attach has no mark yet, and its tgid may leave the map
	 * below, before its final switch.
	 */
	if (!task_in_set(p))
		return 0;
	/* signal->live was decremented before this tracepoint: 0 once the last thread exits */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	tgid = p->tgid;
	v = bpf_map_lookup_elem(&targ_tgids, &tgid);
	if (v && __sync_fetch_and_and(&v->live, 0))
		__sync_fetch_and_add(&target_stats.exits, 1);
	return 0;
}
