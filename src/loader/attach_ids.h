/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel BTF type IDs our BTF-attached programs name (tp_btf/X: the typedef btf_trace_X,
 * iter/X: the function bpf_iter_X), cached per boot, so that libbpf need not parse the
 * kernel's whole BTF (every type, and a copy of the file) at every start.
 *
 * What libbpf 1.1's bpf_object__load() wants of the kernel's BTF (obj->btf_vmlinux):
 *  - bpf_object__load_vmlinux_btf() calls btf__load_vmlinux_btf() when an autoloaded program
 *    is TRACING (tp_btf, iter, fentry...), LSM or STRUCT_OPS, a typed __ksym extern exists,
 *    or CO-RE relocations have no btf_custom_path;
 *  - libbpf_prepare_prog_load() -> find_kernel_btf_id(): btf__find_by_name_kind(btf_vmlinux,
 *    "btf_trace_X", TYPEDEF) (iter: "bpf_iter_X", FUNC) per autoloaded program; -ENOENT there
 *    makes load_module_btfs() parse every module's BTF as split BTF on top of btf_vmlinux;
 *  - find_ksym_btf_id() (typed __ksym and kfunc externs), bpf_map__init_kern_struct_ops()
 *    (struct_ops maps), bpf_core_find_cands() (CO-RE without btf_custom_path: with it, the
 *    override and never the modules) and bpf_program__set_attach_target() (loads it itself);
 *  - btf__free() of it at the end of the load.
 * The feature probes, map creation, raw_tp and perf_event programs and the attach calls do
 * not touch it. Our object has tp_btf, iter, raw_tp and perf_event programs, no externs, no
 * struct_ops, and CO-RE relocates against the boot's CO-RE BTF (corebtf.h): only the attach
 * targets' IDs are wanted, and attach_ids_arm() checks that before it stands in for the BTF.
 *
 * The cache (/run/schedprof/attach.cache, cache.h: this boot, kernel and build) holds,
 * per target name and kind, its ID and the place of its type record in the kernel's BTF file,
 * under the identity of that file (its header and size). Before it is used, each target's
 * record is read back from /sys/kernel/btf/vmlinux at that place (a few small preads): the
 * kind and the name must be the target's, and the IDs must be in the order of their places
 * (each record is at least 12 bytes on from the one before: two IDs swapped, or one far off,
 * fail). The ID-to-place pairing itself comes from libbpf's own parse of this boot's BTF
 * (checked the same way before it is written) and is covered by the cache's hash: a damaged,
 * stale or foreign file is not used, it is made again. It matters: the kernel accepts a
 * tp_btf program with the ID of another btf_trace_ typedef whose arguments it can verify,
 * and attaches it to that tracepoint (tests/integration/test_attachids.sh checks the links).
 */
#ifndef SCHEDPROF_ATTACH_IDS_H
#define SCHEDPROF_ATTACH_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_object;
struct btf;

#define ATTACH_NAME_MAX 116 /* with its NUL: a cache entry is 128 bytes */
#define ATTACH_CACHE_MAX 256 /* entries in the cache file */

struct attach_target {
	char name[ATTACH_NAME_MAX]; /* as libbpf looks it up: "btf_trace_sched_switch" */
	uint32_t kind;		    /* BTF_KIND_TYPEDEF or BTF_KIND_FUNC */
	uint32_t id;		    /* in the kernel's BTF; 0: not there, or not known yet */
	uint32_t off;		    /* of its type record, from the start of the type section */
	bool needed;		    /* an autoloaded program's target (not cached) */
};

struct attach_ids {
	struct attach_target *v;
	size_t n, cap;
};

/* What identifies the kernel's BTF file within a boot: its header's first bytes, its size. */
struct attach_kbtf {
	uint8_t hdr[24];
	uint64_t size;
};

/* Adds name/kind (once: needed is or'ed). 0, -ENAMETOOLONG or -ENOMEM. */
int attach_ids_add(struct attach_ids *ids, const char *name, uint32_t kind, bool needed);
struct attach_target *attach_ids_find(const struct attach_ids *ids, const char *name,
				      uint32_t kind);
void attach_ids_free(struct attach_ids *ids);

/*
 * The attach targets of every program of obj that libbpf resolves in the kernel's BTF (the
 * autoloaded ones needed). -EOPNOTSUPP when the load would want the kernel's BTF for more
 * than those (typed ksyms or kfuncs, struct_ops, freplace, a target set at run time).
 */
