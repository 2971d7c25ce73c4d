/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Streaming JSON writer: the caller describes a document as a sequence of calls
 * (start/end object or array, names, scalar values) and the writer emits it to a
 * FILE, handling commas, nesting and optional pretty-printing (2-space indent).
 *
 * Strings may hold any bytes: quotes, backslashes and control bytes (< 0x20 and 0x7f)
 * are escaped, valid UTF-8 is passed through unchanged, and every byte of an invalid
 * UTF-8 sequence (overlong forms, surrogates, code points above U+10FFFF, truncated
 * sequences, stray continuation bytes) is written as \ufffd. The output is therefore
 * always valid JSON, whatever the input strings contain.
 *
 * Error handling: value calls return nothing. The first error (a failed write, an
 * allocation failure, or a misuse such as a value without a name inside an object, a
 * name outside an object, a mismatched end, or a second top-level value) is remembered,
 * nothing more is written after it, and jw_finish() reports it. Numbers printed by
 * jw_double() do not depend on the process locale.
 */
#ifndef SCHEDPROF_JSON_WRITER_H
#define SCHEDPROF_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json_writer;

/* Writes one JSON document to @f. Returns NULL with errno set (ENOMEM, EINVAL). */
struct json_writer *jw_new(FILE *f, bool pretty);
/* Frees the writer; does not close or flush its FILE. Accepts NULL. */
void jw_free(struct json_writer *w);
/*
 * Ends the document: adds a final newline in pretty mode and flushes the FILE.
 * Returns 0; the first error seen (-EIO or -errno from a failed write, -ENOMEM);
 * or -EINVAL after a misuse, if objects/arrays are still open, or if no value was written.
 * Further calls after jw_finish() are misuses.
 */
int jw_finish(struct json_writer *w);

void jw_start_object(struct json_writer *w);
/*
 * An object on one line in pretty mode (`{"a": 1, "b": [2, 3]}`), with whatever it holds:
 * for the elements of a long array of small objects. Ended by jw_end_object().
 */
void jw_start_object_inline(struct json_writer *w);
void jw_end_object(struct json_writer *w);
void jw_start_array(struct json_writer *w);
void jw_end_array(struct json_writer *w);

/* Key of the next member; only inside an object, and must be followed by one value. */
void jw_name(struct json_writer *w, const char *name);

/* NUL-terminated string; NULL writes null. */
void jw_string(struct json_writer *w, const char *s);
/* @len bytes from @s, which may include NUL bytes (written as \u0000); NULL writes null. */
void jw_string_len(struct json_writer *w, const char *s, size_t len);
void jw_uint(struct json_writer *w, uint64_t v);
void jw_int(struct json_writer *w, int64_t v);
/* Shortest of %.15g/%.16g/%.17g that reads back to the same double; NaN and ±inf write null. */
void jw_double(struct json_writer *w, double v);
void jw_bool(struct json_writer *w, bool v);
void jw_null(struct json_writer *w);

/* jw_name(w, name) followed by the value. */
void jw_kv_string(struct json_writer *w, const char *name, const char *s);
void jw_kv_uint(struct json_writer *w, const char *name, uint64_t v);
void jw_kv_int(struct json_writer *w, const char *name, int64_t v);
void jw_kv_double(struct json_writer *w, const char *name, double v);
void jw_kv_bool(struct json_writer *w, const char *name, bool v);

#endif /* SCHEDPROF_JSON_WRITER_H */
