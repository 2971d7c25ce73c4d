// SPDX-License-Identifier: GPL-2.0-only
/*
 * Locks view: lock contention of traced tasks from lock:contention_begin/contention_end
 * (Linux >= 5.19), counted in BPF by (caller, lock, kind, comm).
 *
 * - The caller is the first frame outside lock and scheduler text: the schedules view's
 *   folding rule (include/schedprof/fold.h, the same fold_cfg), so a row here and a
 *   schedules row with a lock wait name the same function.
 * - Wait time: per task for sleeping locks (the waiter may sleep and wake elsewhere), per
 *   CPU for spinning ones; pairing in include/schedprof/lock_pair.h (mutexes emit several
 *   begins for one end). The clock starts when the begin program has walked the stack, so
 *   the walk is not reported as lock wait. An end with ret < 0 (a signal or
 *   a timeout: the waiter gave up) is counted apart and adds no wait.
 * - Sleepers: between begin and end of a sleeping lock, lock_on_switch (lock.bpf.h, a part
 *   of the one sched_switch program) adds up the time the task spent switched out while
 *   not runnable, i.e. asleep in the slow path.
 * - Lock names: addresses of objects reached from the waiting task, or of objects whose
 *   layout is checked at the candidate address through a pointer that must point back
 *   (enum sp_lock_name). Static locks and runqueue locks are named in user space.
 * - Owners: the comm of a mutex's or a write-held rwsem's owner at the first begin.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "compat.bpf.h"
#include "target.bpf.h"
#include "schedprof/progs.h"
#include "schedprof/sched.h"
#include "schedprof/lock_pair.h"
#include "walk.bpf.h"
#include "lock.bpf.h"
#include "ustack.bpf.h"
#include "faststack.bpf.h"

/*
 * The totals, per CPU (summed by user space, src/views/locks/collect.c read_totals()): every end
 * counts one, and an atomic add on one shared line would make each end wait for the line the other
 * CPU had just written.
 */
SP_SCRATCH_MAP(lock_counts, struct sp_lock_counts);
struct sp_lock_drops lock_drops;

SP_HASH_MAP(lock_stat, SP_DEF_CALLERS, struct sp_lock_key, struct sp_lock_val);
SP_HASH_MAP(lock_stack_counts, SP_DEF_STACKS, struct sp_lock_stack_key, struct sp_lock_stack_val);
/* Stacks by hash of their frames; not preallocated, entries are 520 bytes. */
SP_HASH_MAP_LAZY(lock_stacks, SP_DEF_STACKS, __u64, struct sp_stack);
SP_SCRATCH_MAP(lock_stack_buf, struct sp_walk);
SP_SCRATCH_MAP(lock_spin, struct sp_lock_spin_stack);
/*
 * Allocated on use, unlike lock_stat: their rows come only from sleeping locks' ends, in
 * process context, so the allocator's per-CPU cache (refilled by an irq_work, which runs
 * as soon as interrupts are on) is refilled between any two inserts on a CPU; a spinning
 * lock's end (lock_stat's rows) may come several times in one region with interrupts off.
 * Preallocated, each would be zeroed at every start. A row that cannot be allocated is
 * counted (sleeper_map_full, owner_map_full) and said.
 */
SP_HASH_MAP_LAZY(lock_sleepers, SP_DEF_CALLERS, struct sp_lock_sleep_key,
		 struct sp_lock_sleep_val);
SP_HASH_MAP_LAZY(lock_owners, SP_DEF_CALLERS, struct sp_lock_owner_key, struct sp_lock_owner_val);

/*
 * Names by address, so the layout checks run once per lock. SP_LNAME__MAX caches "no
 * layout matched": the checks through the waiting task still run each time for such an
 * address, since a task that can reach it may come later. Allocated on use: only a cache (a
 * name that cannot be kept is found again at the next contention), and preallocated its
 * SP_DEF_CALLERS entries would be zeroed at every start.
 */
SP_HASH_MAP_LAZY(lock_names, SP_DEF_CALLERS, __u64, __u32);

/* ---- caller: the schedules view's folding rule (walk.bpf.h) ---- */

/*
 * Kept stacks from the raw words (faststack.bpf.h) when they can be, else walked:
 * lock_begin_full's start and scratch (a contention may come in the middle of sp_switch, so
 * not the schedules view's).
 */
struct sp_stack_start lock_stack_start;
SP_SCRATCH_MAP(lock_kraw, struct sp_kraw);
SP_SCRATCH_MAP(lock_cache_pcpu, struct sp_lock_cache_counts);

