/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for the pprof writer. The encoded profile is decoded back by a tiny protobuf
 * reader written here (varint and length-delimited walk only), independent of src/format/pprof.c,
 * so field numbers, ids, dedup and the varint encoding are checked on the wire.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "format/pprof.h"

/*
 * Check's ck_assert*() record every passing check through the fork pipe, far too slow for the
 * per-field checks of a 40000-sample profile; these only report failures.
 */
#define REQUIRE(c)                                                                     \
	do {                                                                           \
		if (!(c))                                                              \
			ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c);             \
	} while (0)
#define REQUIRE_CMP(T, a, op, b)                                                       \
	do {                                                                           \
		T a_ = (T)(a), b_ = (T)(b);                                            \
		if (!(a_ op b_))                                                       \
			ck_abort_msg("%s:%d: %s %s %s (%lld vs %lld)", __FILE__,   \
				     __LINE__, #a, #op, #b, (long long)a_, (long long)b_); \
	} while (0)
#define REQUIRE_U(a, op, b) REQUIRE_CMP(uint64_t, a, op, b)
#define REQUIRE_I(a, op, b) REQUIRE_CMP(int64_t, a, op, b)

/* ---- a minimal protobuf reader ---- */

struct rd {
	const uint8_t *p, *end;
};

struct field {
	uint64_t num, wt, v;
	const uint8_t *data; /* wire type 2 */
	size_t len;
};

static bool rd_varint(struct rd *r, uint64_t *ret)
{
	uint64_t v = 0;
	int shift;

	for (shift = 0; shift < 64 && r->p < r->end; shift += 7) {
		uint8_t b = *r->p++;

		if (shift == 63 && b > 1)
			return false; /* more than 64 bits */
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*ret = v;
			return true;
		}
	}
	return false;
}

static bool rd_field(struct rd *r, struct field *f)
{
	uint64_t tag;

	if (!rd_varint(r, &tag))
		return false;
	f->num = tag >> 3;
	f->wt = tag & 7;
	f->data = NULL;
	f->len = 0;
	if (f->num == 0)
		return false;
	if (f->wt == 0)
		return rd_varint(r, &f->v);
	if (f->wt != 2 || !rd_varint(r, &f->v) || f->v > (uint64_t)(r->end - r->p))
		return false;
	f->data = r->p;
	f->len = f->v;
	r->p += f->len;
	return true;
}

/* Appends a zeroed element; capacity doubles whenever n reaches a power of two. */
#define PUSH(arr, n)                                                                   \
	({                                                                             \
		if (!((n) & ((n) - 1))) {                                              \
			(arr) = realloc((arr), ((n) ? 2 * (n) : 1) * sizeof(*(arr)));  \
			REQUIRE((arr) != NULL);                                        \
		}                                                                      \
		memset(&(arr)[n], 0, sizeof(*(arr)));                                  \
		&(arr)[(n)++];                                                         \
	})

/* Decodes a packed repeated varint field into out[] (grown with realloc). */
static bool rd_packed(const struct field *f, uint64_t **out, size_t *n)
{
	struct rd r = { f->data, f->data + f->len };
	uint64_t v;

	if (f->wt != 2)
		return false; /* we always write packed */
	while (r.p < r.end) {
		if (!rd_varint(&r, &v))
			return false;
		*PUSH(*out, *n) = v;
	}
	return true;
}

struct dvt {
	int64_t type, unit;
};

struct dlabel {
	int64_t key, str, num;
	bool has_str, has_num;
};

struct dsample {
	uint64_t *loc, *val;
	size_t nloc, nval;
	const uint8_t *val_raw; /* the packed value bytes, for exact varint checks */
	size_t val_raw_len;
	struct dlabel *lab;
	size_t nlab;
};

struct dmapping {
	uint64_t id, start, limit, offset;
	int64_t filename, build_id;
	bool has_functions;
};

struct dlocation {
	uint64_t id, mapping_id, address;
	uint64_t *line_fn, *line_no; /* per Line: function id, line number */
	size_t nline, nline_no;
};

struct dfunction {
	uint64_t id;
	int64_t name, system_name, filename;
};

struct dprof {
	struct dvt *st;
	size_t nst;
	struct dsample *s;
	size_t ns;
	struct dmapping *m;
	size_t nm;
	struct dlocation *l;
	size_t nl;
	struct dfunction *f;
	size_t nf;
	char **str;
	size_t nstr;
	int64_t time, duration, period;
	struct dvt pt;
	bool has_pt;
	uint64_t *comment;
	size_t ncomment;
};

static void decode_vt(const struct field *f, struct dvt *vt)
{
	struct rd r = { f->data, f->data + f->len };
	struct field g;

	REQUIRE_U(f->wt, ==, 2);
	while (r.p < r.end) {
		REQUIRE(rd_field(&r, &g));
		REQUIRE_U(g.wt, ==, 0);
		if (g.num == 1)
			vt->type = (int64_t)g.v;
		else if (g.num == 2)
			vt->unit = (int64_t)g.v;
		else
			ck_abort_msg("ValueType: unexpected field %lu", (unsigned long)g.num);
	}
}

