// SPDX-License-Identifier: BSD-2-Clause
/*
 * The timeline view (see view.h), only with --timeline: the traced tasks' states
 * over time (tasks, segments) and what critpath.c computes from them (the critical path and
 * its ranking, the parallelism profile, the serial phases). It has no stacks: the stack
 * formats draw the other views and skip it.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "model/view.h"
#include "base/util.h"

/* ---- JSON ---- */

static const char *const state_names[] = {
	[SP_TL_RUNNING] = "running",
	[SP_TL_RUNNABLE] = "runnable",
	[SP_TL_BLOCKED] = "blocked",
};

#define STATE(T)                                                                          \
	{ .key = "state", .type = SP_T_ENUM, .off = offsetof(T, state), .names = state_names, \
	  .nnames = ARRAY_SIZE(state_names) }
#define TID(T, k, M) SP_INT(T, k, M, 0, INT_MAX)
/* An array of small objects, one per line (a timeline has up to millions of segments). */
#define SP_LINES(T, k, M, N, C, S) SP_ARRAY_AS(T, k, M, N, C, S, SP_INLINE)
/*
 * The keys the timeline's pieces share, named alike wherever they stand: a task (comm, tid),
 * a stretch of its time (start_ns, ns), and a step of the critical path (state, the caller
 * it waited in, alone: running while no other task of the job ran, critpath.c; alone is
 * optional, older files lack it). put_step() says a step in the table.
 */
#define WHO(T) SP_STR(T, "comm", comm), TID(T, "tid", tid)
#define SPAN(T) SP_U64(T, "start_ns", start_ns), SP_U64(T, "ns", ns)
#define STEP(T)                                                                             \
	STATE(T), SP_STR_NULL(T, "caller", caller),                                          \
	{ .key = "alone", .type = SP_T_BOOL, .flags = SP_OPTIONAL, .off = offsetof(T, alone) }

#define T struct sp_tl_task
static const struct sp_field task_fields[] = {
	SP_NAMED(TID, T, tid, pid, parent_tid),
	SP_STR(T, "comm", comm),
	SP_NAMED(SP_U64, T, start_ns, end_ns),
	SP_BOOL(T, "exited", exited),
};
#undef T
static const struct sp_schema task_schema = SP_SCHEMA_OF("tl_task", task_fields);

static bool seg_running(const void *obj)
{
	return ((const struct sp_tl_seg *)obj)->state == SP_TL_RUNNING;
}

static bool seg_waiting(const void *obj)
{
	return ((const struct sp_tl_seg *)obj)->state != SP_TL_RUNNING;
}

static bool seg_runnable(const void *obj)
{
	return ((const struct sp_tl_seg *)obj)->state == SP_TL_RUNNABLE;
}

static bool seg_blocked(const void *obj)
{
	return ((const struct sp_tl_seg *)obj)->state == SP_TL_BLOCKED;
}

/*
 * There can be a million segments: each has only the keys of its state (cpu and stolen_ns when
 * running; caller when waiting, throttled when runnable; the wait class and the waker when
 * blocked), unfinished only when true.
 */
