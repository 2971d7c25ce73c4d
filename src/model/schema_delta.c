// SPDX-License-Identifier: BSD-2-Clause
/*
 * cur - prev by the field descriptors (sp_schema_delta, schema.h): what each field is over
 * time (a counter, a maximum, a value since the start, a state, a setting) is written once,
 * in the schema, for every struct of every view.
 *
 * A keyed array is matched the same way everywhere: prev's elements go into an index by key;
 * each element of cur takes its match out of the index (so no element of prev is subtracted
 * twice, even when cur named two elements alike), and the elements left in the index at the
 * end are the vanished ones.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "base/hashmap.h"
#include "model/model.h"
#include "model/run_delta.h"
#include "model/schema.h"
#include "base/util.h"

static uint64_t sub(uint64_t cur, uint64_t prev, struct sp_delta_stats *st)
{
	if (cur >= prev)
		return cur - prev;
	st->negative++;
	return 0;
}

static bool is_counter(const struct sp_field *f)
{
	return f->type == SP_T_U64 && !(f->flags & (SP_MAX | SP_SINCE | SP_STATE));
}

/* A U64 that keeps its element in the interval when not 0. */
static bool moves(const struct sp_field *f)
{
	return f->type == SP_T_U64 && !(f->flags & (SP_MAX | SP_SINCE));
}

static bool has_key(const struct sp_schema *s)
{
	if (s->alike)
		return true;
	for (size_t i = 0; i < s->nfields; i++)
		if (s->fields[i].flags & SP_KEY)
			return true;
	return false;
}

/* ---- an element's identity: its SP_KEY fields, a map's name, or the schema's own ---- */

static uint64_t hash_key_str(const char *s, uint64_t h)
{
	unsigned char tag = s ? 1 : 0;

	h = hashmap_hash_bytes(&tag, 1, h);
	return s ? hashmap_hash_bytes(s, strlen(s) + 1, h) : h;
}

static bool key_str_equal(const char *a, const char *b)
{
	return !a || !b ? !a == !b : !strcmp(a, b);
}

static uint64_t elem_hash(long key, void *ctx)
{
	const struct sp_field *af = ctx;
	const void *e = (const void *)key;
	uint64_t h = 0x5ca1ab1e;

	if (af->type == SP_T_MAP)
		return hash_key_str(*SP_CAT(e, af->key_off, char *), h);
	if (af->sub->hash)
		return af->sub->hash(e);
	for (size_t i = 0; i < af->sub->nfields; i++) {
		const struct sp_field *f = &af->sub->fields[i];

		if (!(f->flags & SP_KEY))
			continue;
		if (f->type == SP_T_STR)
			h = hash_key_str(*SP_CAT(e, f->off, char *), h);
		else if (f->type == SP_T_INT)
			h = hashmap_hash_bytes(SP_CAT(e, f->off, int), sizeof(int), h);
		else if (f->type == SP_T_STRS)
			for (size_t j = 0; j < *SP_CAT(e, f->n_off, size_t); j++)
				h = hash_key_str((*SP_CAT(e, f->off, char **))[j], h);
	}
	return h;
}

static bool elem_equal(long ka, long kb, void *ctx)
{
	const struct sp_field *af = ctx;
	const void *a = (const void *)ka, *b = (const void *)kb;

	if (af->type == SP_T_MAP)
		return key_str_equal(*SP_CAT(a, af->key_off, char *), *SP_CAT(b, af->key_off, char *));
	if (af->sub->alike)
		return af->sub->alike(a, b);
	for (size_t i = 0; i < af->sub->nfields; i++) {
		const struct sp_field *f = &af->sub->fields[i];
		size_t n;

		if (!(f->flags & SP_KEY))
			continue;
		switch (f->type) {
		case SP_T_STR:
			if (!key_str_equal(*SP_CAT(a, f->off, char *), *SP_CAT(b, f->off, char *)))
				return false;
			break;
		case SP_T_INT:
			if (*SP_CAT(a, f->off, int) != *SP_CAT(b, f->off, int))
				return false;
			break;
		case SP_T_STRS:
			n = *SP_CAT(a, f->n_off, size_t);
			if (n != *SP_CAT(b, f->n_off, size_t))
				return false;
			for (size_t j = 0; j < n; j++)
				if (!key_str_equal((*SP_CAT(a, f->off, char **))[j],
						   (*SP_CAT(b, f->off, char **))[j]))
					return false;
			break;
		default:
			break;
		}
	}
	return true;
}

/* ---- cur's values, copied ---- */

