/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --timeline: the traced tasks' state changes, and every CPU's switches, into the `tl_events`
 * ring buffer (include/schedprof/timeline.h). timeline.bpf.c defines the buffer, the counters
 * and the wake-up, fork, exec and exit programs; the switch events come from the one
 * sched_switch program (schedules.bpf.c sp_switch, after the schedules view's fold, whose
 * caller they carry).
 *
 * Cost: a reservation in one buffer shared by every CPU. User space is woken only when the
 * buffer holds tl_wakeup_bytes (an eighth of it): a wake-up per event would cost more than
 * the event itself (irq_work), and the reader drains the rest at the end.
 */
#ifndef SCHEDPROF_TIMELINE_BPF_H
#define SCHEDPROF_TIMELINE_BPF_H

#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "target.bpf.h"
#include "schedprof/timeline.h"

#define SP_TL_RINGBUF(_name)						\
	struct {							\
		__uint(type, BPF_MAP_TYPE_RINGBUF);			\
		__uint(max_entries, SP_TL_DEF_BUFFER);			\
	} _name SEC(".maps")

#ifdef SP_TL_DEFINE /* in shared.bpf.c */
SP_TL_RINGBUF(tl_events);
#else
extern SP_TL_RINGBUF(tl_events);
#endif

/* The timeline's part of sp_switch and its programs are on (set before load). */
extern const volatile __u32 switch_timeline;
/* Wake user space once the buffer holds this much (--timeline-buffer / 8). */
extern const volatile __u64 tl_wakeup_bytes;
extern struct sp_tl_stats tl_stats;

static __always_inline void *tl_reserve(__u64 size)
{
	void *e = bpf_ringbuf_reserve(&tl_events, size, 0);

	if (!e)
		sp_drop(tl_stats.lost);
	return e;
}

static __always_inline void tl_submit(void *e)
{
	__u64 flags = bpf_ringbuf_query(&tl_events, BPF_RB_AVAIL_DATA) >= tl_wakeup_bytes ?
			      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;

	bpf_ringbuf_submit(e, flags);
}

static __always_inline void tl_header(struct sp_tl_hdr *h, __u16 type, __u64 now)
{
	h->ts = now;
	h->type = type;
	h->cpu = (__u16)bpf_get_smp_processor_id();
	h->pad = 0;
}

/* Linux >= 6.0 (commit 7f203bc89eb6): cgroup.ancestors[] replaced ancestor_ids[]. */
struct cgroup___old {
	int level;
	__u64 ancestor_ids[];
} __attribute__((preserve_access_index));

/*
 * --cgroup for a task that is not current (the next task of a switch, a wakee, a new child):
 * task_in_set() asks bpf_get_current_ancestor_cgroup_id(), which is current's.
 */
static __always_inline bool tl_task_in_cgroup(struct task_struct *t)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
	__u32 lvl = targ_cg_level;
	struct cgroup *anc = NULL;
	__u64 id = 0;

	if (!cg || (__u32)BPF_CORE_READ(cg, level) < lvl || lvl > 255)
		return false;
	if (bpf_core_field_exists(cg->ancestors)) {
		bpf_core_read(&anc, sizeof(anc), &cg->ancestors[lvl]);
		id = BPF_CORE_READ(anc, kn, id);
	} else {
		struct cgroup___old *o = (void *)cg;

		bpf_core_read(&id, sizeof(id), &o->ancestor_ids[lvl]);
	}
	return id == targ_cgid;
}

/* task_is_traced() for any task; is_current: t is the running task. */
static __always_inline bool tl_traced(struct task_struct *t, bool is_current)
{
	if (targ_cgid && !is_current)
		return t->pid != 0 && tl_task_in_cgroup(t);
	return task_is_traced(t);
}

/* t's affinity, CPUs 0-63 (direct loads from the BTF pointer). */
static __always_inline __u64 tl_cpus(struct task_struct *t)
{
	const struct cpumask *m = t->cpus_ptr;

	return m ? m->bits[0] : 0;
}

/*
 * A switch, on any CPU: prev's caller and wait (from the fold) when prev is traced
 * (traced_prev), and whether its CPU quota's group was throttled (a preempted prev). Every
 * switch, so that a CPU's occupants and idle time are known while a traced task waits for it.
 */
static __always_inline void tl_on_switch(struct task_struct *prev, struct task_struct *next,
					 unsigned int prev_state, __u64 now, bool traced_prev,
					 __u64 caller, __u32 wait, bool throttled)
{
	bool traced_next = next->pid != 0 && tl_traced(next, false);
	struct sp_tl_switch *e;

	e = tl_reserve(sizeof(*e));
	if (!e)
		return;
	tl_header(&e->h, SP_TL_EV_SWITCH, now);
	e->caller = traced_prev ? caller : 0;
	e->wait = traced_prev ? wait : 0;
	e->prev_state = prev_state;
	e->prev_ran = prev->se.sum_exec_runtime - prev->se.prev_sum_exec_runtime;
	e->prev_tid = prev->pid;
	e->prev_pid = prev->tgid;
	e->next_tid = next->pid;
	e->next_pid = next->tgid;
	e->flags = (traced_prev ? SP_TL_PREV_TRACED : 0) | (traced_next ? SP_TL_NEXT_TRACED : 0) |
		   (throttled ? SP_TL_PREV_THROTTLED : 0);
	e->pad = 0;
	/* direct loads from the BTF pointers: cheaper than bpf_probe_read_kernel() */
	__builtin_memcpy(e->prev_comm, prev->comm, sizeof(e->prev_comm));
	__builtin_memcpy(e->next_comm, next->comm, sizeof(e->next_comm));
	e->prev_cpus = tl_cpus(prev);
	e->prev_cg = prev->pid ? sp_task_cgroup(prev) : 0;
	e->next_cg = next->pid ? sp_task_cgroup(next) : 0;
	tl_submit(e);
}

#endif
