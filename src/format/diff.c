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
#include "diff.h"
#include "json_writer.h"
#include "util.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return b > INT64_MAX || a > INT64_MAX - b ? INT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return b && a > INT64_MAX / b ? INT64_MAX : a * b;
}

int64_t sp_diff_delta(uint64_t a, uint64_t b)
{
	if (a > INT64_MAX)
		a = INT64_MAX;
	if (b > INT64_MAX)
		b = INT64_MAX;
	return (int64_t)b - (int64_t)a;
}

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
};

static int ent_add(struct ents *e, const char *name, const char *detail, const char *extra,
		   bool side_b, uint64_t v)
{
	if (grow((void **)&e->v, &e->cap, e->n + 1, sizeof(*e->v)))
		return -ENOMEM;
	e->v[e->n++] = (struct ent){ name, detail, extra, side_b, v };
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
			if (grow((void **)&dv->rows, &dv->cap, dv->nrows + 1, sizeof(*dv->rows)))
				return -ENOMEM;
			dv->rows[dv->nrows++] = (struct sp_diff_row){
				.name = x->name, .detail = x->detail, .extra = x->extra
			};
		}
		r = &dv->rows[dv->nrows - 1];
		if (x->side_b) {
			r->in_b = true;
			r->b = sat_add(r->b, x->v);
		} else {
			r->in_a = true;
			r->a = sat_add(r->a, x->v);
		}
	}
	if (dv->nrows > 1)
		qsort(dv->rows, dv->nrows, sizeof(*dv->rows), cmp_row);
	return 0;
}

/* Adds one run's rows of a view to e, and returns its total. */
static int add_sched(const struct sp_run *run, bool side_b, enum sp_value value,
		     struct ents *e, uint64_t *ret_total)
{
	const struct sp_sched_view *v = &run->sched;
	uint64_t time = 0;
	int err = 0;

	for (size_t i = 0; !err && i < v->nrows; i++) {
		const struct sp_sched_row *r = &v->rows[i];

		time = sat_add(time, r->offcpu_ns);
		err = ent_add(e, r->caller, r->wait, NULL, side_b,
			      value == SP_VALUE_TIME ? r->offcpu_ns : r->count);
	}
	*ret_total = value == SP_VALUE_TIME ? time : v->total;
	return err;
}

static int add_profile(const struct sp_run *run, bool side_b, enum sp_value value,
		       struct ents *e, uint64_t *ret_total)
{
	const struct sp_profile_view *v = &run->profile;
	uint64_t period = value == SP_VALUE_TIME ? (v->hz ? NSEC_PER_SEC / v->hz : 0) : 1;
	int err = 0;

	for (size_t i = 0; !err && i < v->nrows; i++)
		err = ent_add(e, v->rows[i].function, v->rows[i].object, NULL, side_b,
			      sat_mul(v->rows[i].samples, period));
	*ret_total = sat_mul(v->target, period);
	return err;
}

static int add_locks(const struct sp_run *run, bool side_b, enum sp_value value,
		     struct ents *e, uint64_t *ret_total)
{
	const struct sp_lock_view *v = &run->locks;
	uint64_t time = 0;
	int err = 0;

	for (size_t i = 0; !err && i < v->nrows; i++) {
		const struct sp_lock_row *r = &v->rows[i];

		time = sat_add(time, r->wait_ns);
		err = ent_add(e, r->caller, r->kind, r->lock, side_b,
			      value == SP_VALUE_TIME ? r->wait_ns : r->count);
	}
	*ret_total = value == SP_VALUE_TIME ? time : v->total;
	return err;
}

static int add_sleepers(const struct sp_run *run, bool side_b, enum sp_value value,
			struct ents *e, uint64_t *ret_total)
{
	const struct sp_lock_view *v = &run->locks;
	uint64_t total = 0;
	int err = 0;

	for (size_t i = 0; !err && i < v->nsleepers; i++) {
		const struct sp_sleeper_row *r = &v->sleepers[i];
		uint64_t x = value == SP_VALUE_TIME ? r->offcpu_ns : r->count;

		total = sat_add(total, x);
		err = ent_add(e, r->caller, r->kind, r->lock, side_b, x);
	}
	*ret_total = total;
	return err;
}

