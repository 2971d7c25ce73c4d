// SPDX-License-Identifier: BSD-2-Clause
/*
 * -f trace-event: the timeline (--timeline) as Chrome trace-event JSON (the JSON Object
 * Format, {"traceEvents": [...]}), which Perfetto UI, chrome://tracing and speedscope open.
 *
 *  - one process track per traced process and one thread track per task (metadata events
 *    process_name and thread_name: the comm);
 *  - each segment of a task a complete event ("ph":"X") on its track: "running" (args: cpu,
 *    stolen_ns), "runnable [preempted]" / "runnable [woken]" / "runnable [new]" ("throttled
 *    [preempted]" while its CPU quota's group was throttled), and a blocked segment named by
 *    the caller of schedule() (args: wait class, waker comm, function and tid);
 *  - a running segment's stolen time (the hypervisor's, interrupts') a slice "stolen" nested
 *    at its end: where in the run it fell is not known, only how much;
 *  - each wake-up by a traced task a flow ("ph":"s" on the waker's track, "ph":"f" on the
 *    wakee's) at the wake-up time: the start binds to the waker's enclosing (running) slice
 *    ("bp":"e"), the end to the wakee's next slice, the one the wake-up began;
 *  - a process "critical path" (a pid no task can have) whose one thread holds the critical
 *    path's steps as slices named "COMM STATE [CALLER]", and the counters "tasks" (running,
 *    runnable) at each change.
 *
 * Times are microseconds since the run's start (fractional: the nanoseconds are kept). The
 * events stream out one per line as the model holds them (tasks, then each task's segments in
 * time order): nothing is built but an index of the tasks by tid and the counter steps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/json_writer.h"
#include "format/render.h"
#include "format/timeline.h"
#include "base/util.h"

/* Above the kernel's PID_MAX_LIMIT (2^22): no traced task has it. */
#define TE_CP_PID 4194305

struct te {
	struct json_writer *w;
	FILE *f;
	const struct sp_timeline *tl;
	struct sp_tl_index ix;
	uint64_t flows;
	int err; /* a failed write of our own (the writer keeps its own) */
};

static double us(uint64_t ns)
{
	return (double)ns / 1e3;
}

/* One event per line: the newline goes before the separating comma. */
static void ev_start(struct te *t, const char *ph, int pid, int tid)
{
	if (fputc('\n', t->f) == EOF)
		t->err = -EIO;
	jw_start_object(t->w);
	jw_kv_string(t->w, "ph", ph);
	jw_kv_int(t->w, "pid", pid);
	jw_kv_int(t->w, "tid", tid);
}

/* A metadata event "what" up to its args object, open: the caller writes the one arg. */
static void meta_start(struct te *t, int pid, int tid, const char *what)
{
	ev_start(t, "M", pid, tid);
	jw_kv_string(t->w, "name", what);
	jw_name(t->w, "args");
	jw_start_object(t->w);
}

static void meta_end(struct te *t)
{
	jw_end_object(t->w);
	jw_end_object(t->w);
}

static void put_meta(struct te *t, int pid, int tid, const char *what, const char *name)
{
	meta_start(t, pid, tid, what);
	jw_kv_string(t->w, "name", name);
	meta_end(t);
}

static void put_sort_index(struct te *t, int pid, int tid, const char *what, int64_t index)
{
	meta_start(t, pid, tid, what);
	jw_kv_int(t->w, "sort_index", index);
	meta_end(t);
}

static int cmp_task(const void *pa, const void *pb, void *arg)
{
	const struct sp_tl_task *tasks = arg;
	const struct sp_tl_task *a = &tasks[*(const size_t *)pa], *b = &tasks[*(const size_t *)pb];

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

/*
 * The process and thread names. A process is named by its main thread's comm (the task whose
 * tid is its pid), else by its first task's.
 */
static int put_names(struct te *t)
{
	const struct sp_timeline *tl = t->tl;
	size_t *order = malloc((tl->ntasks ? tl->ntasks : 1) * sizeof(*order));

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < tl->ntasks; i++)
		order[i] = i;
	qsort_r(order, tl->ntasks, sizeof(*order), cmp_task, tl->tasks);
	put_meta(t, TE_CP_PID, TE_CP_PID, "process_name", "critical path");
	put_sort_index(t, TE_CP_PID, TE_CP_PID, "process_sort_index", -1);
	put_meta(t, TE_CP_PID, TE_CP_PID, "thread_name", "critical path");
	for (size_t i = 0; i < tl->ntasks; i++) {
		const struct sp_tl_task *task = &tl->tasks[order[i]];

		if (!i || tl->tasks[order[i - 1]].pid != task->pid) {
			const struct sp_tl_task *main = sp_tl_index_find(&t->ix, task->pid);

			put_meta(t, task->pid, task->pid, "process_name",
				 main && main->pid == task->pid ? main->comm : task->comm);
		}
		put_meta(t, task->pid, task->tid, "thread_name", task->comm);
	}
	free(order);
	return 0;
}

