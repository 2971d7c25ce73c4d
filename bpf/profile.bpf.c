// SPDX-License-Identifier: GPL-2.0-only
/*
 * The profile view: a perf cpu-clock event per online CPU runs prof_sample at -F HZ, and every
 * sample is counted in exactly one class: idle (the idle task), target (task_is_traced()) or
 * other. Target samples are aggregated here by leaf (kernel PC, or user frame as build-id +
 * file offset), comm and, with -g, the hashes of their kernel and user stacks.
 *
 * User frames are kept as build-id + file offset so that they can be named after the process
 * is gone (a compile job's cc1, as, ld). The kernel's build-id lookup costs a VMA walk and
 * page-cache reads per mapping on the stack, so user frames are named from two caches where
 * they can be (user_frames()): prof_xcache for the executable's text, shared by every process
 * of that file, and prof_ucache per process image and code page. The leaf is the user PC, so a
 * leaf not cached costs no walk of ours; a page not cached (and every SP_PROF_UCACHE_CHECK-th
 * fully cached sample of a CPU, to re-validate) takes the kernel's build-id walk, whose answer
 * fills the caches. In this context (hard interrupt) the kernel cannot sleep to read the
 * build-id and falls back to raw IPs for a stack now and then: such
 * keys carry (tgid, exec_id) and user space is asked, through the prof_events ring buffer, to
 * snapshot the process's mappings while it lives. It is also told about every exec and the
 * first sample of each process image, so it can register the files the image maps.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "target.bpf.h"
#include "schedprof/profile.h"

/* -g: full kernel and user stacks; without it, the leaf only. */
const volatile __u32 prof_callchains = 0;

struct sp_prof_counts prof_counts;
struct sp_prof_drops prof_drops;
struct sp_prof_ucache_stats prof_ucache_stats;

SP_HASH_MAP(prof_samples, SP_DEF_PROF_KEYS, struct sp_prof_key, __u64);
/* Stacks by hash, -g only (1 entry otherwise). Not preallocated: memory follows use. */
SP_HASH_MAP_LAZY(prof_kstacks, SP_DEF_STACKS, __u64, struct sp_prof_kstack);
SP_HASH_MAP_LAZY(prof_ustacks, SP_DEF_STACKS, __u64, struct sp_prof_ustack);

/* An ELF64 program header, as the process maps it. */
struct phdr64 {
	__u32 type;
	__u32 flags;
	__u64 offset, vaddr, paddr, filesz, memsz, align;
};

#define PROF_MAX_PHDRS 32
#define PF_KTHREAD 0x00200000
#define PF_USER_WORKER 0x00004000

struct prof_scratch {
	struct sp_prof_key key;
	struct sp_prof_kstack k;
	struct sp_prof_ustack u;
	__u64 uip[SP_PROF_UDEPTH]; /* the raw user IPs of u.frames */
	__u64 auxv[56];		    /* mm->saved_auxv (single_text_segment) */
	struct phdr64 phdrs[PROF_MAX_PHDRS];
	__u32 tick;		    /* samples with user frames on this CPU: re-validation */
	__u32 pad;
};

SP_SCRATCH_MAP(prof_buf, struct prof_scratch);
/* Process images ((tgid << 32) | exec_id) already announced, with the last announce time. */
SP_MAP(prof_seen, BPF_MAP_TYPE_LRU_HASH, 0, SP_PROF_SEEN, __u64, __u64);

/* Code page of a process image -> build-id and file offset (see struct sp_prof_ucache_key). */
SP_MAP(prof_ucache, BPF_MAP_TYPE_LRU_HASH, 0, SP_PROF_UCACHE, struct sp_prof_ucache_key,
       struct sp_prof_ucache_val);
/* Per process image (page 0 of the key): how its -g samples' deeper frames fared. */
struct prof_uimage_state {
	__u32 misses; /* walks in a row that found a deeper page not cached */
	__u32 skips;
};
#define PROF_DEEP_RETRY 128
SP_MAP(prof_uimage, BPF_MAP_TYPE_LRU_HASH, 0, SP_PROF_SEEN, struct sp_prof_ucache_key,
       struct prof_uimage_state);
