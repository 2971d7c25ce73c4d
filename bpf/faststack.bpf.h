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

/*
 * A CPU's memo of the stacks a program built (8 entries, replaced in turn). The hops are a
 * function of the start, frame_dist (frame_dist_gen: it changes with any entry) and the
 * words they read: the return addresses at the places the hops went to, each a place from
 * the argument array, or from the stack's top for the frame reached by a jump to the top.
 * So where the start and the generation are the same, and each of those
 * places holds the same address again, the hops would build the same stack: its fold and
 * hash are the memo's, and it is in the view's map already (kept). Checks are the hops':
 * a check builds the stack anyway, and one unlike the memo's is a mismatch (the entry goes).
 * The frames hopped to by distance are in the words read (pos[], ip[]: their order does not
 * matter to the comparison), the one jumped to from the top apart (top_off, top_ip).
 */
#define SP_KMEMO 8
#define SP_KMEMO_FRAMES 48
struct sp_kmemo {
	__u64 start_ip; /* 0: empty */
	__u64 hash;
	struct sp_fold_state st;
	struct sp_wake_fold_state wst;
	__u32 gen, start_pos, np, n; /* n: the frames hopped to by distance, pos[] and ip[] */
	__u32 kept;		     /* in the view's map (sp_kmemo_kept()) */
	__u32 maxpos;		     /* the highest of pos[] */
	__u32 top_off;		     /* the frame jumped to: words from the top (0: none) */
	__u32 pad;
	__u64 top_ip;
	__u16 pos[SP_KMEMO_FRAMES];
	__u64 ip[SP_KMEMO_FRAMES];
};

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
	/* the memo (struct sp_kmemo) */
	__u32 kmemo_hit;    /* sp_kstack_pre(): HIT from the memo (r->out not built) */
	__u32 kmemo_slot;   /* the entry of this stack (made or matched): sp_kmemo_kept() */
	__s32 kmemo_match;  /* a check: the entry that matched (-1: none) */
	__u32 kmemo_differed; /* ... and the stack built was not its */
	__u32 kmemo_next;
	/* the words the hops went to (struct sp_kmemo): by distance, and the jump to the top */
	__u32 nkpos, kmaxpos;
	__u32 ktop_off, kpad;
	__u64 ktop_ip;
	__u16 kpos[64];
	__u64 kip[64];
	struct sp_kmemo km[SP_KMEMO];
};

/* The memo's answer (ustack.bpf.h's way: global functions, in shared.bpf.c): an entry, or -1 */
int sp_kmemo_find(struct sp_kraw *r, __u64 start_ip, __u32 start_pos, __u32 np, __u32 gen);
/* Keeps the stack the hops just built in the memo (its slot into r->kmemo_slot). */
int sp_kmemo_put(struct sp_kraw *r, __u64 start_ip, __u32 start_pos, __u32 np, __u32 gen);

/* The word pos of the raw stack: from the words read, else read. 0 or the read's error. */
static __always_inline long kraw_word(const struct sp_kraw *r, __u64 pos, __u64 *v)
{
	if (pos < r->nw && pos < SP_RAW_WORDS) {
		*v = r->w[sp_idx(pos, SP_RAW_MASK)];
		return 0;
	}
	return bpf_probe_read_kernel(v, sizeof(*v), (void *)(r->sp + pos * 8));
}

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
		if (kraw_word(r, pos, &ip))
			goto miss;
		if (r->ktop_off) /* a second jump: not kept */
			r->nkpos = SP_KMEMO_FRAMES + 1;
		r->ktop_off = d->next_top;
		r->ktop_ip = ip;
	} else if (d->dist > 0 && !(d->dist & 7)) {
		pos += (__u32)d->dist / 8;
		if (pos >= r->nw || pos >= SP_RAW_WORDS)
			goto miss;
		ip = r->w[sp_idx(pos, SP_RAW_MASK)];
		if (r->nkpos < SP_KMEMO_FRAMES) {
			r->kpos[sp_idx(r->nkpos, 63)] = pos;
			r->kip[sp_idx(r->nkpos, 63)] = ip;
			if (pos > r->kmaxpos)
				r->kmaxpos = pos;
		}
		r->nkpos++;
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
	__u32 zero = 0, pos, np, gen;
	bool check;
	__u64 ip;
	int slot;

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
	gen = *(volatile __u32 *)&frame_dist_gen;
	if (!r->check_every)
		r->check_every = SP_REVALIDATE;
	check = verify_callers || r->since_check + 1 >= r->check_every;
	r->kmemo_hit = 0;
	r->kmemo_match = -1;
	r->kmemo_differed = 0;
	slot = sp_kmemo_find(r, ip, pos, np, gen);
	if (slot >= 0 && slot < SP_KMEMO) {
		struct sp_kmemo *e = &r->km[slot & (SP_KMEMO - 1)];

		if (!check) {
			r->since_check++;
			r->hash = e->hash;
			r->st = e->st;
			r->wst = e->wst;
			r->kmemo_hit = 1;
			r->kmemo_slot = slot;
			return SP_FP_HIT;
		}
		r->kmemo_match = slot; /* built anyway, and compared */
	}
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
	r->nkpos = 0;
	r->kmaxpos = 0;
	r->ktop_off = 0;
	r->pos = pos;
	r->ip = ip;
	r->result = 0;
	c.r = r;
	bpf_loop(SP_MAX_STACK_DEPTH, kstack_hop, &c, 0);
	if (r->result != 1)
		return SP_FP_MISS;
	if (r->kmemo_match >= 0) {
		struct sp_kmemo *e = &r->km[r->kmemo_match & (SP_KMEMO - 1)];

		if (e->hash != r->hash || e->st.caller != r->st.caller ||
		    e->st.wait != r->st.wait || e->wst.function != r->wst.function) {
			r->kmemo_differed = 1;
			e->start_ip = 0;
		}
		r->kmemo_slot = r->kmemo_match;
	} else {
		sp_kmemo_put(r, ip, pos, np, gen);
	}
	if (!check) {
		r->since_check++;
		return SP_FP_HIT;
	}
	r->since_check = 0;
	return SP_FP_CHECK;
}

