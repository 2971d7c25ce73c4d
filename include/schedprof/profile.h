/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Types shared by src/views/profile/profile.bpf.c and its loader (src/views/profile/collect.c): the
 * sampled-PC profile. Fixed width, padded: keys are compared byte by byte by the hash maps.
 */
#ifndef SCHEDPROF_PROFILE_H
#define SCHEDPROF_PROFILE_H

#include "schedprof/limits.h"

#define SP_PROF_DEF_HZ 99	/* -F: 99, not 100: no lock-step with the timer tick */
#define SP_PROF_MAX_HZ 100000	/* the kernel's default perf_event_max_sample_rate */
#define SP_DEF_PROF_KEYS 16384	/* distinct (leaf, comm[, stacks]) keys: --max-samples */
#define SP_PROF_KDEPTH 64	/* kernel frames kept with -g */
#define SP_PROF_UDEPTH 64	/* user frames kept with -g (as deep as frame pointers allow) */
#define SP_PROF_BUILD_ID_SIZE 20 /* BPF_BUILD_ID_SIZE */
#define SP_PROF_SEEN 8192	/* process images tracked for the first-sample notification */
#define SP_PROF_EVENTS_BYTES (256 * 1024) /* ring buffer of process notifications */
#define SP_PROF_UCACHE 16384	/* user code pages whose build-id + offset are cached */
#define SP_PROF_XCACHE 4096	/* executables (or their text pages) cached across processes */
#define SP_PROF_UCACHE_CHECK 32	/* every Nth sample per CPU takes the kernel's build-id path */
/*
 * -g: bytes of user stack copied per sample (--ustack-copy). Code with frames of kilobytes
 * (gcc's cc1 keeps 4 to 8 KiB value ranges on its stack) needs all of it to reach main:
 * cc1's value-range recursions of the compile job go 64 to 132 KiB deep in 1 to 1.5% of its
 * samples. A CPU's slot (prof_ucopy_slots) is this size whatever --ustack-copy says.
 */
#define SP_PROF_UCOPY_DEF 131072
#define SP_PROF_UCOPY_MAX 131072 /* ... at most */
/* The ring buffer of the copies, each at its length (about 1000 of cc1's, 8 KiB on average) */
#define SP_PROF_UCOPY_RING (8 << 20)

/* Status of a user frame: the kernel's BPF_STACK_BUILD_ID_{EMPTY,VALID,IP}. */
#define SP_UFRAME_EMPTY 0
#define SP_UFRAME_VALID 1 /* build_id + file offset */
#define SP_UFRAME_IP 2	  /* the kernel could not read the build-id: a raw IP */

/*
 * One user frame exactly as bpf_get_stack(BPF_F_USER_STACK | BPF_F_USER_BUILD_ID) writes it
 * (struct bpf_stack_build_id: s32 status, 20 bytes of build-id, then offset or ip).
 */
struct sp_uframe {
	__u32 status;
	__u8 build_id[SP_PROF_BUILD_ID_SIZE];
	__u64 offset; /* file offset (VALID) or the raw IP (IP) */
};

/* key flags */
#define SP_PROF_F_RAW_IP 0x1	 /* some user frame is a raw IP: tgid/exec_id name the image */
#define SP_PROF_F_KSTACK_LOST 0x2 /* -g: the kernel stack could not be kept (map full) */
#define SP_PROF_F_USTACK_LOST 0x4 /* -g: the user stack could not be kept (map full) */

/*
 * A row of the sample count. The leaf is in the key itself, so the counts by function never
 * depend on the stack maps. Without -g only the leaf is recorded: the kernel PC for a sample
 * taken in kernel mode (uleaf stays empty), else the user leaf.
 */
struct sp_prof_key {
	__u64 kip;		/* the sampled kernel PC; 0 = the sample was taken in user mode */
	struct sp_uframe uleaf; /* the innermost user frame */
	__u64 kstack;		/* -g: hash of the kernel frames (prof_kstacks); 0 = none */
	__u64 ustack;		/* -g: hash of the user frames (prof_ustacks); 0 = none */
	__u32 tgid;		/* only with SP_PROF_F_RAW_IP (else 0, so keys merge) */
	__u32 exec_id;		/* the task's self_exec_id: which image of tgid */
	__u32 flags;		/* SP_PROF_F_* */
	__u32 pid;		/* -g: the sampled task's tgid (pprof's pid label); else 0 */
	char comm[TASK_COMM_LEN];
};

