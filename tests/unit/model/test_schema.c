/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The JSON schema round trip, by construction: the test walks the field descriptors
 * (schema.h) of the run and of every view in sp_views[] to fill a run with a distinct value in
 * every field, writes it with format_json, reads it back with the strict reader and compares
 * the two runs field by field through the same descriptors. Several passes cover the
 * conditional keys (each target mode, locks available or not, the job's CPU time or not,
 * nullable strings null or not, stacks with or without objects and frame infos, sparse keys
 * set or not). At the end every field of
 * every descriptor must have been compared: a field added to a descriptor is tested with no
 * edit here, and a view added to sp_views[] too.
 *
 * The reader's strictness is tested the same way: every member of those documents left out in
 * turn, and every value given the wrong kind in turn, must be rejected with the message that
 * names it, unless the descriptors say the member may be absent.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_reader.h"
#include "base/json_writer.h"
#include "model/model_json.h"
#include "format/render.h"
#include "model/schema.h"
#include "model/view.h"

#define NPASSES 6
#define NELEMS 2 /* elements of every array and map */

/* Fields compared so far (CUSTOM fields are written only, and skipped). */
static const struct sp_field *seen[512];
static size_t nseen;

static void mark_seen(const struct sp_field *f)
{
	for (size_t i = 0; i < nseen; i++)
		if (seen[i] == f)
			return;
	ck_assert_uint_lt(nseen, sizeof(seen) / sizeof(seen[0]));
	seen[nseen++] = f;
}

struct filler {
	int pass;
	unsigned int counter; /* makes every value distinct */
};

static char *new_str(struct filler *fl)
{
	char buf[64];

	/* some non-ASCII, valid UTF-8, and a character JSON escapes */
	snprintf(buf, sizeof(buf), "s%u-\xc3\xa9\"%d", ++fl->counter, fl->pass);
	return strdup(buf);
}

static int64_t new_int(struct filler *fl, const struct sp_field *f)
{
	int64_t v = ++fl->counter;

	if (f->min < 0 && (fl->pass & 1))
		v = -v;
	if (v < f->min)
		v = f->min;
	if (v > f->max)
		v = f->max;
	return v;
}

static bool group_on(const struct sp_field *f, const void *obj)
{
	return !(f->flags & SP_GROUP) || *SP_CAT(obj, f->group_off, bool);
}

static void fill(struct filler *fl, const struct sp_schema *s, void *obj)
{
	for (size_t i = 0; i < s->nfields; i++) {
		const struct sp_field *f = &s->fields[i];
		void *p = SP_AT(obj, f->off, char);
		size_t *n = SP_AT(obj, f->n_off, size_t); /* only used by array-like fields */

		if (f->flags & SP_GROUP)
			*SP_AT(obj, f->group_off, bool) = !(fl->pass & 2);
		switch (f->type) {
		case SP_T_STR:
			*(char **)p = (f->flags & (SP_NULLABLE | SP_SPARSE)) && fl->pass % 3 == 1 ?
					      NULL : new_str(fl);
			break;
		case SP_T_CONST:
			*(char **)p = strdup(f->value);
			break;
		case SP_T_U64:
			*(uint64_t *)p = (uint64_t)++fl->counter * 1000003u;
			break;
		case SP_T_HEX: /* a kernel address: beyond INT64_MAX and 2^53 */
			*(uint64_t *)p = 0xffffffff81000000ull + ++fl->counter * 0x11ull;
			break;
		case SP_T_PTR:
			if (fl->pass % 3 == 2)
				break; /* NULL: not written */
			*(void **)p = calloc(1, f->size);
			fill(fl, f->sub, *(void **)p);
			break;
		case SP_T_INT:
			*(int *)p = (int)new_int(fl, f);
			break;
		case SP_T_UINT:
			*(unsigned int *)p = (unsigned int)new_int(fl, f);
			break;
		case SP_T_BOOL:
			*(bool *)p = fl->pass & 1;
			break;
		case SP_T_ENUM:
			/*
			 * Every name over the passes (2 is prime to the 5 target modes), and
			 * "command" (2) at pass 1, where the groups are on and bools true: its
			 * target.system (its own group flag) is written and compared too.
			 */
			*(int *)p = fl->pass * 2 % (int)f->nnames;
			break;
		case SP_T_OBJECT:
			fill(fl, f->sub, p);
			break;
		case SP_T_ARRAY:
			if (f->flags & SP_PARALLEL) {
				if (fl->pass % 3 == 2)
					break; /* NULL: not written */
				*(char **)p = calloc(*n ? *n : 1, f->size);
				for (size_t j = 0; j < *n; j++)
					fill(fl, f->sub, *(char **)p + j * f->size);
				break;
			}
			/* fallthrough */
		case SP_T_MAP:
			for (size_t j = 0; j < NELEMS; j++) {
				char *e = sp_array_add((void **)p, n, SP_AT(obj, f->cap_off, size_t), f->size);

				ck_assert_ptr_nonnull(e);
				if (f->type == SP_T_MAP)
					*SP_AT(e, f->key_off, char *) = new_str(fl);
				fill(fl, f->sub, e);
			}
			break;
		case SP_T_INTS:
			free(*(int **)p); /* target.pids and target.tids share one array */
			*(int **)p = calloc(NELEMS, sizeof(int));
			for (*n = 0; *n < NELEMS; (*n)++)
				(*(int **)p)[*n] = (int)new_int(fl, f);
			break;
		case SP_T_STRS:
			if ((f->flags & SP_PARALLEL) && (fl->pass & 1))
				break; /* NULL: not written */
			if (!(f->flags & SP_PARALLEL))
				*n = NELEMS + (size_t)fl->pass % 2;
			*(char ***)p = calloc(*n, sizeof(char *));
			for (size_t j = 0; j < *n; j++)
				(*(char ***)p)[j] = new_str(fl);
			break;
		case SP_T_CUSTOM:
			break;
		}
	}
}

