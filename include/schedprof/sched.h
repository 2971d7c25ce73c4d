/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Types shared by src/views/schedules/schedules.bpf.c and its loader
 * (src/views/schedules/collect.c). Fixed width, padded.
 */
#ifndef SCHEDPROF_SCHED_H
#define SCHEDPROF_SCHED_H

#include "schedprof/limits.h"
#include "schedprof/fold.h"

/* Row of the exact schedules-by-caller count (never depends on the stack map). */
struct sp_caller_key {
	__u64 caller;
	__u32 wait; /* enum sp_wait */
	__u32 pad;
	char comm[TASK_COMM_LEN];
};

/*
 * Run-queue latency histogram of a row: slot i counts the waits of [2^i, 2^(i+1)) ns (slot 0
 * also counts 0 ns), the last slot every longer wait (2^35 ns is 34 s).
 */
#define SP_RUNQ_SLOTS 36

struct sp_caller_val {
	__u64 count;
	__u64 offcpu_ns;   /* = blocked_ns + runq_ns */
	__u64 max_ns;
	__u64 blocked_ns;  /* switch-out to wake-up */
	__u64 runq_ns;	   /* wake-up to switch-in ([preempted]: all of it) */
	__u64 runq_max_ns; /* the longest finished run-queue wait */
	__u64 unfinished;  /* sleeps still in progress at the stop (charged up to it) */
	__u64 window_blocked_ns; /* the part of blocked_ns inside the trace's window: the budget's */
	__u64 throttled_ns; /* the part of runq_ns its CFS bandwidth group (or an ancestor) was throttled */
	__u64 migrated;	    /* sleeps ended on another CPU than the one they began on */
	__u64 migrated_runq_ns; /* the part of runq_ns of those */
	__u32 runq_hist[SP_RUNQ_SLOTS]; /* finished run-queue waits, by log2 of their ns */
};

/* Who woke a row's sleeps: the waker's context, comm and (--wakers) function. */
enum sp_waker_ctx {
	SP_WAKER_TASK = 0,
	SP_WAKER_HARDIRQ, /* comm "[irq]" (NMI included) */
	SP_WAKER_SOFTIRQ, /* comm "[softirq]" (ksoftirqd included) */
};

struct sp_waker_key {
	struct sp_caller_key row;  /* the row of the sleep the wake-up ended */
	__u64 function;		   /* SP_WAKER_* (fold.h) or the first frame outside the machinery */
	__u32 ctx;		   /* enum sp_waker_ctx */
	__u32 pad;
	char comm[TASK_COMM_LEN];  /* the waking task's; zeroed in interrupt context */
};

/*
 * One CPU's wakers not yet in the `wakers` map, as its takers (struct sp_taker_pcpu): a
 * wake-up whose waker is one of the CPU's last SP_WAKER_SLOTS (by its key's tag) adds to its
 * slot instead of hashing its key into the map (a pipe ping-pong's every switch-in has the
 * same waker); another takes a slot in turn, whose waker goes to the map first. The same
 * generation marks, first and last.
 */
#define SP_WAKER_SLOTS 4

struct sp_waker_slot {
	struct sp_waker_key key;
	__u64 count;
	__u64 tag;
};

struct sp_waker_pcpu {
	__u64 gen_begin;
	__u64 evict;
	struct sp_waker_slot last[SP_WAKER_SLOTS];
	__u64 gen_end;
};

/*
 * Who took a row's CPU while its tasks waited for one. At the switch-in that ends a wait for a
 * CPU (after a wake-up or a preemption), SP_TAKER_BEFORE is the task that ran on that CPU just
 * before it, with its last run's overlap with the wait; after a preemption, SP_TAKER_PREEMPTOR
 * is the task that preempted it, with the wait that followed. Keyed like the wakers, by the
 * taker's comm and cgroup, and whether it was in the traced set.
 */
enum sp_taker_kind {
	SP_TAKER_PREEMPTOR = 0,
	SP_TAKER_BEFORE = 1,
};

struct sp_taker_key {
	struct sp_caller_key row; /* the row of the wait */
	__u64 cgroup;		  /* the taker's cgroup v2 id (0: none) */
	__u32 kind;		  /* enum sp_taker_kind */
	__u32 inside;		  /* 1: the taker was a traced task */
	char comm[TASK_COMM_LEN];
};

