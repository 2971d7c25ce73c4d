// SPDX-License-Identifier: BSD-2-Clause
/*
 * One walker per use of the field descriptors (see schema.h): write, strict read, free and
 * UTF-8 fix-up; plus the descriptors shared by every view (comm maps, stacks) and the run's.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/model.h"
#include "model/schema.h"
#include "model/strpool.h"
#include "base/textsafe.h"
#include "base/util.h"

/* ---- the shared descriptors ---- */

#define COMM_COUNT SP_U64(struct sp_comm_stat, "count", count)
#define COMM_TIME(k) SP_U64(struct sp_comm_stat, k, time_ns)
#define COMM_MAX SP_U64_AS(struct sp_comm_stat, "max_ns", max_ns, SP_MAX)

static const struct sp_field comm_offcpu_max[] = { COMM_COUNT, COMM_TIME("offcpu_ns"), COMM_MAX };
static const struct sp_field comm_wait_max[] = { COMM_COUNT, COMM_TIME("wait_ns"), COMM_MAX };
static const struct sp_field comm_wait[] = { COMM_COUNT, COMM_TIME("wait_ns") };
static const struct sp_field comm_samples[] = { SP_U64(struct sp_comm_stat, "samples", count) };
const struct sp_schema sp_comm_offcpu_max = SP_SCHEMA_OF("comm_offcpu_max", comm_offcpu_max);
const struct sp_schema sp_comm_wait_max = SP_SCHEMA_OF("comm_wait_max", comm_wait_max);
const struct sp_schema sp_comm_wait = SP_SCHEMA_OF("comm_wait", comm_wait);
const struct sp_schema sp_comm_samples = SP_SCHEMA_OF("comm_samples", comm_samples);

#define STACK_HEAD                                                                               \
	SP_STR(struct sp_stack_row, "comm", comm),                                               \
	/* optional: files before pids were recorded read as 0, unknown */                      \
	{ .key = "pid", .type = SP_T_INT, .flags = SP_OPTIONAL | SP_CLAMP,                       \
	  .off = offsetof(struct sp_stack_row, pid), .min = 0, .max = INT32_MAX },               \
	SP_U64(struct sp_stack_row, "count", count)
#define STACK_FRAMES                                                                             \
	{ .key = "frames", .type = SP_T_STRS, .off = offsetof(struct sp_stack_row, frames),      \
	  .n_off = offsetof(struct sp_stack_row, nframes) },                                     \
	{ .key = "objects", .type = SP_T_STRS, .flags = SP_PARALLEL,                             \
	  .off = offsetof(struct sp_stack_row, objects),                                         \
	  .n_off = offsetof(struct sp_stack_row, nframes), .what = "frames" },                   \
	/* what each frame is beyond its name; absent in older runs */               \
	{ .key = "frame_info", .type = SP_T_ARRAY, .flags = SP_PARALLEL | SP_INLINE,             \
	  .off = offsetof(struct sp_stack_row, info),                                            \
	  .n_off = offsetof(struct sp_stack_row, nframes), .size = sizeof(struct sp_frame_info), \
	  .sub = &sp_frame_info_schema, .what = "frames" }

#define T struct sp_frame_info
static const struct sp_field frame_info_fields[] = {
	{ .key = "addr", .type = SP_T_HEX, .flags = SP_SPARSE, .off = offsetof(T, addr) },
	{ .key = "build_id", .type = SP_T_STR, .flags = SP_SPARSE, .off = offsetof(T, build_id) },
	{ .key = "system_name", .type = SP_T_STR, .flags = SP_SPARSE,
	  .off = offsetof(T, system_name) },
	{ .key = "file", .type = SP_T_STR, .flags = SP_SPARSE, .off = offsetof(T, file) },
	{ .key = "line", .type = SP_T_UINT, .flags = SP_SPARSE, .off = offsetof(T, line), .min = 0,
	  .max = UINT_MAX },
	{ .key = "inlined", .type = SP_T_BOOL, .flags = SP_SPARSE, .off = offsetof(T, inlined) },
};
#undef T
const struct sp_schema sp_frame_info_schema = SP_SCHEMA_OF("frame_info", frame_info_fields);

static const struct sp_field stack_offcpu[] = {
	STACK_HEAD, SP_U64(struct sp_stack_row, "offcpu_ns", time_ns), STACK_FRAMES
};
static const struct sp_field stack_wait[] = {
	STACK_HEAD, SP_U64(struct sp_stack_row, "wait_ns", time_ns), STACK_FRAMES
};
static const struct sp_field stack_plain[] = { STACK_HEAD, STACK_FRAMES };
/* Two stacks are one row when they symbolize alike, their frames' objects included. */
static uint64_t stack_hash(const void *e)
{
	return sp_stack_row_hash(e, true, 0);
}

static bool stack_alike(const void *a, const void *b)
{
	return sp_stack_rows_alike(a, b, true);
}

#define STACK_SCHEMA(n, arr) \
	{ .name = n, .fields = arr, .nfields = ARRAY_SIZE(arr), .hash = stack_hash, \
	  .alike = stack_alike }
const struct sp_schema sp_stack_offcpu = STACK_SCHEMA("stack_offcpu", stack_offcpu);
const struct sp_schema sp_stack_wait = STACK_SCHEMA("stack_wait", stack_wait);
const struct sp_schema sp_stack_plain = STACK_SCHEMA("stack_plain", stack_plain);