static void decode_sample(const struct field *f, struct dsample *s)
{
	struct rd r = { f->data, f->data + f->len }, lr;
	struct field g, h;
	struct dlabel *l;

	while (r.p < r.end) {
		REQUIRE(rd_field(&r, &g));
		switch (g.num) {
		case 1:
			REQUIRE(rd_packed(&g, &s->loc, &s->nloc));
			break;
		case 2:
			s->val_raw = g.data;
			s->val_raw_len = g.len;
			REQUIRE(rd_packed(&g, &s->val, &s->nval));
			break;
		case 3:
			REQUIRE_U(g.wt, ==, 2);
			l = PUSH(s->lab, s->nlab);
			lr = (struct rd){ g.data, g.data + g.len };
			while (lr.p < lr.end) {
				REQUIRE(rd_field(&lr, &h));
				REQUIRE_U(h.wt, ==, 0);
				if (h.num == 1) {
					l->key = (int64_t)h.v;
				} else if (h.num == 2) {
					l->str = (int64_t)h.v;
					l->has_str = true;
				} else if (h.num == 3) {
					l->num = (int64_t)h.v;
					l->has_num = true;
				} else {
					ck_abort_msg("Label: unexpected field %lu",
						     (unsigned long)h.num);
				}
			}
			break;
		default:
			ck_abort_msg("Sample: unexpected field %lu", (unsigned long)g.num);
		}
	}
}

static void decode_mapping(const struct field *f, struct dmapping *m)
{
	struct rd r = { f->data, f->data + f->len };
	struct field g;

	while (r.p < r.end) {
		REQUIRE(rd_field(&r, &g));
		REQUIRE_U(g.wt, ==, 0);
		switch (g.num) {
		case 1: m->id = g.v; break;
		case 2: m->start = g.v; break;
		case 3: m->limit = g.v; break;
		case 4: m->offset = g.v; break;
		case 5: m->filename = (int64_t)g.v; break;
		case 6: m->build_id = (int64_t)g.v; break;
		case 7: m->has_functions = g.v; break;
		default: ck_abort_msg("Mapping: unexpected field %lu", (unsigned long)g.num);
		}
	}
}

static void decode_location(const struct field *f, struct dlocation *l)
{
	struct rd r = { f->data, f->data + f->len }, lr;
	struct field g, h;
	uint64_t *fn, *no;

	while (r.p < r.end) {
		REQUIRE(rd_field(&r, &g));
		switch (g.num) {
		case 1: l->id = g.v; break;
		case 2: l->mapping_id = g.v; break;
		case 3: l->address = g.v; break;
		case 4:
			REQUIRE_U(g.wt, ==, 2);
			fn = PUSH(l->line_fn, l->nline);
			no = PUSH(l->line_no, l->nline_no);
			lr = (struct rd){ g.data, g.data + g.len };
			while (lr.p < lr.end) {
				REQUIRE(rd_field(&lr, &h));
				REQUIRE_U(h.wt, ==, 0);
				if (h.num == 1)
					*fn = h.v;
				else if (h.num == 2)
					*no = h.v;
				else
					ck_abort_msg("Line: unexpected field %lu", (unsigned long)h.num);
			}
			break;
		default: ck_abort_msg("Location: unexpected field %lu", (unsigned long)g.num);
		}
	}
}

static void decode_function(const struct field *f, struct dfunction *fn)
{
	struct rd r = { f->data, f->data + f->len };
	struct field g;

	while (r.p < r.end) {
		REQUIRE(rd_field(&r, &g));
		REQUIRE_U(g.wt, ==, 0);
		switch (g.num) {
		case 1: fn->id = g.v; break;
		case 2: fn->name = (int64_t)g.v; break;
		case 3: fn->system_name = (int64_t)g.v; break;
		case 4: fn->filename = (int64_t)g.v; break;
		default: ck_abort_msg("Function: unexpected field %lu", (unsigned long)g.num);
		}
	}
}

static void decode(const uint8_t *buf, size_t len, struct dprof *d)
{
	struct rd r = { buf, buf + len };
	struct field f;
	char **s;

	memset(d, 0, sizeof(*d));
	while (r.p < r.end) {
		if (!rd_field(&r, &f))
			ck_abort_msg("malformed protobuf at offset %zu", (size_t)(r.p - buf));
		switch (f.num) {
		case 1: decode_vt(&f, PUSH(d->st, d->nst)); break;
		case 2: decode_sample(&f, PUSH(d->s, d->ns)); break;
		case 3: decode_mapping(&f, PUSH(d->m, d->nm)); break;
		case 4: decode_location(&f, PUSH(d->l, d->nl)); break;
		case 5: decode_function(&f, PUSH(d->f, d->nf)); break;
		case 6:
			REQUIRE_U(f.wt, ==, 2);
			s = PUSH(d->str, d->nstr);
			*s = strndup((const char *)f.data, f.len);
			REQUIRE(*s != NULL);
			break;
		case 9: d->time = (int64_t)f.v; break;
		case 10: d->duration = (int64_t)f.v; break;
		case 11:
			decode_vt(&f, &d->pt);
			d->has_pt = true;
			break;
		case 12: d->period = (int64_t)f.v; break;
		case 13: REQUIRE(rd_packed(&f, &d->comment, &d->ncomment)); break;
		default: ck_abort_msg("Profile: unexpected field %lu", (unsigned long)f.num);
		}
		if (f.num >= 9 && f.num != 11 && f.num != 13)
			REQUIRE_U(f.wt, ==, 0);
	}
}

static void dprof_free(struct dprof *d)
{
	size_t i;

	for (i = 0; i < d->ns; i++) {
		free(d->s[i].loc);
		free(d->s[i].val);
		free(d->s[i].lab);
	}
	for (i = 0; i < d->nl; i++) {
		free(d->l[i].line_fn);
		free(d->l[i].line_no);
	}
	for (i = 0; i < d->nstr; i++)
		free(d->str[i]);
	free(d->st);
	free(d->s);
	free(d->m);
	free(d->l);
	free(d->f);
	free(d->str);
	free(d->comment);
}

static const char *S(const struct dprof *d, int64_t idx)
{
	REQUIRE_I(idx, >=, 0);
	REQUIRE_I(idx, <, (int64_t)d->nstr);
	return d->str[idx];
}

