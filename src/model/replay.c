// SPDX-License-Identifier: BSD-2-Clause
/*
 * The discrete-event replay (replay.h). Two binary heaps ordered by (time, sequence): the
 * pending events (a task's start, a fixed delay's end, a CPU's next stop) and the run queue
 * (runnable tasks by the time they became runnable, ties by arrival). A CPU stops where its
 * burst ends, where the burst's next edge fires, or where its slice ends; so each burst, edge
 * and slice costs one event. Nothing is ever cancelled: a CPU's stop is always handled.
 *
 * Time only moves forward, every event fires once, and when nothing is pending but tasks still
 * wait on edges (a cycle of edges with tied times), the waiting burst measured first is
 * released (counted in forced): the replay always ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "model/replay.h"

enum { EV_START, EV_TIMER, EV_CPU };

struct hent {
	uint64_t t, seq;
	uint32_t id;
	uint32_t kind;
};

struct heap {
	struct hent *v;
	size_t n, cap;
};

static bool hless(const struct hent *a, const struct hent *b)
{
	return a->t != b->t ? a->t < b->t : a->seq < b->seq;
}

static int hpush(struct heap *h, struct hent e)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		struct hent *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	i = h->n++;
	while (i && hless(&e, &h->v[(i - 1) / 2])) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = e;
	return 0;
}

static struct hent hpop(struct heap *h)
{
	struct hent top = h->v[0], last = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && hless(&h->v[c + 1], &h->v[c]))
			c++;
		if (!hless(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

enum tstate { T_IDLE, T_WAIT, T_TIMER, T_READY, T_RUN, T_DONE };

struct tst {
	uint32_t cur;	    /* its current burst (absolute index) */
	uint32_t next_trig; /* the current burst's next edge to fire (absolute index) */
	uint64_t progress;  /* work done of the current burst */
	enum tstate state;
};

struct cpu {
	uint32_t task;
	uint64_t dt;	     /* the length of the current stretch */
	uint64_t slice_left;
};