static const char *const mode_names[] = {
	[SP_TARGET_ALL] = "system",
	[SP_TARGET_PIDS] = "pids",
	[SP_TARGET_COMMAND] = "command",
	[SP_TARGET_CGROUP] = "cgroup",
	[SP_TARGET_TIDS] = "tids",
};

static bool is_command(const void *obj)
{
	return ((const struct sp_target_info *)obj)->mode == SP_TARGET_COMMAND;
}

static bool is_cgroup(const void *obj)
{
	return ((const struct sp_target_info *)obj)->mode == SP_TARGET_CGROUP;
}

static bool is_tids(const void *obj)
{
	return ((const struct sp_target_info *)obj)->mode == SP_TARGET_TIDS;
}

static bool is_pids(const void *obj)
{
	return ((const struct sp_target_info *)obj)->mode == SP_TARGET_PIDS;
}

#define RUSAGE(k, M)                                                                             \
	{ .key = k, .type = SP_T_U64, .flags = SP_GROUP,                                         \
	  .off = offsetof(struct sp_target_info, M),                                             \
	  .group_off = offsetof(struct sp_target_info, has_rusage) }

static const struct sp_field target_fields[] = {
	{ .key = "mode", .type = SP_T_ENUM, .off = offsetof(struct sp_target_info, mode),
	  .names = mode_names, .nnames = ARRAY_SIZE(mode_names) },
	/* -a -- COMMAND: written only when true, absent (false) in older files */
	{ .key = "system", .type = SP_T_BOOL, .flags = SP_GROUP | SP_OPTIONAL,
	  .off = offsetof(struct sp_target_info, system),
	  .group_off = offsetof(struct sp_target_info, system), .when = is_command },
	{ .key = "command", .type = SP_T_STR, .flags = SP_NULLABLE,
	  .off = offsetof(struct sp_target_info, command), .when = is_command },
	{ .key = "exit_status", .type = SP_T_INT, .off = offsetof(struct sp_target_info, exit_status),
	  .min = INT_MIN, .max = INT_MAX, .when = is_command },
	{ .key = "pids", .type = SP_T_INTS, .off = offsetof(struct sp_target_info, pids),
	  .n_off = offsetof(struct sp_target_info, npids), .min = 1, .max = INT_MAX,
	  .what = "a process id", .when = is_pids },
	{ .key = "tids", .type = SP_T_INTS, .off = offsetof(struct sp_target_info, pids),
	  .n_off = offsetof(struct sp_target_info, npids), .min = 1, .max = INT_MAX,
	  .what = "a thread id", .when = is_tids },
	{ .key = "cgroup", .type = SP_T_STR, .off = offsetof(struct sp_target_info, cgroup),
	  .when = is_cgroup },
	/* the job's CPU time: both or neither */
	RUSAGE("user_ns", user_ns),
	RUSAGE("sys_ns", sys_ns),
	/* written only when not 0 (absent in older files) */
	{ .key = "still_running", .type = SP_T_U64, .flags = SP_SPARSE | SP_WHOLE_RUN,
	  .off = offsetof(struct sp_target_info, still_running), .when = is_command },
};
static const struct sp_schema target_schema = SP_SCHEMA_OF("target", target_fields);

static const struct sp_field object_fields[] = {
	SP_STR(struct sp_object, "path", path),
	SP_STR(struct sp_object, "build_id", build_id),
};
static const struct sp_schema object_schema = SP_SCHEMA_OF("object", object_fields);

static const struct sp_field interval_fields[] = {
	SP_U64(struct sp_interval, "index", index),
	SP_U64(struct sp_interval, "start_ns", start_ns),
	SP_U64(struct sp_interval, "end_ns", end_ns),
};
static const struct sp_schema interval_schema = SP_SCHEMA_OF("interval", interval_fields);

static const struct sp_field run_fields[] = {
	{ .key = "schema", .type = SP_T_CONST, .off = offsetof(struct sp_run, schema),
	  .value = SP_SCHEMA },
	SP_STR_NULL(struct sp_run, "version", version),
	SP_STR_NULL(struct sp_run, "kernel", kernel),
	SP_STR_NULL(struct sp_run, "hostname", hostname),
	/* a machine has at least one; 0 is unknown (a run made from the warehouse's rows), which
	 * is not written, so a file that says 0 is refused */
	{ .key = "ncpus", .type = SP_T_INT, .flags = SP_SPARSE, .off = offsetof(struct sp_run, ncpus),
	  .min = 1, .max = 65536 },
	SP_U64(struct sp_run, "start_unix_ns", start_unix_ns),
	SP_U64(struct sp_run, "elapsed_ns", elapsed_ns),
	SP_STR_NULL(struct sp_run, "options", options),
	{ .key = "target", .type = SP_T_OBJECT, .off = offsetof(struct sp_run, target),
	  .sub = &target_schema },
	/* build-ids of user objects: only when known; appended as read, the first path wins */
	{ .key = "objects", .type = SP_T_ARRAY, .flags = SP_NONEMPTY | SP_OPTIONAL,
	  .off = offsetof(struct sp_run, objects.v), .n_off = offsetof(struct sp_run, objects.n),
	  .cap_off = offsetof(struct sp_run, objects.cap), .size = sizeof(struct sp_object),
	  .sub = &object_schema },
	/* trace -i: the interval a JSON line holds; absent in a whole run */
	{ .key = "interval", .type = SP_T_OBJECT, .flags = SP_GROUP | SP_OPTIONAL | SP_WHOLE_RUN,
	  .off = offsetof(struct sp_run, interval), .group_off = offsetof(struct sp_run, interval.present),
	  .sub = &interval_schema },
};
const struct sp_schema sp_run_fields = SP_SCHEMA_OF("run", run_fields);

