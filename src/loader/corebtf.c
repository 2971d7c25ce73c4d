// SPDX-License-Identifier: BSD-2-Clause
/* The per-boot CO-RE BTF (corebtf.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "base/hashmap.h"
#include "loader/cache.h"
#include "symbols/elfsyms.h"
#include "loader/corebtf.h"
#include "loader/vmlinux_btf.h"
#include "loader/cache.h"

#define CORE_MAX_SIZE (64u << 20)

/* How a kernel type is copied: whole, or (a struct or union behind a pointer) as a name only. */
enum copy_mode { COPY_FULL, COPY_STUB };

struct plan_entry {
	uint32_t id; /* in the kernel's BTF */
	enum copy_mode mode;
};

struct builder {
	const struct btf *src;
	struct btf *dst;
	struct hashmap names;	  /* flavour-less names of the relocated types: kind_bit()s
				   * wanted (low 32 bits) and found in the kernel (high 32) */
	uint32_t *new_id[2];	  /* [mode][kernel id]: its ID in dst, 0 while not planned */
	struct plan_entry *plan;  /* dst's types in ID order (dst ID = index + 1) */
	size_t nplan, cap;
};

/*
 * The length of name without a flavour suffix: "foo___bar" is "foo". As libbpf's
 * bpf_core_essential_name_len(): the last "X___Y" where X and Y are not underscores.
 */
static size_t essential_len(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = n >= 5 ? n - 5 + 1 : 0; i-- > 0;)
		if (name[i] != '_' && !strncmp(name + i + 1, "___", 3) && name[i + 4] != '_')
			return i + 1;
	return n;
}

static bool kind_is_named_target(int kind)
{
	switch (kind) {
	case BTF_KIND_INT:
	case BTF_KIND_FLOAT:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
		return true;
	}
	return false;
}

/* libbpf takes an enum for an enum64 and back (btf_kind_core_compat()) */
static uint64_t kind_bit(int kind)
{
	return 1ull << (kind == BTF_KIND_ENUM64 ? BTF_KIND_ENUM : kind);
}

/* The entry of name's flavour-less part, when it names one of the relocated types. */
static struct hashmap_entry *name_entry(const struct builder *b, const char *name)
{
	size_t len = essential_len(name);
	char buf[256];

	if (!len)
		return NULL;
	if (!name[len])
		return hashmap__find_entry(&b->names, (long)name);
	if (len >= sizeof(buf))
		return NULL; /* no object type has a name that long */
	memcpy(buf, name, len);
	buf[len] = 0;
	return hashmap__find_entry(&b->names, (long)buf);
}

static bool name_wanted(const struct builder *b, const char *name)
{
	return name_entry(b, name) != NULL;
}

/* The relocated types' names (roots, or with NULL every named type of local). */
static int collect_names(struct builder *b, const struct btf *local, const uint32_t *roots,
			 size_t nroots)
{
	size_t n = roots ? nroots : btf__type_cnt(local) - 1;

	for (size_t i = 0; i < n; i++) {
		const struct btf_type *t = btf__type_by_id(local, roots ? roots[i] : i + 1);
		const char *name = t ? btf__name_by_offset(local, t->name_off) : NULL;
		struct hashmap_entry *e;
		size_t len;
		char *key;

		if (!t || !kind_is_named_target(btf_kind(t)) || !name || !(len = essential_len(name)))
			continue;
		key = strndup(name, len);
		if (!key)
			return -ENOMEM;
		e = hashmap__find_entry(&b->names, (long)key);
		if (e) {
			free(key);
		} else {
			if (hashmap__add(&b->names, (long)key, 0)) {
				free(key);
				return -ENOMEM;
			}
			e = hashmap__find_entry(&b->names, (long)key);
		}
		e->value |= (long)kind_bit(btf_kind(t));
	}
	return hashmap__size(&b->names) ? 0 : -ENOENT;
}

/*
 * Whether every relocated type has a candidate in the kernel's BTF. One without would make
 * libbpf look in the modules' BTF, which the CO-RE BTF does not hold: then it is not used.
 */
static bool all_found(const struct builder *b)
{
	struct hashmap_entry *e;

	hashmap__for_each_entry(&b->names, e) {
		uint64_t v = (uint64_t)e->value;

		if ((uint32_t)v & ~(uint32_t)(v >> 32))
			return false;
	}
	return true;
}

