/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * User stacks, shared by the views that take them: the profile (every sample's user leaf, its
 * stack with -g), and with --stacks the schedules view (a voluntary switch-out) and the locks
 * view (a contention's begin). ustack.bpf.c defines the maps; the objects that include this
 * header see them extern (bpf/meson.build links ustack before them).
 *
 * User frames are kept as build-id + file offset so that they can be named after the process
 * is gone (a compile job's cc1, as, ld). The kernel's build-id lookup costs a VMA walk and
 * page-cache reads per mapping on the stack, so user frames are named from two caches where
 * they can be (sp_user_frames()): prof_xcache for the executable's text, shared by every
 * process of that file, and prof_ucache per process image and code page. The leaf is the user
 * PC, so a leaf not cached costs no walk of ours; a page not cached (and every
 * SP_PROF_UCACHE_CHECK-th fully cached stack of a CPU, to re-validate) takes the kernel's
 * build-id walk, whose answer fills the caches. Where the kernel cannot read the build-id
 * (a hard interrupt for the profile; at a switch, the mm lock's deferred release still
 * pending) it falls back to raw IPs for a stack now and then: such stacks carry (tgid,
 * exec_id) and user space is asked, through the prof_events ring buffer, to snapshot the
 * process's mappings while it lives. It is also told about the first stack of each process
 * image, so it can register the files the image maps (sp_user_announce()).
 *
 * The schedules and locks views take a stack per voluntary switch or contention, far more
 * often than the profile samples (sp_user_stack_own()): they walk the frames themselves
 * (sp_user_walk(): the stack's first 1 KB read at once, the frame records there taken from
 * it), plan how the frames a library without frame pointers hides join them (sp_user_plan(),
 * a scan of the same words; the profile's -g stacks too, sp_user_recover()), and name a raw
 * stack only the first time it is seen: the raw IPs and the image hash to a key of
 * ustack_raw, whose value is the named stack (a per-CPU memo before it, which also remembers
 * the stack's pair and its image's announcement). Every SP_USTACK_UCACHE_CHECK-th stack of
 * a CPU is named again through the kernel (re-validation). A stack is kept as a (kernel
 * stack, user stack) pair (sp_stack_pair()), whose key stands for the stack in the view's
 * maps, so the rows never depend on it. Cost per voluntary switch: bench/callers.sh.
 */
#ifndef SCHEDPROF_USTACK_BPF_H
#define SCHEDPROF_USTACK_BPF_H

#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "compat.bpf.h"
#include "schedprof/profile.h"

#ifdef SP_USTACK_DEFINE /* in ustack.bpf.c */
#define SP_USTACK_EXTERN
#else
#define SP_USTACK_EXTERN extern
#endif

/*
 * The maps are sized by user space for the views that use them (src/collect/uframes_bpf.c):
 * one entry (one page) when none does, so that a run without user stacks pays nothing.
 */
/* User stacks by hash of their frames (struct sp_prof_ustack). Not preallocated. */
SP_USTACK_EXTERN SP_HASH_MAP_LAZY(prof_ustacks, 1, __u64, struct sp_prof_ustack);
/* The schedules and locks views' (kernel stack, user stack) pairs, by hash of both. */
SP_USTACK_EXTERN SP_HASH_MAP(stack_pairs, 1, __u64, struct sp_stack_pair);
/* Process images ((tgid << 32) | exec_id) already announced: when last, and their code size. */
struct sp_prof_seen {
	__u64 ts;
	__u64 exec_vm; /* mm->exec_vm then */
};
SP_USTACK_EXTERN SP_MAP(prof_seen, BPF_MAP_TYPE_LRU_HASH, 0, 1, __u64, struct sp_prof_seen);
/* Code page of a process image -> build-id and file offset (see struct sp_prof_ucache_key). */
SP_USTACK_EXTERN SP_MAP(prof_ucache, BPF_MAP_TYPE_LRU_HASH, 0, 1, struct sp_prof_ucache_key,
			struct sp_prof_ucache_val);
/* Per process image (page 0 of the key): how its full stacks' deeper frames fared. */
struct prof_uimage_state {
	__u32 misses; /* walks in a row that found a deeper page not cached */
	__u32 skips;
};
#define PROF_DEEP_RETRY 128
SP_USTACK_EXTERN SP_MAP(prof_uimage, BPF_MAP_TYPE_LRU_HASH, 0, 1, struct sp_prof_ucache_key,
			struct prof_uimage_state);
SP_USTACK_EXTERN SP_MAP(prof_xcache, BPF_MAP_TYPE_LRU_HASH, 0, 1, struct sp_prof_xcache_key,
			struct sp_prof_ucache_val);
/* The schedules and locks views' raw user stacks, by hash, -> their named one (sp_user_stack_own) */
struct sp_uraw_val {
	__u64 ustack; /* the key in prof_ustacks */
	__u32 raw;    /* some frame is a raw IP */
	__u32 pad;
};
SP_USTACK_EXTERN SP_MAP(ustack_raw, BPF_MAP_TYPE_LRU_HASH, 0, 1, __u64, struct sp_uraw_val);
SP_USTACK_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* libbpf rounds it up to the page size */
} prof_events SEC(".maps");
/* --stacks by learned rules (struct sp_urule): the rules, the copies of misses, their slots */
SP_USTACK_EXTERN SP_MAP(ustack_rules, BPF_MAP_TYPE_LRU_HASH, 0, 1, struct sp_urule_key,
			struct sp_urule);
/* A process forked without exec -> whose rules it walks by (struct sp_urule_img) */
SP_USTACK_EXTERN SP_MAP(urule_forks, BPF_MAP_TYPE_LRU_HASH, 0, 1, struct sp_urule_img,
			struct sp_urule_img);
SP_USTACK_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} ustk_copies SEC(".maps");
#define SP_USTK_PAGE 4096ULL
/* A copy, taken in its CPU's slot (per view that can nest: sp_stack_pair()'s nest) */
struct sp_ustk_slot {
	__u8 b[sizeof(struct sp_ustk_copy) + SP_USTK_COPY_MAX + SP_USTK_PAGE];
};
SP_USTACK_EXTERN SP_MAP(ustk_copy_slots, BPF_MAP_TYPE_ARRAY, 0, 1, __u32, struct sp_ustk_slot);
/* --stacks' user stacks walked by ustack_rules (user space sets it when it feeds them) */
extern const volatile __u32 ustack_rules_on;

/* SCHEDPROF_USTACK_TIMING (bench/callers.sh): each user stack of the schedules/locks views timed */
extern const volatile __u32 ustack_timed;
/* SCHEDPROF_USTACK_OFF (bench/callers.sh): --stacks without the user stacks, to compare */
extern const volatile __u32 ustack_off;
/*
 * --verify-callers (fastcaller.bpf.h's, set by the views that walk stacks): every walk the
 * memo answers (struct sp_rmemo) is checked by a walk too
 */
extern const volatile __u32 verify_callers;

/* How the stacks' user frames were named, every view together (not part of the saved run). */
extern struct sp_prof_ucache_stats prof_ucache_stats;

/* An ELF64 program header, as the process maps it. */
struct phdr64 {
	__u32 type;
	__u32 flags;
	__u64 offset, vaddr, paddr, filesz, memsz, align;
};

#define PROF_MAX_PHDRS 32
#define PF_KTHREAD 0x00200000
#define PF_USER_WORKER 0x00004000

#define SP_USCAN_WORDS 64 /* 512 bytes of the user stack scanned for the executable's frames */
#define SP_UWIN_WORDS 128 /* the user stack's words read at once at a switch (sp_user_walk) */

/*
 * A CPU's memo of its last user stacks (sp_user_stack_own(), by the ustack_raw key's low
 * bits): the named stack, the last pair kept with it, and when its image was last announced.
 */
#define SP_UMEMO 16
struct sp_umemo {
	__u64 key;    /* the ustack_raw key */
	__u64 ustack; /* its value (0: the slot is empty) */
	__u64 pair;   /* the key of a pair with it that stack_pairs holds */
	__u64 seen;   /* the image's last announcement (prof_seen) */
	__u32 raw;
	__u32 pad;
};

/*
 * What the user-stack code needs of the current task's process, read once per stack by
 * sp_utask_get() (see there): the loads through the task behind it cost the verifier a search
 * of the kernel's BTF each time it walks them.
 */
struct sp_utask {
	__u64 leader_start;	       /* the process's start: task->group_leader->start_time */
	__u64 code_start, code_end;    /* mm->start_code, mm->end_code (0 without an mm) */
	struct sp_prof_xcache_key exe; /* the executable's file; exe.ino 0: unknown or not read */
	__u32 tgid, exec_id;	       /* task->tgid, task->self_exec_id */
	__u32 has_mm;		       /* task->mm is set */
	__u32 pad;
	__u64 exec_vm;		       /* mm->exec_vm: its executable mappings' pages */
};

/*
 * A CPU's memo of its last walks by the rules (sp_user_rwalk()), by stack pointer and process.
 * A walk is a function of the registers it starts from, the rules of the addresses it passes
 * (which never change for their key, see struct sp_rcache_ent) and the stack words it reads.
 * So where the registers, the process image and every word the memo's walk read are the same,
 * the walk would give the same frames: the memo gives their raw key, and the frames are not
 * walked nor hashed again. The common case it serves: a task that blocks again and again at
 * the same place. A check reads the stack from SP up to the last word the walk read, at once
 * (a user read costs ~90 ns on this VM whatever its size up to a few KiB, a fault ~1 us; the
 * walk read those words, so they are readable), and compares those words. Walks that read a
 * word further than SP_RMEMO_SPAN words, or ended at a missing rule (it may be learned since),
 * are not kept. Every SP_RMEMO_CHECK-th answer of a CPU (every one with --verify-callers) is
 * checked by a walk.
 */
#define SP_RMEMO 8
#define SP_RMEMO_WORDS 64  /* the words a walk read, at most (two a frame) */
#define SP_RMEMO_SPAN 512  /* ... all within 4 KiB above SP */
#define SP_RMEMO_CHECK 64
struct sp_rmemo {
	__u64 ip, sp, bp; /* the registers the walk started from (0: empty) */
	__u64 image;	  /* (tgid << 32) | exec_id */
	__u64 leader_start;
	__u64 exec_vm;	  /* the image's code size then (struct sp_urule_img) */
	__u64 key;	  /* the raw key of its frames (sp_user_raw_key()) */
	__u32 n, kind;	  /* the walk's frames and end (s->nw, s->kind) */
	__u32 nused;	  /* the words it read: their index from SP, their value */
	__u32 span;	  /* the words it needs: 1 + the highest index */
	__u16 idx[SP_RMEMO_WORDS];
	__u64 val[SP_RMEMO_WORDS];
};

/*
 * A CPU's cache of the rules its walks followed (rwalk_step()), direct-mapped by address:
 * a rule never changes for its key (the image's code at that address), so an entry stays
 * right for as long as it is there; a hit saves the hash map's lookup.
 */
#define SP_RCACHE 128
struct sp_rcache_ent {
	struct sp_urule_key key; /* key.pc 0: empty */
	struct sp_urule rule;
};

/* sp_user_rwalk()'s state (rwalk_step()) */
struct sp_rwalk_state {
	__u64 ip, sp, bp;
	__u32 nr, exact;
	__u32 end; /* enum sp_rwalk_end */
	__u32 pad;
};

/* Room for one stack's user frames: per CPU, and one per program that can nest. */
struct sp_uscratch {
	struct sp_utask ut; /* sp_utask_get(), before sp_user_frames() and sp_user_plan() */
	struct sp_prof_ustack u;
	__u64 uip[SP_PROF_UDEPTH]; /* the raw user IPs of u.frames */
	__u64 auxv[56];		    /* mm->saved_auxv (single_text_segment) */
	struct phdr64 phdrs[PROF_MAX_PHDRS];
	__u64 scan[SP_UWIN_WORDS];  /* the user stack's words above its pointer (sp_user_recover) */
	__u32 tick;		    /* stacks with user frames on this CPU: re-validation */
	__u32 pad;
	__u64 fip[SP_PROF_UDEPTH];  /* the raw IPs sp_user_plan() found */
	__u32 kind, n;		    /* sp_user_plan()'s answer (in memory: one verifier state) */
	__u32 nw;		    /* sp_user_walk()'s frames; the profile: sp_user_frames()'s */
	__u32 win;		    /* sp_user_walk(): bytes of scan read at win_sp (0: none) */
	__u64 win_sp;
	struct sp_umemo memo[SP_UMEMO];
	/*
	 * sp_user_frames()'s flags for ucache_count_valid() and ucache_put(), in memory: the
	 * verifier walks each callback once, not once per combination of their values. put_valid:
	 * the kernel named some frame (it held the mm); put_text: a named text frame is to be
	 * cached; put_check: re-validating frames that were all cached; put_whole: the
	 * executable has one text segment (SP_PROF_XCACHE_WHOLE); put_stale: some frame differed.
	 */
	__u32 put_check, put_valid, put_whole, put_stale;
	__u32 put_text;
	__u32 get_xwhole; /* ucache_get: the executable's SP_PROF_XCACHE_WHOLE entry exists */
	__u32 get_miss, get_start; /* sp_ucache_lookup_g()'s answer: ucwalk's miss and start */
	__u32 first;		   /* sp_user_plan_in(): the scan's first word in the text */
	__u32 keep_raw;		   /* sp_user_stack_hash_in(): some frame is a raw IP */
	__u32 rcopied;		   /* sp_user_rwalk_g(): a copy was sent (a placeholder) */
	__u64 rseq;		   /* the copies this scratch sent (sp_user_rcopy()) */
	__u64 rseq_sent;	   /* sp_user_rwalk_g(): the seq of its copy */
	struct sp_rwalk_state rw;
	struct sp_rcache_ent rc[SP_RCACHE];
	struct sp_urule_img rimg; /* sp_user_rwalk(): whose rules it followed */
	/* the walk's memo (struct sp_rmemo): the words this walk read, for a new entry */
	__u16 rused[SP_RMEMO_WORDS];
	__u64 rval[SP_RMEMO_WORDS];
	__u32 nrused;
	__u32 rspan;	/* the words read: 1 + the highest index from SP */
	__u64 rbuf[SP_RMEMO_SPAN]; /* a check's words from SP */
	__u32 rbad;	/* this walk cannot be kept (a word read outside the window, RDI used) */
	__u32 rhit;	/* sp_user_rwalk(): the answer is the memo's, s->rkey (no frames) */
	__u32 rcheck;	/* ... the memo answered, and this walk checks it: s->rkey */
	__u32 rtick;	/* the memo's answers on this CPU (SP_RMEMO_CHECK) */
	__u32 rforce;	/* sp_user_rwalk(): walk, whatever the memo says */
	__u32 rforked;	/* sp_user_rwalk(): it walked by a parent's rules (s->rimg) */
	__u32 rpad;
	__u64 rkey;
	struct sp_rmemo rm[SP_RMEMO];
};

/*
 * Reads *ut from task (current); exe: with the executable's identity (exe.ino stays 0
 * without), which only naming frames needs (sp_user_frames()). The loads of the task's mm
 * and group_leader, struct pointers read through a trusted task pointer, make the verifier
 * search the kernel's BTF by name (btf_nested_type_is_trusted(): up to four linear searches
 * of it) at every walk of them; through an untrusted pointer they cost none,
 * and the loads are the same (faulting-safe, no helper calls).
 */
static __always_inline void sp_utask_fill(struct task_struct *task, struct sp_utask *ut,
					  bool exe)
{
	struct mm_struct *mm = task->mm;
	struct inode *ino;
	struct file *f;

	ut->leader_start = task->group_leader->start_time;
	ut->tgid = task->tgid;
	ut->exec_id = (__u32)task->self_exec_id;
	ut->has_mm = mm != NULL;
	ut->code_start = 0;
	ut->code_end = 0;
	ut->exec_vm = 0;
	ut->exe.ino = 0;
	if (!mm)
		return;
	ut->code_start = mm->start_code;
	ut->code_end = mm->end_code;
	ut->exec_vm = mm->exec_vm;
	if (!exe)
		return;
	f = mm->exe_file;
	if (!f || ut->code_end <= ut->code_start)
		return;
	ino = f->f_inode;
	if (!ino)
		return;
	sp_inode_ctime(ino, &ut->exe.ctime_sec, &ut->exe.ctime_nsec);
	ut->exe.generation = ino->i_generation;
	ut->exe.dev = ino->i_sb->s_dev;
	ut->exe.ino = ino->i_ino;
}

/*
 * Set by user space when the kernel takes __arg_untrusted (Linux 6.17): sp_utask_read()
 * (ustack.bpf.c), a global function, then reads *ut through an untrusted task pointer. On an
 * older kernel the call is dead code and sp_utask_fill() reads through the trusted one.
 */
extern const volatile __u32 ustack_untrusted;
int sp_utask_read(struct task_struct *task, struct sp_utask *ut, __u32 exe);

/*
 * *ut for task (current), read once for a stack (the verifier walks the read once too); exe:
 * with the executable's identity, before sp_user_frames().
 */
static __always_inline void sp_utask_get(struct task_struct *task, struct sp_utask *ut, bool exe)
{
	if (ustack_untrusted)
		sp_utask_read(task, ut, exe);
	else
		sp_utask_fill(task, ut, exe);
}

/* raw IPs, code mapped or unmapped since the last look: again after 100 ms */
#define PROF_REFRESH_RAW_NS (100 * 1000 * 1000ULL)
#define PROF_REFRESH_NS (1000 * 1000 * 1000ULL) /* anything: look again after 1 s */

/*
 * Asks user space to look at a process image; from: the image whose code it has (struct
 * sp_prof_event), or NULL; *lost counts the announcements lost.
 */
static __always_inline void sp_user_announce(__u32 tgid, __u32 exec_id, __u32 reason,
					     const struct sp_urule_img *from, __u64 *lost)
{
	struct sp_prof_event ev = { .tgid = tgid, .exec_id = exec_id, .reason = reason };

	if (from) {
		ev.from_tgid = from->tgid;
		ev.from_exec_id = from->exec_id;
		ev.from_exec_vm = from->exec_vm;
	}

	if (bpf_ringbuf_output(&prof_events, &ev, sizeof(ev), 0))
		__sync_fetch_and_add(lost, 1);
}

/*
 * Tells user space about a process image the first time it has user frames, then now and then:
 * after a second, or, for raw IPs (named through its snapshot), after 100 ms once the size of
 * its code (exec_vm, pages) has changed: code mapped or unmapped. from (sp_user_announce())
 * goes with the first only: a look again is at the image itself, whose code may have changed
 * since. Returns when the image was last announced (now: just now).
 */
static __always_inline __u64 sp_user_maybe_announce(struct task_struct *task, __u32 raw,
						    __u64 now, __u64 exec_vm,
						    const struct sp_urule_img *from, __u64 *lost)
{
	__u32 tgid = task->tgid, exec_id = (__u32)task->self_exec_id;
	__u64 img = ((__u64)tgid << 32) | exec_id;
	struct sp_prof_seen *last, first = { .ts = now, .exec_vm = exec_vm };

	last = bpf_map_lookup_elem(&prof_seen, &img);
	if (!last) {
		bpf_map_update_elem(&prof_seen, &img, &first, BPF_ANY);
		sp_user_announce(tgid, exec_id, SP_PROF_EV_FIRST, from, lost);
		return now;
	}
	if (now - last->ts > PROF_REFRESH_NS ||
	    (raw && last->exec_vm != exec_vm && now - last->ts > PROF_REFRESH_RAW_NS)) {
		last->ts = now;
		last->exec_vm = exec_vm;
		sp_user_announce(tgid, exec_id, SP_PROF_EV_REFRESH, NULL, lost);
		return now;
	}
	return last->ts;
}

/* The size of task's code (mm->exec_vm, pages), 0 without an mm. */
static __always_inline __u64 sp_task_exec_vm(struct task_struct *task)
{
	struct mm_struct *mm = task->mm;

	return mm ? mm->exec_vm : 0;
}

struct uwalk {
	struct sp_prof_ustack *u;
	__u64 hash;
	__u32 nr;
	__u32 raw;
};

/* Hashes a user frame (32 bytes as four words) and notes raw-IP frames. */
static long sp_uframe_step(__u64 i, struct uwalk *w)
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
	struct sp_uscratch *s;
	struct sp_prof_ucache_key key;
	struct sp_prof_xcache_key xkey; /* xkey.ino == 0: no executable known */
	__u64 text_start, text_len;	/* the executable's text: mm->start_code, its length */
	__u32 nr;
	__u32 miss;  /* ucache_get: a page is not cached */
	__u32 check; /* re-validating frames that were all cached */
	__u32 whole; /* the executable has one text segment (SP_PROF_XCACHE_WHOLE) */
	__u32 start; /* ucache_get: the first frame not cached (ucache_put starts there) */
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
			w->s->get_xwhole = 1;
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
		w->s->put_valid = 1;
		if (i >= w->start && i < w->known && in_text(w, w->s->uip[j]))
			w->s->put_text = 1;
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
	} else if (f->status == SP_UFRAME_IP && w->s->put_valid) {
		val.status = SP_UFRAME_IP;
	} else {
		return 0;
	}
	/* only named text pages go to the shared cache: a raw IP there is the kernel's problem now */
	text = in_text(w, ip) && val.status == SP_UFRAME_VALID;
	if (text) {
		w->xkey.page = w->s->put_whole ? SP_PROF_XCACHE_WHOLE : (ip - w->text_start) >> 12;
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
	if (w->s->put_check) {
		old = bpf_map_lookup_elem(map, key);
		if (old) {
			a = (__u64 *)old;
			b = (__u64 *)&val;
			if (a[0] != b[0] || a[1] != b[1] || a[2] != b[2] || a[3] != b[3])
				w->s->put_stale = 1; /* some differed */
		}
	}
	bpf_map_update_elem(map, key, &val, BPF_ANY);
	return 0;
}

