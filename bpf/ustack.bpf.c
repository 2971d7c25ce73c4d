// SPDX-License-Identifier: GPL-2.0-only
/*
 * The user-stack maps every view shares (declared in ustack.bpf.h), and its global functions:
 * the parts of a user stack that the verifier checks once on their own, however many paths
 * of a program reach them (inline, it walked them again for each).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#define SP_USTACK_DEFINE
#include "ustack.bpf.h"

struct sp_prof_ucache_stats prof_ucache_stats;
const volatile __u32 ustack_timed = 0;
const volatile __u32 ustack_off = 0;
const volatile __u32 ustack_untrusted = 0;
const volatile __u32 ustack_rules_on = 0;

/* libbpf's bpf_helpers.h defines it from 1.6 on */
#ifndef __arg_untrusted
#define __arg_untrusted __attribute__((btf_decl_tag("arg:untrusted")))
#endif

/*
 * sp_utask_fill() through an untrusted pointer (ustack.bpf.h): a global function, verified
 * once on its own. On a kernel without __arg_untrusted ustack_untrusted is 0 and nothing
 * calls it; a kernel older than 6.8 verifies it all the same, where the task is plain memory
 * and the loads would not verify: the flag makes them dead code there.
 */
/* verifier: global for __arg_untrusted (6.8 on): the task read as an untrusted pointer */
__noinline int sp_utask_read(struct task_struct *task __arg_untrusted, struct sp_utask *ut,
			     __u32 exe)
{
	if (!ut)
		return 0;
	if (ustack_untrusted)
		sp_utask_fill(task, ut, exe);
	return 0;
}

/* ustack.bpf.h's sp_user_plan(): the plan, walked once by the verifier. */
/* verifier: global, walked once whatever paths reach it (inline, once per path) */
__noinline int sp_user_plan_g(struct sp_uscratch *s, __u32 nr, __u64 f1, __u32 walked)
{
	if (!s)
		return 0;
	s->kind = sp_user_plan_in(bpf_get_current_task_btf(), s, nr, f1, walked, &s->n);
	return 0;
}

/* ustack.bpf.h's sp_user_single_text(). */
/* verifier: global, as sp_user_plan_g() */
__noinline int sp_user_single_text(struct sp_uscratch *s)
{
	return s && single_text_segment(bpf_get_current_task_btf(), s);
}

/* ustack.bpf.h's sp_ucache_lookup_g(): the caches' answer for frames [0, nr) of s->uip. */
/* verifier: global, as sp_user_plan_g() */
__noinline int sp_ucache_lookup_g(struct sp_uscratch *s, __u32 nr)
{
	struct ucwalk w = {};

	if (!s)
		return 0;
	ucwalk_init(s, &w);
	w.nr = nr;
	bpf_loop(SP_PROF_UDEPTH, ucache_get, &w, 0);
	s->get_miss = w.miss;
	s->get_start = w.start;
	return 0;
}

/* ustack.bpf.h's sp_ucache_learn_g(): the kernel's answer for nr frames into the caches. */
/* verifier: global, as sp_user_plan_g() */
__noinline int sp_ucache_learn_g(struct sp_uscratch *s, __u32 nr, __u32 known, __u32 start,
				 __u32 check)
{
	struct ucwalk w = {};

	if (!s)
		return 0;
	ucwalk_init(s, &w);
	w.nr = nr;
	w.known = known;
	w.start = start;
	w.check = check;
	ucache_learn(s, &w, false);
	return 0;
}

/* ustack.bpf.h's sp_user_walk_g() and sp_user_stack_hash_g(). */
/* verifier: global, as sp_user_plan_g() */
__noinline int sp_user_walk_g(struct sp_uscratch *s)
{
	return s ? sp_user_walk(bpf_get_current_task_btf(), s) : 0;
}

/* verifier: global, as sp_user_plan_g() */
__noinline __u64 sp_user_stack_hash_g(struct sp_uscratch *s, __u32 nr)
{
	return s ? sp_user_stack_hash_in(s, nr) : 0;
}

/* ustack.bpf.h's sp_user_begin_g(): only called with ustack_untrusted (see sp_utask_read()). */
/* verifier: global for __arg_untrusted, as sp_utask_read() */
__noinline int sp_user_begin_g(struct task_struct *task __arg_untrusted, struct sp_uscratch *s)
{
	if (!s || !ustack_untrusted)
		return 0;
	sp_utask_fill(task, &s->ut, false);
	return s->ut.has_mm ? sp_user_walk(bpf_get_current_task_btf(), s) : 0;
}

/* --stacks by rules: the frames of sp_user_rwalk() as raw IPs (rapply_step()) */
static long rapply_step(__u64 i, struct uapply *a)
{
	__u32 j = i & (SP_PROF_UDEPTH - 1);

	if (i >= a->n || i >= SP_PROF_UDEPTH)
		return 1;
	uframe_raw(&a->s->u.frames[j], a->s->uip[j]);
	return 0;
}

/* ustack.bpf.h's sp_user_rwalk_g(). */
/* verifier: global, as sp_user_plan_g() */
__noinline int sp_user_rwalk_g(struct sp_uscratch *s, __u32 slot)
{
	__u32 nr;

	if (!s)
		return 0;
	s->rcopied = 0;
	s->rseq_sent = 0;
	sp_user_rwalk(s);
	nr = s->nw;
	if (!nr || nr > SP_PROF_UDEPTH)
		return 0;
	if (s->kind == SP_RW_MISS && nr < SP_PROF_UDEPTH) {
		s->rseq_sent = sp_user_rcopy(s, slot);
		s->rcopied = s->rseq_sent != 0;
	}
	return nr;
}

