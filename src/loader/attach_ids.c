// SPDX-License-Identifier: BSD-2-Clause
/* The boot's cache of the attach targets' kernel BTF IDs (attach_ids.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/btf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "loader/attach_ids.h"
#include "loader/cache.h"
#include "base/hashmap.h"
#include "loader/vmlinux_btf.h"
#include "loader/cache.h"

#define ATTACH_SEED 0x6174746163686964ULL

int attach_ids_add(struct attach_ids *ids, const char *name, uint32_t kind, bool needed)
{
	struct attach_target *t = attach_ids_find(ids, name, kind);

	if (t) {
		t->needed |= needed;
		return 0;
	}
	if (strlen(name) >= ATTACH_NAME_MAX)
		return -ENAMETOOLONG;
	if (ids->n == ids->cap) {
		size_t cap = ids->cap ? ids->cap * 2 : 16;
		struct attach_target *v = realloc(ids->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ids->v = v;
		ids->cap = cap;
	}
	t = &ids->v[ids->n++];
	memset(t, 0, sizeof(*t));
	strcpy(t->name, name);
	t->kind = kind;
	t->needed = needed;
	return 0;
}

struct attach_target *attach_ids_find(const struct attach_ids *ids, const char *name,
				      uint32_t kind)
{
	for (size_t i = 0; i < ids->n; i++)
		if (ids->v[i].kind == kind && !strcmp(ids->v[i].name, name))
			return &ids->v[i];
	return NULL;
}

void attach_ids_free(struct attach_ids *ids)
{
	free(ids->v);
	memset(ids, 0, sizeof(*ids));
}

/* libbpf 1.1's name and kind of a target by attach type (its btf_get_kernel_prefix_kind()) */
static void target_kind(enum bpf_attach_type type, const char **prefix, uint32_t *kind)
{
	*kind = BTF_KIND_FUNC;
	*prefix = "";
	if (type == BPF_TRACE_RAW_TP) {
		*prefix = "btf_trace_";
		*kind = BTF_KIND_TYPEDEF;
	} else if (type == BPF_TRACE_ITER) {
		*prefix = "bpf_iter_";
	} else if (type == BPF_LSM_MAC || type == BPF_LSM_CGROUP) {
		*prefix = "bpf_lsm_";
	}
}

int attach_ids_of_object(const struct bpf_object *obj, struct attach_ids *ret)
{
	const struct btf *obj_btf = bpf_object__btf(obj);
	struct bpf_program *p;
	struct bpf_map *m;

	/* typed __ksym externs and kfuncs are resolved in the kernel's BTF (find_ksym_btf_id) */
	if (obj_btf && btf__find_by_name_kind(obj_btf, ".ksyms", BTF_KIND_DATASEC) > 0)
		return -EOPNOTSUPP;
	bpf_object__for_each_map(m, obj)
		if (bpf_map__type(m) == BPF_MAP_TYPE_STRUCT_OPS)
			return -EOPNOTSUPP;
	bpf_object__for_each_program(p, (struct bpf_object *)obj) {
		enum bpf_prog_type type = bpf_program__type(p);
		const char *target = strchr(bpf_program__section_name(p), '/'), *prefix;
		bool load = bpf_program__autoload(p);
		char name[ATTACH_NAME_MAX];
		uint32_t kind;
		int err;

		if (type != BPF_PROG_TYPE_TRACING && type != BPF_PROG_TYPE_LSM &&
		    type != BPF_PROG_TYPE_STRUCT_OPS && type != BPF_PROG_TYPE_EXT)
			continue;
		/* struct_ops, freplace, and a target named only at run time: not ours to answer */
		if (type == BPF_PROG_TYPE_STRUCT_OPS || type == BPF_PROG_TYPE_EXT || !target ||
		    !target[1]) {
			if (load)
				return -EOPNOTSUPP;
			continue;
		}
		target_kind(bpf_program__expected_attach_type(p), &prefix, &kind);
		if ((size_t)snprintf(name, sizeof(name), "%s%s", prefix, target + 1) >= sizeof(name)) {
			if (load)
				return -ENAMETOOLONG;
			continue;
		}
		err = attach_ids_add(ret, name, kind, load);
		if (err)
			return err;
	}
	return 0;
}

int attach_ids_resolve(struct attach_ids *ids, const struct btf *kbtf)
{
	const char *types = (const char *)btf__type_by_id(kbtf, 1);

	for (size_t i = 0; i < ids->n; i++) {
		struct attach_target *t = &ids->v[i];
		int id = btf__find_by_name_kind(kbtf, t->name, t->kind);

		t->id = 0;
		t->off = 0;
		if (id <= 0)
			continue;
		/* a parsed BTF keeps the file's type section as it is, in one piece */
		t->id = (uint32_t)id;
		t->off = (uint32_t)((const char *)btf__type_by_id(kbtf, id) - types);
	}
	return 0;
}

