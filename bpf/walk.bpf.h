/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One kernel stack walk, folded to the caller (include/schedprof/fold.h) and hashed, shared
 * by the views that key rows by caller (schedules, locks). Each view has its own per-CPU
 * `struct sp_walk` scratch map and its own stack map.
 *
 * The fold state lives in the scratch map, not on the BPF stack: map memory is not tracked
 * by the verifier, so the bpf_loop() callback converges at once instead of being verified
 * again for every combination of fold-state constants (10k -> 1k instructions for
 * sp_switch, most of its load time).
 */
#ifndef SCHEDPROF_WALK_BPF_H
#define SCHEDPROF_WALK_BPF_H

#include "schedprof/fold.h"
#include "schedprof/sched.h"

/* Defined in sched.bpf.c, written by user space after load (src/foldcfg.c). */
extern struct sp_fold_cfg fold_cfg;

struct sp_walk {
	struct sp_stack stack;
	struct sp_fold_state st;
	__u64 hash;
};

struct sp_walk_ctx {
	struct sp_walk *w;
};

static __always_inline __u64 sp_mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x100000001b3ULL;
	return h ^ (h >> 29);
}

/* One frame, for bpf_loop(): hashes it, and folds it until the caller is found. */
static long sp_walk_frame(__u64 i, struct sp_walk_ctx *c)
{
	struct sp_walk *w = c->w;
	__u64 ip;

	if (i >= w->stack.nr || i >= SP_MAX_STACK_DEPTH)
		return 1;
	ip = w->stack.ip[i & (SP_MAX_STACK_DEPTH - 1)];
	w->hash = sp_mix(w->hash, ip);
	sp_fold_step(&w->st, &fold_cfg, ip);
	return 0;
}

/*
 * Captures the current kernel stack into w and folds it: w->st.caller, w->st.wait and a
 * nonzero w->hash. Returns false when the stack could not be read (the caller counts it).
 */
static __always_inline bool sp_walk_stack(void *ctx, struct sp_walk *w)
{
	struct sp_walk_ctx c = { .w = w };
	long n;

	w->st.caller = SP_CALLER_UNKNOWN;
	w->st.wait = SP_WAIT_NONE;
	w->st.seen_sched = 0;
	n = bpf_get_stack(ctx, w->stack.ip, sizeof(w->stack.ip), 0);
	if (n <= 0)
		return false;
	w->stack.nr = n / sizeof(__u64);
	w->hash = 0xcbf29ce484222325ULL;
	bpf_loop(SP_MAX_STACK_DEPTH, sp_walk_frame, &c, 0);
	if (!w->hash)
		w->hash = 1;
	return true;
}

/* Keeps the walked stack in a stack map under its hash. false when the map is full. */
static __always_inline bool sp_walk_keep(void *stack_map, struct sp_walk *w)
{
	__u64 h = w->hash;

	return bpf_map_lookup_elem(stack_map, &h) ||
	       !bpf_map_update_elem(stack_map, &h, &w->stack, BPF_NOEXIST) ||
	       bpf_map_lookup_elem(stack_map, &h);
}

#endif