static void compare(const struct sp_schema *s, const void *a, const void *b, const char *path)
{
	for (size_t i = 0; i < s->nfields; i++) {
		const struct sp_field *f = &s->fields[i];
		const void *pa = SP_CAT(a, f->off, char), *pb = SP_CAT(b, f->off, char);
		bool counted = f->type == SP_T_ARRAY || f->type == SP_T_MAP || f->type == SP_T_INTS ||
			       f->type == SP_T_STRS;
		size_t na = counted ? *SP_CAT(a, f->n_off, size_t) : 0;
		size_t nb = counted ? *SP_CAT(b, f->n_off, size_t) : 0;
		char sub[256];

		if (f->type == SP_T_CUSTOM || (f->when && !f->when(a)) || !group_on(f, a))
			continue;
		snprintf(sub, sizeof(sub), "%s.%s", path, f->key);
		mark_seen(f);
		switch (f->type) {
		case SP_T_STR:
		case SP_T_CONST: {
			const char *sa = *(char *const *)pa, *sb = *(char *const *)pb;

			ck_assert_msg(sa == sb || (sa && sb && !strcmp(sa, sb)), "%s: \"%s\" != \"%s\"",
				      sub, sa ? sa : "(null)", sb ? sb : "(null)");
			break;
		}
		case SP_T_U64:
		case SP_T_HEX:
			ck_assert_msg(*(const uint64_t *)pa == *(const uint64_t *)pb, "%s", sub);
			break;
		case SP_T_PTR:
			pa = *(const void *const *)pa;
			pb = *(const void *const *)pb;
			ck_assert_msg(!pa == !pb, "%s: NULL on one side only", sub);
			if (pa)
				compare(f->sub, pa, pb, sub);
			break;
		case SP_T_INT:
		case SP_T_UINT:
		case SP_T_ENUM:
			ck_assert_msg(*(const int *)pa == *(const int *)pb, "%s: %d != %d", sub,
				      *(const int *)pa, *(const int *)pb);
			break;
		case SP_T_BOOL:
			ck_assert_msg(*(const bool *)pa == *(const bool *)pb, "%s", sub);
			break;
		case SP_T_OBJECT:
			compare(f->sub, pa, pb, sub);
			break;
		case SP_T_ARRAY:
		case SP_T_MAP:
			ck_assert_msg(na == nb, "%s: %zu != %zu elements", sub, na, nb);
			ck_assert_msg(!*(void *const *)pa == !*(void *const *)pb,
				      "%s: NULL on one side only", sub);
			for (size_t j = 0; *(void *const *)pa && j < na; j++) {
				const char *ea = *(const char *const *)pa + j * f->size;
				const char *eb = *(const char *const *)pb + j * f->size;
				char elt[300];

				snprintf(elt, sizeof(elt), "%s[%zu]", sub, j);
				if (f->type == SP_T_MAP)
					ck_assert_str_eq(*SP_CAT(ea, f->key_off, char *),
							 *SP_CAT(eb, f->key_off, char *));
				compare(f->sub, ea, eb, elt);
			}
			break;
		case SP_T_INTS:
			ck_assert_msg(na == nb, "%s: %zu != %zu", sub, na, nb);
			for (size_t j = 0; j < na; j++)
				ck_assert_int_eq((*(int *const *)pa)[j], (*(int *const *)pb)[j]);
			break;
		case SP_T_STRS: {
			char *const *va = *(char **const *)pa, *const *vb = *(char **const *)pb;

			ck_assert_msg(!va == !vb, "%s: NULL on one side only", sub);
			ck_assert_msg(na == nb, "%s: %zu != %zu", sub, na, nb);
			for (size_t j = 0; va && j < na; j++)
				ck_assert_str_eq(va[j], vb[j]);
			break;
		}
		case SP_T_CUSTOM:
			break;
		}
	}
}