/* The halves as global functions, each verified once (as lock_fast_pre()). */
/* verifier: global, verified once */
__noinline int lock_kstack_pre(void)
{
	return sp_kstack_pre(&lock_kraw, &lock_stack_start, 0);
}

/* verifier: global, as lock_kstack_pre() */
__noinline int lock_kstack_post(int pre, int walked)
{
	__u32 zero = 0;

	return sp_kstack_post(pre, walked, &lock_kraw, bpf_map_lookup_elem(&lock_stack_buf, &zero),
			      &lock_stack_start);
}

/*
 * The stack once, from the raw words or a walk: returns its hash (kept in lock_stacks) and
 * folds it to the caller (as the schedules view's fold_stack()).
 */
static __always_inline __u64 lock_fold_stack(void *ctx, __u64 *ret_caller)
{
	struct sp_lock_cache_counts *c;
	struct sp_fold_state st;
	int pre, walked = 0, f;
	struct sp_kraw *r;
	struct sp_walk *w;
	__u32 zero = 0, memo = 0;
	__u64 h = 0;

	sp_kstack_at(&lock_kraw, ctx);
	pre = lock_kstack_pre();
	if (pre != SP_FP_HIT)
		walked = sp_walk_get(ctx, &lock_stack_buf, &lock_drops.stack_fail);
	f = lock_kstack_post(pre, walked);
	if ((f & SP_FC_FAST) && !walked) { /* built from the raw words, folded and hashed */
		r = sp_kstack_raw(&lock_kraw);
		st.caller = r ? r->st.caller : SP_CALLER_UNKNOWN;
		if (r) {
			memo = sp_kmemo_used(r);
			h = sp_kstack_keep(&lock_stacks, r);
			if (!h)
				sp_drop(lock_drops.stack_map_full);
		}
	} else {
		w = sp_walk_fold_have(&lock_stack_buf, &st, walked);
		if (w) {
			h = sp_stack_keep(&lock_stacks, w->hash, &w->stack);
			if (!h)
				sp_drop(lock_drops.stack_map_full);
		}
		/* a check: the fold and hash done while building must be the walk's too */
		r = (f & SP_FC_VERIFIED) && w ? sp_kstack_raw(&lock_kraw) : NULL;
		if (r && (r->hash != w->hash || r->st.caller != st.caller))
			f |= SP_FC_MISMATCH;
		else if (r && h) /* the same stack, kept: the memo's entry may answer */
			sp_kmemo_kept(r);
		memo = r ? sp_kmemo_used(r) : 0;
	}
	*ret_caller = st.caller;
	c = bpf_map_lookup_elem(&lock_cache_pcpu, &zero);
	if (c) { /* this CPU's: plain adds */
		c->stacks++;
		c->stacks_memo += memo;
		c->stacks_fast += f & SP_FC_FAST;
		c->stacks_verified += (f & SP_FC_VERIFIED) >> 1;
		c->stacks_mismatched += (f & SP_FC_MISMATCH) >> 2;
		c->stacks_off += (f & SP_FC_OFF) >> 3;
	}
	return h;
}

/*
 * Without kept stacks (--lock-stacks, or full stacks for a format, -g or --stacks, keep the
 * full walk), the caller comes from the fast path (fastcaller.bpf.h), the rule above's answer
 * for less: lock_begin's own start (bpf_trace_run2()'s argument array) and scratch, the
 * learned frame distances shared with sp_switch. Its counters are per CPU.
 */
/*
 * Set by user space when no lock stack is kept: it then loads lock_begin, not lock_begin_full.
 * No BPF code reads it (each build knows which it is): it is where collect.c reads the choice
 * back.
 */
const volatile __u32 lock_caller_fast = 0;
struct sp_fast_start lock_fast_start;
SP_SCRATCH_MAP(lock_raw_buf, struct sp_raw);

/* ---- --stacks: the waiter's user stack under its kernel stack (ustack.bpf.h) ---- */

const volatile __u32 lock_ustacks = 0; /* set by user space with --stacks */
struct sp_ustack_drops lock_udrops;
/* its own scratch: a profile sample (a hard interrupt) may come while a begin walks */
SP_SCRATCH_MAP(lock_ubuf, struct sp_uscratch);

