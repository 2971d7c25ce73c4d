// SPDX-License-Identifier: BSD-2-Clause
/*
 * The saved-run reader (see model_json.h): walks the JSON tree of json_reader.h and rebuilds
 * the run model view by view. Every failure names the key path where it happened, so a user
 * who edited or truncated a file by hand can find the spot.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "json_reader.h"
#include "model_json.h"
#include "util.h"

/* The reading context: where we are in the document, and where errors go. */
struct rd {
	char path[200];
	size_t plen;
	char *err;
	size_t errlen;
};

/* Appends a path segment; returns the previous length for pop(). Long paths are cut. */
static size_t push(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t push(struct rd *r, const char *fmt, ...)
{
	size_t old = r->plen;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(r->path + r->plen, sizeof(r->path) - r->plen, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	r->plen += (size_t)n;
	if (r->plen >= sizeof(r->path))
		r->plen = sizeof(r->path) - 1;
	return old;
}

static size_t push_key(struct rd *r, const char *key)
{
	return push(r, r->plen ? ".%s" : "%s", key);
}

static size_t push_index(struct rd *r, size_t i)
{
	return push(r, "[%zu]", i);
}

static void pop(struct rd *r, size_t old)
{
	r->plen = old;
	r->path[old] = '\0';
}

/* Records "PATH: message" (or the message alone at the top) and returns -EINVAL. */
static int fail(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct rd *r, const char *fmt, ...)
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

static int fail_key(struct rd *r, const char *key, const char *what)
{
	size_t m = push_key(r, key);
	int err = fail(r, "%s", what);

	pop(r, m);
	return err;
}

static const char *type_name(enum json_type t)
{
	static const char *const names[] = {
		[JSON_NULL] = "null", [JSON_BOOL] = "a boolean", [JSON_NUMBER] = "a number",
		[JSON_STRING] = "a string", [JSON_ARRAY] = "an array", [JSON_OBJECT] = "an object",
	};

	return names[t];
}

/* The member key of obj, which must be there (and, unless t is JSON_NULL, of type t). */
static int member(struct rd *r, const struct json_value *obj, const char *key, enum json_type t,
		  const struct json_value **ret)
{
	const struct json_value *v = json_get(obj, key);
	char what[64];

	if (!v) {
		snprintf(what, sizeof(what), "missing key \"%s\"", key);
		return fail(r, "%s", what);
	}
	if (t != JSON_NULL && json_type(v) != t) {
		snprintf(what, sizeof(what), "expected %s, not %s", type_name(t),
			 type_name(json_type(v)));
		return fail_key(r, key, what);
	}
	*ret = v;
	return 0;
}

static int check_type(struct rd *r, const struct json_value *v, enum json_type t)
{
	if (json_type(v) != t)
		return fail(r, "expected %s, not %s", type_name(t), type_name(json_type(v)));
	return 0;
}

/* A count or a time: an integer from 0 to INT64_MAX (what pprof and the diff can hold). */
static int value_u64(struct rd *r, const struct json_value *v, uint64_t *ret)
{
	if (json_u64(v, ret) && *ret <= INT64_MAX)
		return 0;
	if (json_type(v) == JSON_NUMBER)
		return fail(r, "expected an integer from 0 to %lld", (long long)INT64_MAX);
	return fail(r, "expected an integer, not %s", type_name(json_type(v)));
}

static int get_u64(struct rd *r, const struct json_value *obj, const char *key, uint64_t *ret)
{
	const struct json_value *v = NULL;
	size_t m;
	int err = member(r, obj, key, JSON_NULL, &v);

	if (err)
		return err;
	m = push_key(r, key);
	err = value_u64(r, v, ret);
	pop(r, m);
	return err;
}

static int get_int(struct rd *r, const struct json_value *obj, const char *key, int64_t min,
		   int64_t max, int64_t *ret)
{
	const struct json_value *v = NULL;
	size_t m;
	int err = member(r, obj, key, JSON_NULL, &v);

	if (err)
		return err;
	if (!json_i64(v, ret) || *ret < min || *ret > max) {
		m = push_key(r, key);
		err = fail(r, "expected an integer from %lld to %lld", (long long)min,
			   (long long)max);
		pop(r, m);
	}
	return err;
}

static int get_bool(struct rd *r, const struct json_value *obj, const char *key, bool *ret)
{
	const struct json_value *v = NULL;
	int err = member(r, obj, key, JSON_BOOL, &v);

	if (!err)
		json_bool(v, ret);
	return err;
}

static int dup_str(const char *s, char **ret)
{
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

/* A string member; with nullable, null reads as NULL. */
static int get_str(struct rd *r, const struct json_value *obj, const char *key, bool nullable,
		   char **ret)
{
	const struct json_value *v = NULL;
	int err = member(r, obj, key, JSON_NULL, &v);

	if (err)
		return err;
	if (nullable && json_type(v) == JSON_NULL) {
		*ret = NULL;
		return 0;
	}
	if (json_type(v) != JSON_STRING)
		return fail_key(r, key,
				nullable ? "expected a string or null" : "expected a string");
	return dup_str(json_str(v), ret);
}

/*
 * key: {"cc1": {count_key: N[, time_key: N][, "max_ns": N]}, ...}: per comm (or per caller,
 * per owner) counts, into a list whose entries' .comm hold the names.
 */
static int read_map(struct rd *r, const struct json_value *obj, const char *key,
		    const char *count_key, const char *time_key, bool has_max,
		    struct sp_comm_list *l)
{
	const struct json_value *comms;
	int err = member(r, obj, key, JSON_OBJECT, &comms);
	size_t m = push_key(r, key);

	for (size_t i = 0; !err && i < json_len(comms); i++) {
		const struct json_value *c = json_val_at(comms, i);
		struct sp_comm_stat *s;
		size_t m2 = push_key(r, json_key_at(comms, i));

		err = check_type(r, c, JSON_OBJECT);
		if (!err)
			err = grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v));
		if (!err) {
			s = &l->v[l->n++];
			err = dup_str(json_key_at(comms, i), &s->comm) ?:
			      get_u64(r, c, count_key, &s->count) ?:
			      (time_key ? get_u64(r, c, time_key, &s->time_ns) : 0) ?:
			      (has_max ? get_u64(r, c, "max_ns", &s->max_ns) : 0);
		}
		pop(r, m2);
	}
	pop(r, m);
	return err;
}

/*
 * An array of strings into a new array of n entries (never NULL, even for n = 0). *ret and
 * *ret_n are set as soon as it is allocated: the caller owns it, even half filled.
 */
static int read_comms(struct rd *r, const struct json_value *obj, const char *count_key,
		      const char *time_key, bool has_max, struct sp_comm_list *l)
{
	return read_map(r, obj, "comms", count_key, time_key, has_max, l);
}

static int read_strings(struct rd *r, const struct json_value *arr, char ***ret, size_t *ret_n)
{
	size_t n = json_len(arr);
	char **v = calloc(n ? n : 1, sizeof(*v));
	int err = 0;

	if (!v)
		return -ENOMEM;
	*ret = v;
	*ret_n = n;
	for (size_t i = 0; !err && i < n; i++) {
		const struct json_value *s = json_at(arr, i);

		if (json_type(s) != JSON_STRING) {
			size_t m = push_index(r, i);

			err = fail(r, "expected a string, not %s", type_name(json_type(s)));
			pop(r, m);
		} else {
			err = dup_str(json_str(s), &v[i]);
		}
	}
	return err;
}

static int read_stack(struct rd *r, const struct json_value *o, const char *time_key,
		      struct sp_stack_row *s)
{
	const struct json_value *frames, *objects = json_get(o, "objects");
	int64_t pid = 0;
	size_t m;
	int err;

	err = check_type(r, o, JSON_OBJECT) ?:
	      get_str(r, o, "comm", false, &s->comm) ?:
	      /* optional (files before pids were recorded): absent = 0, unknown */
	      (json_get(o, "pid") ? get_int(r, o, "pid", 0, INT32_MAX, &pid) : 0) ?:
	      get_u64(r, o, "count", &s->count) ?:
	      (time_key ? get_u64(r, o, time_key, &s->time_ns) : 0) ?:
	      member(r, o, "frames", JSON_ARRAY, &frames);
	if (err)
		return err;
	s->pid = (int)pid;
	m = push_key(r, "frames");
	err = read_strings(r, frames, &s->frames, &s->nframes);
	pop(r, m);
	if (err || !objects)
		return err;
	/* the model frees nframes objects: the array has exactly that many */
	m = push_key(r, "objects");
	if (json_type(objects) != JSON_ARRAY)
		err = fail(r, "expected an array, not %s", type_name(json_type(objects)));
	else if (json_len(objects) != s->nframes)
		err = fail(r, "has %zu entries for %zu frames", json_len(objects), s->nframes);
	else
		err = read_strings(r, objects, &s->objects, &(size_t){ 0 });
	pop(r, m);
	return err;
}

static int read_stacks(struct rd *r, const struct json_value *obj, const char *time_key,
		       struct sp_stack_list *l)
{
	const struct json_value *stacks;
	int err = member(r, obj, "stacks", JSON_ARRAY, &stacks);
	size_t m = push_key(r, "stacks");

	for (size_t i = 0; !err && i < json_len(stacks); i++) {
		struct sp_stack_row *s = sp_stack_list_add(l);
		size_t m2 = push_index(r, i);

		err = s ? read_stack(r, json_at(stacks, i), time_key, s) : -ENOMEM;
		pop(r, m2);
	}
	pop(r, m);
	return err;
}

/*
 * Calls fn(r, element, arg) for every element of the array member key of obj, with the path
 * set to key[i]; the array is required unless optional.
 */
static int each(struct rd *r, const struct json_value *obj, const char *key, bool optional,
		int (*fn)(struct rd *, const struct json_value *, void *), void *arg)
{
	const struct json_value *arr;
	size_t m;
	int err;

	if (optional && !json_get(obj, key))
		return 0;
	err = member(r, obj, key, JSON_ARRAY, &arr);
	m = push_key(r, key);
	for (size_t i = 0; !err && i < json_len(arr); i++) {
		size_t m2 = push_index(r, i);

		err = check_type(r, json_at(arr, i), JSON_OBJECT) ?: fn(r, json_at(arr, i), arg);
		pop(r, m2);
	}
	pop(r, m);
	return err;
}

/* ---- schedules ---- */

static int read_caller(struct rd *r, const struct json_value *o, void *arg)
{
	struct sp_sched_row *row = sp_sched_add_row(arg);

	if (!row)
		return -ENOMEM;
	return get_str(r, o, "caller", false, &row->caller) ?:
	       get_str(r, o, "wait", true, &row->wait) ?:
	       get_u64(r, o, "count", &row->count) ?:
	       get_u64(r, o, "offcpu_ns", &row->offcpu_ns) ?:
	       get_u64(r, o, "max_ns", &row->max_ns) ?:
	       read_comms(r, o, "count", "offcpu_ns", true, &row->comms) ?:
	       read_stacks(r, o, "offcpu_ns", &row->stacks);
}

static int read_sched(struct rd *r, const struct json_value *o, struct sp_sched_view *v)
{
	v->present = true;
	return get_u64(r, o, "total", &v->total) ?:
	       get_u64(r, o, "voluntary", &v->voluntary) ?:
	       get_u64(r, o, "preempted", &v->preempted) ?:
	       get_u64(r, o, "idle", &v->idle) ?:
	       get_u64(r, o, "missing_stacks", &v->missing_stacks) ?:
	       get_u64(r, o, "lost_rows", &v->lost_rows) ?:
	       each(r, o, "callers", false, read_caller, v);
}

/* ---- profile ---- */

static int read_function(struct rd *r, const struct json_value *o, void *arg)
{
	struct sp_profile_row *row = sp_profile_add_row(arg);

	if (!row)
		return -ENOMEM;
	return get_str(r, o, "function", false, &row->function) ?:
	       get_str(r, o, "object", false, &row->object) ?:
	       get_u64(r, o, "samples", &row->samples) ?:
	       read_comms(r, o, "samples", NULL, false, &row->comms) ?:
	       read_stacks(r, o, NULL, &row->stacks);
}

static int read_profile(struct rd *r, const struct json_value *o, struct sp_profile_view *v)
{
	int64_t hz = 0, cpus = 0;
	int err;

	v->present = true;
	err = get_int(r, o, "hz", 1, UINT_MAX, &hz) ?:
	      get_int(r, o, "cpus", INT_MIN, INT_MAX, &cpus) ?:
	      get_bool(r, o, "callchains", &v->callchains) ?:
	      get_u64(r, o, "total", &v->total) ?:
	      get_u64(r, o, "idle", &v->idle) ?:
	      get_u64(r, o, "target", &v->target) ?:
	      get_u64(r, o, "other", &v->other) ?:
	      get_u64(r, o, "unsymbolized", &v->unsymbolized) ?:
	      get_u64(r, o, "lost", &v->lost) ?:
	      get_u64(r, o, "missing_stacks", &v->missing_stacks) ?:
	      get_u64(r, o, "user_truncated", &v->user_truncated) ?:
	      each(r, o, "functions", false, read_function, v);
	v->hz = (unsigned int)hz;
	v->cpus = (int)cpus;
	return err;
}

/* ---- locks ---- */

static int read_contention(struct rd *r, const struct json_value *o, void *arg)
{
	struct sp_lock_row *row = sp_lock_add_row(arg);

	if (!row)
		return -ENOMEM;
	return get_str(r, o, "caller", false, &row->caller) ?:
	       get_str(r, o, "kind", false, &row->kind) ?:
	       get_str(r, o, "lock", false, &row->lock) ?:
	       get_str(r, o, "lock_source", false, &row->source) ?:
	       get_u64(r, o, "count", &row->count) ?:
	       get_u64(r, o, "wait_ns", &row->wait_ns) ?:
	       get_u64(r, o, "max_ns", &row->max_ns) ?:
	       get_u64(r, o, "failed", &row->failed) ?:
	       read_comms(r, o, "count", "wait_ns", true, &row->comms) ?:
	       read_map(r, o, "owners", "count", "wait_ns", false, &row->owners) ?:
	       read_stacks(r, o, "wait_ns", &row->stacks);
}

static int read_sleeper(struct rd *r, const struct json_value *o, void *arg)
{
	struct sp_sleeper_row *row = sp_sleeper_add_row(arg);

	if (!row)
		return -ENOMEM;
	return get_str(r, o, "caller", false, &row->caller) ?:
	       get_str(r, o, "kind", false, &row->kind) ?:
	       get_str(r, o, "lock", false, &row->lock) ?:
	       get_u64(r, o, "tasks", &row->tasks) ?:
	       get_u64(r, o, "count", &row->count) ?:
	       get_u64(r, o, "offcpu_ns", &row->offcpu_ns) ?:
	       get_u64(r, o, "max_ns", &row->max_ns) ?:
	       read_comms(r, o, "count", "offcpu_ns", true, &row->comms);
}

/* Sleepers by (comm, kind, lock), with their callers. */
static int read_group(struct rd *r, const struct json_value *o, void *arg)
{
	struct sp_sleeper_group *g = sp_sleeper_add_group(arg);

	if (!g)
		return -ENOMEM;
	return get_str(r, o, "comm", false, &g->comm) ?:
	       get_str(r, o, "kind", false, &g->kind) ?:
	       get_str(r, o, "lock", false, &g->lock) ?:
	       get_u64(r, o, "tasks", &g->tasks) ?:
	       get_u64(r, o, "count", &g->count) ?:
	       get_u64(r, o, "offcpu_ns", &g->offcpu_ns) ?:
	       get_u64(r, o, "max_ns", &g->max_ns) ?:
	       read_map(r, o, "callers", "count", "offcpu_ns", true, &g->callers);
}

static int read_locks(struct rd *r, const struct json_value *o, struct sp_lock_view *v)
{
	int err;

	v->present = true;
	err = get_bool(r, o, "available", &v->available);
	if (!err && !v->available) /* why not: only then */
		err = get_str(r, o, "unavailable", true, &v->unavailable);
	return err ?:
	       get_u64(r, o, "total", &v->total) ?:
	       get_u64(r, o, "failed", &v->failed) ?:
	       get_u64(r, o, "lost", &v->lost) ?:
	       get_u64(r, o, "missing_stacks", &v->missing_stacks) ?:
	       get_u64(r, o, "missed", &v->missed) ?:
	       get_u64(r, o, "unpaired", &v->unpaired) ?:
	       each(r, o, "contentions", false, read_contention, v) ?:
	       each(r, o, "sleepers", false, read_sleeper, v) ?:
	       each(r, o, "sleeper_groups", false, read_group, v);
}

/* ---- run ---- */

static int read_target(struct rd *r, const struct json_value *run, struct sp_target_info *t)
{
	static const char *const modes[] = {
		[SP_TARGET_ALL] = "system",
		[SP_TARGET_PIDS] = "pids",
		[SP_TARGET_COMMAND] = "command",
	};
	const struct json_value *o, *mode, *pids;
	bool user = false, sys = false;
	int64_t v = 0;
	size_t i, m;
	int err;

	err = member(r, run, "target", JSON_OBJECT, &o);
	if (err)
		return err;
	m = push_key(r, "target");
	err = member(r, o, "mode", JSON_STRING, &mode);
	for (i = 0; !err && i < ARRAY_SIZE(modes); i++)
		if (!strcmp(json_str(mode), modes[i]))
			break;
	if (!err && i == ARRAY_SIZE(modes))
		err = fail_key(r, "mode", "expected \"system\", \"pids\" or \"command\"");
	if (err)
		goto out;
	t->mode = (enum sp_target_mode)i;
	if (t->mode == SP_TARGET_COMMAND) {
		err = get_str(r, o, "command", true, &t->command) ?:
		      get_int(r, o, "exit_status", INT_MIN, INT_MAX, &v);
		t->exit_status = (int)v;
	} else if (t->mode == SP_TARGET_PIDS) {
		err = member(r, o, "pids", JSON_ARRAY, &pids);
		if (!err && !(t->pids = calloc(json_len(pids) + 1, sizeof(int))))
			err = -ENOMEM;
		for (i = 0; !err && i < json_len(pids); i++) {
			if (!json_i64(json_at(pids, i), &v) || v < 1 || v > INT_MAX) {
				size_t m2 = push_key(r, "pids");

				push_index(r, i);
				err = fail(r, "expected a process id from 1 to %d", INT_MAX);
				pop(r, m2);
				break;
			}
			t->pids[t->npids++] = (int)v;
		}
	}
	if (err)
		goto out;
	/* the job's CPU time: both or neither */
	user = json_get(o, "user_ns") != NULL;
	sys = json_get(o, "sys_ns") != NULL;
	if (user || sys) {
		t->has_rusage = true;
		err = get_u64(r, o, "user_ns", &t->user_ns) ?: get_u64(r, o, "sys_ns", &t->sys_ns);
	}
out:
	pop(r, m);
	return err;
}

static int read_object(struct rd *r, const struct json_value *o, void *arg)
{
	struct sp_object_list *l = arg;
	struct sp_object *obj;

	/* appended as they come (no lookup): the first of a repeated path wins */
	if (grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return -ENOMEM;
	obj = &l->v[l->n++];
	return get_str(r, o, "path", false, &obj->path) ?:
	       get_str(r, o, "build_id", false, &obj->build_id);
}

/* An optional view section: an object when present. */
static int view(struct rd *r, const struct json_value *doc, const char *key,
		const struct json_value **ret)
{
	*ret = json_get(doc, key);
	if (*ret && json_type(*ret) != JSON_OBJECT)
		return fail_key(r, key, "expected an object");
	return 0;
}

static int read_run(struct rd *r, const struct json_value *doc, struct sp_run *run)
{
	const struct json_value *schema, *sched, *profile, *locks;
	int64_t ncpus = 0;
	size_t m;
	int err;

	if (json_type(doc) != JSON_OBJECT)
		return fail(r, "not a schedprof run: the document is %s, not an object",
			    type_name(json_type(doc)));
	if (!json_get(doc, "schema"))
		return fail(r, "not a schedprof run: no \"schema\" key");
	err = member(r, doc, "schema", JSON_STRING, &schema);
	if (err)
		return err;
	if (strcmp(json_str(schema), SP_SCHEMA)) {
		m = push_key(r, "schema");
		err = fail(r, "\"%.40s\" is not supported (this schedprof reads \"%s\")",
			   json_str(schema), SP_SCHEMA);
		pop(r, m);
		return err;
	}
	err = dup_str(SP_SCHEMA, &run->schema) ?:
	      get_str(r, doc, "version", true, &run->version) ?:
	      get_str(r, doc, "kernel", true, &run->kernel) ?:
	      get_str(r, doc, "hostname", true, &run->hostname) ?:
	      get_int(r, doc, "ncpus", INT_MIN, INT_MAX, &ncpus) ?:
	      get_u64(r, doc, "start_unix_ns", &run->start_unix_ns) ?:
	      get_u64(r, doc, "elapsed_ns", &run->elapsed_ns) ?:
	      get_str(r, doc, "options", true, &run->options) ?:
	      read_target(r, doc, &run->target) ?:
	      each(r, doc, "objects", true, read_object, &run->objects) ?:
	      view(r, doc, "schedules", &sched) ?:
	      view(r, doc, "profile", &profile) ?:
	      view(r, doc, "locks", &locks);
	run->ncpus = (int)ncpus;
	if (err)
		return err;
	if (sched) {
		m = push_key(r, "schedules");
		err = read_sched(r, sched, &run->sched);
		pop(r, m);
	}
	if (!err && profile) {
		m = push_key(r, "profile");
		err = read_profile(r, profile, &run->profile);
		pop(r, m);
	}
	if (!err && locks) {
		m = push_key(r, "locks");
		err = read_locks(r, locks, &run->locks);
		pop(r, m);
	}
	return err;
}

int sp_run_from_json(const char *buf, size_t len, struct sp_run *ret_run, char *errbuf,
		     size_t errlen)
{
	struct rd r = { .err = errbuf, .errlen = errlen };
	struct json_value *doc;
	int err;

	sp_run_init(ret_run);
	if (errbuf && errlen)
		errbuf[0] = '\0';
	doc = json_parse(buf, len, errbuf, errlen);
	if (!doc)
		return errno == ENOMEM ? -ENOMEM : -EINVAL;
	err = read_run(&r, doc, ret_run);
	json_free(doc);
	if (err == -ENOMEM && errbuf && errlen)
		snprintf(errbuf, errlen, "out of memory");
	return err;
}

/* Reads all of fd (a file or a pipe) into a malloc'd buffer. */
static int read_all(int fd, char **ret_buf, size_t *ret_len)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;

	for (;;) {
		ssize_t n;

		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 1 << 16;
			char *p;

			if (cap >= SP_RUN_JSON_MAX_SIZE + 1) {
				free(buf);
				return -EFBIG;
			}
			if (ncap > SP_RUN_JSON_MAX_SIZE + 1)
				ncap = SP_RUN_JSON_MAX_SIZE + 1;
			p = realloc(buf, ncap);
			if (!p) {
				free(buf);
				return -ENOMEM;
			}
			buf = p;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			free(buf);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > SP_RUN_JSON_MAX_SIZE) {
		free(buf);
		return -EFBIG;
	}
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

int sp_run_load_json(const char *path, struct sp_run *ret_run, char *errbuf, size_t errlen)
{
	bool is_stdin = !strcmp(path, "-");
	char *buf = NULL;
	size_t len = 0;
	struct stat st;
	int fd, err;

	sp_run_init(ret_run);
	fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		err = -EISDIR;
	else
		err = read_all(fd, &buf, &len);
	if (!is_stdin)
		close(fd);
out:
	if (err) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s",
				 err == -EFBIG ? "file too large for a saved run" : strerror(-err));
		return err;
	}
	if (len == 0) {
		free(buf);
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "empty file, not a saved run");
		return -EINVAL;
	}
	err = sp_run_from_json(buf, len, ret_run, errbuf, errlen);
	free(buf);
	return err;
}
