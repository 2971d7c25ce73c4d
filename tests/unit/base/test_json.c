/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for the JSON writer (escaping of every byte and of invalid UTF-8, commas,
 * nesting, pretty/compact layout, numbers, misuse and I/O errors) and the JSON reader
 * (valid documents, every kind of rejection with its line/column, surrogates, exact big
 * integers, the depth limit, truncated documents and the memory bound).
 */
#include <check.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json_reader.h"
#include "base/json_writer.h"

/* ---- helpers ---- */

struct memout {
	FILE *f;
	char *text;
	size_t len;
	struct json_writer *w;
};

static void mo_open(struct memout *m, bool pretty)
{
	m->text = NULL;
	m->len = 0;
	m->f = open_memstream(&m->text, &m->len);
	ck_assert_ptr_nonnull(m->f);
	m->w = jw_new(m->f, pretty);
	ck_assert_ptr_nonnull(m->w);
}

/* Finishes the document; returns jw_finish()'s result, the text stays in m->text. */
static int mo_close(struct memout *m)
{
	int err = jw_finish(m->w);

	jw_free(m->w);
	ck_assert_int_eq(fclose(m->f), 0);
	return err;
}

/* Writes @s (@len bytes) as a single compact JSON string; returns the malloc'd text. */
static char *write_string(const char *s, size_t len)
{
	struct memout m;

	mo_open(&m, false);
	jw_string_len(m.w, s, len);
	ck_assert_int_eq(mo_close(&m), 0);
	return m.text;
}

static struct json_value *parse_ok(const char *s)
{
	char err[256] = "";
	struct json_value *v = json_parse(s, strlen(s), err, sizeof(err));

	ck_assert_msg(v, "parse of '%s' failed: %s", s, err);
	return v;
}

/* Parses @s (@len bytes), which must fail with exactly the message @want. */
static void check_reject_len(const char *s, size_t len, const char *want)
{
	char err[256] = "";
	struct json_value *v;

	errno = 0;
	v = json_parse(s, len, err, sizeof(err));
	ck_assert_msg(!v, "'%.*s' was accepted", (int)len, s);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(!strcmp(err, want), "'%.*s': got \"%s\", want \"%s\"", (int)len, s, err,
		      want);
}

static void check_reject(const char *s, const char *want)
{
	check_reject_len(s, strlen(s), want);
}

/* Validates @text with Python's json module when python3 is available. */
static void check_python_accepts(const char *text, size_t len)
{
	char path[] = "/tmp/test_json.XXXXXX";
	char cmd[128];
	int fd, rc;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
	snprintf(cmd, sizeof(cmd), "python3 -m json.tool %s >/dev/null 2>&1", path);
	rc = system(cmd);
	unlink(path);
	if (rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 127)
		return;	/* no python3 here: the reader checks below still apply */
	ck_assert_msg(rc == 0, "python3 -m json.tool rejected the writer's output");
}

/* ---- writer ---- */

/* Expected escaping of one byte written on its own. */
static void expected_byte(unsigned b, char *out)
{
	switch (b) {
	case '"': strcpy(out, "\\\""); return;
	case '\\': strcpy(out, "\\\\"); return;
	case '\b': strcpy(out, "\\b"); return;
	case '\f': strcpy(out, "\\f"); return;
	case '\n': strcpy(out, "\\n"); return;
	case '\r': strcpy(out, "\\r"); return;
	case '\t': strcpy(out, "\\t"); return;
	}
	if (b < 0x20 || b == 0x7f)
		sprintf(out, "\\u%04x", b);
	else if (b < 0x80)
		sprintf(out, "%c", b);
	else
		strcpy(out, "\\ufffd");	/* a lone byte >= 0x80 is never valid UTF-8 */
}

START_TEST(test_writer_every_byte)
{
	char expect[16], want[32];
	unsigned b;

	for (b = 0; b < 256; b++) {
		char c = (char)b;
		char *text = write_string(&c, 1);

		expected_byte(b, expect);
		snprintf(want, sizeof(want), "\"%s\"", expect);
		ck_assert_msg(!strcmp(text, want), "byte 0x%02x: got %s, want %s", b, text, want);
		free(text);
	}
}
END_TEST

START_TEST(test_writer_all_bytes_in_one_string)
{
	char in[255], want[2048], expect[16], *text;
	struct json_value *v;
	unsigned b;
	char *p;

	/* 0x01..0xff in a row: the bytes >= 0x80 never form a valid sequence */
	for (b = 1; b < 256; b++)
		in[b - 1] = (char)b;
	text = write_string(in, sizeof(in));
	p = want + sprintf(want, "\"");
	for (b = 1; b < 256; b++) {
		expected_byte(b, expect);
		p += sprintf(p, "%s", expect);
	}
	sprintf(p, "\"");
	ck_assert_str_eq(text, want);
	check_python_accepts(text, strlen(text));

	v = parse_ok(text);
	p = want;
	for (b = 1; b < 0x80; b++)
		*p++ = (char)b;
	for (; b < 256; b++)
		p += sprintf(p, "\xef\xbf\xbd");
	*p = '\0';
	ck_assert_str_eq(json_str(v), want);
	json_free(v);
	free(text);
}
END_TEST

static const struct {
	const char *in, *out;
} utf8_cases[] = {
	/* valid, at every boundary: passed through unchanged */
	{ "\xc2\x80", "\xc2\x80" },			/* U+0080 */
	{ "\xdf\xbf", "\xdf\xbf" },			/* U+07FF */
	{ "\xe0\xa0\x80", "\xe0\xa0\x80" },		/* U+0800 */
	{ "\xed\x9f\xbf", "\xed\x9f\xbf" },		/* U+D7FF */
	{ "\xee\x80\x80", "\xee\x80\x80" },		/* U+E000 */
	{ "\xef\xbf\xbf", "\xef\xbf\xbf" },		/* U+FFFF */
	{ "\xf0\x90\x80\x80", "\xf0\x90\x80\x80" },	/* U+10000 */
	{ "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf" },	/* U+10FFFF */
	{ "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" },
	/* overlong forms */
	{ "\xc0\x80", "\\ufffd\\ufffd" },
	{ "\xc1\xbf", "\\ufffd\\ufffd" },
	{ "\xe0\x80\xaf", "\\ufffd\\ufffd\\ufffd" },
	{ "\xe0\x9f\xbf", "\\ufffd\\ufffd\\ufffd" },
	{ "\xf0\x80\x80\xaf", "\\ufffd\\ufffd\\ufffd\\ufffd" },
	{ "\xf0\x8f\xbf\xbf", "\\ufffd\\ufffd\\ufffd\\ufffd" },
	/* UTF-16 surrogates encoded in UTF-8 */
	{ "\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd" },
	{ "\xed\xbf\xbf", "\\ufffd\\ufffd\\ufffd" },
	/* above U+10FFFF, and lead bytes that cannot start anything */
	{ "\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd" },
	{ "\xf5\x80\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd" },
	{ "\xf8\x88\x80\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd" },
	{ "\xfe\xff", "\\ufffd\\ufffd" },
	/* truncated sequences, at the end and followed by something else */
	{ "\xc3", "\\ufffd" },
	{ "\xe2\x82", "\\ufffd\\ufffd" },
	{ "\xf0\x9f\x98", "\\ufffd\\ufffd\\ufffd" },
	{ "a\xe2\x82z", "a\\ufffd\\ufffdz" },
	{ "\xe2\x82\"", "\\ufffd\\ufffd\\\"" },
	{ "\xf0\x9f\x98\xc3\xa9", "\\ufffd\\ufffd\\ufffd\xc3\xa9" },
	/* stray continuation bytes */
	{ "\x80", "\\ufffd" },
	{ "x\xbf\xbfy", "x\\ufffd\\ufffdy" },
	{ "\xc3\xa9\xa9", "\xc3\xa9\\ufffd" },
	/* invalid next to valid and escaped bytes */
	{ "\xff\n\xe2\x82\xac\x7f", "\\ufffd\\n\xe2\x82\xac\\u007f" },
};