static __always_inline __u64 lock_user_stack(void *ctx, __u64 kstack)
{
	struct task_struct *t;
	__s64 pc;

	if (!lock_ustacks || !kstack)
		return kstack;
	t = bpf_get_current_task_btf();
	/* in an interrupt, the interrupted task's user stack did not contend: none */
	pc = sp_preempt_count(t, has_preempt_rq_off, preempt_rq_off);
	if (pc > 0 && (pc & (SP_HARDIRQ_MASK | SP_SOFTIRQ_OFFSET)))
		return kstack;
	return sp_stack_pair(ctx, t, kstack, &lock_ubuf, &lock_udrops, 1);
}

/*
 * The fast path's two halves (fastcaller.bpf.h) as global functions: lock_begin reaches its
 * caller with two states (its pending record in the task storage or in the spin stack), and
 * inlined they were verified on both (lock_begin 2.5k -> 4.8k verified instructions). The
 * full walk between them needs the program's context, so it stays inline.
 */
/* verifier: global, not verified on both of lock_begin's states (inlined: 2.5k -> 4.8k insns) */
__noinline int lock_fast_pre(void)
{
	return sp_fast_pre(&lock_raw_buf, &lock_fast_start);
}

/* verifier: global, as lock_fast_pre() */
__noinline __u64 lock_fast_post(int pre, int walked)
{
	struct sp_lock_cache_counts *c;
	struct sp_fold_state st;
	__u32 zero = 0;
	int f;

	f = sp_fast_post(pre, walked, &lock_raw_buf, &lock_stack_buf, &lock_fast_start, &st);
	c = bpf_map_lookup_elem(&lock_cache_pcpu, &zero);
	if (c) { /* this CPU's: plain adds */
		c->attributed++;
		c->fast += f & SP_FC_FAST;
		c->verified += (f & SP_FC_VERIFIED) >> 1;
		c->mismatched += (f & SP_FC_MISMATCH) >> 2;
		c->fast_off += (f & SP_FC_OFF) >> 3;
	}
	return st.caller;
}

/* The caller of this contention, into *ret_caller; its stack's key, 0 when none is kept. */
static __always_inline __u64 lock_caller(void *ctx, __u64 *ret_caller, const bool fast)
{
	int pre, walked;

	if (!fast)
		return lock_user_stack(ctx, lock_fold_stack(ctx, ret_caller));
	sp_fast_at(&lock_raw_buf, ctx);
	pre = lock_fast_pre();
	walked = sp_fast_walk(ctx, pre, &lock_stack_buf, &lock_drops.stack_fail);
	*ret_caller = lock_fast_post(pre, walked);
	return 0;
}

/* ---- names ---- */

/*
 * The helper zeroes v when it cannot read: no test of its result, whose two ways the verifier
 * walked the rest of lock_name() through at every read.
 */
static __always_inline __u64 rd_u64(__u64 addr)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (const void *)addr);
	return v;
}

static __always_inline __u32 rd_u32(__u64 addr)
{
	__u32 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (const void *)addr);
	return v;
}

/* A field of the struct `type` at address base, by its CO-RE offset; 0 when unreadable. */
#define RD64(base, type, field) rd_u64((base) + bpf_core_field_offset(struct type, field))
#define RD32(base, type, field) rd_u32((base) + bpf_core_field_offset(struct type, field))

/* Locks of objects the waiting task points to: certain. */
static __always_inline __u32 name_from_task(__u64 l, struct task_struct *t)
{
	__u64 mm = (__u64)BPF_CORE_READ(t, mm), p, rq, off;

	if (mm) {
		if (l == mm + bpf_core_field_offset(struct mm_struct, mmap_lock))
			return SP_LNAME_MMAP_LOCK;
		if (l == mm + bpf_core_field_offset(struct mm_struct, page_table_lock))
			return SP_LNAME_PAGE_TABLE_LOCK;
		if (bpf_core_field_exists(struct rw_semaphore, wait_lock) &&
		    l == mm + bpf_core_field_offset(struct mm_struct, mmap_lock.wait_lock))
			return SP_LNAME_MMAP_LOCK_WAIT;
		/* PREEMPT_RT: the rt_mutex_base inside it */
		if (sp_rt_rwsem_mutex_off(&off) &&
		    l == mm + bpf_core_field_offset(struct mm_struct, mmap_lock) + off)
			return SP_LNAME_MMAP_LOCK;
	}
	p = (__u64)BPF_CORE_READ(t, sighand);
	if (p && l == p + bpf_core_field_offset(struct sighand_struct, siglock))
		return SP_LNAME_SIGLOCK;
	p = (__u64)BPF_CORE_READ(t, files);
	if (p && l == p + bpf_core_field_offset(struct files_struct, file_lock))
		return SP_LNAME_FILE_LOCK;
	p = (__u64)BPF_CORE_READ(t, signal);
	if (p && l == p + bpf_core_field_offset(struct signal_struct, cred_guard_mutex))
		return SP_LNAME_CRED_GUARD;
	if (p && sp_exec_update_lock_off(&off) && l == p + off)
		return SP_LNAME_EXEC_UPDATE;
	rq = sp_task_rq(t);
	if (rq && sp_rq_lock_off(&off) && l == rq + off)
		return SP_LNAME_RQ_LOCK;
	return SP_LNAME_NONE;
}

