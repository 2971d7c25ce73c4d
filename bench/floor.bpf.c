// SPDX-License-Identifier: BSD-2-Clause
/*
 * bench/floor.bpf.c -- the floor of bench/compare.sh: an EMPTY program on tp_btf/sched_switch,
 * the same attach type as schedprof's sp_switch. Its slowdown and bpf_stats ns per run are what
 * any BPF sched_switch tracer pays before it does anything (dispatch, and bpf_stats' own clock
 * reads). Built by compare.sh with clang -target bpf; no vmlinux.h needed.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("tp_btf/sched_switch")
int floor_switch(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
