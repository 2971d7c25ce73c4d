// SPDX-License-Identifier: BSD-2-Clause
/*
 * The job's dependency graph (depgraph.h).
 *
 * One pass over each task's segments cuts its bursts (running segments, with the runnable
 * ones between them left out: waiting for a CPU is the replay's to decide) at its sleeps and
 * notes what ended each sleep; a second pass resolves each wake-up and fork to the burst the
 * waker or parent was in and the CPU time that burst had done by then (a binary search in
 * that task's running segments); the edges are then sorted by their source burst, so that
 * the replay fires a burst's edges in order as it runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "model/depgraph.h"
#include "model/tl_index.h"

#define NONE SP_TL_NONE

/* A running segment: the offsets of wake-ups and forks within bursts come from these. */
struct run {
	uint64_t start, ns;
	uint64_t cum; /* the burst's work before it */
	uint32_t burst;
};

/* A release not resolved yet: dst waits for tid at time t (fallback_ns: the sleep's length). */
struct pend {
	uint32_t dst;
	int tid;
	enum sp_dg_edge_kind kind;
	uint64_t t, fallback_ns;
};

/* A child's exit, for its parent's bursts. */
struct cexit {
	size_t parent;
	uint64_t t;
	int tid;
};

struct build {
	const struct sp_timeline *tl;
	struct sp_depgraph *g;
	struct sp_tl_key *keys; /* the tasks by (tid, start) */
	struct run *runs;
	size_t nruns, runs_cap;
	size_t *run_first, *run_n; /* per task */
	struct pend *pends;
	size_t npends, pends_cap;
	struct cexit *exits; /* by parent, then time */
	size_t nexits;
	size_t edges_cap, bursts_cap;
};

/* tid's task at t (the last to start by t); with first, tid's first task when none did. */
static size_t task_at(const struct build *b, int tid, uint64_t t, bool first)
{
	return sp_tl_task_at(b->keys, b->tl->ntasks, tid, t, first);
}

static int add_pend(struct build *b, uint32_t dst, int tid, enum sp_dg_edge_kind kind,
		    uint64_t t, uint64_t fallback)
{
	struct pend *p = SP_ARRAY_ADD(b->pends, b->npends, b->pends_cap);

	if (!p)
		return -ENOMEM;
	*p = (struct pend){ .dst = dst, .tid = tid, .kind = kind, .t = t, .fallback_ns = fallback };
	return 0;
}

/* What lies between two bursts of a task: fixed delays, and the wake-up that ended it. */
struct gap {
	uint64_t fixed_ns;
	bool edge;
	int tid;
	enum sp_dg_edge_kind kind;
	uint64_t t, ns; /* the edge's time, and its sleep's length */
	uint64_t sleeps; /* fixed sleeps in fixed_ns */
};

static void gap_fix_edge(struct sp_depgraph *g, struct gap *gp)
{
	if (!gp->edge)
		return;
	gp->edge = false;
	gp->fixed_ns += gp->ns;
	if (gp->kind == SP_DG_WAKE) {
		g->counts.fixed++;
		g->counts.fixed_ns += gp->ns;
	}
}

/*
 * Task k waited for a CPU over s: a child that exited then cuts its burst, and the rest
 * waits for that exit (the latest, when several did). The exits before s are passed over.
 */
static void cut_at_exit(struct build *b, size_t k, const struct sp_tl_seg *s, size_t *at,
			struct gap *gp, struct sp_dg_burst **open)
{
	const struct cexit *e = NULL;

	while (*at < b->nexits && b->exits[*at].parent == k && b->exits[*at].t < s->start_ns)
		(*at)++;
	while (*at < b->nexits && b->exits[*at].parent == k &&
	       b->exits[*at].t <= s->start_ns + s->ns)
		e = &b->exits[(*at)++];
	if (!e || (gp->edge && gp->t >= e->t))
		return;
	*open = NULL;
	*gp = (struct gap){ .fixed_ns = gp->fixed_ns, .edge = true, .tid = e->tid,
			    .kind = SP_DG_EXIT, .t = e->t, .sleeps = gp->sleeps };
}

