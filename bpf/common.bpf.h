/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every bpf/ object shares: map declarations, the counting helpers (max, lookup-or-init,
 * stack keep, hash) and the globals defined once in common.bpf.c (the fold configuration and
 * the flags that switch the parts of the one sched_switch program on).
 *
 * All the objects are linked into one (bpftool gen object): a map or global defined in one
 * is declared `extern` in the others, with the same type (hence the SP_*_MAP macros).
 */
#ifndef SCHEDPROF_COMMON_BPF_H
#define SCHEDPROF_COMMON_BPF_H

#include "schedprof/fold.h"

/* ---- maps ---- */

#define SP_MAP(_name, _type, _flags, _max, _key, _val)				\
	struct {								\
		__uint(type, _type);						\
		__uint(map_flags, _flags);					\
		__uint(max_entries, _max);					\
		__type(key, _key);						\
		__type(value, _val);						\
	} _name SEC(".maps")

/* Preallocated: no allocation in the programs, the map's size is paid at load. */
#define SP_HASH_MAP(_name, _max, _key, _val) SP_MAP(_name, BPF_MAP_TYPE_HASH, 0, _max, _key, _val)
/* Allocated on use: for large values whose map is often nearly empty. */
#define SP_HASH_MAP_LAZY(_name, _max, _key, _val)					\
	SP_MAP(_name, BPF_MAP_TYPE_HASH, BPF_F_NO_PREALLOC, _max, _key, _val)
/*
 * Per-task state: BPF task storage, and beside it the same values in a preallocated hash keyed
 * by the task's address (<name>_hash), which the programs use instead where creating task
 * storage could take a sleeping lock (task_hash, below). _ext: `extern` where the maps are
 * declared, nothing where they are defined.
 */
#define SP_TASK_MAP(_ext, _name, _val)							\
	_ext SP_MAP(_name, BPF_MAP_TYPE_TASK_STORAGE, BPF_F_NO_PREALLOC, 0, int, _val);	\
	_ext SP_HASH_MAP(_name##_hash, 1, __u64, _val)
/* One per-CPU value: scratch space too large for the 512-byte BPF stack. */
#define SP_SCRATCH_MAP(_name, _val) SP_MAP(_name, BPF_MAP_TYPE_PERCPU_ARRAY, 0, 1, __u32, _val)

/* ---- globals of common.bpf.c ---- */

/*
 * Where to fold a stack (include/schedprof/fold.h), written by user space once after load
 * (src/collect/trace_load.c). Kept out of .rodata on purpose: with known constants the verifier
 * explores every comparison of every frame against every range separately and gives up
 * (1M instructions); as plain data it does not.
 */
extern struct sp_fold_cfg fold_cfg;

/*
 * The parts of the one sched_switch program (schedules.bpf.c sp_switch), set before load by the
 * views that need them: a part that is off is dead code, removed by the verifier.
 */
extern const volatile __u32 switch_sched; /* the schedules view */
extern const volatile __u32 switch_locks; /* the locks view's sleepers */
/*
 * Where this CPU's preempt count is, at this distance from its runqueue (compat.bpf.h
 * sp_preempt_count()), when known: set before load by every part that tells interrupt
 * context apart (the wake-up programs of the schedules view and of the timeline).
 */
extern const volatile __u32 has_preempt_rq_off;
extern const volatile __s64 preempt_rq_off;
/*
 * Each CPU's runqueue address, written once per CPU before attach by sp_cpu_probe (run on
 * that CPU by user space: trace_load.c) when has_preempt_rq_off; 0 where not known.
 */
extern __u64 sp_cpu_rq[SP_MAX_CPUS];

/*
 * The run's start (bpf_ktime_get_ns(), CLOCK_MONOTONIC), written by user space: the time
 * budget of the schedules view counts from it. 0 until then: nothing is charged.
 */
extern __u64 trace_t0;

/*
 * ip's class for the fold (sp_fold_in_text() | sp_fold_wait_of() << 1), for
 * sp_fold_step_known(): a global function, so the verifier checks the range loops once
 * instead of at every frame loop that folds.
 */
int fold_class(__u64 ip);
/* ip's class for the wakers' fold (sp_wake_fold_step_known()): bit 0 machinery, bit 1 timer */
int wake_class(__u64 ip);

/*
 * Zeros, to create map values from: in .rodata, a map value, which every kernel takes as a
 * helper's value (before Linux 6.2 not a global function's pointer argument, nor
 * task-storage memory), and not on the 512-byte BPF stack (before ~6.13 a program and its
 * callees share it). Never written.
 */
#define SP_ZEROS_BYTES 256
extern const volatile __u64 sp_zeros[SP_ZEROS_BYTES / 8];
#define SP_ZEROS(type)									\
	({										\
		_Static_assert(sizeof(type) <= SP_ZEROS_BYTES, "sp_zeros is too small");	\
		(const void *)sp_zeros;							\
	})

/*
 * Where the per-task state lives (SP_TASK_MAP), set before load by user space from the
 * kernel's features (trace_load.c apply_features()): 0, task storage; 1, the preallocated
 * hashes, on a kernel where a program that cannot sleep must not create task storage
 * (PREEMPT_RT with task storage allocated by kmalloc: the slab's per-CPU lock is a sleeping
 * rt_spin_lock there, taken with interrupts off from sched_switch). Constant to the
 * verifier, which removes the other way's code.
 */
extern const volatile __u32 task_hash;
/*
 * Per-task states not created because their hash was full (or its bucket busy on this CPU):
 * counted once per attempt, reported as a loss (trace.c).
 */
extern __u64 task_state_full;

/* ---- helpers ---- */

/* Counts one event that could not be recorded (the drop counters in .bss). */
#define sp_drop(counter) __sync_fetch_and_add(&(counter), 1)

/* *p = max(*p, v), racing other CPUs: a few tries, then the other CPU's larger value stands. */
static __always_inline void sp_update_max(__u64 *p, __u64 v)
{
	for (int i = 0; i < 4; i++) {
		__u64 old = *p;

		if (v <= old || __sync_val_compare_and_swap(p, old, v) == old)
			return;
	}
}

/* The value for key, created from init when missing; NULL only when the map is full. */
static __always_inline void *sp_lookup_or_init(void *map, const void *key, const void *init)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key); /* ours, or the other CPU's that won the race */
}

