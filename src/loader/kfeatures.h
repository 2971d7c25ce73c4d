/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel features the BPF programs need or choose a faster way by, found once per boot by
 * loading a tiny probe program for each (featprobe.h) and cached (kfeatures_cache_*()), so
 * that a missing one is named in one line with the Linux version that brings it, instead of
 * a verifier log, the views that do not need it still run, and a backported kernel gets the
 * fast way while a kernel whose release is new but lacks the feature gets the old one. The
 * release is never asked. The kernel's BTF answers here too (kfeatures_probe()): the tests
 * use it to stand in a BTF file for the running kernel's.
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
	SP_FEAT_TP_BTF,		/* tp_btf programs: every view */
	SP_FEAT_TRUSTED_TASK,	/* bpf_get_current_task_btf(), tp_btf task arguments: every view */
	SP_FEAT_ITER_TASK,	/* iter/task: the sleeps in progress at the stop (schedules) */
	/* ways, not needs: without them the programs take an older, slower way */
	SP_FEAT_MEM_KEY,	/* map keys and values in task storage or a global's argument */
	SP_FEAT_ARG_UNTRUSTED,	/* __arg_untrusted arguments: the user stacks read the task once */
	/* task storage a program may create where it cannot sleep (kfeatures_storage_nosleep()) */
	SP_FEAT_STORAGE_NOSLEEP,
	/* the kernel's configuration, not BPF: read from its config file (no probe, no BTF) */
	SP_FEAT_STEAL_SPLIT,	/* the task clock leaves out steal or IRQ time: the budget's stolen */
	SP_FEAT__MAX,
};

#define SP_FEAT(f) (1u << (f))

struct sp_features {
	bool has[SP_FEAT__MAX];
};

/* "task_storage": the feature's name in the cache and in -v's lines; NULL when out of range */
const char *kfeatures_key(enum sp_feature feat);

/*
 * The cache (cache.h: this boot, kernel and build), dir NULL: /run/schedprof. Its data
 * is text, a line "KEY 0|1" per feature: a file that lacks a feature, names one twice or one
 * unknown (written by another version) is not this cache, and the probes run again.
 * Load: 0, -ENOENT (no valid cache) or -errno; store: 0 or -errno.
 */
int kfeatures_cache_load(const char *dir, struct sp_features *f);
int kfeatures_cache_store(const char *dir, const struct sp_features *f);
/* The text itself: its length (at most len - 1, NUL-terminated), or -ENOSPC. */
int kfeatures_encode(const struct sp_features *f, char *buf, size_t len);
/* 0, or -EINVAL (f untouched) */
int kfeatures_decode(const char *buf, size_t len, struct sp_features *f);
/*
 * Turns off the features named in list ("mem_key,arg_untrusted"), for the tests to run the
 * older ways on a kernel that has the new ones. 0, or -EINVAL naming no feature (f untouched).
 */
int kfeatures_force_off(struct sp_features *f, const char *list);

/*
 * Whether a BPF program that cannot sleep (sched_switch, with interrupts off) may create task
 * storage on the kernel of btf: false only on PREEMPT_RT (its spinlock_t is an rt_mutex: no
 * `rlock` in struct spinlock) when task storage is allocated by kmalloc (no bpf_mem_alloc
 * caches in struct bpf_local_storage_map: before Linux 6.4). There every kmalloc takes the
 * slab's per-CPU lock, a sleeping lock on PREEMPT_RT: the programs keep their per-task state
 * in preallocated hashes instead (bpf/common.bpf.h task_hash). What no program can show
 * (the verifier takes both): BTF tells, for the probes too (featprobe_run()).
 */
bool kfeatures_storage_nosleep(const struct btf *btf);

/*
 * Whether the kernel configuration text at path (gzip'd or plain; NULL: the running kernel's,
 * /proc/config.gz else /boot/config-RELEASE) has CONFIG_PARAVIRT_TIME_ACCOUNTING or
 * CONFIG_IRQ_TIME_ACCOUNTING set: then the task clock leaves that time out of a task's run
 * (SP_FEAT_STEAL_SPLIT). false when it cannot be read. Found with the probes (featprobe.h)
 * and cached with them: a config is fixed for a boot, and reading it costs a gunzip.
 */
bool kfeatures_config_splits_steal(const char *path);

/* Fills f from btf (a kernel's, as btf__load_vmlinux_btf() returns it); not the config's. */
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
