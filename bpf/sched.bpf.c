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
 *
 * sp_switch, at the end, is the one sched_switch program of every view: the locks view's
 * part (lock.bpf.h) runs in it too, so a switch runs one program whatever the views.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "common.bpf.h"
#include "target.bpf.h"
#include "schedprof/sched.h"
#include "walk.bpf.h"
#include "lock.bpf.h"
#include "timeline.bpf.h"

struct sp_sched_counts sched_counts;
struct sp_sched_drops sched_drops;

SP_HASH_MAP(callers, SP_DEF_CALLERS, struct sp_caller_key, struct sp_caller_val);
SP_HASH_MAP(stack_counts, SP_DEF_STACKS, struct sp_stack_key, struct sp_stack_val);
SP_HASH_MAP(stacks, SP_DEF_STACKS, __u64, struct sp_stack);
SP_SCRATCH_MAP(stack_buf, struct sp_walk);

/* Where a task went to sleep, to charge the off-CPU time when it comes back. */
struct sp_sleep {
	__u64 ts;
	__u64 stack;
	__u32 tgid; /* the stack key's process (the caller key has none: it must not split) */
	__u32 pad;
	struct sp_caller_key key;
};

SP_TASK_MAP(sleeping, struct sp_sleep);

/*
 * count_caller(), count_stack() and charge_offcpu() are global functions: the verifier checks
 * each once on its own instead of once per path through sp_switch (idle, preempted and
 * voluntary keys hold different constants), which halved its load time.
 */

/* Counts a row. */
__noinline int count_caller(struct sp_caller_key *key)
{
	struct sp_caller_val zero = {}, *v;

	if (!key)
		return 0;
	v = sp_lookup_or_init(&callers, key, &zero);
	if (v)
		__sync_fetch_and_add(&v->count, 1);
	else
		sp_drop(sched_drops.caller_map_full);
	return 0;
}

__noinline int count_stack(struct sp_caller_key *ck, __u64 stack, __u32 tgid)
{
	struct sp_stack_key key = { .stack = stack, .tgid = tgid };
	struct sp_stack_val zero = {}, *v;

	if (!ck)
		return 0;
	key.caller = ck->caller;
	key.wait = ck->wait;
	__builtin_memcpy(key.comm, ck->comm, sizeof(key.comm));
	v = sp_lookup_or_init(&stack_counts, &key, &zero);
	if (v)
		__sync_fetch_and_add(&v->count, 1);
	else
		sp_drop(sched_drops.stackagg_map_full);
	return 0;
}

/* Walks the stack once: folds it to the caller and keeps it in `stacks` by hash. */
static __always_inline __u64 fold_stack(void *ctx, struct sp_caller_key *key)
{
	struct sp_walk_drops drops = { &sched_drops.stack_fail, &sched_drops.stack_map_full };
	struct sp_fold_state st;
	__u64 h = sp_walk_fold(ctx, &stack_buf, &stacks, &st, drops);

	key->caller = st.caller;
	key->wait = st.wait;
	return h;
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
		sp_update_max(&v->max_ns, delta);
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

/* The schedules view's part of sp_switch: counts prev's switch-out, charges next's sleep. */
static __always_inline void sched_on_switch(void *ctx, struct task_struct *prev,
					    struct task_struct *next, unsigned int prev_state,
					    __u64 now)
{
	struct sp_caller_key key = {};
	struct sp_sleep *s;
	__u64 stack = 0;
	__u32 tgid = prev->tgid;

	charge_offcpu(bpf_task_storage_get(&sleeping, next, 0, 0), now);

	if (prev->pid == 0) {
		if (!targ_all)
			return;
		__sync_fetch_and_add(&sched_counts.total, 1);
		__sync_fetch_and_add(&sched_counts.idle, 1);
		key.caller = SP_CALLER_IDLE;
	} else {
		if (!task_is_traced(prev))
			return;
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
		sp_drop(sched_drops.task_storage_fail);
		return;
	}
	s->ts = now;
	s->stack = stack;
	s->tgid = tgid;
	s->key = key;
}

/* --timeline (timeline.bpf.h): the switch, with prev's fold as sched_on_switch just kept it. */
static __always_inline void timeline_on_switch(struct task_struct *prev, struct task_struct *next,
					       unsigned int prev_state, __u64 now)
{
	bool traced = prev->pid != 0 && task_is_traced(prev);
	struct sp_sleep *s = traced ? bpf_task_storage_get(&sleeping, prev, 0, 0) : NULL;
	bool folded = s && s->ts == now;

	tl_on_switch(prev, next, prev_state, now, traced, folded ? s->key.caller : 0,
		     folded ? s->key.wait : 0);
}

/*
 * The one sched_switch program of every view: each view's part is on when its flag
 * (common.bpf.h) was set before load, and costs nothing otherwise.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(sp_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();

	if (switch_locks)
		lock_on_switch(prev, next, prev_state, now);
	if (switch_sched)
		sched_on_switch(ctx, prev, next, prev_state, now);
	if (switch_timeline) /* after the fold: it reads it */
		timeline_on_switch(prev, next, prev_state, now);
	return 0;
}