static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -ESTALE;
}

int attach_kbtf_open(const char *path, struct attach_kbtf *ret)
{
	struct btf_header h;
	struct stat st;
	int fd, err;

	memset(ret, 0, sizeof(*ret));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto fail;
	}
	err = pread_all(fd, ret->hdr, sizeof(ret->hdr), 0);
	if (err)
		goto fail;
	memcpy(&h, ret->hdr, sizeof(h));
	/* ours only: native byte order */
	if (h.magic != BTF_MAGIC || h.hdr_len < sizeof(h)) {
		err = -EINVAL;
		goto fail;
	}
	ret->size = (uint64_t)st.st_size;
	return fd;
fail:
	close(fd);
	return err;
}

int attach_ids_check(int fd, const struct attach_kbtf *k, const struct attach_ids *ids)
{
	struct btf_header h;
	off_t types, strs;

	_Static_assert(sizeof(h) == sizeof(k->hdr), "the identity is the BTF header");
	memcpy(&h, k->hdr, sizeof(h));
	if (h.magic != BTF_MAGIC || h.type_len < sizeof(struct btf_type))
		return -ESTALE;
	types = (off_t)h.hdr_len + h.type_off;
	strs = (off_t)h.hdr_len + h.str_off;
	for (size_t i = 0; i < ids->n; i++) {
		const struct attach_target *t = &ids->v[i];
		size_t len = strlen(t->name) + 1;
		char name[ATTACH_NAME_MAX];
		struct btf_type bt;
		int err;

		if (!t->id)
			continue;
		/*
		 * IDs number the records in order, each at least a struct btf_type: a higher ID
		 * lies that much further on (two IDs swapped, or one off by many, do not)
		 */
		if (t->off < (uint64_t)(t->id - 1) * sizeof(bt))
			return -ESTALE;
		for (size_t j = 0; j < ids->n; j++) {
			const struct attach_target *u = &ids->v[j];

			if (u->id > t->id && (u->off <= t->off ||
					      u->off - t->off < (uint64_t)(u->id - t->id) * sizeof(bt)))
				return -ESTALE;
			if (u->id == t->id && u->off != t->off)
				return -ESTALE;
		}
		if (t->off > h.type_len - sizeof(bt))
			return -ESTALE;
		err = pread_all(fd, &bt, sizeof(bt), types + t->off);
		if (err)
			return err;
		if (BTF_INFO_KIND(bt.info) != t->kind || bt.name_off >= h.str_len ||
		    len > h.str_len - bt.name_off)
			return -ESTALE;
		err = pread_all(fd, name, len, strs + bt.name_off);
		if (err)
			return err;
		if (memcmp(name, t->name, len))
			return -ESTALE;
	}
	return 0;
}

/* ---- the cache file's data ---- */

struct cache_head {
	uint64_t hash; /* of everything after it */
	uint8_t kbtf_hdr[24];
	uint64_t kbtf_size;
	uint32_t count;
	uint32_t pad;
};

struct cache_entry {
	char name[ATTACH_NAME_MAX]; /* NUL-terminated */
	uint32_t kind, id, off;
};

_Static_assert(sizeof(struct cache_entry) == 128, "entries are 128 bytes");

int attach_ids_encode(const struct attach_ids *ids, const struct attach_kbtf *k, void **ret_buf,
		      size_t *ret_len)
{
	struct cache_head *h;
	struct cache_entry *e;
	size_t n = 0;
	char *buf;

	for (size_t i = 0; i < ids->n; i++)
		n += ids->v[i].id != 0;
	if (n > ATTACH_CACHE_MAX)
		return -E2BIG;
	buf = calloc(1, sizeof(*h) + n * sizeof(*e));
	if (!buf)
		return -ENOMEM;
	h = (struct cache_head *)buf;
	memcpy(h->kbtf_hdr, k->hdr, sizeof(h->kbtf_hdr));
	h->kbtf_size = k->size;
	h->count = (uint32_t)n;
	e = (struct cache_entry *)(buf + sizeof(*h));
	for (size_t i = 0; i < ids->n; i++) {
		const struct attach_target *t = &ids->v[i];

		if (!t->id)
			continue;
		strcpy(e->name, t->name);
		e->kind = t->kind;
		e->id = t->id;
		e->off = t->off;
		e++;
	}
	h->hash = hashmap_hash_bytes(buf + sizeof(h->hash), sizeof(*h) - sizeof(h->hash) +
				     n * sizeof(*e), ATTACH_SEED);
	*ret_buf = buf;
	*ret_len = sizeof(*h) + n * sizeof(*e);
	return 0;
}

