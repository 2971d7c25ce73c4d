// SPDX-License-Identifier: BSD-2-Clause
/*
 * Open addressing with linear probing (see hashmap.h). The table grows at 3/4 full, so a
 * probe sequence stays short; deletion shifts the following entries back (no tombstones),
 * so lookups never slow down after many deletes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/hashmap.h"

#define HASHMAP_MIN_CAP 16

void hashmap__init(struct hashmap *map, hashmap_hash_fn hash_fn, hashmap_equal_fn equal_fn,
		   void *ctx)
{
	memset(map, 0, sizeof(*map));
	map->hash_fn = hash_fn;
	map->equal_fn = equal_fn;
	map->ctx = ctx;
}

struct hashmap *hashmap__new(hashmap_hash_fn hash_fn, hashmap_equal_fn equal_fn, void *ctx)
{
	struct hashmap *map = malloc(sizeof(*map));

	if (!map)
		return NULL;
	hashmap__init(map, hash_fn, equal_fn, ctx);
	return map;
}

void hashmap__clear(struct hashmap *map)
{
	if (!map)
		return;
	free(map->slots);
	map->slots = NULL;
	map->cap = map->len = 0;
}

void hashmap__clear_with(struct hashmap *map, void (*destroy)(long key, long value))
{
	struct hashmap_entry *e;

	if (!map)
		return;
	hashmap__for_each_entry(map, e)
		destroy(e->key, e->value);
	hashmap__clear(map);
}

void hashmap_free_key(long key, long value)
{
	(void)value;
	free((void *)key);
}

void hashmap__free(struct hashmap *map)
{
	hashmap__clear(map);
	free(map);
}

static uint64_t hash_of(const struct hashmap *map, long key)
{
	uint64_t h = map->hash_fn(key, map->ctx);

	return h ? h : 1;
}

/* The slot holding key, or the empty slot where it would go. cap must be > 0. */
static struct hashmap_entry *probe(const struct hashmap *map, long key, uint64_t h)
{
	size_t mask = map->cap - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct hashmap_entry *e = &map->slots[i];

		if (!e->hash || (e->hash == h && map->equal_fn(e->key, key, map->ctx)))
			return e;
	}
}

static int resize(struct hashmap *map, size_t cap)
{
	struct hashmap_entry *old = map->slots;
	size_t old_cap = map->cap;

	map->slots = calloc(cap, sizeof(*map->slots));
	if (!map->slots) {
		map->slots = old;
		return -ENOMEM;
	}
	map->cap = cap;
	for (size_t i = 0; i < old_cap; i++) {
		if (old[i].hash) {
			size_t mask = cap - 1, j = old[i].hash & mask;

			while (map->slots[j].hash)
				j = (j + 1) & mask;
			map->slots[j] = old[i];
		}
	}
	free(old);
	return 0;
}

int hashmap__reserve(struct hashmap *map, size_t n)
{
	size_t cap = map->cap ? map->cap : HASHMAP_MIN_CAP;

	while (n > cap / 4 * 3) {
		if (cap > SIZE_MAX / 2 / sizeof(struct hashmap_entry))
			return -ENOMEM;
		cap *= 2;
	}
	return cap == map->cap ? 0 : resize(map, cap);
}

static int insert(struct hashmap *map, long key, long value, bool replace, long *old_key,
		  long *old_value)
{
	uint64_t h = hash_of(map, key);
	struct hashmap_entry *e;
	int err;

	if (map->cap && (e = probe(map, key, h))->hash) {
		if (!replace)
			return -EEXIST;
		if (old_key)
			*old_key = e->key;
		if (old_value)
			*old_value = e->value;
		e->key = key;
		e->value = value;
		return 0;
	}
	if ((err = hashmap__reserve(map, map->len + 1)))
		return err;
	e = probe(map, key, h);
	e->key = key;
	e->value = value;
	e->hash = h;
	map->len++;
	return 0;
}

int hashmap__add(struct hashmap *map, long key, long value)
{
	return insert(map, key, value, false, NULL, NULL);
}

int hashmap__set(struct hashmap *map, long key, long value, long *old_key, long *old_value)
{
	return insert(map, key, value, true, old_key, old_value);
}

struct hashmap_entry *hashmap__find_entry(const struct hashmap *map, long key)
{
	struct hashmap_entry *e;

	if (!map || !map->len)
		return NULL;
	e = probe(map, key, hash_of(map, key));
	return e->hash ? e : NULL;
}

bool hashmap__find(const struct hashmap *map, long key, long *value)
{
	struct hashmap_entry *e = hashmap__find_entry(map, key);

	if (e && value)
		*value = e->value;
	return e != NULL;
}

bool hashmap__delete(struct hashmap *map, long key, long *old_key, long *old_value)
{
	struct hashmap_entry *e = hashmap__find_entry(map, key);
	size_t mask, i, j;

	if (!e)
		return false;
	if (old_key)
		*old_key = e->key;
	if (old_value)
		*old_value = e->value;
	/* backward-shift: move later entries of the run into the hole when their home allows */
	mask = map->cap - 1;
	i = (size_t)(e - map->slots);
	for (j = (i + 1) & mask; map->slots[j].hash; j = (j + 1) & mask) {
		size_t home = map->slots[j].hash & mask;

		/* j's entry may move to i only if its home is not in (i, j] (cyclically) */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			map->slots[i] = map->slots[j];
			i = j;
		}
	}
	memset(&map->slots[i], 0, sizeof(map->slots[i]));
	map->len--;
	return true;
}

/*
 * Word at a time, finished with a murmur3-style mix: keys are symbol names and paths, long
 * and sharing prefixes (__pfx_, __x64_sys_, /usr/lib/), where a byte-at-a-time hash (FNV)
 * was a sixth of loading kallsyms.
 */
uint64_t hashmap_hash_bytes(const void *p, size_t len, uint64_t seed)
{
	const uint64_t k = 0xff51afd7ed558ccdULL;
	const unsigned char *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ seed ^ len, w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * k;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s, len);
	return hashmap_hash_u64((h ^ w) * k);
}

uint64_t hashmap_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

uint64_t hashmap_str_hash(long key, void *ctx)
{
	const char *s = (const char *)key;

	(void)ctx;
	return hashmap_hash_bytes(s, strlen(s), 0);
}

bool hashmap_str_equal(long a, long b, void *ctx)
{
	(void)ctx;
	return !strcmp((const char *)a, (const char *)b);
}

uint64_t hashmap_long_hash(long key, void *ctx)
{
	(void)ctx;
	return hashmap_hash_u64((uint64_t)key);
}

bool hashmap_long_equal(long a, long b, void *ctx)
{
	(void)ctx;
	return a == b;
}

uint64_t hashmap_mem_hash(long key, void *ctx)
{
	return hashmap_hash_bytes((const void *)key, (size_t)ctx, 0);
}

bool hashmap_mem_equal(long a, long b, void *ctx)
{
	return !memcmp((const void *)a, (const void *)b, (size_t)ctx);
}
