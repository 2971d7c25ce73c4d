// SPDX-License-Identifier: BSD-2-Clause
/* Interned strings (see strpool.h): a hash index over strings packed into large blocks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/hashmap.h"
#include "model/strpool.h"

#define BLOCK_SIZE (256 * 1024)

struct block {
	struct block *next;
	size_t used, size;
	char data[];
};

struct sp_strpool {
	struct hashmap index; /* string -> 0 */
	struct block *blocks;
};

struct sp_strpool *sp_strpool_new(void)
{
	struct sp_strpool *p = calloc(1, sizeof(*p));

	if (p)
		hashmap__init(&p->index, hashmap_str_hash, hashmap_str_equal, NULL);
	return p;
}

static char *store(struct sp_strpool *p, const char *s, size_t len)
{
	struct block *b = p->blocks;

	if (!b || b->size - b->used < len + 1) {
		size_t size = len + 1 > BLOCK_SIZE / 4 ? len + 1 : BLOCK_SIZE;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->used = 0;
		b->size = size;
		if (size == BLOCK_SIZE || !p->blocks) {
			b->next = p->blocks;
			p->blocks = b;
		} else { /* a large string: its own block, behind the one being filled */
			b->next = p->blocks->next;
			p->blocks->next = b;
		}
	}
	memcpy(b->data + b->used, s, len + 1);
	b->used += len + 1;
	return b->data + b->used - len - 1;
}

char *sp_strpool_intern(struct sp_strpool *p, const char *s)
{
	struct hashmap_entry *e = hashmap__find_entry(&p->index, (long)s);
	char *copy;

	if (e)
		return (char *)e->key;
	copy = store(p, s, strlen(s));
	if (!copy || hashmap__add(&p->index, (long)copy, 0))
		return NULL; /* a copy stored but not indexed is only wasted space */
	return copy;
}

bool sp_strpool_any(const struct sp_strpool *p, bool (*pred)(const char *s))
{
	struct hashmap_entry *e;

	hashmap__for_each_entry(&p->index, e)
		if (pred((const char *)e->key))
			return true;
	return false;
}

void sp_strpool_free(struct sp_strpool *p)
{
	if (!p)
		return;
	hashmap__clear(&p->index);
	while (p->blocks) {
		struct block *next = p->blocks->next;

		free(p->blocks);
		p->blocks = next;
	}
	free(p);
}