/* Every inode's own address_space points back to it: inode->i_data.host == inode. */
static __always_inline bool is_inode(__u64 ino)
{
	return ino && RD64(ino, inode, i_data.host) == ino;
}

/* An inode's own address_space (inode->i_data): its host's i_data is at its address. */
static __always_inline bool is_inode_mapping(__u64 m)
{
	__u64 host = RD64(m, address_space, host);

	return host && host + bpf_core_field_offset(struct inode, i_data) == m;
}

/* A list_head whose next entry's prev points back at it. */
static __always_inline bool is_list_head(__u64 h)
{
	__u64 n = RD64(h, list_head, next);

	return n && RD64(n, list_head, prev) == h;
}

static __always_inline bool is_pipe(__u64 p)
{
	__u32 ring = RD32(p, pipe_inode_info, ring_size);
	__u32 usage = RD32(p, pipe_inode_info, max_usage);

	if (!ring || (ring & (ring - 1)) || ring > 65536 || usage > ring)
		return false;
	return is_list_head(p + bpf_core_field_offset(struct pipe_inode_info, rd_wait.head)) &&
	       is_list_head(p + bpf_core_field_offset(struct pipe_inode_info, wr_wait.head));
}

static __always_inline bool is_file(__u64 f)
{
	__u64 ino = RD64(f, file, f_inode);
	__u64 m = RD64(f, file, f_mapping);

	return ino && m && RD64(ino, inode, i_mapping) == m;
}

/* A live task: its struct pid's list of PID users starts with the task's own node. */
static __always_inline bool is_task(__u64 t)
{
	__u64 pid = RD64(t, task_struct, thread_pid);

	return pid && RD64(pid, pid, tasks[PIDTYPE_PID].first) ==
		      t + bpf_core_field_offset(struct task_struct, pid_links[PIDTYPE_PID]);
}

static __always_inline bool is_super_block(__u64 sb)
{
	__u64 root = RD64(sb, super_block, s_root);

	return root && RD64(root, dentry, d_sb) == sb;
}

/* A dentry: its super_block checks out, and its parent's (itself for a root) is the same. */
static __always_inline bool is_dentry(__u64 d)
{
	__u64 sb = RD64(d, dentry, d_sb);
	__u64 parent = RD64(d, dentry, d_parent);

	return sb && parent && RD64(parent, dentry, d_sb) == sb && is_super_block(sb);
}

/*
 * The locks of each kind inside objects recognised by their layout. Global functions, each
 * verified once: name_by_layout() reaches them by more than one kind (PREEMPT_RT's).
 */
/* verifier: global, verified once however many lock kinds reach it (PREEMPT_RT's) */
__noinline __u32 lock_name_mutex(__u64 m)
{
	if (is_pipe(m - bpf_core_field_offset(struct pipe_inode_info, mutex)))
		return SP_LNAME_PIPE_MUTEX;
	if (is_file(m - bpf_core_field_offset(struct file, f_pos_lock)))
		return SP_LNAME_FILE_POS_LOCK;
	return SP_LNAME_NONE;
}

/* verifier: global, as lock_name_mutex() */
__noinline __u32 lock_name_rwsem(__u64 l)
{
	if (is_inode(l - bpf_core_field_offset(struct inode, i_rwsem)))
		return SP_LNAME_INODE_RWSEM;
	if (is_inode_mapping(l - bpf_core_field_offset(struct address_space, i_mmap_rwsem)))
		return SP_LNAME_MAPPING_RWSEM;
	if (is_super_block(l - bpf_core_field_offset(struct super_block, s_umount)))
		return SP_LNAME_SB_UMOUNT;
	return SP_LNAME_NONE;
}