const struct sp_field *sp_schema_field(const struct sp_schema *s, const char *key)
{
	for (size_t i = 0; i < s->nfields; i++)
		if (!strcmp(s->fields[i].key, key))
			return &s->fields[i];
	return NULL;
}

const struct sp_field *sp_schema_path(const struct sp_schema *s, const char *path,
				      size_t *ret_off)
{
	const struct sp_field *f = NULL;

	*ret_off = 0;
	for (;;) {
		size_t len = strcspn(path, ".");

		f = NULL;
		for (size_t i = 0; s && i < s->nfields && !f; i++)
			if (strlen(s->fields[i].key) == len && !strncmp(s->fields[i].key, path, len))
				f = &s->fields[i];
		if (!f || !path[len])
			return f;
		if (f->type != SP_T_OBJECT)
			return NULL;
		*ret_off += f->off;
		s = f->sub;
		path += len + 1;
	}
}

/* The number of elements of an array-like field of obj; 0 for the others. */
static size_t count_of(const struct sp_field *f, const void *obj)
{
	switch (f->type) {
	case SP_T_ARRAY:
	case SP_T_MAP:
	case SP_T_INTS:
	case SP_T_STRS:
		return *SP_CAT(obj, f->n_off, size_t);
	default:
		return 0;
	}
}

/* ---- write ---- */

static bool group_on(const struct sp_field *f, const void *obj)
{
	return !(f->flags & SP_GROUP) || *SP_CAT(obj, f->group_off, bool);
}

/* SP_SPARSE: is the member 0, NULL or false (then not written)? */
static bool is_zero(const struct sp_field *f, const void *p)
{
	switch (f->type) {
	case SP_T_STR:
		return !*(char *const *)p;
	case SP_T_HEX:
	case SP_T_U64:
		return !*(const uint64_t *)p;
	case SP_T_UINT:
		return !*(const unsigned int *)p;
	case SP_T_INT:
		return !*(const int *)p;
	case SP_T_BOOL:
		return !*(const bool *)p;
	default:
		return false;
	}
}

static int write_field(struct json_writer *w, const struct sp_field *f, const void *obj)
{
	const void *p = SP_CAT(obj, f->off, char);
	size_t n = count_of(f, obj);
	char hex[24];
	int iv, err;

	if ((f->flags & SP_SPARSE) && is_zero(f, p))
		return 0;
	switch (f->type) {
	case SP_T_STR:
		jw_kv_string(w, f->key, *(char *const *)p);
		return 0;
	case SP_T_CONST:
		jw_kv_string(w, f->key, f->value);
		return 0;
	case SP_T_U64:
		jw_kv_uint(w, f->key, *(const uint64_t *)p);
		return 0;
	case SP_T_INT:
		iv = *(const int *)p;
		if ((f->flags & SP_CLAMP) && iv < f->min)
			iv = (int)f->min;
		jw_kv_int(w, f->key, iv);
		return 0;
	case SP_T_UINT:
		jw_kv_uint(w, f->key, *(const unsigned int *)p);
		return 0;
	case SP_T_BOOL:
		jw_kv_bool(w, f->key, *(const bool *)p);
		return 0;
	case SP_T_ENUM:
		iv = *(const int *)p;
		jw_kv_string(w, f->key, iv >= 0 && (size_t)iv < f->nnames ? f->names[iv] : NULL);
		return 0;
	case SP_T_HEX:
		snprintf(hex, sizeof(hex), "0x%" PRIx64, *(const uint64_t *)p);
		jw_kv_string(w, f->key, hex);
		return 0;
	case SP_T_PTR:
		if (!*(void *const *)p)
			return 0;
		p = *(void *const *)p;
		/* fallthrough */
	case SP_T_OBJECT:
		jw_name(w, f->key);
		jw_start_object(w);
		err = sp_schema_write(w, f->sub, p);
		jw_end_object(w);
		return err;
	case SP_T_ARRAY:
	case SP_T_MAP:
		if (((f->flags & SP_NONEMPTY) && !n) ||
		    ((f->flags & SP_PARALLEL) && !*(void *const *)p))
			return 0;
		jw_name(w, f->key);
		f->type == SP_T_MAP ? jw_start_object(w) : jw_start_array(w);
		for (size_t i = 0; i < n; i++) {
			const char *e = *(const char *const *)p + i * f->size;

			if (f->type == SP_T_MAP)
				jw_name(w, *SP_CAT(e, f->key_off, char *));
			if (f->flags & SP_INLINE)
				jw_start_object_inline(w);
			else
				jw_start_object(w);
			err = sp_schema_write(w, f->sub, e);
			jw_end_object(w);
			if (err)
				return err;
		}
		f->type == SP_T_MAP ? jw_end_object(w) : jw_end_array(w);
		return 0;
	case SP_T_INTS:
	case SP_T_STRS:
		if ((f->flags & SP_PARALLEL) && !*(void *const *)p)
			return 0;
		jw_name(w, f->key);
		jw_start_array(w);
		for (size_t i = 0; i < n; i++) {
			if (f->type == SP_T_INTS)
				jw_int(w, (*(int *const *)p)[i]);
			else
				jw_string(w, (*(char **const *)p)[i]);
		}
		jw_end_array(w);
		return 0;
	case SP_T_CUSTOM:
		return f->write(w, f, obj);
	}
	return 0;
}

