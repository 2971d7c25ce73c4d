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