/* verifier: global, as lock_name_mutex() */
__noinline __u32 lock_name_spin(__u64 l)
{
	__u64 off;

	if (is_task(l - bpf_core_field_offset(struct task_struct, pi_lock)))
		return SP_LNAME_TASK_PI_LOCK;
	if (is_inode(l - bpf_core_field_offset(struct inode, i_lock)))
		return SP_LNAME_INODE_LOCK;
	if (is_dentry(l - bpf_core_field_offset(struct dentry, d_lockref.lock)))
		return SP_LNAME_DENTRY_LOCK;
	if (is_inode_mapping(l - bpf_core_field_offset(struct address_space, i_pages.xa_lock)))
		return SP_LNAME_MAPPING_PAGES;
	/* buffer heads of a block device or file */
	if (sp_mapping_private_lock_off(&off) && is_inode_mapping(l - off))
		return SP_LNAME_MAPPING_PRIVATE;
	/* the wait_lock inside a sleeping lock (its waiters' list) */
	if (bpf_core_field_exists(struct rw_semaphore, wait_lock) &&
	    is_inode(l - bpf_core_field_offset(struct inode, i_rwsem.wait_lock)))
		return SP_LNAME_INODE_RWSEM_WAIT;
	if (bpf_core_field_exists(struct mutex, wait_lock) &&
	    is_pipe(l - bpf_core_field_offset(struct pipe_inode_info, mutex.wait_lock)))
		return SP_LNAME_PIPE_MUTEX_WAIT;
	return SP_LNAME_NONE;
}

/*
 * PREEMPT_RT's locks (compat.bpf.h), as the lock they are part of: a spinlock_t is at its
 * rt_mutex_base's address; an rwbase_rt is an rw_semaphore's; an rt_mutex_base is a
 * mutex's, an rw_semaphore's, or (6.1 says LCB_F_RT alone for it too) a spinlock_t's.
 */
static __always_inline __u32 name_rt(__u64 l, __u32 flags)
{
	__u64 off;
	__u32 n = SP_LNAME_NONE;

	if (flags & SP_LCB_F_SPIN)
		return (flags & (SP_LCB_F_READ | SP_LCB_F_WRITE)) ? SP_LNAME_NONE : lock_name_spin(l);
	if (flags & (SP_LCB_F_READ | SP_LCB_F_WRITE))
		return sp_rt_rwsem_base_off(&off) ? lock_name_rwsem(l - off) : SP_LNAME_NONE;
	if (sp_rt_mutex_off(&off))
		n = lock_name_mutex(l - off);
	if (n == SP_LNAME_NONE && sp_rt_rwsem_mutex_off(&off))
		n = lock_name_rwsem(l - off);
	return n != SP_LNAME_NONE ? n : lock_name_spin(l);
}

/* Locks inside objects recognised by their layout, tried by kind. */
static __always_inline __u32 name_by_layout(__u64 l, __u32 flags)
{
	if (flags & SP_LCB_F_PERCPU)
		return SP_LNAME_NONE;
	if (flags & SP_LCB_F_RT)
		return name_rt(l, flags);
	if (flags & SP_LCB_F_MUTEX)
		return lock_name_mutex(l);
	if (flags & SP_LCB_F_SPIN)
		return (flags & (SP_LCB_F_READ | SP_LCB_F_WRITE)) ? SP_LNAME_NONE : lock_name_spin(l);
	if (!(flags & (SP_LCB_F_READ | SP_LCB_F_WRITE)))
		return SP_LNAME_NONE; /* semaphore */
	return lock_name_rwsem(l);
}

/*
 * A global (non-inlined) function is verified once, on its own: inlined into lock_begin,
 * the naming probes multiplied its verification paths, then the largest part of start-up.
 */
/* verifier: global: inlined, the naming probes multiplied lock_begin's paths */
__noinline __u32 lock_name_task(__u64 l)
{
	return name_from_task(l, bpf_get_current_task_btf());
}

/* verifier: global, as lock_name_task() */
__noinline __u32 lock_name_layout(__u64 l, __u32 flags)
{
	return name_by_layout(l, flags);
}

/*
 * The two kinds of probes are global functions too: the verifier walked the rest of
 * lock_name() once per name each of them can return.
 */