struct sp_prof_kstack {
	__u32 nr;
	__u32 pad;
	__u64 ip[SP_PROF_KDEPTH]; /* ip[0] is the sampled PC */
};

struct sp_prof_ustack {
	__u32 nr;
	__u32 pad;
	struct sp_uframe frames[SP_PROF_UDEPTH]; /* frames[0] is the innermost */
};

/* Every sample is counted in exactly one class. Read from .bss after the run. */
struct sp_prof_counts {
	__u64 total;
	__u64 idle;   /* the idle task (pid 0) */
	__u64 target; /* a traced task (everything but idle with -a) */
	__u64 other;
};

struct sp_prof_drops {
	__u64 key_map_full;	/* target samples counted in the classes but in no row */
	__u64 kstack_fail;	/* bpf_get_stack() failed for the kernel frames */
	__u64 ustack_fail;	/* ... for the user frames */
	__u64 kstack_map_full;	/* -g: counted, but no kernel stack kept */
	__u64 ustack_map_full;	/* -g: counted, but no user stack kept */
	__u64 event_lost;	/* process notifications lost (ring buffer full) */
	/* -g with stack copies: samples whose user stack was walked by frame pointers instead */
	__u64 ucopy_lost;	/* the copies' ring buffer was full */
	__u64 ucopy_busy;	/* the stack pointer in no mapping */
	__u64 ucopy_fail;	/* the stack not readable */
	__u64 ucopy_part;	/* copied, but only up to a page not readable (counted too) */
};

/*
 * -g's user stack as a copy (perf's way): the registers and the stack from SP up to the end
 * of its mapping, at most prof_ucopy_max bytes, sent with the sample's key for user space to
 * unwind by the objects' call frame information (src/symbols/cfi_unwind.h) and count. The
 * key's kernel part is final; user space fills uleaf and ustack, which BPF leaves empty, and
 * names the frames as raw IPs of (tgid, exec_id), which the key carries (SP_PROF_F_RAW_IP).
 * The record is sent at its length: sizeof + len.
 */
#define SP_UCOPY_F_CUT 0x1  /* the stack's mapping goes on past the copy */
#define SP_UCOPY_F_PART 0x2 /* the copy ends at a page the kernel could not read there */
/*
 * The stack's mapping was not looked up (its mm's lock busy): the copy goes up to
 * prof_ucopy_max bytes or the first page not readable, which may be the mapping's end
 */
#define SP_UCOPY_F_NOEND 0x4

struct sp_prof_ucopy {
	struct sp_prof_key key;
	__u64 ip, sp, bp, bx; /* the task's user registers */
	__u32 len;	  /* bytes of data, the stack from sp */
	__u32 flags;	  /* SP_UCOPY_F_* */
	__u8 data[];
};

/*
 * The user-frame cache: raw user IPs are translated page by page, so that most samples skip the
 * kernel's build-id lookup (a VMA walk and page-cache reads per mapping, several us a sample).
 * An entry is keyed by the process image (leader's start time, tgid, exec_id) and the code page,
 * and filled from the kernel's own build-id answer for the same stack; pages the kernel could
 * not name while naming others (no file, build-id not readable) are cached as raw IPs. Every
 * SP_PROF_UCACHE_CHECK-th sample of a CPU takes the kernel's path again and refreshes the
 * entries, so a page re-mapped to another file (dlclose + dlopen) is corrected.
 */
struct sp_prof_ucache_key {
	__u64 start_time; /* the thread group leader's start_time */
	__u32 tgid;
	__u32 exec_id;
	__u64 page; /* ip >> 12 */
};

/*
 * Frames in the executable's text (mm->start_code..end_code, mapped from mm->exe_file by the ELF
 * loader) are cached across processes instead, by file and page offset from start_code, so that
 * the many short processes of a build (cc1, as) start warm.
 */
struct sp_prof_xcache_key {
	__u64 ino;
	__s64 ctime_sec; /* ino, ctime, generation and device: a rebuilt binary is another key */
	__u32 ctime_nsec;
	__u32 generation;
	__u32 dev;
	__u32 pad;
	__u64 page; /* (ip - start_code) >> 12, or SP_PROF_XCACHE_WHOLE */
};

/*
 * An executable with a single executable PT_LOAD (seen in its program headers, through the
 * process's AT_PHDR) maps all its text at one file offset delta from start_code: one entry
 * with this page covers it, so that a large binary (cc1) is not warmed page by page.
 */
