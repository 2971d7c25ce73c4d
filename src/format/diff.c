// SPDX-License-Identifier: BSD-2-Clause
/*
 * `schedprof diff A.json B.json`: two saved runs side by side (see diff.h). The rows of both
 * runs are sorted together by key and merged, then ranked by the absolute change. The
 * command (src/cli/diff_cmd.c) loads the runs, builds the diff and writes it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "format/diff.h"
#include "format/flame.h"
#include "base/json_writer.h"
#include "base/util.h"
#include "model/view.h"
#include "model/waitclass.h"

static double pct_of(int64_t delta, uint64_t total)
{
	return total ? 100.0 * (double)delta / (double)total : 0.0;
}

/* ---- building ---- */

struct ent {
	const char *name, *detail, *extra;
	bool side_b;
	uint64_t v;
};

struct ents {
	struct ent *v;
	size_t n, cap;
	bool side_b; /* the run whose rows are being added */
};

/* An sp_diff_add_fn (view.h). */
static int ent_add(void *ctx, const char *name, const char *detail, const char *extra, uint64_t v)
{
	struct ents *e = ctx;
	struct ent *x = SP_ARRAY_ADD(e->v, e->n, e->cap);

	if (!x)
		return -ENOMEM;
	*x = (struct ent){ name, detail, extra, e->side_b, v };
	return 0;
}

static int cmp_str(const char *a, const char *b)
{
	if (!a || !b)
		return !a - !b; /* NULL (no wait) sorts after any string */
	return strcmp(a, b);
}

static int cmp_key(const char *an, const char *ad, const char *ax, const char *bn,
		   const char *bd, const char *bx)
{
	int c = cmp_str(an, bn);

	if (!c)
		c = cmp_str(ad, bd);
	return c ? c : cmp_str(ax, bx);
}

static int cmp_ent(const void *pa, const void *pb)
{
	const struct ent *a = pa, *b = pb;

	return cmp_key(a->name, a->detail, a->extra, b->name, b->detail, b->extra);
}

static uint64_t abs_delta(const struct sp_diff_row *r)
{
	return r->a > r->b ? r->a - r->b : r->b - r->a;
}

static int cmp_row(const void *pa, const void *pb)
{
	const struct sp_diff_row *a = pa, *b = pb;
	uint64_t da = abs_delta(a), db = abs_delta(b);

	if (da != db)
		return da < db ? 1 : -1;
	if (a->a + a->b != b->a + b->b)
		return a->a + a->b < b->a + b->b ? 1 : -1;
	return cmp_key(a->name, a->detail, a->extra, b->name, b->detail, b->extra);
}

static int merge(struct sp_diff_view *dv, struct ents *e)
{
	if (e->n > 1)
		qsort(e->v, e->n, sizeof(*e->v), cmp_ent);
	for (size_t i = 0; i < e->n; i++) {
		const struct ent *x = &e->v[i];
		struct sp_diff_row *r;

		if (!i || cmp_ent(x, x - 1)) {
			r = SP_ARRAY_ADD(dv->rows, dv->nrows, dv->cap);
			if (!r)
				return -ENOMEM;
			*r = (struct sp_diff_row){ .name = x->name, .detail = x->detail,
						   .extra = x->extra };
		}
		r = &dv->rows[dv->nrows - 1];
		if (x->side_b) {
			r->in_b = true;
			r->b = sp_sat_add(r->b, x->v);
		} else {
			r->in_a = true;
			r->a = sp_sat_add(r->a, x->v);
		}
	}
	if (dv->nrows > 1)
		qsort(dv->rows, dv->nrows, sizeof(*dv->rows), cmp_row);
	return 0;
}

static const char *row_str(const char *row, size_t off)
{
	return off == SP_NONE ? NULL : *SP_CAT(row, off, char *);
}

