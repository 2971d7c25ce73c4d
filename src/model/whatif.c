// SPDX-License-Identifier: BSD-2-Clause
/*
 * `report --what-if` (whatif.h): the options, and the replays of each case on each CPU count.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/depgraph.h"
#include "model/replay.h"
#include "base/util.h"
#include "model/waitclass.h"
#include "model/whatif.h"

static int why_fmt(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int why_fmt(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (why && len)
		vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int cmp_int(const void *pa, const void *pb)
{
	int a = *(const int *)pa, b = *(const int *)pb;

	return (a > b) - (a < b);
}

static int parse_cpus(struct sp_whatif_opts *o, const char *list, char *why, size_t len)
{
	const char *p = list;

	if (!*p)
		return why_fmt(why, len, "cpus= needs a list of CPU counts, e.g. cpus=1,2,4");
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);
		int *n;

		if (end == p || (*end && *end != ',') || v < 1 || v > SP_WHATIF_MAX_CPUS || *p == '+')
			return why_fmt(why, len, "cpus=%s: each CPU count is a number from 1 to %d",
				       list, SP_WHATIF_MAX_CPUS);
		n = realloc(o->cpus, (o->ncpus + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		o->cpus = n;
		o->cpus[o->ncpus++] = (int)v;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return why_fmt(why, len, "cpus=%s: a CPU count after the last comma", list);
	}
	qsort(o->cpus, o->ncpus, sizeof(*o->cpus), cmp_int);
	size_t k = 0;
	for (size_t i = 0; i < o->ncpus; i++)
		if (!k || o->cpus[k - 1] != o->cpus[i])
			o->cpus[k++] = o->cpus[i];
	o->ncpus = k;
	if (k > SP_WHATIF_MAX_COUNTS)
		return why_fmt(why, len, "cpus=: at most %d CPU counts (each is a replay)",
			       SP_WHATIF_MAX_COUNTS);
	return 0;
}

int sp_whatif_parse(struct sp_whatif_opts *o, const char *arg, char *why, size_t len)
{
	if (!strncmp(arg, "cpus=", 5))
		return parse_cpus(o, arg + 5, why, len);
	if (!strncmp(arg, "without=", 8)) {
		char **v;

		if (!arg[8])
			return why_fmt(why, len, "without= needs a wait class, a caller or KIND:LOCK");
		if (o->nwithout >= SP_WHATIF_MAX_WITHOUT)
			return why_fmt(why, len, "at most %d without= (each is a replay per CPU count)",
				       SP_WHATIF_MAX_WITHOUT);
		v = realloc(o->without, (o->nwithout + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		o->without = v;
		o->without[o->nwithout] = xstrdup(arg + 8);
		if (!o->without[o->nwithout])
			return -ENOMEM;
		o->nwithout++;
		return 0;
	}
	return why_fmt(why, len, "--what-if %s: give cpus=LIST or without=CLASS|CALLER|KIND:LOCK",
		       arg);
}

void sp_whatif_opts_free(struct sp_whatif_opts *o)
{
	for (size_t i = 0; i < o->nwithout; i++)
		free(o->without[i]);
	free(o->without);
	free(o->cpus);
	memset(o, 0, sizeof(*o));
}

/* ---- which sleeps a without spec drops ---- */

enum spec_kind { SPEC_CLASS, SPEC_CALLER, SPEC_LOCK };

struct spec {
	enum spec_kind kind;
	enum sp_wait_class cls;
	const char *pat;       /* the caller pattern, or the lock's kind */
	const char **callers;  /* SPEC_LOCK: the callers that slept on the lock */
	size_t ncallers;
	uint64_t child;	       /* sleeps it matched that wait for a child */
};

static bool spec_matches(const struct spec *sp, const struct sp_tl_seg *s)
{
	switch (sp->kind) {
	case SPEC_CLASS:
		return sp_wait_class(s->caller, s->wait) == sp->cls;
	case SPEC_CALLER:
		return s->caller && name_matches(s->caller, sp->pat);
	default:
		if (!s->wait || !s->caller || strcmp(s->wait, sp->pat))
			return false;
		for (size_t i = 0; i < sp->ncallers; i++)
			if (!strcmp(sp->callers[i], s->caller))
				return true;
		return false;
	}
}

static bool drop_seg(const struct sp_tl_seg *s, void *ctx)
{
	struct spec *sp = ctx;

	if (!spec_matches(sp, s))
		return false;
	if (sp_wait_class(s->caller, s->wait) == SP_WC_CHILD) {
		sp->child++;
		return false;
	}
	return true;
}