/* Adds n to a __u64 value of map (from 0 when missing). false when the map is full. */
static __always_inline bool sp_count(void *map, const void *key, __u64 n)
{
	__u64 zero = 0, *v = sp_lookup_or_init(map, key, &zero);

	if (!v)
		return false;
	__sync_fetch_and_add(v, n);
	return true;
}

/*
 * t's cgroup v2 id (a trusted task pointer), as bpf_get_current_cgroup_id() gives current's:
 * by direct loads, which cost a sched_switch program less than that helper does.
 */
static __always_inline __u64 sp_task_cgroup(struct task_struct *t)
{
	return t->cgroups->dfl_cgrp->kn->id;
}

/* FNV-1a-like step over 64-bit words; the seed is the FNV offset basis. */
#define SP_HASH_SEED 0xcbf29ce484222325ULL

static __always_inline __u64 sp_mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x100000001b3ULL;
	return h ^ (h >> 29);
}

/*
 * Keeps a stack in a stack map under its hash (0 becomes 1: 0 means "no stack" in keys).
 * Returns the key it is kept under, or 0 when the map is full.
 */
static __always_inline __u64 sp_stack_keep(void *map, __u64 h, const void *stack)
{
	if (!h)
		h = 1;
	if (bpf_map_lookup_elem(map, &h) || !bpf_map_update_elem(map, &h, stack, BPF_NOEXIST) ||
	    bpf_map_lookup_elem(map, &h))
		return h;
	return 0;
}

/*
 * The per-task state of t (a trusted task pointer) in the maps of SP_TASK_MAP(storage): as
 * bpf_task_storage_get(storage, t, 0, flags), created (zeroed) with
 * BPF_LOCAL_STORAGE_GET_F_CREATE; NULL when t has none, or it could not be created.
 * With task_hash, from storage's hash, keyed by t's address (unique while t lives: the entry
 * is deleted when t is freed, target.bpf.c sp_task_free); creating one takes a preallocated
 * element, never an allocation. Without it, only the task storage call is left after load.
 */
static __always_inline void *sp_task_get(void *storage, void *hash, struct task_struct *t,
					 __u64 flags, const void *zeros)
{
	__u64 key;
	void *v;

	if (!task_hash)
		return bpf_task_storage_get(storage, t, 0, flags);
	key = (__u64)t;
	v = bpf_map_lookup_elem(hash, &key);
	if (v || !(flags & BPF_LOCAL_STORAGE_GET_F_CREATE))
		return v;
	bpf_map_update_elem(hash, &key, zeros, BPF_NOEXIST);
	v = bpf_map_lookup_elem(hash, &key); /* ours, or the other CPU's that won the race */
	if (!v)
		sp_drop(task_state_full);
	return v;
}

/* sp_task_get() of the SP_TASK_MAP(name), typed as its values (type). */
#define SP_TASK_GET(name, type, t, flags)							\
	((type *)sp_task_get(&name, &name##_hash, t, flags, SP_ZEROS(type)))

#endif