/* verifier: global, its probes' answers walked once, not on each path of contention_begin() */
__noinline __u32 lock_name(__u64 l, __u32 flags)
{
	__u32 *cached = bpf_map_lookup_elem(&lock_names, &l), n;

	if (cached && *cached != SP_LNAME__MAX)
		return *cached;
	n = lock_name_task(l);
	if (n == SP_LNAME_NONE && !cached) {
		n = lock_name_layout(l, flags);
		if (n == SP_LNAME_NONE) {
			__u32 none = SP_LNAME__MAX;

			bpf_map_update_elem(&lock_names, &l, &none, BPF_NOEXIST);
			return SP_LNAME_NONE;
		}
	}
	if (n != SP_LNAME_NONE)
		bpf_map_update_elem(&lock_names, &l, &n, BPF_ANY); /* full: named again next time */
	return n;
}

/* ---- owners ---- */

#define SP_MUTEX_FLAGS 0x07ULL	       /* kernel/locking/mutex.h MUTEX_FLAGS */
#define SP_RWSEM_READER_OWNED 0x01ULL  /* kernel/locking/rwsem.c */
#define SP_RWSEM_OWNER_FLAGS 0x03ULL
#define SP_RT_MUTEX_HAS_WAITERS 0x01ULL /* kernel/locking/rtmutex.c */

static __always_inline void read_owner(struct sp_lock_task *r, __u64 l, __u32 flags)
{
	__u64 o;

	r->has_owner = 0;
	if (flags & SP_LCB_F_MUTEX) {
		if (!bpf_core_field_exists(struct mutex, owner))
			return;
		o = RD64(l, mutex, owner) & ~SP_MUTEX_FLAGS;
	} else if ((flags & SP_LCB_F_RT) &&
		   !(flags & (SP_LCB_F_READ | SP_LCB_F_WRITE | SP_LCB_F_PERCPU))) {
		/* PREEMPT_RT: an rt_mutex_base (a mutex's, an rwsem's, a spinlock_t's) */
		o = RD64(l, rt_mutex_base, owner) & ~SP_RT_MUTEX_HAS_WAITERS;
	} else if ((flags & (SP_LCB_F_READ | SP_LCB_F_WRITE)) &&
		   !(flags & (SP_LCB_F_SPIN | SP_LCB_F_RT | SP_LCB_F_PERCPU))) {
		if (!bpf_core_field_exists(struct rw_semaphore, owner))
			return;
		o = RD64(l, rw_semaphore, owner);
		if (o & SP_RWSEM_READER_OWNED) {
			__builtin_memcpy(r->owner, "[readers]", 10);
			r->has_owner = 1;
			return;
		}
		o &= ~SP_RWSEM_OWNER_FLAGS;
	} else {
		return;
	}
	if (!o)
		return;
	if (bpf_probe_read_kernel(r->owner, sizeof(r->owner),
				  (const void *)(o + bpf_core_field_offset(struct task_struct, comm))))
		return;
	r->owner[TASK_COMM_LEN - 1] = 0;
	r->has_owner = 1;
}

/* ---- programs ---- */

/*
 * In two builds, of which user space loads one (collect.c), as sp_switch: lock_begin finds the
 * caller by the fast path, lock_begin_full walks every contention and keeps its stack. Each
 * holds only its own code (the other's, behind a flag, would be dead code for the verifier
 * to remove at every load).
 */
static __always_inline int contention_begin(void *ctx, void *lock, unsigned int flags,
					    const bool fast)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct sp_lock_pending *p;
	__u64 l = (__u64)lock;
	__u32 zero = 0;

	if (!task_is_traced(t))
		return 0;
	if (sp_lock_flags_sleeping(flags)) {
		struct sp_lock_task *r;
		int ret;

		r = lock_task_get(t, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!r) {
			sp_drop(lock_drops.task_storage_fail);
			return 0;
		}
		ret = sp_pair_task_begin(&r->p, l, flags, SP_LOCK_TS_PENDING);
		if (ret == SP_PAIR_AGAIN)
			return 0;
		if (ret == SP_PAIR_REPLACED)
			sp_drop(lock_drops.unpaired);
		r->sleep_ts = 0;
		r->offcpu_ns = 0;
		r->max_sleep_ns = 0;
		r->nsleeps = 0;
		read_owner(r, l, flags);
		p = &r->p;
	} else {
		struct sp_lock_spin_stack *s = bpf_map_lookup_elem(&lock_spin, &zero);

		if (!s)
			return 0;
		p = sp_pair_spin_push(s, l, flags, SP_LOCK_TS_PENDING);
		if (!p) {
			sp_drop(lock_drops.nest_overflow);
			return 0;
		}
	}
	p->stack = lock_caller(ctx, &p->caller, fast);
	p->name = lock_name(l, flags);
	p->ts = bpf_ktime_get_ns(); /* last: the walk is not lock wait, and see SP_LOCK_TS_PENDING */
	return 0;
}

