/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Whole kernel stacks from the raw words (docs/design/kernel-stacks.md): the caller fast path
 * (fastcaller.bpf.h) carried on to the stack's top, so that a kept stack (--stacks, -g,
 * --lock-stacks) or a waker's (--wakers) is most often built without bpf_get_stack()'s ORC
 * unwind. It gives the very frames the walk would: the walk's own first frames (below the
 * argument array: the program's and the tracepoint's, constant per program, learned as the
 * start's prefix), then the return addresses hopped through by the learned distances.
 *
 * The stack's end, and do_syscall_64()'s random offset: the walk ends at the entry code's
 * frame under the user's registers, at a fixed place below the stack's top, while the
 * distance to it from do_syscall_64()'s frame changes at every syscall
 * (CONFIG_RANDOMIZE_KSTACK_OFFSET). So frame_dist also learns, from the full walks, where an
 * address was the walk's last frame (words from the top: `top`) and whether an address's
 * next frame was that last frame (`link`, `next_top`). A hop from an address whose next was
 * only ever the top's goes straight to that word; a stack ends at an address only where it
 * sits at the very place from the top where it was always last, and never at an address
 * also seen with frames above it (an exception entry taken in the kernel).
 *
 * Misses, checks and counts are the caller path's: anything not learned takes the full walk
 * (which teaches the map, backing off while it teaches nothing new), and now and then (each
 * time with --verify-callers) a fast stack is checked against a full walk, frame by frame; a
 * mismatch is counted, the walk's stack is kept, and the hopped addresses are never hopped
 * again.
 */
#ifndef SCHEDPROF_FASTSTACK_BPF_H
#define SCHEDPROF_FASTSTACK_BPF_H

#include "fastcaller.bpf.h"

#define SP_TOP_WORDS 64 /* the stack's last words searched for the walk's last frame */
/*
 * Words a learning reads from the argument array (4 KiB): a whole syscall's stack on the
 * workloads measured (docs/design/kernel-stacks.md), so that do_syscall_64()'s frame, past
 * the hops' 1 KiB when the random offset is large, is still learned.
 */
#define SP_LEARN_WORDS 512
/*
 * A frame is learned where its address is the only copy within this many words (512 bytes)
 * above the previous frame: the random offset's gap holds whole chains of earlier system
 * calls, whose stale copies further up would otherwise block it for good. A larger frame is
 * not learned, or, with a stale copy inside the window, learned wrong: its next learning
 * then disagrees and marks it variable, and a check by a full walk catches what it built.
 */
#define SP_KLEARN_WINDOW 64
#define SP_LEARN_BACKOFF_MAX 16

/* kstack_cache: 0 turns the whole-stack cache off (--kstack-cache 0): every stack is walked */
#ifdef SP_FASTCALLER_DEFINE
const volatile __u32 kstack_cache = 1;
#else
extern const volatile __u32 kstack_cache;
#endif

/*
 * i & mask, which the compiler cannot drop: after a bound check it otherwise indexes with the
 * bare value, and before 6.2 the verifier loses a bound checked in 32 bits, or on a copy
 * spilled to the stack.
 */
static __always_inline __u64 sp_idx(__u64 i, __u64 mask)
{
	/* verifier: opaque, so the mask stays */
	asm volatile("" : "+r"(i));
	return i & mask;
}

/* A program's per-CPU scratch for whole stacks. */
struct sp_kraw {
	__u64 w[SP_RAW_WORDS];
	__u64 lw[SP_LEARN_WORDS]; /* a learning's words: nlw from sp */
	__u64 tw[SP_TOP_WORDS]; /* the stack's last ntw words (learning) */
	struct sp_stack out;	/* the stack built from the words */
	/* folded and hashed as it is built: as sp_walk_fold_have() or sp_wake_fold() would */
	struct sp_fold_state st;
	struct sp_wake_fold_state wst;
	__u64 hash;
	__u32 wake_mode; /* 1: the wakers' fold, 0: the caller's and the hash */
	__u32 pad;
	__u64 sp;		/* where the words start: the tracepoint's argument array */
	__u64 ip;		/* the current frame's return address */
	__u32 nw;		/* words read */
	__u32 top;		/* words from sp to the stack's top */
	__u32 pos;		/* the current frame's word */
	__u32 ntw;
	__u32 since_check;
	__u32 check_every;
	__s32 result;		/* 1: the stack's end reached, -1: miss */
	/* learning from a full walk */
	__s32 prev_pos;
	__u64 prev_ip;
	__u64 target;
	__u32 from;
	__u32 count;
	__u32 found;
	__u32 tcount;
	__u32 tfound;
	__u32 misses;	   /* misses since the last learning */
	__u32 learn_every; /* misses between two learnings (0: 1) */
	__u32 nlw;
	struct sp_dist_slot slot[SP_DIST_SLOTS];
};

