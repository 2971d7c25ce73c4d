// SPDX-License-Identifier: GPL-2.0-only
/*
 * The profile view: a perf cpu-clock event per online CPU runs prof_sample at -F HZ, and every
 * sample is counted in exactly one class: idle (the idle task), target (task_is_traced()) or
 * other. Target samples are aggregated here by leaf (kernel PC, or user frame as build-id +
 * file offset), comm and, with -g, the hashes of their kernel and user stacks.
 *
 * User frames (the leaf, and the stack with -g) are named by ustack.bpf.h, whose caches and
 * process announcements the schedules and locks views share.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "target.bpf.h"
#include "ustack.bpf.h"
#include "schedprof/progs.h"
#include "schedprof/profile.h"

struct sp_prof_counts prof_counts;
struct sp_prof_drops prof_drops;

SP_HASH_MAP(prof_samples, SP_DEF_PROF_KEYS, struct sp_prof_key, __u64);
/* Kernel stacks by hash, -g only (1 entry otherwise). Not preallocated: memory follows use. */
SP_HASH_MAP_LAZY(prof_kstacks, SP_DEF_STACKS, __u64, struct sp_prof_kstack);

struct prof_scratch {
	struct sp_prof_key key;
	struct sp_prof_kstack k;
	struct sp_uscratch us;
};

SP_SCRATCH_MAP(prof_buf, struct prof_scratch);

struct kwalk {
	struct sp_prof_kstack *k;
	__u64 hash;
	__u32 nr;
	__u32 pad;
};

static long kframe_step(__u64 i, struct kwalk *w)
{
	if (i >= w->nr || i >= SP_PROF_KDEPTH)
		return 1;
	w->hash = sp_mix(w->hash, w->k->ip[i & (SP_PROF_KDEPTH - 1)]);
	return 0;
}

static __always_inline void count_key(struct sp_prof_key *key)
{
	if (!sp_count(&prof_samples, key, 1))
		sp_drop(prof_drops.key_map_full);
}

/*
 * -g: bytes of the user stack copied per sample for user space to unwind (struct
 * sp_prof_ucopy); 0: the frames are walked here by frame pointers. Set before load.
 */
const volatile __u32 prof_ucopy_max = 0;

/* The copies, sized by user space with -g (one page otherwise). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} prof_ucopies SEC(".maps");

#define UCOPY_PAGE 4096ULL
#define UCOPY_EBUSY 16 /* bpf_find_vma(): the mm's lock is held */

/*
 * A CPU's copy, taken here and then sent at its length: a record reserved in the ring buffer
 * would hold the whole prof_ucopy_max (the verifier's bound) while it waits to be read. A
 * slot per CPU (user space sizes the map with -g, one slot otherwise), in an array, as a
 * per-CPU map's value holds 32 KiB at most; the profile's program does not nest on a CPU.
 */
struct ucopy_slot {
	/* struct sp_prof_ucopy, then a page more than the copy (the page-wise read's bound) */
	__u8 b[sizeof(struct sp_prof_ucopy) + SP_PROF_UCOPY_MAX + UCOPY_PAGE];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ucopy_slot);
} prof_ucopy_slots SEC(".maps");

struct vma_end {
	__u64 end;
};

static long ucopy_vma_end(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	((struct vma_end *)data)->end = vma->vm_end;
	return 0;
}

/*
 * The page-wise read of a copy (ucopy_page()): len bytes of the stack at sp. The bytes read so
 * far are in the slot's record (its len), not here: a value in a map is not tracked from one
 * iteration to the next, so the verifier walks the callback a few times, not once per value.
 */
struct ucopy_read {
	__u64 sp, len;
	__u32 cpu;
	__u32 pad;
};

/*
 * bpf_loop() callback: reads the copy's next page into the CPU's slot; 1 (stop) at the
 * copy's end or at a page not readable. A loop of bpf_loop(), not an unrolled one: the
 * verifier's work does not grow with the copy's size (unrolled, it grew faster than it).
 */
static long ucopy_page(__u64 i, void *data)
{
	struct ucopy_read *rd = data;
	struct sp_prof_ucopy *r;
	__u64 off, chunk;

	(void)i;
	r = bpf_map_lookup_elem(&prof_ucopy_slots, &rd->cpu);
	if (!r)
		return 1;
	off = r->len;
	if (off >= rd->len || off > SP_PROF_UCOPY_MAX)
		return 1;
	chunk = UCOPY_PAGE - ((rd->sp + off) & (UCOPY_PAGE - 1));
	if (chunk > rd->len - off)
		chunk = rd->len - off;
	/*
	 * Bounded against a constant, which clang would drop as implied: Linux 6.1's verifier
	 * learns no bound from comparing two variables (len - off).
	 */
	asm volatile("if %[c] <= 4096 goto +1; %[c] = 4096" : [c] "+r"(chunk));
	if (bpf_probe_read_user(r->data + off, chunk, (void *)(rd->sp + off)))
		return 1;
	r->len = off + chunk;
	return 0;
}

