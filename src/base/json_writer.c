/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Streaming JSON writer (see json_writer.h). The writer keeps one small frame per open
 * object/array (its kind and whether it already holds a member) and decides from it
 * where commas, newlines and indentation go.
 */
#include "base/json_escape.h"
#include "base/json_writer.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/util.h"

#define FRAME_OBJECT	0x1	/* the container is an object (else an array) */
#define FRAME_NONEMPTY	0x2	/* at least one member/element was written */
#define FRAME_INLINE	0x4	/* pretty mode: on one line (jw_start_object_inline) */

struct json_writer {
	FILE *f;
	bool pretty;
	bool have_name;		/* jw_name() was called; its value is due */
	bool top_done;		/* the top-level value is complete */
	bool finished;		/* jw_finish() was called */
	int err;		/* first error, sticky; nothing is written after it */
	locale_t c_locale;	/* for locale-independent number formatting */
	unsigned char *frames;	/* one FRAME_* byte per open container */
	size_t depth, cap;
};

struct json_writer *jw_new(FILE *f, bool pretty)
{
	struct json_writer *w;

	if (!f) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	if (w->c_locale == (locale_t)0) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->f = f;
	w->pretty = pretty;
	return w;
}

void jw_free(struct json_writer *w)
{
	if (!w)
		return;
	freelocale(w->c_locale);
	free(w->frames);
	free(w);
}

static void set_err(struct json_writer *w, int err)
{
	if (!w->err)
		w->err = err;
}

static void set_io_err(struct json_writer *w)
{
	set_err(w, errno > 0 ? -errno : -EIO);
}

static void out(struct json_writer *w, const char *s, size_t len)
{
	if (w->err || !len)
		return;
	/* one writer per stream: the stream's lock per call is a third of writing a big run */
	if (fwrite_unlocked(s, 1, len, w->f) != len)
		set_io_err(w);
}

static void out_str(struct json_writer *w, const char *s)
{
	out(w, s, strlen(s));
}

static void out_newline_indent(struct json_writer *w, size_t depth)
{
	static const char spaces[] = "                                ";
	static const char nl_spaces[] = "\n                                ";
	size_t n = depth * 2;

	if (n < sizeof(nl_spaces) - 1) { /* the usual depth: one write */
		out(w, nl_spaces, n + 1);
		return;
	}
	out(w, "\n", 1);
	while (n) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;

		out(w, spaces, k);
		n -= k;
	}
}

/*
 * Called before every value and every name: checks that the item may go here and writes
 * the separator in front of it. Returns false (and records -EINVAL) on a misuse.
 */
static bool begin_item(struct json_writer *w, bool is_name)
{
	unsigned char *frame;

	if (w->err)
		return false;
	if (w->finished)
		goto misuse;
	if (w->depth == 0) {
		/* one top-level value, and names only inside objects */
		if (is_name || w->top_done)
			goto misuse;
		return true;
	}
	frame = &w->frames[w->depth - 1];
	if (*frame & FRAME_OBJECT) {
		if (w->have_name) {
			if (is_name)
				goto misuse;
			w->have_name = false;
			return true;	/* the value follows its name on the same line */
		}
		if (!is_name)
			goto misuse;
		w->have_name = true;
	} else if (is_name) {
		goto misuse;
	}
	if (*frame & FRAME_NONEMPTY)
		out(w, ",", 1);
	if (w->pretty && (*frame & FRAME_INLINE)) {
		if (*frame & FRAME_NONEMPTY)
			out(w, " ", 1);
	} else if (w->pretty) {
		out_newline_indent(w, w->depth);
	}
	*frame |= FRAME_NONEMPTY;
	return !w->err;

misuse:
	set_err(w, -EINVAL);
	return false;
}

/* Called after every complete value. */
static void end_value(struct json_writer *w)
{
	if (w->depth == 0)
		w->top_done = true;
}

static void out_escaped(struct json_writer *w, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;	/* s[run..i) is a pending run of bytes written as they are */

	out(w, "\"", 1);
	while (i < len) {
		unsigned char c = s[i];
		char esc[8];
		const char *rep;
		size_t seq;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			i++;
			continue;
		}
		if (c >= 0x80) {
			seq = utf8_seq_len(s + i, len - i);
			if (seq) {
				i += seq;
				continue;
			}
		}
		out(w, (const char *)s + run, i - run);
		if (json_escape_letter(c)) {
			esc[0] = '\\';
			esc[1] = json_escape_letter(c);
			esc[2] = '\0';
			rep = esc;
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			rep = esc;
		} else {
			rep = "\\ufffd"; /* one per byte of an invalid sequence */
		}
		out_str(w, rep);
		i++;
		run = i;
	}
	out(w, (const char *)s + run, i - run);
	out(w, "\"", 1);
}

