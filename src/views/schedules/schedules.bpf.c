// SPDX-License-Identifier: GPL-2.0-only
/*
 * Schedules by caller: every switch-out of a traced task is counted, keyed by the kernel
 * function that called schedule(), i.e. the first frame outside the scheduler, locking and
 * cpuidle text (the rule the kernel uses for wchan). Folding happens here, so the counts by
 * caller are exact and never depend on the stack map's capacity.
 *
 * Cost: a kernel stack walk (an ORC unwind) is the largest cost a switch can have, whatever
 * the depth, so it is paid only for voluntary switches of traced tasks; preemptions
 * (prev_state == TASK_RUNNING) and the idle task are classified without one. Without full
 * stacks, most voluntary switches need none either: see "The caller fast path" below.
 *
 * Each sleep is split at its wake-up: BLOCKED from the switch-out to the wake-up, RUNQ (waiting
 * for a CPU) from the wake-up to the switch-in; a preemption is all RUNQ. The wake-up programs
 * (sp_waking, sp_wakeup_new) only stamp the task storage of tasks that already have one, and
 * the switch-in charges the row: its split, its run-queue histogram, its waker. With --wakers
 * the wake-up program also walks the waker's stack, folded past the wake-up machinery.
 *
 * The time budget counts every traced task's time inside the run's window [trace_t0, stop]:
 * on a CPU (switch-in to switch-out), waiting for one, and blocked (by row, so by wait
 * class). A task's first event charges its time since the trace's start: on a CPU before a
 * switch-out, blocked (in no row) before a switch-in. At the stop, the task iterator
 * sp_sched_stop charges what is still in progress up to the stop.
 *
 * sp_switch, at the end, is the one sched_switch program of every view: the locks view's
 * part (lock.bpf.h) runs in it too, so a switch runs one program whatever the views.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "common.bpf.h"
#include "compat.bpf.h"
#include "target.bpf.h"
#include "schedprof/progs.h"
#include "schedprof/sched.h"
#include "walk.bpf.h"
#include "lock.bpf.h"
#include "timeline.bpf.h"
#include "ustack.bpf.h"
#include "faststack.bpf.h"

/* --wakers: walk the waker's stack at each wake-up of a traced task (set before load) */
const volatile __u32 wake_walk = 0;
/*
 * The stop (bpf_ktime_get_ns()), written by user space before it runs sp_sched_stop: from
 * then on the programs change nothing, so what the iterator reads is the tasks' last state.
 */
__u64 sched_stop_ns = 0;

struct sp_sched_drops sched_drops;

/*
 * The rows and their wakers are per CPU (summed by user space, rows.c
 * sched_fold_pcpu()): a switch adds to its own CPU's copy with plain adds, no atomic and no
 * cache line the other CPU writes. An entry is created on every CPU at once (the others'
 * copies zeroed), so the row a switch-out created on one CPU is found by the switch-in on
 * another, and "the map is full" means the same as for a shared map. Allocated on use: a
 * preallocated per-CPU map of SP_DEF_CALLERS rows would cost MiBs at every start.
 */
SP_MAP(callers, BPF_MAP_TYPE_PERCPU_HASH, BPF_F_NO_PREALLOC, SP_DEF_CALLERS,
       struct sp_caller_key, struct sp_caller_val);
SP_HASH_MAP(stack_counts, SP_DEF_STACKS, struct sp_stack_key, struct sp_stack_val);
SP_HASH_MAP(stacks, SP_DEF_STACKS, __u64, struct sp_stack);
/*
 * Preallocated, as `takers` below: allocated on use, a 6.1-rt guest's `trace -a -d 1` lost
 * the waker of 3 wake-ups (the per-CPU allocation failed inside sched_switch).
 */
SP_MAP(wakers, BPF_MAP_TYPE_PERCPU_HASH, 0, SP_DEF_CALLERS / 4, struct sp_waker_key, __u64);
/* behind each CPU's last wakers (waker_pcpu), as the takers below */
SP_SCRATCH_MAP(waker_pcpu, struct sp_waker_pcpu);
SP_SCRATCH_MAP(stack_buf, struct sp_walk);
SP_SCRATCH_MAP(wake_buf, struct sp_wake_walk);
SP_SCRATCH_MAP(sched_pcpu, struct sp_sched_pcpu);
/*
 * Who took the rows' CPUs: per CPU as the wakers, behind each CPU's last ones (taker_pcpu).
 * Preallocated: allocated on use, its per-CPU values failed to allocate inside sched_switch
 * (the allocator's per-CPU cache empty, refilled later from irq_work), 7-11 new takers in
 * each 1 s run of wakework runq on this VM.
 */
SP_MAP(takers, BPF_MAP_TYPE_PERCPU_HASH, 0, SP_DEF_CALLERS / 4, struct sp_taker_key,
       struct sp_taker_val);
SP_SCRATCH_MAP(taker_pcpu, struct sp_taker_pcpu);

/*
 * CPU quotas: set by user space when a cgroup had a CFS quota at the start (cgroup v1
 * cpu.cfs_quota_us, v2 cpu.max). Only then does a preempted switch-out read its task's group's
 * bandwidth state (and its switch-in charge it): without a quota neither is in the program.
 */
const volatile __u32 quota_check = 0;
/* The throttled time by the cgroup id of the throttled tasks' own group (user space names it). */
SP_HASH_MAP(throttled_cgs, SP_MAX_THROTTLED_CGS, __u64, __u64);
/* The preempted tasks throttled now, by pid (struct sp_task's throttled says which). */
SP_HASH_MAP(throttled_tasks, SP_MAX_THROTTLED_TASKS, __u32, struct sp_throttled);
/*
 * Set by user space when the kernel's task clock leaves out steal (and IRQ) time
 * (CONFIG_PARAVIRT_TIME_ACCOUNTING, CONFIG_IRQ_TIME_ACCOUNTING): a slice's wall time minus its
 * sum_exec_runtime's advance is then what the CPU did for others while it was the task's.
 */
const volatile __u32 steal_split = 0;

/* This CPU's counters and share of the budget (summed by user space). */
static __always_inline struct sp_sched_pcpu *pcpu_here(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&sched_pcpu, &zero);
}

static __always_inline struct sp_budget_counts *budget_here(void)
{
	struct sp_sched_pcpu *pc = pcpu_here();

	return pc ? &pc->budget : NULL;
}

#define SP_TASK_DEAD 0x80 /* the kernel's TASK_DEAD: prev_state of an exiting task's last switch */

/*
 * What a traced task was doing since its last event (schedprof/sched.h): in the task storage
 * it shares with the traced set's mark (target.bpf.h struct sp_task), state SP_TS_NONE until
 * then. NULL when t has no storage.
 */
static __always_inline struct sp_sleep *task_sleep(struct task_struct *t, __u64 flags)
{
	struct sp_task *ts = traced_get(t, flags);

	return ts ? &ts->sleep : NULL;
}

