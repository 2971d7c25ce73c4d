// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel features: their names, the per-boot cache of what the probes found (featprobe.c),
 * and what the kernel's BTF says of some: enumerators of the kernel's own enums (helpers, map
 * types) and the BTF typedefs the kernel emits for each tracepoint (btf_trace_<name>), which
 * tp_btf programs attach to. Reading BTF needs no privilege: the unit tests run it on
 * /sys/kernel/btf/vmlinux and on small BTF files they build.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <zlib.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "loader/cache.h"
#include "loader/kfeatures.h"
#include "loader/vmlinux_btf.h"
#include "base/util.h"

/* text, a line per feature */

static const struct {
	const char *key;
	const char *what;
	const char *since;
} feature_info[SP_FEAT__MAX] = {
	[SP_FEAT_TASK_STORAGE] = { "task_storage", "BPF task storage", "5.11" },
	[SP_FEAT_RINGBUF] = { "ringbuf", "BPF ring buffer", "5.8" },
	[SP_FEAT_LOOP] = { "bpf_loop", "bpf_loop()", "5.17" },
	[SP_FEAT_SWITCH_TP] = { "switch_prev_state", "prev_state in the sched_switch tracepoint",
				"5.18" },
	[SP_FEAT_LOCK_TP] = { "contention_tp", "lock:contention_begin tracepoint", "5.19" },
	[SP_FEAT_TP_BTF] = { "tp_btf", "BTF-typed tracepoint programs (tp_btf)", "5.5" },
	[SP_FEAT_TRUSTED_TASK] = { "trusted_task",
				   "bpf_get_current_task_btf() and trusted task arguments",
				   "5.11" },
	[SP_FEAT_ITER_TASK] = { "iter_task", "BPF task iterator", "5.8" },
	[SP_FEAT_MEM_KEY] = { "mem_key", "map keys in non-stack memory", "6.2" },
	[SP_FEAT_ARG_UNTRUSTED] = { "arg_untrusted", "__arg_untrusted arguments", "6.17" },
	[SP_FEAT_STORAGE_NOSLEEP] = { "storage_nosleep",
				      "task storage created without a sleeping lock",
				      "6.4 on PREEMPT_RT" },
	[SP_FEAT_STEAL_SPLIT] = { "steal_split",
				  "task clock without steal or IRQ time (CONFIG_*_TIME_ACCOUNTING)",
				  "2.6.39" },
};

const char *kfeatures_key(enum sp_feature feat)
{
	return (unsigned int)feat < SP_FEAT__MAX ? feature_info[feat].key : NULL;
}

int kfeatures_encode(const struct sp_features *f, char *buf, size_t len)
{
	size_t n = 0;

	for (int i = 0; i < SP_FEAT__MAX; i++) {
		int w = snprintf(buf + n, len > n ? len - n : 0, "%s %d\n", feature_info[i].key,
				 f->has[i] ? 1 : 0);

		if (w < 0 || (size_t)w >= (len > n ? len - n : 0))
			return -ENOSPC;
		n += (size_t)w;
	}
	return (int)n;
}

/* The feature whose key is the len bytes at s, or -1. */
static int feature_by_key(const char *s, size_t len)
{
	for (int i = 0; i < SP_FEAT__MAX; i++)
		if (strlen(feature_info[i].key) == len && !memcmp(feature_info[i].key, s, len))
			return i;
	return -1;
}

int kfeatures_decode(const char *buf, size_t len, struct sp_features *f)
{
	bool seen[SP_FEAT__MAX] = {};
	struct sp_features got = {};
	size_t pos = 0;

	while (pos < len) {
		const char *line = buf + pos, *nl = memchr(line, '\n', len - pos), *sp;
		size_t n;
		int i;

		if (!nl)
			return -EINVAL; /* every line ends: a cut file is not this cache */
		n = (size_t)(nl - line);
		sp = memchr(line, ' ', n);
		if (!sp || (size_t)(nl - sp) != 2 || (sp[1] != '0' && sp[1] != '1'))
			return -EINVAL;
		i = feature_by_key(line, (size_t)(sp - line));
		if (i < 0 || seen[i])
			return -EINVAL;
		seen[i] = true;
		got.has[i] = sp[1] == '1';
		pos += n + 1;
	}
	for (int i = 0; i < SP_FEAT__MAX; i++)
		if (!seen[i])
			return -EINVAL;
	*f = got;
	return 0;
}