static const struct {
	unsigned int view;
	const char *key, *title, *column;
	int (*add)(const struct sp_run *run, bool side_b, enum sp_value value, struct ents *e,
		   uint64_t *ret_total);
} diff_views[] = {
	{ SP_VIEW_SCHED, "schedules", "schedules by caller", "CALLER (WAIT)", add_sched },
	{ SP_VIEW_PROFILE, "profile", "profile by function", "FUNCTION (OBJECT)", add_profile },
	{ SP_VIEW_LOCKS, "locks", "lock contentions", "CALLER (KIND LOCK)", add_locks },
	{ SP_VIEW_LOCKS, "lock_sleepers", "sleeping-lock waits", "CALLER (KIND LOCK)",
	  add_sleepers },
};

static bool has_view(const struct sp_run *run, unsigned int view)
{
	switch (view) {
	case SP_VIEW_SCHED:
		return run->sched.present;
	case SP_VIEW_PROFILE:
		return run->profile.present;
	case SP_VIEW_LOCKS:
		return run->locks.present;
	default:
		return false;
	}
}

int sp_diff_build(const struct sp_run *a, const struct sp_run *b, unsigned int views,
		  enum sp_value value, struct sp_diff *ret)
{
	struct ents e = { 0 };
	int err = 0;

	memset(ret, 0, sizeof(*ret));
	ret->value = value;
	ret->a = a;
	ret->b = b;
	for (size_t i = 0; !err && i < ARRAY_SIZE(diff_views); i++) {
		struct sp_diff_view *dv;
		unsigned int view = diff_views[i].view;

		if (!(views & view) || (!has_view(a, view) && !has_view(b, view)))
			continue;
		dv = &ret->views[ret->nviews++];
		dv->view = view;
		dv->key = diff_views[i].key;
		dv->title = diff_views[i].title;
		dv->column = diff_views[i].column;
		dv->in_a = has_view(a, view);
		dv->in_b = has_view(b, view);
		e.n = 0;
		if (dv->in_a)
			err = diff_views[i].add(a, false, value, &e, &dv->a_total);
		if (!err && dv->in_b)
			err = diff_views[i].add(b, true, value, &e, &dv->b_total);
		if (!err)
			err = merge(dv, &e);
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

static void put_count(const char *label, uint64_t a, uint64_t b, FILE *f)
{
	put_change(label, a, b, SP_VALUE_COUNT, f);
}

static void put_run_line(const char *tag, const char *name, const struct sp_run *run, FILE *f)
{
	const struct sp_target_info *t = &run->target;

	fprintf(f, "%s: %s  ", tag, name);
	if (t->mode == SP_TARGET_COMMAND) {
		fprintf(f, "command: %s", t->command ? t->command : "?");
		if (t->exit_status >= 0)
			fprintf(f, " (exit %d)", t->exit_status);
	} else if (t->mode == SP_TARGET_PIDS) {
		fputs("pids:", f);
		for (size_t i = 0; i < t->npids; i++)
			fprintf(f, "%s%d", i ? "," : " ", t->pids[i]);
	} else {
		fputs("system-wide", f);
	}
	fprintf(f, "  [%s, %s, %d CPUs]\n", run->kernel ? run->kernel : "?",
		run->hostname ? run->hostname : "?", run->ncpus);
}

static void put_summary(const struct sp_diff *d, FILE *f)
{
	const struct sp_run *a = d->a, *b = d->b;
	const struct sp_target_info *ta = &a->target, *tb = &b->target;

	put_change("elapsed", a->elapsed_ns, b->elapsed_ns, SP_VALUE_TIME, f);
	if (ta->has_rusage && tb->has_rusage) {
		uint64_t ca = sat_add(ta->user_ns, ta->sys_ns);
		uint64_t cb = sat_add(tb->user_ns, tb->sys_ns);

		put_change("user", ta->user_ns, tb->user_ns, SP_VALUE_TIME, f);
		put_change("sys", ta->sys_ns, tb->sys_ns, SP_VALUE_TIME, f);
		put_change("CPU time", ca, cb, SP_VALUE_TIME, f);
		fprintf(f, "%-22s %.0f%% -> %.0f%% (of %d -> %d CPUs)\n", "CPU use",
			a->elapsed_ns ? 100.0 * (double)ca / (double)a->elapsed_ns : 0.0,
			b->elapsed_ns ? 100.0 * (double)cb / (double)b->elapsed_ns : 0.0, a->ncpus,
			b->ncpus);
	}
	if (a->sched.present && b->sched.present) {
		put_count("schedules", a->sched.total, b->sched.total, f);
		put_count("  voluntary", a->sched.voluntary, b->sched.voluntary, f);
		put_count("  preempted", a->sched.preempted, b->sched.preempted, f);
	}
	if (a->profile.present && b->profile.present) {
		put_count("profile samples", a->profile.total, b->profile.total, f);
		put_count("  target", a->profile.target, b->profile.target, f);
	}
	if (a->locks.present && b->locks.present)
		put_count("lock contentions", a->locks.total, b->locks.total, f);
}

static void put_row_name(const struct sp_diff_row *r, FILE *f)
{
	fputs(r->name ? r->name : "?", f);
	if (r->detail && r->extra)
		fprintf(f, " (%s %s)", r->detail, r->extra);
	else if (r->detail || r->extra)
		fprintf(f, " (%s)", r->detail ? r->detail : r->extra);
	if (!r->in_a)
		fputs("  [only in B]", f);
	else if (!r->in_b)
		fputs("  [only in A]", f);
}

static const char *value_label(const struct sp_diff *d, const struct sp_diff_view *dv)
{
	if (d->value == SP_VALUE_COUNT)
		return "count";
	if (dv->view == SP_VIEW_PROFILE)
		return "CPU time";
	if (dv->view == SP_VIEW_LOCKS && !strcmp(dv->key, "locks"))
		return "wait time";
	return "off-CPU time";
}

static void put_view(const struct sp_diff *d, const struct sp_diff_view *dv, unsigned int nrows,
		     FILE *f)
{
	size_t n = dv->nrows;
	char c1[32], c2[32], c3[48];

	fprintf(f, "\n%s (%s): ", dv->title, value_label(d, dv));
	if (!dv->in_a || !dv->in_b) {
		fprintf(f, "only in %s\n", dv->in_a ? "A" : "B");
	} else {
		fprintf(f, "%s -> %s", fmt_value(dv->a_total, d->value, c1, sizeof(c1)),
			fmt_value(dv->b_total, d->value, c2, sizeof(c2)));
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
			r->in_a ? fmt_value(r->a, d->value, c1, sizeof(c1)) : "-",
			r->in_b ? fmt_value(r->b, d->value, c2, sizeof(c2)) : "-",
			fmt_delta(delta, d->value, c3, sizeof(c3)));
		if (dv->a_total)
			fprintf(f, "%+7.1f%%  ", pct_of(delta, dv->a_total));
		else
			fprintf(f, "%8s  ", "-");
		put_row_name(r, f);
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
		put_view(d, &d->views[i], o->nrows, f);
	if (!d->nviews)
		fputs("\nno view to compare: neither run has one of the selected views\n", f);
	return ferror(f) ? -EIO : 0;
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

static void jw_run(struct json_writer *w, const char *key, const char *file, const struct sp_run *r)
{
	static const char *const modes[] = { "system", "pids", "command" };

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
	int err;

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
	if (a->sched.present && b->sched.present) {
		jw_change(w, "schedules", a->sched.total, b->sched.total);
		jw_change(w, "voluntary", a->sched.voluntary, b->sched.voluntary);
		jw_change(w, "preempted", a->sched.preempted, b->sched.preempted);
	}
	if (a->profile.present && b->profile.present) {
		jw_change(w, "profile_samples", a->profile.total, b->profile.total);
		jw_change(w, "profile_target", a->profile.target, b->profile.target);
	}
	if (a->locks.present && b->locks.present)
		jw_change(w, "lock_contentions", a->locks.total, b->locks.total);
	jw_end_object(w);
	jw_name(w, "views");
	jw_start_array(w);
	for (size_t i = 0; i < d->nviews; i++) {
		const struct sp_diff_view *dv = &d->views[i];

		jw_start_object(w);
		jw_kv_string(w, "view", dv->key);
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
			if (dv->view == SP_VIEW_LOCKS)
				jw_kv_string(w, "lock", r->extra);
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
	return err;
}