SP_MAP(prof_xcache, BPF_MAP_TYPE_LRU_HASH, 0, SP_PROF_XCACHE, struct sp_prof_xcache_key,
       struct sp_prof_ucache_val);

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SP_PROF_EVENTS_BYTES);
} prof_events SEC(".maps");

#define PROF_REFRESH_RAW_NS (100 * 1000 * 1000ULL) /* raw IPs: look again after 100 ms */
#define PROF_REFRESH_NS (1000 * 1000 * 1000ULL)	    /* anything: look again after 1 s */

static __always_inline void announce(__u32 tgid, __u32 exec_id, __u32 reason)
{
	struct sp_prof_event ev = { .tgid = tgid, .exec_id = exec_id, .reason = reason };

	if (bpf_ringbuf_output(&prof_events, &ev, sizeof(ev), 0))
		sp_drop(prof_drops.event_lost);
}

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

struct uwalk {
	struct sp_prof_ustack *u;
	__u64 hash;
	__u32 nr;
	__u32 raw;
};

/* Hashes a user frame (32 bytes as four words) and notes raw-IP frames. */
static long uframe_step(__u64 i, struct uwalk *w)
{
	struct sp_uframe *f;
	__u64 *q;

	if (i >= w->nr || i >= SP_PROF_UDEPTH)
		return 1;
	f = &w->u->frames[i & (SP_PROF_UDEPTH - 1)];
	if (f->status == SP_UFRAME_IP)
		w->raw = 1;
	q = (__u64 *)f;
	w->hash = sp_mix(sp_mix(sp_mix(sp_mix(w->hash, q[0]), q[1]), q[2]), q[3]);
	return 0;
}

struct ucwalk {
	struct prof_scratch *s;
	struct sp_prof_ucache_key key;
	struct sp_prof_xcache_key xkey; /* xkey.ino == 0: no executable known */
	__u64 text_start, text_len;	/* the executable's text: mm->start_code, its length */
	__u32 nr;
	__u32 miss;  /* ucache_get: a page is not cached */
	__u32 valid; /* ucache_put: the kernel named some frame (it held the mm) */
	__u32 check; /* ucache_put: re-validating frames that were all cached */
	__u32 stale; /* ... and some differed */
	__u32 whole; /* ucache_put: the executable has one text segment (SP_PROF_XCACHE_WHOLE) */
	__u32 start; /* ucache_get: the first frame not cached (ucache_put starts there) */
	__u32 xwhole; /* ucache_get: the executable's SP_PROF_XCACHE_WHOLE entry exists */
	__u32 need_text; /* a named text frame is to be cached */
	__u32 known; /* frames whose IP is known (in uip) */
};

static __always_inline bool in_text(struct ucwalk *w, __u64 ip)
{
	return w->xkey.ino && ip - w->text_start < w->text_len;
}

/* Frame i from the caches; stops at the first page not cached. */
static long ucache_get(__u64 i, struct ucwalk *w)
{
	struct sp_prof_ucache_val *v;
	struct sp_uframe *f;
	__u32 j = i & (SP_PROF_UDEPTH - 1);
	__u64 ip;

	if (i >= w->nr || i >= SP_PROF_UDEPTH)
		return 1;
	ip = w->s->uip[j];
	if (in_text(w, ip)) {
		w->xkey.page = SP_PROF_XCACHE_WHOLE;
		v = bpf_map_lookup_elem(&prof_xcache, &w->xkey);
		if (v)
			w->xwhole = 1;
		else {
			w->xkey.page = (ip - w->text_start) >> 12;
			v = bpf_map_lookup_elem(&prof_xcache, &w->xkey);
		}
		ip -= w->text_start; /* the value's delta is relative to start_code */
	} else {
		w->key.page = ip >> 12;
		v = bpf_map_lookup_elem(&prof_ucache, &w->key);
	}
	if (!v) {
		w->miss = 1;
		w->start = j;
		return 1;
	}
	f = &w->s->u.frames[j];
	f->status = v->status;
	__builtin_memcpy(f->build_id, v->build_id, sizeof(f->build_id));
	f->offset = v->status == SP_UFRAME_VALID ? ip + v->delta : w->s->uip[j];
	return 0;
}