struct sp_kstack_ctx {
	struct sp_kraw *r;
	struct sp_stack *s;
	struct sp_stack_start *start;
};

/* One hop: on from the current frame, by its distance or to the top; 1 at the stack's end. */
static long kstack_hop(__u64 i, struct sp_kstack_ctx *c)
{
	struct sp_kraw *r = c->r;
	struct sp_frame_dist *d;
	struct sp_dist_slot *sl;
	__u64 ip = r->ip;
	__u32 pos = r->pos, gen, n = r->out.nr;

	sl = &r->slot[(ip ^ (ip >> 8)) & (SP_DIST_SLOTS - 1)];
	gen = *(volatile __u32 *)&frame_dist_gen;
	if (gen && sl->gen == gen && sl->ip == ip) {
		d = &sl->d;
	} else {
		asm volatile("" ::: "memory"); /* the generation before the entry */
		d = bpf_map_lookup_elem(&frame_dist, &ip);
		if (!d)
			goto miss;
		sl->ip = ip;
		sl->d = *d;
		sl->gen = gen;
		d = &sl->d;
	}
	if (r->wake_mode) {
		if (!(d->wake & SP_WAKE_KNOWN)) /* learned by the caller path only */
			goto miss;
		sp_wake_fold_step_known(&r->wst, ip, d->wake & 1, (d->wake >> 1) & 1);
	} else {
		r->hash = sp_mix(r->hash, ip);
		if (r->st.caller == SP_CALLER_UNKNOWN)
			sp_fold_step_known(&r->st, ip, d->in_text, d->wait);
	}
	if (pos >= r->top)
		goto miss;
	if (d->top && d->top != SP_TOP_NEVER && d->top == r->top - pos) {
		r->result = 1;
		return 1;
	}
	if (d->link == SP_LINK_TOP) {
		if (!d->next_top || d->next_top >= r->top - pos)
			goto miss;
		pos = r->top - d->next_top;
		if (pos < r->nw && pos < SP_RAW_WORDS)
			ip = r->w[sp_idx(pos, SP_RAW_MASK)];
		else if (bpf_probe_read_kernel(&ip, sizeof(ip), (void *)(r->sp + (__u64)pos * 8)))
			goto miss;
	} else if (d->dist > 0 && !(d->dist & 7)) {
		pos += (__u32)d->dist / 8;
		if (pos >= r->nw || pos >= SP_RAW_WORDS)
			goto miss;
		ip = r->w[sp_idx(pos, SP_RAW_MASK)];
	} else {
		goto miss;
	}
	if (n >= SP_MAX_STACK_DEPTH)
		goto miss;
	r->out.ip[sp_idx(n, SP_MAX_STACK_DEPTH - 1)] = ip;
	r->out.nr = n + 1;
	r->pos = pos;
	r->ip = ip;
	return 0;
miss:
	r->result = -1;
	return 1;
}

/* Where the words start (as sp_fast_at()): ctx, the tracepoint's argument array. */
static __always_inline void sp_kstack_at(void *raw_scratch, void *ctx)
{
	struct sp_kraw *r;
	__u32 zero = 0;

	r = bpf_map_lookup_elem(raw_scratch, &zero);
	if (r) {
		r->sp = (__u64)ctx;
		/* verifier: ctx kept through the scratch, read back as a scalar */
		asm volatile("" ::: "memory");
	}
}

/* The program's scratch, with the stack sp_kstack_pre() built, folded and hashed. */
static __always_inline struct sp_kraw *sp_kstack_raw(void *raw_scratch)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(raw_scratch, &zero);
}

/* Folds and hashes prefix frame i (a constant), as kstack_hop() does its frames. */
static __always_inline void kstack_prefix(struct sp_kraw *r, struct sp_stack_start *start, int i)
{
	__u64 ip = start->prefix[i];
	__u8 cls = start->pcls[i];

	r->out.ip[i] = ip;
	if (r->wake_mode) {
		sp_wake_fold_step_known(&r->wst, ip, start->pwake[i] & 1, (start->pwake[i] >> 1) & 1);
		return;
	}
	r->hash = sp_mix(r->hash, ip);
	if (r->st.caller == SP_CALLER_UNKNOWN)
		sp_fold_step_known(&r->st, ip, cls & 1, cls >> 1);
}