/*
 * -g: sends key with the task's user registers and its stack from SP to the end of the
 * stack's mapping (a read past it would fail whole), at most prof_ucopy_max bytes. False
 * when no copy was sent (counted, unless the task has no user stack): the caller walks
 * frame pointers instead, so a full ring buffer costs depth, never a sample.
 */
static __always_inline bool ucopy_send(struct task_struct *task, struct sp_prof_key *key)
{
	__u64 max = prof_ucopy_max, sp, len;
	__u32 cpu = bpf_get_smp_processor_id();
	struct vma_end e = {};
	long err;
	struct sp_prof_ucopy *r;
	struct pt_regs *regs;
	__u32 flags = 0;

	/* a known constant for the verifier (read-only .rodata): the record's size */
	if (!max || max > SP_PROF_UCOPY_MAX || (task->flags & (PF_KTHREAD | PF_USER_WORKER)))
		return false;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return false;
	sp = regs->sp;
	err = bpf_find_vma(task, sp, ucopy_vma_end, &e, 0);
	if (err == -UCOPY_EBUSY) {
		/*
		 * The mm's lock is held (by a page fault, mmap, mprotect or brk of this task, as
		 * often as the profile samples there): the mapping's end is unknown, and the
		 * page-wise read below stops at it.
		 */
		len = max;
		flags |= SP_UCOPY_F_NOEND;
	} else if (err || e.end <= sp) {
		sp_drop(prof_drops.ucopy_busy);
		return false;
	} else {
		len = e.end - sp;
		if (len > max) {
			len = max;
			flags |= SP_UCOPY_F_CUT;
		}
	}
	r = bpf_map_lookup_elem(&prof_ucopy_slots, &cpu);
	if (!r) { /* cannot happen (a slot per CPU); counted all the same */
		sp_drop(prof_drops.ucopy_lost);
		return false;
	}
	if (bpf_probe_read_user(r->data, len, (void *)sp)) {
		/*
		 * Some page is not readable here (a fault would be needed): the pages before
		 * it, which hold the innermost frames.
		 */
		struct ucopy_read rd = { .sp = sp, .len = len, .cpu = cpu };
		__u64 off;

		r->len = 0;
		bpf_loop(max / UCOPY_PAGE + 1, ucopy_page, &rd, 0);
		off = r->len;
		if (!off) {
			sp_drop(prof_drops.ucopy_fail);
			return false;
		}
		/* without the mapping's end, a read that stops short may have reached it */
		if (!(flags & SP_UCOPY_F_NOEND)) {
			sp_drop(prof_drops.ucopy_part);
			flags |= SP_UCOPY_F_PART;
		}
		len = off;
	}
	/* the record's key, not the caller's: a copy not sent leaves it as it was */
	__builtin_memcpy(&r->key, key, sizeof(*key));
	r->key.flags |= SP_PROF_F_RAW_IP;
	r->key.tgid = task->tgid;
	r->key.exec_id = (__u32)task->self_exec_id;
	r->ip = regs->ip;
	r->sp = sp;
	r->bp = regs->bp;
	r->bx = regs->bx;
	r->len = len;
	r->flags = flags;
	/* len <= max, bounded against a constant again for Linux 6.1 (see above) */
	asm volatile("if %[c] <= %[m] goto +1; %[c] = %[m]"
		     : [c] "+r"(len)
		     : [m] "i"(SP_PROF_UCOPY_MAX));
	if (bpf_ringbuf_output(&prof_ucopies, r, sizeof(*r) + len, 0)) {
		sp_drop(prof_drops.ucopy_lost);
		return false;
	}
	return true;
}

