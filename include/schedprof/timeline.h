/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The --timeline events, shared by bpf/timeline.bpf.[ch] and their reader
 * (src/views/timeline/collect.c, rows.c): each state change of a traced task, streamed through
 * the `tl_events` ring buffer. Fixed width, padded; every event starts with the header.
 */
#ifndef SCHEDPROF_TIMELINE_H
#define SCHEDPROF_TIMELINE_H

#include "schedprof/limits.h"

/* The ring buffer's default size (--timeline-buffer): ~2 s of events at 300k/s undrained. */
#define SP_TL_DEF_BUFFER (64u << 20)
/*
 * Segments kept in the saved run (~200 bytes each there, with their strings: a pinned pipe
 * ping-pong makes 800k in a second); at the limit the timeline is cut, later events counted.
 */
#define SP_TL_MAX_SEGS (1u << 20)

enum sp_tl_ev_type {
	SP_TL_EV_SWITCH = 1,
	SP_TL_EV_WAKE,	   /* sched_waking */
	SP_TL_EV_WAKE_NEW, /* sched_wakeup_new: a new task's first wake-up */
	SP_TL_EV_FORK,
	SP_TL_EV_EXEC,
	SP_TL_EV_EXIT,
	SP_TL_EV_RENAME, /* task_rename: prctl(PR_SET_NAME), a write to /proc/PID/comm */
};

/* Where a wake-up came from: the waker is current in task context only. */
enum sp_tl_wake_ctx {
	SP_TL_CTX_TASK = 0,
	SP_TL_CTX_IRQ,	   /* hard interrupt or NMI */
	SP_TL_CTX_SOFTIRQ, /* serving a softirq (timers among them) */
};

struct sp_tl_hdr {
	__u64 ts;   /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u16 type; /* enum sp_tl_ev_type */
	__u16 cpu;
	__u32 pad;
};

/*
 * struct sp_tl_switch's flags: which side is a traced task; a traced prev preempted while its
 * CFS bandwidth group (or an ancestor) was throttled by its CPU quota.
 */
#define SP_TL_PREV_TRACED 1u
#define SP_TL_NEXT_TRACED 2u
#define SP_TL_PREV_THROTTLED 4u

/*
 * A context switch on any CPU, traced tasks or not: each CPU's whole history, so that the
 * reader knows who ran on a CPU while a traced task waited for it and when a CPU was idle
 * (tid 0: the idle task). caller and wait only for a traced prev.
 */
struct sp_tl_switch {
	struct sp_tl_hdr h;
	__u64 caller;	   /* prev's caller of schedule() (fold.h), voluntary switch-outs */
	__u64 prev_ran;	   /* prev's runtime since it was picked: places a switch-in missed */
	__u32 prev_tid, prev_pid;
	__u32 prev_state;  /* 0: preempted (TASK_RUNNING) */
	__u32 wait;	   /* enum sp_wait of prev's sleep */
	__u32 next_tid, next_pid;
	char prev_comm[TASK_COMM_LEN];
	char next_comm[TASK_COMM_LEN];
	__u32 flags;	   /* SP_TL_PREV_TRACED, SP_TL_NEXT_TRACED */
	__u32 pad;
	__u64 prev_cpus;   /* prev's affinity, CPUs 0-63 (a preempted prev waits on those) */
	__u64 prev_cg, next_cg; /* cgroup v2 ids (kernfs ids); 0 for the idle task */
};

/* A traced task woken (wakee), by current in task context or by an interrupt. */
struct sp_tl_wake {
	struct sp_tl_hdr h;
	__u32 tid, pid;		  /* the wakee */
	__u32 waker_tid, waker_pid; /* current; 0 in interrupt context */
	__u32 ctx;		  /* enum sp_tl_wake_ctx */
	__u32 waker_traced;	  /* the waker is a traced task */
	char comm[TASK_COMM_LEN];	/* the wakee's */
	char waker_comm[TASK_COMM_LEN];
	__u64 cpus;		  /* the wakee's affinity, CPUs 0-63 */
};

struct sp_tl_fork {
	struct sp_tl_hdr h;
	__u32 parent_tid, parent_pid;
	__u32 tid, pid; /* the child */
	char comm[TASK_COMM_LEN];
};

/*
 * exec and rename (comm is the new one), exit (the task runs on until its last switch-out)
 */
struct sp_tl_task_ev {
	struct sp_tl_hdr h;
	__u32 tid, pid;
	char comm[TASK_COMM_LEN];
};

/* Counters in .bss, read after the run. */
struct sp_tl_stats {
	__u64 lost; /* events the ring buffer had no room for */
};

#endif
