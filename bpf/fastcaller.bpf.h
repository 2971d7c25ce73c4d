/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The caller fast path, shared by the programs that key rows by caller: sp_switch
 * (schedules.bpf.c, a voluntary switch) and lock_begin (locks.bpf.c, a lock contention). Without
 * full stacks, the caller is found from the raw words of the task's kernel stack, read with
 * one bpf_probe_read_kernel() from the tracepoint's argument array (a local of
 * bpf_trace_runN() on that stack: the program's own locals may be on a private per-CPU
 * stack, 6.12+ for large BPF frames) up to the stack's top, instead of a bpf_get_stack() (an
 * ORC unwind: the largest cost a switch can have, whatever the depth, more when cold).
 *
 * The real return addresses sit at distances that depend only on the return address itself
 * (the frame ORC records for it): learned from the full walks, in frame_dist. Each full walk
 * finds its frames in the raw words, each one only where it is the only copy of that address
 * above the previous frame (a stale copy could sit in a frame, between real ones), and
 * records the distance from each to the next; an address seen at two distances (a frame
 * ORC describes through BP) is marked variable and never hopped. The first frame's place
 * from the argument array (in bpf_trace_runN()'s frame, constant) is learned the same way.
 *
 * An event then starts at that place (the word there must be the learned address), hops by
 * learned distances, feeding each address to the fold, until the caller is found, and the
 * caller must itself be a return address seen in a full walk. Any miss (an unknown address,
 * a variable distance, out of the words read, the arguments not on the task's stack, e.g.
 * an interrupt on its own stack) takes the full walk, which teaches the map. Now and then
 * (SP_REVALIDATE, backing off; every time with --verify-callers) an attribution is checked
 * by a full walk as well: a mismatch is counted, the full walk's answer is used, and the
 * hopped addresses are marked variable.
 *
 * What is shared and what each user owns:
 * - frame_dist (and its generation) is a property of the kernel text: one map for all users,
 *   each teaches it. An address's class for the fold (fold_class()) is the same for both
 *   views (one fold_cfg), so it is kept in the entry too.
 * - Where the words start (the first frame's word from the argument array, the address
 *   expected there) and how many to read depend on the tracepoint (bpf_trace_run4() for
 *   sched_switch, bpf_trace_run2() for contention_begin): each user has its own struct
 *   sp_fast_start.
 * - The scratch (struct sp_raw, per CPU, with its copy of frame_dist entries) and the full
 *   walk's scratch: one per program. A program never runs nested in itself on a CPU (the
 *   kernel's per-program recursion guard skips the nested run: lock_begin's are counted
 *   in the view's "missed"), but lock_begin can run in the middle of sp_switch on the same
 *   CPU (a contended spinlock taken by a helper sp_switch calls; sp_switch itself runs with
 *   interrupts off, so not from an interrupt), so they must not share it. A contention in a
 *   hard interrupt or a softirq on the interrupt stack reads no words (the argument array
 *   is not on the task's stack: SP_FC_OFF) and takes the full walk.
 *
 * One object defines the shared maps, globals and learn_dist() (SP_FASTCALLER_DEFINE, in
 * shared.bpf.c, linked before the views); the others declare them extern.
 */
#ifndef SCHEDPROF_FASTCALLER_BPF_H
#define SCHEDPROF_FASTCALLER_BPF_H

#include "common.bpf.h"
#include "walk.bpf.h"
#include "schedprof/fastcaller.h"

#define SP_RAW_WORDS 128 /* 1 KiB above the argument array */
#define SP_RAW_MASK (SP_RAW_WORDS - 1)
#define SP_MAX_HOPS 16
#define SP_LEARN_SPAN 64 /* the largest frame learned where the words were cut: 512 bytes */
/*
 * The checks by a full walk back off: the first after SP_REVALIDATE fast attributions on a
 * CPU, each one that agrees doubles the distance to the next, up to SP_REVALIDATE_MAX; a
 * mismatch starts over at SP_REVALIDATE. A full walk on task-heavy work is a cold ORC
 * unwind, several times a warm one: checks at a fixed rate would stay a large part of a
 * switch's cost long after the cache has shown it agrees.
 */
#define SP_REVALIDATE 64
#define SP_REVALIDATE_MAX 4096
#define SP_DIST_VARIABLE (-1)

struct sp_frame_dist {
	__s32 dist; /* bytes to the next real return address; 0: not known yet; < 0: variable */
	__u8 in_text; /* the address's class for the fold, found once when it is learned */
	__u8 wait;
	/*
	 * Whole stacks (faststack.bpf.h): what the full walks showed above the address. link:
	 * SP_LINK_TOP when its next frame was the walk's last, at next_top words from the
	 * stack's top (the syscall entry's, above do_syscall_64()'s random offset), SP_LINK_MID
	 * when it was some other frame (both: never jumped). top: words from the stack's top
	 * where it was the walk's last frame; 0 when never seen last; SP_TOP_NEVER when seen
	 * anywhere else as well.
	 */
	__u8 link;
	/* the address's class for the wakers' fold (wake_class()) | SP_WAKE_KNOWN, or 0 */
	__u8 wake;
	__u16 top;
	__u16 next_top;
	__u32 pad2;
};

#define SP_WAKE_KNOWN 4 /* wake: found by learn_edge() (learn_dist() leaves it 0) */
#define SP_LINK_TOP 1
#define SP_LINK_MID 2
#define SP_TOP_NEVER 0xffff

#ifdef SP_FASTCALLER_DEFINE
const volatile __u32 verify_callers = 0;  /* --verify-callers: every attribution is checked */
const volatile __u64 kstack_size = 16384; /* THREAD_SIZE, a power of two */
SP_HASH_MAP(frame_dist, SP_FRAME_DIST_MAX, __u64, struct sp_frame_dist);
__u32 frame_dist_gen = 1;
__u64 frame_dist_full = 0; /* a frame's distance could not be learned (frame_dist full) */
#else
extern const volatile __u32 verify_callers;
extern const volatile __u64 kstack_size;
extern SP_HASH_MAP(frame_dist, SP_FRAME_DIST_MAX, __u64, struct sp_frame_dist);
extern __u32 frame_dist_gen;
extern __u64 frame_dist_full;
#endif

/*
 * Each CPU's copy of the frame_dist entries its hops used last, direct-mapped by address
 * (struct sp_raw): a hop reads a slot of its per-CPU scratch instead of hashing into
 * frame_dist, several times an event. A slot is good while frame_dist_gen is what it was
 * when the slot was filled: learn_dist() bumps it after it changes an entry (entries only
 * ever go from unknown to a distance, or to variable; a missing address is never cached,
 * so a new entry needs no bump). The filler reads the generation before the entry, the
 * learner writes the entry before the generation: a slot filled from an old entry has an
 * old generation.
 */
#define SP_DIST_SLOTS 256

struct sp_dist_slot {
	__u64 ip;
	struct sp_frame_dist d;
	__u32 gen; /* frame_dist_gen when filled; 0: empty */
	__u32 pad;
};

/* A user's per-CPU scratch (one SP_SCRATCH_MAP per program). */
struct sp_raw {
	__u64 w[SP_RAW_WORDS];
	__u64 hop[SP_MAX_HOPS]; /* the addresses hopped through */
	struct sp_fold_state st;
	__u64 sp;	   /* where the words start: the tracepoint's argument array */
	__u64 ip;	   /* the current frame's return address */
	__u32 nw;	   /* words read */
	__u32 pos;	   /* the current frame's word */
	__u32 nhop;
	__u32 since_check; /* fast attributions since the last full-walk check */
	__u32 check_every; /* fast attributions between two checks (0: SP_REVALIDATE) */
	__s32 result;	   /* 1: caller found, -1: miss */
	/* learning from a full walk */
	__s32 prev_pos;
	__u64 prev_ip;
	__u64 target;
	__u32 from;
	__u32 count;
	__u32 found;
	__u32 pad;
	struct sp_fold_state lst;
	struct sp_dist_slot slot[SP_DIST_SLOTS];
};

struct sp_hop_ctx {
	struct sp_raw *r;
};

/* One hop: folds the current frame; on to the next by its learned distance. */
static long fast_hop(__u64 i, struct sp_hop_ctx *c)
{
	struct sp_raw *r = c->r;
	struct sp_frame_dist *d;
	struct sp_dist_slot *sl;
	__u64 ip = r->ip;
	__u32 pos, gen;

	sl = &r->slot[(ip ^ (ip >> 8)) & (SP_DIST_SLOTS - 1)];
	gen = *(volatile __u32 *)&frame_dist_gen;
	if (gen && sl->gen == gen && sl->ip == ip) { /* (0 only if it wrapped) */
		d = &sl->d;
	} else {
		asm volatile("" ::: "memory"); /* the generation before the entry */
		d = bpf_map_lookup_elem(&frame_dist, &ip);
		if (!d) {
			r->result = -1;
			return 1;
		}
		sl->ip = ip;
		sl->d = *d;
		sl->gen = gen;
		d = &sl->d;
	}
	if (sp_fold_step_known(&r->st, ip, d->in_text, d->wait)) {
		r->result = 1; /* ip, a return address seen in a full walk, is the caller */
		return 1;
	}
	if (d->dist <= 0 || (d->dist & 7)) {
		r->result = -1;
		return 1;
	}
	r->hop[i & (SP_MAX_HOPS - 1)] = ip;
	r->nhop = i + 1;
	pos = r->pos + (__u32)d->dist / 8;
	if (pos >= r->nw || pos >= SP_RAW_WORDS) {
		r->result = -1;
		return 1;
	}
	r->pos = pos;
	r->ip = r->w[pos & SP_RAW_MASK];
	return 0;
}

/*
 * Reads up to `words` raw words above sp into buf (at most max_words; fewer at the stack's
 * top): their count into *nw and the words from sp to the stack's top into *top. Returns
 * false when they are not on the task's stack.
 */
static __always_inline bool fast_read_words(__u64 sp, __u64 *buf, __u64 words, __u64 max_words,
					    __u32 *nw, __u32 *top)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 base = (__u64)t->stack, off, len;

	*nw = 0;
	/*
	 * The stack is kstack_size-aligned (THREAD_ALIGN), so sp's offset in it is sp's low bits.
	 * base is only compared, never subtracted from: newer verifiers type a void * member read
	 * through a BTF pointer as untrusted memory, and a difference with it stays a pointer,
	 * which a helper's size argument refuses.
	 */
	off = sp & (kstack_size - 1);
	if (!base || sp - off != base || (sp & 7))
		return false;
	len = kstack_size - off;
	*top = len / 8;
	if (len > words * 8)
		len = words * 8;
	if (len > max_words * 8)
		len = max_words * 8;
	len &= ~7ULL;
	if (len < 8 || len > max_words * 8)
		return false;
	if (bpf_probe_read_kernel(buf, len, (void *)sp))
		return false;
	*nw = len / 8;
	return true;
}

/*
 * Reads up to `words` raw words above r->sp (fewer at the stack's top). Returns false when
 * they are not on the task's stack.
 */
static __always_inline bool fast_read(struct sp_raw *r, __u64 words)
{
	__u32 top;

	return fast_read_words(r->sp, r->w, words, SP_RAW_WORDS, &r->nw, &top);
}

/* Attributes from the raw words: 1 with the caller in r->st, 0 on a miss. */
static __always_inline int fast_try(struct sp_raw *r, struct sp_fast_start *start)
{
	struct sp_hop_ctx c = { r };
	__u32 pos = start->pos;
	__u64 ip = start->ip;

	r->nhop = 0;
	if (!ip || pos >= r->nw || pos >= SP_RAW_WORDS || r->w[pos & SP_RAW_MASK] != ip)
		return 0;
	r->st.caller = SP_CALLER_UNKNOWN;
	r->st.wait = SP_WAIT_NONE;
	r->st.seen_sched = 0;
	r->pos = pos;
	r->ip = ip;
	r->result = 0;
	bpf_loop(SP_MAX_HOPS, fast_hop, &c, 0);
	return r->result == 1 && r->st.caller != SP_CALLER_UNKNOWN;
}

#ifdef SP_FASTCALLER_DEFINE
/*
 * frame_dist's entry for ip, or a new one made of *nv (its fold classes filled in, the
 * wakers' too when wake): NULL when *nv went in (nothing more to record) or the map is full
 * (counted).
 */
static __always_inline struct sp_frame_dist *frame_dist_entry(__u64 ip, struct sp_frame_dist *nv,
							      const bool wake)
{
	struct sp_frame_dist *d;
	int cls;

	d = bpf_map_lookup_elem(&frame_dist, &ip);
	if (d)
		return d;
	cls = fold_class(ip);
	nv->in_text = cls & 1;
	nv->wait = cls >> 1;
	if (wake)
		nv->wake = wake_class(ip) | SP_WAKE_KNOWN;
	if (!bpf_map_update_elem(&frame_dist, &ip, nv, BPF_NOEXIST))
		return NULL;
	d = bpf_map_lookup_elem(&frame_dist, &ip);
	if (!d)
		sp_drop(frame_dist_full);
	return d;
}

/*
 * Records that ip is a real return address, dist bytes below the next (0: not known). A
 * global function, like fold_class(): the verifier checks it once, not at every place the
 * learning callbacks reach it.
 */
/* verifier: global, checked once, not at each place the learning callbacks reach it */
__noinline int learn_dist(__u64 ip, __s32 dist)
{
	struct sp_frame_dist nv = { .dist = dist }, *d;

	d = frame_dist_entry(ip, &nv, false);
	if (!d || dist == 0 || d->dist == dist || d->dist < 0)
		return 0;
	d->dist = d->dist == 0 ? dist : SP_DIST_VARIABLE;
	__sync_fetch_and_add(&frame_dist_gen, 1); /* after the entry: the CPUs' slots refill */
	return 0;
}

/*
 * Records what a full walk showed above the return address ip (struct sp_frame_dist): top,
 * where it was the walk's last frame (words from the stack's top; 0: it was not the last,
 * -1: nothing to say), and link, what its next frame was (SP_LINK_*, with next_top; 0:
 * nothing to say). Global, as learn_dist().
 */
/* verifier: global, checked once, as learn_dist() */
__noinline int learn_edge(__u64 ip, __s32 top, __u32 link, __u32 next_top)
{
	__u16 t = top < 0 ? 0 : top == 0 || top >= SP_TOP_NEVER ? SP_TOP_NEVER : top;
	__u8 l = link & (SP_LINK_TOP | SP_LINK_MID);
	struct sp_frame_dist nv = {
		.top = t,
		.link = l,
		.next_top = l == SP_LINK_TOP ? next_top : 0,
	};
	struct sp_frame_dist *d;
	int changed = 0;

	d = frame_dist_entry(ip, &nv, true);
	if (!d)
		return 0;
	if (!(d->wake & SP_WAKE_KNOWN)) { /* made by learn_dist() */
		d->wake = wake_class(ip) | SP_WAKE_KNOWN;
		changed = 1;
	}
	if (t && d->top != t && d->top != SP_TOP_NEVER) {
		d->top = d->top == 0 ? t : SP_TOP_NEVER;
		changed = 1;
	}
	if (l == SP_LINK_TOP && d->link == SP_LINK_TOP && d->next_top != next_top)
		l = SP_LINK_MID; /* two places at the top: never jumped */
	if (l && (d->link | l) != d->link) {
		if (l == SP_LINK_TOP && !d->link)
			d->next_top = next_top;
		d->link |= l;
		changed = 1;
	}
	if (changed)
		__sync_fetch_and_add(&frame_dist_gen, 1); /* after the entry: the CPUs' slots refill */
	return 0;
}
#else
int learn_dist(__u64 ip, __s32 dist);
int learn_edge(__u64 ip, __s32 top, __u32 link, __u32 next_top);
#endif

struct sp_learn_ctx {
	struct sp_raw *r;
	struct sp_walk *w;
	struct sp_fast_start *start;
};

/* Counts the copies of r->target in the words from r->from on (stops at the second). */
static long learn_word(__u64 j, struct sp_learn_ctx *c)
{
	struct sp_raw *r = c->r;
	__u32 idx = r->from + (__u32)j;

	if (idx >= r->nw || idx >= SP_RAW_WORDS)
		return 1;
	if (r->w[idx & SP_RAW_MASK] != r->target)
		return 0;
	if (!r->count)
		r->found = idx;
	r->count++;
	return r->count > 1;
}

/* One frame of a full walk, found in the raw words: the previous frame's distance to it. */
static long learn_frame(__u64 k, struct sp_learn_ctx *c)
{
	struct sp_raw *r = c->r;
	struct sp_walk *w = c->w;
	__u64 ip;
	int last, cls;

	if (k >= w->stack.nr || k >= SP_MAX_STACK_DEPTH)
		return 1;
	if (k == 0) /* where the walk began (in this program or a helper): not a return address */
		return 0;
	ip = w->stack.ip[k & (SP_MAX_STACK_DEPTH - 1)];
	cls = fold_class(ip);
	last = sp_fold_step_known(&r->lst, ip, cls & 1, cls >> 1);
	r->target = ip;
	r->from = r->prev_pos < 0 ? 0 : r->prev_pos + 1;
	/*
	 * Words cut at SP_RAW_WORDS, not at the stack's top: the real frame could lie past them
	 * and a stale copy inside. Only search where a frame of up to SP_LEARN_SPAN words fits.
	 */
	if (r->nw == SP_RAW_WORDS && r->from + SP_LEARN_SPAN > SP_RAW_WORDS)
		return 1;
	r->count = 0;
	bpf_loop(SP_RAW_WORDS, learn_word, c, 0);
	if (r->count == 0 && r->prev_pos < 0)
		return 0; /* not yet above the argument array */
	if (r->count != 1)
		return 1; /* past the words read, or not the only copy: stop */
	if (r->prev_pos < 0) {
		c->start->ip = ip;
		c->start->pos = r->found;
	} else {
		learn_dist(r->prev_ip, (__s32)(r->found - r->prev_pos) * 8);
	}
	r->prev_pos = r->found;
	r->prev_ip = ip;
	if (last) { /* the caller: known as a return address; nothing above is needed */
		learn_dist(ip, 0);
		sp_update_max(&c->start->need_words, r->found + 1);
		return 1;
	}
	return 0;
}

/* Teaches frame_dist (and start) from the full walk w, over the raw words r read at this event. */
static __always_inline void fast_learn(struct sp_raw *r, struct sp_walk *w,
				       struct sp_fast_start *start)
{
	struct sp_learn_ctx c = { r, w, start };

	if (!r->nw || w->st.caller == SP_CALLER_UNKNOWN)
		return;
	r->prev_pos = -1;
	r->prev_ip = 0;
	r->lst.caller = SP_CALLER_UNKNOWN;
	r->lst.wait = SP_WAIT_NONE;
	r->lst.seen_sched = 0;
	bpf_loop(SP_MAX_STACK_DEPTH, learn_frame, &c, 0);
}

/* A fast attribution the full walk disagreed with: its hops are never used again. */
static long forget_hop(__u64 i, struct sp_hop_ctx *c)
{
	struct sp_raw *r = c->r;
	__u64 ip;

	if (i >= r->nhop || i >= SP_MAX_HOPS)
		return 1;
	ip = r->hop[i & (SP_MAX_HOPS - 1)];
	learn_dist(ip, SP_DIST_VARIABLE);
	return 0;
}

/*
 * The fast path in two halves around the full walk: each program makes each half a global
 * function of its own (verified once, whatever the states it is called from; lock_begin
 * calls it from two) with its own scratch and start, while the full walk, which needs the
 * program's context, stays in the program:
 *
 *	sp_fast_at(raw_scratch, ctx);
 *	pre = sp_fast_pre(raw_scratch, start);			(its global)
 *	walked = sp_fast_walk(ctx, pre, walk_scratch, stack_fail);
 *	f = sp_fast_post(pre, walked, ..., &out);		(its global)
 *
 * What the first half found:
 */
#define SP_FP_MISS 0	  /* walk, and learn from it */
#define SP_FP_HIT 1	  /* the caller is in r->st: no walk */
#define SP_FP_CHECK 2	  /* the caller is in r->st: walk to check it */
#define SP_FP_OFF 3	  /* no words (not on the task's stack): walk */
#define SP_FP_NOSCRATCH 4 /* no scratch: walk */

/*
 * Where the words start: ctx, the tracepoint's argument array (a local of bpf_trace_runN() on
 * the task's stack: the program's own locals may be on a private per-CPU stack), kept in the
 * program's scratch, from which the halves read it back as a scalar.
 */
static __always_inline void sp_fast_at(void *raw_scratch, void *ctx)
{
	struct sp_raw *r;
	__u32 zero = 0;

	r = bpf_map_lookup_elem(raw_scratch, &zero);
	if (r) {
		r->sp = (__u64)ctx;
		/* verifier: ctx kept through the scratch, read back by the halves as a scalar */
		asm volatile("" ::: "memory");
	}
}

/* The full walk between the halves when the first asked for one: 1 when it succeeded. */
static __always_inline int sp_fast_walk(void *ctx, int pre, void *walk_scratch,
					__u64 *stack_fail)
{
	struct sp_fold_state st;

	if (pre == SP_FP_HIT)
		return 0;
	return sp_walk_only(ctx, walk_scratch, &st, stack_fail) != NULL;
}

/*
 * Reads the raw words above r->sp (sp_fast_at()) and hops through them. Returns SP_FP_*.
 */
static __always_inline int sp_fast_pre(void *raw_scratch, struct sp_fast_start *start)
{
	struct sp_raw *r;
	__u32 zero = 0;
	__u64 need;

	r = bpf_map_lookup_elem(raw_scratch, &zero);
	if (!r)
		return SP_FP_NOSCRATCH;
	need = start->need_words;
	if (!fast_read(r, need ? need : SP_RAW_WORDS))
		return SP_FP_OFF;
	if (fast_try(r, start)) {
		if (!r->check_every)
			r->check_every = SP_REVALIDATE;
		if (!verify_callers && ++r->since_check < r->check_every)
			return SP_FP_HIT;
		r->since_check = 0;
		return SP_FP_CHECK;
	}
	/* a miss is learned from: it needs every word */
	if (need && need < SP_RAW_WORDS && r->nw == need)
		fast_read(r, SP_RAW_WORDS);
	return SP_FP_MISS;
}

/*
 * After the full walk, when sp_fast_pre() asked for one (walked: it succeeded, its stack and
 * fold in walk_scratch): the caller into out, the learning or the check. Returns what
 * happened (SP_FC_*), for the user's counters.
 */
static __always_inline int sp_fast_post(int pre, int walked, void *raw_scratch,
					void *walk_scratch, struct sp_fast_start *start,
					struct sp_fold_state *out)
{
	struct sp_walk *w = NULL;
	struct sp_hop_ctx hc;
	struct sp_raw *r;
	__u32 zero = 0;

	r = bpf_map_lookup_elem(raw_scratch, &zero);
	if (walked)
		w = bpf_map_lookup_elem(walk_scratch, &zero);
	if (r && (pre == SP_FP_HIT || pre == SP_FP_CHECK)) {
		out->caller = r->st.caller;
		out->wait = r->st.wait;
		if (!w || pre == SP_FP_HIT)
			return SP_FC_FAST; /* no full walk: the fast answer stands */
		if (w->st.caller == r->st.caller && w->st.wait == r->st.wait) {
			if (r->check_every < SP_REVALIDATE_MAX)
				r->check_every *= 2;
			return SP_FC_FAST | SP_FC_VERIFIED;
		}
		r->check_every = SP_REVALIDATE;
		out->caller = w->st.caller;
		out->wait = w->st.wait;
		hc.r = r;
		bpf_loop(SP_MAX_HOPS, forget_hop, &hc, 0);
		return SP_FC_FAST | SP_FC_VERIFIED | SP_FC_MISMATCH;
	}
	out->caller = w ? w->st.caller : SP_CALLER_UNKNOWN;
	out->wait = w ? w->st.wait : SP_WAIT_NONE;
	if (pre == SP_FP_OFF)
		return SP_FC_OFF;
	if (w && r && pre == SP_FP_MISS)
		fast_learn(r, w, start);
	return 0;
}

#endif
