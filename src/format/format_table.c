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

/*
 * The first --stack-rows stacks of a row whose total is total (merged across the pids of a
 * comm): count, share, time_label and time when time_label is set, comm; then the frames with
 * every object but [kernel].
 */
static void print_stack_list(const struct sp_stack_list *stacks, uint64_t total,
			     const char *time_label, const struct render_opts *o, FILE *f)
{
	struct sp_stack_list merged;
	const struct sp_stack_list *l = &merged;
	char d[32];

	if (sp_stack_list_merge_pids(stacks, &merged))
		l = stacks; /* ENOMEM: by pid, rather than nothing */

	for (size_t i = 0; i < l->n && i < o->nstacks; i++) {
		const struct sp_stack_row *s = &l->v[i];

		fprintf(f, "        stack #%zu: %" PRIu64 " (%.1f%%), ", i + 1, s->count,
			pct(s->count, total));
		if (time_label)
			fprintf(f, "%s %s, ", time_label, fmt_duration(s->time_ns, d, sizeof(d)));
		fprintf(f, "comm %s\n", s->comm);
		for (size_t j = 0; j < s->nframes; j++) {
			const char *obj = s->objects ? s->objects[j] : "[kernel]";
			bool kernel = !strcmp(obj, "[kernel]");

			fprintf(f, "          %s%s%s\n", s->frames[j], kernel ? "" : " ", kernel ? "" : obj);
		}
	}
	if (l->n > o->nstacks)
		fprintf(f, "        (%zu more stacks)\n", l->n - o->nstacks);
	free(merged.v);
}

/* The rows shown of n: at most -n (0: all). */
static size_t rows_shown(size_t n, const struct render_opts *o)
{
	return o->nrows && n > o->nrows ? o->nrows : n;
}

