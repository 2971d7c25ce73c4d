// SPDX-License-Identifier: GPL-2.0-only
/* The globals every bpf/ object shares (declared in common.bpf.h). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "common.bpf.h"
#include "compat.bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct sp_fold_cfg fold_cfg = {};

__u64 trace_t0 = 0;

const volatile __u64 sp_zeros[SP_ZEROS_BYTES / 8] = {};

const volatile __u32 task_hash = 0;
__u64 task_state_full = 0;

const volatile __u32 switch_sched = 0;
const volatile __u32 switch_locks = 0;

const volatile __u32 has_preempt_rq_off = 0;
const volatile __s64 preempt_rq_off = 0;
__u64 sp_cpu_rq[SP_MAX_CPUS];
/* Each CPU's runqueue lock (sp_cpu_probe), for user space to name contention on it. */
__u64 sp_cpu_rq_lock[SP_MAX_CPUS];

/*
 * Run once on each CPU before attach (BPF_PROG_TEST_RUN with BPF_F_TEST_RUN_ON_CPU, trace_load.c):
 * that CPU's runqueue and its lock, reached from whatever task runs there.
 * - sp_preempt_count() then needs no pointer chase through current at every wake-up (nor
 *   the verifier its search, at load, of the kernel's BTF for what such a load may be
 *   trusted with, which was most of sp_waking's verification).
 * - The locks view names contention on any CPU's runqueue lock. Typed __ksym `runqueues`
 *   would be simpler, but needs the per-CPU symbol in kallsyms (CONFIG_KALLSYMS_ALL), which
 *   many kernels lack.
 */
SEC("raw_tp")
int sp_cpu_probe(void *ctx)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 rq = sp_task_rq(t), off;

	if (cpu >= SP_MAX_CPUS)
		return 0;
	sp_cpu_rq[cpu] = rq;
	if (rq && sp_rq_lock_off(&off))
		sp_cpu_rq_lock[cpu] = rq + off;
	return 0;
}

/*
 * ip's wait class: a global function of its own, so its loop over the lock ranges (walked
 * once per range by the verifier) is walked once, not once per way fold_class() reached it
 * (the text's answer, the I/O ranges' exits), in each program that folds.
 */
/* verifier: global: its loop over the lock ranges walked once, not per path into fold_class() */
__noinline int fold_wait(__u64 ip)
{
	return (int)sp_fold_wait_of(&fold_cfg, ip);
}

/* ip's class for the wakers' fold: bit 0 in the wake-up machinery, bit 1 a timer's (fold.h). */
/* verifier: global, as fold_class() */
__noinline int wake_class(__u64 ip)
{
	return sp_fold_in_ranges(fold_cfg.wake_ranges, fold_cfg.nr_wake_ranges,
				 SP_MAX_WAKE_RANGES, ip) |
	       sp_fold_in_ranges(fold_cfg.timer_ranges, fold_cfg.nr_timer_ranges,
				 SP_MAX_TIMER_RANGES, ip) << 1;
}

/* ip's class for the fold: bit 0 in the scheduler's text, its wait class above (common.bpf.h). */
/* verifier: global, checked once for every fold of every program, not at each call */
__noinline int fold_class(__u64 ip)
{
	return sp_fold_in_text(&fold_cfg, ip) | fold_wait(ip) << 1;
}