/* One program a build (include/schedprof/progs.h): lock_begin, lock_begin_full. */
#define SP_LOCK_BEGIN_PROG(program, build, provides, options)                                  \
	SEC("tp_btf/contention_begin")                                                          \
	int BPF_PROG(build, void *lock, unsigned int flags)                                     \
	{                                                                                       \
		return contention_begin(ctx, lock, flags,                                       \
					!SP_BUILD_HAS(provides, SP_BUILD_FULL_WALKS));          \
	}
SP_LOCK_BEGIN_BUILDS(SP_LOCK_BEGIN_PROG)

/*
 * The row of key in map, to add this contention to; NULL when there is nothing more to do:
 * the row was missing and is now created holding this contention alone (first, its values;
 * one update instead of sp_lookup_or_init()'s update and second lookup: a messaging run
 * creates a row for one contention in ten), or the map is full (*full set).
 */
static __always_inline void *row_get(void *map, const void *key, const void *first, bool *full)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	if (!bpf_map_update_elem(map, key, first, BPF_NOEXIST))
		return NULL;
	v = bpf_map_lookup_elem(map, key); /* the other CPU's, created meanwhile */
	*full = !v;
	return v;
}

/*
 * Counts an ended contention: the totals, its row, and its stack, sleeper and owner rows.
 * The comm is copied from the task itself (as the schedules view does), not by a helper call.
 * The rows stay shared maps, lock_stat's preallocated: per-CPU rows allocated on use were
 * slower (each new row's insert allocates, and a busy run creates many) and lost
 * rows when a burst of inserts emptied the allocator's per-CPU cache; preallocated per CPU,
 * they cost SP_DEF_CALLERS values per CPU at every start for no measurable gain. (The
 * sleepers' and owners' rows are allocated on use: see their maps.)
 *
 * A global function, verified once: lock_end reaches it from a spinning lock's end and a
 * sleeping one's, and inlined twice it was verified twice.
 */
/* verifier: global, verified once for lock_end's two ends (spinning, sleeping), not twice */
__noinline int lock_account(struct sp_lock_pending *d, int ret, struct sp_lock_task *r)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct sp_lock_key key = {};
	struct sp_lock_val first = {}, *v;
	struct sp_lock_counts *c;
	bool full = false;
	__u32 idx = 0;

	if (!d)
		return 0;
	key.caller = d->caller;
	key.lock = d->lock;
	key.name = d->name;
	key.flags = sp_lock_flags_norm(d->flags);
	__builtin_memcpy(key.comm, t->comm, sizeof(key.comm));
	c = bpf_map_lookup_elem(&lock_counts, &idx);
	if (c) { /* this CPU's: plain adds (lock_end does not nest on a CPU) */
		c->total++;
		c->failed += ret < 0;
	}
	if (ret < 0) {
		first.failed = 1;
	} else {
		first.count = 1;
		first.wait_ns = first.max_ns = d->ts;
	}
	v = row_get(&lock_stat, &key, &first, &full);
	if (full) {
		sp_drop(lock_drops.row_map_full);
	} else if (v && ret < 0) {
		__sync_fetch_and_add(&v->failed, 1);
	} else if (v) {
		__sync_fetch_and_add(&v->count, 1);
		__sync_fetch_and_add(&v->wait_ns, d->ts);
		sp_update_max(&v->max_ns, d->ts);
	}
	if (d->stack && ret >= 0) {
		struct sp_lock_stack_key sk = {
			.stack = d->stack, .caller = d->caller, .lock = d->lock, .flags = key.flags,
			.name = d->name, .tgid = (__u32)(bpf_get_current_pid_tgid() >> 32),
		};
		struct sp_lock_stack_val sfirst = { .count = 1, .wait_ns = d->ts }, *sv;

		__builtin_memcpy(sk.comm, key.comm, sizeof(sk.comm));
		full = false;
		sv = row_get(&lock_stack_counts, &sk, &sfirst, &full);
		if (sv) {
			__sync_fetch_and_add(&sv->count, 1);
			__sync_fetch_and_add(&sv->wait_ns, d->ts);
		} else if (full) {
			sp_drop(lock_drops.stackagg_map_full);
		}
	}
	if (!r)
		return 0;
	if (r->nsleeps) {
		struct sp_lock_sleep_key k = {
			.caller = d->caller, .lock = d->lock, .flags = key.flags, .name = d->name,
			.pid = (__u32)bpf_get_current_pid_tgid(),
		};
		struct sp_lock_sleep_val sfirst = {
			.contentions = 1, .sleeps = r->nsleeps, .offcpu_ns = r->offcpu_ns,
			.max_ns = r->max_sleep_ns,
		}, *sv;

		__builtin_memcpy(k.comm, key.comm, sizeof(k.comm));
		full = false;
		sv = row_get(&lock_sleepers, &k, &sfirst, &full);
		if (sv) {
			__sync_fetch_and_add(&sv->contentions, 1);
			__sync_fetch_and_add(&sv->sleeps, r->nsleeps);
			__sync_fetch_and_add(&sv->offcpu_ns, r->offcpu_ns);
			sp_update_max(&sv->max_ns, r->max_sleep_ns);
		} else if (full) {
			sp_drop(lock_drops.sleeper_map_full);
		}
		r->nsleeps = 0;
	}
	if (r->has_owner && ret >= 0) {
		struct sp_lock_owner_key k = {
			.caller = d->caller, .lock = d->lock, .flags = key.flags, .name = d->name,
		};
		struct sp_lock_owner_val ofirst = { .count = 1, .wait_ns = d->ts }, *ov;

		__builtin_memcpy(k.owner, r->owner, sizeof(k.owner));
		full = false;
		ov = row_get(&lock_owners, &k, &ofirst, &full);
		if (ov) {
			__sync_fetch_and_add(&ov->count, 1);
			__sync_fetch_and_add(&ov->wait_ns, d->ts);
		} else if (full) {
			sp_drop(lock_drops.owner_map_full);
		}
	}
	return 0;
}

