// SPDX-License-Identifier: BSD-2-Clause
/*
 * The saved-run document ("schema": "schedprof/1"), documented in README.md. It holds
 * everything `schedprof report` needs to render any format again: counts, times, symbolized
 * stacks, target, kernel release, CPU count and options. Row and stack limits (-n) do not
 * apply: a saved run is complete.
 */
#include <errno.h>
#include <stdlib.h>
#include "json_writer.h"
#include "render.h"

static const char *const mode_names[] = {
	[SP_TARGET_ALL] = "system",
	[SP_TARGET_PIDS] = "pids",
	[SP_TARGET_COMMAND] = "command",
};

static void write_target(struct json_writer *w, const struct sp_target_info *t)
{
	jw_name(w, "target");
	jw_start_object(w);
	jw_kv_string(w, "mode", mode_names[t->mode]);
	if (t->mode == SP_TARGET_COMMAND) {
		jw_kv_string(w, "command", t->command);
		jw_kv_int(w, "exit_status", t->exit_status);
	}
	if (t->mode == SP_TARGET_PIDS) {
		jw_name(w, "pids");
		jw_start_array(w);
		for (size_t i = 0; i < t->npids; i++)
			jw_int(w, t->pids[i]);
		jw_end_array(w);
	}
	if (t->has_rusage) {
		jw_kv_uint(w, "user_ns", t->user_ns);
		jw_kv_uint(w, "sys_ns", t->sys_ns);
	}
	jw_end_object(w);
}

static void write_objects(struct json_writer *w, const struct sp_object_list *l)
{
	jw_name(w, "objects");
	jw_start_array(w);
	for (size_t i = 0; i < l->n; i++) {
		jw_start_object(w);
		jw_kv_string(w, "path", l->v[i].path);
		jw_kv_string(w, "build_id", l->v[i].build_id);
		jw_end_object(w);
	}
	jw_end_array(w);
}

/* {"name": {"count": N, time_key: N, "max_ns": N}, ...} under key */
static void write_stat_map(struct json_writer *w, const char *key, const struct sp_comm_list *l,
			   const char *time_key, bool with_max)
{
	jw_name(w, key);
	jw_start_object(w);
	for (size_t i = 0; i < l->n; i++) {
		jw_name(w, l->v[i].comm);
		jw_start_object(w);
		jw_kv_uint(w, "count", l->v[i].count);
		jw_kv_uint(w, time_key, l->v[i].time_ns);
		if (with_max)
			jw_kv_uint(w, "max_ns", l->v[i].max_ns);
		jw_end_object(w);
	}
	jw_end_object(w);
}

static void write_strings(struct json_writer *w, const char *key, char *const *v, size_t n)
{
	jw_name(w, key);
	jw_start_array(w);
	for (size_t i = 0; i < n; i++)
		jw_string(w, v[i]);
	jw_end_array(w);
}

void format_json_stacks(struct json_writer *w, const struct sp_stack_list *l, const char *time_key)
{
	jw_name(w, "stacks");
	jw_start_array(w);
	for (size_t i = 0; i < l->n; i++) {
		const struct sp_stack_row *s = &l->v[i];

		jw_start_object(w);
		jw_kv_string(w, "comm", s->comm);
		jw_kv_uint(w, "pid", s->pid > 0 ? (uint64_t)s->pid : 0);
		jw_kv_uint(w, "count", s->count);
		if (time_key)
			jw_kv_uint(w, time_key, s->time_ns);
		write_strings(w, "frames", s->frames, s->nframes);
		if (s->objects)
			write_strings(w, "objects", s->objects, s->nframes);
		jw_end_object(w);
	}
	jw_end_array(w);
}