START_TEST(test_writer_invalid_utf8)
{
	struct memout all;
	size_t i;

	for (i = 0; i < sizeof(utf8_cases) / sizeof(utf8_cases[0]); i++) {
		char want[128];
		char *text = write_string(utf8_cases[i].in, strlen(utf8_cases[i].in));
		struct json_value *v;

		snprintf(want, sizeof(want), "\"%s\"", utf8_cases[i].out);
		ck_assert_msg(!strcmp(text, want), "case %zu: got %s, want %s", i, text, want);
		v = parse_ok(text);	/* whatever went in, the output reads back */
		ck_assert_int_eq(json_type(v), JSON_STRING);
		json_free(v);
		free(text);
	}

	/* and an independent parser agrees that all of it is valid JSON */
	mo_open(&all, true);
	jw_start_array(all.w);
	for (i = 0; i < sizeof(utf8_cases) / sizeof(utf8_cases[0]); i++)
		jw_string(all.w, utf8_cases[i].in);
	jw_end_array(all.w);
	ck_assert_int_eq(mo_close(&all), 0);
	check_python_accepts(all.text, all.len);
	free(all.text);
}
END_TEST

/* Every control character, and every other byte < 0x80, survives write + read. */
START_TEST(test_writer_roundtrip_controls)
{
	char s[4];
	unsigned b;

	for (b = 1; b < 0x80; b++) {
		struct json_value *v;
		char *text;

		s[0] = 'a';
		s[1] = (char)b;
		s[2] = 'z';
		s[3] = '\0';
		text = write_string(s, 3);
		v = parse_ok(text);
		ck_assert_msg(!strcmp(json_str(v), s), "byte 0x%02x did not round-trip", b);
		json_free(v);
		free(text);
	}
}
END_TEST