int attach_ids_decode(const void *buf, size_t len, struct attach_kbtf *k, struct attach_ids *ret)
{
	const struct cache_head *h = buf;
	const struct cache_entry *e = (const void *)(h + 1);
	struct attach_ids ids = {};

	if (len < sizeof(*h) || h->count > ATTACH_CACHE_MAX ||
	    len != sizeof(*h) + h->count * sizeof(*e) ||
	    h->hash != hashmap_hash_bytes((const char *)buf + sizeof(h->hash),
					  len - sizeof(h->hash), ATTACH_SEED))
		return -EINVAL;
	for (uint32_t i = 0; i < h->count; i++, e++) {
		struct attach_target *t;

		if (!memchr(e->name, 0, sizeof(e->name)) || !e->name[0] || !e->id ||
		    (e->kind != BTF_KIND_TYPEDEF && e->kind != BTF_KIND_FUNC) ||
		    attach_ids_find(&ids, e->name, e->kind) ||
		    attach_ids_add(&ids, e->name, e->kind, false)) {
			attach_ids_free(&ids);
			return -EINVAL;
		}
		t = &ids.v[ids.n - 1];
		t->id = e->id;
		t->off = e->off;
	}
	memcpy(k->hdr, h->kbtf_hdr, sizeof(k->hdr));
	k->size = h->kbtf_size;
	*ret = ids;
	return 0;
}

int attach_ids_cache_load(const char *dir, struct attach_kbtf *k, struct attach_ids *ret)
{
	size_t max = sizeof(struct cache_head) + ATTACH_CACHE_MAX * sizeof(struct cache_entry);
	void *buf;
	size_t len;
	int err = cache_load(dir, CACHE_ATTACH, max, &buf, &len);

	if (err)
		return err;
	err = attach_ids_decode(buf, len, k, ret) ? -ENOENT : 0;
	free(buf);
	return err;
}

int attach_ids_cache_store(const char *dir, const struct attach_kbtf *k,
			   const struct attach_ids *ids)
{
	void *buf;
	size_t len;
	int err = attach_ids_encode(ids, k, &buf, &len);

	if (err)
		return err;
	err = cache_store(dir, CACHE_ATTACH, buf, len);
	free(buf);
	return err;
}

/* ---- standing in for the kernel's BTF during a load ---- */

static struct {
	bool armed, taken;
	struct btf *placeholder; /* a hit: what libbpf gets, answered from want */
	struct btf *real;	 /* a miss: the parsed BTF, until libbpf takes it */
	struct btf *late;	 /* parsed for a lookup the cache did not answer */
	const char *kbtf_path;	 /* arm()'s */
	struct attach_ids want;
	struct attach_ids_stats stats;
} st;

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

static struct btf *parse_kbtf(const char *kbtf_path)
{
	return kbtf_path ? vmlinux_btf_map(kbtf_path) : vmlinux_btf_load();
}

/* Whether the cache has every needed target; the known ones' IDs copied into want. */
static bool cache_covers(struct attach_ids *want, const struct attach_ids *cache)
{
	bool all = true;

	for (size_t i = 0; i < want->n; i++) {
		struct attach_target *t = &want->v[i];
		const struct attach_target *c = attach_ids_find(cache, t->name, t->kind);

		t->id = c ? c->id : 0;
		t->off = c ? c->off : 0;
		all &= t->id || !t->needed;
	}
	return all;
}

/* A miss: parse, resolve, and cache want's targets with the cached ones of this BTF. */
static void miss(const char *dir, const char *kbtf_path, int fd, const struct attach_kbtf *k,
		 struct attach_ids *cache)
{
	int err;

	st.real = parse_kbtf(kbtf_path);
	if (!st.real) {
		/* libbpf will try too, and say why it fails */
		st.stats.err = -errno;
		st.stats.why = "cannot parse the kernel's BTF";
		return;
	}
	err = attach_ids_resolve(&st.want, st.real);
	for (size_t i = 0; i < st.want.n && !err; i++) {
		const struct attach_target *t = &st.want.v[i];
		struct attach_target *c = attach_ids_find(cache, t->name, t->kind);

		if (!c)
			err = attach_ids_add(cache, t->name, t->kind, false);
		c = c ? c : &cache->v[cache->n - 1];
		if (!err) {
			c->id = t->id;
			c->off = t->off;
		}
	}
	/* what is written passes the check it will have to pass */
	err = err ?: attach_ids_check(fd, k, cache);
	err = err ?: attach_ids_cache_store(dir, k, cache);
	st.stats.stored = !err;
	if (err)
		st.stats.err = err;
}