struct sp_taker_val {
	__u64 count;
	__u64 ns; /* BEFORE: its runs' overlap with the waits; PREEMPTOR: the waits */
};

struct sp_taker_slot {
	struct sp_taker_key key;
	struct sp_taker_val val;
	__u64 tag; /* a 64-bit hash of key: it stands for the key among a CPU's few slots */
};

/*
 * One CPU's takers not yet in the `takers` map: a switch-in whose taker is one of the CPU's
 * last SP_TAKER_SLOTS (found by its key's tag) adds to its slot instead of building and
 * hashing its 64-byte key into the map (a pinned pipe
 * ping-pong alternates two: each task's row with the other as its taker); another one takes a
 * slot in turn, whose taker goes to the map first. User space adds what the slots hold to
 * what the map holds, at every read.
 *
 * gen_begin and gen_end (first and last: a copy of the value reads them first and last) let
 * a copy taken while sp_switch runs on that CPU tell whether it saw a slot being taken:
 * taker_new() sets gen_end to the next generation, changes the slots and the map, then sets
 * gen_begin to it. A copy whose gen_begin equals its gen_end saw no slot half-taken.
 */
#define SP_TAKER_SLOTS 4

struct sp_taker_pcpu {
	__u64 gen_begin;
	struct sp_taker_key next; /* a taker being counted, when its slot is new */
	char prev_comm[TASK_COMM_LEN]; /* the task switched out at that switch-in */
	__u64 prev_cg;
	__u64 evict; /* the slot to take next, in turn */
	struct sp_taker_slot last[SP_TAKER_SLOTS];
	__u64 gen_end;
};

/* Per (stack, comm, process): the full stacks behind the rows. */
struct sp_stack_key {
	__u64 stack; /* hash of the frames, key of the `stacks` map; 0 = not kept */
	__u64 caller;
	__u32 wait;
	__u32 tgid; /* process (thread group) of the task that slept */
	char comm[TASK_COMM_LEN];
};

struct sp_stack_val {
	__u64 count;
	__u64 offcpu_ns;
};

struct sp_stack {
	__u32 nr;
	__u32 pad;
	__u64 ip[SP_MAX_STACK_DEPTH];
};

/* Totals, read from .bss: every switch-out of a traced task, row or not. */
struct sp_sched_counts {
	__u64 total;
	__u64 voluntary;
	__u64 preempted;
	__u64 idle;
	/* the caller fast path (schedules.bpf.c fast_caller) */
	__u64 callers_fast;	  /* voluntary switches attributed from the raw stack words */
	__u64 callers_verified;	  /* of those, checked by a full walk too */
	__u64 callers_mismatched; /* of those, the full walk disagreed (its answer was kept) */
	__u64 callers_fast_off;	  /* the program's local was not on the task's stack: full walk */
	/* the same for whole kept stacks (full stacks: --stacks, -g) and wakers' (--wakers) */
	__u64 stacks_fast;
	__u64 stacks_verified;
	__u64 stacks_mismatched;
	__u64 stacks_off;
	__u64 wakes_fast;
	__u64 wakes_verified;
	__u64 wakes_mismatched;
	__u64 wakes_off;
	__u64 wakes_walked; /* wake-ups whose waker's stack was looked for */
	__u64 stacks_memo;  /* of stacks_fast and wakes_fast: from the memo (struct sp_kmemo) */
	__u64 wakes_memo;
};

/* Where a task is, as the switches and wake-ups tell it. */
enum sp_task_state {
	SP_TS_NONE = 0, /* storage just created */
	SP_TS_RUNNING,	/* on a CPU since ts_in */
	SP_TS_OFF,	/* switched out at ts: asleep, or preempted (key.caller) */
	SP_TS_NEW,	/* a new task, woken at wake_ts, not yet run */
	SP_TS_DEAD,	/* its last switch was done: nothing more */
};