/*
 * A walk over s's frames: the process image's key (its page set per frame) and the executable's
 * file identity and text range (w->xkey.ino stays 0 when unknown), from s->ut.
 */
static __always_inline void ucwalk_init(struct sp_uscratch *s, struct ucwalk *w)
{
	struct sp_utask *ut = &s->ut;

	w->s = s;
	w->key.start_time = ut->leader_start;
	w->key.tgid = ut->tgid;
	w->key.exec_id = ut->exec_id;
	if (!ut->exe.ino)
		return;
	w->text_start = ut->code_start;
	w->text_len = ut->code_end - ut->code_start;
	w->xkey.ctime_sec = ut->exe.ctime_sec;
	w->xkey.ctime_nsec = ut->exe.ctime_nsec;
	w->xkey.generation = ut->exe.generation;
	w->xkey.dev = ut->exe.dev;
	w->xkey.ino = ut->exe.ino;
}

/*
 * Whether the executable has exactly one executable PT_LOAD: its program headers, found through
 * AT_PHDR / AT_PHNUM of the saved auxiliary vector, are read from the process's memory.
 */
struct phscan {
	struct sp_uscratch *s;
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
	/*
	 * PT_LOAD, PF_X. Counted up to 2 only (the question is "exactly one"): the verifier walks
	 * the callback once per value the count can hold, and 0..32 made 132 walks of it.
	 */
	if (h->type == 1 && (h->flags & 1) && p->nx < 2)
		p->nx++;
	return 0;
}