static void encode_decode(struct pprof *p, struct dprof *d, uint8_t **ret_buf, size_t *ret_len)
{
	uint8_t *buf = NULL;
	size_t len = 0;

	REQUIRE_I(pprof__encode(p, &buf, &len), ==, 0);
	REQUIRE(buf != NULL);
	REQUIRE_U(len, >, 0);
	decode(buf, len, d);
	if (ret_buf) {
		*ret_buf = buf;
		*ret_len = len;
	} else {
		free(buf);
	}
}

/* String table invariants every profile must satisfy. */
static void check_strings(const struct dprof *d)
{
	size_t i, j;

	REQUIRE_U(d->nstr, >=, 1);
	REQUIRE(!strcmp(d->str[0], ""));
	for (i = 0; i < d->nstr; i++)
		for (j = i + 1; j < d->nstr; j++)
			if (!strcmp(d->str[i], d->str[j]))
				ck_abort_msg("string \"%s\" at %zu and %zu", d->str[i], i, j);
}

/* Ids start at 1 and are dense; every reference resolves. */
static void check_ids(const struct dprof *d)
{
	size_t i, j;

	for (i = 0; i < d->nm; i++) {
		REQUIRE_U(d->m[i].id, ==, i + 1);
		REQUIRE(d->m[i].has_functions);
		REQUIRE_U(d->m[i].start, <, d->m[i].limit);
		S(d, d->m[i].filename);
		S(d, d->m[i].build_id);
		for (j = 0; j < i; j++) /* mappings never overlap */
			REQUIRE(d->m[i].start >= d->m[j].limit || d->m[j].start >= d->m[i].limit);
	}
	for (i = 0; i < d->nf; i++) {
		REQUIRE_U(d->f[i].id, ==, i + 1);
		REQUIRE_I(d->f[i].name, >, 0);
		REQUIRE_I(d->f[i].system_name, ==, d->f[i].name);
		S(d, d->f[i].name);
	}
	for (i = 0; i < d->nl; i++) {
		const struct dlocation *l = &d->l[i];

		REQUIRE_U(l->id, ==, i + 1);
		REQUIRE_U(l->mapping_id, >=, 1);
		REQUIRE_U(l->mapping_id, <=, d->nm);
		REQUIRE_U(l->nline, ==, 1);
		REQUIRE_U(l->line_fn[0], >=, 1);
		REQUIRE_U(l->line_fn[0], <=, d->nf);
		REQUIRE_U(l->address, >=, d->m[l->mapping_id - 1].start);
		REQUIRE_U(l->address, <, d->m[l->mapping_id - 1].limit);
		if (i) /* unique, increasing within a mapping */
			REQUIRE(l->address != d->l[i - 1].address);
		if (i && l->mapping_id == d->l[i - 1].mapping_id)
			REQUIRE_U(l->address, >, d->l[i - 1].address);
	}
	for (i = 0; i < d->ns; i++) {
		REQUIRE_U(d->s[i].nval, ==, d->nst);
		for (j = 0; j < d->s[i].nloc; j++) {
			REQUIRE_U(d->s[i].loc[j], >=, 1);
			REQUIRE_U(d->s[i].loc[j], <=, d->nl);
		}
		for (j = 0; j < d->s[i].nlab; j++)
			S(d, d->s[i].lab[j].key);
	}
}

static const char *loc_fn(const struct dprof *d, uint64_t loc_id)
{
	const struct dlocation *l = &d->l[loc_id - 1];

	return S(d, d->f[l->line_fn[0] - 1].name);
}

static const char *loc_obj(const struct dprof *d, uint64_t loc_id)
{
	const struct dlocation *l = &d->l[loc_id - 1];

	return S(d, d->m[l->mapping_id - 1].filename);
}

static const struct dlabel *find_label(const struct dprof *d, const struct dsample *s,
				       const char *key)
{
	size_t i;

	for (i = 0; i < s->nlab; i++)
		if (!strcmp(S(d, s->lab[i].key), key))
			return &s->lab[i];
	return NULL;
}

static size_t count_str(const struct dprof *d, const char *s)
{
	size_t i, n = 0;

	for (i = 0; i < d->nstr; i++)
		n += !strcmp(d->str[i], s);
	return n;
}

static const char *const types2[] = { "schedules", "offcpu" };
static const char *const units2[] = { "count", "nanoseconds" };

static struct pprof *new2(void)
{
	struct pprof *p = pprof__new(types2, units2, 2, 5000000000, 1700000000123456789,
				     "schedules", "count", 1);

	ck_assert_ptr_nonnull(p);
	return p;
}

/* ---- tests ---- */

