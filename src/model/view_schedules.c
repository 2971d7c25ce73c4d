// SPDX-License-Identifier: BSD-2-Clause
/* The schedules view (see view.h): off-CPU schedules by kernel caller and wait class. */
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include "view.h"
#include "util.h"

/* ---- JSON ---- */

#define T struct sp_sched_row
static const struct sp_field row_fields[] = {
	SP_STR(T, "caller", caller),
	SP_STR_NULL(T, "wait", wait),
	SP_U64(T, "count", count),
	SP_U64(T, "offcpu_ns", offcpu_ns),
	SP_U64(T, "max_ns", max_ns),
	SP_COMMS(T, "comms", comms, sp_comm_offcpu_max),
	SP_STACKS(T, stacks, sp_stack_offcpu),
};
#undef T
static const struct sp_schema row_schema = SP_SCHEMA_OF("sched_row", row_fields);

#define T struct sp_sched_view
static const struct sp_field view_fields[] = {
	SP_U64(T, "total", total),
	SP_U64(T, "voluntary", voluntary),
	SP_U64(T, "preempted", preempted),
	SP_U64(T, "idle", idle),
	SP_U64(T, "missing_stacks", missing_stacks),
	SP_U64(T, "lost_rows", lost_rows),
	SP_ARRAY(T, "callers", rows, nrows, cap, row_schema),
};
#undef T
static const struct sp_schema view_schema = SP_SCHEMA_OF("schedules", view_fields);

/* ---- table ---- */

static void print_row(uint64_t count, uint64_t total, uint64_t offcpu, uint64_t max,
		      const char *wait, const char *caller, FILE *f)
{
	char d1[32], d2[32];

	fprintf(f, "%10" PRIu64 " %6.1f%% %10s %10s  %-13s %s\n", count, sp_pct(count, total),
		fmt_duration(offcpu, d1, sizeof(d1)), fmt_duration(max, d2, sizeof(d2)),
		wait ? wait : "-", caller);
}

static void print_columns(FILE *f)
{
	fprintf(f, "%10s %7s %10s %10s  %-13s %s\n", "COUNT", "SHARE", "OFF-CPU", "MAX", "WAIT",
		"CALLER");
}

/* --by comm: every comm with its callers. */
static int print_by_comm(const struct sp_sched_view *v, const struct render_opts *o, FILE *f)
{
	struct sp_comm_list all = { 0 };
	int err = 0;

	for (size_t i = 0; !err && i < v->nrows; i++)
		for (size_t j = 0; !err && j < v->rows[i].comms.n; j++) {
			const struct sp_comm_stat *c = &v->rows[i].comms.v[j];

			err = sp_comm_list_add(&all, c->comm, c->count, c->time_ns, c->max_ns);
		}
	sp_comm_list_sort(&all);
	for (size_t k = 0; !err && k < sp_rows_shown(all.n, o); k++) {
		const struct sp_comm_stat *c = &all.v[k];
		unsigned int shown = 0;

		fprintf(f, "\n%s: %" PRIu64 " schedules (%.1f%%)\n", c->comm, c->count,
			sp_pct(c->count, v->total));
		print_columns(f);
		/* rows are ranked by their total count, which is close enough within a comm */
		for (size_t i = 0; i < v->nrows && (!o->nrows || shown < o->nrows); i++) {
			const struct sp_sched_row *r = &v->rows[i];

			for (size_t j = 0; j < r->comms.n; j++) {
				const struct sp_comm_stat *rc = &r->comms.v[j];

				if (strcmp(rc->comm, c->comm))
					continue;
				print_row(rc->count, v->total, rc->time_ns, rc->max_ns, r->wait,
					  r->caller, f);
				shown++;
			}
		}
	}
	sp_comm_list_free(&all);
	return err;
}

static int print_table(const struct sp_run *run, const struct render_opts *o, FILE *f)
{
	const struct sp_sched_view *v = &run->sched;
	size_t n = v->nrows;
	int err = 0;

	fprintf(f, "\nschedules: %" PRIu64 " total, %" PRIu64 " voluntary (%.1f%%), %" PRIu64
		   " preempted (%.1f%%)",
		v->total, v->voluntary, sp_pct(v->voluntary, v->total), v->preempted,
		sp_pct(v->preempted, v->total));
	if (v->idle)
		fprintf(f, ", %" PRIu64 " idle", v->idle);
	fputc('\n', f);
	if (v->missing_stacks)
		fprintf(f, "  note: %" PRIu64 " schedules have no kernel stack (unreadable or the "
			   "stack map was full: raise --max-stacks); they are counted in every total\n",
			v->missing_stacks);
	if (v->lost_rows)
		fprintf(f, "  note: %" PRIu64 " schedules are in the totals but in no row (the row "
			   "map was full: raise --max-callers)\n",
			v->lost_rows);
	if (o->group == SP_GROUP_COMM)
		return print_by_comm(v, o, f);
	print_columns(f);
	n = sp_rows_shown(v->nrows, o);
	for (size_t i = 0; !err && i < n; i++) {
		const struct sp_sched_row *r = &v->rows[i];

		print_row(r->count, v->total, r->offcpu_ns, r->max_ns, r->wait, r->caller, f);
		if (o->stacks)
			err = sp_print_stack_list(&r->stacks, r->count, "off-CPU", o, f);
	}
	if (!err)
		sp_print_more_rows(n, v->nrows, f);
	return err;
}

/* ---- stack walk and diff ---- */

#define R struct sp_sched_row
static const struct sp_diff_table diff[] = {
	{ "schedules", "schedules by caller", "CALLER (WAIT)", "off-CPU time", NULL, "callers",
	  offsetof(R, caller), offsetof(R, wait), SP_NONE, offsetof(R, count),
	  offsetof(R, offcpu_ns), offsetof(struct sp_sched_view, total) },
};

static const struct sp_view_total totals[] = {
	{ "schedules", "schedules", offsetof(struct sp_run, sched.total) },
	{ "  voluntary", "voluntary", offsetof(struct sp_run, sched.voluntary) },
	{ "  preempted", "preempted", offsetof(struct sp_run, sched.preempted) },
};

const struct sp_view_ops sp_view_schedules = {
	.name = "schedules",
	.bit = SP_VIEW_SCHED,
	.count_name = "schedules",
	.time_name = "off-CPU",
	.flame_title = "Schedules: off-CPU flame graph",
	.pprof = { { "schedules", "offcpu" }, "schedules", "count" },
	.walk = { "callers", offsetof(R, caller), SP_NONE, offsetof(R, comms), offsetof(R, stacks),
		  offsetof(struct sp_sched_view, lost_rows) },
	SP_VIEW_COMMON(sched),
};
#undef R