int sp_schema_write(struct json_writer *w, const struct sp_schema *s, const void *obj)
{
	int err = 0;

	for (size_t i = 0; !err && i < s->nfields; i++) {
		const struct sp_field *f = &s->fields[i];

		if ((f->when && !f->when(obj)) || !group_on(f, obj))
			continue;
		err = write_field(w, f, obj);
	}
	return err;
}

/* ---- free and fix ---- */

/*
 * Calls fn on every string member of obj (schema s), depth first; stops at fn's first
 * non-zero return. free_arrays: frees every array after its elements (the destructor). pool:
 * where obj's strings live (NULL: each is malloc'd), for fn.
 */
typedef int (*string_fn)(char **s, struct sp_strpool *pool);

static int walk_strings(const struct sp_schema *s, void *obj, string_fn fn,
			struct sp_strpool *pool, bool free_arrays)
{
	int err = 0;

	for (size_t i = 0; !err && i < s->nfields; i++) {
		const struct sp_field *f = &s->fields[i];
		void *p = SP_AT(obj, f->off, char);
		size_t n = count_of(f, obj);

		switch (f->type) {
		case SP_T_STR:
		case SP_T_CONST:
			err = fn((char **)p, pool);
			break;
		case SP_T_OBJECT:
			err = walk_strings(f->sub, p, fn, pool, free_arrays);
			break;
		case SP_T_PTR:
			if (*(void **)p)
				err = walk_strings(f->sub, *(void **)p, fn, pool, free_arrays);
			break;
		case SP_T_ARRAY:
		case SP_T_MAP:
			for (size_t j = 0; !err && *(char **)p && j < n; j++) {
				char *e = *(char **)p + j * f->size;

				if (f->type == SP_T_MAP)
					err = fn(SP_AT(e, f->key_off, char *), pool);
				if (!err)
					err = walk_strings(f->sub, e, fn, pool, free_arrays);
			}
			break;
		case SP_T_STRS:
			for (size_t j = 0; !err && *(char ***)p && j < n; j++)
				err = fn(&(*(char ***)p)[j], pool);
			break;
		default:
			break;
		}
		if (free_arrays && (f->type == SP_T_ARRAY || f->type == SP_T_MAP ||
				    f->type == SP_T_INTS || f->type == SP_T_STRS ||
				    f->type == SP_T_PTR)) {
			free(*(void **)p);
			*(void **)p = NULL;
		}
	}
	return err;
}

static int free_str(char **s, struct sp_strpool *pool)
{
	if (!pool) /* else the pool goes as a whole */
		free(*s);
	*s = NULL;
	return 0;
}

void sp_schema_free(const struct sp_schema *s, void *obj, struct sp_strpool *pool)
{
	walk_strings(s, obj, free_str, pool, true);
}

/* *s replaced by d (malloc'd), in the pool when there is one. 0 or -ENOMEM. */
static int replace_str(char **s, char *d, struct sp_strpool *pool)
{
	if (!d)
		return -ENOMEM;
	if (pool) {
		char *in = sp_strpool_intern(pool, d);

		free(d);
		if (!in)
			return -ENOMEM;
		*s = in;
		return 0;
	}
	free(*s);
	*s = d;
	return 0;
}

static int fix_str(char **s, struct sp_strpool *pool)
{
	for (const unsigned char *p = (const unsigned char *)*s; p && *p; p++) {
		if (*p < 0x80)
			continue;
		/* some non-ASCII: let the full check decide */
		return replace_str(s, utf8_fix(*s), pool);
	}
	return 0;
}

int sp_schema_fix_utf8(const struct sp_schema *s, void *obj, struct sp_strpool *pool)
{
	return walk_strings(s, obj, fix_str, pool, false);
}

static int has_controls(char **s, struct sp_strpool *pool)
{
	(void)pool;
	return text_has_controls(*s) ? 1 : 0;
}

bool sp_schema_has_controls(const struct sp_schema *s, const void *obj)
{
	return walk_strings(s, (void *)obj, has_controls, NULL, false) == 1;
}

static int escape_str(char **s, struct sp_strpool *pool)
{
	return text_has_controls(*s) ? replace_str(s, text_escape_controls(*s), pool) : 0;
}

int sp_schema_escape_controls(const struct sp_schema *s, void *obj, struct sp_strpool *pool)
{
	return walk_strings(s, obj, escape_str, pool, false);
}

/* ---- read ---- */

/*
 * The path is built on every step down (a saved run has millions of them) and read only on
 * an error: appended by hand, as snprintf would write it (cut at the buffer's end).
 */
static void append(struct sp_reader *r, const char *s, size_t n)
{
	size_t room = sizeof(r->path) - 1 - r->plen;

	if (n > room)
		n = room;
	memcpy(r->path + r->plen, s, n);
	r->plen += n;
	r->path[r->plen] = '\0';
}