/* ustack.bpf.h's sp_user_rframes_g(). */
/* verifier: global, as sp_user_plan_g() */
__noinline int sp_user_rframes_g(struct sp_uscratch *s, __u32 nr)
{
	struct uapply a = { .s = s, .n = nr };

	if (!s || !nr || nr > SP_PROF_UDEPTH)
		return 0;
	bpf_loop(SP_PROF_UDEPTH, rapply_step, &a, 0);
	if (s->rcopied && nr < SP_PROF_UDEPTH) {
		struct sp_uframe *f = &s->u.frames[nr & (SP_PROF_UDEPTH - 1)];

		__builtin_memset(f, 0, sizeof(*f));
		f->status = SP_UFRAME_PENDING;
		f->offset = s->rseq_sent;
		nr++;
	}
	return nr;
}

/*
 * ustack.bpf.h's sp_user_rmemo_g(): after a walk whose raw key is key, checks the memo's
 * answer it was to check (SP_RMEMO_CHECK) and keeps the walk in the memo when it can be
 * (struct sp_rmemo). Returns 1 when the memo's answer differed from the walk's.
 */
/* verifier: global, as sp_user_plan_g() */
__noinline int sp_user_rmemo_g(struct sp_uscratch *s, __u64 key)
{
	struct sp_rmemo *e;
	int differed;
	__u32 n;

	if (!s)
		return 0;
	differed = s->rcheck && s->rkey != key;
	s->rcheck = 0;
	n = s->nrused;
	if (s->rbad || s->rcopied || n > SP_RMEMO_WORDS || s->rspan > SP_RMEMO_SPAN ||
	    (s->kind != SP_RW_END && s->kind != SP_RW_STOP && s->kind != SP_RW_DEPTH))
		return differed;
	e = sp_rmemo_at(s, s->fip[1]);
	e->ip = 0; /* empty while it is written: nothing else runs on this scratch meanwhile */
	for (__u32 i = 0; i < SP_RMEMO_WORDS; i++) {
		if (i >= n)
			break;
		e->idx[i] = s->rused[i];
		e->val[i] = s->rval[i];
	}
	e->nused = n;
	e->span = s->rspan;
	e->n = s->nw;
	e->kind = s->kind;
	e->key = key;
	e->image = ((__u64)s->ut.tgid << 32) | s->ut.exec_id;
	e->leader_start = s->ut.leader_start;
	e->exec_vm = s->ut.exec_vm;
	e->sp = s->fip[1];
	e->bp = s->fip[2];
	e->ip = s->fip[0];
	return differed;
}

/* ustack.bpf.h's sp_rmemo_same_g() */
/* verifier: global, its loop verified once */
__noinline int sp_rmemo_same_g(struct sp_uscratch *s)
{
	struct sp_rmemo *e;
	__u64 sp, len;
	__u32 n;

	if (!s)
		return 0;
	sp = s->fip[1];
	e = sp_rmemo_at(s, sp);
	n = e->nused;
	if (e->ip != s->fip[0] || e->sp != sp || e->bp != s->fip[2] || !e->ip ||
	    e->image != (((__u64)s->ut.tgid << 32) | s->ut.exec_id) ||
	    e->leader_start != s->ut.leader_start || e->exec_vm != s->ut.exec_vm ||
	    n > SP_RMEMO_WORDS)
		return 0;
	len = (__u64)e->span * 8;
	if (len > SP_RMEMO_SPAN * 8)
		return 0;
	if (len && bpf_probe_read_user(s->rbuf, len, (void *)sp))
		return 0;
	for (__u32 i = 0; i < SP_RMEMO_WORDS; i++) {
		if (i >= n)
			break;
		if (s->rbuf[e->idx[i] & (SP_RMEMO_SPAN - 1)] != e->val[i])
			return 0;
	}
	return 1;
}

/* sp_ufork's: the processes forked that walk by their parent's rules, and those not kept */
struct sp_ufork_stats ufork_stats;

/*
 * A process forked without exec maps its parent's code at its parent's addresses, so it walks
 * by its parent's rules (struct sp_urule_img) for as long as its executable mappings keep
 * their size at the fork: the rules one process's copies taught serve the others (a
 * forking server's workers, perf bench's senders and receivers). Threads share their
 * process's rules anyway; CLONE_VM children (vfork) share the parent's very mappings.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(sp_ufork, struct task_struct *parent, struct task_struct *child)
{
	struct sp_urule_img own, kid, *as;
	struct mm_struct *mm, *cmm;

	if (child->pid != child->tgid)
		return 0;
	mm = parent->mm;
	cmm = child->mm;
	if (!mm || !cmm)
		return 0;
	own.leader_start = parent->group_leader->start_time;
	own.tgid = parent->tgid;
	own.exec_id = (__u32)parent->self_exec_id;
	own.exec_vm = mm->exec_vm;
	kid.leader_start = child->start_time; /* a new process leads its own group */
	kid.tgid = child->tgid;
	kid.exec_id = (__u32)child->self_exec_id;
	kid.exec_vm = cmm->exec_vm;
	as = bpf_map_lookup_elem(&urule_forks, &own);
	if (bpf_map_update_elem(&urule_forks, &kid, as ? as : &own, BPF_ANY))
		__sync_fetch_and_add(&ufork_stats.lost, 1);
	else
		__sync_fetch_and_add(&ufork_stats.forks, 1);
	return 0;
}