#define T struct sp_tl_seg
static const struct sp_field seg_fields[] = {
	TID(T, "tid", tid),
	STATE(T),
	SPAN(T),
	SP_STR(T, "comm", comm),
	{ .key = "cpu", .type = SP_T_INT, .off = offsetof(T, cpu), .min = -1, .max = INT_MAX,
	  .when = seg_running },
	{ .key = "caller", .type = SP_T_STR, .flags = SP_NULLABLE, .off = offsetof(T, caller),
	  .when = seg_waiting },
	{ .key = "wait", .type = SP_T_STR, .flags = SP_NULLABLE, .off = offsetof(T, wait),
	  .when = seg_blocked },
	{ .key = "waker_tid", .type = SP_T_INT, .off = offsetof(T, waker_tid), .min = 0,
	  .max = INT_MAX, .when = seg_blocked },
	{ .key = "waker_comm", .type = SP_T_STR, .flags = SP_NULLABLE,
	  .off = offsetof(T, waker_comm), .when = seg_blocked },
	{ .key = "waker", .type = SP_T_STR, .flags = SP_NULLABLE, .off = offsetof(T, waker),
	  .when = seg_blocked },
	{ .key = "unfinished", .type = SP_T_BOOL, .flags = SP_GROUP | SP_OPTIONAL,
	  .off = offsetof(T, unfinished), .group_off = offsetof(T, unfinished) },
	/* only when true / not 0, absent in older files */
	{ .key = "throttled", .type = SP_T_BOOL, .flags = SP_SPARSE, .off = offsetof(T, throttled),
	  .when = seg_runnable },
	{ .key = "stolen_ns", .type = SP_T_U64, .flags = SP_SPARSE, .off = offsetof(T, stolen_ns),
	  .when = seg_running },
};
#undef T
static const struct sp_schema seg_schema = SP_SCHEMA_OF("tl_seg", seg_fields);

#define T struct sp_cp_seg
static const struct sp_field cp_seg_fields[] = {
	WHO(T), STEP(T), SPAN(T),
	/* only when true, absent in older files */
	{ .key = "throttled", .type = SP_T_BOOL, .flags = SP_SPARSE, .off = offsetof(T, throttled) },
};
#undef T
static const struct sp_schema cp_seg_schema = SP_SCHEMA_OF("cp_seg", cp_seg_fields);

#define T struct sp_cp_rank
static const struct sp_field cp_rank_fields[] = {
	SP_STR(T, "comm", comm),
	STEP(T),
	SP_U64(T, "ns", ns),
	/* only when true, absent in older files */
	{ .key = "throttled", .type = SP_T_BOOL, .flags = SP_SPARSE, .off = offsetof(T, throttled) },
};
#undef T
static const struct sp_schema cp_rank_schema = SP_SCHEMA_OF("cp_rank", cp_rank_fields);

/* Events were lost: the critical path and the parallelism come from a timeline with gaps. */
static bool tl_incomplete(const void *obj)
{
	return ((const struct sp_timeline *)obj)->lost > 0;
}

static int write_incomplete(struct json_writer *w, const struct sp_field *f, const void *obj)
{
	(void)obj;
	jw_kv_bool(w, f->key, true);
	return 0;
}

/* written when lost > 0, not read back: it follows from lost */
#define INCOMPLETE { .key = "incomplete", .type = SP_T_CUSTOM, .write = write_incomplete, \
		     .when = tl_incomplete }

#define T struct sp_timeline
/* "critical_path" and "parallelism" group members of struct sp_timeline itself (offset 0) */
static const struct sp_field cp_fields[] = {
	INCOMPLETE,
	SP_U64(T, "total_ns", cp_total_ns),
	SP_LINES(T, "segments", cp, ncp, cp_cap, cp_seg_schema),
	SP_LINES(T, "ranked", cp_ranks, ncp_ranks, cp_ranks_cap, cp_rank_schema),
};
#undef T
static const struct sp_schema cp_schema = SP_SCHEMA_OF("critical_path", cp_fields);

/* A parallelism histogram: the time with n tasks in state k ("running", "runnable"). */
#define PAR_BUCKET_FIELDS(k) \
	SP_INT(struct sp_par_bucket, k, n, 0, INT_MAX), SP_U64(struct sp_par_bucket, "ns", ns)
static const struct sp_field running_fields[] = { PAR_BUCKET_FIELDS("running") };
static const struct sp_field runnable_fields[] = { PAR_BUCKET_FIELDS("runnable") };
static const struct sp_schema running_schema = SP_SCHEMA_OF("par_running", running_fields);
static const struct sp_schema runnable_schema = SP_SCHEMA_OF("par_runnable", runnable_fields);