/* Every field of s and of its sub-schemas was compared. */
static void check_all_seen(const struct sp_schema *s)
{
	for (size_t i = 0; i < s->nfields; i++) {
		const struct sp_field *f = &s->fields[i];
		bool found = f->type == SP_T_CUSTOM;

		for (size_t j = 0; !found && j < nseen; j++)
			found = seen[j] == f;
		ck_assert_msg(found, "%s.%s: never compared by the round trip", s->name, f->key);
		if (f->sub)
			check_all_seen(f->sub);
	}
}

static char *write_json(const struct sp_run *run, size_t *ret_len)
{
	struct render_opts o = { .format = SP_FMT_JSON, .views = SP_VIEW_EVERY };
	char *buf = NULL;
	FILE *m = open_memstream(&buf, ret_len);

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(render_run(run, &o, m), 0);
	ck_assert_int_eq(fclose(m), 0);
	return buf;
}

/* A run with a value in every field and every view, in pass's way. */
static void fill_run(int pass, struct sp_run *a)
{
	struct filler fl = { .pass = pass };

	sp_run_init(a);
	fill(&fl, &sp_run_fields, a);
	for (size_t i = 0; i < sp_nviews; i++) {
		*SP_AT(a, sp_views[i]->present_off, bool) = true;
		fill(&fl, sp_views[i]->schema, sp_view_data(a, sp_views[i]));
	}
}

/* Fills a run in pass's way, writes it, reads it back and compares. */
static void round_trip(int pass)
{
	struct sp_run a, b;
	char err[256] = "";
	char *json, *again;
	size_t len, len2;

	fill_run(pass, &a);
	json = write_json(&a, &len);
	ck_assert_msg(sp_run_from_json(json, len, &b, err, sizeof(err)) == 0, "pass %d: %s", pass,
		      err);
	compare(&sp_run_fields, &a, &b, "run");
	for (size_t i = 0; i < sp_nviews; i++) {
		ck_assert(sp_view_present(&b, sp_views[i]));
		compare(sp_views[i]->schema, sp_view_cdata(&a, sp_views[i]),
			sp_view_cdata(&b, sp_views[i]), sp_views[i]->name);
	}
	/* and the run read back writes the same document */
	again = write_json(&b, &len2);
	ck_assert_uint_eq(len, len2);
	ck_assert_msg(!memcmp(json, again, len), "pass %d: the document changed", pass);
	free(json);
	free(again);
	sp_run_free(&a);
	sp_run_free(&b);
}

START_TEST(test_round_trip)
{
	round_trip(_i);
}
END_TEST

/* The passes together compare every field of every descriptor. */
START_TEST(test_every_field_covered)
{
	nseen = 0;
	for (int pass = 0; pass < NPASSES; pass++)
		round_trip(pass);
	check_all_seen(&sp_run_fields);
	for (size_t i = 0; i < sp_nviews; i++)
		check_all_seen(sp_views[i]->schema);
}
END_TEST

/*
 * ---- strictness, by construction ----
 * The document of a filled run is copied through the JSON writer with one change: one member
 * left out, or one value of the wrong kind (a scalar made [], an object or array made "x").
 * The copy walks the descriptors alongside, so it knows which members may be absent
 * (SP_OPTIONAL, SP_PARALLEL, views, map entries, written-only fields) and the path the
 * reader must name: "PARENT: missing key \"K\"", or "PATH: expected ...".
 */
enum kind { K_TOP, K_OBJ, K_ARRAY, K_MAP, K_SCALARS, K_SCALAR, K_ANY };

struct ctx {
	enum kind kind;
	const struct sp_schema *s; /* K_OBJ, K_ARRAY, K_MAP: the objects' schema */
};

