/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * JSON DOM parser (see json_reader.h): recursive descent with a depth limit.
 *
 * Memory layout: all nodes, strings and element arrays of a document live in an arena
 * (a list of malloc'd chunks) owned by the root, so json_free() is a walk over the
 * chunks, not over the tree. While a container is being parsed its elements go on a
 * temporary stack shared by all levels; when it closes they are copied into the arena
 * as one array of exactly the right size, so the tree has no slack from growing arrays.
 */
#include "base/json_escape.h"
#include "base/json_reader.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/util.h"

#define NUM_INT		0x1	/* exact integer, magnitude in .u (else a double in .d) */
#define NUM_NEG		0x2	/* negative integer (or -0) */

#define CHUNK_MIN	1024
#define CHUNK_MAX	(1024 * 1024)

struct json_member;

/* 16 bytes: the size of every node is what bounds memory use per input byte. */
struct json_value {
	uint8_t type;		/* enum json_type */
	uint8_t flags;		/* NUM_* for numbers, the value for booleans */
	uint32_t len;		/* element count (array, object), byte length (string) */
	union {
		uint64_t u;
		double d;
		char *s;
		struct json_value *items;
		struct json_member *members;
	};
};

struct json_member {
	const char *key;
	struct json_value val;
};

struct chunk {
	struct chunk *next;
	size_t size, used;
	unsigned char data[];	/* 8-byte aligned: the header is three 8-byte words */
};

/* What json_parse() hands out: the root comes first, so a root pointer is a doc pointer. */
struct json_doc {
	struct json_value root;
	struct chunk *chunks;
};

struct parser {
	const unsigned char *buf;
	size_t len, pos;

	struct chunk *chunks;	/* the head is where small allocations go */
	size_t next_chunk;

	struct json_value *vals;	/* pending elements of all open containers */
	size_t nvals, cap_vals;
	const char **keys;		/* pending keys of all open objects */
	size_t nkeys, cap_keys;
	char *scratch;			/* string being decoded */
	size_t cap_scratch;

	locale_t c_locale;		/* created on the first non-integer number */
	int err;			/* EINVAL or ENOMEM once failed */
	size_t err_pos;
	char err_msg[128];
};

static bool fail(struct parser *p, size_t pos, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static bool fail(struct parser *p, size_t pos, int err, const char *fmt, ...)
{
	va_list ap;

	if (p->err)
		return false;
	p->err = err;
	p->err_pos = pos;
	va_start(ap, fmt);
	vsnprintf(p->err_msg, sizeof(p->err_msg), fmt, ap);
	va_end(ap);
	return false;
}

static bool fail_nomem(struct parser *p)
{
	return fail(p, p->pos, ENOMEM, "out of memory");
}

/* Describes the byte at @pos for an error message: 'x', byte 0xNN, or end of input. */
static const char *describe(const struct parser *p, size_t pos, char *buf, size_t size)
{
	unsigned char c;

	if (pos >= p->len)
		return "end of input";
	c = p->buf[pos];
	if (c > 0x20 && c < 0x7f)
		snprintf(buf, size, "'%c'", c);
	else
		snprintf(buf, size, "byte 0x%02x", c);
	return buf;
}

/* "expected X, found Y" at the current position (end of input included). */
static bool fail_expected(struct parser *p, const char *what)
{
	char desc[16];

	return fail(p, p->pos, EINVAL, "expected %s, found %s", what,
		    describe(p, p->pos, desc, sizeof(desc)));
}

static void *arena_alloc(struct parser *p, size_t size, size_t align)
{
	struct chunk *c = p->chunks;
	size_t off, csize;

	if (c) {
		off = (c->used + align - 1) & ~(align - 1);
		if (off <= c->size && size <= c->size - off) {
			c->used = off + size;
			return c->data + off;
		}
	}
	if (size > SIZE_MAX - sizeof(*c)) {
		fail_nomem(p);
		return NULL;
	}
	/*
	 * A big allocation gets its own chunk, behind the head, so the head stays usable;
	 * the space left at the end of a full chunk is then at most 1/8 of it.
	 */
	csize = size > p->next_chunk / 8 ? size : p->next_chunk;
	c = malloc(sizeof(*c) + csize);
	if (!c) {
		fail_nomem(p);
		return NULL;
	}
	c->size = csize;
	c->used = size;
	if (csize == size && p->chunks) {
		c->next = p->chunks->next;
		p->chunks->next = c;
	} else {
		c->next = p->chunks;
		p->chunks = c;
		if (p->next_chunk < CHUNK_MAX)
			p->next_chunk *= 2;
	}
	return c->data;
}

static void free_chunks(struct chunk *c)
{
	while (c) {
		struct chunk *next = c->next;

		free(c);
		c = next;
	}
}

/* Makes room for one more element in a stack of @elem-byte elements. */
static bool stack_reserve(struct parser *p, void **stack, size_t n, size_t *cap, size_t elem)
{
	size_t ncap;
	void *s;

	if (n < *cap)
		return true;
	ncap = *cap ? *cap * 2 : 64;
	if (ncap > SIZE_MAX / elem)
		return fail_nomem(p);
	s = realloc(*stack, ncap * elem);
	if (!s)
		return fail_nomem(p);
	*stack = s;
	*cap = ncap;
	return true;
}

static bool push_val(struct parser *p, const struct json_value *v)
{
	if (!stack_reserve(p, (void **)&p->vals, p->nvals, &p->cap_vals, sizeof(*p->vals)))
		return false;
	p->vals[p->nvals++] = *v;
	return true;
}

static bool push_key(struct parser *p, const char *key)
{
	if (!stack_reserve(p, (void **)&p->keys, p->nkeys, &p->cap_keys, sizeof(*p->keys)))
		return false;
	p->keys[p->nkeys++] = key;
	return true;
}

/* 0x80 in each byte of x that is zero, exactly (no borrow from byte to byte). */
static uint64_t zero_bytes(uint64_t x)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL;

	return ~(((x & low7) + low7) | x) & ~low7;
}

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len && is_ws(p->buf[p->pos])) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* pretty-printed runs are mostly newlines and indentation: a word at a time */
		const uint64_t ones = 0x0101010101010101ULL;
		uint64_t w, other;

		if (p->len - p->pos >= 8) {
			memcpy(&w, p->buf + p->pos, 8);
			other = ~(zero_bytes(w ^ (ones * ' ')) | zero_bytes(w ^ (ones * '\n')) |
				  zero_bytes(w ^ (ones * '\t')) | zero_bytes(w ^ (ones * '\r'))) &
				(ones << 7);
			if (other) {
				p->pos += (size_t)__builtin_ctzll(other) / 8;
				return;
			}
			p->pos += 8;
			continue;
		}
