// SPDX-License-Identifier: GPL-2.0-only
/*
 * The maps and globals that more than one object's programs use, defined once here; the
 * others declare them extern. Linked right after target.bpf.c (bpf/meson.build) on purpose:
 * a map the linker meets as extern before its definition fails the skeleton's map
 * relocation, so with every shared map defined here (or in target.bpf.c, ustack.bpf.c,
 * before the views) the views' objects may come in any order.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "compat.bpf.h"
#include "target.bpf.h"
#include "walk.bpf.h"
/* lock_task: the locks view's begin and end (locks.bpf.c), and the switch (schedules.bpf.c) */
#define SP_LOCK_DEFINE
#include "lock.bpf.h"
/* frame_dist and learn_dist(): the schedules and locks views' fast callers */
#define SP_FASTCALLER_DEFINE
#include "faststack.bpf.h"
/* tl_events: the timeline's programs (timeline.bpf.c) and the switch (schedules.bpf.c) */
#define SP_TL_DEFINE
#include "timeline.bpf.h"

/*
 * With task_hash (common.bpf.h): a freed task's state leaves the hashes, as its task storage
 * goes with it. sched_process_free comes once the task is both reaped and off its CPU for
 * good (the two references its RCU-delayed free waits for: so after its last switch), and
 * before its memory, so its address, can be used again. Attached before every program that
 * creates such state, detached after them (trace_load.c): no entry outlives its task.
 */
SEC("tp_btf/sched_process_free")
int BPF_PROG(sp_task_free, struct task_struct *p)
{
	__u64 key = (__u64)p;

	if (!task_hash)
		return 0;
	bpf_map_delete_elem(&traced_hash, &key);
	if (switch_locks)
		bpf_map_delete_elem(&lock_task_hash, &key);
	return 0;
}