/* Whether the kernel named any frame, and whether a named text frame is to be cached. */
static long ucache_count_valid(__u64 i, struct ucwalk *w)
{
	__u32 j = i & (SP_PROF_UDEPTH - 1);

	if (i >= w->nr || i >= SP_PROF_UDEPTH)
		return 1;
	if (w->s->u.frames[j].status == SP_UFRAME_VALID) {
		w->valid = 1;
		if (i >= w->start && i < w->known && in_text(w, w->s->uip[j]))
			w->need_text = 1;
	}
	return 0;
}

/* Caches the kernel's answer for frame i (raw IPs only when the kernel named other frames). */
static long ucache_put(__u64 i, struct ucwalk *w)
{
	struct sp_prof_ucache_val val = {}, *old;
	struct sp_uframe *f;
	__u32 j = i & (SP_PROF_UDEPTH - 1);
	__u64 ip, *a, *b;
	void *map, *key;
	bool text;

	if (i >= w->nr || i >= SP_PROF_UDEPTH)
		return 1;
	if (i < w->start) /* named from the caches already */
		return 0;
	f = &w->s->u.frames[j];
	ip = w->s->uip[j];
	if (f->status == SP_UFRAME_VALID) {
		val.status = SP_UFRAME_VALID;
		__builtin_memcpy(val.build_id, f->build_id, sizeof(val.build_id));
	} else if (f->status == SP_UFRAME_IP && w->valid) {
		val.status = SP_UFRAME_IP;
	} else {
		return 0;
	}
	/* only named text pages go to the shared cache: a raw IP there is the kernel's problem now */
	text = in_text(w, ip) && val.status == SP_UFRAME_VALID;
	if (text) {
		w->xkey.page = w->whole ? SP_PROF_XCACHE_WHOLE : (ip - w->text_start) >> 12;
		map = &prof_xcache;
		key = &w->xkey;
		ip -= w->text_start;
	} else {
		w->key.page = ip >> 12;
		map = &prof_ucache;
		key = &w->key;
	}
	if (val.status == SP_UFRAME_VALID)
		val.delta = f->offset - ip;
	if (w->check) {
		old = bpf_map_lookup_elem(map, key);
		if (old) {
			a = (__u64 *)old;
			b = (__u64 *)&val;
			if (a[0] != b[0] || a[1] != b[1] || a[2] != b[2] || a[3] != b[3])
				w->stale = 1;
		}
	}
	bpf_map_update_elem(map, key, &val, BPF_ANY);
	return 0;
}

/* The executable's file identity and text range (w->xkey.ino stays 0 when unknown). */
static __always_inline void exe_text(struct task_struct *task, struct ucwalk *w)
{
	struct mm_struct *mm = task->mm; /* direct (faulting-safe) loads: no helper calls */
	struct inode *ino;
	struct file *f;
	__u64 start, end;

	if (!mm)
		return;
	start = mm->start_code;
	end = mm->end_code;
	f = mm->exe_file;
	if (!f || end <= start)
		return;
	ino = f->f_inode;
	if (!ino)
		return;
	w->text_start = start;
	w->text_len = end - start;
	w->xkey.ctime_sec = ino->i_ctime_sec;
	w->xkey.ctime_nsec = ino->i_ctime_nsec;
	w->xkey.generation = ino->i_generation;
	w->xkey.dev = ino->i_sb->s_dev;
	w->xkey.ino = ino->i_ino;
}

/*
 * Whether the executable has exactly one executable PT_LOAD: its program headers, found through
 * AT_PHDR / AT_PHNUM of the saved auxiliary vector, are read from the process's memory.
 */
struct phscan {
	struct prof_scratch *s;
	__u64 phdr, phnum;
	__u32 nx;
	__u32 pad;
};

static long auxv_step(__u64 i, struct phscan *p)
{
	__u64 *a = p->s->auxv, type, val;
	__u32 j = (i * 2) & 63;

	if (j + 1 >= 56)
		return 1;
	type = a[j];
	val = a[j + 1];
	if (type == 0) /* AT_NULL */
		return 1;
	if (type == 3) /* AT_PHDR */
		p->phdr = val;
	else if (type == 5) /* AT_PHNUM */
		p->phnum = val;
	return 0;
}

static long phdr_step(__u64 i, struct phscan *p)
{
	struct phdr64 *h;

	if (i >= p->phnum)
		return 1;
	h = &p->s->phdrs[i & (PROF_MAX_PHDRS - 1)];
	if (h->type == 1 && (h->flags & 1)) /* PT_LOAD, PF_X */
		p->nx++;
	return 0;
}

