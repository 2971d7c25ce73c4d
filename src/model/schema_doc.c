// SPDX-License-Identifier: BSD-2-Clause
/*
 * docs/json-schema.md from the field descriptors (schema_doc.h): one table per schema, in the
 * order a reader meets them from the run down, each schema once. Everything printed follows
 * from a descriptor's type, flags, range and sub-schema; the page's prose about what a key
 * means lives in docs/json.md, which is written by hand.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "model/model.h"
#include "model/schema.h"
#include "model/schema_doc.h"
#include "base/util.h"
#include "model/view.h"

/* Far more than the run's sub-schemas (about 40): a longer list is a programming error. */
#define MAX_SCHEMAS 128

struct doc {
	FILE *f;
	const struct sp_schema *s[MAX_SCHEMAS];
	char name[MAX_SCHEMAS][64]; /* unique: the heading and its anchor */
	size_t n;
};

/* The schema's index in the list, added at its end when new; -1 when the list is full. */
static int add(struct doc *d, const struct sp_schema *s, const char *parent)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->s[i] == s)
			return (int)i;
	if (d->n == MAX_SCHEMAS)
		return -1;
	d->s[d->n] = s;
	snprintf(d->name[d->n], sizeof(d->name[0]), "%s", s->name);
	/* two schemas of one name (each view's caller_cache): the later one is qualified */
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->name[i], s->name)) {
			snprintf(d->name[d->n], sizeof(d->name[0]), "%s_%s", parent, s->name);
			break;
		}
	return (int)d->n++;
}

static void bound(char *buf, size_t len, int64_t v)
{
	if (v == INT64_MAX)
		snprintf(buf, len, "2^63-1");
	else if (v == UINT_MAX)
		snprintf(buf, len, "2^32-1");
	else if (v == INT_MAX)
		snprintf(buf, len, "2^31-1");
	else if (v == INT_MIN)
		snprintf(buf, len, "-2^31");
	else
		snprintf(buf, len, "%" PRId64, v);
}

static void print_range(FILE *f, const struct sp_field *fl)
{
	char lo[32], hi[32];

	bound(lo, sizeof(lo), fl->min);
	bound(hi, sizeof(hi), fl->max);
	fprintf(f, "%s to %s", lo, hi);
}

static void print_link(struct doc *d, const struct sp_schema *s, const char *parent)
{
	int i = add(d, s, parent);

	if (i < 0)
		fprintf(d->f, "`%s`", s->name);
	else
		fprintf(d->f, "[`%s`](#%s)", d->name[i], d->name[i]);
}

/* The types whose description is a fixed text. */
static const char *const fixed_type[] = {
	[SP_T_U64] = "integer, 0 to 2^63-1",
	[SP_T_BOOL] = "boolean",
	[SP_T_HEX] = "string, `\"0x\"` and lowercase hex (64 bits)",
	[SP_T_STRS] = "array of strings",
	[SP_T_CUSTOM] = "derived",
};

static void print_type(struct doc *d, const struct sp_field *fl, const char *parent)
{
	FILE *f = d->f;

	if ((size_t)fl->type < ARRAY_SIZE(fixed_type) && fixed_type[fl->type]) {
		fputs(fixed_type[fl->type], f);
		return;
	}
	switch (fl->type) {
	case SP_T_STR:
		fputs(fl->flags & SP_NULLABLE ? "string or null" : "string", f);
		break;
	case SP_T_CONST:
		fprintf(f, "string, always `\"%s\"`", fl->value);
		break;
	case SP_T_INT:
	case SP_T_UINT:
	case SP_T_INTS:
		if (fl->type == SP_T_INTS)
			fprintf(f, "array of integers (%s), ", fl->what ? fl->what : "each");
		else
			fputs("integer, ", f);
		print_range(f, fl);
		break;
	case SP_T_ENUM:
		fputs("string, one of", f);
		for (size_t i = 0; i < fl->nnames; i++)
			if (fl->names[i])
				fprintf(f, "%s `%s`", i ? "," : "", fl->names[i]);
		break;
	default: /* OBJECT, PTR, ARRAY, MAP: a link to the sub-schema's table */
		fputs(fl->type == SP_T_ARRAY ? "array of "
		      : fl->type == SP_T_MAP ? "object: name to " : "object ", f);
		print_link(d, fl->sub, parent);
		break;
	}
}

/* A struct to ask .when about, zeroed but for one scalar member. */
static _Alignas(16) unsigned char probe[4096];

/* .when of the zeroed struct with member c set to v (its type's size), or -1: no room. */
static int ask(const struct sp_field *fl, const struct sp_field *c, uint64_t v)
{
	size_t size = c->type == SP_T_U64 ? sizeof(uint64_t)
		      : c->type == SP_T_BOOL ? sizeof(bool) : sizeof(int);
	bool b = v;
	int i = (int)v;

	if (c->off + size > sizeof(probe))
		return -1;
	memset(probe, 0, sizeof(probe));
	memcpy(probe + c->off, c->type == SP_T_U64 ? (void *)&v : c->type == SP_T_BOOL ?
	       (void *)&b : (void *)&i, size);
	return fl->when(probe);
}

/*
 * A field written only in some cases (.when): the member of the same struct that decides it,
 * found by asking .when of a zeroed struct with one scalar member set at a time (an enum to
 * each of its values, a bool to true, a number to 1), and for which values it is written;
 * when no member of the struct changes the answer, a note that the condition lies elsewhere.
 */
