/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Limits and defaults shared by the BPF programs and user space. */
#ifndef SCHEDPROF_LIMITS_H
#define SCHEDPROF_LIMITS_H

#ifndef TASK_COMM_LEN
#define TASK_COMM_LEN 16
#endif

/* Deepest kernel stack kept; the first frames are the BPF trampoline's. */
#define SP_MAX_STACK_DEPTH 64

/* Default map sizes; each is an option of `schedprof trace`. */
#define SP_DEF_TARGETS 8192	/* tgids named by the user or found in /proc */
#define SP_DEF_CALLERS 16384	/* (caller, wait, comm) rows of the schedules view */
#define SP_DEF_STACKS 16384	/* distinct kernel stacks kept for --stacks */
#define SP_MAX_THROTTLED_CGS 64	/* cgroups whose tasks' throttled time is kept apart */
#define SP_MAX_THROTTLED_TASKS 4096 /* tasks throttled by a CPU quota at once */
/*
 * Tasks with per-task state at once where it is kept in preallocated hashes (PREEMPT_RT
 * before Linux 6.4: bpf/common.bpf.h task_hash), at most: pid_max when lower.
 */
#define SP_MAX_TASK_STATES 65536

/* CPUs whose runqueue address BPF keeps (sp_cpu_rq, bpf/common.bpf.c); others read it anew. */
#define SP_MAX_CPUS 1024

/* Address ranges (from kallsyms) of sleeping-lock slow paths, used to name the wait. */
#define SP_MAX_LOCK_RANGES 16

#endif