/* Cuts task k's segments [a, z) into bursts. */
static int build_task(struct build *b, size_t k, size_t a, size_t z, sp_dg_drop_fn drop,
		      void *ctx)
{
	const struct sp_timeline *tl = b->tl;
	const struct sp_tl_task *t = &tl->tasks[k];
	struct sp_depgraph *g = b->g;
	struct sp_dg_task *gt = &g->tasks[k];
	struct gap gp = { 0 };
	uint64_t cur = t->start_ns;
	struct sp_dg_burst *open = NULL;
	size_t lo = 0, hi = b->nexits, at;
	int rc;

	while (lo < hi) { /* k's first child exit */
		size_t mid = lo + (hi - lo) / 2;

		if (b->exits[mid].parent < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	at = lo;
	gt->tid = t->tid;
	gt->comm = t->comm;
	gt->start_ns = t->start_ns;
	gt->first = (uint32_t)g->nbursts;
	b->run_first[k] = b->nruns;
	if (t->parent_tid)
		gp = (struct gap){ .edge = true, .tid = t->parent_tid, .kind = SP_DG_FORK,
				   .t = t->start_ns };
	for (size_t i = a; i < z; i++) {
		const struct sp_tl_seg *s = &tl->segs[i];
		struct run *r;

		if (i > a && s->start_ns < cur)
			return -EINVAL; /* overlapping or out of order */
		if (s->start_ns > cur) {
			/* time no segment covers: lost events, a delay as long */
			gp.fixed_ns += s->start_ns - cur;
			open = NULL;
		}
		cur = s->start_ns + s->ns;
		if (s->state == SP_TL_RUNNABLE) {
			cut_at_exit(b, k, s, &at, &gp, &open);
			continue;
		}
		if (s->state == SP_TL_BLOCKED) {
			open = NULL;
			if (s->unfinished)
				continue;
			if (drop && drop(s, ctx)) {
				g->dropped++;
				g->dropped_ns += s->ns;
				continue;
			}
			/*
			 * A later wake-up replaces the edge (its sleep kept as a delay); a sleep
			 * without waker adds its delay after the edge: a task forked, then asleep
			 * on a timer, still waits for its fork.
			 */
			if (s->waker_tid && s->waker_tid != t->tid) {
				gap_fix_edge(g, &gp);
				gp.edge = true;
				gp.tid = s->waker_tid;
				gp.kind = SP_DG_WAKE;
				gp.t = s->start_ns + s->ns;
				gp.ns = s->ns;
			} else {
				gp.fixed_ns += s->ns;
				g->counts.fixed++;
				g->counts.fixed_ns += s->ns;
			}
			continue;
		}
		if (s->state != SP_TL_RUNNING)
			return -EINVAL;
		if (!open) {
			if (g->nbursts >= UINT32_MAX - 1)
				return -E2BIG;
			open = SP_ARRAY_ADD(g->bursts, g->nbursts, b->bursts_cap);
			if (!open)
				return -ENOMEM;
			*open = (struct sp_dg_burst){ .task = (uint32_t)k, .edge = SP_DG_NONE,
						      .delay_ns = gp.fixed_ns, .start_ns = s->start_ns };
			if (gp.edge) {
				rc = add_pend(b, (uint32_t)(g->nbursts - 1), gp.tid, gp.kind, gp.t,
					      gp.ns);
				if (rc)
					return rc;
			}
			gp = (struct gap){ 0 };
		}
		r = SP_ARRAY_ADD(b->runs, b->nruns, b->runs_cap);
		if (!r)
			return -ENOMEM;
		*r = (struct run){ .start = s->start_ns, .ns = s->ns, .cum = open->work_ns,
				   .burst = (uint32_t)(g->nbursts - 1) };
		open->work_ns += s->ns;
		g->work_ns += s->ns;
		if (cur > g->end_ns)
			g->end_ns = cur;
	}
	gt->nbursts = (uint32_t)(g->nbursts - gt->first);
	b->run_n[k] = b->nruns - b->run_first[k];
	return 0;
}

/* Resolves p to an edge; a waker that had not run by then makes it a fixed delay. */
static int resolve(struct build *b, const struct pend *p)
{
	struct sp_depgraph *g = b->g;
	struct sp_dg_burst *dst = &g->bursts[p->dst];
	size_t k = task_at(b, p->tid, p->t, false), lo, hi;
	const struct run *r;
	struct sp_dg_edge *e;

	if (k != NONE && k != dst->task) {
		lo = b->run_first[k];
		hi = lo + b->run_n[k];
		while (lo < hi) { /* the first run starting after t */
			size_t mid = lo + (hi - lo) / 2;

			if (b->runs[mid].start <= p->t)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > b->run_first[k]) {
			uint64_t in;

			r = &b->runs[lo - 1];
			in = p->t - r->start < r->ns ? p->t - r->start : r->ns;
			e = SP_ARRAY_ADD(g->edges, g->nedges, b->edges_cap);
			if (!e)
				return -ENOMEM;
			*e = (struct sp_dg_edge){ .src = r->burst, .dst = p->dst,
						  .offset_ns = r->cum + in, .kind = p->kind };
			if (p->kind == SP_DG_FORK) {
				g->counts.forks++;
				g->tasks[dst->task].forked = true;
			} else if (p->kind == SP_DG_EXIT) {
				g->counts.exits++;
			} else {
				g->counts.wakes++;
			}
			return 0;
		}
	}
	/* the fork of a task whose parent did not run in the window: it starts when it did */
	dst->delay_ns += p->fallback_ns;
	if (p->kind == SP_DG_WAKE) {
		g->counts.fixed++;
		g->counts.fixed_ns += p->fallback_ns;
	}
	return 0;
}

static int cmp_exit(const void *pa, const void *pb)
{
	const struct cexit *a = pa, *b = pb;

	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return (a->tid > b->tid) - (a->tid < b->tid);
}

/* The children's exits, by parent and time. */
static int collect_exits(struct build *b)
{
	const struct sp_timeline *tl = b->tl;

	b->exits = malloc((tl->ntasks ? tl->ntasks : 1) * sizeof(*b->exits));
	if (!b->exits)
		return -ENOMEM;
	for (size_t i = 0; i < tl->ntasks; i++) {
		const struct sp_tl_task *t = &tl->tasks[i];
		size_t p;

		if (!t->exited || !t->parent_tid)
			continue;
		p = task_at(b, t->parent_tid, t->start_ns, false);
		if (p == NONE || p == i)
			continue;
		b->exits[b->nexits++] = (struct cexit){ .parent = p, .t = t->end_ns, .tid = t->tid };
	}
	qsort(b->exits, b->nexits, sizeof(*b->exits), cmp_exit);
	return 0;
}

static int cmp_edge(const void *pa, const void *pb)
{
	const struct sp_dg_edge *a = pa, *b = pb;

	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	if (a->offset_ns != b->offset_ns)
		return a->offset_ns < b->offset_ns ? -1 : 1;
	return a->dst < b->dst ? -1 : a->dst > b->dst;
}

static int build(struct build *b, sp_dg_drop_fn drop, void *ctx)
{
	const struct sp_timeline *tl = b->tl;
	struct sp_depgraph *g = b->g;
	size_t n = tl->ntasks;
	bool *seen;
	int rc = 0;

	if (tl->nsegs >= UINT32_MAX - 1 || n >= UINT32_MAX - 1)
		return -E2BIG;
	g->tasks = calloc(n ? n : 1, sizeof(*g->tasks));
	if (sp_tl_keys(tl, &b->keys))
		return -ENOMEM;
	b->run_first = calloc(n ? n : 1, sizeof(*b->run_first));
	b->run_n = calloc(n ? n : 1, sizeof(*b->run_n));
	seen = calloc(n ? n : 1, sizeof(*seen));
	if (!g->tasks || !b->run_first || !b->run_n || !seen) {
		free(seen);
		return -ENOMEM;
	}
	g->ntasks = n;
	g->t0 = n ? UINT64_MAX : 0;
	for (size_t i = 0; i < n; i++)
		if (tl->tasks[i].start_ns < g->t0)
			g->t0 = tl->tasks[i].start_ns;
	rc = collect_exits(b);
	for (size_t i = 0; i < tl->nsegs && !rc;) {
		size_t k = task_at(b, tl->segs[i].tid, tl->segs[i].start_ns, true), z = i + 1;

		if (k == NONE || seen[k]) {
			rc = -EINVAL; /* a segment of no task, or a task's segments apart */
			break;
		}
		seen[k] = true;
		while (z < tl->nsegs && tl->segs[z].tid == tl->segs[i].tid &&
		       task_at(b, tl->segs[z].tid, tl->segs[z].start_ns, true) == k)
			z++;
		rc = build_task(b, k, i, z, drop, ctx);
		i = z;
	}
	for (size_t k = 0; k < n && !rc; k++)
		if (!seen[k]) {
			g->tasks[k].tid = tl->tasks[k].tid;
			g->tasks[k].comm = tl->tasks[k].comm;
			g->tasks[k].start_ns = tl->tasks[k].start_ns;
			g->tasks[k].first = (uint32_t)g->nbursts;
		}
	free(seen);
	for (size_t i = 0; i < b->npends && !rc; i++)
		rc = resolve(b, &b->pends[i]);
	if (rc)
		return rc;
	if (g->end_ns < g->t0)
		g->end_ns = g->t0;
	if (g->nedges)
		qsort(g->edges, g->nedges, sizeof(*g->edges), cmp_edge);
	for (size_t i = 0; i < g->nedges; i++) {
		struct sp_dg_burst *src = &g->bursts[g->edges[i].src];

		if (!src->ntrig)
			src->trig = (uint32_t)i;
		src->ntrig++;
		g->bursts[g->edges[i].dst].edge = (uint32_t)i;
	}
	return 0;
}

int sp_depgraph_build(const struct sp_timeline *tl, sp_dg_drop_fn drop, void *ctx,
		      struct sp_depgraph *g)
{
	struct build b = { .tl = tl, .g = g };
	int rc;

	memset(g, 0, sizeof(*g));
	rc = build(&b, drop, ctx);
	free(b.keys);
	free(b.runs);
	free(b.run_first);
	free(b.run_n);
	free(b.pends);
	free(b.exits);
	if (rc)
		sp_depgraph_free(g);
	return rc;
}

void sp_depgraph_free(struct sp_depgraph *g)
{
	free(g->tasks);
	free(g->bursts);
	free(g->edges);
	memset(g, 0, sizeof(*g));
}