static int copy_strs(char ***d, char *const *c, size_t n)
{
	if (!c)
		return 0;
	*d = calloc(n ? n : 1, sizeof(**d));
	if (!*d)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (xstrdup_to(&(*d)[i], c[i]))
			return -ENOMEM;
	return 0;
}

static int delta_fields(const struct sp_schema *s, const void *p, const void *c, void *d,
			struct sp_delta_stats *st, bool scalars);

/* An array without a key (or a PTR's one element): each element cur's, copied. */
static int copy_elems(const struct sp_field *f, const void *c, void *d, size_t n,
		      struct sp_delta_stats *st)
{
	const char *cv = *SP_CAT(c, f->off, char *);
	char **dv = SP_AT(d, f->off, char *);
	int err = 0;

	if (!cv)
		return 0;
	*dv = calloc(n ? n : 1, f->size);
	if (!*dv)
		return -ENOMEM;
	if (f->type == SP_T_ARRAY && !(f->flags & SP_PARALLEL)) {
		*SP_AT(d, f->n_off, size_t) = n;
		*SP_AT(d, f->cap_off, size_t) = n;
	}
	for (size_t i = 0; !err && i < n; i++)
		err = sp_schema_delta(f->sub, NULL, cv + i * f->size, *dv + i * f->size, st);
	return err;
}

/* ---- a keyed array: matched element by element ---- */

static int delta_keyed(const struct sp_field *f, const void *p, const void *c, void *d,
		       struct sp_delta_stats *st);

/*
 * Whether an SP_MOVES_ALONE array of s has an element that moved from p (NULL: none) to c:
 * made in e, a scratch struct of s with empty arrays, then freed from it (the struct's other
 * fields are made later, with it). *moved; 0 or -errno.
 */
static int moved_alone(const struct sp_schema *s, const void *p, const void *c, void *e,
		       bool *moved)
{
	struct sp_delta_stats st = {}; /* the struct's own delta counts them, once */
	int err = 0;

	*moved = false;
	for (size_t i = 0; !err && !*moved && i < s->nfields; i++) {
		const struct sp_field *f = &s->fields[i];
		char **v = SP_AT(e, f->off, char *);
		size_t *n = SP_AT(e, f->n_off, size_t);

		if (!(f->flags & SP_MOVES_ALONE) || (f->flags & SP_WHOLE_RUN) ||
		    (f->when && !f->when(c)))
			continue;
		err = delta_keyed(f, p, c, e, &st);
		*moved = *n != 0;
		for (size_t j = 0; *v && j < *n; j++) {
			if (f->type == SP_T_MAP)
				free(*SP_AT(*v + j * f->size, f->key_off, char *));
			sp_schema_free(f->sub, *v + j * f->size, NULL);
		}
		free(*v);
		*v = NULL;
		*n = 0;
		*SP_AT(e, f->cap_off, size_t) = 0;
	}
	return err;
}

static int delta_keyed(const struct sp_field *f, const void *p, const void *c, void *d,
		       struct sp_delta_stats *st)
{
	const char *pv = p ? *SP_CAT(p, f->off, char *) : NULL, *cv = *SP_CAT(c, f->off, char *);
	size_t pn = pv ? *SP_CAT(p, f->n_off, size_t) : 0, cn = *SP_CAT(c, f->n_off, size_t);
	_Alignas(max_align_t) char tmp[512]; /* one element, before it is known to stay */
	struct hashmap x;
	int err = 0;

	if (f->size > sizeof(tmp))
		return -EINVAL;
	hashmap__init(&x, elem_hash, elem_equal, (void *)f);
	if (pn && hashmap__reserve(&x, pn))
		return -ENOMEM;
	for (size_t i = 0; !err && i < pn; i++) {
		err = hashmap__add(&x, (long)(pv + i * f->size), 0);
		/* a second element alike in prev: the first is matched, this one vanishes */
		if (err == -EEXIST)
			err = 0;
	}
	for (size_t i = 0; !err && cv && i < cn; i++) {
		const char *ce = cv + i * f->size;
		long pe = 0;
		bool any = false;
		void *de;

		if (!hashmap__delete(&x, (long)ce, &pe, NULL))
			pe = 0;
		/*
		 * its counters first: an element with nothing in the interval is left out; then,
		 * when none moved, the arrays counted apart from it (SP_MOVES_ALONE)
		 */
		memset(tmp, 0, f->size);
		delta_fields(f->sub, (const void *)pe, ce, tmp, st, true);
		for (size_t j = 0; j < f->sub->nfields; j++)
			if (moves(&f->sub->fields[j]) && *SP_AT(tmp, f->sub->fields[j].off, uint64_t))
				any = true;
		if (!any)
			err = moved_alone(f->sub, (const void *)pe, ce, tmp, &any);
		if (err)
			break;
		if (!any)
			continue;
		de = sp_array_add(SP_AT(d, f->off, void *), SP_AT(d, f->n_off, size_t),
				  SP_AT(d, f->cap_off, size_t), f->size);
		if (!de) {
			err = -ENOMEM;
			break;
		}
		memcpy(de, tmp, f->size);
		if (f->type == SP_T_MAP)
			err = xstrdup_to(SP_AT(de, f->key_off, char *), *SP_CAT(ce, f->key_off, char *));
		err = err ?: delta_fields(f->sub, (const void *)pe, ce, de, st, false);
	}
	st->vanished += hashmap__size(&x);
	hashmap__clear(&x);
	return err;
}