static void write_sched(struct json_writer *w, const struct sp_sched_view *v)
{
	jw_name(w, "schedules");
	jw_start_object(w);
	jw_kv_uint(w, "total", v->total);
	jw_kv_uint(w, "voluntary", v->voluntary);
	jw_kv_uint(w, "preempted", v->preempted);
	jw_kv_uint(w, "idle", v->idle);
	jw_kv_uint(w, "missing_stacks", v->missing_stacks);
	jw_kv_uint(w, "lost_rows", v->lost_rows);
	jw_name(w, "callers");
	jw_start_array(w);
	for (size_t i = 0; i < v->nrows; i++) {
		const struct sp_sched_row *r = &v->rows[i];

		jw_start_object(w);
		jw_kv_string(w, "caller", r->caller);
		jw_kv_string(w, "wait", r->wait); /* NULL -> null */
		jw_kv_uint(w, "count", r->count);
		jw_kv_uint(w, "offcpu_ns", r->offcpu_ns);
		jw_kv_uint(w, "max_ns", r->max_ns);
		write_stat_map(w, "comms", &r->comms, "offcpu_ns", true);
		format_json_stacks(w, &r->stacks, "offcpu_ns");
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_end_object(w);
}

/* {"cc1": {"samples": N}, ...} */
static void write_profile_comms(struct json_writer *w, const struct sp_comm_list *l)
{
	jw_name(w, "comms");
	jw_start_object(w);
	for (size_t i = 0; i < l->n; i++) {
		jw_name(w, l->v[i].comm);
		jw_start_object(w);
		jw_kv_uint(w, "samples", l->v[i].count);
		jw_end_object(w);
	}
	jw_end_object(w);
}

static void write_profile(struct json_writer *w, const struct sp_profile_view *v)
{
	struct sp_comm_list all = { 0 };

	jw_name(w, "profile");
	jw_start_object(w);
	jw_kv_uint(w, "hz", v->hz);
	jw_kv_int(w, "cpus", v->cpus);
	jw_kv_bool(w, "callchains", v->callchains);
	jw_kv_uint(w, "total", v->total);
	jw_kv_uint(w, "idle", v->idle);
	jw_kv_uint(w, "target", v->target);
	jw_kv_uint(w, "other", v->other);
	jw_kv_uint(w, "unsymbolized", v->unsymbolized);
	jw_kv_uint(w, "lost", v->lost);
	jw_kv_uint(w, "missing_stacks", v->missing_stacks);
	jw_kv_uint(w, "user_truncated", v->user_truncated);
	jw_name(w, "functions");
	jw_start_array(w);
	for (size_t i = 0; i < v->nrows; i++) {
		const struct sp_profile_row *r = &v->rows[i];

		jw_start_object(w);
		jw_kv_string(w, "function", r->function);
		jw_kv_string(w, "object", r->object);
		jw_kv_uint(w, "samples", r->samples);
		write_profile_comms(w, &r->comms);
		format_json_stacks(w, &r->stacks, NULL);
		jw_end_object(w);
		for (size_t j = 0; j < r->comms.n; j++)
			sp_comm_list_add(&all, r->comms.v[j].comm, r->comms.v[j].count, 0, 0);
	}
	jw_end_array(w);
	/* the target samples by process name (a summary of the functions' comms) */
	sp_comm_list_sort(&all);
	write_profile_comms(w, &all);
	jw_end_object(w);
	sp_comm_list_free(&all);
}

/* A sleeper row or group: the same fields but the first key and the breakdown's. */
struct sleep_json {
	const char *name_key, *name, *kind, *lock;
	uint64_t tasks, count, offcpu_ns, max_ns;
	const char *map_key;
	const struct sp_comm_list *map;
};

static void write_sleep(struct json_writer *w, const struct sleep_json *s)
{
	jw_start_object(w);
	jw_kv_string(w, s->name_key, s->name);
	jw_kv_string(w, "kind", s->kind);
	jw_kv_string(w, "lock", s->lock);
	jw_kv_uint(w, "tasks", s->tasks);
	jw_kv_uint(w, "count", s->count);
	jw_kv_uint(w, "offcpu_ns", s->offcpu_ns);
	jw_kv_uint(w, "max_ns", s->max_ns);
	write_stat_map(w, s->map_key, s->map, "offcpu_ns", true);
	jw_end_object(w);
}

static void write_locks(struct json_writer *w, const struct sp_lock_view *v)
{
	jw_name(w, "locks");
	jw_start_object(w);
	jw_kv_bool(w, "available", v->available);
	if (!v->available)
		jw_kv_string(w, "unavailable", v->unavailable);
	jw_kv_uint(w, "total", v->total);
	jw_kv_uint(w, "failed", v->failed);
	jw_kv_uint(w, "lost", v->lost);
	jw_kv_uint(w, "missing_stacks", v->missing_stacks);
	jw_kv_uint(w, "missed", v->missed);
	jw_kv_uint(w, "unpaired", v->unpaired);
	jw_name(w, "contentions");
	jw_start_array(w);
	for (size_t i = 0; i < v->nrows; i++) {
		const struct sp_lock_row *r = &v->rows[i];

		jw_start_object(w);
		jw_kv_string(w, "caller", r->caller);
		jw_kv_string(w, "kind", r->kind);
		jw_kv_string(w, "lock", r->lock);
		jw_kv_string(w, "lock_source", r->source);
		jw_kv_uint(w, "count", r->count);
		jw_kv_uint(w, "wait_ns", r->wait_ns);
		jw_kv_uint(w, "max_ns", r->max_ns);
		jw_kv_uint(w, "failed", r->failed);
		write_stat_map(w, "comms", &r->comms, "wait_ns", true);
		write_stat_map(w, "owners", &r->owners, "wait_ns", false);
		format_json_stacks(w, &r->stacks, "wait_ns");
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_name(w, "sleepers");
	jw_start_array(w);
	for (size_t i = 0; i < v->nsleepers; i++) {
		const struct sp_sleeper_row *r = &v->sleepers[i];

		write_sleep(w, &(struct sleep_json){ "caller", r->caller, r->kind, r->lock,
						     r->tasks, r->count, r->offcpu_ns, r->max_ns,
						     "comms", &r->comms });
	}
	jw_end_array(w);
	jw_name(w, "sleeper_groups");
	jw_start_array(w);
	for (size_t i = 0; i < v->ngroups; i++) {
		const struct sp_sleeper_group *g = &v->groups[i];

		write_sleep(w, &(struct sleep_json){ "comm", g->comm, g->kind, g->lock, g->tasks,
						     g->count, g->offcpu_ns, g->max_ns, "callers",
						     &g->callers });
	}
	jw_end_array(w);
	jw_end_object(w);
}

int format_json(const struct sp_run *run, const struct render_opts *opts, FILE *f)
{
	struct json_writer *w = jw_new(f, true);
	int err;

	if (!w)
		return -errno;
	jw_start_object(w);
	jw_kv_string(w, "schema", SP_SCHEMA);
	jw_kv_string(w, "version", run->version);
	jw_kv_string(w, "kernel", run->kernel);
	jw_kv_string(w, "hostname", run->hostname);
	jw_kv_int(w, "ncpus", run->ncpus);
	jw_kv_uint(w, "start_unix_ns", run->start_unix_ns);
	jw_kv_uint(w, "elapsed_ns", run->elapsed_ns);
	jw_kv_string(w, "options", run->options);
	write_target(w, &run->target);
	if (run->objects.n)
		write_objects(w, &run->objects);
	if (run->sched.present && (opts->views & SP_VIEW_SCHED))
		write_sched(w, &run->sched);
	if (run->profile.present && (opts->views & SP_VIEW_PROFILE))
		write_profile(w, &run->profile);
	if (run->locks.present && (opts->views & SP_VIEW_LOCKS))
		write_locks(w, &run->locks);
	jw_end_object(w);
	err = jw_finish(w);
	jw_free(w);
	if (!err && fputc('\n', f) == EOF)
		err = -EIO;
	return err;
}
