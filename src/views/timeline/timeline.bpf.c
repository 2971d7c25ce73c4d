// SPDX-License-Identifier: GPL-2.0-only
/*
 * --timeline: wake-up, fork, exec and exit events of the traced tasks (the switch
 * events, of every CPU, come from schedules.bpf.c sp_switch, see timeline.bpf.h). Loaded only
 * with --timeline.
 *
 * The fork, exec and exit programs are attached after target.bpf.c's (programs on one
 * tracepoint run in the order they were attached): the new child, the command at its exec,
 * are in the traced set by then.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "compat.bpf.h"
#include "timeline.bpf.h"

const volatile __u32 switch_timeline = 0;
const volatile __u64 tl_wakeup_bytes = SP_TL_DEF_BUFFER / 8;
struct sp_tl_stats tl_stats;

/*
 * Whether current was interrupted: the CPU's preempt count (compat.bpf.h, the same reading as
 * the schedules view's wake-up program). Where it cannot be read, a program running off
 * current's kernel stack is in a hard interrupt (on the CPU's interrupt stack); softirqs run
 * from an interrupt's exit are then told apart from it no more.
 */
static __always_inline bool tl_on_task_stack(struct task_struct *cur)
{
	volatile __u64 marker = 0;
	__u64 sp = (__u64)&marker;
	__u64 lo = (__u64)cur->stack; /* direct loads (BTF pointers): no probe_read calls */
	__u64 size = 16384; /* THREAD_SIZE on x86-64 and arm64 without KASAN */
	struct vm_struct *vm = cur->stack_vm_area;

	if (vm && vm->nr_pages)
		size = (__u64)vm->nr_pages * 4096;
	return sp >= lo && sp < lo + size;
}

static __always_inline enum sp_tl_wake_ctx tl_wake_ctx(struct task_struct *cur)
{
	__s64 pc = sp_preempt_count(cur, has_preempt_rq_off, preempt_rq_off);

	if (pc < 0)
		return tl_on_task_stack(cur) ? SP_TL_CTX_TASK : SP_TL_CTX_IRQ;
	if (pc & SP_HARDIRQ_MASK)
		return SP_TL_CTX_IRQ;
	if (pc & SP_SOFTIRQ_OFFSET)
		return SP_TL_CTX_SOFTIRQ;
	return SP_TL_CTX_TASK;
}

static __always_inline void tl_wake(struct task_struct *p, __u16 type)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct sp_tl_wake *e;

	if (!tl_traced(p, false))
		return;
	e = tl_reserve(sizeof(*e));
	if (!e)
		return;
	tl_header(&e->h, type, bpf_ktime_get_ns());
	e->tid = p->pid;
	e->pid = p->tgid;
	__builtin_memcpy(e->comm, p->comm, sizeof(e->comm));
	e->cpus = tl_cpus(p);
	e->ctx = tl_wake_ctx(cur);
	if (e->ctx == SP_TL_CTX_TASK) {
		e->waker_tid = cur->pid;
		e->waker_pid = cur->tgid;
		e->waker_traced = cur->pid != 0 && task_is_traced(cur);
		__builtin_memcpy(e->waker_comm, cur->comm, sizeof(e->waker_comm));
	} else {
		e->waker_tid = 0;
		e->waker_pid = 0;
		e->waker_traced = 0;
		e->waker_comm[0] = 0;
	}
	tl_submit(e);
}

/* In the waker's context (sched_wakeup may run on the wakee's CPU, from an IPI). */
SEC("tp_btf/sched_waking")
int BPF_PROG(tl_waking, struct task_struct *p)
{
	tl_wake(p, SP_TL_EV_WAKE);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(tl_wakeup_new, struct task_struct *p)
{
	tl_wake(p, SP_TL_EV_WAKE_NEW);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(tl_fork, struct task_struct *parent, struct task_struct *child)
{
	struct sp_tl_fork *e;

	if (!tl_traced(child, false))
		return 0;
	e = tl_reserve(sizeof(*e));
	if (!e)
		return 0;
	tl_header(&e->h, SP_TL_EV_FORK, bpf_ktime_get_ns());
	e->parent_tid = parent->pid;
	e->parent_pid = parent->tgid;
	e->tid = child->pid;
	e->pid = child->tgid;
	bpf_probe_read_kernel(e->comm, sizeof(e->comm), child->comm);
	tl_submit(e);
	return 0;
}

static __always_inline int tl_task_event(struct task_struct *p, __u16 type)
{
	struct sp_tl_task_ev *e;

	if (!task_is_traced(p)) /* p is current */
		return 0;
	e = tl_reserve(sizeof(*e));
	if (!e)
		return 0;
	tl_header(&e->h, type, bpf_ktime_get_ns());
	e->tid = p->pid;
	e->pid = p->tgid;
	bpf_probe_read_kernel(e->comm, sizeof(e->comm), p->comm);
	tl_submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(tl_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return tl_task_event(p, SP_TL_EV_EXEC);
}

/* The new name is the argument: the task still has its old one at this tracepoint. */
SEC("tp_btf/task_rename")
int BPF_PROG(tl_rename, struct task_struct *task, const char *comm)
{
	struct sp_tl_task_ev *e;

	if (!tl_traced(task, false))
		return 0;
	e = tl_reserve(sizeof(*e));
	if (!e)
		return 0;
	tl_header(&e->h, SP_TL_EV_RENAME, bpf_ktime_get_ns());
	e->tid = task->pid;
	e->pid = task->tgid;
	if (bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), comm) < 0)
		e->comm[0] = 0;
	tl_submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(tl_exit, struct task_struct *p)
{
	return tl_task_event(p, SP_TL_EV_EXIT);
}