size_t sp_reader_push_key(struct sp_reader *r, const char *key)
{
	size_t old = r->plen;

	if (old)
		append(r, ".", 1);
	append(r, key, strlen(key));
	return old;
}

static size_t push_index(struct sp_reader *r, size_t i)
{
	char buf[24], *p = buf + sizeof(buf);
	size_t old = r->plen;

	*--p = ']';
	do
		*--p = (char)('0' + i % 10);
	while ((i /= 10));
	*--p = '[';
	append(r, p, (size_t)(buf + sizeof(buf) - p));
	return old;
}

void sp_reader_pop(struct sp_reader *r, size_t old)
{
	r->plen = old;
	r->path[old] = '\0';
}

/* Records "PATH: message" (or the message alone at the top) and returns -EINVAL. */
int sp_reader_fail(struct sp_reader *r, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->err && r->errlen)
		snprintf(r->err, r->errlen, "%s%s%s", r->path, r->plen ? ": " : "", msg);
	return -EINVAL;
}

const char *sp_json_type_name(enum json_type t)
{
	static const char *const names[] = {
		[JSON_NULL] = "null", [JSON_BOOL] = "a boolean", [JSON_NUMBER] = "a number",
		[JSON_STRING] = "a string", [JSON_ARRAY] = "an array", [JSON_OBJECT] = "an object",
	};

	return names[t];
}

static int check_type(struct sp_reader *r, const struct json_value *v, enum json_type t)
{
	if (json_type(v) != t)
		return sp_reader_fail(r, "expected %s, not %s", sp_json_type_name(t),
				      sp_json_type_name(json_type(v)));
	return 0;
}

static int dup_str(struct sp_reader *r, const char *s, char **ret)
{
	*ret = r->pool ? sp_strpool_intern(r->pool, s) : strdup(s);
	return *ret ? 0 : -ENOMEM;
}

/* An array of strings into a new array of n entries (never NULL, even for n = 0). */
static int read_strings(struct sp_reader *r, const struct json_value *arr, char ***ret)
{
	size_t n = json_len(arr);
	char **v = calloc(n ? n : 1, sizeof(*v));
	int err = 0;

	if (!v)
		return -ENOMEM;
	*ret = v; /* the caller owns it, even half filled */
	for (size_t i = 0; !err && i < n; i++) {
		const struct json_value *s = json_at(arr, i);
		size_t m = push_index(r, i);

		err = check_type(r, s, JSON_STRING) ?: dup_str(r, json_str(s), &v[i]);
		sp_reader_pop(r, m);
	}
	return err;
}