/*
 * count_caller(), count_stack(), count_waker() and charge_offcpu() are global functions: the
 * verifier checks each once on its own instead of once per path through sp_switch (idle,
 * preempted and voluntary keys hold different constants), which halved its load time.
 */

/*
 * Counts a row. The key is copied to the stack: before Linux 6.2 a map helper takes no key
 * from a global function's argument (memory to the verifier); the value to create from is
 * sp_zeros (208 bytes on the stack overflowed sp_switch_full's 512 there).
 */
/* verifier: global, checked once, not per path of sp_switch (halved its load time) */
__noinline int count_caller(struct sp_caller_key *key)
{
	struct sp_caller_key k;
	struct sp_caller_val *v;

	if (!key)
		return 0;
	k = *key;
	v = sp_lookup_or_init(&callers, &k, SP_ZEROS(struct sp_caller_val));
	if (v)
		v->count++; /* this CPU's copy */
	else
		sp_drop(sched_drops.caller_map_full);
	return 0;
}

/* verifier: global, as count_caller() */
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

/*
 * The tag of a taker key (row, cg, kind, inside, comm), over its words as the key lays them
 * out (row and comm: 4 and 2 words): each word times its own odd constant, summed, so the
 * multiplications do not wait for each other; then mixed once. A waker key (row, function,
 * ctx, pad, comm) has the same layout.
 */
static __always_inline __u64 taker_tag(const __u64 *row, __u64 cg, __u32 kind, __u32 inside,
				       const __u64 *comm)
{
	__u64 h = row[0] * 0x9e3779b97f4a7c15ULL + row[1] * 0xc2b2ae3d27d4eb4fULL +
		  row[2] * 0x165667b19e3779f9ULL + row[3] * 0xd6e8feb86659fd93ULL +
		  cg * 0xff51afd7ed558ccdULL + (kind | (__u64)inside << 32) * 0xc4ceb9fe1a85ec53ULL +
		  comm[0] * 0x94d049bb133111ebULL + comm[1] * 0xbf58476d1ce4e5b9ULL;

	return h ^ (h >> 31);
}

/* This CPU's wakers' slots. */
static __always_inline struct sp_waker_pcpu *waker_slots(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&waker_pcpu, &zero);
}

/*
 * The waker of s, of tag, not in this CPU's slots: takes the next slot in turn, whose waker
 * goes to the `wakers` map first, keyed by the slot's key in place. As taker_new(), but with no
 * key on its stack (it is the deepest of sp_switch_full's chain, under charge_offcpu() and
 * count_waker()): the slots are looked up here, so the key is a map value's, which a map
 * helper takes, and not memory passed in.
 */
/* verifier: global, as count_caller() */
__noinline int waker_new(struct sp_sleep *s, __u64 tag)
{
	struct sp_waker_pcpu *p = waker_slots();
	struct sp_waker_slot *slot;
	__u64 zero = 0, *v, gen;

	if (!s || !p)
		return 0;
	gen = p->gen_begin + 1;
	p->gen_end = gen;
	asm volatile("" ::: "memory");
	slot = &p->last[p->evict++ & (SP_WAKER_SLOTS - 1)];
	if (slot->count) {
		v = sp_lookup_or_init(&wakers, &slot->key, &zero);
		if (v)
			*v += slot->count; /* this CPU's copy */
		else
			__sync_fetch_and_add(&sched_drops.waker_map_full, slot->count);
	}
	slot->key.row = s->key;
	slot->key.function = s->waker_fn;
	slot->key.ctx = s->waker_ctx;
	slot->key.pad = 0;
	if (s->waker_ctx == SP_WAKER_TASK)
		__builtin_memcpy(slot->key.comm, s->waker_comm, sizeof(slot->key.comm));
	else
		__builtin_memset(slot->key.comm, 0, sizeof(slot->key.comm));
	slot->tag = tag;
	slot->count = 1;
	asm volatile("" ::: "memory");
	p->gen_begin = gen;
	return 0;
}

/*
 * Counts the wake-up that ended s's sleep under its row and its waker: in its slot when it is
 * one of this CPU's last (struct sp_waker_pcpu), else waker_new().
 */
/* verifier: global, as count_caller() */
__noinline int count_waker(struct sp_sleep *s)
{
	struct sp_waker_pcpu *p = waker_slots();
	__u64 comm[2] = {}, tag;

	if (!s || !p)
		return 0;
	if (s->waker_ctx == SP_WAKER_TASK)
		__builtin_memcpy(comm, s->waker_comm, sizeof(comm));
	tag = taker_tag((const __u64 *)&s->key, s->waker_fn, s->waker_ctx, 0, comm);
#pragma unroll
	for (int i = 0; i < SP_WAKER_SLOTS; i++) {
		struct sp_waker_slot *slot = &p->last[i];

		if (slot->tag == tag && slot->count) {
			slot->count++;
			return 0;
		}
	}
	return waker_new(s, tag);
}

/* Adds ns to the slot of tag, 1 when it is one of p's, else 0. */
static __always_inline int taker_hit(struct sp_taker_pcpu *p, __u64 tag, __u64 ns)
{
#pragma unroll
	for (int i = 0; i < SP_TAKER_SLOTS; i++) {
		struct sp_taker_slot *slot = &p->last[i];

		if (slot->tag == tag && slot->val.count) {
			slot->val.count++;
			slot->val.ns += ns;
			return 1;
		}
	}
	return 0;
}

/*
 * p->next, of tag, not in a slot: takes the next slot in turn, whose taker goes to the
 * `takers` map first (its key copied to the stack: see count_caller()).
 */
/* verifier: global, as count_caller() */
__noinline int taker_new(struct sp_taker_pcpu *p, __u64 tag, __u64 ns)
{
	struct sp_taker_val zero = {}, *v;
	struct sp_taker_slot *slot;
	struct sp_taker_key k;
	__u64 gen;

	if (!p)
		return 0;
	/* the slot's change between the generation's two marks (struct sp_taker_pcpu) */
	gen = p->gen_begin + 1;
	p->gen_end = gen;
	asm volatile("" ::: "memory");
	slot = &p->last[p->evict++ & (SP_TAKER_SLOTS - 1)];
	if (slot->val.count) {
		k = slot->key;
		v = sp_lookup_or_init(&takers, &k, &zero);
		if (v) { /* this CPU's copy */
			v->count += slot->val.count;
			v->ns += slot->val.ns;
		} else {
			__sync_fetch_and_add(&sched_drops.taker_map_full, slot->val.count);
		}
	}
	slot->key = p->next;
	slot->tag = tag;
	slot->val.count = 1;
	slot->val.ns = ns;
	asm volatile("" ::: "memory");
	p->gen_begin = gen;
	return 0;
}

/*
 * Whole kept stacks (faststack.bpf.h): built from the raw words when they can be, else walked.
 * sp_switch_full's start and scratch, and sp_waking's (--wakers).
 */
struct sp_stack_start sched_stack_start;
SP_SCRATCH_MAP(kraw_buf, struct sp_kraw);
struct sp_stack_start wake_stack_start;
SP_SCRATCH_MAP(wake_kraw, struct sp_kraw);

