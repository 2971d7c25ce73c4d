// SPDX-License-Identifier: BSD-2-Clause
/*
 * The saved-run document ("schema": "schedprof/1"), documented in README.md. It holds
 * everything `schedprof report` needs to render any format again: counts, times, symbolized
 * stacks, target, kernel release, CPU count and options. Row and stack limits (-n) do not
 * apply: a saved run is complete.
 */
#include <errno.h>
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

static void write_comms(struct json_writer *w, const struct sp_comm_list *l, const char *time_key)
{
	jw_name(w, "comms");
	jw_start_object(w);
	for (size_t i = 0; i < l->n; i++) {
		jw_name(w, l->v[i].comm);
		jw_start_object(w);
		jw_kv_uint(w, "count", l->v[i].count);
		jw_kv_uint(w, time_key, l->v[i].time_ns);
		jw_kv_uint(w, "max_ns", l->v[i].max_ns);
		jw_end_object(w);
	}
	jw_end_object(w);
}

void format_json_stacks(struct json_writer *w, const struct sp_stack_list *l, const char *time_key)
{
	jw_name(w, "stacks");
	jw_start_array(w);
	for (size_t i = 0; i < l->n; i++) {
		const struct sp_stack_row *s = &l->v[i];

		jw_start_object(w);
		jw_kv_string(w, "comm", s->comm);
		jw_kv_uint(w, "count", s->count);
		if (time_key)
			jw_kv_uint(w, time_key, s->time_ns);
		jw_name(w, "frames");
		jw_start_array(w);
		for (size_t j = 0; j < s->nframes; j++)
			jw_string(w, s->frames[j]);
		jw_end_array(w);
		if (s->objects) {
			jw_name(w, "objects");
			jw_start_array(w);
			for (size_t j = 0; j < s->nframes; j++)
				jw_string(w, s->objects[j]);
			jw_end_array(w);
		}
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
		write_comms(w, &r->comms, "offcpu_ns");
		format_json_stacks(w, &r->stacks, "offcpu_ns");
		jw_end_object(w);
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
	if (run->sched.present && (opts->views & SP_VIEW_SCHED))
		write_sched(w, &run->sched);
	jw_end_object(w);
	err = jw_finish(w);
	jw_free(w);
	if (!err && fputc('\n', f) == EOF)
		err = -EIO;
	return err;
}