/* Adds one run's rows of a diff table to e, and returns the total shares are of. */
static int add_rows(const struct sp_view_ops *v, const struct sp_diff_table *t,
		    const struct sp_run *run, enum sp_value value, struct ents *e,
		    uint64_t *ret_total)
{
	bool time = value == SP_VALUE_TIME || t->times;
	/* rows without times: count x the view's period, in time or count alike */
	uint64_t period = time && t->time_off == SP_NONE && v->period_ns ? v->period_ns(run) : 1;
	uint64_t sum = 0;
	const char *rows;
	size_t size, n = sp_view_rows(v, run, t->rows, &rows, &size);
	int err = 0;

	for (size_t i = 0; !err && i < n; i++) {
		const char *r = rows + i * size;
		uint64_t x = time && t->time_off != SP_NONE ? *SP_CAT(r, t->time_off, uint64_t)
			   : sp_sat_mul(*SP_CAT(r, t->count_off, uint64_t), period);

		sum = sp_sat_add(sum, x);
		err = ent_add(e, row_str(r, t->name_off), row_str(r, t->detail_off),
			      row_str(r, t->extra_off), x);
	}
	if (t->total_off == SP_NONE || (time && t->time_off != SP_NONE))
		*ret_total = sum;
	else
		*ret_total = sp_sat_mul(*SP_CAT(sp_view_cdata(run, v), t->total_off, uint64_t),
					period);
	return err;
}

int sp_diff_build(const struct sp_run *a, const struct sp_run *b, unsigned int views,
		  enum sp_value value, struct sp_diff *ret)
{
	struct ents e = { 0 };
	int err = 0;

	memset(ret, 0, sizeof(*ret));
	ret->value = value;
	ret->view_mask = views;
	ret->a = a;
	ret->b = b;
	for (size_t i = 0; !err && i < sp_nviews; i++) {
		const struct sp_view_ops *v = sp_views[i];
		bool in_a = sp_view_present(a, v), in_b = sp_view_present(b, v);

		if (!(views & v->bit) || (!in_a && !in_b))
			continue;
		for (size_t j = 0; !err && j < v->ndiff && ret->nviews < SP_DIFF_MAX_VIEWS; j++) {
			const struct sp_diff_table *t = &v->diff[j];
			struct sp_diff_view *dv = &ret->views[ret->nviews++];

			dv->view = v->bit;
			dv->table = t;
			dv->key = t->key;
			dv->title = t->title;
			dv->column = t->column;
			dv->value = t->times ? SP_VALUE_TIME : value;
			dv->in_a = in_a;
			dv->in_b = in_b;
			e.n = 0;
			e.side_b = false;
			if (in_a)
				err = add_rows(v, t, a, dv->value, &e, &dv->a_total);
			e.side_b = true;
			if (!err && in_b)
				err = add_rows(v, t, b, dv->value, &e, &dv->b_total);
			if (!err)
				err = merge(dv, &e);
			/* a view's further tables only when a run has rows there (older runs none) */
			if (!err && j && !dv->nrows)
				ret->nviews--;
		}
	}
	free(e.v);
	return err;
}

void sp_diff_free(struct sp_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nviews; i++)
		free(d->views[i].rows);
	memset(d, 0, sizeof(*d));
}

/* ---- table ---- */