static __always_inline bool single_text_segment(struct task_struct *task, struct prof_scratch *s)
{
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	struct phscan p = { .s = s };
	__u32 size;

	if (!mm || bpf_probe_read_kernel(s->auxv, sizeof(s->auxv), &mm->saved_auxv))
		return false;
	bpf_loop(28, auxv_step, &p, 0);
	if (!p.phdr || !p.phnum || p.phnum > PROF_MAX_PHDRS)
		return false;
	size = p.phnum * sizeof(struct phdr64);
	if (size > sizeof(s->phdrs) || bpf_probe_read_user(s->phdrs, size, (void *)p.phdr))
		return false;
	bpf_loop(PROF_MAX_PHDRS, phdr_step, &p, 0);
	return p.nx == 1;
}

/*
 * The user frames of the sample into s->u.frames, as build-id + file offset where the kernel
 * can name them: from prof_ucache when every page is cached, else (and every
 * SP_PROF_UCACHE_CHECK-th time) from the kernel, whose answer is cached. Returns the number of
 * frames.
 */
static __always_inline __u32 user_frames(struct bpf_perf_event_data *ctx,
					 struct task_struct *task, struct prof_scratch *s)
{
	__u32 depth = prof_callchains ? SP_PROF_UDEPTH : 1, nr, walked = 0;
	struct prof_uimage_state *img = NULL, first_miss = { .misses = 1 };
	struct ucwalk w = { .s = s };
	struct pt_regs *regs;
	long n;

	/* as perf: no user stack for kernel threads and io workers */
	if (task->flags & (PF_KTHREAD | PF_USER_WORKER))
		return 0;
	/* The leaf is the user PC, so a leaf not cached costs no stack walk of ours. */
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return 0;
	s->uip[0] = regs->ip;
	w.key.start_time = task->group_leader->start_time;
	w.key.tgid = task->tgid;
	w.key.exec_id = (__u32)task->self_exec_id;
	if (prof_callchains) {
		/*
		 * An image whose deeper frames keep missing (a short process's libraries and
		 * unwinding garbage) would pay for the caches and two walks a sample, ours and
		 * the kernel's: after two misses in a row (the first sample of an image fills
		 * the caches, so its second usually hits), only every PROF_DEEP_RETRY-th sample
		 * tries the caches (and walks to learn pages); the others are the kernel's.
		 */
		w.key.page = 0;
		img = bpf_map_lookup_elem(&prof_uimage, &w.key);
		if (img && img->misses >= 2 && ++img->skips % PROF_DEEP_RETRY) {
			n = bpf_get_stack(ctx, s->u.frames, sizeof(s->u.frames),
					  BPF_F_USER_STACK | BPF_F_USER_BUILD_ID);
			if (n < 0) {
				sp_drop(prof_drops.ustack_fail);
				return 0;
			}
			__sync_fetch_and_add(&prof_ucache_stats.miss, 1);
			return n / sizeof(struct sp_uframe);
		}
	}
	exe_text(task, &w);
	w.nr = 1;
	ucache_get(0, &w);
	if (!w.miss && prof_callchains) {
		n = bpf_get_stack(ctx, s->uip, sizeof(s->uip), BPF_F_USER_STACK);
		if (n < 0) {
			sp_drop(prof_drops.ustack_fail);
			return 0;
		}
		walked = 1;
		w.nr = n / sizeof(__u64);
		if (!w.nr)
			return 0;
		bpf_loop(SP_PROF_UDEPTH, ucache_get, &w, 0);
		if (img) {
			img->misses = w.miss ? img->misses + 1 : 0;
		} else if (w.miss) {
			w.key.page = 0; /* the image's key (ucache_get moved it) */
			bpf_map_update_elem(&prof_uimage, &w.key, &first_miss, BPF_ANY);
		}
	}
	if (!w.miss && ++s->tick % SP_PROF_UCACHE_CHECK) {
		__sync_fetch_and_add(&prof_ucache_stats.hit, 1);
		return w.nr;
	}