static void put_slice_head(struct te *t, int pid, int tid, uint64_t start, uint64_t ns,
			   const char *cat)
{
	ev_start(t, "X", pid, tid);
	jw_kv_double(t->w, "ts", us(start));
	jw_kv_double(t->w, "dur", us(ns));
	jw_kv_string(t->w, "cat", cat);
}

/* A wake-up's flow: from the waker's running slice to the slice the wakee begins then. */
static void put_flow(struct te *t, const struct sp_tl_task *waker, const struct sp_tl_task *wakee,
		     uint64_t ts)
{
	t->flows++;
	ev_start(t, "s", waker->pid, waker->tid);
	jw_kv_double(t->w, "ts", us(ts));
	jw_kv_string(t->w, "cat", "wakeup");
	jw_kv_string(t->w, "name", "wakeup");
	jw_kv_uint(t->w, "id", t->flows);
	jw_kv_string(t->w, "bp", "e");
	jw_end_object(t->w);
	ev_start(t, "f", wakee->pid, wakee->tid);
	jw_kv_double(t->w, "ts", us(ts));
	jw_kv_string(t->w, "cat", "wakeup");
	jw_kv_string(t->w, "name", "wakeup");
	jw_kv_uint(t->w, "id", t->flows);
	jw_end_object(t->w);
}

static void put_seg(struct te *t, const struct sp_tl_task *task, const struct sp_tl_seg *s)
{
	const char *state = sp_tl_state_name(s->state);
	char name[256];

	put_slice_head(t, task->pid, s->tid, s->start_ns, s->ns, state);
	if (s->state == SP_TL_RUNNING) {
		jw_kv_string(t->w, "name", "running");
	} else if (s->state == SP_TL_RUNNABLE) {
		snprintf(name, sizeof(name), "%s %s", s->throttled ? "throttled" : "runnable",
			 s->caller ? s->caller : "[unknown]");
		jw_kv_string(t->w, "name", name);
	} else {
		jw_kv_string(t->w, "name", s->caller ? s->caller : "[unknown]");
	}
	jw_name(t->w, "args");
	jw_start_object(t->w);
	if (s->comm && task->comm && strcmp(s->comm, task->comm))
		jw_kv_string(t->w, "comm", s->comm);
	if (s->state == SP_TL_RUNNING)
		jw_kv_int(t->w, "cpu", s->cpu);
	if (s->state == SP_TL_RUNNING && s->stolen_ns)
		jw_kv_uint(t->w, "stolen_ns", s->stolen_ns);
	if (s->state == SP_TL_RUNNABLE && s->throttled)
		jw_kv_bool(t->w, "throttled", true);
	if (s->state == SP_TL_BLOCKED) {
		if (s->wait)
			jw_kv_string(t->w, "wait", s->wait);
		if (s->waker_comm)
			jw_kv_string(t->w, "waker", s->waker_comm);
		if (s->waker)
			jw_kv_string(t->w, "waker_function", s->waker);
		if (s->waker_tid)
			jw_kv_int(t->w, "waker_tid", s->waker_tid);
	}
	if (s->unfinished)
		jw_kv_bool(t->w, "unfinished", true);
	jw_end_object(t->w);
	jw_end_object(t->w);
	if (s->state == SP_TL_RUNNING && s->stolen_ns && s->stolen_ns <= s->ns) {
		put_slice_head(t, task->pid, s->tid, s->start_ns + (s->ns - s->stolen_ns),
			       s->stolen_ns, "stolen");
		jw_kv_string(t->w, "name", "stolen");
		jw_end_object(t->w);
	}
}

/* Every task's segments, and a flow for each wake-up by a traced task. */
static void put_segs(struct te *t)
{
	const struct sp_timeline *tl = t->tl;
	const struct sp_tl_task *task = NULL;

	for (size_t i = 0; i < tl->nsegs; i++) {
		const struct sp_tl_seg *s = &tl->segs[i];
		const struct sp_tl_task *waker;

		if (!task || task->tid != s->tid)
			task = sp_tl_index_find(&t->ix, s->tid);
		if (!task)
			continue; /* sp_run_check() refuses a run with such a segment */
		put_seg(t, task, s);
		if (s->state == SP_TL_BLOCKED && s->waker_tid && !s->unfinished &&
		    (waker = sp_tl_index_find(&t->ix, s->waker_tid)))
			put_flow(t, waker, task, sp_tl_end(s->start_ns, s->ns));
	}
}