/*
 * A traced task's state since its last event: the schedules view's task storage, and what
 * the stop's task iterator writes for the tasks still running, asleep or waiting for a CPU.
 *
 * In the order the programs touch it (task storage data starts 16 bytes into a cache line:
 * bpf_mem_alloc's 8-byte header, the element's line-aligned data part and its map pointer,
 * which the lookup reads): the wake-up's fields and ts in the first 48 bytes, so sp_waking
 * touches one line of the wakee's storage; the rest of a switch's in the next 64.
 * A preempted task's waker fields name its preemptor instead (struct sp_taker_key): waker_comm
 * its comm, waker_fn its cgroup, waker_ctx 1 when it was traced.
 */
struct sp_sleep {
	__u32 state;	/* enum sp_task_state */
	__u32 waker_ctx; /* enum sp_waker_ctx */
	__u64 wake_ts;	/* the last wake-up since the switch-in; 0: none */
	__u64 waker_fn; /* SP_WAKER_* or the waker's function (--wakers) */
	char waker_comm[TASK_COMM_LEN];
	__u64 ts;	/* switch-out */
	__u64 ts_in;	/* switch-in */
	__u64 stack;
	struct sp_caller_key key;
	__u32 tgid;	/* the stack key's process (the caller key has none: it must not split) */
	__u32 pid;	/* written by the stop's iterator only */
	__u32 cpu;	/* of the switch-out; at the switch-in, 0 when the same (cpu_in()) */
};

/*
 * A preempted task whose CFS group (or an ancestor) was throttled by its quota at its
 * switch-out (quota_check only; flagged in its task storage, target.bpf.h struct sp_task):
 * kept by pid until its switch-in, and read by user space at the stop for those still waiting.
 */
struct sp_throttled {
	__u64 cg;   /* the cgroup id of the task's own group (user space finds the quota) */
	__u64 cfs;  /* the task's cfs_rq at the switch-out: the one throttled on that CPU */
	__u64 self; /* its throttled_clock_self_time then (Linux 6.7+; else 0) */
};

/*
 * The job's time budget (one per CPU, summed by user space): times inside the trace's window
 * [trace_t0, stop] of the traced tasks, idle tasks excepted. The blocked time is by row
 * (sp_caller_val.window_blocked_ns), plus blocked_norow_ns here.
 */
struct sp_budget_counts {
	__u64 oncpu_ns;
	__u64 runq_ns;
	__u64 blocked_norow_ns; /* blocked in no row: since before the trace, or the row was lost */
	__u64 tasks;		/* tasks seen (a switch or a wake-up of a new task in the window) */
	__u64 throttled_ns;	/* the part of runq_ns throttled by a CFS quota (quota_check) */
	/*
	 * With steal_split: the sum over the traced tasks' slices in the window of their wall
	 * time minus their sum_exec_runtime's advance (a two's complement sum: each slice's
	 * difference is steal plus IRQ time, with jitter of either sign).
	 */
	__u64 stolen_ns;
};

/*
 * One CPU's counters of the schedules view (the per-CPU `sched_pcpu` map, summed by user
 * space): written with plain adds by that CPU's programs only, so a switch pays no atomic
 * and no cache line shared with the other CPUs.
 */
struct sp_sched_pcpu {
	struct sp_budget_counts budget;
	struct sp_sched_counts counts;
};

/* Drop counters, read from .bss after the run. */
struct sp_sched_drops {
	__u64 stack_fail;	/* bpf_get_stack() failed: counted as [unknown] */
	__u64 stack_map_full;	/* stack not kept: counted, but no --stacks entry */
	__u64 caller_map_full;	/* row could not be created: counted in totals only */
	__u64 stackagg_map_full;
	__u64 task_storage_fail;/* no off-CPU time for that sleep */
	__u64 waker_map_full;	/* a wake-up counted in its row, but not under its waker */
	__u64 wake_stack_fail;	/* --wakers: the waker's stack could not be read: [unknown] */
	__u64 switch_in_missed;	/* switched out with no switch-in seen: placed from its runtime */
	__u64 frame_map_full;	/* a frame's distance could not be learned (frame_dist full) */
	__u64 throttled_map_full; /* a throttled wait counted as waiting for a CPU */
	__u64 taker_map_full;	/* waits counted in their rows, but under no taker */
};

#endif
