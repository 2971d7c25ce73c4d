/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Raw (key, value) records of one BPF map, as the map walker (maps.h) dumps them and the row
 * builders (*_rows.h) read them. Plain memory, no libbpf: unit tests build records by hand.
 */
#ifndef SCHEDPROF_RECORDS_H
#define SCHEDPROF_RECORDS_H

#include <stddef.h>
#include <stdint.h>
#include "base/hashmap.h"

struct sp_records {
	void *keys;   /* n keys of key_size bytes */
	void *values; /* n values of value_size bytes */
	size_t n, cap;
	size_t key_size, value_size;
	/* entries the walk saw but could not read (deleted meanwhile, or a lookup error) */
	uint64_t failed;
};

/* Empty records of the given sizes (no allocation until the first add). */
void sp_records_init(struct sp_records *r, size_t key_size, size_t value_size);
/* Room for n records in all. 0 or -ENOMEM. */
int sp_records_reserve(struct sp_records *r, size_t n);
/* Appends a copy of key and value. 0 or -ENOMEM. */
int sp_records_add(struct sp_records *r, const void *key, const void *value);
/* Frees the arrays and empties r (sizes kept). NULL is fine. */
void sp_records_free(struct sp_records *r);

static inline const void *sp_records_key(const struct sp_records *r, size_t i)
{
	return (const char *)r->keys + i * r->key_size;
}

static inline const void *sp_records_value(const struct sp_records *r, size_t i)
{
	return (const char *)r->values + i * r->value_size;
}

/* Whether r holds records of these sizes, or none (what a builder checks before casting). */
static inline bool sp_records_are(const struct sp_records *r, size_t key_size, size_t value_size)
{
	return !r->n || (r->key_size == key_size && r->value_size == value_size);
}

/* Records keyed by one __u64 (the stack maps), found by that key in constant time. */
struct sp_records_index {
	const struct sp_records *r;
	struct hashmap map; /* key -> record position */
};

/* Indexes r (its keys must be 8 bytes). 0, -EINVAL or -ENOMEM. */
int sp_records_index_u64(struct sp_records_index *x, const struct sp_records *r);
/* The value of the record keyed id, or NULL. */
const void *sp_records_find_u64(const struct sp_records_index *x, uint64_t id);
void sp_records_index_free(struct sp_records_index *x);

#endif