/*
 * Builds the stack from the raw words into r->out, folding it (wake_mode: the wakers' fold
 * into r->wst; else the caller's into r->st, and its hash into r->hash). Returns SP_FP_*
 * (fastcaller.bpf.h): HIT or CHECK with the stack in r->out, else the full walk is needed.
 */
static __always_inline int sp_kstack_pre(void *raw_scratch, struct sp_stack_start *start,
					 int wake_mode)
{
	struct sp_kstack_ctx c = {};
	struct sp_kraw *r;
	__u32 zero = 0, pos, np;
	__u64 ip;

	if (!kstack_cache)
		return SP_FP_NOSCRATCH;
	r = bpf_map_lookup_elem(raw_scratch, &zero);
	if (!r)
		return SP_FP_NOSCRATCH;
	if (!fast_read_words(r->sp, r->w, SP_RAW_WORDS, SP_RAW_WORDS, &r->nw, &r->top))
		return SP_FP_OFF;
	ip = start->ip;
	asm volatile("" ::: "memory"); /* the start's ip before the rest: written last */
	pos = start->pos;
	np = start->nprefix;
	if (!ip || pos >= r->nw || pos >= SP_RAW_WORDS || r->w[sp_idx(pos, SP_RAW_MASK)] != ip ||
	    np > SP_STACK_PREFIX_MAX)
		return SP_FP_MISS;
	r->wake_mode = wake_mode;
	r->hash = SP_HASH_SEED;
	r->st.caller = SP_CALLER_UNKNOWN;
	r->st.wait = SP_WAIT_NONE;
	r->st.seen_sched = 0;
	r->wst.function = SP_WAKER_UNKNOWN;
	r->wst.seen = 0;
	r->wst.done = 0;
	/* verifier: unrolled, constant indexes (before 6.2 a 32-bit compare bounds no index) */
#pragma unroll
	for (int i = 0; i < SP_STACK_PREFIX_MAX; i++)
		if (i < np)
			kstack_prefix(r, start, i);
	r->out.ip[sp_idx(np, SP_MAX_STACK_DEPTH - 1)] = ip;
	r->out.nr = np + 1;
	r->pos = pos;
	r->ip = ip;
	r->result = 0;
	c.r = r;
	bpf_loop(SP_MAX_STACK_DEPTH, kstack_hop, &c, 0);
	if (r->result != 1)
		return SP_FP_MISS;
	if (!r->check_every)
		r->check_every = SP_REVALIDATE;
	if (!verify_callers && ++r->since_check < r->check_every)
		return SP_FP_HIT;
	r->since_check = 0;
	return SP_FP_CHECK;
}

/* Compares frame i of the two stacks: stops at the first difference, its index in r->found. */
static long kstack_cmp(__u64 i, struct sp_kstack_ctx *c)
{
	struct sp_kraw *r = c->r;

	if (i >= r->out.nr || i >= c->s->nr || i >= SP_MAX_STACK_DEPTH) {
		r->found = i;
		return 1;
	}
	if (r->out.ip[sp_idx(i, SP_MAX_STACK_DEPTH - 1)] != c->s->ip[sp_idx(i, SP_MAX_STACK_DEPTH - 1)]) {
		r->found = i;
		return 1;
	}
	return 0;
}

/*
 * A fast stack the walk disagreed with at frame r->found: a prefix unlike the walk's is
 * learned again; else the frame before the difference, which led there (by its distance, its
 * jump to the top, or its end), is never hopped from or ended at again.
 */
static __always_inline void kstack_forget(struct sp_kraw *r, struct sp_stack_start *start)
{
	__u32 i = r->found;
	__u64 ip;

	if (i <= start->nprefix || i > SP_MAX_STACK_DEPTH) {
		start->ip = 0; /* learned again from the next walk */
		return;
	}
	ip = r->out.ip[sp_idx(i - 1, SP_MAX_STACK_DEPTH - 1)];
	learn_dist(ip, SP_DIST_VARIABLE);
	learn_edge(ip, 0, SP_LINK_MID, 0);
}