static void print_when(FILE *f, const struct sp_schema *s, const struct sp_field *fl)
{
	int base = ask(fl, &s->fields[0], 0);

	for (size_t k = 0; k < s->nfields; k++) {
		const struct sp_field *c = &s->fields[k];
		bool first = true, differs = false;

		if (c->type == SP_T_ENUM) {
			for (size_t i = 0; i < c->nnames; i++)
				differs |= c->names[i] && ask(fl, c, i) != base;
			if (!differs)
				continue;
			fprintf(f, "only when `%s` is", c->key);
			for (size_t i = 0; i < c->nnames; i++) {
				if (!c->names[i] || ask(fl, c, i) != 1)
					continue;
				fprintf(f, "%s `%s`", first ? "" : ",", c->names[i]);
				first = false;
			}
			return;
		}
		if (c->type != SP_T_BOOL && c->type != SP_T_U64 && c->type != SP_T_INT &&
		    c->type != SP_T_UINT)
			continue;
		if (ask(fl, c, 1) == base || base < 0)
			continue;
		if (c->type == SP_T_BOOL)
			fprintf(f, "only when `%s` is %s", c->key, base ? "false" : "true");
		else
			fprintf(f, "only when `%s` is %s", c->key, base ? "0" : "not 0");
		return;
	}
	fputs("only in some cases of its object (see docs/json.md)", f);
}

/* The group (SP_GROUP fields of one .group_off in a row) that fl is in: its first and size. */
static size_t group_of(const struct sp_schema *s, const struct sp_field *fl,
		       const struct sp_field **ret_first)
{
	const struct sp_field *a = fl, *b = fl;
	const struct sp_field *end = s->fields + s->nfields;

	while (a > s->fields && (a[-1].flags & SP_GROUP) && a[-1].group_off == fl->group_off)
		a--;
	while (b + 1 < end && (b[1].flags & SP_GROUP) && b[1].group_off == fl->group_off)
		b++;
	*ret_first = a;
	return (size_t)(b - a) + 1;
}

static void print_presence(FILE *f, const struct sp_schema *s, const struct sp_field *fl)
{
	const char *sep = "";

#define NOTE(...) (fputs(sep, f), fprintf(f, __VA_ARGS__), sep = "; ")
	if (fl->type == SP_T_CUSTOM)
		NOTE("written, never read: it follows from other keys");
	if (fl->when) {
		fputs(sep, f);
		print_when(f, s, fl);
		sep = "; ";
	}
	if (fl->flags & SP_GROUP) {
		const struct sp_field *first;
		size_t n = group_of(s, fl, &first);

		if (n == 2)
			NOTE("both `%s` and `%s` or neither", first->key, first[1].key);
		else if (n > 1)
			NOTE("all %zu keys `%s` to `%s` or none", n, first->key, first[n - 1].key);
		else if (fl->type == SP_T_BOOL && fl->group_off == fl->off)
			NOTE("only when true");
		else
			NOTE("only when recorded");
	}
	if (fl->flags & SP_NONEMPTY)
		NOTE("only when not empty");
	if (fl->flags & SP_SPARSE)
		NOTE("only when not %s; absent reads as that",
		     fl->type == SP_T_BOOL ? "false" : fl->type == SP_T_STR ? "null" : "0");
	if (fl->flags & SP_PARALLEL)
		NOTE("only when known; one entry per `%s`", fl->what ? fl->what : "element");
	if (fl->flags & SP_CLAMP)
		NOTE("0 is unknown");
	if ((fl->flags & SP_OPTIONAL) && !(fl->flags & SP_SPARSE))
		NOTE("may be absent (older files)");
	if (!*sep)
		fputs("always", f);
#undef NOTE
}

static void print_schema(struct doc *d, size_t i)
{
	const struct sp_schema *s = d->s[i];
	FILE *f = d->f;

	fprintf(f, "\n## `%s`\n\n", d->name[i]);
	fputs("| key | type | written |\n|---|---|---|\n", f);
	for (size_t k = 0; k < s->nfields; k++) {
		const struct sp_field *fl = &s->fields[k];

		fprintf(f, "| `%s` | ", fl->key);
		print_type(d, fl, d->name[i]);
		fputs(" | ", f);
		print_presence(f, s, fl);
		fputs(" |\n", f);
	}
	/* the run: its views follow its own keys, each under its name */
	if (s != &sp_run_fields)
		return;
	for (size_t v = 0; v < sp_nviews; v++) {
		fprintf(f, "| `%s` | object ", sp_views[v]->name);
		print_link(d, sp_views[v]->schema, d->name[i]);
		fputs(" | only when collected |\n", f);
	}
}

int sp_schema_doc(FILE *f)
{
	struct doc d = { .f = f };

	fputs("<!-- Generated from src/model/schema.c and the views' descriptors (src/model/view_*.c)\n"
	      "     by tests/tools/schema_doc.c: do not edit. After a change to a descriptor, run\n"
	      "     build/tests/schema_doc > docs/json-schema.md (the test unit-schema_doc checks it). -->\n"
	      "# The saved run's JSON: `" SP_SCHEMA "`, key by key\n\n"
	      "What `trace -f json`, `--save` and `report -f json` write and what `report` and `diff`\n"
	      "read back. Keys are written in the order below. A key marked *always* must be there on\n"
	      "read, with its type; integers are exact; unknown keys are ignored. What the keys mean,\n"
	      "the invariants between them and the diff format: [json.md](json.md).\n",
	      f);
	add(&d, &sp_run_fields, "");
	/* the list grows while it is printed: each table adds the schemas it links to */
	for (size_t i = 0; i < d.n; i++)
		print_schema(&d, i);
	if (d.n == MAX_SCHEMAS)
		return -E2BIG;
	return ferror(f) ? -EIO : 0;
}
