// SPDX-License-Identifier: BSD-2-Clause
/*
 * The timeline view (see view.h), issue #10, only with --timeline: the traced tasks' states
 * over time (tasks, segments) and what critpath.c computes from them (the critical path and
 * its ranking, the parallelism profile, the serial phases). It has no stacks: the stack
 * formats draw the other views and skip it.
 */
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include "view.h"
#include "util.h"

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

#define T struct sp_tl_task
static const struct sp_field task_fields[] = {
	TID(T, "tid", tid),
	TID(T, "pid", pid),
	TID(T, "parent_tid", parent_tid),
	SP_STR(T, "comm", comm),
	SP_U64(T, "start_ns", start_ns),
	SP_U64(T, "end_ns", end_ns),
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

static bool seg_blocked(const void *obj)
{
	return ((const struct sp_tl_seg *)obj)->state == SP_TL_BLOCKED;
}

/*
 * There can be a million segments: each has only the keys of its state (cpu when running;
 * caller when waiting; the wait class and the waker when blocked), unfinished only when true.
 */
#define T struct sp_tl_seg
static const struct sp_field seg_fields[] = {
	TID(T, "tid", tid),
	STATE(T),
	SP_U64(T, "start_ns", start_ns),
	SP_U64(T, "ns", ns),
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
};
#undef T
static const struct sp_schema seg_schema = SP_SCHEMA_OF("tl_seg", seg_fields);

#define T struct sp_cp_seg
static const struct sp_field cp_seg_fields[] = {
	SP_STR(T, "comm", comm),
	TID(T, "tid", tid),
	STATE(T),
	SP_STR_NULL(T, "caller", caller),
	SP_U64(T, "start_ns", start_ns),
	SP_U64(T, "ns", ns),
};
#undef T
static const struct sp_schema cp_seg_schema = SP_SCHEMA_OF("cp_seg", cp_seg_fields);

#define T struct sp_cp_rank
static const struct sp_field cp_rank_fields[] = {
	SP_STR(T, "comm", comm),
	STATE(T),
	SP_STR_NULL(T, "caller", caller),
	SP_U64(T, "ns", ns),
};
#undef T
static const struct sp_schema cp_rank_schema = SP_SCHEMA_OF("cp_rank", cp_rank_fields);

#define T struct sp_timeline
/* "critical_path" and "parallelism" group members of struct sp_timeline itself (offset 0) */
static const struct sp_field cp_fields[] = {
	SP_U64(T, "total_ns", cp_total_ns),
	SP_ARRAY(T, "segments", cp, ncp, cp_cap, cp_seg_schema),
	SP_ARRAY(T, "ranked", cp_ranks, ncp_ranks, cp_ranks_cap, cp_rank_schema),
};
#undef T
static const struct sp_schema cp_schema = SP_SCHEMA_OF("critical_path", cp_fields);

static const struct sp_field running_fields[] = {
	SP_INT(struct sp_par_bucket, "running", n, 0, INT_MAX),
	SP_U64(struct sp_par_bucket, "ns", ns),
};
static const struct sp_schema running_schema = SP_SCHEMA_OF("par_running", running_fields);

static const struct sp_field runnable_fields[] = {
	SP_INT(struct sp_par_bucket, "runnable", n, 0, INT_MAX),
	SP_U64(struct sp_par_bucket, "ns", ns),
};
static const struct sp_schema runnable_schema = SP_SCHEMA_OF("par_runnable", runnable_fields);

#define T struct sp_serial_phase
static const struct sp_field serial_fields[] = {
	SP_STR(T, "comm", comm),
	TID(T, "tid", tid),
	SP_U64(T, "start_ns", start_ns),
	SP_U64(T, "ns", ns),
};
#undef T
static const struct sp_schema serial_schema = SP_SCHEMA_OF("serial_phase", serial_fields);

#define T struct sp_timeline
static const struct sp_field par_fields[] = {
	SP_ARRAY(T, "running", running, nrunning, running_cap, running_schema),
	SP_ARRAY(T, "runnable", runnable, nrunnable, runnable_cap, runnable_schema),
	SP_ARRAY(T, "serial_phases", serial, nserial, serial_cap, serial_schema),
	SP_U64(T, "serial_ns", serial_ns),
};
static const struct sp_schema par_schema = SP_SCHEMA_OF("parallelism", par_fields);

/* The summaries first, the (long) tasks and segments last. */
static const struct sp_field view_fields[] = {
	SP_U64(T, "buffer_bytes", buffer_bytes),
	SP_U64(T, "events", events),
	SP_U64(T, "lost", lost),
	SP_U64(T, "end_ns", end_ns),
	TID(T, "end_tid", end_tid),
	{ .key = "critical_path", .type = SP_T_OBJECT, .off = 0, .sub = &cp_schema },
	{ .key = "parallelism", .type = SP_T_OBJECT, .off = 0, .sub = &par_schema },
	SP_ARRAY(T, "tasks", tasks, ntasks, tasks_cap, task_schema),
	SP_ARRAY(T, "segments", segs, nsegs, segs_cap, seg_schema),
};
#undef T
static const struct sp_schema view_schema = SP_SCHEMA_OF("timeline", view_fields);

const char *sp_tl_state_name(enum sp_tl_state s)
{
	return (unsigned int)s < ARRAY_SIZE(state_names) ? state_names[s] : "?";
}

/* ---- table ---- */

static int print_table(const struct sp_run *run, const struct render_opts *o, FILE *f)
{
	const struct sp_timeline *tl = &run->timeline;
	char d1[32];

	(void)o;
	fprintf(f, "\ntimeline: %zu tasks, %zu segments, %" PRIu64 " events", tl->ntasks, tl->nsegs,
		tl->events);
	if (tl->lost)
		fprintf(f, ", %" PRIu64 " lost (the ring buffer was full: raise its size)", tl->lost);
	fputc('\n', f);
	fprintf(f, "critical path: %s\n", fmt_duration(tl->cp_total_ns, d1, sizeof(d1)));
	for (size_t i = 0; i < tl->ncp_ranks; i++) {
		const struct sp_cp_rank *r = &tl->cp_ranks[i];

		fprintf(f, "  %6.1f%% %10s  %s %s%s%s\n", sp_pct(r->ns, tl->cp_total_ns),
			fmt_duration(r->ns, d1, sizeof(d1)), r->comm, sp_tl_state_name(r->state),
			r->caller ? " " : "", r->caller ? r->caller : "");
	}
	return 0;
}

/* ---- diff ---- */

#define R struct sp_cp_rank
static const struct sp_diff_table diff[] = {
	{ "critical_path", "critical path by comm and caller", "COMM (CALLER)",
	  "time on the critical path", NULL, "critical_path.ranked", offsetof(R, comm),
	  offsetof(R, caller), SP_NONE, offsetof(R, ns), offsetof(R, ns),
	  offsetof(struct sp_timeline, cp_total_ns) },
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
	SP_VIEW_COMMON(timeline),
};
