/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Small JSON DOM parser, used to read saved runs back. Parsing is strict RFC 8259:
 * exactly one value with optional surrounding whitespace; no trailing commas, comments,
 * leading zeros, byte order mark, unescaped control characters, invalid escapes or
 * invalid UTF-8. \u escapes must form valid code points (surrogate pairs are decoded,
 * lone surrogates rejected) and \u0000 is rejected so that every string is a plain
 * NUL-terminated C string.
 *
 * Limits, so that a hostile file cannot crash or exhaust the reader:
 *  - nesting depth JSON_MAX_DEPTH (an error, not a stack overflow);
 *  - numbers at most JSON_MAX_NUMBER_LEN characters long (RFC 8259 section 9 lets
 *    implementations limit number precision);
 *  - memory: the tree lives in a few arena chunks and every node is 16 bytes, so the
 *    parsed document takes at most about 10 times the input size (the smallest value,
 *    "0," in an array, is 2 bytes), plus about as much again in temporary stacks while
 *    parsing; time is linear in the input size.
 *
 * Values are opaque and read-only. Everything belongs to the root returned by
 * json_parse(); pointers into the tree stay valid until json_free(root). All accessors
 * accept NULL (and values of the wrong type) and then return NULL/0/false, so lookups
 * can be chained: json_u64(json_get(json_at(arr, 3), "count"), &n).
 */
#ifndef SCHEDPROF_JSON_READER_H
#define SCHEDPROF_JSON_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH		128	/* nested arrays/objects; the 129th level is an error */
#define JSON_MAX_NUMBER_LEN	1024	/* characters in one number */

enum json_type {
	JSON_NULL,
	JSON_BOOL,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json_value;

/*
 * Parses @len bytes at @buf (no NUL terminator needed; the buffer is not kept).
 * Returns the root value, or NULL with errno set (EINVAL for a malformed document,
 * ENOMEM) and, if @errbuf is not NULL, "line L, column C: what is wrong" in @errbuf.
 * Lines and columns start at 1; columns count UTF-8 characters.
 */
struct json_value *json_parse(const char *buf, size_t len, char *errbuf, size_t errlen);
/* Frees a document; only for a root returned by json_parse(). Accepts NULL. */
void json_free(struct json_value *v);

/* Type of @v; JSON_NULL for NULL, so a missing member reads like null. */
enum json_type json_type(const struct json_value *v);

/* Member @key of an object (the first one if the key repeats); NULL if absent or not an object. */
const struct json_value *json_get(const struct json_value *obj, const char *key);
/* Number of elements of an array or members of an object; 0 for anything else. */
size_t json_len(const struct json_value *v);
/* Element @i of an array; NULL if out of range or not an array. */
const struct json_value *json_at(const struct json_value *arr, size_t i);
/* Key and value of member @i of an object, in document order; NULL if out of range. */
const char *json_key_at(const struct json_value *obj, size_t i);
const struct json_value *json_val_at(const struct json_value *obj, size_t i);

/* Decoded UTF-8, NUL-terminated; NULL if @v is not a string. */
const char *json_str(const struct json_value *v);
/*
 * Integer accessors: true if @v is a number whose exact decimal value is an integer in
 * range (1e3 and 2.50e1 qualify, 1.5 does not; -0 reads as 0). Exact for every integer
 * up to UINT64_MAX / down to INT64_MIN, with no rounding through double.
 */
bool json_u64(const struct json_value *v, uint64_t *ret);
bool json_i64(const struct json_value *v, int64_t *ret);
/* Nearest double; false if @v is not a number or is out of double range (1e400). */
bool json_double(const struct json_value *v, double *ret);
bool json_bool(const struct json_value *v, bool *ret);

#endif /* SCHEDPROF_JSON_READER_H */
