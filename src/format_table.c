// SPDX-License-Identifier: BSD-2-Clause
/* The human report: a header, then one ranked table per view. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "render.h"
#include "util.h"

static double pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

static void print_header(const struct sp_run *run, FILE *f)
{
	const struct sp_target_info *t = &run->target;
	char d1[32], d2[32], d3[32];

	switch (t->mode) {
	case SP_TARGET_COMMAND:
		fprintf(f, "command: %s", t->command ? t->command : "?");
		if (t->exit_status >= 0)
			fprintf(f, " (exit %d)", t->exit_status);
		fputc('\n', f);
		break;
	case SP_TARGET_PIDS:
		fprintf(f, "pids:");
		for (size_t i = 0; i < t->npids; i++)
			fprintf(f, "%s%d", i ? "," : " ", t->pids[i]);
		fprintf(f, " and descendants\n");
		break;
	default:
		fprintf(f, "system-wide\n");
		break;
	}
	fprintf(f, "elapsed %s", fmt_duration(run->elapsed_ns, d1, sizeof(d1)));
	if (t->has_rusage) {
		fprintf(f, ", user %s, sys %s, CPU %.0f%% of %d CPUs",
			fmt_duration(t->user_ns, d2, sizeof(d2)), fmt_duration(t->sys_ns, d3, sizeof(d3)),
			pct(t->user_ns + t->sys_ns, run->elapsed_ns), run->ncpus);
	}
	fprintf(f, "  [%s, %s]\n", run->kernel ? run->kernel : "?", run->hostname ? run->hostname : "?");
}

static void print_stacks(const struct sp_sched_row *r, const struct render_opts *o, FILE *f)
{
	char d[32];

	for (size_t i = 0; i < r->stacks.n && i < o->nstacks; i++) {
		const struct sp_stack_row *s = &r->stacks.v[i];

		fprintf(f, "        stack #%zu: %" PRIu64 " (%.1f%%), off-CPU %s, comm %s\n", i + 1,
			s->count, pct(s->count, r->count), fmt_duration(s->time_ns, d, sizeof(d)),
			s->comm);
		for (size_t j = 0; j < s->nframes; j++)
			fprintf(f, "          %s%s%s\n", s->frames[j],
				s->objects && strcmp(s->objects[j], "[kernel]") ? " " : "",
				s->objects && strcmp(s->objects[j], "[kernel]") ? s->objects[j] : "");
	}
	if (r->stacks.n > o->nstacks)
		fprintf(f, "        (%zu more stacks)\n", r->stacks.n - o->nstacks);
}

static void print_row(uint64_t count, uint64_t total, uint64_t offcpu, uint64_t max,
		      const char *wait, const char *caller, FILE *f)
{
	char d1[32], d2[32];

	fprintf(f, "%10" PRIu64 " %6.1f%% %10s %10s  %-13s %s\n", count, pct(count, total),
		fmt_duration(offcpu, d1, sizeof(d1)), fmt_duration(max, d2, sizeof(d2)),
		wait ? wait : "-", caller);
}

static void print_columns(FILE *f)
{
	fprintf(f, "%10s %7s %10s %10s  %-13s %s\n", "COUNT", "SHARE", "OFF-CPU", "MAX", "WAIT",
		"CALLER");
}

/* --by comm: every comm with its callers. */
static void print_by_comm(const struct sp_sched_view *v, const struct render_opts *o, FILE *f)
{
	struct sp_comm_list all = { 0 };

	for (size_t i = 0; i < v->nrows; i++)
		for (size_t j = 0; j < v->rows[i].comms.n; j++) {
			const struct sp_comm_stat *c = &v->rows[i].comms.v[j];

			sp_comm_list_add(&all, c->comm, c->count, c->time_ns, c->max_ns);
		}
	sp_comm_list_sort(&all);
	for (size_t k = 0; k < all.n && (!o->nrows || k < o->nrows); k++) {
		const struct sp_comm_stat *c = &all.v[k];
		unsigned int shown = 0;

		fprintf(f, "\n%s: %" PRIu64 " schedules (%.1f%%)\n", c->comm, c->count,
			pct(c->count, v->total));
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
	for (size_t i = 0; i < all.n; i++)
		free(all.v[i].comm);
	free(all.v);
}

static void print_sched(const struct sp_run *run, const struct render_opts *o, FILE *f)
{
	const struct sp_sched_view *v = &run->sched;
	size_t n = v->nrows;

	fprintf(f, "\nschedules: %" PRIu64 " total, %" PRIu64 " voluntary (%.1f%%), %" PRIu64
		   " preempted (%.1f%%)",
		v->total, v->voluntary, pct(v->voluntary, v->total), v->preempted,
		pct(v->preempted, v->total));
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
	if (o->group == SP_GROUP_COMM) {
		print_by_comm(v, o, f);
		return;
	}
	print_columns(f);
	if (o->nrows && n > o->nrows)
		n = o->nrows;
	for (size_t i = 0; i < n; i++) {
		const struct sp_sched_row *r = &v->rows[i];

		print_row(r->count, v->total, r->offcpu_ns, r->max_ns, r->wait, r->caller, f);
		if (o->stacks)
			print_stacks(r, o, f);
	}
	if (n < v->nrows)
		fprintf(f, "  (%zu more rows: -n 0 shows all)\n", v->nrows - n);
}

int format_table(const struct sp_run *run, const struct render_opts *opts, FILE *f)
{
	print_header(run, f);
	if (run->sched.present && (opts->views & SP_VIEW_SCHED))
		print_sched(run, opts, f);
	return 0;
}
