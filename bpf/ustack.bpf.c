// SPDX-License-Identifier: GPL-2.0-only
/* The user-stack maps every view shares (declared in ustack.bpf.h). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#define SP_USTACK_DEFINE
#include "ustack.bpf.h"

struct sp_prof_ucache_stats prof_ucache_stats;
const volatile __u32 ustack_timed = 0;
const volatile __u32 ustack_off = 0;