struct rp {
	const struct sp_depgraph *g;
	uint64_t slice;
	struct tst *ts;
	uint8_t *fired; /* per burst: its edge fired */
	struct cpu *cpus;
	uint32_t *free_cpus;
	size_t nfree;
	struct heap ev, rq;
	struct heap waits; /* tasks that waited on an edge, by their burst's measured start:
			    * where force() looks, entries no longer waiting skipped */
	uint64_t seq, last_end, events;
	size_t waiting; /* tasks with bursts left */
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static int push_ev(struct rp *p, uint64_t t, uint32_t kind, uint32_t id)
{
	return hpush(&p->ev, (struct hent){ .t = t, .seq = p->seq++, .id = id, .kind = kind });
}

static int make_ready(struct rp *p, uint32_t task, uint64_t now)
{
	p->ts[task].state = T_READY;
	return hpush(&p->rq, (struct hent){ .t = now, .seq = p->seq++, .id = task });
}

/* Both the previous burst and the edge are done: the fixed delay, then runnable. */
static int arm(struct rp *p, uint32_t task, uint64_t now)
{
	uint64_t d = p->g->bursts[p->ts[task].cur].delay_ns;

	if (!d)
		return make_ready(p, task, now);
	p->ts[task].state = T_TIMER;
	return push_ev(p, sat_add(now, d), EV_TIMER, task);
}

/* Task waits for its current burst's edge (kind: that burst, to tell stale entries). */
static int wait_edge(struct rp *p, uint32_t task)
{
	p->ts[task].state = T_WAIT;
	return hpush(&p->waits, (struct hent){ .t = p->g->bursts[p->ts[task].cur].start_ns,
					       .seq = p->seq++, .id = task,
					       .kind = p->ts[task].cur });
}

/* The burst before task's current one has ended (or the task has started). */
static int prev_done(struct rp *p, uint32_t task, uint64_t now)
{
	const struct sp_dg_burst *b = &p->g->bursts[p->ts[task].cur];

	if (b->edge == SP_DG_NONE || p->fired[p->ts[task].cur]) {
		p->ts[task].state = T_WAIT;
		return arm(p, task, now);
	}
	return wait_edge(p, task);
}

static int fire(struct rp *p, uint32_t burst, uint64_t now)
{
	uint32_t task = p->g->bursts[burst].task;

	p->fired[burst] = 1;
	if (p->ts[task].cur == burst && p->ts[task].state == T_WAIT)
		return arm(p, task, now);
	return 0;
}

/* Plans task's next stretch on cpu c from now: to its burst's end, next edge or slice. */
static int plan(struct rp *p, uint32_t c, uint64_t now)
{
	const struct sp_depgraph *g = p->g;
	struct cpu *cpu = &p->cpus[c];
	struct tst *t = &p->ts[cpu->task];
	const struct sp_dg_burst *b = &g->bursts[t->cur];
	uint64_t dt = b->work_ns - t->progress;

	if (t->next_trig < b->trig + b->ntrig) {
		uint64_t off = g->edges[t->next_trig].offset_ns;

		if (off - t->progress < dt)
			dt = off - t->progress;
	}
	if (p->slice && cpu->slice_left < dt)
		dt = cpu->slice_left;
	cpu->dt = dt;
	return push_ev(p, sat_add(now, dt), EV_CPU, c);
}

static int dispatch(struct rp *p, uint64_t now)
{
	int rc = 0;

	while (!rc && p->nfree && p->rq.n) {
		struct hent e = hpop(&p->rq);
		uint32_t c = p->free_cpus[--p->nfree];
		struct tst *t = &p->ts[e.id];

		t->state = T_RUN;
		p->cpus[c].task = e.id;
		p->cpus[c].slice_left = p->slice;
		rc = plan(p, c, now);
	}
	return rc;
}

static int cpu_stop(struct rp *p, uint32_t c, uint64_t now)
{
	const struct sp_depgraph *g = p->g;
	struct cpu *cpu = &p->cpus[c];
	uint32_t task = cpu->task;
	struct tst *t = &p->ts[task];
	const struct sp_dg_burst *b = &g->bursts[t->cur];
	const struct sp_dg_task *gt = &g->tasks[task];
	int rc = 0;

	t->progress += cpu->dt;
	cpu->slice_left -= p->slice ? cpu->dt : 0;
	while (!rc && t->next_trig < b->trig + b->ntrig &&
	       g->edges[t->next_trig].offset_ns <= t->progress)
		rc = fire(p, g->edges[t->next_trig++].dst, now);
	if (rc)
		return rc;
	if (t->progress >= b->work_ns) {
		if (now > p->last_end)
			p->last_end = now;
		p->free_cpus[p->nfree++] = c;
		if (++t->cur < gt->first + gt->nbursts) {
			t->progress = 0;
			t->next_trig = g->bursts[t->cur].trig;
			return prev_done(p, task, now);
		}
		t->state = T_DONE;
		p->waiting--;
		return 0;
	}
	if (p->slice && !cpu->slice_left) {
		if (p->rq.n) {
			p->free_cpus[p->nfree++] = c;
			return make_ready(p, task, now);
		}
		cpu->slice_left = p->slice;
	}
	return plan(p, c, now);
}

/*
 * Nothing pending, tasks still waiting on edges: release the one whose burst was measured
 * first. An entry of waits whose task has moved on since is dropped.
 */
static int force(struct rp *p, uint64_t now, struct sp_replay_result *r)
{
	while (p->waits.n) {
		struct hent e = hpop(&p->waits);

		if (p->ts[e.id].state != T_WAIT || p->ts[e.id].cur != e.kind)
			continue;
		r->forced++;
		return fire(p, e.kind, now);
	}
	return -EINVAL; /* cannot happen: a task waits on an edge only after it was pushed */
}

static int run(struct rp *p, int ncpus, struct sp_replay_result *r)
{
	const struct sp_depgraph *g = p->g;
	uint64_t now = g->t0;
	int rc = 0;

	p->ts = calloc(g->ntasks ? g->ntasks : 1, sizeof(*p->ts));
	p->fired = calloc(g->nbursts ? g->nbursts : 1, 1);
	p->cpus = calloc((size_t)ncpus, sizeof(*p->cpus));
	p->free_cpus = malloc((size_t)ncpus * sizeof(*p->free_cpus));
	if (!p->ts || !p->fired || !p->cpus || !p->free_cpus)
		return -ENOMEM;
	for (int c = ncpus; c-- > 0;)
		p->free_cpus[p->nfree++] = (uint32_t)c;
	p->last_end = g->t0;
	for (uint32_t k = 0; k < g->ntasks && !rc; k++) {
		const struct sp_dg_task *gt = &g->tasks[k];

		if (!gt->nbursts) {
			p->ts[k].state = T_DONE;
			continue;
		}
		p->waiting++;
		p->ts[k].cur = gt->first;
		p->ts[k].next_trig = g->bursts[gt->first].trig;
		if (gt->forked)
			rc = wait_edge(p, k); /* the fork edge releases it */
		else
			rc = push_ev(p, gt->start_ns, EV_START, k);
	}
	while (!rc && p->waiting) {
		struct hent e;

		if (!p->ev.n) {
			rc = force(p, now, r);
			if (!rc)
				rc = dispatch(p, now);
			continue;
		}
		e = hpop(&p->ev);
		p->events++;
		now = e.t;
		switch (e.kind) {
		case EV_START:
			rc = prev_done(p, e.id, now);
			break;
		case EV_TIMER:
			rc = make_ready(p, e.id, now);
			break;
		default:
			rc = cpu_stop(p, e.id, now);
			break;
		}
		if (!rc)
			rc = dispatch(p, now);
	}
	r->wall_ns = p->last_end - g->t0;
	r->work_ns = g->work_ns;
	r->events = p->events;
	return rc;
}

int sp_replay(const struct sp_depgraph *g, int cpus, uint64_t slice_ns,
	      struct sp_replay_result *r)
{
	struct rp p = { .g = g, .slice = slice_ns };
	int ncpus = cpus, rc;

	memset(r, 0, sizeof(*r));
	r->cpus = cpus;
	if (slice_ns && g->work_ns / SP_REPLAY_MAX_SLICES > slice_ns)
		p.slice = g->work_ns / SP_REPLAY_MAX_SLICES;
	if (cpus < 0)
		return -EINVAL;
	if (!cpus || (size_t)cpus > g->ntasks)
		ncpus = g->ntasks ? (int)(g->ntasks < INT32_MAX ? g->ntasks : INT32_MAX) : 1;
	rc = run(&p, ncpus, r);
	free(p.ts);
	free(p.fired);
	free(p.cpus);
	free(p.free_cpus);
	free(p.ev.v);
	free(p.rq.v);
	free(p.waits.v);
	return rc;
}

double sp_replay_parallelism(const struct sp_replay_result *r)
{
	return r->wall_ns ? (double)r->work_ns / (double)r->wall_ns : 0;
}