#define T struct sp_serial_phase
static const struct sp_field serial_fields[] = { WHO(T), SPAN(T) };
#undef T
static const struct sp_schema serial_schema = SP_SCHEMA_OF("serial_phase", serial_fields);

#define T struct sp_timeline
static const struct sp_field par_fields[] = {
	INCOMPLETE,
	SP_LINES(T, "running", running, nrunning, running_cap, running_schema),
	SP_LINES(T, "runnable", runnable, nrunnable, runnable_cap, runnable_schema),
	SP_LINES(T, "serial_phases", serial, nserial, serial_cap, serial_schema),
	SP_U64(T, "serial_ns", serial_ns),
};
static const struct sp_schema par_schema = SP_SCHEMA_OF("parallelism", par_fields);

/* The summaries first, the (long) tasks and segments last. */
static const struct sp_field view_fields[] = {
	SP_NAMED(SP_U64, T, buffer_bytes, events, lost),
	SP_U64_AS(T, "dropped", dropped, SP_OPTIONAL),
	SP_U64(T, "end_ns", end_ns),
	TID(T, "end_tid", end_tid),
	{ .key = "critical_path", .type = SP_T_OBJECT, .off = 0, .sub = &cp_schema },
	{ .key = "parallelism", .type = SP_T_OBJECT, .off = 0, .sub = &par_schema },
	SP_LINES(T, "tasks", tasks, ntasks, tasks_cap, task_schema),
	SP_LINES(T, "segments", segs, nsegs, segs_cap, seg_schema),
};
#undef T
static const struct sp_schema view_schema = SP_SCHEMA_OF("timeline", view_fields);

const char *sp_tl_state_name(enum sp_tl_state s)
{
	return (unsigned int)s < ARRAY_SIZE(state_names) ? state_names[s] : "?";
}

/* ---- table ---- */

/* "cc1 running", "make in do_wait", "cc1 waiting for a CPU", "cc1 throttled by its CPU quota" */
static void put_step(const struct sp_cp_rank *r, bool detail, FILE *f)
{
	fputs(r->comm ? r->comm : "?", f);
	switch (r->state) {
	case SP_TL_RUNNING:
		fputs(r->alone ? " running alone" : " running", f);
		break;
	case SP_TL_RUNNABLE:
		fputs(r->throttled ? " throttled by its CPU quota" : " waiting for a CPU", f);
		if (detail && r->caller)
			fprintf(f, " (%s)", r->caller);
		break;
	default:
		fprintf(f, " in %s", r->caller ? r->caller : "?");
		break;
	}
}

#define SENTENCE_STEPS 4

static int print_critical_path(const struct sp_run *run, const struct render_opts *o, FILE *f)
{
	const struct sp_timeline *tl = &run->timeline;
	const char *end_comm = NULL;
	size_t n = sp_rows_shown(tl->ncp_ranks, o);
	char d1[32], d2[32], d3[32];

	for (size_t i = 0; i < tl->ntasks && !end_comm; i++)
		if (tl->tasks[i].tid == tl->end_tid)
			end_comm = tl->tasks[i].comm;
	fprintf(f, "critical path%s: %s of %s elapsed, back from the end of %s (tid %d) at %s\n",
		tl->lost ? " (from incomplete data: events lost)" : "",
		fmt_duration(tl->cp_total_ns, d1, sizeof(d1)),
		fmt_duration(run->elapsed_ns, d2, sizeof(d2)), end_comm ? end_comm : "?", tl->end_tid,
		fmt_duration(tl->end_ns, d3, sizeof(d3)));
	if (!tl->ncp_ranks)
		return 0;
	fputs("  ", f);
	for (size_t i = 0; i < tl->ncp_ranks && i < SENTENCE_STEPS; i++) {
		const struct sp_cp_rank *r = &tl->cp_ranks[i];

		if (i)
			fputs(", ", f);
		put_step(r, false, f);
		fprintf(f, " %.1f%%", sp_pct(r->ns, tl->cp_total_ns));
	}
	fputc('\n', f);
	fprintf(f, "%10s %10s  %s\n", "SHARE", "TIME", "ON THE PATH");
	for (size_t i = 0; i < n; i++) {
		const struct sp_cp_rank *r = &tl->cp_ranks[i];

		fprintf(f, "%9.1f%% %10s  ", sp_pct(r->ns, tl->cp_total_ns),
			fmt_duration(r->ns, d1, sizeof(d1)));
		put_step(r, true, f);
		fputc('\n', f);
	}
	sp_print_more_rows(n, tl->ncp_ranks, f);
	return 0;
}

