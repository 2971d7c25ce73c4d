// SPDX-License-Identifier: BSD-2-Clause
/*
 * Why the job took as long as it did (critpath.h).
 *
 * Two passes over the timeline, both O(n log n) in segments:
 * - a sweep over the running and runnable segments' starts and ends in time order gives the
 *   parallelism histograms, the intervals with exactly one task running ("alone"), and the
 *   serial phases: exactly one task of the job running or runnable, so the other CPUs had
 *   nothing of the job to run (a task preempted for a moment stays in its phase);
 * - a walk backwards from the job's end gives the critical path: each step looks up the
 *   current task's segment before t by binary search, and either takes a step of positive
 *   length (t decreases) or jumps to another task at the same t (to the waker at the
 *   wake-up, to the parent at the fork). Two jumps in a row at the same instant are refused,
 *   so that a cycle of wakers (bad input, or timestamps that tie) cannot hold the walk in
 *   place: t decreases at least every second iteration, and only ever to a segment's or a
 *   task's bound, so the walk ends after O(segments + tasks) iterations.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "model/critpath.h"
#include "base/util.h"
#include "model/tl_index.h"

#define NONE SIZE_MAX

struct ival {
	uint64_t a, b;
};

/* A step of the walk: [a, b) of task `task` (seg: NONE for time no segment covers). */
struct step {
	size_t task;
	enum sp_tl_state state;
	bool throttled; /* runnable, throttled (its segment's) */
	const char *comm, *caller;
	uint64_t a, b;
};

struct ctx {
	struct sp_timeline *tl;
	struct sp_tl_key *keys; /* the tasks by (tid, start) */
	size_t *first, *nseg;  /* per task: its segments */
	size_t *seg_task;      /* per segment: its task */
	uint64_t end;	       /* where the job ends */
	struct ival *alone;    /* the intervals with exactly one task running, in time order */
	size_t nalone, alone_cap;
	struct step *steps; /* the walk's steps, backwards */
	size_t nsteps, steps_cap;
};

/*
 * The caller of a step over time no segment of its task covers (lost events), a blocked
 * step; and the comm of a task that has none.
 */
static const char unknown[] = "[unknown]";

/* The comm of task t in segment s (NULL: before its first segment). */
static const char *comm_of(const struct sp_tl_task *t, const struct sp_tl_seg *s)
{
	if (s && s->comm)
		return s->comm;
	return t->comm ? t->comm : unknown;
}

static uint64_t seg_end(const struct sp_tl_seg *s)
{
	return s->start_ns + s->ns;
}

