/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Types shared by src/views/locks/locks.bpf.c and its loader (src/views/locks/collect.c): the locks
 * view, from the lock:contention_begin/contention_end tracepoints (Linux >= 5.19). Fixed width,
 * padded.
 */
#ifndef SCHEDPROF_LOCK_H
#define SCHEDPROF_LOCK_H

#include "schedprof/limits.h"

/* Flags of lock:contention_begin, as in the kernel's include/trace/events/lock.h (5.19+). */
#define SP_LCB_F_SPIN (1U << 0)
#define SP_LCB_F_READ (1U << 1)
#define SP_LCB_F_WRITE (1U << 2)
#define SP_LCB_F_RT (1U << 3)
#define SP_LCB_F_PERCPU (1U << 4)
#define SP_LCB_F_MUTEX (1U << 5)

/* Spinning contentions that can nest on one CPU: task, softirq, hardirq, NMI. */
#define SP_LOCK_SPIN_NEST 4

/*
 * What a lock is, found in BPF by comparing its address with kernel objects: either
 * reached from the waiting task (certain), or an object whose layout was checked at the
 * candidate address through a pointer that must point back (see src/views/locks/locks.bpf.c).
 * The names and the way each was found are in src/symbols/lockname.c.
 */
enum sp_lock_name {
	SP_LNAME_NONE = 0,
	/* reached from the task that waits (certain) */
	SP_LNAME_MMAP_LOCK,	  /* current->mm->mmap_lock */
	SP_LNAME_PAGE_TABLE_LOCK, /* current->mm->page_table_lock */
	SP_LNAME_SIGLOCK,	  /* current->sighand->siglock */
	SP_LNAME_FILE_LOCK,	  /* current->files->file_lock */
	SP_LNAME_CRED_GUARD,	  /* current->signal->cred_guard_mutex */
	SP_LNAME_EXEC_UPDATE,	  /* current->signal->exec_update_lock */
	SP_LNAME_RQ_LOCK,	  /* this CPU's runqueue: current->se.cfs_rq->rq->__lock */
	/* checked by layout at the address (a pointer there points back) */
	SP_LNAME_INODE_RWSEM,	  /* inode.i_rwsem: inode->i_data.host == inode */
	SP_LNAME_INODE_LOCK,	  /* inode.i_lock: same check */
	SP_LNAME_MAPPING_RWSEM,	  /* address_space.i_mmap_rwsem of an inode: host->i_data is it */
	SP_LNAME_MAPPING_PAGES,	  /* address_space.i_pages (xa_lock) of an inode: same check */
	SP_LNAME_SB_UMOUNT,	  /* super_block.s_umount: s_root->d_sb == sb */
	SP_LNAME_PIPE_MUTEX,	  /* pipe_inode_info.mutex: two wait-queue list heads, sane ring */
	SP_LNAME_FILE_POS_LOCK,	  /* file.f_pos_lock: f_inode->i_mapping == f_mapping */
	SP_LNAME_TASK_PI_LOCK,	  /* task_struct.pi_lock: its pid's task list starts at it */
	SP_LNAME_INODE_RWSEM_WAIT, /* inode.i_rwsem.wait_lock: the inode check */
	SP_LNAME_PIPE_MUTEX_WAIT,  /* pipe_inode_info.mutex.wait_lock: the pipe check */
	SP_LNAME_MMAP_LOCK_WAIT,   /* current->mm->mmap_lock.wait_lock (reached from the task) */
	SP_LNAME_MAPPING_PRIVATE,  /* address_space.i_private_lock of an inode (buffer heads) */
	SP_LNAME_DENTRY_LOCK,	   /* dentry.d_lock: d_sb is a super_block, d_parent's d_sb too */
	SP_LNAME__MAX,
};

/*
 * A contention in progress (begin seen, end not yet). Sleeping locks keep one per task,
 * spinning ones a small stack per CPU (include/schedprof/lock_pair.h pairs them).
 */
struct sp_lock_pending {
	__u64 lock;   /* lock address */
	__u64 ts;     /* begin time (ns); 0 = none in progress */
	__u64 caller; /* first frame outside lock and scheduler text (the schedules rule) */
	__u64 stack;  /* hash of the frames in lock_stacks; 0 = not kept */
	__u32 flags;  /* of the latest begin */
	__u32 name;   /* enum sp_lock_name */
};