static size_t encode(uint32_t cp, char *out)
{
	unsigned char *o = (unsigned char *)out;

	if (cp < 0x80) {
		o[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = 0xc0 | cp >> 6;
		o[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = 0xe0 | cp >> 12;
		o[1] = 0x80 | (cp >> 6 & 0x3f);
		o[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	o[0] = 0xf0 | cp >> 18;
	o[1] = 0x80 | (cp >> 12 & 0x3f);
	o[2] = 0x80 | (cp >> 6 & 0x3f);
	o[3] = 0x80 | (cp & 0x3f);
	return 4;
}

/* Every Unicode scalar value U+0001..U+10FFFF, as one string, round-trips exactly. */
START_TEST(test_writer_roundtrip_all_code_points)
{
	size_t cap = 0x110000 * 4 + 1, n = 0;
	char *s = malloc(cap), *text;
	struct json_value *v;
	uint32_t cp;

	ck_assert_ptr_nonnull(s);
	for (cp = 1; cp <= 0x10ffff; cp++) {
		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		n += encode(cp, s + n);
	}
	s[n] = '\0';
	text = write_string(s, n);
	ck_assert_ptr_null(strstr(text, "\\ufffd"));
	v = parse_ok(text);
	ck_assert_uint_eq(strlen(json_str(v)), n);
	ck_assert(!memcmp(json_str(v), s, n));
	json_free(v);
	free(text);
	free(s);
}
END_TEST

START_TEST(test_writer_string_null_and_nul)
{
	struct memout m;

	mo_open(&m, false);
	jw_start_array(m.w);
	jw_string(m.w, NULL);
	jw_string_len(m.w, NULL, 5);
	jw_string_len(m.w, "a\0b", 3);
	jw_string(m.w, "");
	jw_end_array(m.w);
	ck_assert_int_eq(mo_close(&m), 0);
	ck_assert_str_eq(m.text, "[null,null,\"a\\u0000b\",\"\"]");
	free(m.text);
}
END_TEST

static void build_sample(struct json_writer *w)
{
	jw_start_object(w);
	jw_kv_string(w, "name", "x\"y");
	jw_name(w, "list");
	jw_start_array(w);
	jw_uint(w, 1);
	jw_int(w, -2);
	jw_start_object(w);
	jw_name(w, "b");
	jw_null(w);
	jw_end_object(w);
	jw_start_array(w);
	jw_end_array(w);
	jw_end_array(w);
	jw_name(w, "empty");
	jw_start_object(w);
	jw_end_object(w);
	jw_kv_bool(w, "t", true);
	jw_kv_bool(w, "f", false);
	jw_kv_uint(w, "u", 7);
	jw_kv_int(w, "i", -7);
	jw_kv_double(w, "d", 0.5);
	jw_end_object(w);
}

START_TEST(test_writer_compact)
{
	struct memout m;

	mo_open(&m, false);
	build_sample(m.w);
	ck_assert_int_eq(mo_close(&m), 0);
	ck_assert_str_eq(m.text, "{\"name\":\"x\\\"y\",\"list\":[1,-2,{\"b\":null},[]],"
				 "\"empty\":{},"
				 "\"t\":true,\"f\":false,\"u\":7,\"i\":-7,\"d\":0.5}");
	free(m.text);
}
END_TEST

START_TEST(test_writer_pretty)
{
	struct memout m;

	mo_open(&m, true);
	build_sample(m.w);
	ck_assert_int_eq(mo_close(&m), 0);
	ck_assert_str_eq(m.text,
			 "{\n"
			 "  \"name\": \"x\\\"y\",\n"
			 "  \"list\": [\n"
			 "    1,\n"
			 "    -2,\n"
			 "    {\n"
			 "      \"b\": null\n"
			 "    },\n"
			 "    []\n"
			 "  ],\n"
			 "  \"empty\": {},\n"
			 "  \"t\": true,\n"
			 "  \"f\": false,\n"
			 "  \"u\": 7,\n"
			 "  \"i\": -7,\n"
			 "  \"d\": 0.5\n"
			 "}\n");
	check_python_accepts(m.text, m.len);
	free(m.text);
}
END_TEST

/* jw_start_object_inline: one line in pretty mode, with what it holds; compact alike. */
START_TEST(test_writer_inline)
{
	struct memout m;

	for (int pretty = 0; pretty <= 1; pretty++) {
		mo_open(&m, pretty);
		jw_start_object(m.w);
		jw_name(m.w, "rows");
		jw_start_array(m.w);
		for (int i = 0; i < 2; i++) {
			jw_start_object_inline(m.w);
			jw_kv_int(m.w, "n", i);
			jw_name(m.w, "l");
			jw_start_array(m.w);
			jw_int(m.w, 1);
			jw_start_object(m.w); /* inside a line: on it */
			jw_kv_bool(m.w, "b", true);
			jw_end_object(m.w);
			jw_end_array(m.w);
			jw_name(m.w, "e");
			jw_start_object(m.w);
			jw_end_object(m.w);
			jw_end_object(m.w);
		}
		jw_start_object_inline(m.w);
		jw_end_object(m.w);
		jw_end_array(m.w);
		jw_kv_int(m.w, "after", 3); /* back to one member a line */
		jw_end_object(m.w);
		ck_assert_int_eq(mo_close(&m), 0);
		if (pretty)
			ck_assert_str_eq(m.text, "{\n"
						 "  \"rows\": [\n"
						 "    {\"n\": 0, \"l\": [1, {\"b\": true}], \"e\": {}},\n"
						 "    {\"n\": 1, \"l\": [1, {\"b\": true}], \"e\": {}},\n"
						 "    {}\n"
						 "  ],\n"
						 "  \"after\": 3\n"
						 "}\n");
		else
			ck_assert_str_eq(m.text, "{\"rows\":[{\"n\":0,\"l\":[1,{\"b\":true}],\"e\":{}},"
						 "{\"n\":1,\"l\":[1,{\"b\":true}],\"e\":{}},{}],"
						 "\"after\":3}");
		check_python_accepts(m.text, m.len);
		free(m.text);
	}
}
END_TEST

START_TEST(test_writer_scalar_top_level)
{
	struct memout m;

	mo_open(&m, false);
	jw_uint(m.w, 42);
	ck_assert_int_eq(mo_close(&m), 0);
	ck_assert_str_eq(m.text, "42");
	free(m.text);

	mo_open(&m, true);
	jw_string(m.w, "s");
	ck_assert_int_eq(mo_close(&m), 0);
	ck_assert_str_eq(m.text, "\"s\"\n");
	free(m.text);
}
END_TEST

/* Deep nesting in the writer (beyond its initial frame stack) stays balanced. */
START_TEST(test_writer_deep)
{
	struct memout m;
	int i;

	mo_open(&m, false);
	for (i = 0; i < 1000; i++)
		jw_start_array(m.w);
	for (i = 0; i < 1000; i++)
		jw_end_array(m.w);
	ck_assert_int_eq(mo_close(&m), 0);
	ck_assert_uint_eq(m.len, 2000);
	ck_assert_int_eq(m.text[999], '[');
	ck_assert_int_eq(m.text[1000], ']');
	free(m.text);
}
END_TEST

START_TEST(test_writer_numbers)
{
	static const struct {
		double v;
		const char *text;
	} dbl[] = {
		{ 0.5, "0.5" }, { 0.1, "0.1" }, { -2.0, "-2" }, { 0.0, "0" }, { -0.0, "-0" },
		{ 1e300, "1e+300" }, { 1e-300, "1e-300" }, { 123456789.125, "123456789.125" },
		{ 1.0 / 3.0, "0.3333333333333333" }, { 0.1 + 0.2, "0.30000000000000004" },
		{ 5e-324, "4.94065645841247e-324" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
	};
	struct json_value *v;
	struct memout m;
	size_t i;
	double d;

	mo_open(&m, false);
	jw_start_array(m.w);
	jw_uint(m.w, UINT64_MAX);
	jw_uint(m.w, 0);
	jw_int(m.w, INT64_MIN);
	jw_int(m.w, INT64_MAX);
	jw_double(m.w, NAN);
	jw_double(m.w, INFINITY);
	jw_double(m.w, -INFINITY);
	jw_end_array(m.w);
	ck_assert_int_eq(mo_close(&m), 0);
	ck_assert_str_eq(m.text, "[18446744073709551615,0,-9223372036854775808,"
				 "9223372036854775807,null,null,null]");
	free(m.text);

	for (i = 0; i < sizeof(dbl) / sizeof(dbl[0]); i++) {
		mo_open(&m, false);
		jw_double(m.w, dbl[i].v);
		ck_assert_int_eq(mo_close(&m), 0);
		ck_assert_msg(!strcmp(m.text, dbl[i].text), "%.17g: got %s, want %s", dbl[i].v,
			      m.text, dbl[i].text);
		/* the shortest form still reads back to the same double */
		v = parse_ok(m.text);
		ck_assert(json_double(v, &d));
		ck_assert(d == dbl[i].v && signbit(d) == signbit(dbl[i].v));
		json_free(v);
		free(m.text);
	}
}
END_TEST

/* Each misuse makes jw_finish() fail with -EINVAL, and nothing is written after it. */
START_TEST(test_writer_misuse)
{
	struct memout m;

	/* unbalanced: open object / open array */
	mo_open(&m, false);
	jw_start_object(m.w);
	ck_assert_int_eq(mo_close(&m), -EINVAL);
	free(m.text);
	mo_open(&m, true);
	jw_start_array(m.w);
	jw_start_array(m.w);
	jw_end_array(m.w);
	ck_assert_int_eq(mo_close(&m), -EINVAL);
	free(m.text);

	/* an end too many */
	mo_open(&m, false);
	jw_start_array(m.w);
	jw_end_array(m.w);
	jw_end_array(m.w);
	ck_assert_int_eq(mo_close(&m), -EINVAL);
	free(m.text);

	/* mismatched end */
	mo_open(&m, false);
	jw_start_array(m.w);
	jw_end_object(m.w);
	jw_end_array(m.w);
	ck_assert_int_eq(mo_close(&m), -EINVAL);
	ck_assert_str_eq(m.text, "[");	/* stopped at the first error */
	free(m.text);

	/* empty document */
	mo_open(&m, false);
	ck_assert_int_eq(mo_close(&m), -EINVAL);
	ck_assert_uint_eq(m.len, 0);
	free(m.text);

	/* value without a name in an object */
	mo_open(&m, false);
	jw_start_object(m.w);
	jw_uint(m.w, 1);
	jw_end_object(m.w);
	ck_assert_int_eq(mo_close(&m), -EINVAL);
	ck_assert_str_eq(m.text, "{");
	free(m.text);

	/* name in an array, name at top level, NULL name */
	mo_open(&m, false);
	jw_start_array(m.w);
	jw_name(m.w, "a");
	jw_end_array(m.w);
	ck_assert_int_eq(mo_close(&m), -EINVAL);
	free(m.text);
	mo_open(&m, false);
	jw_name(m.w, "a");
	jw_uint(m.w, 1);
	ck_assert_int_eq(mo_close(&m), -EINVAL);
	free(m.text);
	mo_open(&m, false);
	jw_start_object(m.w);
	jw_name(m.w, NULL);
	jw_end_object(m.w);
	ck_assert_int_eq(mo_close(&m), -EINVAL);
	free(m.text);

	/* two names in a row, a name without value at the end */
	mo_open(&m, false);
	jw_start_object(m.w);
	jw_name(m.w, "a");
	jw_name(m.w, "b");
	jw_uint(m.w, 1);
	jw_end_object(m.w);
	ck_assert_int_eq(mo_close(&m), -EINVAL);
	free(m.text);
	mo_open(&m, false);
	jw_start_object(m.w);
	jw_name(m.w, "a");
	jw_end_object(m.w);
	ck_assert_int_eq(mo_close(&m), -EINVAL);
	free(m.text);

	/* two top-level values */
	mo_open(&m, false);
	jw_uint(m.w, 1);
	jw_uint(m.w, 2);
	ck_assert_int_eq(mo_close(&m), -EINVAL);
	ck_assert_str_eq(m.text, "1");
	free(m.text);

	/* finish twice, and writing after finish */
	mo_open(&m, false);
	jw_null(m.w);
	ck_assert_int_eq(jw_finish(m.w), 0);
	jw_null(m.w);
	ck_assert_int_eq(mo_close(&m), -EINVAL);
	ck_assert_str_eq(m.text, "null");
	free(m.text);

	/* NULL writer */
	jw_start_object(NULL);
	jw_kv_uint(NULL, "a", 1);
	jw_string(NULL, "a");
	ck_assert_int_eq(jw_finish(NULL), -EINVAL);
	jw_free(NULL);
	errno = 0;
	ck_assert_ptr_null(jw_new(NULL, false));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* A failed write is reported by jw_finish() as a negative errno. */
START_TEST(test_writer_io_error)
{
	struct json_writer *w;
	FILE *f;
	int i, err;

	f = fopen("/dev/full", "w");
	if (!f)
		return;	/* no /dev/full in this sandbox */
	w = jw_new(f, true);
	ck_assert_ptr_nonnull(w);
	jw_start_array(w);
	for (i = 0; i < 100000; i++)	/* more than the stdio buffer */
		jw_string(w, "some text that fills the stdio buffer");
	jw_end_array(w);
	err = jw_finish(w);
	ck_assert_int_eq(err, -ENOSPC);
	jw_free(w);
	fclose(f);

	/* a small document that only fails when flushed */
	f = fopen("/dev/full", "w");
	ck_assert_ptr_nonnull(f);
	w = jw_new(f, false);
	jw_uint(w, 1);
	ck_assert_int_eq(jw_finish(w), -ENOSPC);
	jw_free(w);
	fclose(f);
}
END_TEST

/* ---- reader ---- */

START_TEST(test_reader_document)
{
	const char *doc =
		" {\n\t\"schema\" : \"schedprof/1\",\r\n"
		"  \"rows\": [ {\"comm\": \"bash\", \"count\": 3, \"ratio\": 0.25},\n"
		"            {\"comm\": \"caf\\u00e9\", \"count\": 0, \"ok\": false} ],\n"
		"  \"flags\": [true, false, null],\n"
		"  \"empty_a\": [], \"empty_o\": {},\n"
		"  \"dup\": 1, \"dup\": 2\n"
		"} \n";
	const struct json_value *rows, *row, *v;
	struct json_value *root = parse_ok(doc);
	uint64_t u;
	double d;
	bool b;

	ck_assert_int_eq(json_type(root), JSON_OBJECT);
	ck_assert_uint_eq(json_len(root), 7);
	ck_assert_str_eq(json_key_at(root, 0), "schema");
	ck_assert_str_eq(json_key_at(root, 1), "rows");
	ck_assert_str_eq(json_key_at(root, 5), "dup");
	ck_assert_str_eq(json_key_at(root, 6), "dup");
	ck_assert_ptr_null(json_key_at(root, 7));
	ck_assert_ptr_null(json_val_at(root, 7));
	ck_assert_str_eq(json_str(json_get(root, "schema")), "schedprof/1");
	ck_assert_str_eq(json_str(json_val_at(root, 0)), "schedprof/1");

	rows = json_get(root, "rows");
	ck_assert_int_eq(json_type(rows), JSON_ARRAY);
	ck_assert_uint_eq(json_len(rows), 2);
	row = json_at(rows, 0);
	ck_assert_str_eq(json_str(json_get(row, "comm")), "bash");
	ck_assert(json_u64(json_get(row, "count"), &u));
	ck_assert_uint_eq(u, 3);
	ck_assert(json_double(json_get(row, "ratio"), &d));
	ck_assert(d == 0.25);
	ck_assert(!json_u64(json_get(row, "ratio"), &u));
	row = json_at(rows, 1);
	ck_assert_str_eq(json_str(json_get(row, "comm")), "caf\xc3\xa9");
	ck_assert(json_bool(json_get(row, "ok"), &b));
	ck_assert(!b);
	ck_assert_ptr_null(json_at(rows, 2));

	v = json_get(root, "flags");
	ck_assert(json_bool(json_at(v, 0), &b) && b);
	ck_assert(json_bool(json_at(v, 1), &b) && !b);
	ck_assert_int_eq(json_type(json_at(v, 2)), JSON_NULL);
	ck_assert_ptr_nonnull(json_at(v, 2));
	ck_assert(!json_bool(json_at(v, 2), &b));

	ck_assert_int_eq(json_type(json_get(root, "empty_a")), JSON_ARRAY);
	ck_assert_uint_eq(json_len(json_get(root, "empty_a")), 0);
	ck_assert_ptr_null(json_at(json_get(root, "empty_a"), 0));
	ck_assert_int_eq(json_type(json_get(root, "empty_o")), JSON_OBJECT);
	ck_assert_uint_eq(json_len(json_get(root, "empty_o")), 0);

	/* a repeated key: json_get() finds the first, iteration sees both */
	ck_assert(json_u64(json_get(root, "dup"), &u));
	ck_assert_uint_eq(u, 1);
	ck_assert(json_u64(json_val_at(root, 6), &u));
	ck_assert_uint_eq(u, 2);

	/* wrong types and NULL read as absent */
	ck_assert_ptr_null(json_get(root, "missing"));
	ck_assert_ptr_null(json_get(rows, "comm"));
	ck_assert_ptr_null(json_at(root, 0));
	ck_assert_ptr_null(json_key_at(rows, 0));
	ck_assert_ptr_null(json_str(rows));
	ck_assert_uint_eq(json_len(json_get(root, "schema")), 0);
	ck_assert_ptr_null(json_get(NULL, "a"));
	ck_assert_ptr_null(json_get(root, NULL));
	ck_assert_int_eq(json_type(NULL), JSON_NULL);
	ck_assert_uint_eq(json_len(NULL), 0);
	ck_assert_ptr_null(json_str(NULL));
	ck_assert(!json_u64(NULL, &u));
	ck_assert(!json_double(json_get(root, "schema"), &d));
	ck_assert(!json_bool(NULL, &b));
	ck_assert(!json_u64(json_get(json_at(json_get(root, "nope"), 3), "x"), &u));
	json_free(root);
	json_free(NULL);
}
END_TEST

START_TEST(test_reader_scalars)
{
	struct json_value *v;
	bool b;

	v = parse_ok("true");
	ck_assert(json_bool(v, &b) && b);
	json_free(v);
	v = parse_ok(" null ");
	ck_assert_int_eq(json_type(v), JSON_NULL);
	json_free(v);
	v = parse_ok("\"\"");
	ck_assert_str_eq(json_str(v), "");
	json_free(v);
	v = parse_ok("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u0001 \\u001F \\u007f\"");
	ck_assert_str_eq(json_str(v), "\" \\ / \b \f \n \r \t \x01 \x1f \x7f");
	json_free(v);
	/* DEL and valid multi-byte UTF-8 may appear unescaped */
	v = parse_ok("\"\x7f \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbf\"");
	ck_assert_str_eq(json_str(v), "\x7f \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbf");
	json_free(v);
}
END_TEST

START_TEST(test_reader_surrogates)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80" },		/* U+1F600 */
		{ "\"\\uD834\\uDD1E\"", "\xf0\x9d\x84\x9e" },		/* U+1D11E */
		{ "\"\\ud800\\udc00\"", "\xf0\x90\x80\x80" },		/* U+10000 */
		{ "\"\\udbff\\udfff\"", "\xf4\x8f\xbf\xbf" },		/* U+10FFFF */
		{ "\"a\\ud83d\\ude00b\"", "a\xf0\x9f\x98\x80" "b" },
		{ "\"\\u00e9\\u20AC\\uffff\\u0080\\u07ff\\u0800\"",
		  "\xc3\xa9\xe2\x82\xac\xef\xbf\xbf\xc2\x80\xdf\xbf\xe0\xa0\x80" },
		{ "\"\\ud7ff\\ue000\"", "\xed\x9f\xbf\xee\x80\x80" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct json_value *v = parse_ok(cases[i].in);

		ck_assert_msg(!strcmp(json_str(v), cases[i].out), "case %zu", i);
		json_free(v);
	}
}
END_TEST

static const struct {
	const char *in, *err;
} reject_cases[] = {
	{ "", "line 1, column 1: empty document" },
	{ " \n\t ", "line 2, column 3: empty document" },
	{ "\xef\xbb\xbf{}", "line 1, column 1: byte order mark is not allowed" },
	/* trailing garbage */
	{ "1 2", "line 1, column 3: unexpected '2' after the top-level value" },
	{ "{}}", "line 1, column 3: unexpected '}' after the top-level value" },
	{ "[]\n\n  x", "line 3, column 3: unexpected 'x' after the top-level value" },
	{ "null\x01", "line 1, column 5: unexpected byte 0x01 after the top-level value" },
	/* trailing commas, missing and doubled separators */
	{ "[1,]", "line 1, column 4: trailing comma before ']'" },
	{ "[1, \n ]", "line 2, column 2: trailing comma before ']'" },
	{ "{\"a\":1,}", "line 1, column 8: trailing comma before '}'" },
	{ "[,1]", "line 1, column 2: expected a value, found ','" },
	{ "[1,,2]", "line 1, column 4: expected a value, found ','" },
	{ "[1 2]", "line 1, column 4: expected ',' or ']' in array, found '2'" },
	{ "{\"a\":1 \"b\":2}", "line 1, column 8: expected ',' or '}' in object, found '\"'" },
	{ "{\"a\" 1}", "line 1, column 6: expected ':' after object key, found '1'" },
	{ "{\"a\"}", "line 1, column 5: expected ':' after object key, found '}'" },
	{ "{1:2}", "line 1, column 2: expected a string key in object, found '1'" },
	{ "{,}", "line 1, column 2: expected a string key in object, found ','" },
	{ "{'a':1}", "line 1, column 2: expected a string key in object, found '''" },
	{ "[1}", "line 1, column 3: expected ',' or ']' in array, found '}'" },
	/* numbers */
	{ "01", "line 1, column 1: leading zeros are not allowed in numbers" },
	{ "[-012]", "line 1, column 3: leading zeros are not allowed in numbers" },
	{ "[00.5]", "line 1, column 2: leading zeros are not allowed in numbers" },
	{ "-", "line 1, column 2: expected a digit after '-', found end of input" },
	{ "-a", "line 1, column 2: expected a digit after '-', found 'a'" },
	{ "1.", "line 1, column 3: expected a digit after '.', found end of input" },
	{ "1.e5", "line 1, column 3: expected a digit after '.', found 'e'" },
	{ "1e", "line 1, column 3: expected a digit in the exponent, found end of input" },
	{ "1e+", "line 1, column 4: expected a digit in the exponent, found end of input" },
	{ "1E-x", "line 1, column 4: expected a digit in the exponent, found 'x'" },
	{ ".5", "line 1, column 1: expected a value, found '.'" },
	{ "+1", "line 1, column 1: expected a value, found '+'" },
	{ "[NaN]", "line 1, column 2: expected a value, found 'N'" },
	{ "Infinity", "line 1, column 1: expected a value, found 'I'" },
	{ "[-Infinity]", "line 1, column 3: expected a digit after '-', found 'I'" },
	{ "0x10", "line 1, column 2: unexpected 'x' after the top-level value" },
	/* literals */
	{ "tru", "line 1, column 4: unexpected end of input in 'true'" },
	{ "[nul", "line 1, column 5: unexpected end of input in 'null'" },
	{ "trUe", "line 1, column 1: invalid literal (expected 'true')" },
	{ "[fals]", "line 1, column 2: invalid literal (expected 'false')" },
	{ "True", "line 1, column 1: expected a value, found 'T'" },
	{ "truex", "line 1, column 5: unexpected 'x' after the top-level value" },
	/* comments and other non-JSON */
	{ "// c\n1", "line 1, column 1: expected a value, found '/'" },
	{ "[1 /* c */]", "line 1, column 4: expected ',' or ']' in array, found '/'" },
	{ "'a'", "line 1, column 1: expected a value, found '''" },
	{ "\f1", "line 1, column 1: expected a value, found byte 0x0c" },
	{ "\xc2\xa0" "1", "line 1, column 1: expected a value, found byte 0xc2" },
	/* strings: control characters */
	{ "\"a\nb\"", "line 1, column 3: unescaped control character 0x0a in string" },
	{ "\"\t\"", "line 1, column 2: unescaped control character 0x09 in string" },
	{ "[\"x\x1f\"]", "line 1, column 4: unescaped control character 0x1f in string" },
	/* strings: escapes */
	{ "\"\\x\"", "line 1, column 2: invalid escape: backslash followed by 'x'" },
	{ "\"ab\\'\"", "line 1, column 4: invalid escape: backslash followed by '''" },
	{ "\"\\U0041\"", "line 1, column 2: invalid escape: backslash followed by 'U'" },
	{ "\"\\\x01\"", "line 1, column 2: invalid escape: backslash followed by byte 0x01" },
	{ "\"\\u12G4\"", "line 1, column 2: invalid \\u escape: expected 4 hex digits" },
	{ "\"\\u-123\"", "line 1, column 2: invalid \\u escape: expected 4 hex digits" },
	{ "\"\\u12\"", "line 1, column 2: invalid \\u escape: expected 4 hex digits" },
	{ "\"\\u0000\"", "line 1, column 2: \\u0000 is not allowed in strings" },
	{ "{\"a\\u0000\":1}", "line 1, column 4: \\u0000 is not allowed in strings" },
	/* strings: lone and broken surrogates */
	{ "\"\\ud800\"", "line 1, column 2: lone high surrogate \\ud800 in string" },
	{ "\"\\udbffx\"", "line 1, column 2: lone high surrogate \\udbff in string" },
	{ "\"\\ud800\\n\"", "line 1, column 2: lone high surrogate \\ud800 in string" },
	{ "\"\\ud800\\u0041\"",
	  "line 1, column 2: lone high surrogate \\ud800 in string" },
	{ "\"\\ud800\\ud800\"",
	  "line 1, column 2: lone high surrogate \\ud800 in string" },
	{ "\"\\ud800\\uzzzz\"", "line 1, column 8: invalid \\u escape: expected 4 hex digits" },
	{ "\"\\udc00\"", "line 1, column 2: lone low surrogate \\udc00 in string" },
	{ "\"x\\uDFFF\\uD800\"", "line 1, column 3: lone low surrogate \\udfff in string" },
	/* strings: invalid UTF-8 */
	{ "\"\xc0\xaf\"", "line 1, column 2: invalid UTF-8 byte 0xc0 in string" },
	{ "\"\xe0\x80\xaf\"", "line 1, column 2: invalid UTF-8 byte 0xe0 in string" },
	{ "\"\xed\xa0\x80\"", "line 1, column 2: invalid UTF-8 byte 0xed in string" },
	{ "\"\xf4\x90\x80\x80\"", "line 1, column 2: invalid UTF-8 byte 0xf4 in string" },
	{ "\"\xf8\x88\x80\x80\x80\"", "line 1, column 2: invalid UTF-8 byte 0xf8 in string" },
	{ "\"ab\x80\"", "line 1, column 4: invalid UTF-8 byte 0x80 in string" },
	{ "\"\xe2\x82\"", "line 1, column 2: invalid UTF-8 byte 0xe2 in string" },
	{ "\"\xc3\xa9\xff\"", "line 1, column 3: invalid UTF-8 byte 0xff in string" },
	{ "{\"k\xfe\":1}", "line 1, column 4: invalid UTF-8 byte 0xfe in string" },
	/* columns count characters, not bytes */
	{ "[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\", x]",
	  "line 1, column 9: expected a value, found 'x'" },
	/* positions across lines */
	{ "{\n  \"a\": [1,\n    2,,\n", "line 3, column 7: expected a value, found ','" },
	{ "[\r\n1\r\n,]", "line 3, column 2: trailing comma before ']'" },
	/* truncation */
	{ "[", "line 1, column 2: expected a value, found end of input" },
	{ "[1", "line 1, column 3: expected ',' or ']' in array, found end of input" },
	{ "[1,", "line 1, column 4: expected a value, found end of input" },
	{ "{", "line 1, column 2: expected a string key in object, found end of input" },
	{ "{\"a\"", "line 1, column 5: expected ':' after object key, found end of input" },
	{ "{\"a\":", "line 1, column 6: expected a value, found end of input" },
	{ "{\"a\":1", "line 1, column 7: expected ',' or '}' in object, found end of input" },
	{ "\"abc", "line 1, column 5: unexpected end of input in string" },
	{ "\"abc\\", "line 1, column 6: unexpected end of input in string" },
	{ "\"\\u12", "line 1, column 6: unexpected end of input in \\u escape" },
	{ "\"\\ud800", "line 1, column 8: unexpected end of input in string" },
	{ "\"\\ud800\\", "line 1, column 9: unexpected end of input in string" },
	{ "\"\\ud800\\udc", "line 1, column 12: unexpected end of input in \\u escape" },
};

/*
 * Strings are scanned 8 bytes at a time for the end of a plain run: put each kind of byte
 * that ends one ('"' as an escape, '\\', a control character as an escape, UTF-8) at every
 * offset of strings of every length up to 40, and check the decoded bytes.
 */
START_TEST(test_reader_string_runs)
{
	static const struct {
		const char *json, *decoded;
	} specials[] = {
		{ "\\\"", "\"" }, { "\\\\", "\\" }, { "\\n", "\n" }, { "\\u0001", "\x01" },
		{ "\xc3\xa9", "\xc3\xa9" }, { "\x7f", "\x7f" }, { "~", "~" },
	};
	char json[128], want[64];

	for (size_t k = 0; k < sizeof(specials) / sizeof(specials[0]); k++) {
		for (size_t len = 1; len <= 40; len++) {
			for (size_t at = 0; at < len; at++) {
				struct json_value *v;
				size_t j = 0, w = 0;

				json[j++] = '"';
				for (size_t i = 0; i < len; i++) {
					const char *js = i == at ? specials[k].json : "a";
					const char *ds = i == at ? specials[k].decoded : "a";

					j += (size_t)sprintf(json + j, "%s", js);
					w += (size_t)sprintf(want + w, "%s", ds);
				}
				json[j++] = '"';
				v = json_parse(json, j, NULL, 0);
				ck_assert_msg(v, "%.*s", (int)j, json);
				ck_assert_str_eq(json_str(v), want);
				json_free(v);
			}
		}
	}
}
END_TEST

/* Whitespace is skipped a word at a time: runs of every length, of every blank, anywhere. */
START_TEST(test_reader_whitespace_runs)
{
	static const char blanks[] = " \t\n\r";
	char json[160];

	for (size_t len = 0; len <= 20; len++) {
		for (size_t k = 0; k < 5; k++) {
			struct json_value *v;
			char ws[24];
			uint64_t a, b;

			for (size_t i = 0; i < len; i++) /* k == 4: all four mixed */
				ws[i] = blanks[k < 4 ? k : i % 4];
			ws[len] = '\0';
			snprintf(json, sizeof(json), "%s[%s1%s,%s2%s]%s!", ws, ws, ws, ws, ws, ws);
			v = json_parse(json, strlen(json) - 1, NULL, 0);
			ck_assert_msg(v, "len %zu kind %zu", len, k);
			ck_assert(json_u64(json_at(v, 0), &a) && json_u64(json_at(v, 1), &b));
			ck_assert(a == 1 && b == 2);
			json_free(v);
			/* a non-blank right after a run is an error, wherever the run ends */
			ck_assert_ptr_null(json_parse(json, strlen(json), NULL, 0));
		}
	}
}
END_TEST

START_TEST(test_reader_rejects)
{
	size_t i;

	for (i = 0; i < sizeof(reject_cases) / sizeof(reject_cases[0]); i++)
		check_reject(reject_cases[i].in, reject_cases[i].err);
}
END_TEST

START_TEST(test_reader_rejects_nul_and_errbuf)
{
	char err[16];
	struct json_value *v;

	/* a raw NUL byte: outside and inside a string */
	check_reject_len("[1,\0]", 5, "line 1, column 4: expected a value, found byte 0x00");
	check_reject_len("\"a\0\"", 4,
			 "line 1, column 3: unescaped control character 0x00 in string");
	check_reject_len("1\0", 2,
			 "line 1, column 2: unexpected byte 0x00 after the top-level value");
	/* only len bytes are read: the NUL-terminated tail is ignored */
	v = json_parse("[1]garbage", 3, NULL, 0);
	ck_assert_ptr_nonnull(v);
	json_free(v);

	/* NULL buffer, NULL/short errbuf */
	check_reject_len(NULL, 0, "line 1, column 1: empty document");
	errno = 0;
	ck_assert_ptr_null(json_parse("[", 1, NULL, 0));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(json_parse("[", 1, err, sizeof(err)));
	ck_assert_str_eq(err, "line 1, column ");	/* truncated, still terminated */
}
END_TEST

START_TEST(test_reader_numbers)
{
	static const struct {
		const char *in;
		bool u_ok, i_ok;
		uint64_t u;
		int64_t i;
		double d;
	} cases[] = {
		{ "0", true, true, 0, 0, 0.0 },
		{ "18446744073709551615", true, false, UINT64_MAX, 0, 18446744073709551615.0 },
		{ "18446744073709551616", false, false, 0, 0, 18446744073709551616.0 },
		{ "99999999999999999999", false, false, 0, 0, 1e20 },
		{ "9223372036854775807", true, true, INT64_MAX, INT64_MAX, 9223372036854775807.0 },
		{ "9223372036854775808", true, false, 9223372036854775808ull, 0,
		  9223372036854775808.0 },
		{ "-9223372036854775808", false, true, 0, INT64_MIN, -9223372036854775808.0 },
		{ "-9223372036854775809", false, false, 0, 0, -9223372036854775809.0 },
		{ "-1", false, true, 0, -1, -1.0 },
		{ "1.5", false, false, 0, 0, 1.5 },
		{ "-1.5", false, false, 0, 0, -1.5 },
		{ "1e3", true, true, 1000, 1000, 1000.0 },
		{ "1E+3", true, true, 1000, 1000, 1000.0 },
		{ "2.50e1", true, true, 25, 25, 25.0 },
		{ "100e-2", true, true, 1, 1, 1.0 },
		{ "1.0", true, true, 1, 1, 1.0 },
		{ "-5.000", false, true, 0, -5, -5.0 },
		{ "0.0e-9", true, true, 0, 0, 0.0 },
		{ "0e999999999999", true, true, 0, 0, 0.0 },
		{ "1e19", true, false, 10000000000000000000ull, 0, 1e19 },
		{ "1e20", false, false, 0, 0, 1e20 },
		{ "1.8446744073709551615e19", true, false, UINT64_MAX, 0, 18446744073709551615.0 },
		{ "1.8446744073709551616e19", false, false, 0, 0, 18446744073709551616.0 },
		{ "1e-1", false, false, 0, 0, 0.1 },
		{ "123456789012345678901234567890", false, false, 0, 0,
		  123456789012345678901234567890.0 },
		{ "0.1", false, false, 0, 0, 0.1 },
		{ "2.2250738585072014e-308", false, false, 0, 0, 2.2250738585072014e-308 },
		{ "1e-400", false, false, 0, 0, 0.0 },
		{ "1.7976931348623157e308", false, false, 0, 0, 1.7976931348623157e308 },
	};
	struct json_value *v;
	uint64_t u;
	int64_t i;
	double d;
	size_t k;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		v = parse_ok(cases[k].in);
		ck_assert_int_eq(json_type(v), JSON_NUMBER);
		ck_assert_msg(json_u64(v, &u) == cases[k].u_ok, "%s: u64", cases[k].in);
		if (cases[k].u_ok)
			ck_assert_msg(u == cases[k].u, "%s: u64 %llu", cases[k].in,
				      (unsigned long long)u);
		ck_assert_msg(json_i64(v, &i) == cases[k].i_ok, "%s: i64", cases[k].in);
		if (cases[k].i_ok)
			ck_assert_msg(i == cases[k].i, "%s: i64 %lld", cases[k].in, (long long)i);
		ck_assert_msg(json_double(v, &d) && d == cases[k].d, "%s: double %.17g",
			      cases[k].in, d);
		json_free(v);
	}

	/* -0 reads as integer 0, and as the double -0.0 */
	v = parse_ok("-0");
	ck_assert(json_u64(v, &u) && u == 0);
	ck_assert(json_i64(v, &i) && i == 0);
	ck_assert(json_double(v, &d) && d == 0.0 && signbit(d));
	json_free(v);

	/* out of double range: parses, but has no double (nor integer) value */
	v = parse_ok("[1e400, -1e400]");
	ck_assert(!json_double(json_at(v, 0), &d));
	ck_assert(!json_double(json_at(v, 1), &d));
	ck_assert(!json_u64(json_at(v, 0), &u));
	json_free(v);

	/* non-numbers */
	v = parse_ok("[\"1\", true, null]");
	for (k = 0; k < 3; k++) {
		ck_assert(!json_u64(json_at(v, k), &u));
		ck_assert(!json_i64(json_at(v, k), &i));
		ck_assert(!json_double(json_at(v, k), &d));
	}
	json_free(v);
}
END_TEST

START_TEST(test_reader_number_length_limit)
{
	char buf[JSON_MAX_NUMBER_LEN + 8];
	struct json_value *v;
	double d;

	/* "0." followed by zeros and a 1: exactly at the limit, then one over */
	memset(buf, '0', sizeof(buf));
	buf[1] = '.';
	buf[JSON_MAX_NUMBER_LEN - 1] = '1';
	buf[JSON_MAX_NUMBER_LEN] = '\0';
	v = parse_ok(buf);
	ck_assert(json_double(v, &d) && d == 0.0);
	json_free(v);
	buf[JSON_MAX_NUMBER_LEN] = '1';
	buf[JSON_MAX_NUMBER_LEN + 1] = '\0';
	check_reject(buf, "line 1, column 1: number longer than 1024 characters");
}
END_TEST

static char *nested(const char *open, const char *close, int depth)
{
	size_t lo = strlen(open), lc = strlen(close);
	char *s = malloc(depth * (lo + lc) + 1), *p = s;
	int i;

	ck_assert_ptr_nonnull(s);
	for (i = 0; i < depth; i++, p += lo)
		memcpy(p, open, lo);
	for (i = 0; i < depth; i++, p += lc)
		memcpy(p, close, lc);
	*p = '\0';
	return s;
}

START_TEST(test_reader_depth_limit)
{
	const struct json_value *c;
	struct json_value *v;
	char *s;
	int i;

	s = nested("[", "]", JSON_MAX_DEPTH);
	v = parse_ok(s);
	for (c = v, i = 1; i < JSON_MAX_DEPTH; i++)
		c = json_at(c, 0);
	ck_assert_int_eq(json_type(c), JSON_ARRAY);
	ck_assert_uint_eq(json_len(c), 0);
	json_free(v);
	free(s);

	s = nested("[", "]", JSON_MAX_DEPTH + 1);
	check_reject(s, "line 1, column 129: nesting deeper than 128 levels");
	free(s);

	s = nested("{\"a\":[", "]}", JSON_MAX_DEPTH / 2);
	v = parse_ok(s);
	json_free(v);
	free(s);
	s = nested("{\"a\":[", "]}", JSON_MAX_DEPTH / 2 + 1);
	check_reject(s, "line 1, column 385: nesting deeper than 128 levels");
	free(s);

	/* far deeper than any stack would allow for a naive recursive parser */
	s = nested("[", "]", 1000000);
	check_reject(s, "line 1, column 129: nesting deeper than 128 levels");
	s[1000000] = '\0';	/* only the opening brackets, unterminated */
	check_reject(s, "line 1, column 129: nesting deeper than 128 levels");
	free(s);
}
END_TEST

/* Every prefix of a valid document is either rejected with a message or parses. */
START_TEST(test_reader_truncated)
{
	const char *doc =
		"{\"schema\": \"schedprof/1\", \"n\": -12.5e-3, \"big\": 18446744073709551615,\n"
		" \"s\": \"caf\xc3\xa9 \\u00e9 \\ud83d\\ude00 \\\" \\\\ \\n \xf0\x9f\x98\x80\",\n"
		" \"a\": [true, false, null, [], {}, [1, [2, {\"x\": \"y\"}]]], \"z\": 0}";
	size_t len = strlen(doc), n, parsed = 0;

	for (n = 0; n <= len; n++) {
		char *copy = malloc(n ? n : 1);	/* exact size, so ASan catches overreads */
		char err[256] = "";
		struct json_value *v;

		ck_assert_ptr_nonnull(copy);
		memcpy(copy, doc, n);
		errno = 0;
		v = json_parse(copy, n, err, sizeof(err));
		if (v) {
			parsed++;
			json_free(v);
		} else {
			ck_assert_int_eq(errno, EINVAL);
			ck_assert_msg(!strncmp(err, "line ", 5) && strstr(err, ", column ") &&
					      strstr(err, ": "),
				      "prefix %zu: bad message '%s'", n, err);
		}
		free(copy);
		if (n == len)
			ck_assert_ptr_nonnull(v);	/* the whole document parses */
	}
	ck_assert_uint_eq(parsed, 1);	/* an object: no shorter prefix is complete */

	/* prefixes of a number can be complete values themselves */
	for (n = 1, parsed = 0; n <= 8; n++) {
		struct json_value *v = json_parse("-12.5e+3", n, NULL, 0);

		parsed += v != NULL;
		json_free(v);
	}
	ck_assert_uint_eq(parsed, 4);	/* -1, -12, -12.5, -12.5e+3 */
}
END_TEST

/* Writer output for the sample document reads back with the same content. */
START_TEST(test_roundtrip_document)
{
	struct json_value *v;
	struct memout m;
	int64_t i;
	double d;
	int pretty;

	for (pretty = 0; pretty <= 1; pretty++) {
		mo_open(&m, pretty);
		build_sample(m.w);
		ck_assert_int_eq(mo_close(&m), 0);
		v = parse_ok(m.text);
		ck_assert_str_eq(json_str(json_get(v, "name")), "x\"y");
		ck_assert_uint_eq(json_len(json_get(v, "list")), 4);
		ck_assert(json_i64(json_at(json_get(v, "list"), 1), &i) && i == -2);
		ck_assert_int_eq(json_type(json_get(json_at(json_get(v, "list"), 2), "b")),
				 JSON_NULL);
		ck_assert(json_double(json_get(v, "d"), &d) && d == 0.5);
		ck_assert_str_eq(json_key_at(v, json_len(v) - 1), "d");
		json_free(v);
		free(m.text);
	}
}
END_TEST

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;	/* big blocks are mmap'ed, counted in hblkhd */
}

/* The parsed tree stays within a small multiple of the input size. */
START_TEST(test_reader_memory_bound)
{
	static const char *const units[] = { "0,", "\"\",", "[],", "{},", "[0],", "{\"\":0}," };
	const size_t count = 200000;
	size_t u;

	for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		size_t ul = strlen(units[u]), len = 1 + count * ul, before, used;
		char *s = malloc(len + 1);
		struct json_value *v;
		size_t k;

		ck_assert_ptr_nonnull(s);
		s[0] = '[';
		for (k = 0; k < count; k++)
			memcpy(s + 1 + k * ul, units[u], ul);
		s[len - 1] = ']';	/* replaces the last comma */
		s[len] = '\0';
		before = heap_in_use();
		v = parse_ok(s);
		used = heap_in_use() - before;
		ck_assert_uint_eq(json_len(v), count);
		ck_assert_msg(used <= 10 * len, "'%s': %zu bytes for %zu bytes of input", units[u],
			      used, len);
		json_free(v);
		free(s);
	}
}
END_TEST

static Suite *json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *w = tcase_create("writer"), *r = tcase_create("reader");

	tcase_set_timeout(w, 60);
	tcase_set_timeout(r, 60);
	tcase_add_test(w, test_writer_every_byte);
	tcase_add_test(w, test_writer_all_bytes_in_one_string);
	tcase_add_test(w, test_writer_invalid_utf8);
	tcase_add_test(w, test_writer_roundtrip_controls);
	tcase_add_test(w, test_writer_roundtrip_all_code_points);
	tcase_add_test(w, test_writer_string_null_and_nul);
	tcase_add_test(w, test_writer_compact);
	tcase_add_test(w, test_writer_pretty);
	tcase_add_test(w, test_writer_inline);
	tcase_add_test(w, test_writer_scalar_top_level);
	tcase_add_test(w, test_writer_deep);
	tcase_add_test(w, test_writer_numbers);
	tcase_add_test(w, test_writer_misuse);
	tcase_add_test(w, test_writer_io_error);
	tcase_add_test(w, test_roundtrip_document);
	suite_add_tcase(s, w);

	tcase_add_test(r, test_reader_document);
	tcase_add_test(r, test_reader_scalars);
	tcase_add_test(r, test_reader_surrogates);
	tcase_add_test(r, test_reader_rejects);
	tcase_add_test(r, test_reader_rejects_nul_and_errbuf);
	tcase_add_test(r, test_reader_numbers);
	tcase_add_test(r, test_reader_number_length_limit);
	tcase_add_test(r, test_reader_depth_limit);
	tcase_add_test(r, test_reader_string_runs);
	tcase_add_test(r, test_reader_whitespace_runs);
	tcase_add_test(r, test_reader_truncated);
	tcase_add_test(r, test_reader_memory_bound);
	suite_add_tcase(s, r);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(json_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