START_TEST(test_basic_profile)
{
	const struct pprof_frame s1[] = {
		{ .function = "anon_pipe_read", .object = "[kernel]" },
		{ .function = "vfs_read" }, /* NULL object means [kernel] */
		{ .function = "foo", .object = "/usr/bin/cc1", .build_id = "abcd" },
		{ .function = "main", .object = "/usr/bin/cc1", .build_id = "abcd" },
	};
	const struct pprof_frame s2[] = {
		{ .function = "foo", .object = "/lib/libc.so.6" }, /* same name, other object: other function */
		{ .function = "main", .object = "/usr/bin/cc1", .build_id = "abcd" },
	};
	const struct pprof_label l1[] = {
		{ .key = "comm", .str = "cc1" },
		{ .key = "pid", .num = 42, .is_num = true },
	};
	const struct pprof_label l2[] = {
		{ .key = "comm", .str = "main" }, /* shares the string of function "main" */
		{ .key = "pid", .num = -7, .is_num = true },
	};
	const int64_t v1[] = { 3, 3000 }, v2[] = { 1, 10 }, v3[] = { 2, 2000 };
	struct pprof *p = new2();
	struct dprof d;
	size_t i;

	ck_assert_int_eq(pprof__add_sample(p, s1, 4, v1, l1, 2), 0);
	ck_assert_int_eq(pprof__add_sample(p, s2, 2, v2, l2, 2), 0);
	ck_assert_int_eq(pprof__add_sample(p, s1, 4, v3, l1, 1), 0);
	ck_assert_int_eq(pprof__add_comment(p, "hello"), 0);
	ck_assert_int_eq(pprof__add_comment(p, "cc1"), 0);
	encode_decode(p, &d, NULL, NULL);
	check_strings(&d);
	check_ids(&d);

	ck_assert_uint_eq(d.nst, 2);
	ck_assert_str_eq(S(&d, d.st[0].type), "schedules");
	ck_assert_str_eq(S(&d, d.st[0].unit), "count");
	ck_assert_str_eq(S(&d, d.st[1].type), "offcpu");
	ck_assert_str_eq(S(&d, d.st[1].unit), "nanoseconds");
	ck_assert(d.has_pt);
	ck_assert_int_eq(d.pt.type, d.st[0].type); /* "schedules" stored once */
	ck_assert_int_eq(d.pt.unit, d.st[0].unit);
	ck_assert_int_eq(d.period, 1);
	ck_assert_int_eq(d.time, 1700000000123456789);
	ck_assert_int_eq(d.duration, 5000000000);

	/* [kernel] (also for NULL), cc1 with its build-id, libc without */
	ck_assert_uint_eq(d.nm, 3);
	ck_assert_str_eq(S(&d, d.m[0].filename), "[kernel]");
	ck_assert_int_eq(d.m[0].build_id, 0);
	ck_assert_str_eq(S(&d, d.m[1].filename), "/usr/bin/cc1");
	ck_assert_str_eq(S(&d, d.m[1].build_id), "abcd");
	ck_assert_str_eq(S(&d, d.m[2].filename), "/lib/libc.so.6");
	ck_assert_int_eq(d.m[2].build_id, 0);

	/* anon_pipe_read, vfs_read, foo@cc1, main@cc1, foo@libc */
	ck_assert_uint_eq(d.nf, 5);
	ck_assert_uint_eq(d.nl, 5);
	ck_assert_int_eq(d.f[2].name, d.f[4].name);
	ck_assert_str_eq(S(&d, d.f[4].name), "foo");
	for (i = 0; i < d.nl; i++)
		ck_assert_uint_eq(d.l[i].line_fn[0], i + 1);
	ck_assert_uint_eq(d.l[0].mapping_id, 1);
	ck_assert_uint_eq(d.l[1].mapping_id, 1);
	ck_assert_uint_eq(d.l[2].mapping_id, 2);
	ck_assert_uint_eq(d.l[3].mapping_id, 2);
	ck_assert_uint_eq(d.l[4].mapping_id, 3);

	ck_assert_uint_eq(d.ns, 3);
	ck_assert_uint_eq(d.s[0].nloc, 4);
	ck_assert_str_eq(loc_fn(&d, d.s[0].loc[0]), "anon_pipe_read"); /* leaf first */
	ck_assert_str_eq(loc_fn(&d, d.s[0].loc[1]), "vfs_read");
	ck_assert_str_eq(loc_obj(&d, d.s[0].loc[1]), "[kernel]");
	ck_assert_str_eq(loc_fn(&d, d.s[0].loc[3]), "main");
	ck_assert_uint_eq(d.s[1].nloc, 2);
	ck_assert_str_eq(loc_fn(&d, d.s[1].loc[0]), "foo");
	ck_assert_str_eq(loc_obj(&d, d.s[1].loc[0]), "/lib/libc.so.6");
	ck_assert_uint_eq(d.s[1].loc[1], d.s[0].loc[3]); /* main@cc1 deduplicated */
	ck_assert_uint_eq(d.s[2].nloc, 4);
	for (i = 0; i < 4; i++)
		ck_assert_uint_eq(d.s[2].loc[i], d.s[0].loc[i]);
	ck_assert_uint_eq(d.s[0].val[0], 3);
	ck_assert_uint_eq(d.s[0].val[1], 3000);
	ck_assert_uint_eq(d.s[1].val[1], 10);
	ck_assert_uint_eq(d.s[2].val[0], 2);

	ck_assert_uint_eq(d.s[0].nlab, 2);
	ck_assert(find_label(&d, &d.s[0], "comm")->has_str);
	ck_assert(!find_label(&d, &d.s[0], "comm")->has_num);
	ck_assert_str_eq(S(&d, find_label(&d, &d.s[0], "comm")->str), "cc1");
	ck_assert(find_label(&d, &d.s[0], "pid")->has_num);
	ck_assert(!find_label(&d, &d.s[0], "pid")->has_str);
	ck_assert_int_eq(find_label(&d, &d.s[0], "pid")->num, 42);
	ck_assert_str_eq(S(&d, find_label(&d, &d.s[1], "comm")->str), "main");
	ck_assert_int_eq(find_label(&d, &d.s[1], "pid")->num, -7);
	ck_assert_uint_eq(d.s[2].nlab, 1);
	ck_assert_ptr_null(find_label(&d, &d.s[2], "pid"));

	ck_assert_uint_eq(d.ncomment, 2);
	ck_assert_str_eq(S(&d, (int64_t)d.comment[0]), "hello");
	ck_assert_str_eq(S(&d, (int64_t)d.comment[1]), "cc1");
	/* dedup across roles: label value, comment, function name, mapping file */
	ck_assert_uint_eq(count_str(&d, "cc1"), 1);
	ck_assert_uint_eq(count_str(&d, "main"), 1);
	ck_assert_uint_eq(count_str(&d, "foo"), 1);
	ck_assert_uint_eq(count_str(&d, "[kernel]"), 1);
	ck_assert_uint_eq(count_str(&d, "comm"), 1);

	dprof_free(&d);
	pprof__free(p);
}
END_TEST

