/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one hash table of schedprof: open addressing with linear probing, keys and values
 * are `long` (an integer, or a pointer cast to long), hashing and equality are the
 * caller's, as in libbpf's hashmap.h design. It serves string keys (symbol names, pprof
 * strings), integer keys (addresses) and struct keys (a pointer to the caller's key) alike.
 *
 * The table owns neither keys nor values: the caller frees what they point to (iterate
 * with hashmap__for_each_entry before hashmap__free).
 */
#ifndef SCHEDPROF_HASHMAP_H
#define SCHEDPROF_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t (*hashmap_hash_fn)(long key, void *ctx);
typedef bool (*hashmap_equal_fn)(long a, long b, void *ctx);

struct hashmap_entry {
	long key;
	long value;
	uint64_t hash; /* 0 = empty slot (a key hashing to 0 is stored as 1) */
};

struct hashmap {
	hashmap_hash_fn hash_fn;
	hashmap_equal_fn equal_fn;
	void *ctx;
	struct hashmap_entry *slots;
	size_t cap; /* a power of two, or 0 before the first insert */
	size_t len;
};

/* A new empty table, or NULL with errno set (ENOMEM). */
struct hashmap *hashmap__new(hashmap_hash_fn hash_fn, hashmap_equal_fn equal_fn, void *ctx);
/* An embedded table (no allocation until the first insert). */
void hashmap__init(struct hashmap *map, hashmap_hash_fn hash_fn, hashmap_equal_fn equal_fn,
		   void *ctx);
/* Frees the table (not keys or values). NULL is fine. */
void hashmap__free(struct hashmap *map);
/* Frees an embedded table's slots and empties it. */
void hashmap__clear(struct hashmap *map);
/*
 * Calls destroy(key, value) for every entry (what the table points to, e.g. hashmap_free_key
 * when the keys are malloc'd), then clears the table. NULL is fine.
 */
void hashmap__clear_with(struct hashmap *map, void (*destroy)(long key, long value));
void hashmap_free_key(long key, long value); /* free((void *)key) */

static inline size_t hashmap__size(const struct hashmap *map)
{
	return map ? map->len : 0;
}

/* Room for n entries without growing. 0 or -ENOMEM. */
int hashmap__reserve(struct hashmap *map, size_t n);
/* Inserts key -> value. 0, -EEXIST (key present: nothing changed) or -ENOMEM. */
int hashmap__add(struct hashmap *map, long key, long value);
/*
 * Inserts or replaces. The replaced key and value go to *old_key and *old_value (either may
 * be NULL); when key was absent they are left alone. 0 or -ENOMEM.
 */
int hashmap__set(struct hashmap *map, long key, long value, long *old_key, long *old_value);
/* true and *value (may be NULL) when key is present. */
bool hashmap__find(const struct hashmap *map, long key, long *value);
/* The stored entry of key, or NULL: its value may be changed in place, not its key. */
struct hashmap_entry *hashmap__find_entry(const struct hashmap *map, long key);
/* Removes key; its key and value go to *old_key, *old_value. true when it was present. */
bool hashmap__delete(struct hashmap *map, long key, long *old_key, long *old_value);

/* Every entry, in table order (unspecified; sort afterwards for stable output). */
#define hashmap__for_each_entry(map, cur)                                                     \
	for ((cur) = (map)->slots; (map)->slots && (cur) < (map)->slots + (map)->cap; (cur)++) \
		if ((cur)->hash)

/* Ready-made hash and equality functions. */
uint64_t hashmap_hash_bytes(const void *p, size_t len, uint64_t seed);
uint64_t hashmap_hash_u64(uint64_t x);
uint64_t hashmap_str_hash(long key, void *ctx);	  /* key: const char * */
bool hashmap_str_equal(long a, long b, void *ctx);
uint64_t hashmap_long_hash(long key, void *ctx);  /* key: the integer itself */
bool hashmap_long_equal(long a, long b, void *ctx);
/*
 * key: a pointer to a fixed-size key of (size_t)ctx bytes, compared as bytes (zero any
 * padding inside, or make ctx end before it), e.g. the identity fields at the start of a
 * struct: hashmap__init(&m, hashmap_mem_hash, hashmap_mem_equal,
 * (void *)offsetof(struct file, first_non_key_field)).
 */
uint64_t hashmap_mem_hash(long key, void *ctx);
bool hashmap_mem_equal(long a, long b, void *ctx);

#endif