static int cmp_pair(const void *pa, const void *pb)
{
	const struct sp_par_pair *a = pa, *b = pb;

	return (a->n > b->n) - (a->n < b->n);
}

int sp_par_pairs(const struct sp_par_bucket *ha, size_t na, const struct sp_par_bucket *hb,
		 size_t nb, struct sp_par_pair **ret, size_t *ret_n)
{
	struct sp_par_pair *v = calloc(na + nb ? na + nb : 1, sizeof(*v));
	size_t n = 0;

	*ret = NULL;
	*ret_n = 0;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < na; i++)
		v[i] = (struct sp_par_pair){ ha[i].n, ha[i].ns, 0 };
	for (size_t i = 0; i < nb; i++)
		v[na + i] = (struct sp_par_pair){ hb[i].n, 0, hb[i].ns };
	qsort(v, na + nb, sizeof(*v), cmp_pair);
	for (size_t i = 0; i < na + nb; i++) {
		if (n && v[n - 1].n == v[i].n) {
			v[n - 1].a = sp_sat_add(v[n - 1].a, v[i].a);
			v[n - 1].b = sp_sat_add(v[n - 1].b, v[i].b);
		} else {
			v[n++] = v[i];
		}
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Mean tasks of a histogram, over the time it covers. */
double sp_par_mean(const struct sp_par_bucket *b, size_t nb)
{
	double sum = 0, ns = 0;

	for (size_t i = 0; i < nb; i++) {
		sum += (double)b[i].n * (double)b[i].ns;
		ns += (double)b[i].ns;
	}
	return ns > 0 ? sum / ns : 0.0;
}

/* Time with n tasks running, and runnable, side by side. 0 or -ENOMEM. */
static int print_parallelism(const struct sp_run *run, FILE *f)
{
	const struct sp_timeline *tl = &run->timeline;
	uint64_t all = 0, all_q = 0;
	struct sp_par_pair *p;
	size_t np;
	char d1[32], d2[32];
	int err;

	for (size_t i = 0; i < tl->nrunning; i++)
		all = sp_sat_add(all, tl->running[i].ns);
	for (size_t i = 0; i < tl->nrunnable; i++)
		all_q = sp_sat_add(all_q, tl->runnable[i].ns);
	fprintf(f, "parallelism%s: %.2f tasks running on average (%d CPUs), %.2f runnable\n",
		tl->lost ? " (from incomplete data: events lost)" : "",
		sp_par_mean(tl->running, tl->nrunning), run->ncpus,
		sp_par_mean(tl->runnable, tl->nrunnable));
	err = sp_par_pairs(tl->running, tl->nrunning, tl->runnable, tl->nrunnable, &p, &np);
	if (err)
		return err;
	for (size_t i = 0, shown = 0; i < np; i++) {
		if (!p[i].a && !p[i].b)
			continue;
		if (!shown++)
			fprintf(f, "%10s %10s %7s %10s %7s\n", "TASKS", "RUNNING", "SHARE", "RUNNABLE",
				"SHARE");
		fprintf(f, "%10d %10s %6.1f%% %10s %6.1f%%\n", p[i].n,
			fmt_duration(p[i].a, d1, sizeof(d1)), sp_pct(p[i].a, all),
			fmt_duration(p[i].b, d2, sizeof(d2)), sp_pct(p[i].b, all_q));
	}
	free(p);
	return 0;
}

static void print_serial(const struct sp_run *run, const struct render_opts *o, FILE *f)
{
	const struct sp_timeline *tl = &run->timeline;
	size_t n = sp_rows_shown(tl->nserial, o);
	char d1[32], d2[32];

	fprintf(f, "serial phases (one task running or runnable, CPUs idle, at least 100ms%s): "
		   "%zu, %s", tl->lost ? "; from incomplete data: events lost" : "", tl->nserial, fmt_duration(tl->serial_ns, d1, sizeof(d1)));
	if (run->elapsed_ns)
		fprintf(f, " (%.1f%% of elapsed)", sp_pct(tl->serial_ns, run->elapsed_ns));
	fputc('\n', f);
	if (!n)
		return;
	fprintf(f, "%10s %10s  %s\n", "START", "TIME", "COMM (TID)");
	for (size_t i = 0; i < n; i++) {
		const struct sp_serial_phase *p = &tl->serial[i];

		fprintf(f, "%10s %10s  %s (%d)\n", fmt_duration(p->start_ns, d1, sizeof(d1)),
			fmt_duration(p->ns, d2, sizeof(d2)), p->comm ? p->comm : "?", p->tid);
	}
	sp_print_more_rows(n, tl->nserial, f);
}

static int print_table(const struct sp_run *run, const struct render_opts *o, FILE *f)
{
	const struct sp_timeline *tl = &run->timeline;

	fprintf(f, "\ntimeline: %zu tasks, %zu segments, %" PRIu64 " events (ring buffer ",
		tl->ntasks, tl->nsegs, tl->events);
	if (tl->buffer_bytes >= 1u << 20)
		fprintf(f, "%.1f MiB)\n", (double)tl->buffer_bytes / (1u << 20));
	else
		fprintf(f, "%.1f KiB)\n", (double)tl->buffer_bytes / 1024);
	if (tl->lost)
		fprintf(f, "  note: %" PRIu64 " events lost (the ring buffer was full: give it more "
			   "room); the timeline and what follows from it have gaps\n",
			tl->lost);
	if (tl->dropped)
		fprintf(f, "  note: %" PRIu64 " events after the segment limit not kept: the "
			   "timeline ends early\n", tl->dropped);
	int err = print_critical_path(run, o, f);

	if (err)
		return err;
	err = print_parallelism(run, f);
	if (err)
		return err;
	print_serial(run, o, f);
	return 0;
}

/* ---- diff ---- */

#define R struct sp_cp_rank
static const struct sp_diff_table diff[] = {
	{ "critical_path", "critical path by comm and caller", "COMM (CALLER)",
	  "time on the critical path", NULL, "critical_path.ranked", offsetof(R, comm),
	  offsetof(R, caller), SP_NONE, offsetof(R, ns), offsetof(R, ns),
	  offsetof(struct sp_timeline, cp_total_ns), true, "running" },
};
#undef R

static const struct sp_view_total totals[] = {
	{ "critical path", "critical_path_ns", offsetof(struct sp_run, timeline.cp_total_ns), true },
	{ "serial time", "serial_ns", offsetof(struct sp_run, timeline.serial_ns), true },
};

const struct sp_view_ops sp_view_timeline = {
	.name = "timeline",
	.bit = SP_VIEW_TIMELINE,
	.count_name = "segments",
	.time_name = "time",
	.flame_title = "Timeline",
	.pprof = { { "segments", "time" }, "segments", "count" },
	/* no stacks: nothing for the stack formats */
	.walk = { NULL, SP_NONE, SP_NONE, SP_NONE, SP_NONE, SP_NONE },
	.whole_run = true, /* not split into intervals */
	SP_VIEW_COMMON(timeline),
};
