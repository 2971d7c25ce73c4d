// SPDX-License-Identifier: BSD-2-Clause
/* The profile view (see view.h): sampled on-CPU functions. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "model/view.h"
#include "model/view_fields.h"
#include "base/util.h"

/* ---- JSON ---- */

#define T struct sp_profile_row
static const struct sp_field row_fields[] = {
	SP_KEY_STR(T, "function", function),
	SP_KEY_STR(T, "object", object),
	SP_FRAME_INFO(T, "info", info), /* absent in older runs */
	SP_U64(T, "samples", samples),
	SP_COMMS(T, "comms", comms, sp_comm_samples),
	SP_STACKS(T, stacks, sp_stack_plain),
};
#undef T
static const struct sp_schema row_schema = SP_SCHEMA_OF("profile_row", row_fields);

/* The target samples by process name: a summary of the functions' comms, not read back. */
struct comm_summary {
	struct sp_comm_list all;
};

/* The samples of every row by comm into *all, most first: 0 or -ENOMEM (all holds what fit). */
static int sum_comms(const struct sp_profile_view *v, struct sp_comm_list *all)
{
	int err = 0;

	for (size_t i = 0; !err && i < v->nrows; i++)
		for (size_t j = 0; !err && j < v->rows[i].comms.n; j++)
			err = sp_comm_list_add(all, v->rows[i].comms.v[j].comm,
					       v->rows[i].comms.v[j].count, 0, 0);
	sp_comm_list_sort(all);
	return err;
}

static int write_comms(struct json_writer *w, const struct sp_field *f, const void *obj)
{
	const struct sp_profile_view *v = obj;
	const struct sp_field map = SP_COMMS(struct comm_summary, f->key, all, sp_comm_samples);
	const struct sp_schema one = { .name = "profile_comms", .fields = &map, .nfields = 1 };
	struct comm_summary sum = { 0 };
	int err = sum_comms(v, &sum.all);

	if (!err) /* the same map as a row's comms, through the same descriptor */
		err = sp_schema_write(w, &one, &sum);
	sp_comm_list_free(&sum.all);
	return err;
}

#define T struct sp_profile_view
static const struct sp_field view_fields[] = {
	/* 0: not recorded (the rows of an older agent in a warehouse) */
	SP_UINT(T, "hz", hz, 0, UINT_MAX),
	/* the CPUs sampled: at least one; 0 is unknown (the warehouse's rows), not written */
	{ .key = "cpus", .type = SP_T_INT, .flags = SP_SPARSE, .off = offsetof(T, cpus), .min = 1,
	  .max = 65536 },
	SP_BOOL(T, "callchains", callchains),
	SP_NAMED(SP_U64, T, total, idle, target, other),
	SP_NAMED(SP_U64, T, unsymbolized, lost, missing_stacks, user_truncated),
	SP_ARRAY(T, "functions", rows, nrows, cap, row_schema),
	{ .key = "comms", .type = SP_T_CUSTOM, .write = write_comms },
};
#undef T
static const struct sp_schema view_schema = SP_SCHEMA_OF("profile", view_fields);

/* ---- table ---- */

/* What the target samples are called in the header. */
static const char *target_label(const struct sp_run *run)
{
	switch (run->target.mode) {
	case SP_TARGET_COMMAND:
		return "job";
	case SP_TARGET_PIDS:
	case SP_TARGET_CGROUP:
	case SP_TARGET_TIDS:
		return "target";
	default:
		return "busy";
	}
}

static void print_columns(FILE *f)
{
	fprintf(f, "%10s %7s  %-36s %s\n", "SAMPLES", "SHARE", "FUNCTION", "OBJECT");
}

static void print_row(uint64_t n, uint64_t total, const char *function, const char *object,
		      FILE *f)
{
	fprintf(f, "%10" PRIu64 " %6.1f%%  %-36s %s\n", n, sp_pct(n, total), function, object);
}

struct comm_entry {
	const struct sp_profile_row *row;
	uint64_t count;
};

static int cmp_comm_entry(const void *pa, const void *pb)
{
	const struct comm_entry *a = pa, *b = pb;
	int c;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	c = strcmp(a->row->function, b->row->function);
	return c ? c : strcmp(a->row->object, b->row->object);
}