/* Per task (task storage): its sleeping-lock contention and the sleeps inside it. */
struct sp_lock_task {
	struct sp_lock_pending p;
	__u64 sleep_ts;	    /* switch-out time of the current sleep; 0 while on CPU */
	__u64 offcpu_ns;    /* asleep (switched out, not runnable) since the begin */
	__u64 max_sleep_ns;
	__u32 nsleeps;
	__u32 has_owner;    /* owner[] holds the lock owner's comm at the begin */
	char owner[TASK_COMM_LEN];
};

/* Per CPU: spinning contentions, innermost last. */
struct sp_lock_spin_stack {
	__u32 depth;
	__u32 pad;
	struct sp_lock_pending e[SP_LOCK_SPIN_NEST];
};

/* Row of the locks table: exact counts, never depending on the stack map. */
struct sp_lock_key {
	__u64 caller;
	__u64 lock;
	__u32 flags; /* normalized (sp_lock_flags_norm) */
	__u32 name;  /* enum sp_lock_name */
	char comm[TASK_COMM_LEN];
};

struct sp_lock_val {
	__u64 count;   /* contentions that got the lock */
	__u64 wait_ns; /* their total wait */
	__u64 max_ns;
	__u64 failed;  /* contentions that gave up (ret < 0: signal, timeout) */
};

/* The full stacks behind a row, for --lock-stacks, per process. */
struct sp_lock_stack_key {
	__u64 stack;
	__u64 caller;
	__u64 lock;
	__u32 flags;
	__u32 name;
	__u32 tgid; /* process (thread group) of the waiting task */
	__u32 pad;
	char comm[TASK_COMM_LEN];
};

struct sp_lock_stack_val {
	__u64 count;
	__u64 wait_ns;
};

/* Sleepers: time asleep inside sleeping-lock slow paths, per task (user space groups them). */
struct sp_lock_sleep_key {
	__u64 caller;
	__u64 lock;
	__u32 flags;
	__u32 name;
	__u32 pid;
	__u32 pad;
	char comm[TASK_COMM_LEN];
};

struct sp_lock_sleep_val {
	__u64 contentions; /* contentions in which the task slept at least once */
	__u64 sleeps;
	__u64 offcpu_ns;
	__u64 max_ns;	   /* longest single sleep */
};

/* Owners: who held a mutex or a write-held rwsem when the wait began. */
struct sp_lock_owner_key {
	__u64 caller;
	__u64 lock;
	__u32 flags;
	__u32 name;
	char owner[TASK_COMM_LEN]; /* "[readers]" for a reader-owned rwsem */
};

struct sp_lock_owner_val {
	__u64 count;
	__u64 wait_ns;
};

/* Totals (per CPU: map lock_counts): contentions of traced tasks that ended while attached. */
struct sp_lock_counts {
	__u64 total;  /* ended: acquired or gave up */
	__u64 failed; /* gave up (ret < 0) */
};

/*
 * The caller fast path (bpf/fastcaller.bpf.h) in lock_begin, per CPU (lock_cache_pcpu, summed
 * by user space): only when no lock stack is kept.
 */
struct sp_lock_cache_counts {
	__u64 attributed; /* contentions given a caller (a begin the pairing did not skip) */
	__u64 fast;	  /* of those, from the raw stack words */
	__u64 verified;	  /* of those, checked by a full walk too */
	__u64 mismatched; /* of those, the full walk disagreed (its answer was kept) */
	__u64 fast_off;	  /* the arguments were not on the task's stack (an interrupt): walked */
	/* lock_begin_full: its kept stacks from the raw stack words (faststack.bpf.h) */
	__u64 stacks;	  /* contentions whose stack was kept */
	__u64 stacks_fast;
	__u64 stacks_verified;
	__u64 stacks_mismatched;
	__u64 stacks_off;
	__u64 stacks_memo; /* of stacks_fast: from the memo (struct sp_kmemo) */
};

/* Drop counters (.bss), reported after the run. */
struct sp_lock_drops {
	__u64 stack_fail;	 /* bpf_get_stack() failed: caller [unknown] */
	__u64 stack_map_full;	 /* no --lock-stacks entry */
	__u64 row_map_full;	 /* counted in the totals, in no row */
	__u64 stackagg_map_full;
	__u64 task_storage_fail; /* sleeping-lock contention not timed */
	__u64 nest_overflow;	 /* spinning contention nested deeper than SP_LOCK_SPIN_NEST */
	__u64 unpaired;		 /* a begin whose end never came (replaced, or popped past) */
	__u64 sleeper_map_full;
	__u64 owner_map_full;
};

#endif