#define SP_PROF_XCACHE_WHOLE (~0ULL)

/* Value of both caches; delta = file offset - ip (ucache) or - (ip - start_code) (xcache). */
struct sp_prof_ucache_val {
	__u32 status; /* SP_UFRAME_VALID or SP_UFRAME_IP */
	__u8 build_id[SP_PROF_BUILD_ID_SIZE];
	__u64 delta; /* VALID only */
};

/* Samples with user frames, by how their frames were named (not part of the saved run). */
struct sp_prof_ucache_stats {
	__u64 hit;	/* every frame from the caches */
	__u64 miss;	/* some frame not cached: the kernel's build-id path */
	__u64 check;	/* all cached, re-asked the kernel (every SP_PROF_UCACHE_CHECK-th) */
	__u64 stale;	/* ... and some cached frame differed from the kernel's answer */
};

/* Why user space is asked to look at a process while it lives. */
enum sp_prof_reason {
	SP_PROF_EV_EXEC = 1, /* it exec'd: register the new image's files */
	SP_PROF_EV_FIRST,    /* first user-mode sample of an image: its libraries are mapped */
	SP_PROF_EV_REFRESH,  /* raw-IP frames, or a second since the last look */
};

struct sp_prof_event {
	__u32 tgid;
	__u32 exec_id;
	__u32 reason; /* enum sp_prof_reason */
	/*
	 * --stacks by learned rules: the image whose rules it walks by, forked from without
	 * exec and its code mappings' size unchanged (its code is that image's at the same
	 * addresses); from_tgid 0: none. The first announcement only.
	 */
	__u32 from_tgid;
	__u32 from_exec_id;
	__u64 from_exec_vm; /* its mm->exec_vm (pages), which the snapshot of from must match */
};

/*
 * --stacks in the schedules and locks views (bpf/ustack.bpf.h sp_stack_pair()): a kernel
 * stack (a key of the view's own stack map) and the task's user stack (prof_ustacks), by
 * hash of both; the views' stack keys hold the pair's key.
 */
#define SP_PAIR_F_RAW_IP 0x1	  /* some user frame is a raw IP: tgid/exec_id name the image */
#define SP_PAIR_F_USTACK_LOST 0x2 /* the user stack could not be read or kept */

struct sp_stack_pair {
	__u64 kstack;  /* 0: none */
	__u64 ustack;  /* 0: none (a kernel thread, or lost: SP_PAIR_F_USTACK_LOST) */
	__u32 tgid;    /* the task's process and its image (self_exec_id) */
	__u32 exec_id;
	__u32 flags;   /* SP_PAIR_F_* */
	__u32 pad;
};

/* SCHEDPROF_USTACK_TIMING: where a user stack's time goes (sp_stack_pair()). */
enum sp_ustack_part {
	SP_USTACK_T_WALK,    /* the frame-pointer walk */
	SP_USTACK_T_RECOVER, /* the frames a library without frame pointers hides */
	SP_USTACK_T_NAME,    /* naming the frames: the caches, the kernel's build-id lookup */
	SP_USTACK_T_KEEP,    /* hashing and keeping the user stack */
	SP_USTACK_T_PAIR,    /* the announcement and the (kernel, user) pair */
	SP_USTACK_PARTS
};

/* A view's user-stack drop counters (.bss), read after the run. */
struct sp_ustack_drops {
	__u64 read_fail;     /* bpf_get_stack() failed for the user frames */
	__u64 map_full;      /* read, but not kept (prof_ustacks full) */
	__u64 pair_map_full; /* the stack is kept as kernel frames only (stack_pairs full) */
	__u64 event_lost;    /* process announcements lost (ring buffer full) */
	/* SCHEDPROF_USTACK_TIMING set (the bench): the user stacks' time, and how many */
	__u64 timed_ns;
	__u64 timed;
	__u64 timed_part[SP_USTACK_PARTS]; /* ... of the stacks of user tasks, by part */
	__u64 timed_user;		   /* ... how many */
	/* --stacks by learned rules (struct sp_urule): how the walks of user tasks ended */
	__u64 rwalk_end;	/* at the outermost frame */
	__u64 rwalk_stop;	/* at a frame the rules cannot leave (no CFI, an expression) */
	__u64 rwalk_miss;	/* at an address without a rule: a copy was sent */
	__u64 rwalk_copy_lost;	/* ... none could be (ring buffer full, stack not readable) */
	__u64 rwalk_memory;	/* a word of the stack not readable */
	__u64 rwalk_depth;	/* SP_PROF_UDEPTH frames */
	/* ... of which answered by the walks' memo (bpf/ustack.bpf.h struct sp_rmemo) */
	__u64 rmemo_hit;
	__u64 rmemo_checked;  /* a memo's answer checked by a walk */
	__u64 rmemo_mismatch; /* ... that gave other frames (a defect: 0 expected) */
	__u64 rwalk_forked;   /* walks by the rules of a parent (struct sp_urule_img) */
};