static void put_cp(struct te *t)
{
	const struct sp_timeline *tl = t->tl;
	char name[256];

	for (size_t i = 0; i < tl->ncp; i++) {
		const struct sp_cp_seg *c = &tl->cp[i];

		put_slice_head(t, TE_CP_PID, TE_CP_PID, c->start_ns, c->ns, "critical path");
		snprintf(name, sizeof(name), "%s %s%s%s", c->comm ? c->comm : "?",
			 c->throttled ? "throttled" : sp_tl_state_name(c->state), c->caller ? " " : "",
			 c->caller ? c->caller : "");
		jw_kv_string(t->w, "name", name);
		jw_name(t->w, "args");
		jw_start_object(t->w);
		jw_kv_int(t->w, "tid", c->tid);
		jw_kv_string(t->w, "state", sp_tl_state_name(c->state));
		if (c->caller)
			jw_kv_string(t->w, "caller", c->caller);
		if (c->throttled)
			jw_kv_bool(t->w, "throttled", true);
		jw_end_object(t->w);
		jw_end_object(t->w);
	}
}

static int put_counters(struct te *t)
{
	struct sp_tl_count *c;
	size_t n;
	int err = sp_tl_counts(t->tl, &c, &n);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		ev_start(t, "C", TE_CP_PID, TE_CP_PID);
		jw_kv_double(t->w, "ts", us(c[i].ns));
		jw_kv_string(t->w, "name", "tasks");
		jw_name(t->w, "args");
		jw_start_object(t->w);
		jw_kv_uint(t->w, "running", c[i].running);
		jw_kv_uint(t->w, "runnable", c[i].runnable);
		jw_end_object(t->w);
		jw_end_object(t->w);
	}
	free(c);
	return 0;
}

static void put_other_data(struct te *t, const struct sp_run *run)
{
	const struct sp_timeline *tl = t->tl;

	jw_name(t->w, "otherData");
	jw_start_object(t->w);
	jw_kv_string(t->w, "tool", "schedprof");
	jw_kv_string(t->w, "version", run->version);
	jw_kv_string(t->w, "command", run->target.command);
	jw_kv_string(t->w, "kernel", run->kernel);
	jw_kv_string(t->w, "hostname", run->hostname);
	jw_kv_int(t->w, "ncpus", run->ncpus);
	jw_kv_uint(t->w, "start_unix_ns", run->start_unix_ns);
	jw_kv_uint(t->w, "elapsed_ns", run->elapsed_ns);
	jw_kv_uint(t->w, "tasks", tl->ntasks);
	jw_kv_uint(t->w, "segments", tl->nsegs);
	jw_kv_uint(t->w, "wakeup_flows", t->flows);
	jw_kv_uint(t->w, "events", tl->events);
	jw_kv_uint(t->w, "lost_events", tl->lost);
	jw_kv_uint(t->w, "critical_path_ns", tl->cp_total_ns);
	jw_end_object(t->w);
}

int format_trace_event(const struct sp_run *run, const struct render_opts *opts, FILE *f)
{
	struct te t = { .f = f, .tl = &run->timeline };
	int err;

	(void)opts;
	if (!run->timeline.present)
		return -EINVAL; /* render_run_missing() says why, before */
	err = sp_tl_index_init(&t.ix, t.tl);
	if (err)
		return err;
	t.w = jw_new(f, false);
	if (!t.w) {
		err = -errno;
		goto out;
	}
	jw_start_object(t.w);
	jw_name(t.w, "traceEvents");
	jw_start_array(t.w);
	err = put_names(&t);
	if (err)
		goto out;
	put_segs(&t);
	put_cp(&t);
	err = put_counters(&t);
	if (err)
		goto out;
	if (fputc('\n', f) == EOF)
		t.err = -EIO;
	jw_end_array(t.w);
	jw_kv_string(t.w, "displayTimeUnit", "ns");
	put_other_data(&t, run);
	jw_end_object(t.w);
	err = jw_finish(t.w) ?: t.err;
	if (!err && (fputc('\n', f) == EOF || fflush(f)))
		err = -EIO;
out:
	jw_free(t.w);
	sp_tl_index_free(&t.ix);
	return err;
}