/* Room for every line: the longest key, a space, a digit and the newline, per feature. */
#define FEATURES_TEXT_MAX (SP_FEAT__MAX * 32)

int kfeatures_cache_load(const char *dir, struct sp_features *f)
{
	void *buf;
	size_t size;
	int err = cache_load(dir, CACHE_FEATURES, FEATURES_TEXT_MAX, &buf, &size);

	if (err)
		return err;
	err = kfeatures_decode(buf, size, f) ? -ENOENT : 0;
	free(buf);
	return err;
}

int kfeatures_cache_store(const char *dir, const struct sp_features *f)
{
	char buf[FEATURES_TEXT_MAX + 1];
	int n = kfeatures_encode(f, buf, sizeof(buf));

	/* no addresses: shared, so a CAP_BPF user starts from root's probes */
	return n < 0 ? n : cache_store(dir, CACHE_FEATURES, buf, (size_t)n);
}

int kfeatures_force_off(struct sp_features *f, const char *list)
{
	struct sp_features out = *f;
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ",");
		int i = feature_by_key(p, n);

		if (i < 0)
			return -EINVAL;
		out.has[i] = false;
		p += n;
		p += *p == ',';
	}
	*f = out;
	return 0;
}

/* Whether the enum `type` has the enumerator `name`. */
static bool has_enumerator(const struct btf *btf, const char *type, const char *name)
{
	const struct btf_type *t;
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);

	if (id <= 0)
		return false;
	t = btf__type_by_id(btf, id);
	for (int i = 0; i < btf_vlen(t); i++) {
		const char *n = btf__name_by_offset(btf, btf_enum(t)[i].name_off);

		if (n && !strcmp(n, name))
			return true;
	}
	return false;
}

/* The prototype of tracepoint tp's BTF typedef (a pointer to it), or NULL. */
static const struct btf_type *tp_proto(const struct btf *btf, const char *tp)
{
	const struct btf_type *t;
	char name[128];
	int id;

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id <= 0)
		return NULL;
	t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (!t || !btf_is_ptr(t))
		return NULL;
	t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) ? t : NULL;
}

/* 1 when struct `type` has a member `name`, 0 when not, -1 when btf has no such struct. */
static int has_member(const struct btf *btf, const char *type, const char *name)
{
	const struct btf_type *t;
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);

	if (id <= 0)
		return -1;
	t = btf__type_by_id(btf, id);
	for (int i = 0; i < btf_vlen(t); i++) {
		const char *n = btf__name_by_offset(btf, btf_members(t)[i].name_off);

		if (n && !strcmp(n, name))
			return 1;
	}
	return 0;
}

bool kfeatures_storage_nosleep(const struct btf *btf)
{
	/*
	 * PREEMPT_RT's struct spinlock holds an rt_mutex_base `lock`; the others' a raw
	 * spinlock `rlock` (in an unnamed union)
	 */
	if (has_member(btf, "spinlock", "lock") != 1)
		return true;
	return has_member(btf, "bpf_local_storage_map", "bpf_ma") == 1;
}

void kfeatures_probe(const struct btf *btf, struct sp_features *f)
{
	const struct btf_type *sw = tp_proto(btf, "sched_switch");

	memset(f, 0, sizeof(*f));
	f->has[SP_FEAT_TASK_STORAGE] = has_enumerator(btf, "bpf_map_type", "BPF_MAP_TYPE_TASK_STORAGE");
	f->has[SP_FEAT_RINGBUF] = has_enumerator(btf, "bpf_map_type", "BPF_MAP_TYPE_RINGBUF");
	f->has[SP_FEAT_LOOP] = has_enumerator(btf, "bpf_func_id", "BPF_FUNC_loop");
	/* (void *__data, bool preempt, prev, next, unsigned int prev_state) since 5.18 */
	f->has[SP_FEAT_SWITCH_TP] = sw && btf_vlen(sw) >= 5;
	/* contention_end came with it */
	f->has[SP_FEAT_LOCK_TP] = tp_proto(btf, "contention_begin") != NULL;
	f->has[SP_FEAT_TP_BTF] = tp_proto(btf, "sched_process_fork") != NULL;
	f->has[SP_FEAT_TRUSTED_TASK] = has_enumerator(btf, "bpf_func_id",
						      "BPF_FUNC_get_current_task_btf");
	f->has[SP_FEAT_ITER_TASK] = btf__find_by_name_kind(btf, "bpf_iter_task", BTF_KIND_FUNC) > 0;
	/* what the verifier takes (the ways) is not in BTF: only a probe tells, so the old ways */
	f->has[SP_FEAT_MEM_KEY] = false;
	f->has[SP_FEAT_ARG_UNTRUSTED] = false;
	f->has[SP_FEAT_STORAGE_NOSLEEP] = kfeatures_storage_nosleep(btf);
	/* nor is the config: kfeatures_config_splits_steal() */
	f->has[SP_FEAT_STEAL_SPLIT] = false;
}