static __always_inline bool single_text_segment(struct task_struct *task, struct sp_uscratch *s)
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
 * single_text_segment() of the current task: a global function (ustack.bpf.c), walked once by
 * the verifier (inline, each path to it walked its two loops again). 0 when s is NULL.
 */
int sp_user_single_text(struct sp_uscratch *s);

/*
 * The user frame-pointer walk, as the kernel's (x86 perf_callchain_user(): the PC, then the
 * return address of each frame record from the frame pointer on) but stopping where the
 * frame pointer leaves the stack above the stack pointer, instead of at the first read that
 * faults (a fault costs far more than a read, and the C library leaves garbage in the
 * register).
 * Its frames are the kernel's first ones, so that the kernel's build-id answer for the same
 * stack, cut to them, matches frame by frame.
 */
struct ufpwalk {
	struct sp_uscratch *s;
	__u64 fp;
	__u64 lo; /* the stack pointer, then the last frame record read */
	__u32 nr;
	__u32 pad;
};

#define SP_USTACK_UCACHE_CHECK 256 /* sp_user_frames(own): every Nth stack re-validated */
#define SP_USTACK_SPAN (8 << 20) /* a frame record is at most 8 MiB above the stack pointer */

/* The frame record at fp: from the window sp_user_walk() read, or from the stack. */
static __always_inline long sp_user_record(struct sp_uscratch *s, __u64 fp, __u64 *rec)
{
	__u64 off = fp - s->win_sp, k;

	if (off < s->win && off + 16 <= s->win && !(off & 7)) {
		k = off / 8;
		rec[0] = s->scan[k & (SP_UWIN_WORDS - 1)];
		rec[1] = s->scan[(k + 1) & (SP_UWIN_WORDS - 1)];
		return 0;
	}
	return bpf_probe_read_user(rec, 16, (void *)fp);
}

static long ufp_step(__u64 i, struct ufpwalk *w)
{
	__u64 rec[2];

	/*
	 * Frame records sit above the stack pointer, each above the previous one: anything
	 * else is a library's use of the register (no frame pointers), whose read may fault,
	 * and a fault costs about a microsecond.
	 */
	if (w->nr >= SP_PROF_UDEPTH || w->fp <= w->lo || (w->fp & 7) ||
	    w->fp - w->lo > SP_USTACK_SPAN)
		return 1;
	if (sp_user_record(w->s, w->fp, rec) || !rec[1])
		return 1;
	w->s->uip[w->nr & (SP_PROF_UDEPTH - 1)] = rec[1];
	w->nr++;
	w->lo = w->fp;
	w->fp = rec[0];
	return 0;
}

/*
 * Fills s->uip with the user stack of task (current); returns the number of frames. The
 * stack's first words are read at once into s->scan (the frame records there need no read of
 * their own, and sp_user_plan() scans them): up to SP_UWIN_WORDS, never past the page that
 * holds the last of the SP_USCAN_WORDS words the scan needs (no read of a page the scan
 * would not touch: the stack may end there).
 */
static __always_inline __u32 sp_user_walk(struct task_struct *task, struct sp_uscratch *s)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct ufpwalk w = { .s = s };
	__u64 sp, len;

	s->win = 0;
	if (!regs)
		return 0;
	s->uip[0] = regs->ip;
	sp = regs->sp;
	if (sp && !(sp & 7)) {
		len = (((sp + SP_USCAN_WORDS * 8 - 1) | 4095) + 1) - sp;
		if (len > SP_UWIN_WORDS * 8)
			len = SP_UWIN_WORDS * 8;
		if (len >= SP_USCAN_WORDS * 8 && !bpf_probe_read_user(s->scan, len, (void *)sp)) {
			s->win_sp = sp;
			s->win = len;
		}
	}
	w.fp = regs->bp;
	w.lo = sp - 1;
	/* the count from memory: the verifier sees a bounded number, not 1, 2, 3... */
	s->nw = 1;
	/* verifier: the count from memory, a bounded number, not 1, 2, 3... */
	asm volatile("" ::: "memory");
	w.nr = s->nw;
	bpf_loop(SP_PROF_UDEPTH, ufp_step, &w, 0);
	return w.nr;
}

