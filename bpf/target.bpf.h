/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The traced-task set, shared by every view. All the bpf/ objects are linked into one object
 * (bpftool gen object): target.bpf.c defines these maps and targ_all, the others see them
 * through the extern declarations below.
 *
 * A task is traced when it carries the `traced` task storage's mark (set at fork for
 * descendants of traced tasks, at exec for the launched command) or its tgid is in
 * `targ_tgids` (processes named by the user or found under them in /proc at attach, and the
 * command from its exec). The exit hook marks every traced task, and retires a tgid (live = 0)
 * only when its last thread exits: task storage outlives sched_process_exit, so the final switch of an
 * exiting task (do_exit -> do_task_dead) is still attributed, even for a task that slept
 * since attach and so was never marked by a switch.
 */
#ifndef SCHEDPROF_TARGET_BPF_H
#define SCHEDPROF_TARGET_BPF_H

#include "common.bpf.h"
#include "schedprof/limits.h"
#include "schedprof/target.h"
#include "schedprof/sched.h"

#ifdef SP_TARGET_DEFINE /* in target.bpf.c */
#define SP_TARGET_EXTERN
#else
#define SP_TARGET_EXTERN extern
#endif

/* -a: every task but the idle tasks. */
extern const volatile __u32 targ_all;
/* -a -- COMMAND: the profile's target class is the command's tree (the set), not every task */
extern const volatile __u32 targ_all_cmd;
/* --cgroup: the cgroup's id and level; a task is traced when it is that cgroup or below it */
extern const volatile __u64 targ_cgid;
extern const volatile __u32 targ_cg_level;
/* -t: only the threads in targ_tids, none of their children or siblings */
extern const volatile __u32 targ_tids_on;
SP_TARGET_EXTERN SP_HASH_MAP(targ_tgids, SP_DEF_TARGETS, __u32, struct sp_target);
/*
 * Every task's one task storage, shared by the views: the traced set's mark and the
 * schedules view's state (schedules.bpf.c). One storage, not two: a traced task's first event
 * allocates once (fork-heavy work paid for two), and sp_switch looks up prev's and next's
 * once for all its parts. The locks view's state is in a storage of its own (lock_task,
 * lock.bpf.h), looked up at a switch only when the flags here say it holds something.
 *
 * At most 120 bytes: with the element's header (struct bpf_local_storage_elem, 128) and the
 * allocator's (8) it fits bpf_mem_alloc's 256-byte unit. A larger unit is refilled a few
 * objects at a time, and a burst of new tasks (messaging's 400 at once) then failed to get
 * its storage (counted as task_storage_fail): the lock state (88 bytes) is not in here.
 */
struct sp_task {
	struct sp_sleep sleep; /* the schedules view's; state SP_TS_NONE until its first event */
	__u32 mark;	       /* in the traced set (task_in_set()) */
	__u8 has_lock;	       /* it has a lock_task storage (lock_task_get()) */
	__u8 throttled;	       /* schedules.bpf.c: preempted while throttled (struct sp_throttled) */
	__u16 lock_asleep;     /* lock_task's sleep_ts may be set (lock_switch_out()) */
};
SP_TASK_MAP(SP_TARGET_EXTERN, traced, struct sp_task);
_Static_assert(sizeof(struct sp_task) <= 120, "struct sp_task: over bpf_mem_alloc's 256-byte unit");
/* -t: thread id -> live; kept after the thread's exit, so its last switch still counts */
SP_TARGET_EXTERN SP_HASH_MAP(targ_tids, 1, __u32, struct sp_target);

/* t's sp_task (sp_task_get()): flags 0 or BPF_LOCAL_STORAGE_GET_F_CREATE. */
#define traced_get(t, flags) SP_TASK_GET(traced, struct sp_task, t, flags)

/* Whether t carries the traced set's mark. */
static __always_inline bool task_marked(struct task_struct *t)
{
	struct sp_task *s = traced_get(t, 0);

	return s && s->mark;
}

/* Marks t as in the traced set; its storage (created if need be), NULL when it could not be. */
static __always_inline struct sp_task *task_mark(struct task_struct *t)
{
	struct sp_task *s = traced_get(t, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (s)
		s->mark = 1;
	return s;
}

/*
 * In the traced set (the command's tree, -p's processes, --cgroup's tasks), whatever -a says.
 * --cgroup asks the current task's ancestry: every caller passes current (at sched_switch,
 * prev is current). *ts is t's storage, looked up by the caller (NULL: t has none), and
 * set when the mark creates it.
 */
static __always_inline bool task_in_set_st(struct task_struct *t, struct sp_task **ts)
{
	__u32 tgid;

	if (targ_cgid)
		return bpf_get_current_ancestor_cgroup_id(targ_cg_level) == targ_cgid;
	if (targ_tids_on) {
		__u32 tid = t->pid;

		return bpf_map_lookup_elem(&targ_tids, &tid) != NULL;
	}
	if (*ts && (*ts)->mark)
		return true;
	tgid = t->tgid;
	if (!bpf_map_lookup_elem(&targ_tgids, &tgid))
		return false;
	/* Mark it, so its last switches still count after its tgid leaves the map. */
	*ts = task_mark(t);
	return true;
}

static __always_inline bool task_in_set(struct task_struct *t)
{
	struct sp_task *ts = NULL;

	if (!targ_cgid && !targ_tids_on)
		ts = traced_get(t, 0);
	return task_in_set_st(t, &ts);
}

/* Counted by the schedules and locks views: every non-idle task with -a, else the set. */
static __always_inline bool task_is_traced(struct task_struct *t)
{
	if (targ_all)
		return t->pid != 0;
	return task_in_set(t);
}

/* The same, with t's storage already looked up (task_in_set_st()). */
static __always_inline bool task_is_traced_st(struct task_struct *t, struct sp_task **ts)
{
	if (targ_all)
		return t->pid != 0;
	return task_in_set_st(t, ts);
}

/* The profile's target class: the set with -a -- COMMAND, else what task_is_traced() says. */
static __always_inline bool task_is_target(struct task_struct *t)
{
	if (targ_all_cmd)
		return task_in_set(t);
	return task_is_traced(t);
}

#endif