/*
 * --stacks' user stacks on code without frame pointers: BPF walks them by a rule per code
 * address (bpf/ustack.bpf.h sp_user_rwalk()), which user space writes into ustack_rules
 * for every frame of the copies it unwinds by CFI (src/collect/urules.c). A walk that meets
 * an address without a rule sends a copy (struct sp_ustk_copy) and ends its frames with a
 * placeholder (SP_UFRAME_PENDING, the copy's seq) that keeps the stack distinct, so that
 * the event is counted under it exactly; user space puts the copy's frames in its place.
 *
 * A rule is keyed by the process image and the address; SP_URULE_EXACT marks an address
 * that is a PC of its own (the leaf, or a signal's interrupted PC), whose row is its own,
 * not that of the call before it, as for a return address.
 */
#define SP_URULE_EXACT (1ULL << 63)
#define SP_URULES 65536 /* rules kept (an LRU hash) */

/*
 * Whose rules a walk follows: a process image (as struct sp_utask has it) with the size of its
 * executable mappings (mm->exec_vm, pages), so that a process that maps or unmaps code walks
 * by rules of its own from then on. A process forked without exec walks by its parent's
 * (urule_forks) while that size is the one it had at the fork: its code is its parent's then.
 */
struct sp_urule_img {
	__u64 leader_start;
	__u32 tgid;
	__u32 exec_id;
	__u64 exec_vm;
};

#define SP_URULE_FORKS 16384 /* processes forked that walk by their parent's rules */

/* bpf/ustack.bpf.c sp_ufork's counts (.bss) */
struct sp_ufork_stats {
	__u64 forks; /* processes forked that walk by their parent's rules */
	__u64 lost;  /* ... that could not be kept (they walk by their own) */
};

struct sp_urule_key {
	struct sp_urule_img img;
	__u64 pc; /* | SP_URULE_EXACT */
};

enum sp_urule_how {
	SP_URULE_SP,	 /* CFA = SP + cfa_off; the return address at CFA - 8 */
	SP_URULE_FP,	 /* CFA = FP + cfa_off; ... */
	SP_URULE_SIGNAL, /* a signal frame: RIP, RSP and RBP from the ucontext at SP */
	SP_URULE_END,	 /* the outermost frame */
	SP_URULE_STOP,	 /* a frame the rules cannot leave: the walk ends, counted */
	SP_URULE_RA_DI,	 /* CFA = SP + cfa_off, the return address in RDI: the first frame only */
};

/* The caller's FP, as enum cfi_fp */
#define SP_URULE_FP_SAME 0
#define SP_URULE_FP_AT 1 /* at CFA + fp_off */
#define SP_URULE_FP_UNDEF 2

struct sp_urule {
	__s32 cfa_off;
	__s16 fp_off;
	__u8 how; /* enum sp_urule_how */
	__u8 fp;  /* SP_URULE_FP_* */
};

/* A placeholder frame: offset is the copy's seq (never named, never shown) */
#define SP_UFRAME_PENDING 3

#define SP_USTK_COPY_MAX 32768	    /* bytes of stack a copy holds at most */
#define SP_USTK_COPY_RING (4 << 20) /* the copies' ring buffer */

struct sp_ustk_copy {
	__u64 seq;	    /* the placeholder's: (copy slot << 40) | the slot's count */
	__u64 leader_start; /* the process image */
	__u32 tgid, exec_id;
	struct sp_urule_img rules; /* whose rules the walk followed: the copy's are taught there */
	__u64 ip, sp, bp, bx, di;  /* the task's user registers */
	__u32 len;		  /* bytes of data, the stack from sp */
	__u32 flags;		  /* SP_UCOPY_F_* */
	__u8 data[];
};

#endif