/*
 * The caches' answer for frames [0, w->nr) of s->uip: w->miss and w->start, as ucache_get()
 * leaves them. sp_ucache_lookup_g() is the same for the whole stack as a global function
 * (ustack.bpf.c): the verifier walks its loop once, not once per path that reaches it. Its
 * answer is in s->get_miss and s->get_start.
 */
int sp_ucache_lookup_g(struct sp_uscratch *s, __u32 nr);

/*
 * Caches the kernel's answer in s->u.frames (w->nr frames, the first w->known of them with
 * their IP in s->uip; w->start, w->check as set by the lookup). one: the leaf only, called
 * directly (no loop for the verifier to walk). sp_ucache_learn_g() (ustack.bpf.c) is the
 * same for the whole stack, as a global function.
 */
int sp_ucache_learn_g(struct sp_uscratch *s, __u32 nr, __u32 known, __u32 start, __u32 check);

static __always_inline void ucache_learn(struct sp_uscratch *s, struct ucwalk *w, bool one)
{
	s->put_valid = 0;
	s->put_text = 0;
	if (one)
		ucache_count_valid(0, w);
	else
		bpf_loop(SP_PROF_UDEPTH, ucache_count_valid, w, 0);
	/* the program headers are read once per executable, not per sample */
	w->whole = s->get_xwhole || (s->put_text && sp_user_single_text(s));
	w->nr = w->known;
	s->put_check = w->check;
	s->put_whole = w->whole;
	s->put_stale = 0;
	if (one)
		ucache_put(0, w);
	else
		bpf_loop(SP_PROF_UDEPTH, ucache_put, w, 0);
	if (s->put_stale)
		__sync_fetch_and_add(&prof_ucache_stats.stale, 1);
}

/*
 * The user frames of task (current) into s->u.frames, as build-id + file offset where the
 * kernel can name them: from prof_ucache when every page is cached, else (and every
 * SP_PROF_UCACHE_CHECK-th time) from the kernel, whose answer is cached. full: the whole
 * stack, else the leaf only. own (with full): s->uip holds the first nw frames of
 * sp_user_walk() (the schedules and locks views: cheaper than the kernel's walk, which stops
 * only at a faulting read), and the kernel's answer is cut to them; check: re-validate
 * (their callers count). *fail counts the stacks that could not be read. Returns the number
 * of frames.
 */
static __always_inline __u32 sp_user_frames(void *ctx, struct task_struct *task,
					    struct sp_uscratch *s, bool full, bool own, __u32 nw,
					    bool check, __u64 *fail)
{
	__u32 depth = full ? SP_PROF_UDEPTH : 1, nr, walked = 0;
	struct prof_uimage_state *img = NULL, first_miss = { .misses = 1 };
	struct ucwalk w = {};
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
	ucwalk_init(s, &w);
	if (full && !own) {
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
				__sync_fetch_and_add(fail, 1);
				return 0;
			}
			__sync_fetch_and_add(&prof_ucache_stats.miss, 1);
			return n / sizeof(struct sp_uframe);
		}
	}
	s->get_xwhole = 0;
	if (full && own) {
		w.nr = nw;
		walked = 1;
		sp_ucache_lookup_g(s, nw);
		w.miss = s->get_miss;
		w.start = s->get_start;
	} else {
		w.nr = 1;
		ucache_get(0, &w);
	}
	if (!w.miss && full && !own) {
		n = bpf_get_stack(ctx, s->uip, sizeof(s->uip), BPF_F_USER_STACK);
		if (n < 0) {
			__sync_fetch_and_add(fail, 1);
			return 0;
		}
		walked = 1;
		w.nr = n / sizeof(__u64);
		if (!w.nr)
			return 0;
		sp_ucache_lookup_g(s, w.nr);
		w.miss = s->get_miss;
		w.start = s->get_start;
		if (img) {
			img->misses = w.miss ? img->misses + 1 : 0;
		} else if (w.miss) {
			w.key.page = 0; /* the image's key (ucache_get moved it) */
			bpf_map_update_elem(&prof_uimage, &w.key, &first_miss, BPF_ANY);
		}
	}
	/* a switch is far more frequent than a sample: re-validated less often */
	if (!w.miss && (own ? !check : ++s->tick % SP_PROF_UCACHE_CHECK)) {
		__sync_fetch_and_add(&prof_ucache_stats.hit, 1);
		return w.nr;
	}

	/* The kernel's build-id lookup; the same stack, so frame i is uip[i]. */
	n = bpf_get_stack(ctx, s->u.frames, depth * sizeof(struct sp_uframe),
			  BPF_F_USER_STACK | BPF_F_USER_BUILD_ID);
	if (n < 0) {
		__sync_fetch_and_add(fail, 1);
		return 0;
	}
	nr = n / sizeof(struct sp_uframe);
	if (own && nr > w.nr) /* the kernel's walk went on where ours stopped: garbage */
		nr = w.nr;
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
	/* the leaf only (the profile without -g): its one frame, without a loop to verify */
	if (full)
		sp_ucache_learn_g(s, nr, w.known, w.start, w.check);
	else
		ucache_learn(s, &w, true);
	return nr;
}

/*
 * Sets s->u.nr to nr and returns the hash s->u is kept under; sets s->keep_raw when some
 * frame is a raw IP. sp_user_stack_hash_g() (ustack.bpf.c) is the same as a global function,
 * walked once by the verifier.
 */
static __always_inline __u64 sp_user_stack_hash_in(struct sp_uscratch *s, __u32 nr)
{
	struct uwalk uw = { .u = &s->u, .hash = 0x84222325cbf29ce4ULL, .nr = nr };

	s->u.nr = nr;
	bpf_loop(SP_PROF_UDEPTH, sp_uframe_step, &uw, 0);
	s->keep_raw = uw.raw;
	return uw.hash;
}

__u64 sp_user_stack_hash_g(struct sp_uscratch *s, __u32 nr);

/*
 * Keeps s->u (nr frames) in prof_ustacks: returns its key (0 when the map is full, counted in
 * *map_full) and sets *raw when some frame is a raw IP. The keeping is here, not in the
 * global function: s must be a map value for the update (before Linux 6.2 a helper takes no
 * value from a global function's argument, which the verifier types as plain memory).
 */
static __always_inline __u64 sp_user_stack_keep(struct sp_uscratch *s, __u32 nr, __u32 *raw,
						 __u64 *map_full)
{
	__u64 id = sp_user_stack_hash_g(s, nr);

	/* verifier: the id and s->u read back after the global function, one state */
	asm volatile("" ::: "memory");
	id = sp_stack_keep(&prof_ustacks, id, &s->u);
	*raw |= s->keep_raw;
	if (!id)
		__sync_fetch_and_add(map_full, 1);
	return id;
}

/*
 * The callers that a library without frame pointers hides. A task blocks in the
 * C library (pthread_cond_wait, read), which Debian builds without frame pointers: the
 * frame-pointer walk stops at the library's leaf, or skips the caller (the library left the
 * frame pointer of the caller's frame in place, so the walk finds the caller's caller), and
 * the application code that blocked is not on the stack. When the leaf is not in the
 * executable's text (which is built with frame pointers, or this cannot help), the words
 * above the user stack pointer are read, and:
 *  - the first one in the executable's text is the return address of the last call from the
 *    executable into the library: the frame after the leaf;
 *  - above it, the first (saved frame pointer, return address into the executable's text)
 *    pair where the pointer points further up the stack is that function's frame record:
 *    the frame-pointer walk goes on from there.
 * Without such a record the walk's own frames follow. The frames found this way are raw IPs
 * (the process image names them; the caches are the kernel walk's). A heuristic: a stale
 * return address left in the library's frames would be taken for a caller.
 */
struct uscan {
	struct sp_uscratch *s;
	__u64 sp, lo, len; /* the words' address; the executable's text [lo, lo + len) */
	__u32 first;	   /* the first word in the text (SP_USCAN_WORDS: none) */
	__u32 rec;	   /* the frame record's word (0: none) */
	__u32 n;	   /* frames in s->fip */
	__u32 nw;	   /* the walk's frames (s->uip) */
	__u64 fp;	   /* the walk from the record: the next frame pointer */
};

static __always_inline bool uscan_text(struct uscan *c, __u64 v)
{
	return v - c->lo < c->len;
}

/*
 * The scans below take SP_USCAN_STEP words per bpf_loop() iteration: the words are in the
 * scratch already, and an iteration's call costs more than checking a word.
 */
#define SP_USCAN_STEP 4

