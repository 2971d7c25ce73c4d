/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the JSON reader and writer. For every input:
 *  1. parse it; if that succeeds, write the tree back with the writer (compact and
 *     pretty) into a memory FILE, parse that again and require the same structure;
 *  2. write the raw input as one JSON string and parse it back: this must always work
 *     (unless the input has a NUL byte, which the writer escapes as \u0000 and the reader
 *     rejects), and must return the input unchanged exactly when it is valid UTF-8.
 * Any mismatch aborts, which libFuzzer reports as a crash.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_reader.h"
#include "base/json_writer.h"

#define CHECK(cond)								\
	do {									\
		if (!(cond)) {							\
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
				__LINE__, #cond);				\
			abort();						\
		}								\
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void emit(struct json_writer *w, const struct json_value *v)
{
	uint64_t u;
	int64_t i;
	double d;
	bool b;
	size_t k;

	switch (json_type(v)) {
	case JSON_NULL:
		jw_null(w);
		break;
	case JSON_BOOL:
		CHECK(json_bool(v, &b));
		jw_bool(w, b);
		break;
	case JSON_NUMBER:
		if (json_i64(v, &i))
			jw_int(w, i);
		else if (json_u64(v, &u))
			jw_uint(w, u);
		else if (json_double(v, &d))
			jw_double(w, d);
		else
			jw_null(w);	/* out of double range: the writer cannot express it */
		break;
	case JSON_STRING:
		jw_string(w, json_str(v));
		break;
	case JSON_ARRAY:
		jw_start_array(w);
		for (k = 0; k < json_len(v); k++)
			emit(w, json_at(v, k));
		jw_end_array(w);
		break;
	case JSON_OBJECT:
		jw_start_object(w);
		for (k = 0; k < json_len(v); k++) {
			jw_name(w, json_key_at(v, k));
			emit(w, json_val_at(v, k));
		}
		jw_end_object(w);
		break;
	}
}

static bool same(const struct json_value *a, const struct json_value *b)
{
	uint64_t ua, ub;
	int64_t ia, ib;
	double da, db;
	size_t k;

	if (json_type(a) == JSON_NUMBER && !json_double(a, NULL))
		return json_type(b) == JSON_NULL;
	if (json_type(a) != json_type(b))
		return false;
	switch (json_type(a)) {
	case JSON_NULL:
		return true;
	case JSON_BOOL: {
		bool x, y;

		return json_bool(a, &x) && json_bool(b, &y) && x == y;
	}
	case JSON_NUMBER:
		if (json_i64(a, &ia))
			return json_i64(b, &ib) && ia == ib;
		if (json_u64(a, &ua))
			return json_u64(b, &ub) && ua == ub;
		return json_double(a, &da) && json_double(b, &db) && da == db;
	case JSON_STRING:
		return !strcmp(json_str(a), json_str(b));
	case JSON_ARRAY:
		if (json_len(a) != json_len(b))
			return false;
		for (k = 0; k < json_len(a); k++) {
			if (!same(json_at(a, k), json_at(b, k)))
				return false;
		}
		return true;
	case JSON_OBJECT:
		if (json_len(a) != json_len(b))
			return false;
		for (k = 0; k < json_len(a); k++) {
			if (strcmp(json_key_at(a, k), json_key_at(b, k)) ||
			    !same(json_val_at(a, k), json_val_at(b, k)))
				return false;
		}
		return true;
	}
	return false;
}

/* An independent UTF-8 check (decode, then reject overlongs, surrogates, > U+10FFFF). */
static bool valid_utf8(const uint8_t *s, size_t n)
{
	size_t i = 0, len, k;
	uint32_t cp;

	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((s[i] & 0xe0) == 0xc0)
			len = 2, cp = s[i] & 0x1f;
		else if ((s[i] & 0xf0) == 0xe0)
			len = 3, cp = s[i] & 0x0f;
		else if ((s[i] & 0xf8) == 0xf0)
			len = 4, cp = s[i] & 0x07;
		else
			return false;
		if (n - i < len)
			return false;
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

/* Runs @fn(w, arg) on a writer into memory; returns the malloc'd text. */
static char *write_mem(bool pretty, void (*fn)(struct json_writer *, const void *),
		       const void *arg, size_t *ret_len)
{
	struct json_writer *w;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&text, &len);
	CHECK(f);
	w = jw_new(f, pretty);
	CHECK(w);
	fn(w, arg);
	CHECK(jw_finish(w) == 0);
	jw_free(w);
	CHECK(fclose(f) == 0);
	*ret_len = len;
	return text;
}

static void emit_tree(struct json_writer *w, const void *arg)
{
	emit(w, arg);
}

struct raw {
	const uint8_t *data;
	size_t size;
};

static void emit_raw(struct json_writer *w, const void *arg)
{
	const struct raw *r = arg;

	jw_string_len(w, (const char *)r->data, r->size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_value *v, *again;
	struct raw raw = { data, size };
	char err[256];
	size_t len;
	char *text;
	int pretty;

	v = json_parse((const char *)data, size, err, sizeof(err));
	if (!v) {
		CHECK(!strncmp(err, "line ", 5));
	} else {
		for (pretty = 0; pretty <= 1; pretty++) {
			text = write_mem(pretty, emit_tree, v, &len);
			again = json_parse(text, len, err, sizeof(err));
			if (!again)
				fprintf(stderr, "re-parse failed: %s\n%.*s\n", err, (int)len, text);
			CHECK(again);
			CHECK(same(v, again));
			json_free(again);
			free(text);
		}
		json_free(v);
	}

	text = write_mem(false, emit_raw, &raw, &len);
	v = json_parse(text, len, err, sizeof(err));
	if (memchr(data, 0, size)) {
		CHECK(!v && strstr(err, "\\u0000"));
	} else {
		CHECK(v && json_type(v) == JSON_STRING);
		if (valid_utf8(data, size))
			CHECK(strlen(json_str(v)) == size && !memcmp(json_str(v), data, size));
		else
			CHECK(strstr(json_str(v), "\xef\xbf\xbd"));
	}
	json_free(v);
	free(text);
	return 0;
}
