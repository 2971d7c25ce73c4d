/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel features the BPF programs need, read from the kernel's BTF at start-up (as perf's
 * off-CPU code does), so that a missing one is named in one line with the Linux version
 * that brings it, instead of a verifier log, and the views that do not need it still run.
 */
#ifndef SCHEDPROF_KFEATURES_H
#define SCHEDPROF_KFEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct btf;

enum sp_feature {
	SP_FEAT_TASK_STORAGE,	/* BPF_MAP_TYPE_TASK_STORAGE: the traced-task set, every view */
	SP_FEAT_RINGBUF,	/* BPF_MAP_TYPE_RINGBUF: profile's process notifications */
	SP_FEAT_LOOP,		/* bpf_loop(): the stack walks */
	SP_FEAT_SWITCH_TP,	/* tp_btf sched_switch with its prev_state argument */
	SP_FEAT_LOCK_TP,	/* lock:contention_begin/end */
	SP_FEAT__MAX,
};

#define SP_FEAT(f) (1u << (f))

struct sp_features {
	bool has[SP_FEAT__MAX];
};

/* Fills f from btf (a kernel's, as btf__load_vmlinux_btf() returns it). */
void kfeatures_probe(const struct btf *btf, struct sp_features *f);
/* The same from a BTF file (NULL: the running kernel's). 0 or -errno (f untouched). */
int kfeatures_probe_file(const char *path, struct sp_features *f);

/* The first feature of the SP_FEAT() mask `need` that f lacks, or -1 when none is missing. */
int kfeatures_first_missing(const struct sp_features *f, unsigned int need);
/* "this kernel has no bpf_loop() (Linux 5.17)": the one line that names a missing feature. */
void kfeatures_describe(enum sp_feature feat, char *buf, size_t len);

/*
 * Where the current CPU's preempt count lies from the current CPU's runqueue, in bytes: the
 * distance between the per-CPU variables __preempt_count (x86; pcpu_hot.preempt_count from
 * Linux 6.2 to 6.14) and runqueues in the .data..percpu section (BTF DATASEC), which is the
 * distance of their copies for any one CPU. BPF reads it at rq + *ret, with rq reached from
 * current (compat.bpf.h): the variable itself is not in kallsyms without
 * CONFIG_KALLSYMS_ALL, so a __ksym reference to it cannot load there. 0, or -ENOENT
 * (not x86, or not in this BTF).
 */
int kfeatures_preempt_rq_off(const struct btf *btf, int64_t *ret);
/* The same from a BTF file (NULL: the running kernel's). 0 or -errno. */
int kfeatures_preempt_rq_off_file(const char *path, int64_t *ret);

#endif