struct mutation {
	bool delete;	/* leave a member out, or else retype a value */
	long target;	/* which member or value */
	long counter;
	bool hit, must_fail;
	char path[256]; /* delete: the parent's path; retype: the value's */
	char key[128];	/* delete: the member */
};

static struct ctx child_of(const struct sp_field *f)
{
	switch (f->type) {
	case SP_T_OBJECT:
	case SP_T_PTR:
		return (struct ctx){ K_OBJ, f->sub };
	case SP_T_ARRAY:
		return (struct ctx){ K_ARRAY, f->sub };
	case SP_T_MAP:
		return (struct ctx){ K_MAP, f->sub };
	case SP_T_INTS:
	case SP_T_STRS:
		return (struct ctx){ K_SCALARS, NULL };
	case SP_T_CUSTOM:
		return (struct ctx){ K_ANY, NULL };
	default:
		return (struct ctx){ K_SCALAR, NULL };
	}
}

/* The member key of an object in context c: its own context, and whether it may be absent. */
static struct ctx member_ctx(struct ctx c, const char *key, bool *ret_optional)
{
	const struct sp_view_ops *v;
	const struct sp_field *f;

	*ret_optional = true;
	switch (c.kind) {
	case K_TOP:
		v = sp_view_by_name(key, strlen(key));
		if (v)
			return (struct ctx){ K_OBJ, v->schema };
		c.s = &sp_run_fields;
		break;
	case K_MAP:
		return (struct ctx){ K_OBJ, c.s }; /* an entry: data */
	case K_OBJ:
		break;
	default:
		return (struct ctx){ K_ANY, NULL };
	}
	f = sp_schema_field(c.s, key);
	ck_assert_msg(f != NULL, "written key \"%s\" is in no descriptor of %s", key, c.s->name);
	*ret_optional = (f->flags & (SP_OPTIONAL | SP_PARALLEL | SP_SPARSE)) ||
			f->type == SP_T_CUSTOM;
	return child_of(f);
}

static void copy(struct json_writer *w, const struct json_value *v, struct ctx c,
		 const char *path, struct mutation *m)
{
	char sub[256];
	int64_t i64;
	uint64_t u64;
	bool b;

	if (!m->delete && m->counter++ == m->target) {
		m->hit = true;
		m->must_fail = c.kind != K_ANY;
		snprintf(m->path, sizeof(m->path), "%s", path);
		if (json_type(v) == JSON_OBJECT || json_type(v) == JSON_ARRAY) {
			jw_string(w, "x");
		} else {
			jw_start_array(w);
			jw_end_array(w);
		}
		return;
	}
	switch (json_type(v)) {
	case JSON_OBJECT:
		jw_start_object(w);
		for (size_t i = 0; i < json_len(v); i++) {
			const char *key = json_key_at(v, i);
			bool optional;
			struct ctx cc = member_ctx(c, key, &optional);

			if (m->delete && m->counter++ == m->target) {
				m->hit = true;
				m->must_fail = !optional;
				snprintf(m->path, sizeof(m->path), "%s", path);
				snprintf(m->key, sizeof(m->key), "%s", key);
				continue;
			}
			snprintf(sub, sizeof(sub), *path ? "%s.%s" : "%s%s", path, key);
			jw_name(w, key);
			copy(w, json_val_at(v, i), cc, sub, m);
		}
		jw_end_object(w);
		break;
	case JSON_ARRAY:
		jw_start_array(w);
		for (size_t i = 0; i < json_len(v); i++) {
			struct ctx cc = c.kind == K_ARRAY ? (struct ctx){ K_OBJ, c.s } :
					c.kind == K_SCALARS ? (struct ctx){ K_SCALAR, NULL } :
							      (struct ctx){ K_ANY, NULL };

			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			copy(w, json_at(v, i), cc, sub, m);
		}
		jw_end_array(w);
		break;
	case JSON_STRING:
		jw_string(w, json_str(v));
		break;
	case JSON_NUMBER:
		if (json_i64(v, &i64))
			jw_int(w, i64);
		else if (json_u64(v, &u64))
			jw_uint(w, u64);
		else
			ck_abort_msg("%s: not an integer", path);
		break;
	case JSON_BOOL:
		json_bool(v, &b);
		jw_bool(w, b);
		break;
	case JSON_NULL:
		jw_null(w);
		break;
	}
}