START_TEST(test_build_id_splits_mapping)
{
	/* the same path with another build-id is another binary (replaced during the run) */
	const struct pprof_frame a[] = { { .function = "f", .object = "/bin/x", .build_id = "aa" } };
	const struct pprof_frame b[] = { { .function = "f", .object = "/bin/x", .build_id = "bb" } };
	const struct pprof_frame c[] = { { .function = "f", .object = "/bin/x" } };
	const int64_t v[] = { 1, 1 };
	struct pprof *p = new2();
	struct dprof d;

	ck_assert_int_eq(pprof__add_sample(p, a, 1, v, NULL, 0), 0);
	ck_assert_int_eq(pprof__add_sample(p, b, 1, v, NULL, 0), 0);
	ck_assert_int_eq(pprof__add_sample(p, c, 1, v, NULL, 0), 0);
	ck_assert_int_eq(pprof__add_sample(p, a, 1, v, NULL, 0), 0);
	encode_decode(p, &d, NULL, NULL);
	check_strings(&d);
	check_ids(&d);
	ck_assert_uint_eq(d.nm, 3);
	ck_assert_uint_eq(d.nf, 3);
	ck_assert_uint_eq(d.s[3].loc[0], d.s[0].loc[0]);
	ck_assert_uint_eq(count_str(&d, "/bin/x"), 1);
	dprof_free(&d);
	pprof__free(p);
}
END_TEST

/* Function of Line j of location id, and its name. */
static const struct dfunction *line_func(const struct dprof *d, uint64_t loc_id, size_t j)
{
	const struct dlocation *l = &d->l[loc_id - 1];

	REQUIRE_U(j, <, l->nline);
	REQUIRE_U(l->line_fn[j], >=, 1);
	REQUIRE_U(l->line_fn[j], <=, d->nf);
	return &d->f[l->line_fn[j] - 1];
}

/*
 * Frames with their addresses are Locations at those addresses in mappings from 0
 * over the whole address space at file offset 0 (one per object and build-id, apart from the
 * synthetic ones), the kernel's named [kernel.kallsyms]; an inline chain is one Location with
 * a Line per frame, innermost first; an unresolved frame in an object with named frames keeps
 * its placeholder name as its Line and the mapping has_functions (a client that finds it false
 * symbolizes the whole mapping again, replacing the names given), and in an object no frame of
 * which was named (a stripped binary) it has no Line and the mapping no has_functions;
 * system_name, filename and line numbers are written; all deduplicated.
 */
START_TEST(test_real_addresses)
{
	const char *bid = "c0ffee";
	const struct pprof_frame s1[] = {
		{ .function = "futex_wait", .object = "[kernel]", .addr = 0xffffffff8118b1d9ull },
		{ .function = "do_syscall_64", .addr = 0xffffffff81e2f5b8ull },
		{ .function = "Q::wait()", .object = "/bin/cc1", .build_id = bid, .addr = 0x4a1f20,
		  .system_name = "_ZN1Q4waitEv", .file = "q.cc", .line = 88, .inlined = true },
		{ .function = "Q::pop()", .object = "/bin/cc1", .build_id = bid, .addr = 0x4a1f20,
		  .system_name = "_ZN1Q3popEv", .file = "q.cc", .line = 120 },
		{ .function = "cc1+0x1a2b3c", .object = "/bin/cc1", .build_id = bid,
		  .addr = 0x1a2b3c, .unresolved = true },
		{ .function = "main", .object = "/bin/cc1", .build_id = bid, .addr = 0x10b0a0,
		  .file = "main.cc", .line = 39 },
		{ .function = "main", .object = "/bin/cc1", .build_id = bid }, /* no address */
	};
	const struct pprof_frame s2[] = {
		{ .function = "strip+0x1f00", .object = "/bin/strip", .build_id = "beef",
		  .addr = 0x1f00, .unresolved = true },
	};
	const int64_t v[] = { 1, 10 };
	struct pprof *p = new2();
	const struct dsample *sm;
	const struct dfunction *fn;
	struct dprof d;
	size_t i;

	ck_assert_int_eq(pprof__add_sample(p, s1, 7, v, NULL, 0), 0);
	ck_assert_int_eq(pprof__add_sample(p, s1 + 2, 5, v, NULL, 0), 0);
	ck_assert_int_eq(pprof__add_sample(p, s2, 1, v, NULL, 0), 0);
	encode_decode(p, &d, NULL, NULL);
	check_strings(&d);
	/* mappings: the kernel's, cc1's real one, cc1's synthetic one, strip's */
	ck_assert_uint_eq(d.nm, 4);
	ck_assert_str_eq(S(&d, d.m[0].filename), "[kernel.kallsyms]");
	ck_assert_str_eq(S(&d, d.m[1].filename), "/bin/cc1");
	ck_assert_str_eq(S(&d, d.m[1].build_id), "c0ffee");
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(d.m[i].start, 0);
		ck_assert_uint_eq(d.m[i].limit, UINT64_MAX);
		ck_assert_uint_eq(d.m[i].offset, 0);
	}
	ck_assert(d.m[0].has_functions);
	ck_assert(d.m[1].has_functions); /* cc1 has named frames: cc1+0x1a2b3c keeps its name */
	ck_assert_str_eq(S(&d, d.m[2].filename), "/bin/cc1");
	ck_assert(d.m[2].has_functions);
	ck_assert_uint_gt(d.m[2].start, 0);
	/* 7 frames, 6 Locations: the inline chain is one */
	ck_assert_uint_eq(d.ns, 3);
	sm = &d.s[0];
	ck_assert_uint_eq(sm->nloc, 6);
	ck_assert_uint_eq(d.nl, 7);
	ck_assert_uint_eq(d.l[sm->loc[0] - 1].address, 0xffffffff8118b1d9ull);
	ck_assert_uint_eq(d.l[sm->loc[1] - 1].mapping_id, 1); /* NULL object: the kernel */
	ck_assert_uint_eq(d.l[sm->loc[2] - 1].address, 0x4a1f20);
	ck_assert_uint_eq(d.l[sm->loc[2] - 1].nline, 2);
	fn = line_func(&d, sm->loc[2], 0); /* innermost first */
	ck_assert_str_eq(S(&d, fn->name), "Q::wait()");
	ck_assert_str_eq(S(&d, fn->system_name), "_ZN1Q4waitEv");
	ck_assert_str_eq(S(&d, fn->filename), "q.cc");
	ck_assert_uint_eq(d.l[sm->loc[2] - 1].line_no[0], 88);
	fn = line_func(&d, sm->loc[2], 1);
	ck_assert_str_eq(S(&d, fn->name), "Q::pop()");
	ck_assert_uint_eq(d.l[sm->loc[2] - 1].line_no[1], 120);
	ck_assert_uint_eq(d.l[sm->loc[3] - 1].address, 0x1a2b3c);
	ck_assert_uint_eq(d.l[sm->loc[3] - 1].nline, 1);
	ck_assert_uint_eq(d.l[sm->loc[3] - 1].mapping_id, 2);
	ck_assert_str_eq(S(&d, line_func(&d, sm->loc[3], 0)->name), "cc1+0x1a2b3c");
	fn = line_func(&d, sm->loc[4], 0);
	ck_assert_str_eq(S(&d, fn->name), "main");
	ck_assert_int_eq(fn->system_name, fn->name); /* not demangled: the same */
	ck_assert_uint_eq(d.l[sm->loc[4] - 1].line_no[0], 39);
	ck_assert_uint_eq(d.l[sm->loc[5] - 1].mapping_id, 3);
	ck_assert_uint_eq(d.l[sm->loc[5] - 1].nline, 1);
	ck_assert_uint_eq(d.l[sm->loc[5] - 1].line_no[0], 0);
	/* the second sample reuses every Location */
	ck_assert_uint_eq(d.s[1].nloc, 4);
	for (i = 0; i < 4; i++)
		ck_assert_uint_eq(d.s[1].loc[i], sm->loc[i + 2]);
	/* the stripped object: an address without a Line, no has_functions */
	ck_assert_str_eq(S(&d, d.m[3].filename), "/bin/strip");
	ck_assert(!d.m[3].has_functions);
	ck_assert_uint_eq(d.s[2].nloc, 1);
	ck_assert_uint_eq(d.l[d.s[2].loc[0] - 1].address, 0x1f00);
	ck_assert_uint_eq(d.l[d.s[2].loc[0] - 1].nline, 0);
	/* Functions: the 2 kernel ones, Q::wait, Q::pop, main in the real mapping, main in the
	 * synthetic one, the placeholders cc1+0x1a2b3c and strip+0x1f00 (the last one unused) */
	ck_assert_uint_eq(d.nf, 8);
	dprof_free(&d);
	pprof__free(p);
}
END_TEST