static void print_more_rows(size_t shown, size_t n, FILE *f)
{
	if (shown < n)
		fprintf(f, "  (%zu more rows: -n 0 shows all)\n", n - shown);
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
	for (size_t k = 0; k < rows_shown(all.n, o); k++) {
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
	sp_comm_list_free(&all);
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
	n = rows_shown(v->nrows, o);
	for (size_t i = 0; i < n; i++) {
		const struct sp_sched_row *r = &v->rows[i];

		print_row(r->count, v->total, r->offcpu_ns, r->max_ns, r->wait, r->caller, f);
		if (o->stacks)
			print_stack_list(&r->stacks, r->count, "off-CPU", o, f);
	}
	print_more_rows(n, v->nrows, f);
}

/* ---- profile view ---- */

/* What the target samples are called in the header. */
static const char *profile_target_label(const struct sp_run *run)
{
	switch (run->target.mode) {
	case SP_TARGET_COMMAND:
		return "job";
	case SP_TARGET_PIDS:
		return "target";
	default:
		return "busy";
	}
}

static void print_profile_columns(FILE *f)
{
	fprintf(f, "%10s %7s  %-36s %s\n", "SAMPLES", "SHARE", "FUNCTION", "OBJECT");
}

static void print_profile_row(uint64_t n, uint64_t total, const char *function, const char *object,
			      FILE *f)
{
	fprintf(f, "%10" PRIu64 " %6.1f%%  %-36s %s\n", n, pct(n, total), function, object);
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
static void print_profile_by_comm(const struct sp_profile_view *v, const struct render_opts *o,
				  FILE *f)
{
	struct sp_comm_list all = { 0 };
	struct comm_entry *e = calloc(v->nrows ? v->nrows : 1, sizeof(*e));

	if (!e)
		return;
	for (size_t i = 0; i < v->nrows; i++)
		for (size_t j = 0; j < v->rows[i].comms.n; j++)
			sp_comm_list_add(&all, v->rows[i].comms.v[j].comm, v->rows[i].comms.v[j].count,
					 0, 0);
	sp_comm_list_sort(&all);
	for (size_t k = 0; k < rows_shown(all.n, o); k++) {
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
			pct(c->count, v->target));
		print_profile_columns(f);
		for (size_t i = 0; i < rows_shown(n, o); i++)
			print_profile_row(e[i].count, v->target, e[i].row->function, e[i].row->object, f);
		print_more_rows(rows_shown(n, o), n, f);
	}
	sp_comm_list_free(&all);
	free(e);
}

static void print_profile(const struct sp_run *run, const struct render_opts *o, FILE *f)
{
	const struct sp_profile_view *v = &run->profile;
	size_t n = v->nrows;

	fprintf(f, "\nprofile: %" PRIu64 " samples @ %u Hz on %d CPUs: cpu_idle %.1f%%, %s %.1f%%, "
		   "other %.1f%%\n",
		v->total, v->hz, v->cpus, pct(v->idle, v->total), profile_target_label(run),
		pct(v->target, v->total), pct(v->other, v->total));
	if (v->unsymbolized)
		fprintf(f, "  note: %" PRIu64 " of the %" PRIu64 " %s samples (%.1f%%) could not be "
			   "symbolized: they are counted under [unknown]\n",
			v->unsymbolized, v->target, profile_target_label(run),
			pct(v->unsymbolized, v->target));
	if (v->lost)
		fprintf(f, "  note: %" PRIu64 " samples are in the totals but in no row (the sample map "
			   "was full: raise --max-samples)\n",
			v->lost);
	if (v->missing_stacks)
		fprintf(f, "  note: %" PRIu64 " samples have no full stack (the stack map was full: "
			   "raise --max-stacks); they are counted in every total\n",
			v->missing_stacks);
	if (v->user_truncated)
		fprintf(f, "  note: %" PRIu64 " samples have a truncated user stack (code without frame "
			   "pointers, or deeper than the frames kept)\n",
			v->user_truncated);
	if (o->stacks && !v->callchains)
		fprintf(f, "  note: no stacks were recorded (trace with -g)\n");
	if (o->group == SP_GROUP_COMM) {
		print_profile_by_comm(v, o, f);
		return;
	}
	print_profile_columns(f);
	n = rows_shown(v->nrows, o);
	for (size_t i = 0; i < n; i++) {
		const struct sp_profile_row *r = &v->rows[i];

		print_profile_row(r->samples, v->target, r->function, r->object, f);
		if (o->stacks)
			print_stack_list(&r->stacks, r->samples, NULL, o, f); /* kernel, then user */
	}
	print_more_rows(n, v->nrows, f);
}

/* ---- locks view ---- */

static void print_lock_stacks(const struct sp_lock_row *r, const struct render_opts *o, FILE *f)
{
	char d[32];

	fprintf(f, "        lock %s named by %s\n", r->lock, r->source ? r->source : "address");
	if (r->owners.n) {
		fprintf(f, "        held by:");
		for (size_t i = 0; i < r->owners.n && i < o->nstacks; i++)
			fprintf(f, "%s %s (%" PRIu64 ", %s)", i ? "," : "", r->owners.v[i].comm,
				r->owners.v[i].count,
				fmt_duration(r->owners.v[i].time_ns, d, sizeof(d)));
		if (r->owners.n > o->nstacks)
			fprintf(f, ", %zu more", r->owners.n - o->nstacks);
		fputc('\n', f);
	}
	print_stack_list(&r->stacks, r->count, "wait", o, f);
}

static int cmp_lock_ptr(const void *pa, const void *pb, void *key)
{
	return sp_lock_row_cmp(*(const struct sp_lock_row *const *)pa,
			       *(const struct sp_lock_row *const *)pb, *(enum sp_lock_sort *)key);
}

/* "dirlock: 8 tasks slept 1.900s in rwsem-write on inode.i_rwsem, from a / b" */
static void print_sleepers(const struct sp_lock_view *v, const struct render_opts *o, FILE *f)
{
	size_t n = rows_shown(v->ngroups, o);
	char d1[32], d2[32];

	if (!v->ngroups && !v->nsleepers)
		return;
	fprintf(f, "\nsleepers: time asleep in sleeping-lock slow paths, by process, kind and lock\n");
	for (size_t i = 0; i < n; i++) {
		const struct sp_sleeper_group *g = &v->groups[i];

		fprintf(f, "  %s: %" PRIu64 " task%s slept %s in %s on %s, from ", g->comm, g->tasks,
			g->tasks == 1 ? "" : "s", fmt_duration(g->offcpu_ns, d1, sizeof(d1)), g->kind,
			g->lock);
		for (size_t j = 0; j < g->callers.n && j < 4; j++)
			fprintf(f, "%s%s", j ? " / " : "", g->callers.v[j].comm);
		if (g->callers.n > 4)
			fprintf(f, " / %zu more", g->callers.n - 4);
		fprintf(f, "  (%" PRIu64 " sleep%s, max %s)\n", g->count, g->count == 1 ? "" : "s",
			fmt_duration(g->max_ns, d2, sizeof(d2)));
	}
	if (n < v->ngroups)
		fprintf(f, "  (%zu more: -n 0 shows all)\n", v->ngroups - n);
	if (v->ngroups)
		return;
	/* a saved run without groups: the per-caller rows */
	for (size_t i = 0; i < rows_shown(v->nsleepers, o); i++) {
		const struct sp_sleeper_row *r = &v->sleepers[i];

		fprintf(f, "  %" PRIu64 " task%s slept %s in %s on %s, from %s  (%" PRIu64 " sleeps, max %s)\n",
			r->tasks, r->tasks == 1 ? "" : "s", fmt_duration(r->offcpu_ns, d1, sizeof(d1)),
			r->kind, r->lock, r->caller, r->count, fmt_duration(r->max_ns, d2, sizeof(d2)));
	}
}

static void print_locks(const struct sp_run *run, const struct render_opts *o, FILE *f)
{
	static const char *const keys[] = { "wait", "count", "max" };
	const struct sp_lock_view *v = &run->locks;
	enum sp_lock_sort key = o->lock_sort;
	const struct sp_lock_row **rows;
	size_t n = v->nrows;
	char d1[32], d2[32], d3[32];

	if (!v->available) {
		fprintf(f, "\nlocks: unavailable: %s\n", v->unavailable ? v->unavailable : "?");
		return;
	}
	fprintf(f, "\nlocks: %" PRIu64 " contentions", v->total);
	if (v->failed)
		fprintf(f, ", %" PRIu64 " gave up (%.1f%%)", v->failed, pct(v->failed, v->total));
	fprintf(f, ", ranked by %s\n", keys[key % 3]);
	if (v->missing_stacks)
		fprintf(f, "  note: %" PRIu64 " contentions have no kernel stack (unreadable or the "
			   "stack map was full: raise --max-stacks); they are counted in every total\n",
			v->missing_stacks);
	if (v->lost)
		fprintf(f, "  note: %" PRIu64 " contentions are in the totals but in no row (the row "
			   "map was full: raise --max-callers)\n", v->lost);
	if (v->missed || v->unpaired)
		fprintf(f, "  note: %" PRIu64 " lock events were skipped by the kernel (a program "
			   "already running on that CPU) and %" PRIu64 " begins had no end\n",
			v->missed, v->unpaired);
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		rows[i] = &v->rows[i];
	if (n > 1)
		qsort_r(rows, n, sizeof(*rows), cmp_lock_ptr, &key);
	n = rows_shown(n, o);
	fprintf(f, "%10s %10s %10s %10s  %-13s %-31s %s\n", "COUNT", "WAIT", "AVG", "MAX", "KIND",
		"LOCK", "CALLER");
	for (size_t i = 0; i < n; i++) {
		const struct sp_lock_row *r = rows[i];

		fprintf(f, "%10" PRIu64 " %10s %10s %10s  %-13s %-31s %s", r->count,
			fmt_duration(r->wait_ns, d1, sizeof(d1)),
			fmt_duration(r->count ? r->wait_ns / r->count : 0, d2, sizeof(d2)),
			fmt_duration(r->max_ns, d3, sizeof(d3)), r->kind, r->lock, r->caller);
		if (r->failed)
			fprintf(f, "  (%" PRIu64 " gave up)", r->failed);
		fputc('\n', f);
		if (o->lock_stacks)
			print_lock_stacks(r, o, f);
	}
	print_more_rows(n, v->nrows, f);
	free(rows);
	print_sleepers(v, o, f);
}

int format_table(const struct sp_run *run, const struct render_opts *opts, FILE *f)
{
	print_header(run, f);
	if (run->sched.present && (opts->views & SP_VIEW_SCHED))
		print_sched(run, opts, f);
	if (run->profile.present && (opts->views & SP_VIEW_PROFILE))
		print_profile(run, opts, f);
	if (run->locks.present && (opts->views & SP_VIEW_LOCKS))
		print_locks(run, opts, f);
	return 0;
}
