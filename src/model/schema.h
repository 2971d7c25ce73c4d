/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The saved-run JSON schema ("schedprof/1", docs/json.md), defined once: a table of field
 * descriptors per model struct (run, target, object, each view's rows, comm maps, stacks).
 * The same tables drive the writer (format_json.c), the strict reader (model_json.c), the
 * model's destructor and UTF-8 fix-up (model.c) and the round-trip test, so a key added to a
 * descriptor is written, read back, freed and tested with no other edit.
 *
 * Keys are written in descriptor order. The reader checks every field in the same order and
 * names the place of the first error ("schedules.callers[2].count: expected an integer, not a
 * string").
 */
#ifndef SCHEDPROF_SCHEMA_H
#define SCHEDPROF_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/json_reader.h"
#include "base/json_writer.h"

struct sp_run;

enum sp_ftype {
	SP_T_STR,    /* char *; SP_NULLABLE: NULL <-> null */
	SP_T_CONST,  /* char * that always holds .value (the schema name) */
	SP_T_U64,    /* uint64_t, 0 to INT64_MAX on read */
	SP_T_INT,    /* int, .min to .max */
	SP_T_UINT,   /* unsigned int, .min to .max */
	SP_T_BOOL,   /* bool */
	SP_T_ENUM,   /* an int-sized enum, written as .names[value] */
	SP_T_OBJECT, /* an embedded struct of schema .sub */
	SP_T_HEX,    /* uint64_t written as a "0x..." string (an address: beyond JSON's 2^53) */
	SP_T_PTR,    /* a pointer to one .sub struct of .size; NULL: the key is absent (give it
		      * SP_OPTIONAL) */
	SP_T_ARRAY,  /* growable array of .sub structs: pointer at .off, count .n_off, cap .cap_off */
	SP_T_MAP,    /* the same storage, as an object keyed by each element's char * at .key_off */
	SP_T_INTS,   /* int * with count at .n_off, each .min to .max (.what names them) */
	SP_T_STRS,   /* char ** with count at .n_off */
	SP_T_CUSTOM, /* written by .write, not read: a summary derived from other fields */
};

enum {
	SP_NULLABLE = 1u << 0, /* STR: null reads as NULL */
	SP_OPTIONAL = 1u << 1, /* may be absent on read (an old file) */
	SP_NONEMPTY = 1u << 2, /* ARRAY: written only when it has elements */
	SP_PARALLEL = 1u << 3, /* STRS, ARRAY: written when not NULL, optional on read, with
				* exactly as many entries as the count at .n_off (filled by an
				* earlier field, named by .what); ARRAY: no .cap_off */
	SP_CLAMP = 1u << 4,    /* INT: written clamped to .min (a pid: unknown is 0) */
	SP_GROUP = 1u << 5,    /* written when the bool at .group_off is true; on read the group
				* (consecutive fields of one .group_off) is there when any of its
				* keys is, and then sets the bool and needs every key */
	SP_INLINE = 1u << 6,   /* ARRAY: each element on one line (a long array of small ones) */
	SP_SPARSE = 1u << 7,   /* STR, HEX, U64, UINT, INT, BOOL: written only when not NULL/0/false,
				* absent reads as that */
	/*
	 * What a field is over time, for the interval of two cumulative reads (sp_schema_delta).
	 * A U64 is a counter unless marked: it subtracts. Every other scalar is a setting: the
	 * end's.
	 */
	SP_MAX = 1u << 8,      /* U64: a maximum; an interval has the end's, since the start */
	SP_SINCE = 1u << 9,    /* U64: a value since the start that does not subtract (a
				* percentile, a number of distinct tasks) */
	SP_STATE = 1u << 10,   /* U64: a state at the end (sleeps in progress): the end's, and
				* keeps its row in the interval like a counter that moved */
	SP_KEY = 1u << 11,     /* STR, INT, STRS: part of the element's identity when two arrays
				* of it are matched (NULL is a key of its own, unlike "") */
	SP_WHOLE_RUN = 1u << 12, /* of the whole run: an interval has none (left zero) */
	SP_MOVES_ALONE = 1u << 13, /* keyed ARRAY, MAP: its elements are counted apart from the
				    * struct that holds them, at other times: one that moved keeps
				    * that struct in the interval like a counter that moved */
};

struct sp_schema;
struct sp_strpool;

struct sp_field {
	const char *key;
	enum sp_ftype type;
	unsigned int flags;
	size_t off;			/* the member in the struct */
	size_t n_off, cap_off;		/* ARRAY, MAP, INTS, STRS: count and capacity members */
	size_t key_off;			/* MAP: the element's name member */
	size_t group_off;		/* SP_GROUP: the bool member */
	size_t size;			/* ARRAY, MAP: element size */
	const struct sp_schema *sub;	/* OBJECT, ARRAY, MAP */
	int64_t min, max;		/* INT, UINT, INTS */
	const char *what;		/* INTS: "a process id"; SP_PARALLEL: the counted key */
	const char *const *names;	/* ENUM */
	size_t nnames;
	const char *value;		/* CONST */
	/* written and read only when true for the struct (fields before it already read) */
	bool (*when)(const void *obj);
	int (*write)(struct json_writer *w, const struct sp_field *f, const void *obj); /* CUSTOM */
};

struct sp_schema {
	const char *name; /* for tests and messages: "stack", "sched_row" */
	const struct sp_field *fields;
	size_t nfields;
	/* the identity of an element, when its SP_KEY fields cannot say it (a stack); or NULL */
	uint64_t (*hash)(const void *elem);
	bool (*alike)(const void *a, const void *b);
};

#define SP_SCHEMA_OF(n, arr) \
	{ .name = n, .fields = arr, .nfields = sizeof(arr) / sizeof((arr)[0]) }

/* Field constructors: T is the struct, M the member. */
#define SP_STR(T, k, M) { .key = k, .type = SP_T_STR, .off = offsetof(T, M) }
#define SP_STR_NULL(T, k, M) { .key = k, .type = SP_T_STR, .flags = SP_NULLABLE, .off = offsetof(T, M) }
#define SP_U64(T, k, M) { .key = k, .type = SP_T_U64, .off = offsetof(T, M) }
/* A U64 with its kind over time (SP_MAX, SP_SINCE, SP_STATE); a plain SP_U64 is a counter. */
#define SP_U64_AS(T, k, M, kind) { .key = k, .type = SP_T_U64, .flags = kind, .off = offsetof(T, M) }
/* A U64 written only when not 0, read as 0 when absent. */
#define SP_U64_SPARSE(T, k, M) SP_U64_AS(T, k, M, SP_SPARSE)
/* A string that is part of a row's key (SP_KEY); _NULL: null reads as NULL. */
#define SP_KEY_STR(T, k, M) { .key = k, .type = SP_T_STR, .flags = SP_KEY, .off = offsetof(T, M) }
#define SP_KEY_STR_NULL(T, k, M) \
	{ .key = k, .type = SP_T_STR, .flags = SP_KEY | SP_NULLABLE, .off = offsetof(T, M) }
#define SP_BOOL(T, k, M) { .key = k, .type = SP_T_BOOL, .off = offsetof(T, M) }
#define SP_INT(T, k, M, lo, hi) { .key = k, .type = SP_T_INT, .off = offsetof(T, M), .min = lo, .max = hi }
#define SP_UINT(T, k, M, lo, hi) { .key = k, .type = SP_T_UINT, .off = offsetof(T, M), .min = lo, .max = hi }
/* An array member M with count N and capacity C, of elements of schema S; _AS: with flags. */
#define SP_ARRAY_AS(T, k, M, N, C, S, fl) \
	{ .key = k, .type = SP_T_ARRAY, .flags = fl, .off = offsetof(T, M), .n_off = offsetof(T, N), \
	  .cap_off = offsetof(T, C), .size = sizeof(*((T *)0)->M), .sub = &(S) }
#define SP_ARRAY(T, k, M, N, C, S) SP_ARRAY_AS(T, k, M, N, C, S, 0)
/* An object member M of schema S that is there only when its bool M.present is (SP_GROUP). */
#define SP_OBJECT_IF(T, k, M, S) \
	{ .key = k, .type = SP_T_OBJECT, .flags = SP_GROUP | SP_OPTIONAL, .off = offsetof(T, M), \
	  .group_off = offsetof(T, M.present), .sub = &(S) }
/* A struct sp_comm_list member M as a map of comm (or caller, owner) to schema S. */
#define SP_COMMS(T, k, M, S) \
	{ .key = k, .type = SP_T_MAP, .off = offsetof(T, M.v), .n_off = offsetof(T, M.n), \
	  .cap_off = offsetof(T, M.cap), .size = sizeof(struct sp_comm_stat), \
	  .key_off = offsetof(struct sp_comm_stat, comm), .sub = &(S) }
/* A struct sp_stack_list member M, each stack of schema S. */
#define SP_STACKS(T, M, S) \
	{ .key = "stacks", .type = SP_T_ARRAY, .off = offsetof(T, M.v), .n_off = offsetof(T, M.n), \
	  .cap_off = offsetof(T, M.cap), .size = sizeof(struct sp_stack_row), .sub = &(S) }

/*
 * Fields of one constructor F (SP_U64, SP_STR, ...) whose keys are their members' names, in
 * order: SP_NAMED(SP_U64, T, total, idle) is SP_U64(T, "total", total), SP_U64(T, "idle", idle).
 * Up to 8 members.
 */
#define SP_NAMED(F, T, ...) SP_NAMED_N_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1)(F, T, __VA_ARGS__)
#define SP_NAMED_N_(a, b, c, d, e, f, g, h, n, ...) SP_NAMED_##n##_
#define SP_NAMED_1_(F, T, m) F(T, #m, m)
#define SP_NAMED_2_(F, T, m, ...) F(T, #m, m), SP_NAMED_1_(F, T, __VA_ARGS__)
#define SP_NAMED_3_(F, T, m, ...) F(T, #m, m), SP_NAMED_2_(F, T, __VA_ARGS__)
#define SP_NAMED_4_(F, T, m, ...) F(T, #m, m), SP_NAMED_3_(F, T, __VA_ARGS__)
#define SP_NAMED_5_(F, T, m, ...) F(T, #m, m), SP_NAMED_4_(F, T, __VA_ARGS__)
#define SP_NAMED_6_(F, T, m, ...) F(T, #m, m), SP_NAMED_5_(F, T, __VA_ARGS__)
#define SP_NAMED_7_(F, T, m, ...) F(T, #m, m), SP_NAMED_6_(F, T, __VA_ARGS__)
#define SP_NAMED_8_(F, T, m, ...) F(T, #m, m), SP_NAMED_7_(F, T, __VA_ARGS__)

/* Comm maps: {"count", time key, "max_ns"} and the profile's {"samples"}. */
extern const struct sp_schema sp_comm_offcpu_max, sp_comm_wait_max, sp_comm_wait,
	sp_comm_samples;
/* Stacks with their time under "offcpu_ns", "wait_ns", or without a time (profile). */
extern const struct sp_schema sp_stack_offcpu, sp_stack_wait, sp_stack_plain;
/* struct sp_frame_info: {"addr", "build_id", "system_name", "file", "line", "inlined"}, sparse */
extern const struct sp_schema sp_frame_info_schema;
/* A struct sp_frame_info * member M of T (a profile row's "info"): absent when NULL. */
#define SP_FRAME_INFO(T, k, M) \
	{ .key = k, .type = SP_T_PTR, .flags = SP_OPTIONAL, .off = offsetof(T, M),              \
	  .size = sizeof(struct sp_frame_info), \
	  .sub = &sp_frame_info_schema }
/* The run's own fields (views apart: view.h lists them). */
extern const struct sp_schema sp_run_fields;

/* The field of s under key, or NULL. */
const struct sp_field *sp_schema_field(const struct sp_schema *s, const char *key);
/*
 * The field at path ("key", or "a.b": key b of the object field a), or NULL; *ret_off: where
 * the struct that holds it starts in a struct of schema s (the objects' offsets, added).
 */
const struct sp_field *sp_schema_path(const struct sp_schema *s, const char *path,
				      size_t *ret_off);

/*
 * The members of obj (a struct of schema s), in order, inside an open JSON object. 0, or the
 * first error of a CUSTOM writer (-ENOMEM); the writer's own errors come from jw_finish().
 */
int sp_schema_write(struct json_writer *w, const struct sp_schema *s, const void *obj);
/* Frees every string and array of obj (not obj itself). */
void sp_schema_free(const struct sp_schema *s, void *obj, struct sp_strpool *pool);
/* Makes every string of obj valid UTF-8 (see sp_run_fix_utf8). 0 or -ENOMEM. */
int sp_schema_fix_utf8(const struct sp_schema *s, void *obj, struct sp_strpool *pool);
/* true when a string of obj holds a control character (textsafe.h). */
bool sp_schema_has_controls(const struct sp_schema *s, const void *obj);
/* Escapes the control characters of every string of obj (textsafe.h). 0 or -ENOMEM. */
int sp_schema_escape_controls(const struct sp_schema *s, void *obj, struct sp_strpool *pool);

/* The reading context: where in the document, and where the error message goes. */
struct sp_reader {
	struct sp_strpool *pool; /* where the strings read go (interned), or NULL: malloc'd */
	char path[200];
	size_t plen;
	char *err;
	size_t errlen;
};

struct sp_delta_stats;
/*
 * *d (zeroed by the caller) = cur - prev for structs of schema s; prev NULL: a copy of cur.
 * Counters subtract (clamped at 0, counted in st->negative); SP_MAX, SP_SINCE and SP_STATE
 * values, settings and strings are cur's; SP_WHOLE_RUN fields are left zero. The elements
 * of an array (or map) with a key are matched by it: an element of cur with no counter or
 * state left is left out, one of prev that cur lacks counts in st->vanished. An array
 * without a key is cur's, copied. Strings are malloc'd. 0 or -ENOMEM (*d holds part of the
 * result: sp_schema_free it).
 */
int sp_schema_delta(const struct sp_schema *s, const void *prev, const void *cur, void *d,
		    struct sp_delta_stats *st);

/* Reads the members of JSON object o into obj. 0, -EINVAL (message in r) or -ENOMEM. */
int sp_schema_read(struct sp_reader *r, const struct sp_schema *s, const struct json_value *o,
		   void *obj);
/*
 * The invariants of a run's totals, as docs/json.md documents them: schedules total =
 * voluntary + preempted + idle = the callers' counts + lost_rows; profile total = idle +
 * target + other, target = the functions' samples + lost; locks total = the contentions'
 * count + failed + lost; a row's stacks count at most the row; a schedules row
 * with has_runq: blocked_ns + runq_ns = offcpu_ns, unfinished <= count; the budget's
 * blocked_ns = the sum of its classes; a timeline task's segments each start where the one
 * before it ends (or later, when events were lost). 0, or -EINVAL with the first
 * that fails, and where, in err ("schedules.callers[2]: its stacks count 5, more than ...").
 */
int sp_run_check(const struct sp_run *run, char *err, size_t errlen);
/* Path handling for the callers' own checks. */
size_t sp_reader_push_key(struct sp_reader *r, const char *key);
void sp_reader_pop(struct sp_reader *r, size_t old);
int sp_reader_fail(struct sp_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *sp_json_type_name(enum json_type t);

/* Typed access to a member at an offset. */
#define SP_AT(obj, off, type) ((type *)((char *)(obj) + (off)))
#define SP_CAT(obj, off, type) ((const type *)((const char *)(obj) + (off)))

#endif