/* Every single change of pass's document, read back: rejected where it must be, naming it. */
static void mutate_all(int pass, bool delete)
{
	struct sp_run a, b;
	char *json, err[512];
	size_t len;
	struct json_value *doc;
	unsigned int rejected = 0;

	fill_run(pass, &a);
	json = write_json(&a, &len);
	doc = json_parse(json, len, NULL, 0);
	ck_assert_ptr_nonnull(doc);
	for (long t = delete ? 0 : 1;; t++) { /* the root itself is not retyped */
		struct mutation m = { .delete = delete, .target = t };
		char *buf = NULL, want[512];
		size_t blen = 0;
		FILE *f = open_memstream(&buf, &blen);
		struct json_writer *w = jw_new(f, false);
		int rc;

		copy(w, doc, (struct ctx){ K_TOP, NULL }, "", &m);
		ck_assert_int_eq(jw_finish(w), 0);
		jw_free(w);
		ck_assert_int_eq(fclose(f), 0);
		if (!m.hit) {
			free(buf);
			break;
		}
		rc = sp_run_from_json(buf, blen, &b, err, sizeof(err));
		sp_run_free(&b);
		if (!m.must_fail) {
			ck_assert_msg(rc == 0, "pass %d: change %ld (%s %s) rejected: %s", pass, t,
				      m.path, m.key, err);
		} else if (delete) {
			if (!*m.path && !strcmp(m.key, "schema"))
				snprintf(want, sizeof(want), "not a schedprof run: no \"schema\" key");
			else
				snprintf(want, sizeof(want), "%s%smissing key \"%s\"", m.path,
					 *m.path ? ": " : "", m.key);
			ck_assert_msg(rc == -EINVAL && !strcmp(err, want),
				      "pass %d: without %s: %d \"%s\", not \"%s\"", pass, m.key, rc, err,
				      want);
			rejected++;
		} else {
			snprintf(want, sizeof(want), "%s: expected ", m.path);
			ck_assert_msg(rc == -EINVAL && !strncmp(err, want, strlen(want)),
				      "pass %d: %s retyped: %d \"%s\"", pass, m.path, rc, err);
			rejected++;
		}
		free(buf);
	}
	ck_assert_uint_gt(rejected, 0);
	json_free(doc);
	free(json);
	sp_run_free(&a);
}

START_TEST(test_missing_keys)
{
	mutate_all(_i, true);
}
END_TEST

START_TEST(test_wrong_types)
{
	mutate_all(_i, false);
}
END_TEST

/* Every view is in the table once, by bit and by name. */
START_TEST(test_view_table)
{
	unsigned int bits = 0;

	for (size_t i = 0; i < sp_nviews; i++) {
		const struct sp_view_ops *v = sp_views[i];

		ck_assert_ptr_eq(sp_view_find(v->bit), v);
		ck_assert_ptr_eq(sp_view_by_name(v->name, strlen(v->name)), v);
		ck_assert_uint_eq(bits & v->bit, 0);
		bits |= v->bit;
		ck_assert_ptr_nonnull(v->schema);
		ck_assert_ptr_nonnull(v->print_table);
		/* NULL: a view without stacks (the timeline) */
		ck_assert(!v->walk.rows || sp_schema_field(v->schema, v->walk.rows));
		ck_assert(v->ndiff || v->ntotals); /* diff compares its rows, or its totals */
		/* today's views have rows that diff compares */
		if (v->bit & (SP_VIEW_SCHED | SP_VIEW_PROFILE | SP_VIEW_LOCKS | SP_VIEW_TIMELINE))
			ck_assert_uint_gt(v->ndiff, 0);
		for (size_t j = 0; j < v->ndiff; j++) {
			size_t off;
			const struct sp_field *f = sp_schema_path(v->schema, v->diff[j].rows, &off);

			ck_assert_msg(f && f->type == SP_T_ARRAY, "%s: no rows %s", v->name,
				      v->diff[j].rows);
		}
	}
	ck_assert_uint_eq(bits, SP_VIEW_EVERY);
}
END_TEST

static Suite *schema_suite(void)
{
	Suite *s = suite_create("schema");
	TCase *tc = tcase_create("round trip");

	tcase_add_loop_test(tc, test_round_trip, 0, NPASSES);
	tcase_add_test(tc, test_every_field_covered);
	tcase_add_test(tc, test_view_table);
	tcase_add_loop_test(tc, test_missing_keys, 0, NPASSES);
	tcase_add_loop_test(tc, test_wrong_types, 0, NPASSES);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(schema_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
