// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel features from BTF: enumerators of the kernel's own enums (helpers, map types) and
 * the BTF typedefs the kernel emits for each tracepoint (btf_trace_<name>), which tp_btf
 * programs attach to. Reading BTF needs no privilege: the unit tests run it on
 * /sys/kernel/btf/vmlinux and on small BTF files they build.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "kfeatures.h"
#include "vmlinux_btf.h"

static const struct {
	const char *what;
	const char *since;
} feature_info[SP_FEAT__MAX] = {
	[SP_FEAT_TASK_STORAGE] = { "BPF task storage", "5.11" },
	[SP_FEAT_RINGBUF] = { "BPF ring buffer", "5.8" },
	[SP_FEAT_LOOP] = { "bpf_loop()", "5.17" },
	[SP_FEAT_SWITCH_TP] = { "prev_state in the sched_switch tracepoint", "5.18" },
	[SP_FEAT_LOCK_TP] = { "lock:contention_begin tracepoint", "5.19" },
};

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
