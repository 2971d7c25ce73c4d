/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Types shared by bpf/sched.bpf.c and its loader (src/sched.c). Fixed width, padded. */
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

struct sp_caller_val {
	__u64 count;
	__u64 offcpu_ns;
	__u64 max_ns;
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
};

/* Drop counters, read from .bss after the run. */
struct sp_sched_drops {
	__u64 stack_fail;	/* bpf_get_stack() failed: counted as [unknown] */
	__u64 stack_map_full;	/* stack not kept: counted, but no --stacks entry */
	__u64 caller_map_full;	/* row could not be created: counted in totals only */
	__u64 stackagg_map_full;
	__u64 task_storage_fail;/* no off-CPU time for that sleep */
};

#endif