/* The halves as global functions, each verified once (as sched_fast_pre()). */
/* verifier: global, verified once */
__noinline int sched_kstack_pre(void)
{
	return sp_kstack_pre(&kraw_buf, &sched_stack_start, 0);
}

/* verifier: global, as sched_kstack_pre() */
__noinline int sched_kstack_post(int pre, int walked)
{
	__u32 zero = 0;

	return sp_kstack_post(pre, walked, &kraw_buf, bpf_map_lookup_elem(&stack_buf, &zero),
			      &sched_stack_start);
}

/* verifier: global, as sched_kstack_pre() */
__noinline int wake_kstack_pre(void)
{
	return sp_kstack_pre(&wake_kraw, &wake_stack_start, 1);
}

/* verifier: global, as sched_kstack_pre() */
__noinline int wake_kstack_post(int pre, int walked)
{
	__u32 zero = 0;

	return sp_kstack_post(pre, walked, &wake_kraw, bpf_map_lookup_elem(&wake_buf, &zero),
			      &wake_stack_start);
}

/*
 * The stack once, from the raw words or a walk: folds it to the caller and keeps it in
 * `stacks` by hash. Counted in c (this CPU's) when there is one.
 */
static __always_inline __u64 fold_stack(void *ctx, struct sp_caller_key *key,
					struct sp_sched_counts *c)
{
	struct sp_fold_state st;
	struct sp_kraw *r;
	struct sp_walk *w;
	int pre, walked = 0, f;
	__u64 h = 0;

	sp_kstack_at(&kraw_buf, ctx);
	pre = sched_kstack_pre();
	if (pre != SP_FP_HIT)
		walked = sp_walk_get(ctx, &stack_buf, &sched_drops.stack_fail);
	f = sched_kstack_post(pre, walked);
	if ((f & SP_FC_FAST) && !walked) { /* built from the raw words, folded and hashed */
		r = sp_kstack_raw(&kraw_buf);
		if (r) {
			st.caller = r->st.caller;
			st.wait = r->st.wait;
			h = sp_kstack_keep(&stacks, r);
			if (!h)
				sp_drop(sched_drops.stack_map_full);
		} else {
			st.caller = SP_CALLER_UNKNOWN;
			st.wait = SP_WAIT_NONE;
		}
	} else {
		w = sp_walk_fold_have(&stack_buf, &st, walked);
		if (w) {
			h = sp_stack_keep(&stacks, w->hash, &w->stack);
			if (!h)
				sp_drop(sched_drops.stack_map_full);
		}
		/* a check: the fold and hash done while building must be the walk's too */
		r = (f & SP_FC_VERIFIED) && w ? sp_kstack_raw(&kraw_buf) : NULL;
		if (r && (r->hash != w->hash || r->st.caller != st.caller || r->st.wait != st.wait))
			f |= SP_FC_MISMATCH;
		else if (r && h) /* the same stack, kept: the memo's entry may answer */
			sp_kmemo_kept(r);
	}
	key->caller = st.caller;
	key->wait = st.wait;
	if (c) {
		c->stacks_memo += r && (f & SP_FC_FAST) ? sp_kmemo_used(r) : 0;
		c->stacks_fast += f & SP_FC_FAST;
		c->stacks_verified += (f & SP_FC_VERIFIED) >> 1;
		c->stacks_mismatched += (f & SP_FC_MISMATCH) >> 2;
		c->stacks_off += (f & SP_FC_OFF) >> 3;
	}
	return h;
}

/* --wakers: the waker's function, from the raw words or a walk (as fold_stack()). */
static __always_inline __u64 waker_function(void *ctx)
{
	struct sp_sched_pcpu *pc;
	int pre, walked = 0, f;
	struct sp_kraw *r;
	__u32 zero = 0, memo = 0;
	__u64 fn;

	sp_kstack_at(&wake_kraw, ctx);
	pre = wake_kstack_pre();
	if (pre != SP_FP_HIT)
		walked = sp_walk_get(ctx, &wake_buf, &sched_drops.wake_stack_fail);
	f = wake_kstack_post(pre, walked);
	if ((f & SP_FC_FAST) && !walked) { /* folded as it was built from the raw words */
		r = sp_kstack_raw(&wake_kraw);
		fn = r ? r->wst.function : SP_WAKER_UNKNOWN;
		memo = r ? sp_kmemo_used(r) : 0;
	} else {
		fn = sp_wake_fold(&wake_buf, walked);
		/* a check: the fold done while building must be the walk's too */
		r = f & SP_FC_VERIFIED ? sp_kstack_raw(&wake_kraw) : NULL;
		if (r && r->wst.function != fn)
			f |= SP_FC_MISMATCH;
		memo = r ? sp_kmemo_used(r) : 0;
	}
	pc = bpf_map_lookup_elem(&sched_pcpu, &zero);
	if (pc) {
		pc->counts.wakes_memo += memo;
		pc->counts.wakes_walked++;
		pc->counts.wakes_fast += f & SP_FC_FAST;
		pc->counts.wakes_verified += (f & SP_FC_VERIFIED) >> 1;
		pc->counts.wakes_mismatched += (f & SP_FC_MISMATCH) >> 2;
		pc->counts.wakes_off += (f & SP_FC_OFF) >> 3;
	}
	return fn;
}

/*
 * --stacks: the user stack under the kernel stack. Kept apart from the rest: a
 * voluntary switch's kept stack becomes a (kernel, user) pair of ustack.bpf.h, whose key
 * stands for the stack in stack_counts and in the task's storage, so nothing else changes.
 */
const volatile __u32 sched_ustacks = 0; /* set by user space with full stacks */
struct sp_ustack_drops sched_udrops;
SP_SCRATCH_MAP(sched_ubuf, struct sp_uscratch);

static __always_inline __u64 sched_user_stack(void *ctx, struct task_struct *prev, __u64 kstack)
{
	if (!sched_ustacks || !kstack)
		return kstack;
	return sp_stack_pair(ctx, prev, kstack, &sched_ubuf, &sched_udrops, 0);
}

/*
 * The caller fast path (fastcaller.bpf.h): without full stacks (--stacks, -g, or
 * a format that draws them), most voluntary switches are attributed without a full walk.
 * sp_switch's own start (bpf_trace_run4()'s argument array) and scratch; the learned frame
 * distances are shared with lock_begin.
 */
/*
 * Set by user space when no full stack is kept: it then loads sp_switch, not sp_switch_full.
 * No BPF code reads it (each build knows which it is): it is where the collectors
 * (src/views/{schedules,locks,profile}/collect.c) and trace_load.c's switch_needs() read the
 * choice back.
 */
const volatile __u32 caller_fast = 0;
struct sp_fast_start sched_fast_start;
SP_SCRATCH_MAP(raw_buf, struct sp_raw);