/* Counts the copies of r->target in the window from r->from on (stops at the second). */
static long klearn_word(__u64 j, struct sp_kstack_ctx *c)
{
	struct sp_kraw *r = c->r;
	__u32 idx = r->from + (__u32)j;

	if (j >= SP_KLEARN_WINDOW || idx >= r->nlw || idx >= SP_LEARN_WORDS)
		return 1;
	if (r->lw[sp_idx(idx, SP_LEARN_WORDS - 1)] != r->target)
		return 0;
	if (!r->count)
		r->found = idx;
	r->count++;
	return r->count > 1;
}

/*
 * The same in the stack's last words. A callback of its own: one for both searches, choosing
 * its words by a flag, made the verifier walk both ways at each call (+5.5k instructions).
 */
/* verifier: apart from klearn_word(), which would walk both searches at each call */
static long klearn_top_word(__u64 j, struct sp_kstack_ctx *c)
{
	struct sp_kraw *r = c->r;

	if (j >= r->ntw || j >= SP_TOP_WORDS)
		return 1;
	if (r->tw[sp_idx(j, SP_TOP_WORDS - 1)] != r->target)
		return 0;
	if (!r->tcount)
		r->tfound = j;
	r->tcount++;
	return r->tcount > 1;
}

/* One frame of a full walk, found in the raw words: what it teaches. 1 stops. */
static long klearn_frame(__u64 k, struct sp_kstack_ctx *c)
{
	struct sp_kraw *r = c->r;
	struct sp_stack *s = c->s;
	__u32 nr = s->nr, top_off = 0, at_top;
	struct sp_frame_dist *d;
	bool last;
	__u64 ip;

	if (k >= nr || k >= SP_MAX_STACK_DEPTH)
		return 1;
	if (k == 0) /* where the walk began: not a return address */
		return 0;
	ip = s->ip[sp_idx(k, SP_MAX_STACK_DEPTH - 1)];
	last = k == nr - 1 && nr < SP_MAX_STACK_DEPTH;
	r->target = ip;
	r->from = r->prev_pos < 0 ? 0 : r->prev_pos + 1;
	r->count = 0;
	d = r->prev_pos < 0 ? NULL : bpf_map_lookup_elem(&frame_dist, &r->prev_ip);
	if (d && d->dist > 0 && !(d->dist & 7) &&
	    r->prev_pos + (__u32)d->dist / 8 < r->nlw &&
	    r->lw[sp_idx(r->prev_pos + (__u32)d->dist / 8, SP_LEARN_WORDS - 1)] == ip) {
		/* where the previous frame's learned distance says: learned where it was unique */
		r->count = 1;
		r->found = r->prev_pos + (__u32)d->dist / 8;
	} else if (!(r->nlw == SP_LEARN_WORDS && r->from + SP_LEARN_SPAN > SP_LEARN_WORDS)) {
		/* as learn_frame(): where the words were cut, only where a whole frame fits */
		bpf_loop(SP_LEARN_WORDS, klearn_word, c, 0);
	}
	if (last && r->ntw) {
		r->tcount = 0;
		bpf_loop(SP_TOP_WORDS, klearn_top_word, c, 0);
		if (r->tcount == 1)
			top_off = r->ntw - r->tfound;
	}
	at_top = top_off && top_off < r->top ? r->top - top_off : 0;
	if (r->prev_pos < 0) {
		if (r->count == 0)
			return 0; /* not yet above the argument array */
		if (r->count != 1 || k > SP_STACK_PREFIX_MAX)
			return 1;
		c->start->ip = 0; /* a reader sees no start while it changes */
		asm volatile("" ::: "memory");
#pragma unroll
		for (int i = 0; i < SP_STACK_PREFIX_MAX; i++) {
			if (i < k) {
				c->start->prefix[i] = s->ip[i];
				c->start->pcls[i] = fold_class(s->ip[i]);
				c->start->pwake[i] = wake_class(s->ip[i]);
			}
		}
		c->start->nprefix = k;
		c->start->pos = r->found;
		asm volatile("" ::: "memory");
		c->start->ip = ip;
		r->prev_pos = r->found;
		r->prev_ip = ip;
		if (last && at_top == r->found)
			learn_edge(ip, top_off, 0, 0);
		return last;
	}
	if (last && at_top > (__u32)r->prev_pos && (r->count == 0 || r->found == at_top)) {
		/* the walk's end, at the top: reached from the previous frame by a jump */
		learn_edge(ip, top_off, 0, 0);
		learn_edge(r->prev_ip, -1, SP_LINK_TOP, top_off);
		return 1;
	}
	/*
	 * The frame under the entry's (do_syscall_64()'s): the random offset's gap above it holds
	 * stale copies of it from earlier system calls, whose offsets were smaller; the real one
	 * is the first above the previous frame.
	 */
	if (r->count > 1 && k + 2 == nr && nr < SP_MAX_STACK_DEPTH)
		r->count = 1;
	if (r->count != 1)
		return 1; /* past the words read, or not the only copy: stop */
	learn_dist(r->prev_ip, (__s32)(r->found - r->prev_pos) * 8);
	learn_edge(r->prev_ip, -1, SP_LINK_MID, 0);
	if (!last)
		learn_edge(ip, 0, 0, 0); /* not the last: never ends a stack */
	r->prev_pos = r->found;
	r->prev_ip = ip;
	return last;
}