static int add_caller(struct spec *sp, const char *caller)
{
	const char **v;

	if (!caller)
		return 0;
	for (size_t i = 0; i < sp->ncallers; i++)
		if (!strcmp(sp->callers[i], caller))
			return 0;
	v = realloc(sp->callers, (sp->ncallers + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	sp->callers = v;
	sp->callers[sp->ncallers++] = caller;
	return 0;
}

/* The callers that slept on kind:lock, from the locks view's rows and sleepers. */
static int lock_callers(const struct sp_run *run, struct spec *sp, const char *kind,
			const char *lock)
{
	const struct sp_lock_view *v = &run->locks;
	int rc = 0;

	for (size_t i = 0; i < v->nrows && !rc; i++)
		if (v->rows[i].kind && v->rows[i].lock && !strcmp(v->rows[i].kind, kind) &&
		    !strcmp(v->rows[i].lock, lock))
			rc = add_caller(sp, v->rows[i].caller);
	for (size_t i = 0; i < v->nsleepers && !rc; i++)
		if (v->sleepers[i].kind && v->sleepers[i].lock &&
		    !strcmp(v->sleepers[i].kind, kind) && !strcmp(v->sleepers[i].lock, lock))
			rc = add_caller(sp, v->sleepers[i].caller);
	return rc;
}

static int parse_spec(const struct sp_run *run, const char *text, struct spec *sp, char **own,
		      char *why, size_t len)
{
	const char *colon = strchr(text, ':');

	memset(sp, 0, sizeof(*sp));
	*own = NULL;
	for (int c = 0; c < SP_WC__MAX; c++)
		if (!strcmp(text, sp_wait_class_name((enum sp_wait_class)c))) {
			if (c == SP_WC_CHILD)
				break;
			sp->kind = SPEC_CLASS;
			sp->cls = (enum sp_wait_class)c;
			return 0;
		}
	if (!strcmp(text, "child") || sp_wait_class(text, NULL) == SP_WC_CHILD)
		return why_fmt(why, len, "without=%s: a parent waits for its child to finish its "
			       "work, which no change to scheduling removes; give a lock, a pipe "
			       "or another wait", text);
	if (colon) {
		int rc;

		*own = xstrdup(text);
		if (!*own)
			return -ENOMEM;
		(*own)[colon - text] = '\0';
		sp->kind = SPEC_LOCK;
		sp->pat = *own;
		rc = lock_callers(run, sp, *own, *own + (colon - text) + 1);
		if (rc)
			return rc;
		if (!sp->ncallers)
			return why_fmt(why, len, "without=%s: no lock of that kind and name in the "
				       "run's locks view (trace with the locks view, see `report "
				       "--views locks`)", text);
		return 0;
	}
	sp->kind = SPEC_CALLER;
	sp->pat = text;
	return 0;
}

/* ---- the replays ---- */

static int predict(const struct sp_depgraph *g, const struct sp_whatif_opts *o,
		   const int *cpus, size_t ncpus, struct sp_whatif_case *c)
{
	struct sp_replay_result r;
	int rc;

	uint64_t slice = o->slice_ns ? o->slice_ns : SP_REPLAY_SLICE_NS;

	rc = sp_replay(g, 0, slice, &r);
	if (rc)
		return rc;
	c->cp_ns = r.wall_ns;
	c->work_ns = g->work_ns;
	c->preds = calloc(ncpus ? ncpus : 1, sizeof(*c->preds));
	if (!c->preds)
		return -ENOMEM;
	for (size_t i = 0; i < ncpus; i++) {
		struct sp_whatif_pred *p = &c->preds[i];
		uint64_t per = g->work_ns / (uint64_t)cpus[i];

		rc = sp_replay(g, cpus[i], slice, &r);
		if (rc)
			return rc;
		p->cpus = cpus[i];
		p->wall_ns = r.wall_ns;
		p->forced = r.forced;
		p->parallelism = sp_replay_parallelism(&r);
		p->cp_share = r.wall_ns ? (double)c->cp_ns / (double)r.wall_ns : 0;
		p->bound_ns = per > c->cp_ns ? per : c->cp_ns;
	}
	return 0;
}

static int traced_cpus(const struct sp_timeline *tl)
{
	uint64_t seen[SP_WHATIF_MAX_CPUS / 64] = { 0 };
	int n = 0;

	for (size_t i = 0; i < tl->nsegs; i++) {
		int cpu = tl->segs[i].cpu;

		if (tl->segs[i].state != SP_TL_RUNNING || cpu < 0 || cpu >= SP_WHATIF_MAX_CPUS)
			continue;
		if (!(seen[cpu / 64] & (1ULL << (cpu % 64)))) {
			seen[cpu / 64] |= 1ULL << (cpu % 64);
			n++;
		}
	}
	return n ? n : 1;
}

static int compute(const struct sp_run *run, const struct sp_whatif_opts *o,
		   struct sp_whatif *w, const int *cpus, size_t ncpus, char *why, size_t len)
{
	const struct sp_timeline *tl = &run->timeline;
	struct sp_depgraph g;
	struct sp_replay_result r;
	int rc;

	w->cases = calloc(1 + o->nwithout, sizeof(*w->cases));
	if (!w->cases)
		return -ENOMEM;
	w->npreds = ncpus;
	w->traced_cpus = traced_cpus(tl);
	rc = sp_depgraph_build(tl, NULL, NULL, &g);
	if (rc)
		return rc == -EINVAL ? why_fmt(why, len, "the run's timeline is inconsistent (a "
					       "segment of no task, or out of order)") : rc;
	w->tasks = g.ntasks;
	w->bursts = g.nbursts;
	w->counts = g.counts;
	w->measured_ns = g.end_ns - g.t0;
	rc = sp_replay(&g, w->traced_cpus, o->slice_ns ? o->slice_ns : SP_REPLAY_SLICE_NS, &r);
	if (!rc) {
		w->replayed_ns = r.wall_ns;
		w->ncases = 1;
		rc = predict(&g, o, cpus, ncpus, &w->cases[0]);
	}
	sp_depgraph_free(&g);
	for (size_t i = 0; i < o->nwithout && !rc; i++) {
		struct sp_whatif_case *c = &w->cases[w->ncases++];
		struct spec sp = { 0 };
		char *own = NULL;

		memset(&g, 0, sizeof(g));
		rc = xstrdup_to(&c->spec, o->without[i]);
		if (!rc)
			rc = parse_spec(run, o->without[i], &sp, &own, why, len);
		if (!rc)
			rc = sp_depgraph_build(tl, drop_seg, &sp, &g);
		if (!rc && sp.child)
			rc = why_fmt(why, len, "without=%s: it matches %" PRIu64 " waits for a "
				     "child (do_wait), which no change to scheduling removes; name "
				     "the lock, pipe or wait itself", o->without[i], sp.child);
		else if (!rc && !g.dropped)
			rc = why_fmt(why, len, "without=%s: no sleep of the timeline matches it (a "
				     "wait class such as pipe, io, mutex, sleep, other; a caller of "
				     "schedule() such as futex_wait_queue; or KIND:LOCK)",
				     o->without[i]);
		if (!rc) {
			c->sleeps = g.dropped;
			c->sleep_ns = g.dropped_ns;
			rc = predict(&g, o, cpus, ncpus, c);
			for (size_t j = 0; !rc && j < ncpus; j++) {
				uint64_t a = w->cases[0].preds[j].wall_ns, b = c->preds[j].wall_ns;

				c->preds[j].saving_ns = a > b ? a - b : 0;
			}
		}
		sp_depgraph_free(&g);
		free(sp.callers);
		free(own);
	}
	return rc;
}

int sp_whatif_compute(const struct sp_run *run, const struct sp_whatif_opts *o,
		      struct sp_whatif *w, char *why, size_t len)
{
	struct sp_whatif_opts def = { 0 };
	const int *cpus = o->cpus;
	size_t ncpus = o->ncpus;
	int rc;

	memset(w, 0, sizeof(*w));
	if (!run->timeline.present) {
		why_fmt(why, len, "no timeline in this run: trace with --timeline");
		return -ENODATA;
	}
	if (!ncpus) {
		rc = parse_cpus(&def, SP_WHATIF_DEFAULT_CPUS, why, len);
		if (rc)
			return rc;
		cpus = def.cpus;
		ncpus = def.ncpus;
	}
	rc = compute(run, o, w, cpus, ncpus, why, len);
	sp_whatif_opts_free(&def);
	if (rc)
		sp_whatif_free(w);
	return rc;
}

void sp_whatif_free(struct sp_whatif *w)
{
	for (size_t i = 0; i < w->ncases; i++) {
		free(w->cases[i].spec);
		free(w->cases[i].preds);
	}
	free(w->cases);
	memset(w, 0, sizeof(*w));
}
