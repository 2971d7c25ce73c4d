// SPDX-License-Identifier: GPL-2.0-only
/* The globals every bpf/ object shares (declared in common.bpf.h). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct sp_fold_cfg fold_cfg = {};

__u64 trace_t0 = 0;

const volatile __u32 switch_sched = 0;
const volatile __u32 switch_locks = 0;

const volatile __u32 has_preempt_rq_off = 0;
const volatile __s64 preempt_rq_off = 0;

/* ip's class for the fold: bit 0 in the scheduler's text, its wait class above (common.bpf.h). */
__noinline int fold_class(__u64 ip)
{
	return sp_fold_in_text(&fold_cfg, ip) | (int)sp_fold_wait_of(&fold_cfg, ip) << 1;
}
