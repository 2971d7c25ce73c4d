// SPDX-License-Identifier: GPL-2.0-only
/*
 * --timeline (issue #10): wake-up, fork, exec and exit events of the traced tasks (the switch
 * events come from sched.bpf.c sp_switch, see timeline.bpf.h). Loaded only with --timeline.
 *
 * The fork, exec and exit programs are attached after target.bpf.c's (programs on one
 * tracepoint run in the order they were attached): the new child, the command at its exec,
 * are in the traced set by then.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#define SP_TL_DEFINE
#include "timeline.bpf.h"

const volatile __u32 switch_timeline = 0;
const volatile __u64 tl_wakeup_bytes = SP_TL_DEF_BUFFER / 8;
struct sp_tl_stats tl_stats;

/*
 * Whether current was interrupted. The preempt count would say it, but on x86 it is a
 * per-CPU variable (__preempt_count) that a program can reach only through kallsyms, which
 * lists no data without CONFIG_KALLSYMS_ALL (Debian's kernels). So each CPU counts the
 * handlers it is in: device interrupts (irq_handler_*), hrtimer callbacks (the tick, sleeps'
 * timers: hrtimer_expire_*) and softirqs (softirq_*, ksoftirqd's included). Other hard
 * interrupts (IPIs, irq_work) are caught when they interrupted the kernel: they run on the
 * CPU's interrupt stack, not on current's (an interrupt from user mode runs on the task
 * stack, which is empty then, and is not caught).
 */
struct tl_cpu {
	__u32 hardirq; /* in a device interrupt handler or an hrtimer callback */
	__u32 softirq; /* in a softirq handler */
};
SP_SCRATCH_MAP(tl_cpus, struct tl_cpu);

static __always_inline int tl_enter(bool soft)
{
	__u32 zero = 0;
	struct tl_cpu *c = bpf_map_lookup_elem(&tl_cpus, &zero);

	if (c)
		(*(soft ? &c->softirq : &c->hardirq))++;
	return 0;
}

/* An exit whose entry came before the attach finds 0 and leaves it. */
static __always_inline int tl_leave(bool soft)
{
	__u32 zero = 0;
	struct tl_cpu *c = bpf_map_lookup_elem(&tl_cpus, &zero);
	__u32 *n = c ? (soft ? &c->softirq : &c->hardirq) : NULL;

	if (n && *n)
		(*n)--;
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(tl_irq_entry) { return tl_enter(false); }
SEC("tp_btf/irq_handler_exit")
int BPF_PROG(tl_irq_exit) { return tl_leave(false); }
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(tl_hrtimer_entry) { return tl_enter(false); }
SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(tl_hrtimer_exit) { return tl_leave(false); }
SEC("tp_btf/softirq_entry")
int BPF_PROG(tl_softirq_entry) { return tl_enter(true); }
SEC("tp_btf/softirq_exit")
int BPF_PROG(tl_softirq_exit) { return tl_leave(true); }

/* Is this program running on the kernel stack of current? */
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
	__u32 zero = 0;
	struct tl_cpu *c = bpf_map_lookup_elem(&tl_cpus, &zero);

	if (c && c->hardirq)
		return SP_TL_CTX_IRQ;
	if (c && c->softirq)
		return SP_TL_CTX_SOFTIRQ;
	return tl_on_task_stack(cur) ? SP_TL_CTX_TASK : SP_TL_CTX_IRQ;
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