/* The first word in the executable's text (c->first stays SP_USCAN_WORDS: none). */
static long uscan_first(__u64 i, struct uscan *c)
{
	for (__u32 k = 0; k < SP_USCAN_STEP; k++) {
		__u64 j = i * SP_USCAN_STEP + k;

		if (j >= SP_USCAN_WORDS)
			return 1;
		if (uscan_text(c, c->s->scan[j & (SP_USCAN_WORDS - 1)])) {
			c->first = j;
			return 1;
		}
	}
	return 0;
}

/* Above it, the first frame record (saved frame pointer, return address into the text). */
static long uscan_record(__u64 i, struct uscan *c)
{
	for (__u32 k = 0; k < SP_USCAN_STEP; k++) {
		__u64 j = c->first + 1 + i * SP_USCAN_STEP + k, fp, at = c->sp + j * 8;

		if (j + 1 >= SP_USCAN_WORDS)
			return 1;
		fp = c->s->scan[j & (SP_USCAN_WORDS - 1)];
		if (fp <= at || (fp & 7) || fp - at > SP_USTACK_SPAN ||
		    !uscan_text(c, c->s->scan[(j + 1) & (SP_USCAN_WORDS - 1)]))
			continue;
		c->rec = j;
		return 1;
	}
	return 0;
}

static __always_inline void uscan_push(struct uscan *c, __u64 ip)
{
	if (c->n >= SP_PROF_UDEPTH)
		return;
	c->s->fip[c->n & (SP_PROF_UDEPTH - 1)] = ip;
	c->n++;
}

/* One frame record up the chain: its return address, then on to the next (as ufp_step). */
static long uscan_walk(__u64 i, struct uscan *c)
{
	__u64 rec[2];

	if (c->n >= SP_PROF_UDEPTH || !c->fp)
		return 1;
	if (sp_user_record(c->s, c->fp, rec) || !rec[1])
		return 1;
	uscan_push(c, rec[1]);
	if (rec[0] <= c->fp || (rec[0] & 7) || rec[0] - c->fp > SP_USTACK_SPAN)
		return 1;
	c->fp = rec[0];
	return 0;
}

/* The walk's frames from 2 on: the chain from the record the walk read first. */
static long uscan_walked(__u64 i, struct uscan *c)
{
	if (i + 2 >= c->nw || c->n >= SP_PROF_UDEPTH)
		return 1;
	uscan_push(c, c->s->uip[(i + 2) & (SP_PROF_UDEPTH - 1)]);
	return 0;
}

#define SP_UREC_NONE 0	 /* the frames as found */
#define SP_UREC_CALLER 1 /* the caller (fip[1], a raw IP) after the leaf, then frames 1.. */
#define SP_UREC_RECORD 2 /* the leaf, then the raw IPs fip[1..n) from a frame record */

/*
 * How the frames the frame-pointer walk missed join a stack of nr frames (see above): returns
 * SP_UREC_* and sets *n to the frames the stack will have. f1: frame 1's raw IP when known,
 * else 0. walked: s->uip holds the walk of sp_user_walk(), whose first frame record was read
 * at the frame pointer: a record found there needs no second walk (its chain is the walk's).
 */
static __always_inline __u32 sp_user_plan_in(struct task_struct *task, struct sp_uscratch *s,
					     __u32 nr, __u64 f1, bool walked, __u32 *n)
{
	struct uscan c = { .s = s, .nw = nr };
	struct pt_regs *regs;
	__u64 sp, ret;

	*n = nr;
	if (!s->ut.has_mm || !nr)
		return SP_UREC_NONE;
	c.lo = s->ut.code_start;
	c.len = s->ut.code_end > c.lo ? s->ut.code_end - c.lo : 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!c.len || !regs || uscan_text(&c, regs->ip))
		return SP_UREC_NONE;
	sp = regs->sp;
	if (!sp || (sp & 7))
		return SP_UREC_NONE;
	/* the walk's window holds the words; else (the profile) they are read */
	if (!walked || s->win_sp != sp || s->win < SP_USCAN_WORDS * 8) {
		s->win = 0;
		if (bpf_probe_read_user(s->scan, SP_USCAN_WORDS * 8, (void *)sp))
			return SP_UREC_NONE;
	}
	c.sp = sp;
	c.first = SP_USCAN_WORDS;
	bpf_loop(SP_USCAN_WORDS / SP_USCAN_STEP, uscan_first, &c, 0);
	/* through memory: one verifier state for the word found, not one per way to find it */
	s->first = c.first;
	/* verifier: the word found through memory, one state, not one per way */
	asm volatile("" ::: "memory");
	c.first = s->first;
	if (c.first >= SP_USCAN_WORDS)
		return SP_UREC_NONE;
	ret = s->scan[c.first & (SP_USCAN_WORDS - 1)];
	/* the walk found it already (the library kept the frame pointer): nothing missed */
	if (nr > 1 && f1 == ret)
		return SP_UREC_NONE;
	s->fip[1] = ret;
	bpf_loop(SP_USCAN_WORDS / SP_USCAN_STEP, uscan_record, &c, 0);
	if (!c.rec) { /* the caller only */
		*n = nr >= SP_PROF_UDEPTH ? SP_PROF_UDEPTH : nr + 1;
		return SP_UREC_CALLER;
	}
	s->n = 2; /* from memory, as in sp_user_walk() */
	/* verifier: the count from memory, as in sp_user_walk() */
	asm volatile("" ::: "memory");
	c.n = s->n;
	uscan_push(&c, s->scan[(c.rec + 1) & (SP_USCAN_WORDS - 1)]);
	if (walked && nr > 1 && sp + c.rec * 8 == regs->bp) {
		bpf_loop(SP_PROF_UDEPTH, uscan_walked, &c, 0);
	} else {
		c.fp = s->scan[c.rec & (SP_USCAN_WORDS - 1)];
		bpf_loop(SP_PROF_UDEPTH, uscan_walk, &c, 0);
	}
	*n = c.n;
	return SP_UREC_RECORD;
}

/*
 * sp_user_plan_in() for the current task, its answer into s->kind and s->n: a global function
 * (ustack.bpf.c), which the verifier walks once, whatever paths reach its calls (inline, it was
 * walked again for each; 0 when s is NULL, which it is not).
 */
int sp_user_plan_g(struct sp_uscratch *s, __u32 nr, __u64 f1, __u32 walked);

/* sp_user_plan_g(), its answer read back from memory by the caller: one path from there. */
static __always_inline void sp_user_plan(struct sp_uscratch *s, __u32 nr, __u64 f1, bool walked)
{
	sp_user_plan_g(s, nr, f1, walked);
	/* verifier: the plan's answer read back from memory, one path from here */
	asm volatile("" ::: "memory");
}

struct uapply {
	struct sp_uscratch *s;
	__u32 n;
	__u32 pad;
};

static __always_inline void uframe_raw(struct sp_uframe *f, __u64 ip)
{
	__builtin_memset(f, 0, sizeof(*f));
	f->status = SP_UFRAME_IP;
	f->offset = ip;
}

/* SP_UREC_CALLER: frames 1.. one up (the last one kept falls off at SP_PROF_UDEPTH). */
static long uapply_shift(__u64 i, struct uapply *a)
{
	__u32 k = a->n - 1 - (__u32)i;

	if (i >= SP_PROF_UDEPTH || k < 2 || k >= SP_PROF_UDEPTH)
		return 1;
	a->s->u.frames[k & (SP_PROF_UDEPTH - 1)] = a->s->u.frames[(k - 1) & (SP_PROF_UDEPTH - 1)];
	return 0;
}

/* SP_UREC_RECORD: frames 1.. are fip's raw IPs. */
static long uapply_raw(__u64 i, struct uapply *a)
{
	__u32 j = i & (SP_PROF_UDEPTH - 1);

	if (i >= a->n || i >= SP_PROF_UDEPTH)
		return 1;
	if (j)
		uframe_raw(&a->s->u.frames[j], a->s->fip[j]);
	return 0;
}

/* Applies sp_user_plan()'s kind to the named frames in s->u.frames; returns the frames. */
static __always_inline __u32 sp_user_apply(struct sp_uscratch *s, __u32 kind, __u32 n)
{
	struct uapply a = { .s = s, .n = n };

	if (kind == SP_UREC_CALLER) {
		bpf_loop(SP_PROF_UDEPTH, uapply_shift, &a, 0);
		uframe_raw(&s->u.frames[1], s->fip[1]);
	} else if (kind == SP_UREC_RECORD) {
		bpf_loop(SP_PROF_UDEPTH, uapply_raw, &a, 0);
	}
	return n;
}

/* The frames the walk missed, into s->u.frames (nr named) after the leaf. Returns nr. */
static __always_inline __u32 sp_user_recover(struct task_struct *task, struct sp_uscratch *s,
					     __u32 nr)
{
	__u64 f1 = nr > 1 && s->u.frames[1].status == SP_UFRAME_IP ? s->u.frames[1].offset : 0;
	sp_user_plan(s, nr, f1, false);
	return sp_user_apply(s, s->kind, s->n);
}