/* The dst ID of kernel type id copied in mode, planning it on first sight. 0 or -errno. */
static int plan_ref(struct builder *b, uint32_t id, enum copy_mode mode, uint32_t *ret)
{
	const struct btf_type *t;

	*ret = 0;
	if (!id)
		return 0; /* void */
	t = btf__type_by_id(b->src, id);
	if (!t)
		return -EINVAL;
	/* only a struct or union has a stub; a candidate is always whole */
	if (mode == COPY_STUB && (!btf_is_composite(t) ||
				  name_wanted(b, btf__name_by_offset(b->src, t->name_off))))
		mode = COPY_FULL;
	if (!b->new_id[mode][id]) {
		if (b->nplan == b->cap) {
			size_t cap = b->cap ? b->cap * 2 : 256;
			struct plan_entry *p = realloc(b->plan, cap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			b->plan = p;
			b->cap = cap;
		}
		b->plan[b->nplan++] = (struct plan_entry){ .id = id, .mode = mode };
		b->new_id[mode][id] = (uint32_t)b->nplan;
	}
	*ret = b->new_id[mode][id];
	return 0;
}

/*
 * Visits the type IDs e refers to (planning them), or with emit, rewrites the copy's IDs in
 * place (dst_t) to dst's. Behind a pointer (and in a function prototype, which only a pointer
 * reaches) structs and unions are stubs; everything else is followed as e itself is copied.
 */
static int visit_refs(struct builder *b, const struct plan_entry *e, struct btf_type *dst_t)
{
	const struct btf_type *t = btf__type_by_id(b->src, e->id);
	uint32_t *ids[2] = {};
	enum copy_mode inner = COPY_FULL;
	uint32_t n = 0, tmp[2] = {};
	int err = 0;

	switch (btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_FLOAT:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_FWD:
		return 0;
	case BTF_KIND_PTR:
		inner = COPY_STUB;
		/* fallthrough */
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		ids[0] = dst_t ? &dst_t->type : &tmp[0];
		tmp[0] = t->type;
		n = 1;
		break;
	case BTF_KIND_ARRAY:
		ids[0] = dst_t ? &btf_array(dst_t)->type : &tmp[0];
		ids[1] = dst_t ? &btf_array(dst_t)->index_type : &tmp[1];
		tmp[0] = btf_array(t)->type;
		tmp[1] = btf_array(t)->index_type;
		n = 2;
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		if (e->mode == COPY_STUB)
			return 0;
		for (uint32_t i = 0; i < btf_vlen(t) && !err; i++) {
			uint32_t got;

			err = plan_ref(b, btf_members(t)[i].type, COPY_FULL, &got);
			if (dst_t)
				btf_members(dst_t)[i].type = got;
		}
		return err;
	case BTF_KIND_FUNC_PROTO:
		err = plan_ref(b, t->type, COPY_STUB, &tmp[0]);
		if (dst_t)
			dst_t->type = tmp[0];
		for (uint32_t i = 0; i < btf_vlen(t) && !err; i++) {
			uint32_t got;

			err = plan_ref(b, btf_params(t)[i].type, COPY_STUB, &got);
			if (dst_t)
				btf_params(dst_t)[i].type = got;
		}
		return err;
	default:
		return -EINVAL; /* no struct member leads to a variable, function or section */
	}
	for (uint32_t i = 0; i < n && !err; i++) {
		err = plan_ref(b, tmp[i], inner, &tmp[i]);
		*ids[i] = tmp[i];
	}
	return err;
}

static int emit(struct builder *b, const struct plan_entry *e)
{
	const struct btf_type *t = btf__type_by_id(b->src, e->id);
	const char *name = btf__name_by_offset(b->src, t->name_off);
	int id;

	if (e->mode == COPY_STUB)
		id = btf_is_struct(t) ? btf__add_struct(b->dst, name, t->size) :
					btf__add_union(b->dst, name, t->size);
	else
		id = btf__add_type(b->dst, b->src, t);
	if (id < 0)
		return id;
	if (e->mode == COPY_STUB)
		return 0;
	/* btf__add_type() keeps the kernel's IDs: rewrite them to dst's (planned already) */
	return visit_refs(b, e, (struct btf_type *)btf__type_by_id(b->dst, id));
}

static void builder_free(struct builder *b)
{
	hashmap__clear_with(&b->names, hashmap_free_key);
	free(b->new_id[0]);
	free(b->new_id[1]);
	free(b->plan);
}

int core_btf_build(const struct btf *local, const uint32_t *roots, size_t nroots,
		   const struct btf *vmlinux, struct btf **ret)
{
	struct builder b = { .src = vmlinux };
	uint32_t n = btf__type_cnt(vmlinux), got;
	int err;

	*ret = NULL;
	hashmap__init(&b.names, hashmap_str_hash, hashmap_str_equal, NULL);
	b.new_id[0] = calloc(n, sizeof(uint32_t));
	b.new_id[1] = calloc(n, sizeof(uint32_t));
	err = b.new_id[0] && b.new_id[1] ? collect_names(&b, local, roots, nroots) : -ENOMEM;
	/* every candidate: a kernel type named like one of ours (libbpf then checks the kind) */
	for (uint32_t id = 1; id < n && !err; id++) {
		const struct btf_type *t = btf__type_by_id(vmlinux, id);
		struct hashmap_entry *e;

		if (!kind_is_named_target(btf_kind(t)))
			continue;
		e = name_entry(&b, btf__name_by_offset(vmlinux, t->name_off));
		if (!e)
			continue;
		e->value |= (long)(kind_bit(btf_kind(t)) << 32);
		err = plan_ref(&b, id, COPY_FULL, &got);
	}
	if (!err && roots && !all_found(&b))
		err = -ESRCH;
	/* and what they reach (the plan grows while it is walked) */
	for (size_t i = 0; i < b.nplan && !err; i++)
		err = visit_refs(&b, &b.plan[i], NULL);
	if (!err) {
		b.dst = btf__new_empty();
		err = b.dst ? 0 : -errno;
	}
	for (size_t i = 0; i < b.nplan && !err; i++)
		err = emit(&b, &b.plan[i]);
	if (!err)
		*ret = b.dst;
	else
		btf__free(b.dst);
	builder_free(&b);
	return err;
}

/* ---- the boot's cache ---- */

/* The cache's data: this, then the raw BTF. */
struct core_cache_head {
	uint64_t obj_hash; /* of the BPF object's ELF: a rebuilt schedprof makes its own */
	uint64_t btf_hash; /* of the BTF that follows: a damaged file is not used */
};

#define CORE_SEED 0x636f726562746631ULL
/* btf_hash of a cache without BTF: the object cannot use one on this kernel (make_btf()) */
#define CORE_NONE 1

/* The .BTF.ext header (the kernel's Documentation/bpf/btf.rst), up to the CO-RE part. */
struct btf_ext_head {
	uint16_t magic;
	uint8_t version, flags;
	uint32_t hdr_len, func_info_off, func_info_len, line_info_off, line_info_len;
	uint32_t core_relo_off, core_relo_len;
};

/* A section of the object by name: its bytes, or NULL. */
static const char *elf_section(Elf *e, const char *want, size_t *ret_len)
{
	Elf_Scn *scn = elf_section_by_name(e, want);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;

	if (!d || !d->d_buf)
		return NULL;
	*ret_len = d->d_size;
	return d->d_buf;
}

/*
 * The object's CO-RE relocations' root types (local IDs, repeats included) from its .BTF.ext.
 * -EOPNOTSUPP when one asks for a kernel type ID, which the CO-RE BTF's IDs would not be.
 */
static int relo_roots(Elf *e, uint32_t **ret, size_t *ret_n)
{
	const struct btf_ext_head *h;
	const char *ext, *p, *end;
	uint32_t rec_size, *roots = NULL;
	size_t len, n = 0;

	ext = elf_section(e, ".BTF.ext", &len);
	h = (const void *)ext;
	if (!ext || len < sizeof(*h) || h->magic != 0xeB9F || h->hdr_len < sizeof(*h) ||
	    h->hdr_len > len || h->core_relo_off > len - h->hdr_len ||
	    h->core_relo_len > len - h->hdr_len - h->core_relo_off || h->core_relo_len < 4)
		return -ENOENT;
	p = ext + h->hdr_len + h->core_relo_off;
	end = p + h->core_relo_len;
	memcpy(&rec_size, p, 4);
	if (rec_size < sizeof(struct bpf_core_relo))
		return -EINVAL;
	roots = malloc(h->core_relo_len / rec_size * sizeof(*roots) + sizeof(*roots));
	if (!roots)
		return -ENOMEM;
	/* sections: name offset, count, then count records of rec_size */
	for (p += 4; end - p >= 8;) {
		uint32_t num;

		memcpy(&num, p + 4, 4);
		p += 8;
		if ((size_t)(end - p) / rec_size < num) {
			free(roots);
			return -EINVAL;
		}
		for (uint32_t i = 0; i < num; i++, p += rec_size) {
			struct bpf_core_relo r;

			memcpy(&r, p, sizeof(r));
			if (r.kind == BPF_CORE_TYPE_ID_TARGET) {
				free(roots);
				return -EOPNOTSUPP;
			}
			if (r.kind != BPF_CORE_TYPE_ID_LOCAL) /* the local one needs no kernel */
				roots[n++] = r.type_id;
		}
	}
	*ret = roots;
	*ret_n = n;
	return 0;
}

static int make_btf(const void *elf, size_t elf_size, const char *vmlinux_path, struct btf **ret)
{
	struct bpf_object *obj = bpf_object__open_mem(elf, elf_size, NULL);
	struct btf *vmlinux = NULL;
	uint32_t *roots = NULL;
	size_t nroots = 0;
	Elf *e = NULL;
	int err;

	*ret = NULL;
	if (!obj)
		return -errno;
	err = bpf_object__btf(obj) ? 0 : -ENOENT;
	if (!err && elf_version(EV_CURRENT) != EV_NONE)
		e = elf_memory((char *)elf, elf_size);
	if (!err)
		err = e ? relo_roots(e, &roots, &nroots) : -EINVAL;
	if (!err) {
		vmlinux = vmlinux_path ? btf__parse(vmlinux_path, NULL) : vmlinux_btf_load();
		err = vmlinux ? 0 : -errno;
	}
	if (!err)
		err = core_btf_build(bpf_object__btf(obj), roots, nroots, vmlinux, ret);
	free(roots);
	if (e)
		elf_end(e);
	btf__free(vmlinux);
	bpf_object__close(obj);
	return err;
}

/*
 * Whether the cached data (head + BTF) is this object's, intact, and a BTF libbpf accepts:
 * 0, -ENOENT, or -ENOTSUP when it says that no CO-RE BTF can serve this object and kernel.
 */
static int cache_check(const void *buf, size_t size, uint64_t obj_hash)
{
	const struct core_cache_head *h = buf;
	const char *btf_data = (const char *)buf + sizeof(*h);
	size_t len = size - sizeof(*h);
	struct btf *btf;

	if (size < sizeof(*h) || h->obj_hash != obj_hash)
		return -ENOENT;
	if (size == sizeof(*h))
		return h->btf_hash == CORE_NONE ? -ENOTSUP : -ENOENT;
	if (h->btf_hash != hashmap_hash_bytes(btf_data, len, CORE_SEED))
		return -ENOENT;
	/* and libbpf's own checks of it */
	btf = btf__new(btf_data, len);
	if (!btf)
		return -ENOENT;
	btf__free(btf);
	return 0;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

/* Builds it and caches it; *ret_buf is head + BTF (malloc'd). */
static int make_cache(const char *dir, const void *elf, size_t elf_size, const char *vmlinux_path,
		      uint64_t obj_hash, void **ret_buf, size_t *ret_size)
{
	struct core_cache_head h = { .obj_hash = obj_hash };
	const void *raw;
	struct btf *btf;
	uint32_t len;
	char *buf;
	int err = make_btf(elf, elf_size, vmlinux_path, &btf);

	/* this boot's answer for this object either way: not made again at every start-up */
	if (err == -ESRCH || err == -EOPNOTSUPP) {
		h.btf_hash = CORE_NONE;
		cache_store(dir, CACHE_CORE_BTF, &h, sizeof(h));
		return -ENOTSUP;
	}
	if (err)
		return err;
	raw = btf__raw_data(btf, &len);
	buf = raw ? malloc(sizeof(h) + len) : NULL;
	if (!buf) {
		btf__free(btf);
		return -ENOMEM;
	}
	h.btf_hash = hashmap_hash_bytes(raw, len, CORE_SEED);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), raw, len);
	btf__free(btf);
	*ret_buf = buf;
	*ret_size = sizeof(h) + len;
	/* not cached: made again next time, nothing is wrong with this run */
	cache_store(dir, CACHE_CORE_BTF, buf, *ret_size);
	return 0;
}

