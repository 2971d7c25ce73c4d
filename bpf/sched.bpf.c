// SPDX-License-Identifier: GPL-2.0-only
/*
 * Schedules by caller: every switch-out of a traced task is counted, keyed by the kernel
 * function that called schedule(), i.e. the first frame outside the scheduler, locking and
 * cpuidle text (the rule the kernel uses for wchan). Folding happens here, so the counts by
 * caller are exact and never depend on the stack map's capacity.
 *
 * Cost: a kernel stack walk costs ~1.3 us before the first frame on this class of machine,
 * whatever the depth, so it is paid only for voluntary switches of traced tasks; preemptions
 * (prev_state == TASK_RUNNING) and the idle task are classified without one.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "target.bpf.h"
#include "schedprof/sched.h"
#include "walk.bpf.h"

/*
 * Folding configuration, filled from kallsyms before load. Kept out of .rodata on purpose:
 * with known constants the verifier explores every comparison of every frame against every
 * range separately and gives up (1M instructions); as plain data it does not.
 */
struct sp_fold_cfg fold_cfg = {};

struct sp_sched_counts sched_counts;
struct sp_sched_drops sched_drops;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SP_DEF_CALLERS);
	__type(key, struct sp_caller_key);
	__type(value, struct sp_caller_val);
} callers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SP_DEF_STACKS);
	__type(key, struct sp_stack_key);
	__type(value, struct sp_stack_val);
} stack_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SP_DEF_STACKS);
	__type(key, __u64);
	__type(value, struct sp_stack);
} stacks SEC(".maps");


struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sp_walk);
} stack_buf SEC(".maps");

/* Where a task went to sleep, to charge the off-CPU time when it comes back. */
struct sp_sleep {
	__u64 ts;
	__u64 stack;
	__u32 tgid; /* the stack key's process (the caller key has none: it must not split) */
	__u32 pad;
	struct sp_caller_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sp_sleep);
} sleeping SEC(".maps");

static __always_inline void update_max(__u64 *p, __u64 v)
{
	for (int i = 0; i < 4; i++) {
		__u64 old = *p;

		if (v <= old || __sync_val_compare_and_swap(p, old, v) == old)
			return;
	}
}


/*
 * count_caller(), count_stack() and charge_offcpu() are global functions: the verifier checks
 * each once on its own instead of once per path through sp_switch (idle, preempted and
 * voluntary keys hold different constants), which halved its load time.
 */

/* Counts a row. */
__noinline int count_caller(struct sp_caller_key *key)
{
	struct sp_caller_val one = { .count = 1 }, *v;

	if (!key)
		return 0;
	v = bpf_map_lookup_elem(&callers, key);
	if (v) {
		__sync_fetch_and_add(&v->count, 1);
		return 0;
	}
	if (bpf_map_update_elem(&callers, key, &one, BPF_NOEXIST) == 0)
		return 0;
	v = bpf_map_lookup_elem(&callers, key); /* lost a race with the other CPU */
	if (v)
		__sync_fetch_and_add(&v->count, 1);
	else
		__sync_fetch_and_add(&sched_drops.caller_map_full, 1);
	return 0;
}

__noinline int count_stack(struct sp_caller_key *ck, __u64 stack, __u32 tgid)
{
	struct sp_stack_key key = { .stack = stack, .tgid = tgid };
	struct sp_stack_val one = { .count = 1 }, *v;

	if (!ck)
		return 0;
	key.caller = ck->caller;
	key.wait = ck->wait;
	__builtin_memcpy(key.comm, ck->comm, sizeof(key.comm));
	v = bpf_map_lookup_elem(&stack_counts, &key);
	if (v) {
		__sync_fetch_and_add(&v->count, 1);
		return 0;
	}
	if (bpf_map_update_elem(&stack_counts, &key, &one, BPF_NOEXIST) == 0)
		return 0;
	v = bpf_map_lookup_elem(&stack_counts, &key);
	if (v)
		__sync_fetch_and_add(&v->count, 1);
	else
		__sync_fetch_and_add(&sched_drops.stackagg_map_full, 1);
	return 0;
}

/* Walks the stack once: folds it to the caller and keeps it in `stacks` by hash. */
static __always_inline __u64 fold_stack(void *ctx, struct sp_caller_key *key)
{
	struct sp_walk *w;
	__u32 zero = 0;

	key->caller = SP_CALLER_UNKNOWN;
	w = bpf_map_lookup_elem(&stack_buf, &zero);
	if (!w)
		return 0;
	if (!sp_walk_stack(ctx, w)) {
		__sync_fetch_and_add(&sched_drops.stack_fail, 1);
		return 0;
	}
	key->caller = w->st.caller;
	key->wait = w->st.wait;
	if (!sp_walk_keep(&stacks, w)) {
		__sync_fetch_and_add(&sched_drops.stack_map_full, 1);
		return 0;
	}
	return w->hash;
}

/* Charges the time since the task went to sleep to its row and stack. */
__noinline int charge_offcpu(struct sp_sleep *s, __u64 now)
{
	struct sp_caller_val *v;
	struct sp_stack_val *sv;
	struct sp_stack_key sk = {};
	__u64 delta;

	if (!s || !s->ts)
		return 0;
	delta = now - s->ts;
	s->ts = 0;
	v = bpf_map_lookup_elem(&callers, &s->key);
	if (v) {
		__sync_fetch_and_add(&v->offcpu_ns, delta);
		update_max(&v->max_ns, delta);
	}
	if (!s->stack)
		return 0;
	sk.stack = s->stack;
	sk.caller = s->key.caller;
	sk.wait = s->key.wait;
	sk.tgid = s->tgid;
	__builtin_memcpy(sk.comm, s->key.comm, sizeof(sk.comm));
	sv = bpf_map_lookup_elem(&stack_counts, &sk);
	if (sv)
		__sync_fetch_and_add(&sv->offcpu_ns, delta);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sp_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct sp_caller_key key = {};
	struct sp_sleep *s;
	__u64 now = bpf_ktime_get_ns(), stack = 0;
	__u32 tgid = prev->tgid;

	charge_offcpu(bpf_task_storage_get(&sleeping, next, 0, 0), now);

	if (prev->pid == 0) {
		if (!targ_all)
			return 0;
		__sync_fetch_and_add(&sched_counts.total, 1);
		__sync_fetch_and_add(&sched_counts.idle, 1);
		key.caller = SP_CALLER_IDLE;
	} else {
		if (!task_is_traced(prev))
			return 0;
		__sync_fetch_and_add(&sched_counts.total, 1);
		if (prev_state == 0) { /* TASK_RUNNING: preempted, whatever the flag says */
			__sync_fetch_and_add(&sched_counts.preempted, 1);
			key.caller = SP_CALLER_PREEMPTED;
		} else {
			__sync_fetch_and_add(&sched_counts.voluntary, 1);
			stack = fold_stack(ctx, &key);
		}
	}
	bpf_probe_read_kernel(key.comm, sizeof(key.comm), prev->comm);
	count_caller(&key);
	if (stack)
		count_stack(&key, stack, tgid);

	s = bpf_task_storage_get(&sleeping, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s) {
		__sync_fetch_and_add(&sched_drops.task_storage_fail, 1);
		return 0;
	}
	s->ts = now;
	s->stack = stack;
	s->tgid = tgid;
	s->key = key;
	return 0;
}