static bool streq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* NULL sorts first. */
static int strcmp_null(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static void clear_results(struct sp_timeline *tl)
{
	for (size_t i = 0; i < tl->ncp; i++) {
		free(tl->cp[i].comm);
		free(tl->cp[i].caller);
	}
	free(tl->cp);
	tl->cp = NULL;
	tl->ncp = tl->cp_cap = 0;
	for (size_t i = 0; i < tl->ncp_ranks; i++) {
		free(tl->cp_ranks[i].comm);
		free(tl->cp_ranks[i].caller);
	}
	free(tl->cp_ranks);
	tl->cp_ranks = NULL;
	tl->ncp_ranks = tl->cp_ranks_cap = 0;
	free(tl->running);
	tl->running = NULL;
	tl->nrunning = tl->running_cap = 0;
	free(tl->runnable);
	tl->runnable = NULL;
	tl->nrunnable = tl->runnable_cap = 0;
	for (size_t i = 0; i < tl->nserial; i++)
		free(tl->serial[i].comm);
	free(tl->serial);
	tl->serial = NULL;
	tl->nserial = tl->serial_cap = 0;
	tl->serial_ns = 0;
	tl->cp_total_ns = 0;
}

/* Task tid at time t: the last of that tid to start by t; NONE if none did. */
static size_t task_at(const struct ctx *c, int tid, uint64_t t)
{
	return sp_tl_task_at(c->keys, c->tl->ntasks, tid, t, false);
}

/* The task a segment belongs to: tid's task at its start, else tid's first task; NONE. */
static size_t task_of_seg(const struct ctx *c, const struct sp_tl_seg *s)
{
	return sp_tl_task_at(c->keys, c->tl->ntasks, s->tid, s->start_ns, true);
}

/* The end of task k's life: its exit, or its last segment's end if later. */
static uint64_t task_end(const struct ctx *c, size_t k)
{
	uint64_t e = c->tl->tasks[k].end_ns;

	if (c->nseg[k]) {
		uint64_t s = seg_end(&c->tl->segs[c->first[k] + c->nseg[k] - 1]);

		if (s > e)
			e = s;
	}
	return e;
}

/*
 * Checks the input and indexes it: tasks by (tid, start), each task's segments (contiguous,
 * in time order, not overlapping). -EINVAL on bad input.
 */
static int index_timeline(struct ctx *c)
{
	const struct sp_timeline *tl = c->tl;
	size_t n = tl->ntasks;

	if (tl->nsegs > UINT32_MAX)
		return -E2BIG;
	if (sp_tl_keys(tl, &c->keys))
		return -ENOMEM;
	c->first = calloc(n, sizeof(*c->first));
	c->nseg = calloc(n, sizeof(*c->nseg));
	c->seg_task = malloc((tl->nsegs ? tl->nsegs : 1) * sizeof(*c->seg_task));
	if (!c->first || !c->nseg || !c->seg_task)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (tl->tasks[i].end_ns < tl->tasks[i].start_ns)
			return -EINVAL;
	for (size_t i = 1; i < n; i++)
		if (c->keys[i - 1].tid == c->keys[i].tid && c->keys[i - 1].start == c->keys[i].start)
			return -EINVAL; /* two tasks of one tid starting together: whose segments? */
	for (size_t i = 0; i < tl->nsegs; i++) {
		const struct sp_tl_seg *s = &tl->segs[i];
		size_t k;

		if (s->state > SP_TL_BLOCKED || s->start_ns + s->ns < s->start_ns)
			return -EINVAL;
		if (i && s->tid == tl->segs[i - 1].tid && s->start_ns < seg_end(&tl->segs[i - 1]))
			return -EINVAL; /* overlapping or out of order */
		k = task_of_seg(c, s);
		if (k == NONE)
			return -EINVAL;
		if (!c->nseg[k])
			c->first[k] = i;
		else if (c->first[k] + c->nseg[k] != i)
			return -EINVAL; /* the task's segments are not together */
		c->nseg[k]++;
		c->seg_task[i] = k;
	}
	return 0;
}

/* ---- the sweep: parallelism, alone intervals, serial phases ---- */

enum ev_kind { EV_RUN_START, EV_RUN_END, EV_RQ_START, EV_RQ_END };

struct ev {
	uint64_t t;
	uint32_t seg;
	uint32_t kind;
};

/*
 * Sorts by time. An LSD radix sort on the bytes in which the times differ: the sweep's
 * events are 2 per segment, and a compile job has up to 10^6 segments, where qsort's
 * comparisons were the larger part of the whole analysis.
 */
static int sort_events(struct ev **pv, size_t n)
{
	struct ev *v = *pv, *tmp, *x;
	uint64_t all_or = 0, all_and = UINT64_MAX;

	for (size_t i = 0; i < n; i++) {
		all_or |= v[i].t;
		all_and &= v[i].t;
	}
	tmp = malloc((n ? n : 1) * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (int shift = 0; shift < 64; shift += 8) {
		size_t count[257] = { 0 };

		if (!(((all_or ^ all_and) >> shift) & 0xff))
			continue; /* every time has the same byte here */
		for (size_t i = 0; i < n; i++)
			count[((v[i].t >> shift) & 0xff) + 1]++;
		for (int b = 0; b < 256; b++)
			count[b + 1] += count[b];
		for (size_t i = 0; i < n; i++)
			tmp[count[(v[i].t >> shift) & 0xff]++] = v[i];
		x = v;
		v = tmp;
		tmp = x;
	}
	free(tmp);
	*pv = v;
	return 0;
}

static int add_bucket(struct sp_par_bucket **v, size_t *n, size_t *cap, int count, uint64_t ns)
{
	struct sp_par_bucket *b = sp_array_add((void **)v, n, cap, sizeof(**v));

	if (!b)
		return -ENOMEM;
	b->n = count;
	b->ns = ns;
	return 0;
}

struct phase {
	bool open;
	size_t task, seg; /* the running task and its segment at the phase's end */
	uint64_t start, end;
};

static int close_phase(struct ctx *c, struct phase *p)
{
	struct sp_timeline *tl = c->tl;
	struct sp_serial_phase *s;
	const struct sp_tl_seg *seg;

	if (!p->open)
		return 0;
	p->open = false;
	if (p->end - p->start < SP_SERIAL_MIN_NS)
		return 0;
	s = SP_ARRAY_ADD(tl->serial, tl->nserial, tl->serial_cap);
	if (!s)
		return -ENOMEM;
	seg = &tl->segs[p->seg];
	s->tid = seg->tid;
	s->start_ns = p->start;
	s->ns = p->end - p->start;
	tl->serial_ns += s->ns;
	return xstrdup_to(&s->comm, comm_of(&tl->tasks[p->task], seg));
}

/*
 * The state over [a, b): run tasks running, rq runnable (the sums of their segments' indices:
 * runsum, rqsum, which name the segment when there is one).
 */
static int account(struct ctx *c, struct phase *p, uint64_t a, uint64_t b, int64_t run,
		   int64_t rq, uint64_t runsum, uint64_t rqsum, int ncpus, uint64_t *hist_run,
		   uint64_t *hist_rq)
{
	size_t task, seg;
	int rc;

	hist_run[run] += b - a;
	hist_rq[rq] += b - a;
	if (run == 1) {
		struct ival *last = c->nalone ? &c->alone[c->nalone - 1] : NULL;

		if (last && last->b == a) {
			last->b = b;
		} else {
			last = SP_ARRAY_ADD(c->alone, c->nalone, c->alone_cap);
			if (!last)
				return -ENOMEM;
			last->a = a;
			last->b = b;
		}
	}
	/*
	 * Serial: one task of the job wants a CPU, running or waiting for one (a kworker that
	 * preempts it for a few us does not end the phase), and there are CPUs it leaves idle.
	 */
	if (!(ncpus > 1 && run + rq == 1))
		return close_phase(c, p);
	seg = run ? runsum : rqsum;
	task = c->seg_task[seg];
	if (p->open && p->task == task && p->end == a) {
		p->end = b;
		if (run)
			p->seg = seg;
		return 0;
	}
	rc = close_phase(c, p);
	if (!rc)
		*p = (struct phase){ .open = true, .task = task, .seg = seg, .start = a, .end = b };
	return rc;
}

static int sweep(struct ctx *c, int ncpus)
{
	struct sp_timeline *tl = c->tl;
	uint64_t w0 = UINT64_MAX, end = c->end, *hist_run = NULL, *hist_rq = NULL, prev;
	struct ev *ev = NULL;
	size_t nev = 0;
	int64_t run = 0, rq = 0, maxn = 0;
	uint64_t runsum = 0, rqsum = 0;
	struct phase p = { 0 };
	int rc = -ENOMEM;

	for (size_t i = 0; i < tl->ntasks; i++)
		if (tl->tasks[i].start_ns < w0)
			w0 = tl->tasks[i].start_ns;
	for (size_t i = 0; i < tl->nsegs; i++)
		if (tl->segs[i].start_ns < w0)
			w0 = tl->segs[i].start_ns;
	if (w0 >= end)
		return 0;
	ev = malloc((2 * tl->nsegs + 1) * sizeof(*ev));
	hist_run = calloc(tl->ntasks + 1, sizeof(*hist_run));
	hist_rq = calloc(tl->ntasks + 1, sizeof(*hist_rq));
	if (!ev || !hist_run || !hist_rq)
		goto out;
	for (size_t i = 0; i < tl->nsegs; i++) {
		const struct sp_tl_seg *s = &tl->segs[i];
		uint64_t a = s->start_ns, b = seg_end(s);
		uint32_t k = s->state == SP_TL_RUNNING ? EV_RUN_START : EV_RQ_START;

		if (s->state == SP_TL_BLOCKED)
			continue;
		if (b > end)
			b = end;
		if (a >= b)
			continue;
		ev[nev++] = (struct ev){ .t = a, .seg = (uint32_t)i, .kind = k };
		ev[nev++] = (struct ev){ .t = b, .seg = (uint32_t)i, .kind = k + 1 };
	}
	rc = sort_events(&ev, nev);
	if (rc)
		goto out;
	prev = w0;
	for (size_t i = 0;;) {
		uint64_t next = i < nev ? ev[i].t : end;

		if (next > prev) {
			rc = account(c, &p, prev, next, run, rq, runsum, rqsum, ncpus, hist_run,
				     hist_rq);
			if (rc)
				goto out;
		}
		if (i >= nev)
			break;
		prev = next;
		for (; i < nev && ev[i].t == next; i++) {
			switch (ev[i].kind) {
			case EV_RUN_START:
				run++;
				runsum += ev[i].seg;
				break;
			case EV_RUN_END:
				run--;
				runsum -= ev[i].seg;
				break;
			case EV_RQ_START:
				rq++;
				rqsum += ev[i].seg;
				break;
			default:
				rq--;
				rqsum -= ev[i].seg;
				break;
			}
		}
		if (run > maxn)
			maxn = run;
		if (rq > maxn)
			maxn = rq;
	}
	rc = close_phase(c, &p);
	for (int64_t n = 0; !rc && n <= maxn; n++) {
		if (hist_run[n])
			rc = add_bucket(&tl->running, &tl->nrunning, &tl->running_cap, (int)n,
					hist_run[n]);
		if (!rc && hist_rq[n])
			rc = add_bucket(&tl->runnable, &tl->nrunnable, &tl->runnable_cap, (int)n,
					hist_rq[n]);
	}
out:
	free(ev);
	free(hist_run);
	free(hist_rq);
	return rc;
}

/* ---- the walk: the critical path ---- */

/* Task k's last segment to start before t; NONE if none. */
static size_t seg_before(const struct ctx *c, size_t k, uint64_t t)
{
	size_t base = c->first[k], lo = base, hi = base + c->nseg[k];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->tl->segs[mid].start_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == base ? NONE : lo - 1;
}

static int push(struct ctx *c, size_t task, enum sp_tl_state state, const char *comm,
		const char *caller, uint64_t a, uint64_t b)
{
	struct step *s = SP_ARRAY_ADD(c->steps, c->nsteps, c->steps_cap);

	if (!s)
		return -ENOMEM;
	*s = (struct step){ .task = task, .state = state, .comm = comm, .caller = caller,
			    .a = a, .b = b };
	return 0;
}

/* push() of the part of segment s before t. */
static int push_seg(struct ctx *c, size_t task, const struct sp_tl_seg *s, const char *comm,
		    uint64_t t)
{
	int rc = push(c, task, s->state, comm, s->caller, s->start_ns, t);

	if (!rc)
		c->steps[c->nsteps - 1].throttled = s->state == SP_TL_RUNNABLE && s->throttled;
	return rc;
}

/* Walks back from task k at t; returns where it stopped in *ret_t. */
static int walk(struct ctx *c, size_t k, uint64_t t, uint64_t *ret_t)
{
	const struct sp_timeline *tl = c->tl;
	uint64_t last_jump = UINT64_MAX;
	int rc = 0;

	while (!rc) {
		const struct sp_tl_task *task = &tl->tasks[k];
		size_t i = seg_before(c, k, t), to;
		const struct sp_tl_seg *s;

		if (i == NONE) {
			if (task->start_ns < t) {
				rc = push(c, k, SP_TL_BLOCKED, comm_of(task, NULL), unknown,
					  task->start_ns, t);
				t = task->start_ns;
				continue;
			}
			/* the task's start: its parent forked it */
			to = task->parent_tid && t < last_jump ? task_at(c, task->parent_tid, t)
							       : NONE;
			if (to == NONE || to == k)
				break;
			last_jump = t;
			k = to;
			continue;
		}
		s = &tl->segs[i];
		if (seg_end(s) < t) {
			rc = push(c, k, SP_TL_BLOCKED, comm_of(task, s), unknown, seg_end(s), t);
			t = seg_end(s);
			continue;
		}
		if (s->state == SP_TL_BLOCKED && s->waker_tid && seg_end(s) == t && t < last_jump) {
			/* the wake-up ended this wait: what kept the task blocked is the waker's work */
			to = task_at(c, s->waker_tid, t);
			if (to != NONE && to != k) {
				last_jump = t;
				k = to;
				continue;
			}
		}
		rc = push_seg(c, k, s, comm_of(task, s), t);
		t = s->start_ns;
	}
	*ret_t = t;
	return rc;
}

/* Appends [a, b) of step st to tl->cp, merged into the last step when alike. */
static int emit(struct ctx *c, size_t *last_task, const struct step *st, uint64_t a, uint64_t b,
		bool alone)
{
	struct sp_timeline *tl = c->tl;
	struct sp_cp_seg *p = tl->ncp ? &tl->cp[tl->ncp - 1] : NULL;
	int tid = tl->tasks[st->task].tid;
	int rc;

	if (p && *last_task == st->task && p->state == st->state && p->alone == alone &&
	    p->throttled == st->throttled && p->start_ns + p->ns == a &&
	    streq(p->caller, st->caller) && streq(p->comm, st->comm)) {
		p->ns += b - a;
		return 0;
	}
	p = SP_ARRAY_ADD(tl->cp, tl->ncp, tl->cp_cap);
	if (!p)
		return -ENOMEM;
	*last_task = st->task;
	p->tid = tid;
	p->state = st->state;
	p->alone = alone;
	p->throttled = st->throttled;
	p->start_ns = a;
	p->ns = b - a;
	rc = xstrdup_to(&p->comm, st->comm);
	return rc ? rc : xstrdup_to(&p->caller, st->caller);
}

/* The first alone interval that ends after t. */
static size_t alone_after(const struct ctx *c, uint64_t t)
{
	return upper_bound(c->alone, c->nalone, sizeof(*c->alone), offsetof(struct ival, b), t);
}

/* The walk's steps in time order into tl->cp: running steps split where the task ran alone. */
static int build_path(struct ctx *c)
{
	size_t last_task = NONE;
	int rc = 0;

	for (size_t i = c->nsteps; i-- > 0 && !rc;) {
		const struct step *st = &c->steps[i];
		uint64_t a = st->a;

		if (st->state != SP_TL_RUNNING) {
			rc = emit(c, &last_task, st, a, st->b, false);
			continue;
		}
		for (size_t j = alone_after(c, a); !rc && j < c->nalone && c->alone[j].a < st->b;
		     j++) {
			uint64_t ia = c->alone[j].a > a ? c->alone[j].a : a;
			uint64_t ib = c->alone[j].b < st->b ? c->alone[j].b : st->b;

			if (ia > a)
				rc = emit(c, &last_task, st, a, ia, false);
			if (!rc)
				rc = emit(c, &last_task, st, ia, ib, true);
			a = ib;
		}
		if (!rc && a < st->b)
			rc = emit(c, &last_task, st, a, st->b, false);
	}
	return rc;
}

static int cmp_rank_key(const struct sp_cp_seg *a, const struct sp_cp_seg *b)
{
	int r = strcmp_null(a->comm, b->comm);

	if (r)
		return r;
	if (a->state != b->state)
		return a->state < b->state ? -1 : 1;
	if (a->alone != b->alone)
		return a->alone ? -1 : 1;
	if (a->throttled != b->throttled)
		return a->throttled ? -1 : 1;
	return strcmp_null(a->caller, b->caller);
}

static int cmp_seg_ptr(const void *pa, const void *pb)
{
	return cmp_rank_key(*(const struct sp_cp_seg *const *)pa,
			    *(const struct sp_cp_seg *const *)pb);
}

static int cmp_rank(const void *pa, const void *pb)
{
	const struct sp_cp_rank *a = pa, *b = pb;
	struct sp_cp_seg ka = { .comm = a->comm, .state = a->state, .caller = a->caller,
				.alone = a->alone, .throttled = a->throttled };
	struct sp_cp_seg kb = { .comm = b->comm, .state = b->state, .caller = b->caller,
				.alone = b->alone, .throttled = b->throttled };

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return cmp_rank_key(&ka, &kb);
}

static int rank_path(struct sp_timeline *tl)
{
	const struct sp_cp_seg **v = malloc((tl->ncp ? tl->ncp : 1) * sizeof(*v));
	int rc = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < tl->ncp; i++)
		v[i] = &tl->cp[i];
	qsort(v, tl->ncp, sizeof(*v), cmp_seg_ptr);
	for (size_t i = 0; i < tl->ncp && !rc; i++) {
		struct sp_cp_rank *r;

		if (i && !cmp_rank_key(v[i - 1], v[i])) {
			tl->cp_ranks[tl->ncp_ranks - 1].ns += v[i]->ns;
			continue;
		}
		r = SP_ARRAY_ADD(tl->cp_ranks, tl->ncp_ranks, tl->cp_ranks_cap);
		if (!r) {
			rc = -ENOMEM;
			break;
		}
		r->state = v[i]->state;
		r->alone = v[i]->alone;
		r->throttled = v[i]->throttled;
		r->ns = v[i]->ns;
		rc = xstrdup_to(&r->comm, v[i]->comm);
		if (!rc)
			rc = xstrdup_to(&r->caller, v[i]->caller);
	}
	free(v);
	if (!rc)
		qsort(tl->cp_ranks, tl->ncp_ranks, sizeof(*tl->cp_ranks), cmp_rank);
	return rc;
}

/* The task the path starts from: end_tid's at the end, else the last task to end. */
static int end_task(const struct ctx *c, size_t *ret)
{
	const struct sp_timeline *tl = c->tl;

	if (tl->end_tid) {
		*ret = task_at(c, tl->end_tid, c->end);
		return *ret == NONE ? -EINVAL : 0;
	}
	*ret = 0;
	for (size_t k = 1; k < tl->ntasks; k++)
		if (task_end(c, k) > task_end(c, *ret))
			*ret = k;
	return 0;
}

static int analyze(struct ctx *c, int ncpus)
{
	struct sp_timeline *tl = c->tl;
	uint64_t t0, stop;
	size_t k;
	int rc;

	rc = index_timeline(c);
	if (rc)
		return rc;
	c->end = tl->end_ns;
	if (!c->end)
		for (size_t i = 0; i < tl->ntasks; i++)
			if (task_end(c, i) > c->end)
				c->end = task_end(c, i);
	rc = end_task(c, &k);
	if (rc)
		return rc;
	rc = sweep(c, ncpus);
	if (rc)
		return rc;
	/* the end task may have exited before the job's end: nothing of it ran after that */
	t0 = task_end(c, k) < c->end ? task_end(c, k) : c->end;
	rc = walk(c, k, t0, &stop);
	if (rc)
		return rc;
	tl->cp_total_ns = t0 - stop;
	rc = build_path(c);
	return rc ? rc : rank_path(tl);
}

int sp_timeline_analyze(struct sp_timeline *tl, int ncpus)
{
	struct ctx c = { .tl = tl };
	int rc;

	clear_results(tl);
	if (!tl->ntasks)
		return tl->nsegs ? -EINVAL : 0;
	rc = analyze(&c, ncpus);
	if (rc)
		clear_results(tl);
	free(c.keys);
	free(c.first);
	free(c.nseg);
	free(c.seg_task);
	free(c.alone);
	free(c.steps);
	return rc;
}