/* The fast path's halves as global functions, each verified once (as lock_begin's). */
/* verifier: global, verified once, as lock_fast_pre() */
__noinline int sched_fast_pre(void)
{
	return sp_fast_pre(&raw_buf, &sched_fast_start);
}

/* verifier: global, as sched_fast_pre() */
__noinline int sched_fast_post(int pre, int walked, struct sp_fold_state *out)
{
	if (!out)
		return 0;
	return sp_fast_post(pre, walked, &raw_buf, &stack_buf, &sched_fast_start, out);
}

/* The caller of a voluntary switch, into key; counted in c (this CPU's) when there is one. */
static __always_inline void fast_caller(void *ctx, struct sp_caller_key *key,
					struct sp_sched_counts *c)
{
	struct sp_fold_state st = {};
	int pre, f, walked;

	sp_fast_at(&raw_buf, ctx);
	pre = sched_fast_pre();
	walked = sp_fast_walk(ctx, pre, &stack_buf, &sched_drops.stack_fail);
	f = sched_fast_post(pre, walked, &st);
	key->caller = st.caller;
	key->wait = st.wait;
	if (!c)
		return;
	c->callers_fast += f & SP_FC_FAST;
	c->callers_verified += (f & SP_FC_VERIFIED) >> 1;
	c->callers_mismatched += (f & SP_FC_MISMATCH) >> 2;
	c->callers_fast_off += (f & SP_FC_OFF) >> 3;
}

/* 1 when v > c, else 0, without a branch (c < 2^63): the sign of c - v, or v's top bit. */
#define SP_GT(v, c) ((((c) - (v)) | (v)) >> 63)

/*
 * x, which the compiler can no longer see through: a mask made of SP_GT() would otherwise be
 * turned back into a compare and a select, i.e. a branch, for the verifier to walk both
 * sides of.
 */
static __always_inline __u64 sp_opaque(__u64 x)
{
	/* verifier: the compiler cannot see through it, so emits no branch for the verifier */
	asm volatile("" : "+r"(x));
	return x;
}

/*
 * All ones when v > c, else 0 (c < 2^63); all ones when x == c, else 0 (any x and c). Hidden
 * twice: before the shift (the compiler knows (-x | x) >> 63 for x != 0), and after it.
 */
#define SP_GT_MASK(v, c) sp_opaque(-(sp_opaque(((c) - (v)) | (v)) >> 63))
#define SP_EQ_MASK(x, c) (~SP_GT_MASK((x) ^ (c), 0))

/*
 * The part of [a, b] inside the run's window (from trace_t0 on); 0 before the start is known.
 * Without branches (times < 2^63): charge_offcpu() takes it four times, and each branch here
 * made the verifier walk the rest of that function once more.
 */
static __always_inline __u64 in_window(__u64 a, __u64 b)
{
	__u64 t0 = trace_t0, d;

	a ^= (a ^ t0) & SP_GT_MASK(t0, a); /* max(a, t0) */
	d = (b - a) & SP_GT_MASK(b, a);	   /* b - a when b > a, else 0 */
	return d & SP_GT_MASK(t0, 0);	   /* 0 until t0 is set */
}

/*
 * log2(v) rounded down, 0 for 0, at most SP_RUNQ_SLOTS - 1: the histogram's slot. Without
 * branches: five compares each made two verifier paths, and the slot (an index) kept them
 * apart, 2^5 walks of the rest of charge_offcpu().
 */
static __always_inline __u64 runq_slot(__u64 v)
{
	/* 64-bit throughout: before Linux 6.2 a 32-bit compare does not bound a 64-bit index */
	__u64 r = 0, shift;

	/* halve the width while v has bits above it: each step adds its bit to r */
#define RUNQ_LOG2_STEP(above, bit) \
	do {                                \
		shift = SP_GT(v, above) << bit; \
		v >>= shift;                \
		r |= shift;                 \
	} while (0)
	RUNQ_LOG2_STEP(0xffffffffULL, 5);
	RUNQ_LOG2_STEP(0xffffULL, 4);
	RUNQ_LOG2_STEP(0xffULL, 3);
	RUNQ_LOG2_STEP(0xfULL, 2);
	RUNQ_LOG2_STEP(0x3ULL, 1);
#undef RUNQ_LOG2_STEP
	r |= (v >> 1);
	return r < SP_RUNQ_SLOTS ? r : SP_RUNQ_SLOTS - 1;
}

/*
 * Adds ns to cgroup cg's throttled time. Global, as the two below: its key on its own stack,
 * not on charge_offcpu()'s, whose chain with count_waker() is sp_switch_full's deepest.
 */
__noinline int count_throttled_cg(__u64 cg, __u64 ns)
{
	__u64 key = cg, zero = 0, *v;

	v = sp_lookup_or_init(&throttled_cgs, &key, &zero);
	if (v)
		__sync_fetch_and_add(v, ns);
	return 0;
}

/*
 * Keeps a preempted task's state by pid when its cfs_rq cfs (an address: a global function
 * takes no kernel pointer before 6.8's __arg_trusted) is throttled, itself or an ancestor
 * (see throttled_out()). A leaf: its key and value off sp_switch's stack. 1 when kept.
 */
__noinline int keep_throttled(__u32 pid, __u64 cfs)
{
	struct cfs_rq *c = (struct cfs_rq *)cfs;
	struct sp_throttled t = { .cfs = cfs };
	__u32 key = pid;

	if (!bpf_core_field_exists(struct cfs_rq, throttle_count) || !c ||
	    BPF_CORE_READ(c, throttle_count) <= 0)
		return 0;
	t.cg = BPF_CORE_READ(c, tg, css.cgroup, kn, id);
	if (!t.cg)
		t.cg = 1;
	if (bpf_core_field_exists(struct cfs_rq, throttled_clock_self_time))
		t.self = BPF_CORE_READ(c, throttled_clock_self_time);
	if (bpf_map_update_elem(&throttled_tasks, &key, &t, BPF_ANY)) {
		sp_drop(sched_drops.throttled_map_full);
		return 0;
	}
	return 1;
}

/*
 * Charges s's time off CPU, from its switch-out to its switch-in now, to its row, stack,
 * waker and the budget. (At the stop, user space charges what is still in progress the same
 * way: rows.c sched_split().)
 *
 * Where the RUNQ part starts: at the switch-out for a preemption; at the last wake-up since
 * the task's previous switch-in when that came after the switch-out; at the switch-out when
 * it came before (the waker's try_to_wake_up() ran while the task was still going to
 * sleep, and waited for it to be off its CPU: woken before it blocked); with no wake-up seen
 * (the wake-up program did not run: its tracepoint was busy on that CPU) all is BLOCKED.
 */