void attach_ids_arm(const char *dir, const char *kbtf_path, const struct bpf_object *obj,
		    bool core_btf)
{
	struct attach_kbtf k, ck;
	struct attach_ids cache = {};
	struct timespec t0;
	int fd, err;

	attach_ids_done(NULL);
	if (!core_btf) {
		/* bpf_core_find_cands() would search the placeholder: no candidates, no error */
		st.stats.why = "CO-RE relocates against the kernel's BTF";
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st.kbtf_path = kbtf_path;
	err = attach_ids_of_object(obj, &st.want);
	st.stats.targets = st.want.n;
	for (size_t i = 0; i < st.want.n; i++)
		st.stats.needed += st.want.v[i].needed;
	if (err) {
		st.stats.err = err;
		st.stats.why = "the object wants the kernel's BTF for more than attach targets";
		attach_ids_free(&st.want);
		return;
	}
	fd = attach_kbtf_open(kbtf_path ? kbtf_path : VMLINUX_BTF_PATH, &k);
	if (fd < 0) {
		st.stats.err = fd;
		st.stats.why = "cannot read the kernel's BTF file";
		attach_ids_free(&st.want);
		return;
	}
	st.armed = true;
	st.stats.armed = true;
	err = attach_ids_cache_load(dir, &ck, &cache);
	if (err) {
		st.stats.why = "no cache";
	} else if (memcmp(&ck, &k, sizeof(k))) {
		st.stats.why = "the kernel's BTF is not the cache's";
		attach_ids_free(&cache);
	} else if (!cache_covers(&st.want, &cache)) {
		st.stats.why = "a target not in the cache";
	} else if ((err = attach_ids_check(fd, &k, &st.want))) {
		st.stats.err = err;
		st.stats.why = "the cache does not match the kernel's BTF";
		/* made again from nothing: none of it is trusted */
		attach_ids_free(&cache);
	} else {
		st.placeholder = btf__new_empty();
		st.stats.hit = st.placeholder != NULL;
		if (!st.placeholder) {
			st.stats.err = -errno;
			st.stats.why = "no memory";
		}
	}
	if (!st.stats.hit)
		miss(dir, kbtf_path, fd, &k, &cache);
	close(fd);
	attach_ids_free(&cache);
	st.stats.ms = ms_since(&t0);
}

struct btf *attach_ids_take_vmlinux(void)
{
	struct btf *b;

	if (!st.armed || st.taken)
		return NULL;
	b = st.placeholder ? st.placeholder : st.real;
	if (!b)
		return NULL;
	st.taken = true;
	if (b == st.real)
		st.real = NULL; /* libbpf's now: nothing of ours answers for it */
	return b;
}

bool attach_ids_answer(const struct btf *btf, const char *name, uint32_t kind, int *ret)
{
	const struct attach_target *t;
	int id;

	if (!btf || btf != st.placeholder || !st.taken)
		return false;
	t = attach_ids_find(&st.want, name, kind);
	if (t && t->id) {
		*ret = (int)t->id;
		return true;
	}
	/* nothing libbpf 1.1 asks of our object: answered, and counted, from the real BTF */
	st.stats.unexpected++;
	if (!st.late)
		st.late = parse_kbtf(st.kbtf_path);
	id = st.late ? btf__find_by_name_kind(st.late, name, kind) : -ESRCH;
	/* not -ENOENT: libbpf would read the modules' BTF on top of the placeholder */
	*ret = id > 0 ? id : -ESRCH;
	return true;
}

void attach_ids_forget(const struct btf *btf)
{
	if (btf && btf == st.placeholder) {
		st.placeholder = NULL;
		st.taken = false;
		st.armed = false;
	}
}

void attach_ids_done(struct attach_ids_stats *ret)
{
	if (ret)
		*ret = st.stats;
	/* what libbpf has (taken) it frees; the rest is ours */
	if (!st.taken)
		btf__free(st.placeholder);
	btf__free(st.real);
	btf__free(st.late);
	attach_ids_free(&st.want);
	memset(&st, 0, sizeof(st));
}

void attach_ids_describe(const struct attach_ids_stats *s, char *buf, size_t len)
{
	char err[64] = "";

	if (s->err)
		snprintf(err, sizeof(err), ": %s", strerror(-s->err));
	if (!s->armed)
		snprintf(buf, len, "attach IDs: libbpf reads the kernel's BTF (%s%s)",
			 s->why ? s->why : "not armed", err);
	else if (s->hit)
		snprintf(buf, len, "attach IDs from the boot's cache (%zu of %zu targets) in %.2f ms",
			 s->needed, s->targets, s->ms);
	else
		snprintf(buf, len, "attach IDs: the kernel's BTF parsed (%s), %zu targets %s in %.1f ms%s",
			 s->why, s->targets, s->stored ? "cached" : "not cached", s->ms, err);
	if (s->unexpected)
		snprintf(buf + strlen(buf), len - strlen(buf),
			 "; %u lookups not in the cache read the kernel's BTF", s->unexpected);
}