static int read_ints(struct sp_reader *r, const struct sp_field *f, const struct json_value *arr,
		     void *obj)
{
	size_t *n = SP_AT(obj, f->n_off, size_t);
	int **v = SP_AT(obj, f->off, int *);
	int64_t x;
	int err = 0;

	*v = calloc(json_len(arr) + 1, sizeof(int));
	if (!*v)
		return -ENOMEM;
	for (size_t i = 0; !err && i < json_len(arr); i++) {
		if (!json_i64(json_at(arr, i), &x) || x < f->min || x > f->max) {
			size_t m = push_index(r, i);

			err = sp_reader_fail(r, "expected %s from %lld to %lld", f->what,
					     (long long)f->min, (long long)f->max);
			sp_reader_pop(r, m);
			break;
		}
		(*v)[(*n)++] = (int)x;
	}
	return err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * A key that repeats in object o is refused: json_get() would read the first and ignore the
 * other, so the file would say two things. Sorted, so n log n for a large comms map.
 */
static int check_unique_keys(struct sp_reader *r, const struct json_value *o)
{
	size_t n = json_len(o);
	const char **keys;
	int err = 0;

	if (n < 2 || json_type(o) != JSON_OBJECT)
		return 0;
	if (n <= 12) { /* a row or stack object: a few keys, compared pairwise in place */
		for (size_t i = 1; i < n; i++) {
			const char *k = json_key_at(o, i);

			for (size_t j = 0; j < i; j++)
				if (!strcmp(json_key_at(o, j), k))
					return sp_reader_fail(r, "duplicate key \"%s\"", k);
		}
		return 0;
	}
	keys = malloc(n * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		keys[i] = json_key_at(o, i);
	qsort(keys, n, sizeof(*keys), cmp_str);
	for (size_t i = 1; i < n && !err; i++)
		if (!strcmp(keys[i - 1], keys[i]))
			err = sp_reader_fail(r, "duplicate key \"%s\"", keys[i]);
	free(keys);
	return err;
}

/* The elements of an array (or the members of a map), each an object of schema f->sub. */
static int read_elements(struct sp_reader *r, const struct sp_field *f, const struct json_value *v,
			 void *obj)
{
	void **arr = SP_AT(obj, f->off, void *);
	size_t *n = SP_AT(obj, f->n_off, size_t), *cap = SP_AT(obj, f->cap_off, size_t);
	bool map = f->type == SP_T_MAP;
	int err = map ? check_unique_keys(r, v) : 0;

	for (size_t i = 0; !err && i < json_len(v); i++) {
		const struct json_value *e = map ? json_val_at(v, i) : json_at(v, i);
		size_t m = map ? sp_reader_push_key(r, json_key_at(v, i)) : push_index(r, i);
		char *elt;

		err = check_type(r, e, JSON_OBJECT) ?: grow(arr, cap, *n + 1, f->size);
		if (!err) {
			elt = (char *)*arr + (*n)++ * f->size;
			err = (map ? dup_str(r, json_key_at(v, i), SP_AT(elt, f->key_off, char *)) : 0) ?:
			      sp_schema_read(r, f->sub, e, elt);
		}
		sp_reader_pop(r, m);
	}
	return err;
}

/*
 * SP_PARALLEL array: exactly as many objects as the count filled before (the model reads
 * n entries of it), into a new array of that many.
 */
static int read_parallel(struct sp_reader *r, const struct sp_field *f, const struct json_value *v,
			 void *obj)
{
	size_t n = *SP_AT(obj, f->n_off, size_t);
	char **arr = SP_AT(obj, f->off, char *);
	int err = 0;

	if (json_len(v) != n)
		return sp_reader_fail(r, "has %zu entries for %zu %s", json_len(v), n, f->what);
	*arr = calloc(n ? n : 1, f->size);
	if (!*arr)
		return -ENOMEM;
	for (size_t i = 0; !err && i < n; i++) {
		const struct json_value *e = json_at(v, i);
		size_t m = push_index(r, i);

		err = check_type(r, e, JSON_OBJECT) ?: sp_schema_read(r, f->sub, e, *arr + i * f->size);
		sp_reader_pop(r, m);
	}
	return err;
}

/* "0x" and 1 to 16 lowercase hex digits, as SP_T_HEX writes them. */
static int read_hex(struct sp_reader *r, const struct json_value *v, uint64_t *ret)
{
	const char *s;
	size_t len;

	if (json_type(v) != JSON_STRING)
		return sp_reader_fail(r, "expected an address string \"0x...\", not %s",
				      sp_json_type_name(json_type(v)));
	s = json_str(v);
	len = strlen(s);
	if (len < 3 || len > 18 || strncmp(s, "0x", 2) ||
	    strspn(s + 2, "0123456789abcdef") != len - 2)
		return sp_reader_fail(r, "expected \"0x\" and 1 to 16 lowercase hex digits, not "
				      "\"%.40s\"", s);
	*ret = strtoull(s + 2, NULL, 16);
	return 0;
}

/* The JSON type a field's value must have before its own checks (JSON_NULL: any). */
static enum json_type value_type(const struct sp_field *f)
{
	switch (f->type) {
	case SP_T_BOOL:
		return JSON_BOOL;
	case SP_T_ENUM:
		return JSON_STRING;
	case SP_T_OBJECT:
	case SP_T_PTR:
	case SP_T_MAP:
		return JSON_OBJECT;
	case SP_T_ARRAY:
	case SP_T_INTS:
		return JSON_ARRAY;
	case SP_T_STRS:
		return f->flags & SP_PARALLEL ? JSON_NULL : JSON_ARRAY;
	default:
		return JSON_NULL;
	}
}

static int read_value(struct sp_reader *r, const struct sp_field *f, const struct json_value *v,
		      void *obj)
{
	void *p = SP_AT(obj, f->off, char);
	int64_t iv = 0;
	size_t n;

	switch (f->type) {
	case SP_T_STR:
		if ((f->flags & SP_NULLABLE) && json_type(v) == JSON_NULL) {
			*(char **)p = NULL;
			return 0;
		}
		if (json_type(v) != JSON_STRING)
			return sp_reader_fail(r, f->flags & SP_NULLABLE ? "expected a string or null"
									: "expected a string");
		return dup_str(r, json_str(v), p);
	case SP_T_CONST:
		return dup_str(r, f->value, p);
	case SP_T_U64:
		/* a count or a time: what pprof and the diff can hold */
		if (json_u64(v, p) && *(uint64_t *)p <= INT64_MAX)
			return 0;
		if (json_type(v) == JSON_NUMBER)
			return sp_reader_fail(r, "expected an integer from 0 to %lld",
					      (long long)INT64_MAX);
		return sp_reader_fail(r, "expected an integer, not %s",
				      sp_json_type_name(json_type(v)));
	case SP_T_INT:
	case SP_T_UINT:
		if (!json_i64(v, &iv) || iv < f->min || iv > f->max)
			return sp_reader_fail(r, "expected an integer from %lld to %lld",
					      (long long)f->min, (long long)f->max);
		if (f->type == SP_T_INT)
			*(int *)p = (int)iv;
		else
			*(unsigned int *)p = (unsigned int)iv;
		return 0;
	case SP_T_BOOL:
		json_bool(v, p);
		return 0;
	case SP_T_ENUM: {
		char what[160] = "expected ";
		size_t len = strlen(what);

		for (size_t i = 0; i < f->nnames; i++) {
			if (!strcmp(json_str(v), f->names[i])) {
				*(int *)p = (int)i;
				return 0;
			}
			len += snprintf(what + len, len < sizeof(what) ? sizeof(what) - len : 0,
					"%s\"%s\"", !i ? "" : i + 1 == f->nnames ? " or " : ", ",
					f->names[i]);
		}
		return sp_reader_fail(r, "%s", what);
	}
	case SP_T_HEX:
		return read_hex(r, v, p);
	case SP_T_OBJECT:
		return sp_schema_read(r, f->sub, v, p);
	case SP_T_PTR:
		*(void **)p = calloc(1, f->size);
		if (!*(void **)p)
			return -ENOMEM;
		return sp_schema_read(r, f->sub, v, *(void **)p);
	case SP_T_ARRAY:
		if (f->flags & SP_PARALLEL)
			return read_parallel(r, f, v, obj);
		return read_elements(r, f, v, obj);
	case SP_T_MAP:
		return read_elements(r, f, v, obj);
	case SP_T_INTS:
		return read_ints(r, f, v, obj);
	case SP_T_STRS:
		if (!(f->flags & SP_PARALLEL)) {
			*SP_AT(obj, f->n_off, size_t) = json_len(v);
			return read_strings(r, v, p);
		}
		/* the model frees n entries: the array has exactly that many */
		n = *SP_AT(obj, f->n_off, size_t);
		if (json_type(v) != JSON_ARRAY)
			return check_type(r, v, JSON_ARRAY);
		if (json_len(v) != n)
			return sp_reader_fail(r, "has %zu entries for %zu %s", json_len(v), n,
					      f->what);
		return read_strings(r, v, p);
	case SP_T_CUSTOM:
		return 0;
	}
	return 0;
}

/* SP_GROUP: is any key of f's group in o? */
static bool group_in(const struct sp_schema *s, const struct sp_field *f,
		     const struct json_value *o)
{
	size_t group = f->group_off;

	/* the group's fields follow one another; the next group may follow right after */
	for (; f < s->fields + s->nfields && (f->flags & SP_GROUP) && f->group_off == group; f++)
		if (json_get(o, f->key))
			return true;
	return false;
}

static int read_field(struct sp_reader *r, const struct sp_schema *s, const struct sp_field *f,
		      const struct json_value *o, void *obj)
{
	const struct json_value *v = json_get(o, f->key);
	enum json_type t = value_type(f);
	size_t m;
	int err;

	if (f->type == SP_T_CUSTOM || (f->when && !f->when(obj)))
		return 0;
	if (f->flags & SP_GROUP) {
		bool *on = SP_AT(obj, f->group_off, bool);

		if (!*on && group_in(s, f, o))
			*on = true;
		if (!*on)
			return 0;
	}
	if (!v && (f->flags & (SP_OPTIONAL | SP_PARALLEL | SP_SPARSE)))
		return 0;
	if (!v)
		return sp_reader_fail(r, "missing key \"%s\"", f->key);
	m = sp_reader_push_key(r, f->key);
	err = t != JSON_NULL ? check_type(r, v, t) : 0;
	if (!err)
		err = read_value(r, f, v, obj);
	sp_reader_pop(r, m);
	return err;
}

int sp_schema_read(struct sp_reader *r, const struct sp_schema *s, const struct json_value *o,
		   void *obj)
{
	int err = check_unique_keys(r, o);

	for (size_t i = 0; !err && i < s->nfields; i++)
		err = read_field(r, s, &s->fields[i], o, obj);
	return err;
}

/* ---- the invariants of a run's totals (docs/json.md) ---- */

/* The stacks' counts; *ret_over set when they do not fit in 64 bits. */
static uint64_t sum_stacks(const struct sp_stack_list *l, bool *ret_over)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < l->n; i++)
		if (__builtin_add_overflow(sum, l->v[i].count, &sum))
			*ret_over = true;
	return sum;
}

