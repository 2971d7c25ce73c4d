// SPDX-License-Identifier: BSD-2-Clause
/* Raw map records and their index by a __u64 key (records.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "rows/records.h"

void sp_records_init(struct sp_records *r, size_t key_size, size_t value_size)
{
	memset(r, 0, sizeof(*r));
	r->key_size = key_size;
	r->value_size = value_size;
}

int sp_records_reserve(struct sp_records *r, size_t n)
{
	void *k, *v;

	if (n <= r->cap)
		return 0;
	if (n > SIZE_MAX / (r->key_size + r->value_size + 1))
		return -ENOMEM;
	k = realloc(r->keys, n * r->key_size ?: 1);
	if (!k)
		return -ENOMEM;
	r->keys = k;
	v = realloc(r->values, n * r->value_size ?: 1);
	if (!v)
		return -ENOMEM;
	r->values = v;
	r->cap = n;
	return 0;
}

int sp_records_add(struct sp_records *r, const void *key, const void *value)
{
	if (r->n == r->cap && sp_records_reserve(r, r->cap ? r->cap * 2 : 64))
		return -ENOMEM;
	memcpy((char *)r->keys + r->n * r->key_size, key, r->key_size);
	memcpy((char *)r->values + r->n * r->value_size, value, r->value_size);
	r->n++;
	return 0;
}

void sp_records_free(struct sp_records *r)
{
	if (!r)
		return;
	free(r->keys);
	free(r->values);
	sp_records_init(r, r->key_size, r->value_size);
}

int sp_records_index_u64(struct sp_records_index *x, const struct sp_records *r)
{
	x->r = r;
	hashmap__init(&x->map, hashmap_long_hash, hashmap_long_equal, NULL);
	if (r->n && r->key_size != sizeof(uint64_t))
		return -EINVAL;
	if (hashmap__reserve(&x->map, r->n))
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++) {
		uint64_t id;
		int err;

		memcpy(&id, sp_records_key(r, i), sizeof(id));
		err = hashmap__add(&x->map, (long)id, (long)i);
		if (err && err != -EEXIST) /* a map has each key once */
			return err;
	}
	return 0;
}

const void *sp_records_find_u64(const struct sp_records_index *x, uint64_t id)
{
	long pos;

	if (!hashmap__find(&x->map, (long)id, &pos))
		return NULL;
	return sp_records_value(x->r, (size_t)pos);
}

void sp_records_index_free(struct sp_records_index *x)
{
	hashmap__clear(&x->map);
}