SEC("tp_btf/contention_end")
int BPF_PROG(lock_end, void *lock, int ret)
{
	__u64 l = (__u64)lock, now = bpf_ktime_get_ns();
	struct sp_lock_spin_stack *s;
	struct sp_lock_pending d;
	struct sp_lock_task *r;
	__u32 zero = 0;
	int n;

	s = bpf_map_lookup_elem(&lock_spin, &zero);
	if (s && s->depth) {
		n = sp_pair_spin_pop(s, l, now, &d);
		if (n) {
			if (n > 1)
				__sync_fetch_and_add(&lock_drops.unpaired, n - 1);
			lock_account(&d, ret, NULL);
			return 0;
		}
	}
	r = lock_task_get(bpf_get_current_task_btf(), 0);
	if (!r || !sp_pair_task_end(&r->p, l, now, &d))
		return 0;
	lock_account(&d, ret, r);
	return 0;
}

/*
 * The locks view's part of sp_switch (src/views/schedules/schedules.bpf.c calls them: lock.bpf.h):
 * the sleeps inside a contention.
 */
/* The tests of the flags. */
/* verifier: global, so the test is not hoisted above switch_locks into the schedules part */
__noinline int lock_in_needs(struct sp_task *nt)
{
	return nt && nt->lock_asleep;
}

/* verifier: global, as lock_in_needs() */
__noinline int lock_out_needs(struct sp_task *pt, __u32 prev_state)
{
	return prev_state != 0 && pt && pt->has_lock; /* not TASK_RUNNING: asleep, not preempted */
}

/* The locks view's part at prev's switch-out (lock.bpf.h): r, prev's lock state, or NULL. */
/* verifier: global, checked once, not per path of sp_switch (inlined: the walks doubled) */
__noinline int lock_switch_out(struct sp_task *pt, struct sp_lock_task *r, __u64 now)
{
	if (pt && r && r->p.ts) {
		r->sleep_ts = now;
		pt->lock_asleep = 1;
	}
	return 0;
}

/* The locks view's part at next's switch-in (lock.bpf.h): r, next's lock state, or NULL. */
/* verifier: global, as lock_switch_out() */
__noinline int lock_switch_in(struct sp_task *nt, struct sp_lock_task *r, __u64 now)
{
	__u64 d;

	if (nt)
		nt->lock_asleep = 0;
	if (!r || !r->sleep_ts)
		return 0;
	d = now - r->sleep_ts;
	r->sleep_ts = 0;
	if (!r->p.ts)
		return 0;
	r->offcpu_ns += d;
	r->nsleeps++;
	if (d > r->max_sleep_ns)
		r->max_sleep_ns = d;
	return 0;
}