/*
 * The schedules and locks views name a user stack once per distinct raw stack: the raw IPs
 * of the walk and of the plan, with the process image, hash to a key of ustack_raw, whose
 * value is the named stack's key in prof_ustacks (what naming, applying and keeping it gave
 * the first time). Every SP_USTACK_UCACHE_CHECK-th stack of a CPU takes the whole path again
 * (the kernel's build-id lookup re-validates the caches, and the answer replaces the entry).
 */
struct uraw_hash {
	struct sp_uscratch *s;
	__u64 h;
	__u32 kind, n;
};

static long uraw_step(__u64 i, struct uraw_hash *r)
{
	__u32 j = i & (SP_PROF_UDEPTH - 1);
	__u64 ip;

	if (i >= r->n || i >= SP_PROF_UDEPTH)
		return 1;
	if (!j || r->kind == SP_UREC_NONE)
		ip = r->s->uip[j];
	else if (r->kind == SP_UREC_RECORD || j == 1)
		ip = r->s->fip[j];
	else
		ip = r->s->uip[(j - 1) & (SP_PROF_UDEPTH - 1)];
	r->h = sp_mix(r->h, ip);
	return 0;
}

/*
 * The key of ustack_raw for the current task's stack in s (s->ut read). Inline: a global
 * function's call would cost every stack more than the hash saves (bench/callers.sh).
 */
static __always_inline __u64 sp_user_raw_key(struct sp_uscratch *s, __u32 kind, __u32 n)
{
	struct uraw_hash r = { .s = s, .kind = kind, .n = n };

	r.h = sp_mix(sp_mix(0x84222325cbf29ce4ULL, s->ut.leader_start),
		     ((__u64)s->ut.tgid << 32) | s->ut.exec_id);
	r.h = sp_mix(r.h, ((__u64)kind << 32) | n);
	bpf_loop(SP_PROF_UDEPTH, uraw_step, &r, 0);
	return r.h;
}

/*
 * sp_user_walk() of the current task as a global function (ustack.bpf.c), walked once by the
 * verifier whatever paths reach it (0 when s is NULL).
 */
int sp_user_walk_g(struct sp_uscratch *s);

/*
 * sp_utask_read() without the executable, then with an mm sp_user_walk(), in one global
 * function (ustack.bpf.c), so that a stack pays for one call. Its frame count is returned.
 */
int sp_user_begin_g(struct task_struct *task, struct sp_uscratch *s);

/*
 * The start of a switch's or contention's user stack: s->ut without the executable (it is
 * read when frames are named), and with an mm the frame-pointer walk's frames in s->nw.
 */
static __always_inline void sp_user_begin(struct task_struct *task, struct sp_uscratch *s)
{
	if (ustack_untrusted) {
		s->nw = sp_user_begin_g(task, s);
	} else {
		sp_utask_fill(task, &s->ut, false);
		s->nw = s->ut.has_mm ? sp_user_walk_g(s) : 0;
	}
}

/*
 * The user stack of task (current) for sp_stack_pair(), after sp_user_begin(): its key in
 * prof_ustacks, or 0.
 */
static __always_inline __u64 sp_user_stack_own(void *ctx, struct task_struct *task,
					       struct sp_uscratch *s, __u32 *nr, __u32 *raw,
					       __u64 *fail, struct sp_ustack_drops *d,
					       __u64 *t, struct sp_umemo **mp)
{
	struct sp_umemo *m;
	struct sp_uraw_val val = {}, *v;
	__u32 nw, kind, n, want;
	bool check, same;
	__u64 key;

	/* verifier: s->nw read from memory, one state for the callers' counts */
	asm volatile("" ::: "memory");
	nw = s->nw;
	if (t)
		t[SP_USTACK_T_WALK] = bpf_ktime_get_ns();
	sp_user_plan(s, nw, nw > 1 ? s->uip[1] : 0, true);
	if (t)
		t[SP_USTACK_T_RECOVER] = bpf_ktime_get_ns();
	kind = s->kind;
	n = s->n;
	*nr = 0;
	if (!n)
		return 0;
	key = sp_user_raw_key(s, kind, n);
	check = !(++s->tick % SP_USTACK_UCACHE_CHECK);
	m = &s->memo[key & (SP_UMEMO - 1)];
	*mp = m;
	if (!check && m->key == key && m->ustack) { /* this CPU's memo */
		__sync_fetch_and_add(&prof_ucache_stats.hit, 1);
		*nr = n;
		*raw |= m->raw;
		return m->ustack;
	}
	m->ustack = 0;
	v = check ? NULL : bpf_map_lookup_elem(&ustack_raw, &key);
	if (v) {
		__sync_fetch_and_add(&prof_ucache_stats.hit, 1);
		*nr = n;
		*raw |= v->raw;
		if (v->ustack)
			*m = (struct sp_umemo){ .key = key, .ustack = v->ustack, .raw = v->raw };
		return v->ustack;
	}
	/* a stack with a frame record found by the scan keeps only its leaf's name */
	want = kind == SP_UREC_RECORD ? 1 : nw;
	sp_utask_get(task, &s->ut, true); /* naming needs the executable: read again with it */
	*nr = sp_user_frames(ctx, task, s, true, true, want, check, fail);
	if (!*nr)
		return 0;
	same = *nr == want;
	if (!same) /* the kernel named fewer: cannot happen; kept, not remembered */
		n = kind == SP_UREC_RECORD ? n : kind == SP_UREC_CALLER ? *nr + 1 : *nr;
	if (n > SP_PROF_UDEPTH)
		n = SP_PROF_UDEPTH;
	*nr = sp_user_apply(s, kind, n);
	if (t)
		t[SP_USTACK_T_NAME] = bpf_ktime_get_ns();
	val.ustack = sp_user_stack_keep(s, *nr, &val.raw, &d->map_full);
	*raw |= val.raw;
	if (val.ustack && same && !*fail) {
		bpf_map_update_elem(&ustack_raw, &key, &val, BPF_ANY);
		*m = (struct sp_umemo){ .key = key, .ustack = val.ustack, .raw = val.raw };
	}
	return val.ustack;
}

/*
 * --stacks by learned rules (struct sp_urule, include/schedprof/profile.h): the walk from
 * the task's user registers, one rule lookup per frame, the words from the window
 * sp_user_walk() reads (s->scan) or one read each. It ends at the outermost frame, at a
 * rule that says stop, at an address without a rule (a miss: the caller sends a copy), at
 * a word not readable, or at SP_PROF_UDEPTH frames.
 */
enum sp_rwalk_end {
	SP_RW_MORE,
	SP_RW_END,
	SP_RW_STOP,
	SP_RW_MISS,
	SP_RW_MEMORY,
	SP_RW_DEPTH,
};

/* The kernel's rt_sigframe: the interrupted registers in the ucontext at SP (cfi_unwind.c) */
#define SP_UC_RBP (40 + 10 * 8)
#define SP_UC_RSP (40 + 15 * 8)
#define SP_UC_RIP (40 + 16 * 8)

/*
 * The walk's state is in the scratch (s->rw), not in this struct on the stack: a value in
 * memory the verifier does not track from one iteration to the next, so it walks the
 * callback a few times, not once per frame count and branch taken.
 */
struct rwalk {
	struct sp_uscratch *s;
	struct sp_urule_key key;
};

/* The user word at addr: from the window, or read. 0 or the read's error. */
static __always_inline long rword(struct sp_uscratch *s, __u64 addr, __u64 *v)
{
	__u64 off = addr - s->win_sp;

	if (off < s->win && off + 8 <= s->win && !(off & 7)) {
		*v = s->scan[(off / 8) & (SP_UWIN_WORDS - 1)];
	} else {
		long err = bpf_probe_read_user(v, 8, (void *)addr);

		if (err)
			return err;
	}
	/* for the memo: where from SP, and what */
	if (s->win && off < SP_RMEMO_SPAN * 8 && !(off & 7) && s->nrused < SP_RMEMO_WORDS) {
		s->rused[s->nrused & (SP_RMEMO_WORDS - 1)] = off / 8;
		s->rval[s->nrused & (SP_RMEMO_WORDS - 1)] = *v;
		s->nrused++;
		if (off / 8 + 1 > s->rspan)
			s->rspan = off / 8 + 1;
	} else {
		s->rbad = 1;
	}
	return 0;
}