START_TEST(test_varint_edges)
{
	static const char *const t[] = { "a", "b", "c", "d", "e", "f" };
	static const char *const u[] = { "count", "count", "count", "count", "count", "count" };
	/* 0, 127, 128, 2^63 (INT64_MIN), UINT64_MAX (-1), -2: negatives take 10 bytes */
	const int64_t v[] = { 0, 127, 128, INT64_MIN, -1, -2 };
	static const uint8_t want[] = {
		0x00,
		0x7f,
		0x80, 0x01,
		0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
		0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
	};
	const struct pprof_frame fr[] = { { .function = "f" } };
	struct pprof *p = pprof__new(t, u, 6, INT64_MAX, -1, NULL, NULL, 128);
	struct dprof d;
	uint8_t *buf; /* d.s[0].val_raw points into it */
	size_t i, len;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(pprof__add_sample(p, fr, 1, v, NULL, 0), 0);
	encode_decode(p, &d, &buf, &len);
	ck_assert_uint_eq(d.ns, 1);
	ck_assert_uint_eq(d.s[0].val_raw_len, sizeof(want));
	ck_assert_mem_eq(d.s[0].val_raw, want, sizeof(want));
	ck_assert_uint_eq(d.s[0].nval, 6);
	for (i = 0; i < 6; i++)
		ck_assert_uint_eq(d.s[0].val[i], (uint64_t)v[i]);
	ck_assert_uint_eq((uint64_t)d.s[0].val[4], UINT64_MAX);
	ck_assert_uint_eq((uint64_t)d.s[0].val[3], 1ull << 63);
	ck_assert_int_eq(d.duration, INT64_MAX);
	ck_assert_int_eq(d.time, -1);
	ck_assert_int_eq(d.period, 128);
	ck_assert(!d.has_pt);
	free(buf);
	dprof_free(&d);
	pprof__free(p);
}
END_TEST

START_TEST(test_empty_profile)
{
	static const char *const t[] = { "samples" };
	static const char *const u[] = { "count" };
	struct pprof *p = pprof__new(t, u, 1, 0, 0, "cpu", "nanoseconds", 0);
	uint8_t *buf;
	size_t len;
	struct dprof d;

	ck_assert_ptr_nonnull(p);
	encode_decode(p, &d, &buf, &len);
	check_strings(&d);
	ck_assert_uint_eq(d.nst, 1);
	ck_assert_uint_eq(d.ns + d.nm + d.nl + d.nf + d.ncomment, 0);
	ck_assert_str_eq(S(&d, d.st[0].type), "samples");
	ck_assert_str_eq(S(&d, d.pt.unit), "nanoseconds");
	ck_assert_uint_eq(d.nstr, 5);
	/* "" is on the wire as field 6, length 0 */
	ck_assert(memmem(buf, len, "\x32\x00", 2));
	free(buf);
	dprof_free(&d);
	pprof__free(p);
}
END_TEST