static const char *fmt_value(uint64_t v, enum sp_value value, char *buf, size_t len)
{
	if (value == SP_VALUE_TIME)
		return fmt_duration(v, buf, len);
	snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

static const char *fmt_delta(int64_t d, enum sp_value value, char *buf, size_t len)
{
	char tmp[32];
	uint64_t mag = d < 0 ? -(uint64_t)d : (uint64_t)d;

	snprintf(buf, len, "%s%s", d < 0 ? "-" : d > 0 ? "+" : "",
		 fmt_value(mag, value, tmp, sizeof(tmp)));
	return buf;
}

/* "36099 -> 1829 (-94.9%)" */
static void put_change(const char *label, uint64_t a, uint64_t b, enum sp_value value, FILE *f)
{
	char da[32], db[32];
	int64_t d = sp_diff_delta(a, b);

	fprintf(f, "%-22s %s -> %s", label, fmt_value(a, value, da, sizeof(da)),
		fmt_value(b, value, db, sizeof(db)));
	if (a)
		fprintf(f, " (%+.1f%%)\n", pct_of(d, a));
	else
		fprintf(f, "%s\n", b ? " (new)" : "");
}

static void put_run_line(const char *tag, const char *name, const struct sp_run *run, FILE *f)
{
	fprintf(f, "%s: %s  ", tag, name);
	sp_print_target(&run->target, f);
	fprintf(f, "  [%s, %s, %d CPUs]\n", run->kernel ? run->kernel : "?",
		run->hostname ? run->hostname : "?", run->ncpus);
}

/* ---- the budget and the parallelism, when both runs have them ---- */

static bool have_budgets(const struct sp_diff *d)
{
	return (d->view_mask & SP_VIEW_SCHED) && d->a->sched.present && d->b->sched.present &&
	       d->a->sched.budget.present && d->b->sched.budget.present;
}

static bool have_timelines(const struct sp_diff *d)
{
	return (d->view_mask & SP_VIEW_TIMELINE) && d->a->timeline.present &&
	       d->b->timeline.present;
}

static uint64_t task_time(const struct sp_budget *b)
{
	return sp_sat_add(sp_sat_add(b->oncpu_ns, b->runq_ns), b->blocked_ns);
}

/* The wait classes either budget has time in. */
static bool class_shown(const struct sp_budget *a, const struct sp_budget *b, enum sp_wait_class c)
{
	struct sp_budget_blocked ca = a->blocked, cb = b->blocked;

	return *sp_budget_slot(&ca, c) || *sp_budget_slot(&cb, c);
}

static uint64_t class_ns(const struct sp_budget *x, enum sp_wait_class c)
{
	struct sp_budget_blocked cx = x->blocked;

	return *sp_budget_slot(&cx, c);
}

/* The throttled part of x's RUNQ (never more than RUNQ). */
static uint64_t throttled(const struct sp_budget *x)
{
	return x->throttled_ns < x->runq_ns ? x->throttled_ns : x->runq_ns;
}

static void put_budget(const struct sp_budget *a, const struct sp_budget *b, FILE *f)
{
	char label[40];

	put_change("budget: tasks", a->tasks, b->tasks, SP_VALUE_COUNT, f);
	put_change("  task time", task_time(a), task_time(b), SP_VALUE_TIME, f);
	put_change("  on CPU", a->oncpu_ns, b->oncpu_ns, SP_VALUE_TIME, f);
	/* with a CPU quota in either run, the report's split: throttled, then the rest */
	if (a->throttled_ns || b->throttled_ns) {
		put_change("  throttled", throttled(a), throttled(b), SP_VALUE_TIME, f);
		put_change("  waiting for a CPU", a->runq_ns - throttled(a), b->runq_ns - throttled(b),
			   SP_VALUE_TIME, f);
	} else {
		put_change("  waiting for a CPU", a->runq_ns, b->runq_ns, SP_VALUE_TIME, f);
	}
	put_change("  blocked", a->blocked_ns, b->blocked_ns, SP_VALUE_TIME, f);
	for (int i = 0; i < SP_WC__MAX; i++) {
		enum sp_wait_class c = (enum sp_wait_class)i;

		if (!class_shown(a, b, c))
			continue;
		snprintf(label, sizeof(label), "    %s", sp_wait_class_name(c));
		put_change(label, class_ns(a, c), class_ns(b, c), SP_VALUE_TIME, f);
	}
}

/* One histogram of both runs: time with n tasks running (or runnable), A, B and the change. */
static int put_hist(const char *what, const struct sp_par_bucket *ha, size_t na,
		    const struct sp_par_bucket *hb, size_t nb, FILE *f)
{
	struct sp_par_pair *p;
	size_t np;
	char c1[32], c2[32], c3[48];
	int err = sp_par_pairs(ha, na, hb, nb, &p, &np);

	if (err)
		return err;
	fprintf(f, "%12s %12s %12s  TASKS %s\n", "A", "B", "DELTA", what);
	for (size_t i = 0; i < np; i++) {
		if (!p[i].a && !p[i].b)
			continue;
		fprintf(f, "%12s %12s %12s  %d\n", fmt_value(p[i].a, SP_VALUE_TIME, c1, sizeof(c1)),
			fmt_value(p[i].b, SP_VALUE_TIME, c2, sizeof(c2)),
			fmt_delta(sp_diff_delta(p[i].a, p[i].b), SP_VALUE_TIME, c3, sizeof(c3)),
			p[i].n);
	}
	free(p);
	return 0;
}

static int put_parallelism(const struct sp_diff *d, FILE *f)
{
	const struct sp_timeline *a = &d->a->timeline, *b = &d->b->timeline;
	double ma = sp_par_mean(a->running, a->nrunning), mb = sp_par_mean(b->running, b->nrunning);
	double qa = sp_par_mean(a->runnable, a->nrunnable);
	double qb = sp_par_mean(b->runnable, b->nrunnable);

	fprintf(f, "\nparallelism: mean running %.2f -> %.2f (%+.2f), mean runnable %.2f -> %.2f "
		   "(%+.2f)\n", ma, mb, mb - ma, qa, qb, qb - qa);
	return put_hist("RUNNING", a->running, a->nrunning, b->running, b->nrunning, f) ?:
	       put_hist("RUNNABLE", a->runnable, a->nrunnable, b->runnable, b->nrunnable, f);
}

static void put_summary(const struct sp_diff *d, FILE *f)
{
	const struct sp_run *a = d->a, *b = d->b;
	const struct sp_target_info *ta = &a->target, *tb = &b->target;

	put_change("elapsed", a->elapsed_ns, b->elapsed_ns, SP_VALUE_TIME, f);
	if (ta->has_rusage && tb->has_rusage) {
		uint64_t ca = sp_sat_add(ta->user_ns, ta->sys_ns);
		uint64_t cb = sp_sat_add(tb->user_ns, tb->sys_ns);

		put_change("user", ta->user_ns, tb->user_ns, SP_VALUE_TIME, f);
		put_change("sys", ta->sys_ns, tb->sys_ns, SP_VALUE_TIME, f);
		put_change("CPU time", ca, cb, SP_VALUE_TIME, f);
		fprintf(f, "%-22s %.0f%% -> %.0f%% (of %d -> %d CPUs)\n", "CPU use",
			a->elapsed_ns ? 100.0 * (double)ca / (double)a->elapsed_ns : 0.0,
			b->elapsed_ns ? 100.0 * (double)cb / (double)b->elapsed_ns : 0.0, a->ncpus,
			b->ncpus);
	}
	for (size_t i = 0; i < sp_nviews; i++) {
		const struct sp_view_ops *v = sp_views[i];

		if (!sp_view_present(a, v) || !sp_view_present(b, v))
			continue;
		for (size_t j = 0; j < v->ntotals; j++)
			put_change(v->totals[j].label, SP_VIEW_U64(a, v->totals[j].off),
				   SP_VIEW_U64(b, v->totals[j].off),
				   v->totals[j].time ? SP_VALUE_TIME : SP_VALUE_COUNT, f);
	}
	if (have_budgets(d))
		put_budget(&a->sched.budget, &b->sched.budget, f);
}

static void put_row_name(const struct sp_diff_row *r, const char *null_detail, FILE *f)
{
	fputs(r->name ? r->name : "?", f);
	if (!r->detail && !r->extra && null_detail)
		fprintf(f, " (%s)", null_detail);
	else if (r->detail && r->extra)
		fprintf(f, " (%s %s)", r->detail, r->extra);
	else if (r->detail || r->extra)
		fprintf(f, " (%s)", r->detail ? r->detail : r->extra);
	if (!r->in_a)
		fputs("  [only in B]", f);
	else if (!r->in_b)
		fputs("  [only in A]", f);
}

static const char *value_label(const struct sp_diff_view *dv)
{
	return dv->value == SP_VALUE_COUNT ? "count" : dv->table->time_label;
}

static void put_view(const struct sp_diff_view *dv, unsigned int nrows,
		     FILE *f)
{
	size_t n = dv->nrows;
	char c1[32], c2[32], c3[48];

	fprintf(f, "\n%s (%s): ", dv->title, value_label(dv));
	if (!dv->in_a || !dv->in_b) {
		fprintf(f, "only in %s\n", dv->in_a ? "A" : "B");
	} else {
		fprintf(f, "%s -> %s", fmt_value(dv->a_total, dv->value, c1, sizeof(c1)),
			fmt_value(dv->b_total, dv->value, c2, sizeof(c2)));
		if (dv->a_total)
			fprintf(f, " (%+.1f%%)", pct_of(sp_diff_delta(dv->a_total, dv->b_total),
							 dv->a_total));
		fputc('\n', f);
	}
	fprintf(f, "%12s %12s %12s %8s  %s\n", "A", "B", "DELTA", "OF A", dv->column);
	if (nrows && n > nrows)
		n = nrows;
	for (size_t i = 0; i < n; i++) {
		const struct sp_diff_row *r = &dv->rows[i];
		int64_t delta = sp_diff_delta(r->a, r->b);

		fprintf(f, "%12s %12s %12s ",
			r->in_a ? fmt_value(r->a, dv->value, c1, sizeof(c1)) : "-",
			r->in_b ? fmt_value(r->b, dv->value, c2, sizeof(c2)) : "-",
			fmt_delta(delta, dv->value, c3, sizeof(c3)));
		if (dv->a_total)
			fprintf(f, "%+7.1f%%  ", pct_of(delta, dv->a_total));
		else
			fprintf(f, "%8s  ", "-");
		put_row_name(r, dv->table->null_detail, f);
		fputc('\n', f);
	}
	if (n < dv->nrows)
		fprintf(f, "  (%zu more rows: -n 0 shows all)\n", dv->nrows - n);
}

int sp_diff_write_table(const struct sp_diff *d, const struct sp_diff_opts *o, FILE *f)
{
	put_run_line("A", o->name_a, d->a, f);
	put_run_line("B", o->name_b, d->b, f);
	fputc('\n', f);
	put_summary(d, f);
	for (size_t i = 0; i < d->nviews; i++)
		put_view(&d->views[i], o->nrows, f);
	if (have_timelines(d) && put_parallelism(d, f))
		return -ENOMEM;
	if (!d->nviews)
		fputs("\nno view to compare: neither run has one of the selected views\n", f);
	return ferror(f) ? -EIO : 0;
}

/* ---- html: differential flame graphs (format_flame.c) ---- */

int sp_diff_write_html(const struct sp_diff *d, const struct sp_diff_opts *o, FILE *f)
{
	return flame_diff_html(d->a, d->b, d->view_mask, d->value, o->name_a, o->name_b, f);
}

/* ---- json ---- */

static void jw_change(struct json_writer *w, const char *name, uint64_t a, uint64_t b)
{
	int64_t d = sp_diff_delta(a, b);

	jw_name(w, name);
	jw_start_object(w);
	jw_kv_uint(w, "a", a);
	jw_kv_uint(w, "b", b);
	jw_kv_int(w, "delta", d);
	if (a)
		jw_kv_double(w, "delta_pct", pct_of(d, a));
	else
		jw_kv_string(w, "delta_pct", NULL);
	jw_end_object(w);
}

static void jw_budget(struct json_writer *w, const struct sp_budget *a, const struct sp_budget *b)
{
	jw_name(w, "budget");
	jw_start_object(w);
	jw_change(w, "tasks", a->tasks, b->tasks);
	jw_change(w, "task_ns", task_time(a), task_time(b));
	jw_change(w, "oncpu_ns", a->oncpu_ns, b->oncpu_ns);
	jw_change(w, "runq_ns", a->runq_ns, b->runq_ns);
	if (a->throttled_ns || b->throttled_ns) /* (of runq_ns) */
		jw_change(w, "throttled_ns", throttled(a), throttled(b));
	jw_change(w, "blocked_ns", a->blocked_ns, b->blocked_ns);
	jw_name(w, "blocked");
	jw_start_object(w);
	for (int i = 0; i < SP_WC__MAX; i++) {
		enum sp_wait_class c = (enum sp_wait_class)i;

		jw_change(w, sp_wait_class_name(c), class_ns(a, c), class_ns(b, c));
	}
	jw_end_object(w);
	jw_end_object(w);
}

static void jw_mean(struct json_writer *w, const char *name, double a, double b)
{
	jw_name(w, name);
	jw_start_object(w);
	jw_kv_double(w, "a", a);
	jw_kv_double(w, "b", b);
	jw_kv_double(w, "delta", b - a);
	jw_end_object(w);
}

static int jw_hist(struct json_writer *w, const char *name, const struct sp_par_bucket *ha,
		   size_t na, const struct sp_par_bucket *hb, size_t nb)
{
	struct sp_par_pair *p;
	size_t np;
	int err = sp_par_pairs(ha, na, hb, nb, &p, &np);

	if (err)
		return err;
	jw_name(w, name);
	jw_start_array(w);
	for (size_t i = 0; i < np; i++) {
		if (!p[i].a && !p[i].b)
			continue;
		jw_start_object(w);
		jw_kv_int(w, name, p[i].n);
		jw_kv_uint(w, "a", p[i].a);
		jw_kv_uint(w, "b", p[i].b);
		jw_kv_int(w, "delta", sp_diff_delta(p[i].a, p[i].b));
		jw_end_object(w);
	}
	jw_end_array(w);
	free(p);
	return 0;
}

static int jw_parallelism(struct json_writer *w, const struct sp_timeline *a,
			  const struct sp_timeline *b)
{
	int err;

	jw_name(w, "parallelism");
	jw_start_object(w);
	jw_mean(w, "mean_running", sp_par_mean(a->running, a->nrunning),
		sp_par_mean(b->running, b->nrunning));
	jw_mean(w, "mean_runnable", sp_par_mean(a->runnable, a->nrunnable),
		sp_par_mean(b->runnable, b->nrunnable));
	err = jw_hist(w, "running", a->running, a->nrunning, b->running, b->nrunning) ?:
	      jw_hist(w, "runnable", a->runnable, a->nrunnable, b->runnable, b->nrunnable);
	jw_end_object(w);
	return err;
}

static void jw_run(struct json_writer *w, const char *key, const char *file, const struct sp_run *r)
{
	static const char *const modes[] = { "system", "pids", "command", "cgroup", "tids" };

	jw_name(w, key);
	jw_start_object(w);
	jw_kv_string(w, "file", file);
	jw_kv_string(w, "mode", modes[r->target.mode]);
	if (r->target.mode == SP_TARGET_COMMAND)
		jw_kv_string(w, "command", r->target.command);
	jw_kv_string(w, "kernel", r->kernel);
	jw_kv_string(w, "hostname", r->hostname);
	jw_kv_int(w, "ncpus", r->ncpus);
	jw_kv_uint(w, "elapsed_ns", r->elapsed_ns);
	if (r->target.has_rusage) {
		jw_kv_uint(w, "user_ns", r->target.user_ns);
		jw_kv_uint(w, "sys_ns", r->target.sys_ns);
	}
	jw_end_object(w);
}

static void jw_opt_uint(struct json_writer *w, const char *name, bool have, uint64_t v)
{
	jw_name(w, name);
	if (have)
		jw_uint(w, v);
	else
		jw_null(w);
}

int sp_diff_write_json(const struct sp_diff *d, const struct sp_diff_opts *o, FILE *f)
{
	const struct sp_run *a = d->a, *b = d->b;
	struct json_writer *w = jw_new(f, true);
	int err, perr = 0;

	if (!w)
		return -errno;
	jw_start_object(w);
	jw_kv_string(w, "schema", "schedprof-diff/1");
	jw_kv_string(w, "value", d->value == SP_VALUE_TIME ? "time" : "count");
	jw_run(w, "a", o->name_a, a);
	jw_run(w, "b", o->name_b, b);
	jw_name(w, "summary");
	jw_start_object(w);
	jw_change(w, "elapsed_ns", a->elapsed_ns, b->elapsed_ns);
	if (a->target.has_rusage && b->target.has_rusage) {
		jw_change(w, "user_ns", a->target.user_ns, b->target.user_ns);
		jw_change(w, "sys_ns", a->target.sys_ns, b->target.sys_ns);
	}
	for (size_t i = 0; i < sp_nviews; i++) {
		const struct sp_view_ops *v = sp_views[i];

		if (!sp_view_present(a, v) || !sp_view_present(b, v))
			continue;
		for (size_t j = 0; j < v->ntotals; j++)
			jw_change(w, v->totals[j].key, SP_VIEW_U64(a, v->totals[j].off),
				  SP_VIEW_U64(b, v->totals[j].off));
	}
	if (have_budgets(d))
		jw_budget(w, &a->sched.budget, &b->sched.budget);
	if (have_timelines(d))
		perr = jw_parallelism(w, &a->timeline, &b->timeline);
	jw_end_object(w);
	jw_name(w, "views");
	jw_start_array(w);
	for (size_t i = 0; i < d->nviews; i++) {
		const struct sp_diff_view *dv = &d->views[i];

		jw_start_object(w);
		jw_kv_string(w, "view", dv->key);
		if (dv->value != d->value) /* rows of times only (the critical path) */
			jw_kv_string(w, "value", "time");
		jw_kv_bool(w, "in_a", dv->in_a);
		jw_kv_bool(w, "in_b", dv->in_b);
		jw_change(w, "total", dv->a_total, dv->b_total);
		jw_name(w, "rows");
		jw_start_array(w);
		for (size_t j = 0; j < dv->nrows; j++) {
			const struct sp_diff_row *r = &dv->rows[j];
			int64_t delta = sp_diff_delta(r->a, r->b);

			jw_start_object(w);
			jw_kv_string(w, "name", r->name);
			jw_kv_string(w, "detail", r->detail);
			if (dv->table->extra_key)
				jw_kv_string(w, dv->table->extra_key, r->extra);
			jw_opt_uint(w, "a", r->in_a, r->a);
			jw_opt_uint(w, "b", r->in_b, r->b);
			jw_kv_int(w, "delta", delta);
			if (dv->a_total)
				jw_kv_double(w, "delta_pct_of_a_total", pct_of(delta, dv->a_total));
			else
				jw_kv_string(w, "delta_pct_of_a_total", NULL);
			jw_end_object(w);
		}
		jw_end_array(w);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_end_object(w);
	err = jw_finish(w);
	jw_free(w);
	return perr ?: err;
}
