/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One kernel stack walk, folded to the caller (include/schedprof/fold.h) and hashed, shared
 * by the views that key rows by caller (schedules, locks). Each view has its own per-CPU
 * `struct sp_walk` scratch map (a lock contention can interrupt the switch program on the
 * same CPU) and its own stack map.
 *
 * The fold state lives in the scratch map, not on the BPF stack: map memory is not tracked
 * by the verifier, so the bpf_loop() callback converges at once instead of being verified
 * again for every combination of fold-state constants (10k -> 1k instructions for
 * sp_switch, most of its load time).
 */
#ifndef SCHEDPROF_WALK_BPF_H
#define SCHEDPROF_WALK_BPF_H

#include "common.bpf.h"
#include "schedprof/fold.h"
#include "schedprof/sched.h"

struct sp_walk {
	struct sp_stack stack;
	struct sp_fold_state st;
	__u64 hash;
};

struct sp_walk_ctx {
	struct sp_walk *w;
};

/* One frame, for bpf_loop(): hashes it, and folds it until the caller is found. */
static long sp_walk_frame(__u64 i, struct sp_walk_ctx *c)
{
	struct sp_walk *w = c->w;
	__u64 ip;

	if (i >= w->stack.nr || i >= SP_MAX_STACK_DEPTH)
		return 1;
	ip = w->stack.ip[i & (SP_MAX_STACK_DEPTH - 1)];
	w->hash = sp_mix(w->hash, ip);
	if (w->st.caller == SP_CALLER_UNKNOWN) {
		int cls = fold_class(ip);

		sp_fold_step_known(&w->st, ip, cls & 1, cls >> 1);
	}
	return 0;
}

/*
 * Captures the current kernel stack into the scratch map (a struct sp_walk, or any struct
 * whose first member is its struct sp_stack). Returns 1, or 0 when the stack could not be
 * read (counted).
 */
static __always_inline int sp_walk_get(void *ctx, void *scratch, __u64 *stack_fail)
{
	struct sp_stack *s;
	__u32 zero = 0;
	long n;

	s = bpf_map_lookup_elem(scratch, &zero);
	if (!s)
		return 0;
	n = bpf_get_stack(ctx, s->ip, sizeof(s->ip), 0);
	if (n <= 0) {
		sp_drop(*stack_fail);
		return 0;
	}
	s->nr = n / sizeof(__u64);
	return 1;
}

/*
 * Folds the stack in the scratch map w (a struct sp_walk: sp_walk_get()'s, or one built from
 * the raw words) into st (caller, wait) and hashes it. Returns w, or NULL when there is none
 * (have: 0).
 */
static __always_inline struct sp_walk *sp_walk_fold_have(void *scratch, struct sp_fold_state *st,
							 int have)
{
	struct sp_walk_ctx c;
	struct sp_walk *w;
	__u32 zero = 0;

	st->caller = SP_CALLER_UNKNOWN;
	st->wait = SP_WAIT_NONE;
	w = have ? bpf_map_lookup_elem(scratch, &zero) : NULL;
	if (!w)
		return NULL;
	w->st.caller = SP_CALLER_UNKNOWN;
	w->st.wait = SP_WAIT_NONE;
	w->st.seen_sched = 0;
	w->hash = SP_HASH_SEED;
	c.w = w;
	bpf_loop(SP_MAX_STACK_DEPTH, sp_walk_frame, &c, 0);
	st->caller = w->st.caller;
	st->wait = w->st.wait;
	return w;
}

/*
 * Captures the current kernel stack into the scratch map w (a struct sp_walk) and folds it
 * into st (caller, wait). Returns w, or NULL when the stack could not be read (counted).
 */
static __always_inline struct sp_walk *sp_walk_only(void *ctx, void *scratch,
						    struct sp_fold_state *st, __u64 *stack_fail)
{
	return sp_walk_fold_have(scratch, st, sp_walk_get(ctx, scratch, stack_fail));
}

/* A waker's stack, folded past the wake-up machinery (fold.h sp_wake_fold_step). */
struct sp_wake_walk {
	struct sp_stack stack;
	struct sp_wake_fold_state st;
};

struct sp_wake_walk_ctx {
	struct sp_wake_walk *w;
};

static long sp_wake_walk_frame(__u64 i, struct sp_wake_walk_ctx *c)
{
	struct sp_wake_walk *w = c->w;

	if (i >= w->stack.nr || i >= SP_MAX_STACK_DEPTH)
		return 1;
	return sp_wake_fold_step(&w->st, &fold_cfg, w->stack.ip[i & (SP_MAX_STACK_DEPTH - 1)]);
}

/*
 * The waker's function from the stack in scratch (a per-CPU struct sp_wake_walk: from
 * sp_walk_get(), or built from the raw words): the first frame outside the wake-up
 * machinery, SP_WAKER_TIMER, or SP_WAKER_UNKNOWN (have: 0, no stack).
 */
static __always_inline __u64 sp_wake_fold(void *scratch, int have)
{
	struct sp_wake_walk_ctx c;
	struct sp_wake_walk *w;
	__u32 zero = 0;

	w = have ? bpf_map_lookup_elem(scratch, &zero) : NULL;
	if (!w)
		return SP_WAKER_UNKNOWN;
	w->st.function = SP_WAKER_UNKNOWN;
	w->st.seen = 0;
	w->st.done = 0;
	c.w = w;
	bpf_loop(SP_MAX_STACK_DEPTH, sp_wake_walk_frame, &c, 0);
	return w->st.function;
}

#endif