/* Many distinct frames: dedup through the hash tables, dense ids, bounded mapping ranges. */
START_TEST(test_many_functions)
{
	enum { NFUNC = 20000, NOBJ = 7 };
	static const char *const t[] = { "samples" };
	static const char *const u[] = { "count" };
	struct pprof *p = pprof__new(t, u, 1, 1, 1, NULL, NULL, 0);
	char names[4][32], objs[4][16];
	struct pprof_frame fr[4];
	const struct pprof_label lab = { .key = "comm", .str = "w" };
	const int64_t one = 1;
	struct dprof d;
	size_t i, j, k;

	ck_assert_ptr_nonnull(p);
	for (k = 0; k < 2; k++) {
		for (i = 0; i < NFUNC; i++) {
			for (j = 0; j < 4; j++) {
				size_t fn = (i + j * 7919) % NFUNC;

				snprintf(names[j], sizeof(names[j]), "fn_%zu", fn);
				snprintf(objs[j], sizeof(objs[j]), "/o%zu", fn % NOBJ);
				fr[j] = (struct pprof_frame){ .function = names[j], .object = objs[j] };
			}
			REQUIRE_I(pprof__add_sample(p, fr, 4, &one, &lab, 1), ==, 0);
		}
	}
	encode_decode(p, &d, NULL, NULL);
	check_ids(&d);
	ck_assert_uint_eq(d.ns, 2 * NFUNC);
	ck_assert_uint_eq(d.nm, NOBJ);
	ck_assert_uint_eq(d.nf, NFUNC);
	ck_assert_uint_eq(d.nl, NFUNC);
	/* "" + "samples" + "count" + names + objects + "comm" + "w" */
	ck_assert_uint_eq(d.nstr, 3 + NFUNC + NOBJ + 2);
	for (i = 0; i < NFUNC; i++) /* second round reused the first round's locations */
		REQUIRE_U(d.s[i].loc[0], ==, d.s[NFUNC + i].loc[0]);
	for (i = 0; i < d.nl; i++) {
		REQUIRE_I(strncmp(loc_fn(&d, i + 1), "fn_", 3), ==, 0);
		k = strtoul(loc_fn(&d, i + 1) + 3, NULL, 10);
		snprintf(objs[0], sizeof(objs[0]), "/o%zu", k % NOBJ);
		REQUIRE(!strcmp(loc_obj(&d, i + 1), objs[0]));
	}
	dprof_free(&d);
	pprof__free(p);
}
END_TEST

static uint8_t *read_stream(FILE *f, size_t *ret_len)
{
	uint8_t *buf = NULL;
	size_t len = 0, n;

	rewind(f);
	do {
		buf = realloc(buf, len + 65536);
		ck_assert_ptr_nonnull(buf);
		n = fread(buf + len, 1, 65536, f);
		len += n;
	} while (n);
	ck_assert(!ferror(f));
	*ret_len = len;
	return buf;
}

static uint8_t *gunzip(const uint8_t *in, size_t in_len, size_t *ret_len)
{
	size_t cap = 4096, len = 0;
	uint8_t *out = malloc(cap);
	z_stream zs;
	int ret;

	ck_assert_ptr_nonnull(out);
	memset(&zs, 0, sizeof(zs));
	ck_assert_int_eq(inflateInit2(&zs, 15 + 16), Z_OK); /* gzip only, not zlib */
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)in_len;
	do {
		if (len == cap) {
			cap *= 2;
			out = realloc(out, cap);
			ck_assert_ptr_nonnull(out);
		}
		zs.next_out = out + len;
		zs.avail_out = (uInt)(cap - len);
		ret = inflate(&zs, Z_NO_FLUSH);
		ck_assert_msg(ret == Z_OK || ret == Z_STREAM_END, "inflate: %d", ret);
		len = cap - zs.avail_out;
	} while (ret != Z_STREAM_END);
	ck_assert_uint_eq(zs.avail_in, 0); /* nothing trailing */
	inflateEnd(&zs);
	*ret_len = len;
	return out;
}

static void check_gzip_roundtrip(struct pprof *p)
{
	uint8_t *raw, *gz, *plain;
	size_t raw_len, gz_len, plain_len;
	FILE *f = tmpfile();

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pprof__encode(p, &raw, &raw_len), 0);
	ck_assert_int_eq(pprof__write(p, f), 0);
	gz = read_stream(f, &gz_len);
	fclose(f);
	ck_assert_uint_ge(gz_len, 18);
	ck_assert_uint_eq(gz[0], 0x1f); /* gzip magic, deflate */
	ck_assert_uint_eq(gz[1], 0x8b);
	ck_assert_uint_eq(gz[2], 8);
	plain = gunzip(gz, gz_len, &plain_len);
	ck_assert_uint_eq(plain_len, raw_len);
	ck_assert_mem_eq(plain, raw, raw_len);
	free(raw);
	free(gz);
	free(plain);
}

START_TEST(test_gzip_small)
{
	const struct pprof_frame fr[] = {
		{ .function = "leaf" },
		{ .function = "main", .object = "/bin/a", .build_id = "01" },
	};
	const int64_t v[] = { 5, 500 };
	struct pprof *p = new2();

	ck_assert_int_eq(pprof__add_sample(p, fr, 2, v, NULL, 0), 0);
	check_gzip_roundtrip(p);
	pprof__free(p);
}
END_TEST