/* --by comm: every process name with its own ranking of functions. */
static int print_by_comm(const struct sp_profile_view *v, const struct render_opts *o, FILE *f)
{
	struct sp_comm_list all = { 0 };
	struct comm_entry *e = calloc(v->nrows ? v->nrows : 1, sizeof(*e));
	int err;

	if (!e)
		return -ENOMEM;
	err = sum_comms(v, &all);
	for (size_t k = 0; !err && k < sp_rows_shown(all.n, o); k++) {
		const struct sp_comm_stat *c = &all.v[k];
		size_t n = 0;

		for (size_t i = 0; i < v->nrows; i++) {
			const struct sp_comm_list *l = &v->rows[i].comms;

			for (size_t j = 0; j < l->n; j++) {
				if (!strcmp(l->v[j].comm, c->comm)) {
					e[n].row = &v->rows[i];
					e[n++].count = l->v[j].count;
					break;
				}
			}
		}
		qsort(e, n, sizeof(*e), cmp_comm_entry);
		fprintf(f, "\n%s: %" PRIu64 " samples (%.1f%%)\n", c->comm, c->count,
			sp_pct(c->count, v->target));
		print_columns(f);
		for (size_t i = 0; i < sp_rows_shown(n, o); i++)
			print_row(e[i].count, v->target, e[i].row->function, e[i].row->object, f);
		sp_print_more_rows(sp_rows_shown(n, o), n, f);
	}
	sp_comm_list_free(&all);
	free(e);
	return err;
}

static int print_table(const struct sp_run *run, const struct render_opts *o, FILE *f)
{
	const struct sp_profile_view *v = &run->profile;
	size_t n = v->nrows;
	int err = 0;

	fprintf(f, "\nprofile: %" PRIu64 " samples", v->total);
	/* a warehouse's rows may have neither (0) */
	if (v->hz)
		fprintf(f, " @ %u Hz", v->hz);
	if (v->cpus)
		fprintf(f, " on %d CPUs", v->cpus);
	fprintf(f, ": cpu_idle %.1f%%, %s %.1f%%, other %.1f%%\n", sp_pct(v->idle, v->total),
		target_label(run), sp_pct(v->target, v->total), sp_pct(v->other, v->total));
	if (v->unsymbolized)
		fprintf(f, "  note: %" PRIu64 " of the %" PRIu64 " %s samples (%.1f%%) could not be "
			   "symbolized: they are counted under [unknown], or object+0xOFFSET when "
			   "their file is known\n",
			v->unsymbolized, v->target, target_label(run),
			sp_pct(v->unsymbolized, v->target));
	sp_print_lost_rows(v->lost, "samples", "sample", "--max-samples", f);
	if (v->missing_stacks)
		fprintf(f, "  note: %" PRIu64 " samples have no full stack (the stack map was full: "
			   "raise --max-stacks); they are counted in every total\n",
			v->missing_stacks);
	/* its missing stacks have a note of their own above: the profile keeps no user_missing */
	sp_print_stack_notes("samples", 0, 0, v->user_truncated, NULL, f);
	if (o->stacks && !v->callchains)
		fprintf(f, "  note: no stacks were recorded (trace with -g)\n");
	if (o->group == SP_GROUP_COMM)
		return print_by_comm(v, o, f);
	print_columns(f);
	n = sp_rows_shown(v->nrows, o);
	for (size_t i = 0; !err && i < n; i++) {
		const struct sp_profile_row *r = &v->rows[i];

		print_row(r->samples, v->target, r->function, r->object, f);
		if (o->stacks) /* kernel, then user */
			err = sp_print_stack_list(&r->stacks, r->samples, NULL, o, f);
	}
	if (!err)
		sp_print_more_rows(n, v->nrows, f);
	return err;
}

/* ---- stack walk and diff ---- */

static uint64_t period_ns(const struct sp_run *run)
{
	return run->profile.hz ? NSEC_PER_SEC / run->profile.hz : 0;
}

#define R struct sp_profile_row
static const struct sp_diff_table diff[] = {
	{ "profile", "profile by function", "FUNCTION (OBJECT)", "CPU time", NULL, "functions",
	  offsetof(R, function), offsetof(R, object), SP_NONE, offsetof(R, samples), SP_NONE,
	  offsetof(struct sp_profile_view, target), false, NULL },
};

static const struct sp_view_total totals[] = {
	{ "profile samples", "profile_samples", offsetof(struct sp_run, profile.total), false },
	{ "  target", "profile_target", offsetof(struct sp_run, profile.target), false },
};

static const struct sp_view_loss losses[] = {
	SP_VIEW_ROW_LOSSES(profile, lost, "samples", "--max-samples"),
};

const struct sp_view_ops sp_view_profile = {
	.name = "profile",
	.bit = SP_VIEW_PROFILE,
	.count_name = "samples",
	.time_name = "CPU",
	.flame_title = "Profile: on-CPU flame graph",
	.pprof = { { "samples", "cpu" }, "cpu", "nanoseconds" },
	.walk = { "functions", offsetof(R, function), offsetof(R, object), offsetof(R, comms),
		  offsetof(R, stacks), offsetof(struct sp_profile_view, lost) },
	.walk_info_off = offsetof(R, info),
	.period_ns = period_ns,
	.losses = losses,
	.nlosses = ARRAY_SIZE(losses),
	SP_VIEW_COMMON(profile),
};
#undef R