/* callchains (-g): full kernel and user stacks; without it, the leaf only. */
static __always_inline void record(struct bpf_perf_event_data *ctx, struct task_struct *task,
				   bool callchains)
{
	struct prof_scratch *s;
	struct sp_prof_key *key;
	__u32 zero = 0, nk = 0, nu = 0, raw = 0;
	long n;

	s = bpf_map_lookup_elem(&prof_buf, &zero);
	if (!s) { /* cannot happen (a per-CPU array of one); counted all the same */
		sp_drop(prof_drops.key_map_full);
		return;
	}
	key = &s->key;
	__builtin_memset(key, 0, sizeof(*key));
	bpf_get_current_comm(key->comm, sizeof(key->comm));

	/* Kernel frames: none when the sample interrupted user mode. */
	n = bpf_get_stack(ctx, s->k.ip, callchains ? sizeof(s->k.ip) : sizeof(__u64), 0);
	if (n < 0)
		sp_drop(prof_drops.kstack_fail);
	else
		nk = n / sizeof(__u64);
	if (nk)
		key->kip = s->k.ip[0];

	if (callchains) {
		key->pid = task->tgid; /* -g stacks are per process; flat counts merge across them */
		if (nk) {
			struct kwalk kw = { .k = &s->k, .hash = SP_HASH_SEED, .nr = nk };

			s->k.nr = nk;
			bpf_loop(SP_PROF_KDEPTH, kframe_step, &kw, 0);
			key->kstack = sp_stack_keep(&prof_kstacks, kw.hash, &s->k);
			if (!key->kstack) {
				key->flags |= SP_PROF_F_KSTACK_LOST;
				sp_drop(prof_drops.kstack_map_full);
			}
		}
		/* the user stack unwound in user space, which counts the sample */
		if (ucopy_send(task, key)) {
			sp_user_maybe_announce(task, 1, bpf_ktime_get_ns(), sp_task_exec_vm(task),
					       NULL, &prof_drops.event_lost);
			return;
		}
	}

	/* User frames: the leaf of a user-mode sample, or the whole stack with -g. */
	if (!nk || callchains) {
		sp_utask_get(task, &s->us.ut, true);
		/* the count through memory: one verifier state from here, not one per return */
		s->us.nw = sp_user_frames(ctx, task, &s->us, callchains, false, 0, false,
					  &prof_drops.ustack_fail);
		/* verifier: the count from memory, one state from here, not one per return */
		asm volatile("" ::: "memory");
		nu = s->us.nw;
	}
	/* -g: the callers a C library without frame pointers hides (as at a switch) */
	if (nu && callchains && !(task->flags & (PF_KTHREAD | PF_USER_WORKER)))
		nu = sp_user_recover(task, &s->us, nu);
	if (nu) {
		key->uleaf = s->us.u.frames[0];
		raw = key->uleaf.status == SP_UFRAME_IP;
	}

	if (callchains && nu) {
		key->ustack = sp_user_stack_keep(&s->us, nu, &raw, &prof_drops.ustack_map_full);
		if (!key->ustack)
			key->flags |= SP_PROF_F_USTACK_LOST;
	}
	if (raw) {
		key->flags |= SP_PROF_F_RAW_IP;
		key->tgid = task->tgid;
		key->exec_id = (__u32)task->self_exec_id;
	}
	count_key(key);
	if (nu)
		sp_user_maybe_announce(task, raw, bpf_ktime_get_ns(), s->us.ut.exec_vm, NULL,
				       &prof_drops.event_lost);
}

static __always_inline int sample(struct bpf_perf_event_data *ctx, bool callchains)
{
	struct task_struct *task = bpf_get_current_task_btf();

	__sync_fetch_and_add(&prof_counts.total, 1);
	if (task->pid == 0) {
		__sync_fetch_and_add(&prof_counts.idle, 1);
		return 0;
	}
	if (!task_is_target(task)) {
		__sync_fetch_and_add(&prof_counts.other, 1);
		return 0;
	}
	__sync_fetch_and_add(&prof_counts.target, 1);
	record(ctx, task, callchains);
	return 0;
}

/*
 * Two builds, one loaded (include/schedprof/progs.h): prof_sample, the leaf only, and with -g
 * prof_sample_g, the stacks. One program with a flag made the verifier remove the other's
 * code as dead at every load (most of its instructions without -g).
 */
#define SP_PROF_SAMPLE_PROG(program, build, provides, options)                                 \
	SEC("perf_event")                                                                       \
	int build(struct bpf_perf_event_data *ctx)                                              \
	{                                                                                       \
		return sample(ctx, SP_BUILD_HAS(provides, SP_BUILD_CALLCHAINS));                \
	}
SP_PROF_SAMPLE_BUILDS(SP_PROF_SAMPLE_PROG)

/*
 * A traced task exec'd: user space registers the new image's files while it lives. The task is
 * current (exec_binprm() fires the tracepoint for current). A raw tracepoint, not tp_btf: its
 * arguments are not needed, and tp_btf's load costs the kernel a search of its BTF by name
 * for the tracepoint (bpf_check_attach_target()).
 */
SEC("raw_tp/sched_process_exec")
int prof_exec(void *ctx)
{
	struct task_struct *p = bpf_get_current_task_btf();

	if (!task_is_target(p))
		return 0;
	sp_user_announce(p->tgid, (__u32)p->self_exec_id, SP_PROF_EV_EXEC, NULL,
			 &prof_drops.event_lost);
	return 0;
}