/* verifier: global, as count_caller() */
__noinline int charge_offcpu(struct sp_sleep *s, __u64 now)
{
	struct sp_budget_counts *b;
	struct sp_caller_val *v;
	struct sp_stack_val *sv;
	struct sp_stack_key sk = {};
	struct sp_caller_key key;
	__u64 delta, wake, ts, runnable, blocked, runq, latest, wblocked;
	__u64 idle, preempted, woken, hist, norow, migrated;

	if (!s)
		return 0;
	if (s->state == SP_TS_NEW) { /* a new task's first wait for a CPU */
		b = budget_here();
		if (b)
			b->runq_ns += in_window(s->wake_ts, now);
		return 0;
	}
	if (s->state != SP_TS_OFF || now < s->ts)
		return 0;
	/*
	 * The split, in masks (all ones: true) rather than branches: each test of a flag made
	 * the verifier walk the rest of the function once more per value (1.2k of sp_switch's
	 * 4k verified instructions), and each flag is now tested once at most.
	 */
	ts = s->ts;
	delta = now - ts;
	wake = s->wake_ts;
	idle = SP_EQ_MASK(s->key.caller, SP_CALLER_IDLE);
	preempted = SP_EQ_MASK(s->key.caller, SP_CALLER_PREEMPTED);
	/* woken: not idle, not preempted (no wake-up ended it: no waker), 0 < wake <= now */
	woken = ~idle & ~preempted & SP_GT_MASK(wake, 0) & ~SP_GT_MASK(wake, now);
	latest = ts ^ ((ts ^ wake) & SP_GT_MASK(wake, ts)); /* max(wake, ts) */
	/* the RUNQ part starts at the switch-out, the wake-up, or (neither) now */
	runnable = (preempted & ts) | (woken & latest) | (~preempted & ~woken & now);
	runq = now - runnable;
	blocked = delta - runq;
	hist = (SP_GT_MASK(now, runnable) | woken | preempted) & 1; /* a run-queue wait ended */
	wblocked = in_window(ts, runnable) & ~idle;
	key = s->key; /* on the stack: see count_caller() */
	v = bpf_map_lookup_elem(&callers, &key); /* this CPU's copy: plain adds */
	norow = !v;
	if (v) {
		v->offcpu_ns += delta;
		v->blocked_ns += blocked;
		v->runq_ns += runq;
		if (delta > v->max_ns)
			v->max_ns = delta;
		v->window_blocked_ns += wblocked;
		/* without a run-queue wait, runq is 0: neither changes */
		if (runq > v->runq_max_ns)
			v->runq_max_ns = runq;
		v->runq_hist[runq_slot(runq)] += hist;
		/* s->cpu: 0 when switched in on the CPU it was switched out on (cpu_in()) */
		migrated = ~SP_EQ_MASK((__u64)s->cpu, 0);
		v->migrated += migrated & 1;
		v->migrated_runq_ns += runq & migrated;
	}
	if (!idle) {
		b = budget_here();
		if (b) {
			b->runq_ns += in_window(runnable, now);
			b->blocked_norow_ns += wblocked & -norow;
		}
	}
	if (woken)
		count_waker(s);
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

/*
 * Traced, for a task that is not current (next at a switch, a new task): the -p/-- set's
 * mark or tgid, -t's threads, every task with -a. With --cgroup only the mark counts (a
 * cgroup's tasks are marked when they first run: the cgroup test asks current's ancestry).
 * ts: t's storage, looked up by the caller (NULL: none; or not looked up, with -a).
 */
static __always_inline bool task_traced_other_st(struct task_struct *t, struct sp_task *ts)
{
	__u32 id;

	if (t->pid == 0)
		return false;
	if (targ_all)
		return true;
	if (ts && ts->mark)
		return true;
	if (targ_cgid)
		return false;
	if (targ_tids_on) {
		id = t->pid;
		return bpf_map_lookup_elem(&targ_tids, &id) != NULL;
	}
	id = t->tgid;
	return bpf_map_lookup_elem(&targ_tgids, &id) != NULL;
}

/* A task's first event: where its time since the trace's start goes. */
enum sp_first {
	SP_FIRST_OUT, /* a switch-out: it was on a CPU */
	SP_FIRST_IN,  /* a switch-in: it was blocked (or waiting for a CPU: not told apart) */
	SP_FIRST_NEW, /* its first wake-up: it did not exist */
};

/*
 * A task's first event in the trace: its storage, and the budget's count of tasks. *ts: t's
 * storage if the caller has it (else NULL: it is created here, and *ts set).
 */
static __always_inline struct sp_sleep *task_first_seen(struct task_struct *t, __u64 now,
							enum sp_first first, struct sp_task **ts)
{
	struct sp_budget_counts *b;
	struct sp_sleep *s;

	if (!*ts)
		*ts = traced_get(t, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!*ts) {
		sp_drop(sched_drops.task_storage_fail);
		return NULL;
	}
	s = &(*ts)->sleep;
	if (t->pid == 0 || s->state != SP_TS_NONE)
		return s;
	b = budget_here();
	if (b) {
		b->tasks++;
		if (first == SP_FIRST_OUT)
			b->oncpu_ns += in_window(0, now);
		else if (first == SP_FIRST_IN)
			b->blocked_norow_ns += in_window(0, now);
	}
	return s;
}

/*
 * A slice's wall time [in, now] minus its runtime (sum_exec_runtime since the pick:
 * prev_sum_exec_runtime is set then, set_next_entity()), both up to date at the switch; 0 for
 * a slice that began before the window (its wall time there is cut, its runtime not).
 */
static __always_inline __u64 slice_stolen(struct task_struct *p, __u64 in, __u64 now)
{
	__u64 t0 = trace_t0;

	if (!t0 || in < t0)
		return 0;
	return (now - in) - (p->se.sum_exec_runtime - p->se.prev_sum_exec_runtime);
}

/*
 * p preempted: when its CFS group or an ancestor is throttled by its quota, its state is kept
 * (struct sp_throttled: the cgroup id of its own group, user space finds the quota) and its
 * storage ts flagged.
 * throttle_count counts the group's throttled ancestors and itself (tg_throttle_down()): the
 * throttle happens in the pick that switches p out (check_cfs_rq_runtime()), so it is set
 * here; with task-based throttling (6.18) too, where the task is dequeued on its way back to
 * user space and switched out still TASK_RUNNING. Nothing without CFS bandwidth control.
 */
static __always_inline void throttled_out(struct task_struct *p, struct sp_task *ts)
{
	if (!bpf_core_field_exists(p->se.cfs_rq))
		return;
	/* read, not walked: the address goes to keep_throttled() as a number */
	if (keep_throttled(p->pid, (__u64)BPF_CORE_READ(p, se.cfs_rq)))
		ts->throttled = 1;
}

/*
 * At a throttled task's switch-in: how long its cfs_rq of the switch-out (the one that was
 * throttled: the task may have moved since) was throttled in between. Since Linux 6.7
 * (throttled_clock_self_time, added at each unthrottle); before, ~0: the whole wait is
 * charged, even its part after the unthrottle.
 */
static __always_inline __u64 throttled_since(const struct sp_throttled *t)
{
	struct cfs_rq *cfs = (struct cfs_rq *)t->cfs;

	if (!bpf_core_field_exists(struct cfs_rq, throttled_clock_self_time))
		return ~0ULL;
	return BPF_CORE_READ(cfs, throttled_clock_self_time) - t->self;
}

/*
 * A throttled task's switch-in (after charge_offcpu(), which charged its whole wait to RUNQ):
 * its wait's throttled part, at most how long its cfs_rq was throttled in between (see
 * throttled_since(); the wait ends after the unthrottle, and its part from then on was for a
 * CPU), to its row, the budget and its cgroup. Global, beside charge_offcpu() rather than in
 * it: its keys on its own stack, not on that chain's, sp_switch_full's deepest.
 */
__noinline int throttled_in(struct sp_sleep *s, __u32 pid, __u64 now)
{
	struct sp_budget_counts *b;
	struct sp_caller_val *v;
	struct sp_throttled *t;
	struct sp_caller_key key;
	__u32 k = pid;
	__u64 runq, windowed, limit, cg;

	if (!s)
		return 0;
	t = bpf_map_lookup_elem(&throttled_tasks, &k);
	if (!t)
		return 0;
	limit = throttled_since(t);
	cg = t->cg;
	bpf_map_delete_elem(&throttled_tasks, &k);
	if (s->state != SP_TS_OFF || now < s->ts)
		return 0;
	runq = now - s->ts; /* a preemption: all of it RUNQ */
	windowed = in_window(s->ts, now);
	if (limit < runq)
		runq = limit;
	if (limit < windowed)
		windowed = limit;
	count_throttled_cg(cg, windowed);
	b = budget_here();
	if (b)
		b->throttled_ns += windowed;
	key = s->key; /* on the stack: see count_caller() */
	v = bpf_map_lookup_elem(&callers, &key); /* this CPU's copy: plain adds */
	if (v)
		v->throttled_ns += runq;
	return 0;
}

/*
 * At a switch-in, before charge_offcpu(): s->cpu, the switch-out's CPU, becomes 0 when this
 * is the same CPU (non-zero otherwise). Here, not there: a helper call in charge_offcpu()
 * spills its live values, and its stack is on sp_switch_full's deepest chain (6.1 refuses
 * the chain at 544 of its 512 bytes).
 */
static __always_inline void cpu_in(struct sp_sleep *s)
{
	s->cpu ^= bpf_get_smp_processor_id();
}

/*
 * The wait for a CPU that s's switch-in at now ends, as charge_offcpu() splits it (0: none, or
 * not a sleep of a row), in masks as there.
 */
static __always_inline __u64 runq_ended(const struct sp_sleep *s, __u64 now)
{
	__u64 ts = s->ts, wake = s->wake_ts, preempted, woken, from;

	preempted = SP_EQ_MASK(s->key.caller, SP_CALLER_PREEMPTED);
	woken = ~preempted & ~SP_EQ_MASK(s->key.caller, SP_CALLER_IDLE) & SP_GT_MASK(wake, 0) &
		~SP_GT_MASK(wake, now);
	from = ts ^ ((ts ^ wake) & SP_GT_MASK(wake, ts)); /* max(wake, ts) */
	from = (preempted & ts) | (woken & from) | (~preempted & ~woken & now);
	return (now - from) & SP_EQ_MASK((__u64)s->state, SP_TS_OFF) & ~SP_GT_MASK(from, now);
}

/*
 * next's switch-in: ends its time off CPU, starts its time on one. *nt: next's storage.
 * Returns the wait for a CPU it ended (runq_ended()).
 */
static __always_inline __u64 sched_switch_in(struct task_struct *next, struct sp_task **nt,
					     __u64 now)
{
	struct sp_sleep *s = *nt ? &(*nt)->sleep : NULL;
	__u64 runq = 0;

	if (s && s->state != SP_TS_NONE) {
		cpu_in(s);
		runq = runq_ended(s, now);
		charge_offcpu(s, now);
		if (quota_check && (*nt)->throttled) {
			(*nt)->throttled = 0;
			throttled_in(s, next->pid, now);
		}
	} else {
		if (!task_traced_other_st(next, *nt))
			return 0;
		s = task_first_seen(next, now, SP_FIRST_IN, nt);
		if (!s)
			return 0;
	}
	s->state = SP_TS_RUNNING;
	s->ts_in = now;
	s->wake_ts = 0;
	return runq;
}

/*
 * Who took the CPU of a wait for one, runq, that a switch-in ended (struct sp_taker_key): the
 * preemptor of s (the wait's task's, kept at its preemption), and prev (p->prev_comm,
 * p->prev_cg; ran: its run since it was picked) unless prev is idle. flags: SP_PREV_TASK
 * (not idle), SP_PREV_INSIDE (in the traced set).
 */
#define SP_PREV_TASK 1
#define SP_PREV_INSIDE 2
/* verifier: global, as count_caller(): its branches walked once, not per path of sp_switch */
__noinline int count_takers(struct sp_taker_pcpu *p, struct sp_sleep *s, __u64 runq, __u64 ran,
			    __u32 flags)
{
	const __u64 *row;
	__u32 inside;
	__u64 tag;

	if (!p || !s)
		return 0;
	row = (const __u64 *)&s->key;
	if (s->key.caller == SP_CALLER_PREEMPTED) {
		tag = taker_tag(row, s->waker_fn, SP_TAKER_PREEMPTOR, s->waker_ctx,
				(const __u64 *)s->waker_comm);
		if (!taker_hit(p, tag, runq)) {
			p->next.row = s->key;
			p->next.kind = SP_TAKER_PREEMPTOR;
			p->next.cgroup = s->waker_fn;
			p->next.inside = s->waker_ctx;
			__builtin_memcpy(p->next.comm, s->waker_comm, sizeof(p->next.comm));
			taker_new(p, tag, runq);
		}
	}
	if (!(flags & SP_PREV_TASK))
		return 0;
	if (ran > runq) /* its run's overlap with the wait */
		ran = runq;
	inside = !!(flags & SP_PREV_INSIDE);
	tag = taker_tag(row, p->prev_cg, SP_TAKER_BEFORE, inside, (const __u64 *)p->prev_comm);
	if (taker_hit(p, tag, ran))
		return 0;
	p->next.row = s->key;
	p->next.kind = SP_TAKER_BEFORE;
	p->next.cgroup = p->prev_cg;
	p->next.inside = inside;
	__builtin_memcpy(p->next.comm, p->prev_comm, sizeof(p->next.comm));
	taker_new(p, tag, ran);
	return 0;
}

/*
 * At next's switch-in that ended its wait for a CPU, runq: count_takers() with prev's part.
 * nt: next's storage; pt: prev's, before its switch-out (NULL with -a: all are traced). prev
 * is in the traced set when its storage has been through an event (at its first, as not).
 */
static __always_inline void takers_in(struct task_struct *prev, struct sp_task *nt,
				      const struct sp_task *pt, __u64 runq)
{
	struct sp_taker_pcpu *p;
	__u32 zero = 0, flags;

	p = bpf_map_lookup_elem(&taker_pcpu, &zero);
	if (!p)
		return;
	__builtin_memcpy(p->prev_comm, prev->comm, sizeof(p->prev_comm));
	p->prev_cg = sp_task_cgroup(prev);
	flags = (prev->pid != 0) * SP_PREV_TASK;
	if (targ_all || (pt && pt->sleep.state != SP_TS_NONE))
		flags |= SP_PREV_INSIDE;
	count_takers(p, &nt->sleep, runq,
		     prev->se.sum_exec_runtime - prev->se.prev_sum_exec_runtime, flags);
}

/*
 * prev preempted by next: next's comm, cgroup and whether it is traced (its storage, after
 * its switch-in: looked up again, rather than held across the switch-out's walk), in prev's
 * waker fields (struct sp_sleep) until prev's switch-in.
 */
static __always_inline void note_preemptor(struct sp_sleep *s, struct task_struct *next)
{
	struct sp_task *nt = traced_get(next, 0);

	__builtin_memcpy(s->waker_comm, next->comm, sizeof(s->waker_comm));
	s->waker_fn = sp_task_cgroup(next);
	s->waker_ctx = nt && nt->sleep.state == SP_TS_RUNNING;
}

/*
 * A task switched out whose switch-in was not seen: its time off CPU was not charged, nor
 * its time on one started. A kernel need not emit every switch: the project's VM hides
 * those away from its own agent's threads (docs/trace.md), so the switch back to the task
 * the agent preempted is never seen. Its switch-in is placed where this run on the CPU
 * began: its runtime since the scheduler picked it (sum_exec_runtime -
 * prev_sum_exec_runtime, both up to date at the switch), and counted. A throttled task's
 * wait is split there as at a switch-in seen (the one missed can be its unthrottle's): else
 * its throttle's whole time would count as waiting for a CPU.
 */
static __always_inline void switch_in_missed(struct task_struct *prev, struct sp_task *ts,
					     struct sp_sleep *s, __u64 now)
{
	__u64 from = s->state == SP_TS_NEW ? s->wake_ts : s->ts;
	__u64 ran = prev->se.sum_exec_runtime - prev->se.prev_sum_exec_runtime;
	__u64 in = ran < now - from ? now - ran : from;

	sp_drop(sched_drops.switch_in_missed);
	cpu_in(s);
	charge_offcpu(s, in);
	if (quota_check && ts->throttled) {
		ts->throttled = 0;
		throttled_in(s, prev->pid, in);
	}
	s->state = SP_TS_RUNNING;
	s->ts_in = in;
	s->wake_ts = 0;
}

/*
 * prev's switch-out: counts it in its row, ends its time on a CPU, starts its time off. *pt:
 * prev's storage, looked up by the caller without -a (for the mark); (looked up again,
 * warm,) set here after the row's count when prev is counted. Not held across the caller's
 * walk: the verifier would walk it once per state of the pointer.
 */
static __always_inline void sched_switch_out(void *ctx, struct task_struct *prev,
					     struct sp_task **pt, unsigned int prev_state,
					     __u64 now, const bool fast, struct task_struct *next)
{
	struct sp_sched_pcpu *pc;
	struct sp_caller_key key = {};
	struct sp_sleep *s;
	__u64 stack = 0, throttled = 0;
	__u32 tgid = prev->tgid;

	if (prev->pid == 0) {
		if (!targ_all)
			return;
		pc = pcpu_here();
		if (pc) {
			pc->counts.total++;
			pc->counts.idle++;
		}
		key.caller = SP_CALLER_IDLE;
	} else {
		if (!task_is_traced_st(prev, pt))
			return;
		pc = pcpu_here();
		if (pc)
			pc->counts.total++;
		if (prev_state == 0) { /* TASK_RUNNING: preempted (SP_SWITCH_STATE) or yielded */
			if (pc)
				pc->counts.preempted++;
			key.caller = SP_CALLER_PREEMPTED;
			if (quota_check)
				throttled = 1; /* read below, into prev's storage */
		} else {
			if (pc)
				pc->counts.voluntary++;
			if (fast)
				fast_caller(ctx, &key, pc ? &pc->counts : NULL);
			else
				stack = sched_user_stack(ctx, prev,
							 fold_stack(ctx, &key, pc ? &pc->counts : NULL));
		}
	}
	__builtin_memcpy(key.comm, prev->comm, sizeof(key.comm)); /* trusted: no helper needed */
	count_caller(&key);
	if (stack)
		count_stack(&key, stack, tgid);

	*pt = traced_get(prev, 0);
	s = *pt ? &(*pt)->sleep : NULL;
	if (!s || s->state == SP_TS_NONE) {
		s = task_first_seen(prev, now, SP_FIRST_OUT, pt);
		if (!s)
			return;
	} else if (prev->pid != 0) {
		if (s->state == SP_TS_OFF || s->state == SP_TS_NEW)
			switch_in_missed(prev, *pt, s, now);
		if (pc && s->state == SP_TS_RUNNING) {
			pc->budget.oncpu_ns += in_window(s->ts_in, now);
			if (steal_split)
				pc->budget.stolen_ns += slice_stolen(prev, s->ts_in, now);
		}
	}
	if (quota_check && throttled && *pt)
		throttled_out(prev, *pt);
	s->state = prev_state & SP_TASK_DEAD ? SP_TS_DEAD : SP_TS_OFF;
	s->ts = now;
	s->stack = stack;
	s->tgid = tgid;
	s->key = key;
	s->cpu = bpf_get_smp_processor_id();
	if (key.caller == SP_CALLER_PREEMPTED)
		note_preemptor(s, next);
}

/*
 * --timeline (timeline.bpf.h): the switch, with prev's fold as sched_on_switch just kept it.
 * *pt: prev's storage.
 */
static __always_inline void timeline_on_switch(struct task_struct *prev, struct task_struct *next,
					       struct sp_task **pt, unsigned int prev_state,
					       __u64 now)
{
	bool traced = prev->pid != 0 && task_is_traced_st(prev, pt);
	struct sp_sleep *s = traced && *pt ? &(*pt)->sleep : NULL;
	bool folded = s && s->ts == now;
	/* throttled_out() just flagged a preempted prev whose CPU quota ran out */
	bool throttled = quota_check && folded && (*pt)->throttled;

	tl_on_switch(prev, next, prev_state, now, traced, folded ? s->key.caller : 0,
		     folded ? s->key.wait : 0, throttled);
}

/* The schedules view's part of sp_switch: charges next's time off CPU, counts prev's switch-out. */
/*
 * A wake-up (in the waker's context: sched_wakeup may run on the wakee's CPU, from the IPI
 * that queued it). Stamps the task storage of a traced task: it creates none, so a wake-up
 * of an untraced task costs one lookup. A task that is still running is stamped too: when it
 * is switched out next, the wake-up was for that sleep (see charge_offcpu()).
 */
SEC("tp_btf/sched_waking")
int BPF_PROG(sp_waking, struct task_struct *p)
{
	struct sp_sleep *s = task_sleep(p, 0);
	struct task_struct *cur;
	__s64 pc;

	if (!s || s->state == SP_TS_NONE || s->state == SP_TS_DEAD || s->state == SP_TS_NEW ||
	    sched_stop_ns)
		return 0;
	/*
	 * A preempted task is waiting for a CPU whatever wakes it (one preempted in its wait loop,
	 * its sleeping state set): its waker fields keep its preemptor (note_preemptor()).
	 */
	if (s->state == SP_TS_OFF && s->key.caller == SP_CALLER_PREEMPTED)
		return 0;
	s->wake_ts = bpf_ktime_get_ns();
	cur = bpf_get_current_task_btf();
	pc = sp_preempt_count(cur, has_preempt_rq_off, preempt_rq_off);
	if (pc > 0 && (pc & SP_HARDIRQ_MASK)) {
		s->waker_ctx = SP_WAKER_HARDIRQ;
	} else if (pc > 0 && (pc & SP_SOFTIRQ_OFFSET)) {
		s->waker_ctx = SP_WAKER_SOFTIRQ;
	} else {
		s->waker_ctx = SP_WAKER_TASK;
		/* read directly from the trusted task: cheaper than bpf_get_current_comm() */
		__builtin_memcpy(s->waker_comm, cur->comm, sizeof(s->waker_comm));
	}
	s->waker_fn = wake_walk ? waker_function(ctx) : SP_WAKER_NOT_WALKED;
	return 0;
}

/* A new task's first wake-up: its wait for a CPU, in the budget only (it has no row). */
SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sp_wakeup_new, struct task_struct *p)
{
	struct sp_task *ts = NULL;
	struct sp_sleep *s;
	__u64 now;

	if (sched_stop_ns || p->pid == 0)
		return 0;
	if (!targ_all) /* (with -a its storage is created below anyway) */
		ts = traced_get(p, 0);
	if (!task_traced_other_st(p, ts))
		return 0;
	now = bpf_ktime_get_ns();
	s = task_first_seen(p, now, SP_FIRST_NEW, &ts);
	if (!s)
		return 0;
	s->state = SP_TS_NEW;
	s->wake_ts = now;
	return 0;
}

