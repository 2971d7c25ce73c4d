// SPDX-License-Identifier: BSD-2-Clause
/*
 * The map walker (maps.h). A batch lookup copies a whole hash bucket at a time, so an entry
 * never goes missing between two system calls; one entry at a time, an entry deleted after
 * get_next_key returned it is counted as failed, and a walk whose previous key was deleted
 * starts again from the first key (the kernel's rule), so keys already read are skipped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "base/log.h"
#include "loader/maps.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's, not in userspace errno.h */
#endif

/* 0 not tried yet, 1 the kernel has it, -1 it does not */
static int batch_works;

static bool is_percpu(__u32 type)
{
	return type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

/* Errors that say "no batch operations here" rather than "this walk failed". */
static bool batch_unsupported(int err)
{
	return err == -EINVAL || err == -ENOTSUPP || err == -EOPNOTSUPP || err == -EPERM ||
	       err == -ENOSYS;
}

/* 0 done, 1 unsupported (nothing read), or -errno. */
static int dump_batch(int fd, struct sp_records *r, size_t max_entries)
{
	__u64 in_tok = 0, out_tok = 0;
	bool first = true;

	if (sp_records_reserve(r, max_entries < 1024 ? max_entries + 1 : 1024))
		return -ENOMEM;
	for (;;) {
		__u32 count = (__u32)(r->cap - r->n);
		int err;

		err = bpf_map_lookup_batch(fd, first ? NULL : &in_tok, &out_tok,
					   (char *)r->keys + r->n * r->key_size,
					   (char *)r->values + r->n * r->value_size, &count, NULL);
		err = err ? -errno : 0;
		if (err && first && !count && batch_unsupported(err))
			return 1;
		r->n += count;
		if (err == -ENOENT)
			return 0; /* the last bucket was read */
		if (err == -ENOSPC && !count) {
			/* a bucket holds more entries than there is room for */
			if (sp_records_reserve(r, r->cap * 2))
				return -ENOMEM;
			continue;
		}
		if (err)
			return err;
		first = false;
		in_tok = out_tok;
		if (r->n == r->cap && sp_records_reserve(r, r->cap * 2))
			return -ENOMEM;
	}
}

/* The keys already read, by position in the records; -1 stands for the key being probed. */
struct seen_ctx {
	const struct sp_records *r;
	const void *probe;
};

static const void *seen_key(long k, const struct seen_ctx *c)
{
	return k < 0 ? c->probe : sp_records_key(c->r, (size_t)k);
}

static uint64_t seen_hash(long k, void *ctx)
{
	struct seen_ctx *c = ctx;

	return hashmap_hash_bytes(seen_key(k, c), c->r->key_size, 0);
}

static bool seen_equal(long a, long b, void *ctx)
{
	struct seen_ctx *c = ctx;

	return !memcmp(seen_key(a, c), seen_key(b, c), c->r->key_size);
}

static int dump_one_by_one(int fd, struct sp_records *r)
{
	size_t ks = r->key_size;
	char *key = malloc(ks), *prev = malloc(ks), *val = malloc(r->value_size ?: 1);
	struct seen_ctx c = { .r = r, .probe = key };
	struct hashmap seen; /* for a walk that restarts */
	bool have_prev = false;
	int err = 0;

	hashmap__init(&seen, seen_hash, seen_equal, &c);
	if (!key || !prev || !val) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		if (bpf_map_get_next_key(fd, have_prev ? prev : NULL, key)) {
			err = errno == ENOENT ? 0 : -errno;
			break;
		}
		memcpy(prev, key, ks);
		have_prev = true;
		if (hashmap__find(&seen, -1, NULL))
			continue; /* read before the walk restarted */
		if (bpf_map_lookup_elem(fd, key, val)) {
			r->failed++;
			continue;
		}
		err = sp_records_add(r, key, val) ?: hashmap__add(&seen, (long)(r->n - 1), 0);
		if (err)
			break;
	}
out:
	hashmap__clear(&seen);
	free(key);
	free(prev);
	free(val);
	return err;
}

int map_dump_how(int fd, enum map_dump_how how, struct sp_records *ret)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	size_t value_size;
	int err;

	sp_records_init(ret, 0, 0);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	value_size = info.value_size;
	if (is_percpu(info.type)) {
		int ncpus = libbpf_num_possible_cpus();

		if (ncpus < 0)
			return ncpus;
		value_size = ((value_size + 7) & ~(size_t)7) * (size_t)ncpus;
	}
	sp_records_init(ret, info.key_size, value_size);
	if (how == MAP_DUMP_ONE_BY_ONE || (how == MAP_DUMP_AUTO && batch_works < 0))
		return dump_one_by_one(fd, ret);
	err = dump_batch(fd, ret, info.max_entries);
	if (err <= 0) {
		if (!err)
			batch_works = 1;
		return err;
	}
	/* the kernel has no batch lookup: said once, then every dump goes one by one */
	batch_works = -1;
	return how == MAP_DUMP_BATCH ? -EOPNOTSUPP : dump_one_by_one(fd, ret);
}

int map_dump(int fd, struct sp_records *ret)
{
	return map_dump_how(fd, MAP_DUMP_AUTO, ret);
}

void map_dump_report(const char *view, const char *rows, const struct sp_records *row_rec,
		     const struct sp_records *stack_a, const struct sp_records *stack_b)
{
	if (row_rec->failed || stack_a->failed || stack_b->failed)
		dlog("%s: map entries deleted or unreadable during the dump: %llu %s (in lost), "
		     "%llu + %llu stacks (in missing stacks)", view,
		     (unsigned long long)row_rec->failed, rows, (unsigned long long)stack_a->failed,
		     (unsigned long long)stack_b->failed);
}

int map_pcpu_read(int fd, void *per, size_t size, int ncpus)
{
	__u32 zero = 0;

	if (size % sizeof(__u64) || ncpus <= 0)
		return -EINVAL;
	return bpf_map_lookup_elem(fd, &zero, per) ? -errno : 0;
}

int map_pcpu_sum(int fd, void *sum, size_t size, int ncpus)
{
	const size_t nw = size / sizeof(__u64);
	__u64 *per, *out = sum;
	int err;

	memset(sum, 0, size);
	if (size % sizeof(__u64) || ncpus <= 0)
		return -EINVAL;
	per = calloc((size_t)ncpus, size);
	if (!per)
		return -ENOMEM;
	err = map_pcpu_read(fd, per, size, ncpus);
	for (int i = 0; !err && i < ncpus; i++)
		for (size_t w = 0; w < nw; w++)
			out[w] += per[(size_t)i * nw + w];
	free(per);
	return err;
}

void maps_shrink_n(struct bpf_map *const *maps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (maps[i])
			bpf_map__set_max_entries(maps[i], 1);
}