#endif
		p->pos++;
	}
}

static bool at_end(const struct parser *p)
{
	return p->pos >= p->len;
}

static unsigned char peek(const struct parser *p)
{
	return p->buf[p->pos];
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/*
 * The four hex digits of a \u escape whose backslash is at @esc, or -1 after failing
 * (end of input if the input stops inside the digits, else invalid escape).
 */
static long hex4(struct parser *p, size_t esc)
{
	long v = 0;
	size_t i;

	for (i = esc + 2; i < esc + 6; i++) {
		int d;

		if (i >= p->len) {
			fail(p, p->len, EINVAL, "unexpected end of input in \\u escape");
			return -1;
		}
		d = hex_digit(p->buf[i]);
		if (d < 0) {
			fail(p, esc, EINVAL, "invalid \\u escape: expected 4 hex digits");
			return -1;
		}
		v = v << 4 | d;
	}
	return v;
}

static bool scratch_put(struct parser *p, size_t *n, const void *bytes, size_t len)
{
	if (p->cap_scratch - *n < len) {
		size_t ncap = p->cap_scratch ? p->cap_scratch : 256;
		char *s;

		while (ncap - *n < len) {
			if (ncap > SIZE_MAX / 2)
				return fail_nomem(p);
			ncap *= 2;
		}
		s = realloc(p->scratch, ncap);
		if (!s)
			return fail_nomem(p);
		p->scratch = s;
		p->cap_scratch = ncap;
	}
	memcpy(p->scratch + *n, bytes, len);
	*n += len;
	return true;
}

static size_t utf8_encode(uint32_t cp, unsigned char *out)
{
	if (cp < 0x80) {
		out[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = 0xc0 | (cp >> 6);
		out[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = 0xe0 | (cp >> 12);
		out[1] = 0x80 | ((cp >> 6) & 0x3f);
		out[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	out[0] = 0xf0 | (cp >> 18);
	out[1] = 0x80 | ((cp >> 12) & 0x3f);
	out[2] = 0x80 | ((cp >> 6) & 0x3f);
	out[3] = 0x80 | (cp & 0x3f);
	return 4;
}

/* A \u escape at p->pos (the backslash), possibly a surrogate pair: appends its UTF-8. */
static bool parse_u_escape(struct parser *p, size_t *n)
{
	size_t esc = p->pos;
	unsigned char utf8[4];
	long cp, lo;

	cp = hex4(p, esc);
	if (cp < 0)
		return false;
	p->pos += 6;
	if (cp == 0)
		return fail(p, esc, EINVAL, "\\u0000 is not allowed in strings");
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return fail(p, esc, EINVAL, "lone low surrogate \\u%04lx in string", cp);
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (p->len - p->pos >= 2 && p->buf[p->pos] == '\\' && p->buf[p->pos + 1] == 'u') {
			lo = hex4(p, p->pos);
			if (lo < 0)
				return false;
			if (lo < 0xdc00 || lo > 0xdfff)
				return fail(p, esc, EINVAL,
					    "lone high surrogate \\u%04lx in string", cp);
			p->pos += 6;
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		} else if (p->len - p->pos < 2 && (at_end(p) || peek(p) == '\\')) {
			return fail(p, p->len, EINVAL, "unexpected end of input in string");
		} else {
			return fail(p, esc, EINVAL, "lone high surrogate \\u%04lx in string", cp);
		}
	}
	return scratch_put(p, n, utf8, utf8_encode(cp, utf8));
}

/*
 * Where in the 8 bytes at s a plain run ends (a '"', '\\', control character or byte >= 0x80):
 * 8 when it does not. Each test ("some byte is zero / below n") looks at the whole word at
 * once; the lowest byte flagged is exact, as a borrow only runs upwards.
 */
static size_t plain_len8(const unsigned char *s)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	uint64_t w, q, b, m;

	memcpy(&w, s, 8);
	q = w ^ (ones * '"');
	b = w ^ (ones * '\\');
	m = (((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w) | w) & highs;
	if (!m)
		return 8;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (size_t)__builtin_ctzll(m) / 8;
#else
	return 0; /* the byte loop finds it */
#endif
}

/* The decoded string bytes[0..n) goes to the arena; parsing goes on at end. */
static bool string_done(struct parser *p, const char *bytes, size_t n, size_t end, char **ret_s,
			uint32_t *ret_len)
{
	char *s;

	p->pos = end;
	if (n > UINT32_MAX)
		return fail(p, p->pos, EINVAL, "string longer than 4 GiB");
	s = arena_alloc(p, n + 1, 1);
	if (!s)
		return false;
	if (n)
		memcpy(s, bytes, n);
	s[n] = '\0';
	*ret_s = s;
	*ret_len = n;
	return true;
}

/* A string at p->pos (the opening quote): decodes it into the arena. */
static bool parse_string(struct parser *p, char **ret_s, uint32_t *ret_len)
{
	size_t n = 0;

	p->pos++;
	for (;;) {
		unsigned char c, e;
		size_t seq, run;
		char ch;

		/* a run of plain ASCII (most of a string, usually all of it) in one piece */
		for (run = p->pos; p->len - run >= 8;) {
			size_t k = plain_len8(p->buf + run);

			run += k;
			if (k < 8)
				break;
		}
		for (; run < p->len; run++) {
			c = p->buf[run];
			if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\')
				break;
		}
		if (run > p->pos) {
			if (!n && run < p->len && p->buf[run] == '"')
				return string_done(p, (const char *)p->buf + p->pos, run - p->pos,
						   run + 1, ret_s, ret_len);
			if (!scratch_put(p, &n, p->buf + p->pos, run - p->pos))
				return false;
			p->pos = run;
		}
		if (at_end(p))
			return fail(p, p->pos, EINVAL, "unexpected end of input in string");
		c = peek(p);
		if (c == '"') {
			p->pos++;
			break;
		}
		if (c == '\\') {
			if (p->len - p->pos < 2)
				return fail(p, p->len, EINVAL, "unexpected end of input in string");
			e = p->buf[p->pos + 1];
			if (e == 'u') {
				if (!parse_u_escape(p, &n))
					return false;
				continue;
			}
			if (json_unescape(e) < 0) {
				char desc[16];

				return fail(p, p->pos, EINVAL,
					    "invalid escape: backslash followed by %s",
					    describe(p, p->pos + 1, desc, sizeof(desc)));
			}
			ch = (char)json_unescape(e);
			if (!scratch_put(p, &n, &ch, 1))
				return false;
			p->pos += 2;
			continue;
		}
		if (c < 0x20)
			return fail(p, p->pos, EINVAL,
				    "unescaped control character 0x%02x in string", c);
		seq = utf8_seq_len(p->buf + p->pos, p->len - p->pos);
		if (!seq)
			return fail(p, p->pos, EINVAL, "invalid UTF-8 byte 0x%02x in string", c);
		if (!scratch_put(p, &n, p->buf + p->pos, seq))
			return false;
		p->pos += seq;
	}
	return string_done(p, p->scratch, n, p->pos, ret_s, ret_len);
}

/*
 * The exact integer value of the number whose integer digits are [ip, ie), fraction
 * digits [fp, fe) and exponent @exp, if it is an integer no larger than UINT64_MAX.
 */
static bool exact_integer(const struct parser *p, size_t ip, size_t ie, size_t fp, size_t fe,
			  long exp, uint64_t *ret_mag)
{
	size_t nd = (ie - ip) + (fe - fp), first, last, i;
	uint64_t mag = 0;
	long e;

#define DIGIT(i) (p->buf[(i) < ie - ip ? ip + (i) : fp + (i) - (ie - ip)] - '0')
	for (first = 0; first < nd && DIGIT(first) == 0; first++)
		;
	if (first == nd) {
		*ret_mag = 0;
		return true;
	}
	for (last = nd - 1; DIGIT(last) == 0; last--)
		;
	/* value = digits[first..last] * 10^e */
	e = exp - (long)(fe - fp) + (long)(nd - 1 - last);
	if (e < 0 || (long)(last - first + 1) + e > 20)
		return false;
	for (i = first; i <= last; i++) {
		unsigned d = DIGIT(i);

		if (mag > (UINT64_MAX - d) / 10)
			return false;
		mag = mag * 10 + d;
	}
#undef DIGIT
	for (; e > 0; e--) {
		if (mag > UINT64_MAX / 10)
			return false;
		mag *= 10;
	}
	*ret_mag = mag;
	return true;
}

static bool parse_number(struct parser *p, struct json_value *v)
{
	size_t start = p->pos, ip, ie, fp = 0, fe = 0;
	bool neg = false;
	long exp = 0;
	uint64_t mag;
	char text[JSON_MAX_NUMBER_LEN + 1];

	if (peek(p) == '-') {
		neg = true;
		p->pos++;
	}
	ip = p->pos;
	if (at_end(p) || !is_digit(peek(p)))
		return fail_expected(p, "a digit after '-'");
	if (peek(p) == '0') {
		p->pos++;
		if (!at_end(p) && is_digit(peek(p)))
			return fail(p, ip, EINVAL, "leading zeros are not allowed in numbers");
	} else {
		while (!at_end(p) && is_digit(peek(p)))
			p->pos++;
	}
	ie = p->pos;
	if (!at_end(p) && peek(p) == '.') {
		p->pos++;
		fp = p->pos;
		if (at_end(p) || !is_digit(peek(p)))
			return fail_expected(p, "a digit after '.'");
		while (!at_end(p) && is_digit(peek(p)))
			p->pos++;
		fe = p->pos;
	}
	if (!at_end(p) && (peek(p) == 'e' || peek(p) == 'E')) {
		bool eneg = false;

		p->pos++;
		if (!at_end(p) && (peek(p) == '+' || peek(p) == '-')) {
			eneg = peek(p) == '-';
			p->pos++;
		}
		if (at_end(p) || !is_digit(peek(p)))
			return fail_expected(p, "a digit in the exponent");
		while (!at_end(p) && is_digit(peek(p))) {
			/* saturate: far beyond any u64 or double, and digits are bounded */
			if (exp < 1000000)
				exp = exp * 10 + (peek(p) - '0');
			p->pos++;
		}
		if (eneg)
			exp = -exp;
	}
	if (p->pos - start > JSON_MAX_NUMBER_LEN)
		return fail(p, start, EINVAL, "number longer than %d characters",
			    JSON_MAX_NUMBER_LEN);

	v->type = JSON_NUMBER;
	if (exact_integer(p, ip, ie, fp, fe, exp, &mag)) {
		v->flags = NUM_INT | (neg ? NUM_NEG : 0);
		v->u = mag;
		return true;
	}
	if (p->c_locale == (locale_t)0) {
		p->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
		if (p->c_locale == (locale_t)0)
			return fail_nomem(p);
	}
	memcpy(text, p->buf + start, p->pos - start);
	text[p->pos - start] = '\0';
	v->flags = 0;
	v->d = strtod_l(text, NULL, p->c_locale);	/* ±HUGE_VAL on overflow, kept as such */
	return true;
}

static bool parse_literal(struct parser *p, const char *word)
{
	size_t i, n = strlen(word);

	for (i = 0; i < n; i++) {
		if (p->pos + i >= p->len)
			return fail(p, p->len, EINVAL, "unexpected end of input in '%s'", word);
		if (p->buf[p->pos + i] != (unsigned char)word[i])
			return fail(p, p->pos, EINVAL, "invalid literal (expected '%s')", word);
	}
	p->pos += n;
	return true;
}

static bool parse_value(struct parser *p, unsigned depth, struct json_value *v);

/* Copies the elements pushed since @base into the arena as the container's array. */
static bool close_container(struct parser *p, struct json_value *v, size_t base, size_t kbase)
{
	size_t n = p->nvals - base, i;

	if (n > UINT32_MAX)
		return fail(p, p->pos, EINVAL, "more than %u elements in one container",
			    UINT32_MAX);
	v->len = n;
	v->items = NULL;
	if (v->type == JSON_ARRAY && n) {
		v->items = arena_alloc(p, n * sizeof(*v->items), 8);
		if (!v->items)
			return false;
		memcpy(v->items, p->vals + base, n * sizeof(*v->items));
	} else if (v->type == JSON_OBJECT && n) {
		if (n > SIZE_MAX / sizeof(*v->members))
			return fail_nomem(p);
		v->members = arena_alloc(p, n * sizeof(*v->members), 8);
		if (!v->members)
			return false;
		for (i = 0; i < n; i++) {
			v->members[i].key = p->keys[kbase + i];
			v->members[i].val = p->vals[base + i];
		}
	}
	p->nvals = base;
	p->nkeys = kbase;
	return true;
}

/* At p->pos: skips blanks, then true (consumed) if the next byte is c. */
static bool accept(struct parser *p, char c)
{
	skip_ws(p);
	if (at_end(p) || peek(p) != c)
		return false;
	p->pos++;
	return true;
}

/*
 * Opens the container at p->pos ('[' or '{'), checking the depth; *ret_empty when close
 * follows at once. false after failing.
 */
static bool open_container(struct parser *p, unsigned depth, char close, bool *ret_empty)
{
	if (depth > JSON_MAX_DEPTH)
		return fail(p, p->pos, EINVAL, "nesting deeper than %d levels", JSON_MAX_DEPTH);
	p->pos++;
	*ret_empty = accept(p, close);
	return true;
}

/* After an element: ',' (*ret_closed false, another element follows) or close. */
static bool after_element(struct parser *p, char close, bool *ret_closed)
{
	if (accept(p, ',')) {
		skip_ws(p);
		if (!at_end(p) && peek(p) == close)
			return fail(p, p->pos, EINVAL, "trailing comma before '%c'", close);
		*ret_closed = false;
		return true;
	}
	if (accept(p, close)) {
		*ret_closed = true;
		return true;
	}
	return fail_expected(p, close == ']' ? "',' or ']' in array" : "',' or '}' in object");
}

static bool parse_array(struct parser *p, unsigned depth, struct json_value *v)
{
	size_t base = p->nvals;
	struct json_value elem;
	bool closed = false;

	v->type = JSON_ARRAY;
	if (!open_container(p, depth, ']', &closed))
		return false;
	while (!closed) {
		if (!parse_value(p, depth, &elem) || !push_val(p, &elem) ||
		    !after_element(p, ']', &closed))
			return false;
	}
	return close_container(p, v, base, p->nkeys);
}

static bool parse_object(struct parser *p, unsigned depth, struct json_value *v)
{
	size_t base = p->nvals, kbase = p->nkeys;
	struct json_value member;
	uint32_t klen;
	char *key = NULL;
	bool closed = false;

	v->type = JSON_OBJECT;
	if (!open_container(p, depth, '}', &closed))
		return false;
	while (!closed) {
		if (at_end(p) || peek(p) != '"')
			return fail_expected(p, "a string key in object");
		if (!parse_string(p, &key, &klen))
			return false;
		if (!accept(p, ':'))
			return fail_expected(p, "':' after object key");
		if (!parse_value(p, depth, &member) || !push_key(p, key) || !push_val(p, &member) ||
		    !after_element(p, '}', &closed))
			return false;
	}
	return close_container(p, v, base, kbase);
}

static bool parse_value(struct parser *p, unsigned depth, struct json_value *v)
{
	memset(v, 0, sizeof(*v));
	skip_ws(p);
	if (at_end(p))
		return fail_expected(p, "a value");
	switch (peek(p)) {
	case '{':
		return parse_object(p, depth + 1, v);
	case '[':
		return parse_array(p, depth + 1, v);
	case '"':
		v->type = JSON_STRING;
		return parse_string(p, &v->s, &v->len);
	case 't':
		v->type = JSON_BOOL;
		v->flags = 1;
		return parse_literal(p, "true");
	case 'f':
		v->type = JSON_BOOL;
		return parse_literal(p, "false");
	case 'n':
		v->type = JSON_NULL;
		return parse_literal(p, "null");
	default:
		if (peek(p) == '-' || is_digit(peek(p)))
			return parse_number(p, v);
		return fail_expected(p, "a value");
	}
}

/* Line and column (both from 1, columns in UTF-8 characters) of byte offset @pos. */
static void position(const struct parser *p, size_t pos, size_t *ret_line, size_t *ret_col)
{
	size_t line = 1, col = 1, i;

	for (i = 0; i < pos && i < p->len; i++) {
		if (p->buf[i] == '\n') {
			line++;
			col = 1;
		} else if ((p->buf[i] & 0xc0) != 0x80) {
			col++;
		}
	}
	*ret_line = line;
	*ret_col = col;
}

struct json_value *json_parse(const char *buf, size_t len, char *errbuf, size_t errlen)
{
	struct parser p = {
		.buf = (const unsigned char *)buf,
		.len = buf ? len : 0,
		.next_chunk = CHUNK_MIN,
	};
	struct json_doc *doc = NULL;
	struct json_value root;

	if (p.len >= 3 && !memcmp(p.buf, "\xef\xbb\xbf", 3)) {
		fail(&p, 0, EINVAL, "byte order mark is not allowed");
		goto out;
	}
	skip_ws(&p);
	if (at_end(&p)) {
		fail(&p, p.pos, EINVAL, "empty document");
		goto out;
	}
	if (!parse_value(&p, 0, &root))
		goto out;
	skip_ws(&p);
	if (!at_end(&p)) {
		char desc[16];

		fail(&p, p.pos, EINVAL, "unexpected %s after the top-level value",
		     describe(&p, p.pos, desc, sizeof(desc)));
		goto out;
	}
	doc = malloc(sizeof(*doc));
	if (!doc) {
		fail_nomem(&p);
		goto out;
	}
	doc->root = root;
	doc->chunks = p.chunks;
	p.chunks = NULL;
out:
	free_chunks(p.chunks);
	free(p.vals);
	free(p.keys);
	free(p.scratch);
	if (p.c_locale != (locale_t)0)
		freelocale(p.c_locale);
	if (!doc) {
		if (errbuf && errlen) {
			size_t line, col;

			position(&p, p.err_pos, &line, &col);
			snprintf(errbuf, errlen, "line %zu, column %zu: %s", line, col, p.err_msg);
		}
		errno = p.err ? p.err : EINVAL;
		return NULL;
	}
	return &doc->root;
}

void json_free(struct json_value *v)
{
	struct json_doc *doc = (struct json_doc *)v;

	if (!doc)
		return;
	free_chunks(doc->chunks);
	free(doc);
}

enum json_type json_type(const struct json_value *v)
{
	return v ? (enum json_type)v->type : JSON_NULL;
}

const struct json_value *json_get(const struct json_value *obj, const char *key)
{
	uint32_t i;

	if (!obj || obj->type != JSON_OBJECT || !key)
		return NULL;
	for (i = 0; i < obj->len; i++) {
		if (!strcmp(obj->members[i].key, key))
			return &obj->members[i].val;
	}
	return NULL;
}

size_t json_len(const struct json_value *v)
{
	if (!v || (v->type != JSON_ARRAY && v->type != JSON_OBJECT))
		return 0;
	return v->len;
}

const struct json_value *json_at(const struct json_value *arr, size_t i)
{
	if (!arr || arr->type != JSON_ARRAY || i >= arr->len)
		return NULL;
	return &arr->items[i];
}

const char *json_key_at(const struct json_value *obj, size_t i)
{
	if (!obj || obj->type != JSON_OBJECT || i >= obj->len)
		return NULL;
	return obj->members[i].key;
}

const struct json_value *json_val_at(const struct json_value *obj, size_t i)
{
	if (!obj || obj->type != JSON_OBJECT || i >= obj->len)
		return NULL;
	return &obj->members[i].val;
}

const char *json_str(const struct json_value *v)
{
	if (!v || v->type != JSON_STRING)
		return NULL;
	return v->s;
}

static bool is_int(const struct json_value *v)
{
	return v && v->type == JSON_NUMBER && (v->flags & NUM_INT);
}

bool json_u64(const struct json_value *v, uint64_t *ret)
{
	if (!is_int(v) || ((v->flags & NUM_NEG) && v->u))
		return false;
	if (ret)
		*ret = v->u;
	return true;
}

bool json_i64(const struct json_value *v, int64_t *ret)
{
	int64_t r;

	if (!is_int(v))
		return false;
	if (v->flags & NUM_NEG) {
		if (v->u > (uint64_t)INT64_MAX + 1)
			return false;
		r = v->u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v->u;
	} else {
		if (v->u > INT64_MAX)
			return false;
		r = v->u;
	}
	if (ret)
		*ret = r;
	return true;
}

bool json_double(const struct json_value *v, double *ret)
{
	double d;

	if (!v || v->type != JSON_NUMBER)
		return false;
	if (v->flags & NUM_INT)
		d = (v->flags & NUM_NEG) ? -(double)v->u : (double)v->u;
	else
		d = v->d;
	if (!isfinite(d))
		return false;
	if (ret)
		*ret = d;
	return true;
}

bool json_bool(const struct json_value *v, bool *ret)
{
	if (!v || v->type != JSON_BOOL)
		return false;
	if (ret)
		*ret = v->flags;
	return true;
}
