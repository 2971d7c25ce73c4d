// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel feature probes (src/loader/featprobe.c): one tiny program per feature, each
 * doing what the real programs rely on that feature for, and nothing else. A probe that the
 * kernel loads says the feature is there, whatever the kernel's release says; one it refuses
 * says the programs must take the older way (or leave the view out). Never attached.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* libbpf's bpf_helpers.h defines it from 1.6 on */
#ifndef __arg_untrusted
#define __arg_untrusted __attribute__((btf_decl_tag("arg:untrusted")))
#endif

struct fp_key {
	__u64 a, b;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct fp_key);
} fp_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct fp_key);
	__type(value, struct fp_key);
} fp_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} fp_ring SEC(".maps");

/* tp_btf: a raw tracepoint with BTF-typed arguments, which every view attaches */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(fp_tp_btf, struct task_struct *parent, struct task_struct *child)
{
	return 0;
}

/* sched_switch's prev_state argument: a fifth argument the verifier must know of */
SEC("tp_btf/sched_switch")
int BPF_PROG(fp_switch_tp, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return prev_state & 1;
}

/*
 * Trusted task pointers: current from bpf_get_current_task_btf() and a tp_btf task argument,
 * read directly and walked to the group leader, as every view reads them. (Each walk costs
 * the verifier a search of the kernel's BTF: one is enough to tell.)
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(fp_trusted_task, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct task_struct *cur = bpf_get_current_task_btf();

	return (cur->group_leader->tgid ^ next->tgid) & 1;
}

/* BPF task storage, keyed by current and by a tp_btf task argument */
SEC("tp_btf/sched_switch")
int BPF_PROG(fp_task_storage, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct fp_key *k = bpf_task_storage_get(&fp_task, next, 0, 0);

	if (!k)
		k = bpf_task_storage_get(&fp_task, bpf_get_current_task_btf(), 0,
					 BPF_LOCAL_STORAGE_GET_F_CREATE);
	return k ? (int)(k->a & 1) : 0;
}

static long fp_step(__u64 i, void *ctx)
{
	*(__u64 *)ctx += i;
	return 0;
}

/* bpf_loop(), which the stack walks are made of */
SEC("tp_btf/sched_switch")
int BPF_PROG(fp_loop, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 sum = 0;

	bpf_loop(4, fp_step, &sum, 0);
	return sum & 1;
}

/* The ring buffer: the timeline's events and the profile's process announcements */
SEC("tp_btf/sched_switch")
int BPF_PROG(fp_ringbuf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 *e = bpf_ringbuf_reserve(&fp_ring, sizeof(*e), 0);
	__u64 v = next->pid;

	if (!e)
		return 0;
	*e = v;
	bpf_ringbuf_submit(e, 0);
	return bpf_ringbuf_output(&fp_ring, &v, sizeof(v), 0) & 1;
}

/* The lock view's contention tracepoints, both */
SEC("tp_btf/contention_begin")
int BPF_PROG(fp_lock_begin, void *lock, unsigned int flags)
{
	return flags & 1;
}

SEC("tp_btf/contention_end")
int BPF_PROG(fp_lock_end, void *lock, int ret)
{
	return ret & 1;
}

/* The task iterator, which charges the sleeps still in progress at the stop */
SEC("iter/task")
int fp_iter_task(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	__u32 pid;

	if (!t)
		return 0;
	pid = t->pid;
	bpf_seq_write(ctx->meta->seq, &pid, sizeof(pid));
	return 0;
}

/*
 * Map keys and values in memory the verifier types as mem (task storage, a global function's
 * pointer argument), not the stack: taken from Linux 6.2 on.
 */
/* verifier: global on purpose, not a split: its argument is the memory this probe asks about */
__noinline int fp_mem_lookup(struct fp_key *k)
{
	return k && bpf_map_lookup_elem(&fp_hash, k) != 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(fp_mem_key, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct fp_key *k = bpf_task_storage_get(&fp_task, next, 0, 0);

	if (!k)
		return 0;
	if (!bpf_map_lookup_elem(&fp_hash, k))
		bpf_map_update_elem(&fp_hash, k, k, BPF_NOEXIST);
	return fp_mem_lookup(k);
}

/*
 * A global function's task argument tagged __arg_untrusted: read (and walked) as an
 * untrusted pointer, as the user stacks read the task's process. Kernels before the tag
 * refuse it: 6.8 to the tag's release do not know the tag, older ones take the argument for
 * plain memory, which a task pointer is not.
 */
/* verifier: global on purpose, not a split: its tagged argument is what this probe asks about */
__noinline int fp_untrusted_read(struct task_struct *task __arg_untrusted)
{
	struct mm_struct *mm = task->mm;

	return (task->group_leader->tgid ^ (mm ? (int)mm->end_code : 0)) & 1;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(fp_arg_untrusted, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return fp_untrusted_read(bpf_get_current_task_btf());
}