/*
 * At the stop (the programs frozen by sched_stop_ns), run once by user space over every
 * task: writes the state of each traced task that is still running, asleep or waiting for a
 * CPU (struct sp_sleep), which user space charges up to the end of the run (rows.c).
 * Read then, not later: a task that exits after the stop takes its storage with it.
 */
SEC("iter/task")
int sp_sched_stop(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct sp_sleep *s;

	if (!t || t->pid == 0)
		return 0;
	s = task_sleep(t, 0);
	if (!s || (s->state != SP_TS_RUNNING && s->state != SP_TS_OFF && s->state != SP_TS_NEW))
		return 0;
	s->pid = t->pid;
	bpf_seq_write(ctx->meta->seq, s, sizeof(*s));
	return 0;
}

/*
 * The one sched_switch program of every view: each view's part is on when its flag
 * (common.bpf.h) was set before load, and costs nothing otherwise. next's and prev's task
 * storage (target.bpf.h struct sp_task, every view's) is looked up once each, for all the
 * parts: on task-heavy work a lookup is a few cache misses (the task's storage pointer, its
 * cache slot, the element). next's switch-in first, then prev's switch-out, each with its
 * own task's storage only (the verifier then walks the switch-out once, not once per state
 * of next's pointer). With -a, sched_switch_out() looks prev's up after the caller's walk
 * (with -a it counts every prev, so pt is always set for the parts after it).
 *
 * In three builds (include/schedprof/progs.h), of which user space loads one: sp_switch finds a
 * voluntary switch's caller by the fast path (caller_fast), sp_switch_tl too, with the
 * timeline's part (--timeline), and sp_switch_full walks every one and keeps its stack (full
 * stacks: --stacks, -g, a format that draws them; the timeline's part behind its flag).
 * Each holds only its own code: with the others' behind flags, the verifier would be handed
 * their dead code (the full walk, the stack keeping, the user stacks' subprograms, the
 * timeline) at every load, and its removal, one memmove of the whole program per dead
 * range, costs more than the checks of the live part.
 */