static void start_container(struct json_writer *w, unsigned char kind, const char *open)
{
	if (!begin_item(w, false))
		return;
	if (w->depth == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		unsigned char *frames = realloc(w->frames, cap);

		if (!frames) {
			set_err(w, -ENOMEM);
			return;
		}
		w->frames = frames;
		w->cap = cap;
	}
	/* inside a line, everything stays on it */
	if (w->depth && (w->frames[w->depth - 1] & FRAME_INLINE))
		kind |= FRAME_INLINE;
	w->frames[w->depth++] = kind;
	out(w, open, 1);
}

static void end_container(struct json_writer *w, unsigned char kind, const char *close)
{
	unsigned char frame;

	if (w->err)
		return;
	if (w->finished || w->depth == 0 || (w->frames[w->depth - 1] & FRAME_OBJECT) != kind ||
	    w->have_name) {
		set_err(w, -EINVAL);
		return;
	}
	frame = w->frames[--w->depth];
	if (w->pretty && (frame & FRAME_NONEMPTY) && !(frame & FRAME_INLINE))
		out_newline_indent(w, w->depth);
	out(w, close, 1);
	end_value(w);
}

void jw_start_object(struct json_writer *w)
{
	if (w)
		start_container(w, FRAME_OBJECT, "{");
}

void jw_start_object_inline(struct json_writer *w)
{
	if (w)
		start_container(w, FRAME_OBJECT | FRAME_INLINE, "{");
}

void jw_end_object(struct json_writer *w)
{
	if (w)
		end_container(w, FRAME_OBJECT, "}");
}

void jw_start_array(struct json_writer *w)
{
	if (w)
		start_container(w, 0, "[");
}

void jw_end_array(struct json_writer *w)
{
	if (w)
		end_container(w, 0, "]");
}

void jw_name(struct json_writer *w, const char *name)
{
	if (!w)
		return;
	if (!name) {
		set_err(w, -EINVAL);
		return;
	}
	if (!begin_item(w, true))
		return;
	out_escaped(w, name, strlen(name));
	out(w, w->pretty ? ": " : ":", w->pretty ? 2 : 1);
}

/* A scalar value written as the raw text @s. */
static void scalar(struct json_writer *w, const char *s)
{
	if (!w || !begin_item(w, false))
		return;
	out_str(w, s);
	end_value(w);
}

void jw_string_len(struct json_writer *w, const char *s, size_t len)
{
	if (!s) {
		scalar(w, "null");
		return;
	}
	if (!w || !begin_item(w, false))
		return;
	out_escaped(w, s, len);
	end_value(w);
}

void jw_string(struct json_writer *w, const char *s)
{
	jw_string_len(w, s, s ? strlen(s) : 0);
}

/* The decimal digits of v, ending at end (no NUL): returns where they start. */
static char *u64_digits(uint64_t v, char *end)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

void jw_uint(struct json_writer *w, uint64_t v)
{
	char buf[24];

	buf[sizeof(buf) - 1] = '\0';
	scalar(w, u64_digits(v, buf + sizeof(buf) - 1));
}

void jw_int(struct json_writer *w, int64_t v)
{
	char buf[24], *s;

	buf[sizeof(buf) - 1] = '\0';
	s = u64_digits(v < 0 ? -(uint64_t)v : (uint64_t)v, buf + sizeof(buf) - 1);
	if (v < 0)
		*--s = '-';
	scalar(w, s);
}

void jw_double(struct json_writer *w, double v)
{
	char buf[40];
	locale_t old;
	int prec;

	if (!w)
		return;
	if (!isfinite(v)) {	/* NaN and ±inf are not representable in JSON */
		scalar(w, "null");
		return;
	}
	/* %g never prints "inf"/"nan" for a finite value, so this is always a JSON number. */
	old = uselocale(w->c_locale);
	for (prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod_l(buf, NULL, w->c_locale) == v)
			break;
	}
	uselocale(old);
	scalar(w, buf);
}

void jw_bool(struct json_writer *w, bool v)
{
	scalar(w, v ? "true" : "false");
}

void jw_null(struct json_writer *w)
{
	scalar(w, "null");
}

/* jw_kv_X(w, name, v): jw_name(w, name), then jw_X(w, v). */
#define JW_KV(suffix, type)                                             \
	void jw_kv_##suffix(struct json_writer *w, const char *name, type v) \
	{                                                               \
		jw_name(w, name);                                       \
		jw_##suffix(w, v);                                      \
	}

JW_KV(string, const char *)
JW_KV(uint, uint64_t)
JW_KV(int, int64_t)
JW_KV(double, double)
JW_KV(bool, bool)

int jw_finish(struct json_writer *w)
{
	if (!w)
		return -EINVAL;
	if (w->finished)
		set_err(w, -EINVAL);
	w->finished = true;
	if (w->err)
		return w->err;
	if (w->depth || !w->top_done)
		return -EINVAL;
	if (w->pretty)
		out(w, "\n", 1);
	if (!w->err && fflush(w->f))
		set_io_err(w);
	if (!w->err && ferror(w->f))
		set_err(w, -EIO);
	return w->err;
}