#define FAIL(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

/* One view's rows against its totals: each row's stacks within it, rows + lost = total. */
struct rows_check {
	const char *view, *rows;	 /* "schedules", "callers" */
	const char *value, *values;	 /* "count", "counts": what a row holds */
	const char *lost_name, *total_name;
	uint64_t lost, total;
	size_t n;
	/* row i's value (*over set on overflow) and its stacks */
	uint64_t (*value_of)(const void *view, size_t i, bool *over);
	const struct sp_stack_list *(*stacks_of)(const void *view, size_t i);
	const void *v;
};

static int check_rows(const struct rows_check *c, char *err, size_t errlen)
{
	uint64_t rows = 0;
	bool over = false;

	for (size_t i = 0; i < c->n; i++) {
		uint64_t st = sum_stacks(c->stacks_of(c->v, i), &over), val = c->value_of(c->v, i, &over);

		if (over || st > val)
			return FAIL("%s.%s[%zu]: its stacks count %" PRIu64 ", more than its %s %" PRIu64,
				    c->view, c->rows, i, st, c->value, val);
		over |= __builtin_add_overflow(rows, val, &rows);
	}
	if (over || __builtin_add_overflow(rows, c->lost, &rows) || rows != c->total)
		return FAIL("%s: the %s' %s + %s (%" PRIu64 ") are not the %s %" PRIu64, c->view,
			    c->rows, c->values, c->lost_name, over ? UINT64_MAX : rows, c->total_name,
			    c->total);
	return 0;
}

/* total = a + b + c, each part within it */
static bool parts_add_up(uint64_t total, uint64_t a, uint64_t b, uint64_t c)
{
	return a + b + c == total && a <= total && b <= total && c <= total;
}

static uint64_t sched_value(const void *v, size_t i, bool *over)
{
	(void)over;
	return ((const struct sp_sched_view *)v)->rows[i].count;
}

static const struct sp_stack_list *sched_stacks(const void *v, size_t i)
{
	return &((const struct sp_sched_view *)v)->rows[i].stacks;
}