START_TEST(test_gzip_large)
{
	/* poorly compressible names so the deflate output spans many 16 KiB chunks */
	struct pprof *p = new2();
	struct pprof_frame fr[2];
	char name[64];
	uint64_t x = 88172645463325252ull;
	int64_t v[2];
	size_t i;

	for (i = 0; i < 30000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		snprintf(name, sizeof(name), "f%016llx%016llx", (unsigned long long)x,
			 (unsigned long long)(x * 31));
		fr[0] = (struct pprof_frame){ .function = name, .object = "/bin/big" };
		fr[1] = (struct pprof_frame){ .function = "main", .object = "/bin/big" };
		v[0] = (int64_t)i;
		v[1] = -(int64_t)(x >> 1);
		REQUIRE_I(pprof__add_sample(p, fr, 2, v, NULL, 0), ==, 0);
	}
	check_gzip_roundtrip(p);
	pprof__free(p);
}
END_TEST

START_TEST(test_write_errors)
{
	const struct pprof_frame fr[] = { { .function = "leaf" } };
	const int64_t v[] = { 1, 1 };
	struct pprof *p = new2();
	FILE *f;

	ck_assert_int_eq(pprof__add_sample(p, fr, 1, v, NULL, 0), 0);
	ck_assert_int_eq(pprof__write(NULL, stdout), -EINVAL);
	ck_assert_int_eq(pprof__write(p, NULL), -EINVAL);

	f = fopen("/dev/full", "w");
	if (f) { /* every write fails with ENOSPC, caught at the latest by the fflush() */
		ck_assert_int_eq(pprof__write(p, f), -ENOSPC);
		fclose(f);
	}
	f = fopen("/dev/null", "r"); /* not writable */
	ck_assert_ptr_nonnull(f);
	ck_assert_int_lt(pprof__write(p, f), 0);
	fclose(f);
	pprof__free(p);
}
END_TEST

START_TEST(test_invalid_args)
{
	static const char *const t1[] = { "x" }, *const tnull[] = { NULL };
	static const char *const u1[] = { "count" };
	const struct pprof_frame ok[] = { { .function = "f" } };
	const struct pprof_frame nofn[] = { { .function = "f" },
					    { .function = NULL, .object = "/bin/a" } };
	const struct pprof_label nokey[] = { { .key = NULL, .str = "x" } };
	const struct pprof_label nostr[] = { { .key = "comm", .str = NULL } };
	const int64_t v[] = { 1, 1 };
	uint8_t *before, *after;
	size_t before_len, after_len;
	struct pprof *p;

	errno = 0;
	ck_assert_ptr_null(pprof__new(t1, u1, 0, 0, 0, NULL, NULL, 0));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(pprof__new(tnull, u1, 1, 0, 0, NULL, NULL, 0));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(pprof__new(NULL, u1, 1, 0, 0, NULL, NULL, 0));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(pprof__new(t1, u1, 1, 0, 0, "cpu", NULL, 0));
	ck_assert_int_eq(errno, EINVAL);
	pprof__free(NULL);

	p = new2();
	ck_assert_int_eq(pprof__add_sample(p, ok, 1, v, NULL, 0), 0);
	ck_assert_int_eq(pprof__encode(p, &before, &before_len), 0);

	/* rejected before touching the profile: the encoding does not change */
	ck_assert_int_eq(pprof__add_sample(NULL, ok, 1, v, NULL, 0), -EINVAL);
	ck_assert_int_eq(pprof__add_sample(p, ok, 1, NULL, NULL, 0), -EINVAL);
	ck_assert_int_eq(pprof__add_sample(p, NULL, 1, v, NULL, 0), -EINVAL);
	ck_assert_int_eq(pprof__add_sample(p, nofn, 2, v, NULL, 0), -EINVAL);
	ck_assert_int_eq(pprof__add_sample(p, ok, 1, v, NULL, 1), -EINVAL);
	ck_assert_int_eq(pprof__add_sample(p, ok, 1, v, nokey, 1), -EINVAL);
	ck_assert_int_eq(pprof__add_sample(p, ok, 1, v, nostr, 1), -EINVAL);
	ck_assert_int_eq(pprof__add_comment(p, NULL), -EINVAL);
	ck_assert_int_eq(pprof__add_comment(NULL, "x"), -EINVAL);
	ck_assert_int_eq(pprof__encode(p, &after, &after_len), 0);
	ck_assert_uint_eq(after_len, before_len);
	ck_assert_mem_eq(after, before, before_len);

	ck_assert_int_eq(pprof__encode(NULL, &after, &after_len), -EINVAL);
	ck_assert_int_eq(pprof__encode(p, NULL, &after_len), -EINVAL);
	ck_assert_int_eq(pprof__encode(p, &after, NULL), -EINVAL);

	/* a stack-less sample is valid: no location_id field at all */
	ck_assert_int_eq(pprof__add_sample(p, NULL, 0, v, NULL, 0), 0);
	free(after);
	{
		struct dprof d;

		encode_decode(p, &d, NULL, NULL);
		ck_assert_uint_eq(d.ns, 2);
		ck_assert_uint_eq(d.s[1].nloc, 0);
		ck_assert_uint_eq(d.s[1].nval, 2);
		dprof_free(&d);
	}
	free(before);
	pprof__free(p);
}
END_TEST

static Suite *pprof_suite(void)
{
	Suite *s = suite_create("pprof");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30); /* ASan builds; the suite takes < 1 s optimized */
	tcase_add_test(tc, test_basic_profile);
	tcase_add_test(tc, test_build_id_splits_mapping);
	tcase_add_test(tc, test_real_addresses);
	tcase_add_test(tc, test_varint_edges);
	tcase_add_test(tc, test_empty_profile);
	tcase_add_test(tc, test_many_functions);
	tcase_add_test(tc, test_gzip_small);
	tcase_add_test(tc, test_gzip_large);
	tcase_add_test(tc, test_write_errors);
	tcase_add_test(tc, test_invalid_args);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pprof_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