static __always_inline int sched_switch(void *ctx, struct task_struct *prev,
					struct task_struct *next, unsigned int prev_state,
					const bool fast, const bool timeline)
{
	__u64 now = bpf_ktime_get_ns(), runq = 0;
	struct sp_task *pt = NULL, *nt = NULL;

	if (switch_locks || switch_sched)
		nt = traced_get(next, 0);
	if (switch_locks && lock_in_needs(nt)) /* (sleep_ts is set only with the flag) */
		lock_switch_in(nt, lock_task_get(next, 0), now);
	if (switch_sched && !sched_stop_ns)
		runq = sched_switch_in(next, &nt, now);
	if (switch_sched && !sched_stop_ns) {
		if (!targ_all) /* its mark says whether it is traced */
			pt = traced_get(prev, 0);
		/* before the switch-out: nothing of it held across the caller's walk */
		if (runq && nt)
			takers_in(prev, nt, pt, runq);
		/* sets pt when it counts prev */
		sched_switch_out(ctx, prev, &pt, prev_state, now, fast, next);
	} else if (switch_locks || (timeline && switch_timeline)) {
		pt = traced_get(prev, 0);
	}
	if (switch_locks && lock_out_needs(pt, prev_state))
		lock_switch_out(pt, lock_task_get(prev, 0), now);
	if (timeline && switch_timeline) /* after the fold: it reads it */
		timeline_on_switch(prev, next, &pt, prev_state, now);
	return 0;
}

