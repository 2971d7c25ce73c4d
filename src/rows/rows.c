// SPDX-License-Identifier: BSD-2-Clause
/* Row and stack indexes for the row builders (rows.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/kstack.h"
#include "rows/rows.h"

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

static uint64_t hash_str(const char *s, uint64_t h)
{
	s = str_or_empty(s);
	/* the terminating NUL separates the strings of a key */
	return hashmap_hash_bytes(s, strlen(s) + 1, h);
}

/* ---- rows by their key strings ---- */

static void row_key(struct row_index *x, long pos, const char *ret[ROW_KEY_MAX])
{
	if (pos < 0) {
		for (unsigned int i = 0; i < x->nkeys; i++)
			ret[i] = x->probe[i];
		return;
	}
	x->key_of(x->view, (size_t)pos, ret);
}

static uint64_t row_hash(long pos, void *ctx)
{
	struct row_index *x = ctx;
	const char *k[ROW_KEY_MAX];
	uint64_t h = 0;

	row_key(x, pos, k);
	for (unsigned int i = 0; i < x->nkeys; i++)
		h = hash_str(k[i], h);
	return h;
}

static bool row_equal(long a, long b, void *ctx)
{
	struct row_index *x = ctx;
	const char *ka[ROW_KEY_MAX], *kb[ROW_KEY_MAX];

	row_key(x, a, ka);
	row_key(x, b, kb);
	for (unsigned int i = 0; i < x->nkeys; i++)
		if (strcmp(str_or_empty(ka[i]), str_or_empty(kb[i])))
			return false;
	return true;
}

void row_index_init(struct row_index *x, row_key_fn key_of, void *view, unsigned int nkeys)
{
	memset(x, 0, sizeof(*x));
	hashmap__init(&x->map, row_hash, row_equal, x);
	x->key_of = key_of;
	x->view = view;
	x->nkeys = nkeys;
}

long row_index_find(struct row_index *x, const char *const *key)
{
	struct hashmap_entry *e;

	x->probe = key;
	e = hashmap__find_entry(&x->map, -1);
	x->probe = NULL;
	return e ? e->key : -1;
}

int row_index_add(struct row_index *x, size_t pos)
{
	return hashmap__add(&x->map, (long)pos, 0);
}

void row_index_free(struct row_index *x)
{
	hashmap__clear(&x->map);
}

int rows_account(struct sp_comm_list *list, uint64_t *max, const char *name, uint64_t count,
		 uint64_t time_ns, uint64_t max_ns)
{
	if (max_ns > *max)
		*max = max_ns;
	return sp_comm_list_add(list, name, count, time_ns, max_ns);
}

/* ---- stack rows alike ---- */

static const struct sp_stack_row *stack_at(struct stack_index *x, long key, size_t *ret_row)
{
	if (key < 0) {
		*ret_row = x->probe_row;
		return x->probe;
	}
	*ret_row = (size_t)key >> 32;
	return &x->list(x->view, *ret_row)->v[(size_t)key & 0xffffffffu];
}

static uint64_t stack_hash(long key, void *ctx)
{
	struct stack_index *x = ctx;
	size_t row;
	const struct sp_stack_row *s = stack_at(x, key, &row);

	return sp_stack_row_hash(s, x->with_objects, hashmap_hash_u64(row));
}

static bool stack_equal(long ka, long kb, void *ctx)
{
	struct stack_index *x = ctx;
	size_t ra, rb;
	const struct sp_stack_row *a = stack_at(x, ka, &ra), *b = stack_at(x, kb, &rb);

	return ra == rb && sp_stack_rows_alike(a, b, x->with_objects);
}

void stack_index_init(struct stack_index *x, stack_list_fn list, void *view, bool with_objects)
{
	memset(x, 0, sizeof(*x));
	hashmap__init(&x->map, stack_hash, stack_equal, x);
	x->list = list;
	x->view = view;
	x->with_objects = with_objects;
}

long stack_index_find(struct stack_index *x, size_t row, const struct sp_stack_row *s)
{
	struct hashmap_entry *e;

	x->probe_row = row;
	x->probe = s;
	e = hashmap__find_entry(&x->map, -1);
	x->probe = NULL;
	return e ? (long)((size_t)e->key & 0xffffffffu) : -1;
}

int stack_index_add(struct stack_index *x, size_t row, size_t pos)
{
	if (pos > 0xffffffffu || row > 0x7fffffffu)
		return -E2BIG;
	return hashmap__add(&x->map, (long)(row << 32 | pos), 0);
}

int stack_index_merge_last(struct stack_index *x, size_t row)
{
	struct sp_stack_list *l = x->list(x->view, row);
	struct sp_stack_row *s;
	long j;

	if (!l->n)
		return 0;
	s = &l->v[l->n - 1];
	j = stack_index_find(x, row, s);
	if (j < 0)
		return stack_index_add(x, row, l->n - 1);
	l->v[j].count += s->count;
	l->v[j].time_ns += s->time_ns;
	sp_stack_row_free(s);
	memset(s, 0, sizeof(*s)); /* the slot is reused by the next add */
	l->n--;
	return 0;
}

int stack_index_push_kstack(struct stack_index *x, size_t row, const struct sp_stack_row *proto,
			    const struct kstack_src *src, struct sp_stack_row **ret)
{
	struct sp_stack_row *s = sp_stack_list_add(x->list(x->view, row));

	if (!s)
		return -ENOMEM;
	*ret = s;
	s->count = proto->count;
	s->time_ns = proto->time_ns;
	s->pid = proto->pid;
	s->comm = strdup(proto->comm);
	if (!s->comm)
		return -ENOMEM;
	return kstack_fill(s, src->ks, src->st, src->cfg, src->from);
}

int stack_index_add_kstack(struct stack_index *x, size_t row, const struct sp_stack_row *proto,
			   const struct kstack_src *src)
{
	struct sp_stack_row *s;

	return stack_index_push_kstack(x, row, proto, src, &s) ?: stack_index_merge_last(x, row);
}

void stack_index_free(struct stack_index *x)
{
	hashmap__clear(&x->map);
}

static uint64_t key_set_hash(long key, void *ctx)
{
	return hashmap_hash_bytes((const void *)key, *(const size_t *)ctx, 0);
}

static bool key_set_equal(long a, long b, void *ctx)
{
	return !memcmp((const void *)a, (const void *)b, *(const size_t *)ctx);
}

void key_set_init(struct key_set *s, size_t len)
{
	s->len = len;
	hashmap__init(&s->map, key_set_hash, key_set_equal, &s->len);
}

int key_set_add(struct key_set *s, const void *key)
{
	void *copy;
	int err;

	if (key_set_has(s, key))
		return 0;
	copy = malloc(s->len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, key, s->len);
	err = hashmap__add(&s->map, (long)copy, 0);
	if (err)
		free(copy);
	return err;
}

bool key_set_has(const struct key_set *s, const void *key)
{
	return hashmap__find(&s->map, (long)key, NULL);
}

void key_set_free(struct key_set *s)
{
	struct hashmap_entry *e;

	hashmap__for_each_entry(&s->map, e)
		free((void *)e->key);
	hashmap__clear(&s->map);
}