/* Has the config text at path (read through zlib: gzip'd or plain) one of the options as y? */
static bool config_has_split(const char *path)
{
	static const char *const want[] = { "CONFIG_PARAVIRT_TIME_ACCOUNTING=y",
					    "CONFIG_IRQ_TIME_ACCOUNTING=y" };
	char line[256];
	bool yes = false;
	gzFile f = gzopen(path, "rb");

	if (!f)
		return false;
	while (!yes && gzgets(f, line, sizeof(line)))
		for (size_t i = 0; i < ARRAY_SIZE(want); i++)
			if (!strncmp(line, want[i], strlen(want[i])))
				yes = true;
	gzclose(f);
	return yes;
}

bool kfeatures_config_splits_steal(const char *path)
{
	struct utsname u;
	char boot[sizeof("/boot/config-") + sizeof(u.release)];

	if (path)
		return config_has_split(path);
	if (!access("/proc/config.gz", R_OK))
		return config_has_split("/proc/config.gz");
	if (uname(&u))
		return false;
	snprintf(boot, sizeof(boot), "/boot/config-%s", u.release);
	return config_has_split(boot);
}

int kfeatures_probe_file(const char *path, struct sp_features *f)
{
	struct btf *btf = path ? btf__parse(path, NULL) : vmlinux_btf_load();

	if (!btf)
		return errno ? -errno : -EINVAL;
	kfeatures_probe(btf, f);
	btf__free(btf);
	return 0;
}

int kfeatures_first_missing(const struct sp_features *f, unsigned int need)
{
	for (int i = 0; i < SP_FEAT__MAX; i++)
		if ((need & SP_FEAT(i)) && !f->has[i])
			return i;
	return -1;
}

void kfeatures_describe(enum sp_feature feat, char *buf, size_t len)
{
	if ((unsigned int)feat >= SP_FEAT__MAX) {
		snprintf(buf, len, "this kernel lacks a feature schedprof needs");
		return;
	}
	snprintf(buf, len, "this kernel has no %s (Linux %s)", feature_info[feat].what,
		 feature_info[feat].since);
}

/* The offset of member `name` (a byte offset, not a bitfield) of struct t, or -1. */
static int64_t member_off(const struct btf *btf, const struct btf_type *t, const char *name)
{
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++) {
		const char *n = btf__name_by_offset(btf, m[i].name_off);

		if (n && !strcmp(n, name) && !(btf_member_bit_offset(t, i) % 8))
			return btf_member_bit_offset(t, i) / 8;
	}
	return -1;
}

int kfeatures_preempt_rq_off(const struct btf *btf, int64_t *ret)
{
	int64_t rq = -1, pc = -1;
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	int id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);

	if (id <= 0)
		return -ENOENT;
	sec = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++) {
		const struct btf_type *var = btf__type_by_id(btf, vs[i].type);
		const char *name = var ? btf__name_by_offset(btf, var->name_off) : NULL;
		const struct btf_type *t;
		int64_t off;

		if (!name)
			continue;
		if (!strcmp(name, "runqueues")) {
			rq = vs[i].offset;
		} else if (!strcmp(name, "__preempt_count")) {
			pc = vs[i].offset;
		} else if (!strcmp(name, "pcpu_hot") && pc < 0) {
			t = btf__type_by_id(btf, var->type);
			off = t && btf_is_struct(t) ? member_off(btf, t, "preempt_count") : -1;
			if (off >= 0)
				pc = vs[i].offset + off;
		}
	}
	if (rq < 0 || pc < 0)
		return -ENOENT;
	*ret = pc - rq;
	return 0;
}

int kfeatures_preempt_rq_off_file(const char *path, int64_t *ret)
{
	struct btf *btf = path ? btf__parse(path, NULL) : vmlinux_btf_load();
	int err;

	if (!btf)
		return errno ? -errno : -EINVAL;
	err = kfeatures_preempt_rq_off(btf, ret);
	btf__free(btf);
	return err;
}