/*
 * One pass over the fields of s: scalars, the U64s and the group flags (what decides whether
 * a keyed element stays); or the rest: strings, arrays, objects and the other scalars.
 */
static int delta_fields(const struct sp_schema *s, const void *p, const void *c, void *d,
			struct sp_delta_stats *st, bool scalars)
{
	int err = 0;

	for (size_t i = 0; !err && i < s->nfields; i++) {
		const struct sp_field *f = &s->fields[i];
		const void *cp = SP_CAT(c, f->off, char);
		void *dp = SP_AT(d, f->off, char);
		bool group = f->flags & SP_GROUP;

		if ((f->flags & SP_WHOLE_RUN) || (f->when && !f->when(c)))
			continue;
		if (scalars && group)
			*SP_AT(d, f->group_off, bool) = *SP_CAT(c, f->group_off, bool);
		if (f->type == SP_T_U64) {
			if (scalars)
				*(uint64_t *)dp = !is_counter(f) ? *(const uint64_t *)cp :
						  sub(*(const uint64_t *)cp,
						      p ? *SP_CAT(p, f->off, uint64_t) : 0, st);
			continue;
		}
		if (scalars)
			continue;
		switch (f->type) {
		case SP_T_STR:
		case SP_T_CONST:
			err = xstrdup_to((char **)dp, *(char *const *)cp);
			break;
		case SP_T_INT:
		case SP_T_ENUM:
			*(int *)dp = *(const int *)cp;
			break;
		case SP_T_UINT:
			*(unsigned int *)dp = *(const unsigned int *)cp;
			break;
		case SP_T_BOOL:
			*(bool *)dp = *(const bool *)cp;
			break;
		case SP_T_HEX:
			*(uint64_t *)dp = *(const uint64_t *)cp;
			break;
		case SP_T_OBJECT:
			if (group && !*SP_CAT(c, f->group_off, bool))
				break;
			/* a group that prev does not have: all of cur's */
			err = sp_schema_delta(f->sub,
					      p && (!group || *SP_CAT(p, f->group_off, bool)) ?
						      SP_CAT(p, f->off, char) : NULL,
					      cp, dp, st);
			break;
		case SP_T_PTR:
			err = copy_elems(f, c, d, 1, st);
			break;
		case SP_T_INTS: {
			size_t n = *SP_CAT(c, f->n_off, size_t);
			const int *cv = *(int *const *)cp;

			if (!cv || !n)
				break;
			*(int **)dp = calloc(n, sizeof(int));
			if (!*(int **)dp)
				return -ENOMEM;
			memcpy(*(int **)dp, cv, n * sizeof(int));
			*SP_AT(d, f->n_off, size_t) = n;
			break;
		}
		case SP_T_STRS:
			*SP_AT(d, f->n_off, size_t) = *SP_CAT(c, f->n_off, size_t);
			err = copy_strs((char ***)dp, *(char **const *)cp, *SP_CAT(c, f->n_off, size_t));
			break;
		case SP_T_ARRAY:
		case SP_T_MAP:
			if (f->type == SP_T_MAP || has_key(f->sub))
				err = delta_keyed(f, p, c, d, st);
			else
				err = copy_elems(f, c, d, *SP_CAT(c, f->n_off, size_t), st);
			break;
		default: /* CUSTOM: derived from the others, nothing stored */
			break;
		}
	}
	return err;
}

int sp_schema_delta(const struct sp_schema *s, const void *prev, const void *cur, void *d,
		    struct sp_delta_stats *st)
{
	return delta_fields(s, prev, cur, d, st, true) ?: delta_fields(s, prev, cur, d, st, false);
}