/*
 * prev's state for the parts: TASK_RUNNING when it was preempted. A task preempted after it
 * set a sleeping state (between set_current_state() and schedule(), as in every lock's wait
 * loop) is not dequeued (__schedule(): a preemption dequeues no task), so it waits for a
 * CPU, not for its wake-up; its prev_state still says the sleeping state. Common on
 * PREEMPT_RT in the lock slow paths (counted as sleeps, their caller preempt_schedule_thunk).
 */
#define SP_SWITCH_STATE(preempt, prev_state) ((preempt) ? 0 : (prev_state))

/* One program a build (include/schedprof/progs.h): sp_switch, sp_switch_tl, sp_switch_full. */
#define SP_SWITCH_PROG(program, build, provides, options)                                      \
	SEC("tp_btf/sched_switch")                                                              \
	int BPF_PROG(build, bool preempt, struct task_struct *prev, struct task_struct *next,   \
		     unsigned int prev_state)                                                   \
	{                                                                                       \
		return sched_switch(ctx, prev, next, SP_SWITCH_STATE(preempt, prev_state),      \
				    !SP_BUILD_HAS(provides, SP_BUILD_FULL_WALKS),               \
				    SP_BUILD_HAS(provides, SP_BUILD_TIMELINE));                 \
	}
SP_SWITCH_BUILDS(SP_SWITCH_PROG)