static long rwalk_step(__u64 i, struct rwalk *w)
{
	struct sp_uscratch *s = w->s;
	struct sp_rwalk_state *st = &s->rw;
	struct sp_rcache_ent *e;
	struct sp_urule *r;
	__u64 cfa, ra, nbp, nr = st->nr;

	(void)i;
	if (nr >= SP_PROF_UDEPTH) {
		st->end = SP_RW_DEPTH;
		return 1;
	}
	w->key.pc = st->ip | (st->exact ? SP_URULE_EXACT : 0);
	e = &s->rc[(w->key.pc ^ (w->key.pc >> 7) ^ (w->key.pc >> 16)) & (SP_RCACHE - 1)];
	if (e->key.pc == w->key.pc && e->key.img.tgid == w->key.img.tgid &&
	    e->key.img.exec_id == w->key.img.exec_id &&
	    e->key.img.leader_start == w->key.img.leader_start &&
	    e->key.img.exec_vm == w->key.img.exec_vm) {
		r = &e->rule;
	} else {
		r = bpf_map_lookup_elem(&ustack_rules, &w->key);
		if (!r) {
			st->end = SP_RW_MISS;
			return 1;
		}
		e->key = w->key;
		e->rule = *r;
		r = &e->rule;
	}
	if (r->how == SP_URULE_SIGNAL) {
		__u64 sp = st->sp;

		if (rword(s, sp + SP_UC_RIP, &st->ip) || rword(s, sp + SP_UC_RBP, &st->bp) ||
		    rword(s, sp + SP_UC_RSP, &st->sp)) {
			st->end = SP_RW_MEMORY;
			return 1;
		}
		s->uip[nr & (SP_PROF_UDEPTH - 1)] = st->ip;
		st->nr = nr + 1;
		st->exact = 1;
		return 0;
	}
	if (r->how == SP_URULE_RA_DI) {
		/* the event's RDI: the first frame's only (not in the memo's key) */
		s->rbad = 1;
		if (nr != 1 || !s->fip[4] || (__u32)r->cfa_off > 64) {
			st->end = SP_RW_STOP;
			return 1;
		}
		cfa = st->sp + r->cfa_off;
		ra = s->fip[4];
	} else {
		if (r->how == SP_URULE_SP) {
			cfa = st->sp + (__s64)r->cfa_off;
		} else if (r->how == SP_URULE_FP) {
			cfa = st->bp + (__s64)r->cfa_off;
		} else {
			st->end = r->how == SP_URULE_END ? SP_RW_END : SP_RW_STOP;
			return 1;
		}
		/* the CFA moves up the stack, by at most what a frame can be */
		if (cfa <= st->sp || cfa - st->sp > SP_USTACK_SPAN) {
			st->end = SP_RW_STOP;
			return 1;
		}
		if (rword(s, cfa - 8, &ra)) {
			st->end = SP_RW_MEMORY;
			return 1;
		}
	}
	nbp = st->bp;
	/* a slot below SP was popped already: FP holds the caller's value again */
	if (r->fp == SP_URULE_FP_AT && cfa + (__s64)r->fp_off >= st->sp) {
		if (rword(s, cfa + (__s64)r->fp_off, &nbp)) {
			st->end = SP_RW_MEMORY;
			return 1;
		}
	} else if (r->fp == SP_URULE_FP_UNDEF) {
		nbp = 0;
	}
	if (!ra) {
		st->end = SP_RW_END;
		return 1;
	}
	s->uip[nr & (SP_PROF_UDEPTH - 1)] = ra;
	st->nr = nr + 1;
	st->ip = ra;
	st->sp = cfa;
	st->bp = nbp;
	st->exact = 0;
	return 0;
}

/* By SP and process: a forked child blocks at the same addresses as its parent */
static __always_inline struct sp_rmemo *sp_rmemo_at(struct sp_uscratch *s, __u64 sp)
{
	return &s->rm[((sp >> 4) ^ (sp >> 12) ^ (sp >> 20) ^ s->ut.tgid) & (SP_RMEMO - 1)];
}

/*
 * The memo's entry for this walk (s->fip's registers, s->ut's image) holds its answer: the
 * same registers, image and words. Reads the words (one read, into s->rbuf). A global
 * function (ustack.bpf.c): its loop verified once.
 */
int sp_rmemo_same_g(struct sp_uscratch *s);

/*
 * The walk of the current task's user stack by ustack_rules, after sp_utask_fill() (s->ut):
 * its frames in s->uip, their count in s->nw, how it ended in s->kind (enum sp_rwalk_end),
 * and the registers it started from in s->fip[0..4] (ip, sp, bp, bx, di) for a copy.
 */
static __always_inline void sp_user_rwalk(struct sp_uscratch *s)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	struct rwalk w = { .s = s };
	struct sp_urule_img *as;
	__u64 sp, len;

	s->nw = 0;
	s->kind = SP_RW_MEMORY;
	s->win = 0;
	if (!regs)
		return;
	sp = regs->sp;
	s->fip[0] = regs->ip;
	s->fip[1] = sp;
	s->fip[2] = regs->bp;
	s->fip[3] = regs->bx;
	s->fip[4] = regs->di;
	s->uip[0] = s->fip[0];
	s->rw = (struct sp_rwalk_state){ .ip = s->fip[0], .sp = sp, .bp = s->fip[2], .nr = 1,
					 .exact = 1, .end = SP_RW_MORE };
	s->nrused = 0;
	s->rspan = 0;
	s->rbad = 0;
	s->rhit = 0;
	s->rcheck = 0;
	s->rforked = 0;
	if (!s->rforce && sp && !(sp & 7) && sp_rmemo_same_g(s)) {
		struct sp_rmemo *e = sp_rmemo_at(s, sp);

		s->rkey = e->key;
		if (!verify_callers && ++s->rtick % SP_RMEMO_CHECK) {
			s->nw = e->n;
			s->kind = e->kind;
			s->rhit = 1;
			return;
		}
		s->rcheck = 1;
	}
	s->rforce = 0;
	w.key.img.leader_start = s->ut.leader_start;
	w.key.img.tgid = s->ut.tgid;
	w.key.img.exec_id = s->ut.exec_id;
	w.key.img.exec_vm = s->ut.exec_vm;
	as = bpf_map_lookup_elem(&urule_forks, &w.key.img);
	if (as)
		w.key.img = *as;
	s->rimg = w.key.img;
	s->rforked = as != NULL;
	if (sp && !(sp & 7)) {
		len = SP_UWIN_WORDS * 8;
		if (!bpf_probe_read_user(s->scan, len, (void *)sp)) {
			s->win_sp = sp;
			s->win = len;
		} else {
			/* the window's end on an unreadable page: up to the page's end */
			len = ((sp | (SP_USTK_PAGE - 1)) + 1) - sp;
			asm volatile("if %[c] <= 1024 goto +1; %[c] = 1024" : [c] "+r"(len));
			if (len >= 8 && !bpf_probe_read_user(s->scan, len, (void *)sp)) {
				s->win_sp = sp;
				s->win = len;
			}
		}
	}
	bpf_loop(SP_PROF_UDEPTH + 1, rwalk_step, &w, 0);
	s->nw = s->rw.nr;
	s->kind = s->rw.end;
}

/* The page-wise read of a copy (rcopy_page()), as the profile's (its len in the slot). */
struct rcopy_read {
	__u64 sp, len;
	__u32 slot;
	__u32 pad;
};

static long rcopy_page(__u64 i, struct rcopy_read *rd)
{
	struct sp_ustk_copy *r;
	__u64 off, chunk;

	(void)i;
	r = bpf_map_lookup_elem(&ustk_copy_slots, &rd->slot);
	if (!r)
		return 1;
	off = r->len;
	if (off >= rd->len || off > SP_USTK_COPY_MAX)
		return 1;
	chunk = SP_USTK_PAGE - ((rd->sp + off) & (SP_USTK_PAGE - 1));
	if (chunk > rd->len - off)
		chunk = rd->len - off;
	/* bounded against a constant: 6.1's verifier learns no bound from len - off */
	asm volatile("if %[c] <= 4096 goto +1; %[c] = 4096" : [c] "+r"(chunk));
	if (bpf_probe_read_user(r->data + off, chunk, (void *)(rd->sp + off)))
		return 1;
	r->len = off + chunk;
	return 0;
}

/*
 * After a miss of sp_user_rwalk(): sends the registers it started from and the stack from
 * SP up to the first page not readable (the stack's end, most often), at most
 * SP_USTK_COPY_MAX bytes. Without a lookup of the stack's mapping: at a switch the mm's
 * lock may be held, and bpf_find_vma() would fail. Returns the copy's seq, 0 when none was
 * sent.
 */
static __always_inline __u64 sp_user_rcopy(struct sp_uscratch *s, __u32 slot)
{
	__u64 sp = s->fip[1], len = SP_USTK_COPY_MAX, seq;
	struct rcopy_read rd = { .sp = sp, .len = SP_USTK_COPY_MAX, .slot = slot };
	struct sp_ustk_copy *r;

	if (!sp || (sp & 7))
		return 0;
	r = bpf_map_lookup_elem(&ustk_copy_slots, &slot);
	if (!r)
		return 0;
	r->len = 0;
	bpf_loop(SP_USTK_COPY_MAX / SP_USTK_PAGE + 1, rcopy_page, &rd, 0);
	len = r->len;
	if (!len)
		return 0;
	/* unique per copy slot (a CPU's, per view), whose scratch counts them */
	seq = ++s->rseq;
	seq = ((__u64)slot << 40) | (seq & ((1ULL << 40) - 1));
	r->seq = seq;
	r->leader_start = s->ut.leader_start;
	r->tgid = s->ut.tgid;
	r->exec_id = s->ut.exec_id;
	r->rules = s->rimg;
	r->ip = s->fip[0];
	r->sp = sp;
	r->bp = s->fip[2];
	r->bx = s->fip[3];
	r->di = s->fip[4];
	r->flags = SP_UCOPY_F_NOEND;
	asm volatile("if %[c] <= %[m] goto +1; %[c] = %[m]" : [c] "+r"(len) : [m] "i"(SP_USTK_COPY_MAX));
	if (bpf_ringbuf_output(&ustk_copies, r, sizeof(*r) + len, 0))
		return 0;
	return seq;
}