int attach_ids_of_object(const struct bpf_object *obj, struct attach_ids *ret);
/* Fills each target's id and off from kbtf, a parse of the kernel's BTF file (0 when absent). */
int attach_ids_resolve(struct attach_ids *ids, const struct btf *kbtf);

/* Opens the kernel's BTF file path and reads its identity: the fd, or -errno. */
int attach_kbtf_open(const char *path, struct attach_kbtf *ret);
/*
 * Whether each known target (id != 0) is at its place in the BTF file fd of identity k: a
 * record of its kind with its name. 0, -ESTALE (one is not) or -errno.
 */
int attach_ids_check(int fd, const struct attach_kbtf *k, const struct attach_ids *ids);

/* The cache's data (after the cache.h header): *ret_buf malloc'd. Known targets only. */
int attach_ids_encode(const struct attach_ids *ids, const struct attach_kbtf *k, void **ret_buf,
		      size_t *ret_len);
/* The reverse: -EINVAL when buf is not exactly such data (damaged, cut short, too long). */
int attach_ids_decode(const void *buf, size_t len, struct attach_kbtf *k, struct attach_ids *ret);
/* The boot's cache in dir (NULL: /run/schedprof): 0, -ENOENT (none valid) or -errno. */
int attach_ids_cache_load(const char *dir, struct attach_kbtf *k, struct attach_ids *ret);
int attach_ids_cache_store(const char *dir, const struct attach_kbtf *k,
			   const struct attach_ids *ids);

/*
 * Standing in for the kernel's BTF during one bpf_object__load(). The executable routes
 * libbpf's btf__load_vmlinux_btf(), btf__find_by_name_kind() and btf__free() here
 * (btf_interpose.c):
 *
 *   attach_ids_arm(NULL, NULL, obj, true);   before bpf_object__load(obj)
 *   bpf_object__load(obj);             libbpf takes the BTF (attach_ids_take_vmlinux())
 *   attach_ids_done(&stats);           and the log says how it went
 *
 * arm() reads the cache; when it holds every autoloaded program's target, checked against the
 * BTF file, libbpf is given a placeholder (an empty BTF) and its lookups on it are answered
 * from the cache. Otherwise (no cache, another kernel BTF, a target not in it, a damaged
 * file) arm() parses the kernel's BTF once, resolves and caches the targets, and libbpf gets
 * that real BTF, as without the cache. A lookup on the placeholder for anything not cached
 * (nothing libbpf 1.1 asks for our object) parses the real BTF then and answers from it;
 * never -ENOENT, which would make libbpf read the modules' BTF on top of the placeholder:
 * -ESRCH instead, and the load fails. btf__type_by_id() and the like on the placeholder
 * find nothing (an empty BTF): an error, never a wrong type.
 */
struct attach_ids_stats {
	bool armed;		 /* false: libbpf reads the kernel's BTF itself (why says why) */
	bool hit;		 /* the IDs came from the boot's cache (libbpf got the placeholder) */
	bool stored;		 /* a miss's IDs were cached */
	const char *why;	 /* not armed, or why a miss */
	int err;		 /* with why: the error, when there was one */
	double ms;		 /* arm(): the cache read and check, or the parse and store */
	size_t targets, needed;	 /* the object's targets, the autoloaded programs' */
	unsigned int unexpected; /* lookups on the placeholder the cache did not answer */
};

/*
 * dir: the cache's (NULL: /run/schedprof); kbtf_path: NULL for /sys/kernel/btf/vmlinux.
 * core_btf: obj was opened with a btf_custom_path (corebtf.h). Without one, libbpf searches
 * the kernel's BTF for CO-RE candidates, where a placeholder would silently have none: then
 * nothing is armed.
 */
void attach_ids_arm(const char *dir, const char *kbtf_path, const struct bpf_object *obj,
		    bool core_btf);
/* The BTF for libbpf's btf__load_vmlinux_btf(), once after arm(): NULL when not armed. */
struct btf *attach_ids_take_vmlinux(void);
/* For btf__find_by_name_kind(): true (*ret: the ID or -errno) when btf is the placeholder. */
bool attach_ids_answer(const struct btf *btf, const char *name, uint32_t kind, int *ret);
/* For btf__free(): the placeholder is no longer answered for. */
void attach_ids_forget(const struct btf *btf);
/* Ends it: *ret how it went. Frees what libbpf did not take. */
void attach_ids_done(struct attach_ids_stats *ret);
/* One line for the log: "from the boot's cache (11 targets) in 0.1 ms", ... */
void attach_ids_describe(const struct attach_ids_stats *s, char *buf, size_t len);

#endif /* SCHEDPROF_ATTACH_IDS_H */