	/* The kernel's build-id lookup; the same stack, so frame i is uip[i]. */
	n = bpf_get_stack(ctx, s->u.frames, depth * sizeof(struct sp_uframe),
			  BPF_F_USER_STACK | BPF_F_USER_BUILD_ID);
	if (n < 0) {
		sp_drop(prof_drops.ustack_fail);
		return 0;
	}
	nr = n / sizeof(struct sp_uframe);
	if (w.miss)
		__sync_fetch_and_add(&prof_ucache_stats.miss, 1);
	else
		__sync_fetch_and_add(&prof_ucache_stats.check, 1);
	if (!nr || (walked && nr != w.nr)) /* cannot happen; cache nothing then */
		return nr;
	w.check = !w.miss;
	if (w.check)
		w.start = 0;
	w.nr = nr;
	/* without our walk only the leaf's IP is known */
	w.known = walked ? nr : 1;
	bpf_loop(SP_PROF_UDEPTH, ucache_count_valid, &w, 0);
	/* the program headers are read once per executable, not per sample */
	w.whole = w.xwhole || (w.need_text && single_text_segment(task, s));
	w.nr = w.known;
	bpf_loop(SP_PROF_UDEPTH, ucache_put, &w, 0);
	if (w.stale)
		__sync_fetch_and_add(&prof_ucache_stats.stale, 1);
	return nr;
}

static __always_inline void count_key(struct sp_prof_key *key)
{
	if (!sp_count(&prof_samples, key, 1))
		sp_drop(prof_drops.key_map_full);
}

/* Tells user space about a process image the first time it has user frames, then now and then. */
static __always_inline void maybe_announce(struct task_struct *task, __u32 raw)
{
	__u32 tgid = task->tgid, exec_id = (__u32)task->self_exec_id;
	__u64 img = ((__u64)tgid << 32) | exec_id, now = bpf_ktime_get_ns(), *last;

	last = bpf_map_lookup_elem(&prof_seen, &img);
	if (!last) {
		bpf_map_update_elem(&prof_seen, &img, &now, BPF_ANY);
		announce(tgid, exec_id, SP_PROF_EV_FIRST);
		return;
	}
	if (now - *last > (raw ? PROF_REFRESH_RAW_NS : PROF_REFRESH_NS)) {
		*last = now;
		announce(tgid, exec_id, SP_PROF_EV_REFRESH);
	}
}

static __always_inline void record(struct bpf_perf_event_data *ctx, struct task_struct *task)
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
	n = bpf_get_stack(ctx, s->k.ip, prof_callchains ? sizeof(s->k.ip) : sizeof(__u64), 0);
	if (n < 0)
		sp_drop(prof_drops.kstack_fail);
	else
		nk = n / sizeof(__u64);
	if (nk)
		key->kip = s->k.ip[0];

	/* User frames: the leaf of a user-mode sample, or the whole stack with -g. */
	if (!nk || prof_callchains)
		nu = user_frames(ctx, task, s);
	if (nu) {
		key->uleaf = s->u.frames[0];
		raw = key->uleaf.status == SP_UFRAME_IP;
	}

	if (prof_callchains) {
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
		if (nu) {
			struct uwalk uw = { .u = &s->u, .hash = 0x84222325cbf29ce4ULL, .nr = nu };

			s->u.nr = nu;
			bpf_loop(SP_PROF_UDEPTH, uframe_step, &uw, 0);
			raw |= uw.raw;
			key->ustack = sp_stack_keep(&prof_ustacks, uw.hash, &s->u);
			if (!key->ustack) {
				key->flags |= SP_PROF_F_USTACK_LOST;
				sp_drop(prof_drops.ustack_map_full);
			}
		}
	}
	if (prof_callchains)
		key->pid = task->tgid; /* -g stacks are per process; flat counts merge across them */
	if (raw) {
		key->flags |= SP_PROF_F_RAW_IP;
		key->tgid = task->tgid;
		key->exec_id = (__u32)task->self_exec_id;
	}
	count_key(key);
	if (nu)
		maybe_announce(task, raw);
}

SEC("perf_event")
int prof_sample(struct bpf_perf_event_data *ctx)
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
	record(ctx, task);
	return 0;
}

/* A traced task exec'd: user space registers the new image's files while it lives. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(prof_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (!task_is_target(p))
		return 0;
	announce(p->tgid, (__u32)p->self_exec_id, SP_PROF_EV_EXEC);
	return 0;
}
