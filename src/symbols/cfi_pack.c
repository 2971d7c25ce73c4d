// SPDX-License-Identifier: BSD-2-Clause
/* A compiled CFI table as bytes, and back (cfi_pack.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/cfi_pack.h"

#define MAGIC "spcfi\0\0"
#define VERSION 1
#define NSTATS (CFI_CFA_KINDS + 4) /* struct cfi_stats, as u64 words */
#define HEAD_SIZE (8 + 4 * 4 + CFI_PACK_ID_MAX + 8 + 8 + 8 * NSTATS)
#define ROW_SIZE 24

struct cursor {
	unsigned char *p;
	const unsigned char *end;
};

static void put(struct cursor *c, const void *v, size_t n)
{
	memcpy(c->p, v, n);
	c->p += n;
}

static void put_u32(struct cursor *c, uint32_t v)
{
	put(c, &v, sizeof(v));
}

static void put_u64(struct cursor *c, uint64_t v)
{
	put(c, &v, sizeof(v));
}

/* Reads n bytes into v; false past the end. */
static bool get(struct cursor *c, void *v, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return false;
	memcpy(v, c->p, n);
	c->p += n;
	return true;
}

static void stats_words(const struct cfi_stats *s, uint64_t *w)
{
	for (int k = 0; k < CFI_CFA_KINDS; k++)
		w[k] = s->rows[k];
	w[CFI_CFA_KINDS] = s->from_debug;
	w[CFI_CFA_KINDS + 1] = s->code_bytes;
	w[CFI_CFA_KINDS + 2] = s->covered_bytes;
	w[CFI_CFA_KINDS + 3] = s->lookups;
}

static void words_stats(const uint64_t *w, struct cfi_stats *s)
{
	for (int k = 0; k < CFI_CFA_KINDS; k++)
		s->rows[k] = w[k];
	s->from_debug = w[CFI_CFA_KINDS];
	s->code_bytes = w[CFI_CFA_KINDS + 1];
	s->covered_bytes = w[CFI_CFA_KINDS + 2];
	s->lookups = w[CFI_CFA_KINDS + 3];
}

int cfi_pack(const struct cfi_pack_key *key, const struct cfi_table *t, bool cut,
	     void **ret_data, size_t *ret_size)
{
	uint64_t w[NSTATS];
	struct cursor c;
	size_t size;
	void *buf;

	if (key->id_len > CFI_PACK_ID_MAX)
		return -EINVAL;
	if (t->n > (SIZE_MAX - HEAD_SIZE) / ROW_SIZE)
		return -ENOMEM;
	size = HEAD_SIZE + t->n * ROW_SIZE;
	buf = calloc(1, size);
	if (!buf)
		return -ENOMEM;
	c = (struct cursor){ .p = buf, .end = (unsigned char *)buf + size };
	put(&c, MAGIC, 8);
	put_u32(&c, VERSION);
	put_u32(&c, ROW_SIZE);
	put_u32(&c, key->id_len);
	put_u32(&c, cut);
	put(&c, key->build_id, CFI_PACK_ID_MAX);
	put_u64(&c, key->max_rows);
	put_u64(&c, t->n);
	stats_words(&t->stats, w);
	put(&c, w, sizeof(w));
	for (size_t i = 0; i < t->n; i++) {
		const struct cfi_row *r = &t->rows[i];
		uint8_t kinds[4] = { r->cfa, r->fp, r->bx, 0 };

		put_u64(&c, r->pc);
		put_u32(&c, r->len);
		put(&c, &r->cfa_off, sizeof(r->cfa_off));
		put(&c, &r->fp_off, sizeof(r->fp_off));
		put(&c, &r->bx_off, sizeof(r->bx_off));
		put(&c, kinds, sizeof(kinds));
	}
	*ret_data = buf;
	*ret_size = size;
	return 0;
}

/* Row i of the packed rows at c, checked against the row before it (prev, or NULL). */
static bool get_row(struct cursor *c, const struct cfi_row *prev, struct cfi_row *r)
{
	uint8_t kinds[4];

	if (!get(c, &r->pc, sizeof(r->pc)) || !get(c, &r->len, sizeof(r->len)) ||
	    !get(c, &r->cfa_off, sizeof(r->cfa_off)) || !get(c, &r->fp_off, sizeof(r->fp_off)) ||
	    !get(c, &r->bx_off, sizeof(r->bx_off)) || !get(c, kinds, sizeof(kinds)))
		return false;
	r->cfa = kinds[0];
	r->fp = kinds[1];
	r->bx = kinds[2];
	if (kinds[0] >= CFI_CFA_KINDS || kinds[1] >= CFI_FP_KINDS || kinds[2] >= CFI_FP_KINDS ||
	    kinds[3] || !r->len || r->pc + r->len < r->pc)
		return false;
	/* sorted and disjoint: the binary search of cfi_table_find() depends on it */
	return !prev || prev->pc + prev->len <= r->pc;
}

int cfi_unpack(const struct cfi_pack_key *key, const void *data, size_t size,
	       struct cfi_table *t, bool *ret_cut)
{
	struct cursor c = { .p = (unsigned char *)data, .end = (const unsigned char *)data + size };
	uint32_t version, row_size, id_len, cut;
	uint8_t id[CFI_PACK_ID_MAX];
	uint64_t max_rows, n, w[NSTATS];
	char magic[8];

	memset(t, 0, sizeof(*t));
	*ret_cut = false;
	if (!get(&c, magic, 8) || memcmp(magic, MAGIC, 8) || !get(&c, &version, 4) ||
	    version != VERSION || !get(&c, &row_size, 4) || row_size != ROW_SIZE ||
	    !get(&c, &id_len, 4) || !get(&c, &cut, 4) || !get(&c, id, sizeof(id)) ||
	    !get(&c, &max_rows, 8) || !get(&c, &n, 8) || !get(&c, w, sizeof(w)))
		return -EBADMSG;
	if (id_len != key->id_len || id_len > CFI_PACK_ID_MAX ||
	    memcmp(id, key->build_id, id_len) || max_rows != key->max_rows)
		return -ESTALE;
	for (size_t i = id_len; i < CFI_PACK_ID_MAX; i++)
		if (id[i])
			return -EBADMSG;
	if (cut > 1 || n != (uint64_t)(c.end - c.p) / ROW_SIZE ||
	    (size_t)(c.end - c.p) % ROW_SIZE || (max_rows && n > max_rows))
		return -EBADMSG;
	t->rows = calloc(n ? n : 1, sizeof(*t->rows));
	if (!t->rows)
		return -ENOMEM;
	t->cap = n;
	for (; t->n < n; t->n++) {
		if (!get_row(&c, t->n ? &t->rows[t->n - 1] : NULL, &t->rows[t->n])) {
			cfi_table_free(t);
			return -EBADMSG;
		}
	}
	words_stats(w, &t->stats);
	*ret_cut = cut;
	return 0;
}