/* Teaches frame_dist and start from the full walk's stack s, over the words r read. */
static __always_inline void kstack_learn(struct sp_kraw *r, struct sp_stack *s,
					 struct sp_stack_start *start)
{
	struct sp_kstack_ctx c = { r, s, start };
	__u32 gen = frame_dist_gen, ntw;
	__u64 from, len;

	if (r->learn_every > 1 && ++r->misses < r->learn_every)
		return;
	r->misses = 0;
	len = r->top < SP_LEARN_WORDS ? r->top : SP_LEARN_WORDS;
	len = sp_idx(len, 2 * SP_LEARN_WORDS - 1) * sizeof(__u64);
	r->nlw = 0;
	if (len && len <= sizeof(r->lw) && !bpf_probe_read_kernel(r->lw, len, (void *)r->sp))
		r->nlw = len / sizeof(__u64);
	ntw = r->top < SP_TOP_WORDS ? r->top : SP_TOP_WORDS;
	from = r->sp + ((__u64)r->top - ntw) * 8;
	r->ntw = 0;
	len = sp_idx(ntw, 2 * SP_TOP_WORDS - 1) * sizeof(__u64);
	if (len && len <= sizeof(r->tw) && !bpf_probe_read_kernel(r->tw, len, (void *)from))
		r->ntw = ntw;
	r->prev_pos = -1;
	r->prev_ip = 0;
	bpf_loop(SP_MAX_STACK_DEPTH, klearn_frame, &c, 0);
	/* a learning that taught nothing backs off: the misses left are the cache's limits */
	if (frame_dist_gen != gen)
		r->learn_every = 1;
	else if (r->learn_every < SP_LEARN_BACKOFF_MAX)
		r->learn_every = r->learn_every ? r->learn_every * 2 : 2;
}

/*
 * After the full walk, when sp_kstack_pre() asked for one (walked: it succeeded, its stack in
 * *s). Returns SP_FC_* for the program's counters. SP_FC_FAST without a walk: the stack to
 * use is the one sp_kstack_pre() built (sp_kstack_raw()); with one, the walk's.
 */
static __always_inline int sp_kstack_post(int pre, int walked, void *raw_scratch,
					  struct sp_stack *s, struct sp_stack_start *start)
{
	struct sp_kstack_ctx c;
	struct sp_kraw *r;
	__u32 zero = 0;

	r = bpf_map_lookup_elem(raw_scratch, &zero);
	if (!r)
		return 0;
	if (pre == SP_FP_HIT || (pre == SP_FP_CHECK && !walked))
		return SP_FC_FAST;
	if (!s)
		return 0;
	c.r = r;
	c.s = s;
	c.start = start;
	if (pre == SP_FP_CHECK) {
		r->found = SP_MAX_STACK_DEPTH + 1;
		bpf_loop(SP_MAX_STACK_DEPTH + 1, kstack_cmp, &c, 0);
		if (r->found >= r->out.nr && r->found >= s->nr) {
			if (r->check_every < SP_REVALIDATE_MAX)
				r->check_every *= 2;
			return SP_FC_FAST | SP_FC_VERIFIED;
		}
		r->check_every = SP_REVALIDATE;
		kstack_forget(r, start);
		return SP_FC_FAST | SP_FC_VERIFIED | SP_FC_MISMATCH;
	}
	if (pre == SP_FP_OFF)
		return SP_FC_OFF;
	if (pre == SP_FP_MISS && walked)
		kstack_learn(r, s, start);
	return 0;
}

#endif