#ifdef SP_FASTCALLER_DEFINE
struct kmemo_find {
	struct sp_kraw *r;
	__u64 start_ip;
	__u32 start_pos, np, gen;
	int found;
};

/* Entry i against this event's words: 1 (stops) when it holds them. */
static long kmemo_try(__u64 i, struct kmemo_find *f)
{
	struct sp_kraw *r = f->r;
	struct sp_kmemo *e = &r->km[i & (SP_KMEMO - 1)];
	__u32 n = e->n, off = e->top_off;
	__u64 v;

	if (e->start_ip != f->start_ip || e->gen != f->gen || e->start_pos != f->start_pos ||
	    e->np != f->np || !e->kept || n > SP_KMEMO_FRAMES || e->maxpos >= r->nw ||
	    off > r->top)
		return 0;
	/* verifier: bounded, a small body (the words within those read) */
	for (__u32 j = 0; j < SP_KMEMO_FRAMES; j++) {
		if (j >= n)
			break;
		if (r->w[e->pos[j] & SP_RAW_MASK] != e->ip[j])
			return 0;
	}
	if (off && (kraw_word(r, r->top - off, &v) || v != e->top_ip))
		return 0;
	f->found = i;
	return 1;
}

/* verifier: global, its loops verified once (the callback once, its bounded loop in it) */
__noinline int sp_kmemo_find(struct sp_kraw *r, __u64 start_ip, __u32 start_pos, __u32 np,
			     __u32 gen)
{
	struct kmemo_find f = { .r = r, .start_ip = start_ip, .start_pos = start_pos, .np = np,
				.gen = gen, .found = -1 };

	if (!r || !start_ip)
		return -1;
	bpf_loop(SP_KMEMO, kmemo_try, &f, 0);
	return f.found;
}

/* verifier: global, as sp_kmemo_find() */
__noinline int sp_kmemo_put(struct sp_kraw *r, __u64 start_ip, __u32 start_pos, __u32 np,
			    __u32 gen)
{
	struct sp_kmemo *e;
	__u32 n, slot;

	if (!r)
		return 0;
	n = r->nkpos;
	if (n > SP_KMEMO_FRAMES || r->kmaxpos >= SP_RAW_WORDS)
		return 0;
	slot = r->kmemo_next++ & (SP_KMEMO - 1);
	r->kmemo_slot = slot;
	e = &r->km[slot];
	e->start_ip = 0; /* empty while it is written: nothing else runs on this scratch meanwhile */
	for (__u32 j = 0; j < SP_KMEMO_FRAMES; j++) {
		if (j >= n)
			break;
		e->pos[j] = r->kpos[j & 63];
		e->ip[j] = r->kip[j & 63];
	}
	e->n = n;
	e->maxpos = r->kmaxpos;
	e->top_off = r->ktop_off;
	e->top_ip = r->ktop_ip;
	e->hash = r->hash;
	e->st = r->st;
	e->wst = r->wst;
	e->gen = gen;
	e->start_pos = start_pos;
	e->np = np;
	e->kept = r->wake_mode; /* the wakers keep no stack */
	e->start_ip = start_ip;
	return 0;
}
#endif

/* Whether the memo answered this event's stack (a HIT, or the entry a check compared). */
static __always_inline __u32 sp_kmemo_used(const struct sp_kraw *r)
{
	return r->kmemo_hit || r->kmemo_match >= 0;
}

/* The stack of this event, from the memo or made into an entry, is in the view's map now. */
static __always_inline void sp_kmemo_kept(struct sp_kraw *r)
{
	if (!r->kmemo_hit)
		r->km[r->kmemo_slot & (SP_KMEMO - 1)].kept = 1;
}

/*
 * The stack this event built, or the memo's, kept in the view's map: its key, 0 when the map
 * is full. A memo's stack was kept before (nothing leaves the map).
 */
static __always_inline __u64 sp_kstack_keep(void *map, struct sp_kraw *r)
{
	__u64 h = r->kmemo_hit ? r->hash : sp_stack_keep(map, r->hash, &r->out);

	if (h)
		sp_kmemo_kept(r);
	return h;
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
			/* the stack built is the walk's, but the memo's answer was another */
			return SP_FC_FAST | SP_FC_VERIFIED | (r->kmemo_differed ? SP_FC_MISMATCH : 0);
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