/*
 * sp_user_rwalk() and, after a miss, sp_user_rcopy() (its seq in s->rseq_sent, s->rcopied
 * set), as a global function (ustack.bpf.c): returns the number of frames, in s->uip;
 * s->kind says how the walk ended.
 */
int sp_user_rwalk_g(struct sp_uscratch *s, __u32 slot);

/*
 * The nr frames of sp_user_rwalk_g() into s->u.frames as raw IPs, the placeholder after them
 * when a copy was sent: returns their number.
 */
int sp_user_rframes_g(struct sp_uscratch *s, __u32 nr);

/* After a walk (not the memo's answer) whose raw key is key: see ustack.bpf.c */
int sp_user_rmemo_g(struct sp_uscratch *s, __u64 key);

/*
 * --stacks in the schedules and locks views: pairs a kernel stack (kstack, a key of the
 * view's own stack map) with the user stack of task (current) in stack_pairs, and returns
 * the pair's key, which stands for the stack in the view's keys. The rows' counts never
 * depend on it. A user stack that cannot be read or kept leaves the pair with ustack 0 and
 * a flag (counted in *d); a pair that cannot be kept returns kstack itself (counted), which
 * user space finds in no pair: a kernel-only stack.
 */
/*
 * The user stack of task (current) by ustack_rules (sp_user_rwalk_g()), kept in
 * prof_ustacks: its key, or 0. Its frames are raw IPs (*raw); how the walk ended is
 * counted in *d. slot: the CPU's copy slot for this view.
 */
static __always_inline __u64 sp_user_stack_rules(struct task_struct *task, struct sp_uscratch *s,
						 __u32 slot, __u32 *nr, __u32 *raw,
						 struct sp_ustack_drops *d, struct sp_umemo **mp)
{
	struct sp_umemo *m;
	__u64 h, key, id;
	__u32 n;

	n = sp_user_rwalk_g(s, slot);
	/* verifier: the count and the end read back from memory, one state */
	asm volatile("" ::: "memory");
	switch (s->kind) {
	case SP_RW_END:
		__sync_fetch_and_add(&d->rwalk_end, 1);
		break;
	case SP_RW_STOP:
		__sync_fetch_and_add(&d->rwalk_stop, 1);
		break;
	case SP_RW_MISS:
		if (s->rcopied)
			__sync_fetch_and_add(&d->rwalk_miss, 1);
		else
			__sync_fetch_and_add(&d->rwalk_copy_lost, 1);
		break;
	case SP_RW_DEPTH:
		__sync_fetch_and_add(&d->rwalk_depth, 1);
		break;
	default:
		__sync_fetch_and_add(&d->rwalk_memory, 1);
		break;
	}
	if (s->rforked)
		__sync_fetch_and_add(&d->rwalk_forked, 1);
	*nr = n;
	if (!n || n > SP_PROF_UDEPTH)
		return 0;
	*raw = 1;
	/*
	 * This CPU's memo of the stacks it kept, by the raw IPs and the process image (whose
	 * announcement and pair it also remembers, as sp_user_stack_own()'s): a hit costs no
	 * frames built, hashed and looked up. A stack with a placeholder is new each time.
	 */
	if (s->rhit) { /* the walk's memo gave the raw key, without the frames */
		__sync_fetch_and_add(&d->rmemo_hit, 1);
		key = s->rkey;
		m = &s->memo[key & (SP_UMEMO - 1)];
		*mp = m;
		if (m->key == key && m->ustack)
			return m->ustack;
		/* not kept in this memo any more: the frames are walked */
		s->rforce = 1;
		n = sp_user_rwalk_g(s, slot);
		asm volatile("" ::: "memory");
		*nr = n;
		if (!n || n > SP_PROF_UDEPTH)
			return 0;
	}
	if (s->rcheck) { /* the memo answered: a walk checks it */
		__sync_fetch_and_add(&d->rmemo_hit, 1);
		__sync_fetch_and_add(&d->rmemo_checked, 1);
	}
	key = sp_user_raw_key(s, SP_UREC_NONE, n);
	if (sp_user_rmemo_g(s, key))
		__sync_fetch_and_add(&d->rmemo_mismatch, 1);
	m = &s->memo[key & (SP_UMEMO - 1)];
	*mp = m;
	if (!s->rcopied && m->key == key && m->ustack)
		return m->ustack;
	n = sp_user_rframes_g(s, n);
	*nr = n;
	h = sp_user_stack_hash_g(s, n);
	/* verifier: the hash and s->u read back after the global function, one state */
	asm volatile("" ::: "memory");
	id = sp_stack_keep(&prof_ustacks, h, &s->u);
	if (!id)
		__sync_fetch_and_add(&d->map_full, 1);
	if (id && !s->rcopied)
		*m = (struct sp_umemo){ .key = key, .ustack = id, .raw = 1 };
	return id;
}

static __always_inline __u64 sp_stack_pair(void *ctx, struct task_struct *task, __u64 kstack,
					   void *scratch_map, struct sp_ustack_drops *d, __u32 nest)
{
	struct sp_stack_pair pair = { .kstack = kstack };
	__u64 t0 = ustack_timed ? bpf_ktime_get_ns() : 0, t[SP_USTACK_PARTS] = {};
	struct sp_uscratch *s;
	__u32 zero = 0, nr = 0, raw = 0;
	struct sp_umemo *m = NULL;
	bool memo;
	__u64 h;

	if (ustack_off)
		return kstack;
	s = bpf_map_lookup_elem(scratch_map, &zero);
	if (!s)
		return kstack;
	/* as perf: no user stack for kernel threads and io workers */
	if (!(task->flags & (PF_KTHREAD | PF_USER_WORKER))) {
		if (ustack_rules_on)
			sp_utask_get(task, &s->ut, false);
		else
			sp_user_begin(task, s);
	}
	if (!(task->flags & (PF_KTHREAD | PF_USER_WORKER)) && s->ut.has_mm) {
		__u64 fail = 0;

		if (ustack_rules_on)
			pair.ustack = sp_user_stack_rules(task, s,
							  bpf_get_smp_processor_id() * 2 + nest,
							  &nr, &raw, d, &m);
		else
			pair.ustack = sp_user_stack_own(ctx, task, s, &nr, &raw, &fail, d,
							t0 ? t : NULL, &m);
		if (t0) {
			t[SP_USTACK_T_KEEP] = bpf_ktime_get_ns();
			if (!t[SP_USTACK_T_NAME]) /* named from ustack_raw */
				t[SP_USTACK_T_NAME] = t[SP_USTACK_T_KEEP];
		}
		if (fail)
			__sync_fetch_and_add(&d->read_fail, 1);
		if ((nr && !pair.ustack) || fail)
			pair.flags |= SP_PAIR_F_USTACK_LOST;
		pair.tgid = task->tgid;
		pair.exec_id = (__u32)task->self_exec_id;
		if (raw)
			pair.flags |= SP_PAIR_F_RAW_IP;
		if (nr) {
			__u64 now = bpf_ktime_get_ns();

			/* announced since the memo's time: no need to look (the same answer) */
			memo = m && pair.ustack && m->ustack == pair.ustack;
			if (!memo || now - m->seen > (raw ? PROF_REFRESH_RAW_NS : PROF_REFRESH_NS)) {
				/* a forked process's snapshot is its rules owner's */
				now = sp_user_maybe_announce(
					task, raw, now, s->ut.exec_vm,
					ustack_rules_on && s->rforked ? &s->rimg : NULL,
					&d->event_lost);
				if (memo)
					m->seen = now;
			}
		}
	}
	h = sp_mix(sp_mix(kstack, pair.ustack), pair.flags);
	if (raw) /* raw IPs are named through the process image: pairs of two images differ */
		h = sp_mix(h, ((__u64)pair.tgid << 32) | pair.exec_id);
	/* the memo's pair is in stack_pairs already (nothing is ever deleted there) */
	memo = m && pair.ustack && m->ustack == pair.ustack;
	if (!memo || m->pair != h) {
		h = sp_stack_keep(&stack_pairs, h, &pair);
		if (memo && h)
			m->pair = h;
	}
	if (t0) {
		__u64 t1 = bpf_ktime_get_ns();

		__sync_fetch_and_add(&d->timed_ns, t1 - t0);
		__sync_fetch_and_add(&d->timed, 1);
		if (t[SP_USTACK_T_KEEP]) { /* a user stack was taken: its parts */
			t[SP_USTACK_T_PAIR] = t1;
			__sync_fetch_and_add(&d->timed_user, 1);
			for (int i = 0; i < SP_USTACK_PARTS; i++) {
				__sync_fetch_and_add(&d->timed_part[i], t[i] - t0);
				t0 = t[i];
			}
		}
	}
	if (h)
		return h;
	__sync_fetch_and_add(&d->pair_map_full, 1);
	return kstack;
}

#endif