static uint64_t profile_value(const void *v, size_t i, bool *over)
{
	(void)over;
	return ((const struct sp_profile_view *)v)->rows[i].samples;
}

static const struct sp_stack_list *profile_stacks(const void *v, size_t i)
{
	return &((const struct sp_profile_view *)v)->rows[i].stacks;
}

static uint64_t lock_value(const void *v, size_t i, bool *over)
{
	const struct sp_lock_row *r = &((const struct sp_lock_view *)v)->rows[i];
	uint64_t all;

	*over |= __builtin_add_overflow(r->count, r->failed, &all);
	return all;
}

static const struct sp_stack_list *lock_stacks(const void *v, size_t i)
{
	return &((const struct sp_lock_view *)v)->rows[i].stacks;
}

/* The budget's blocked time is the sum of its classes. */
static int check_budget(const struct sp_budget *b, char *err, size_t errlen)
{
	const struct sp_budget_blocked *c = &b->blocked;
	const uint64_t parts[] = { c->pipe, c->io, c->rwsem_read, c->rwsem_write, c->mutex,
				   c->semaphore, c->rtmutex, c->percpu_rwsem, c->child, c->sleep,
				   c->other };
	uint64_t sum = 0;
	bool over = false;

	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		over |= __builtin_add_overflow(sum, parts[i], &sum);
	if (over || sum != b->blocked_ns)
		return FAIL("schedules.budget: blocked_ns %" PRIu64 " is not the sum of blocked (%"
			    PRIu64 ")", b->blocked_ns, over ? UINT64_MAX : sum);
	return 0;
}

static int check_sched(const struct sp_sched_view *v, char *err, size_t errlen)
{
	const struct rows_check c = { "schedules", "callers", "count", "counts", "lost_rows",
				      "total", v->lost_rows, v->total, v->nrows, sched_value,
				      sched_stacks, v };

	if (!parts_add_up(v->total, v->voluntary, v->preempted, v->idle))
		return FAIL("schedules: total %" PRIu64 " is not voluntary %" PRIu64 " + preempted %"
			    PRIu64 " + idle %" PRIu64, v->total, v->voluntary, v->preempted, v->idle);
	for (size_t i = 0; i < v->nrows; i++) {
		const struct sp_sched_row *r = &v->rows[i];
		uint64_t sum;

		if (!r->has_runq)
			continue;
		if (__builtin_add_overflow(r->blocked_ns, r->runq_ns, &sum) || sum != r->offcpu_ns)
			return FAIL("schedules.callers[%zu]: blocked_ns %" PRIu64 " + runq_ns %" PRIu64
				    " is not offcpu_ns %" PRIu64, i, r->blocked_ns, r->runq_ns,
				    r->offcpu_ns);
		if (r->unfinished > r->count)
			return FAIL("schedules.callers[%zu]: unfinished %" PRIu64 " is more than its "
				    "count %" PRIu64, i, r->unfinished, r->count);
	}
	if (v->budget.present && check_budget(&v->budget, err, errlen))
		return -EINVAL;
	return check_rows(&c, err, errlen);
}

/*
 * The segments of a task tile its life: by task, then time, each starting where the one
 * before it (of the same task) ended. With lost events a gap is allowed (the lost events'
 * time is nobody's), an overlap never.
 */
static int check_timeline(const struct sp_timeline *tl, char *err, size_t errlen)
{
	for (size_t i = 1; i < tl->nsegs; i++) {
		const struct sp_tl_seg *p = &tl->segs[i - 1], *s = &tl->segs[i];
		uint64_t end;

		if (s->tid != p->tid)
			continue;
		if (__builtin_add_overflow(p->start_ns, p->ns, &end) || end > s->start_ns ||
		    (end < s->start_ns && !tl->lost))
			return FAIL("timeline.segments[%zu]: starts at %" PRIu64 ", not where the task's "
				    "segment before it ends (%" PRIu64 ")", i, s->start_ns, end);
	}
	return 0;
}

static int check_profile(const struct sp_profile_view *v, char *err, size_t errlen)
{
	const struct rows_check c = { "profile", "functions", "samples", "samples", "lost",
				      "target", v->lost, v->target, v->nrows, profile_value,
				      profile_stacks, v };

	if (!parts_add_up(v->total, v->idle, v->target, v->other))
		return FAIL("profile: total %" PRIu64 " is not idle %" PRIu64 " + target %" PRIu64
			    " + other %" PRIu64, v->total, v->idle, v->target, v->other);
	return check_rows(&c, err, errlen);
}

static int check_locks(const struct sp_lock_view *v, char *err, size_t errlen)
{
	const struct rows_check c = { "locks", "contentions", "count + failed",
				      "count + failed", "lost", "total", v->lost, v->total, v->nrows,
				      lock_value, lock_stacks, v };

	return check_rows(&c, err, errlen);
}

int sp_run_check(const struct sp_run *run, char *err, size_t errlen)
{
	if (run->sched.present && check_sched(&run->sched, err, errlen))
		return -EINVAL;
	if (run->profile.present && check_profile(&run->profile, err, errlen))
		return -EINVAL;
	if (run->locks.present && run->locks.available && check_locks(&run->locks, err, errlen))
		return -EINVAL;
	if (run->timeline.present && check_timeline(&run->timeline, err, errlen))
		return -EINVAL;
	return 0;
}