int core_btf_open(const char *dir, const void *elf, size_t elf_size, const char *vmlinux_path,
		  struct core_btf *ret)
{
	uint64_t obj_hash = hashmap_hash_bytes(elf, elf_size, CORE_SEED);
	void *buf = NULL;
	size_t size = 0;
	int err;

	ret->fd = -1;
	ret->path[0] = 0;
	ret->made = false;
	err = cache_load(dir, CACHE_CORE_BTF, CORE_MAX_SIZE, &buf, &size);
	if (!err)
		err = cache_check(buf, size, obj_hash);
	if (err == -ENOTSUP) {
		free(buf);
		return err;
	}
	if (err) {
		free(buf);
		buf = NULL;
		err = make_cache(dir, elf, elf_size, vmlinux_path, obj_hash, &buf, &size);
		if (err)
			return err;
		ret->made = true;
	}
	/* libbpf reads a path: a memfd of what was checked here, not the file, which may change */
	ret->fd = memfd_create("schedprof-core-btf", MFD_CLOEXEC);
	err = ret->fd < 0 ? -errno : write_all(ret->fd, (char *)buf + sizeof(struct core_cache_head),
					       size - sizeof(struct core_cache_head));
	free(buf);
	if (!err)
		snprintf(ret->path, sizeof(ret->path), "/proc/self/fd/%d", ret->fd);
	return err;
}

void core_btf_close(struct core_btf *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->path[0] = 0;
}
