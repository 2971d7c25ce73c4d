// SPDX-License-Identifier: BSD-2-Clause
/*
 * An interval's run = the cumulative run at its end minus the one at its start (run_delta.h).
 *
 * Every list is matched the same way: the start's elements go into an index by key; each
 * element of the end takes its match out of the index (so no element of the start is
 * subtracted twice, even if the end named two elements alike), and the elements left in the
 * index at the end are the vanished ones.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/hashmap.h"
#include "model/run_delta.h"
#include "base/util.h"

/* ---- a keyed index over one array of the start ---- */

#define NKEYS 3

/* An element's key: up to NKEYS strings (NULL is a key of its own, unlike ""). */
typedef void (*key_fn)(const void *elem, const char *k[NKEYS]);

struct index {
	struct hashmap map; /* key: a pointer to an element (of the start or the end) */
	key_fn key;
	bool stacks; /* elements are struct sp_stack_row, keyed by sp_stack_rows_alike */
};

static uint64_t elem_hash(long key, void *ctx)
{
	const struct index *x = ctx;
	const char *k[NKEYS] = {};
	uint64_t h = 0x5ca1ab1e;

	if (x->stacks)
		return sp_stack_row_hash((const struct sp_stack_row *)key, true, 0);
	x->key((const void *)key, k);
	for (int i = 0; i < NKEYS; i++) {
		unsigned char tag = k[i] ? 1 : 0;

		h = hashmap_hash_bytes(&tag, 1, h);
		if (k[i])
			h = hashmap_hash_bytes(k[i], strlen(k[i]) + 1, h);
	}
	return h;
}

static bool elem_equal(long a, long b, void *ctx)
{
	const struct index *x = ctx;
	const char *ka[NKEYS] = {}, *kb[NKEYS] = {};

	if (x->stacks)
		return sp_stack_rows_alike((const void *)a, (const void *)b, true);
	x->key((const void *)a, ka);
	x->key((const void *)b, kb);
	for (int i = 0; i < NKEYS; i++) {
		if (!ka[i] != !kb[i])
			return false;
		if (ka[i] && strcmp(ka[i], kb[i]))
			return false;
	}
	return true;
}

static int index_init(struct index *x, key_fn key, bool stacks, const void *v, size_t n,
		      size_t size)
{
	x->key = key;
	x->stacks = stacks;
	hashmap__init(&x->map, elem_hash, elem_equal, x);
	if (n && hashmap__reserve(&x->map, n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int err = hashmap__add(&x->map, (long)((const char *)v + i * size), 0);

		/* a second element alike in the start: the first is matched, this one vanishes */
		if (err && err != -EEXIST)
			return err;
	}
	return 0;
}

/* Takes elem's match out of the index: the start's element, or NULL. */
static const void *index_take(struct index *x, const void *elem)
{
	long old_key = 0;

	if (!hashmap__delete(&x->map, (long)elem, &old_key, NULL))
		return NULL;
	return (const void *)old_key;
}

/* Frees the index, counting what was never taken. */
static void index_done(struct index *x, struct sp_delta_stats *st)
{
	st->vanished += hashmap__size(&x->map);
	hashmap__clear(&x->map);
}

/* cur - prev, clamped at 0 (and counted) when the start had more. */
static uint64_t sub(uint64_t cur, uint64_t prev, struct sp_delta_stats *st)
{
	if (cur >= prev)
		return cur - prev;
	st->negative++;
	return 0;
}

#define SUB(d, c, p, f, st) ((d)->f = sub((c)->f, (p) ? (p)->f : 0, st))

/* ---- comms (and the lists of the same shape: owners, callers of a group) ---- */

static void comm_key(const void *e, const char *k[NKEYS])
{
	k[0] = ((const struct sp_comm_stat *)e)->comm;
}

static int comms_delta(const struct sp_comm_list *p, const struct sp_comm_list *c,
		       struct sp_comm_list *d, struct sp_delta_stats *st)
{
	struct index x;
	int err = index_init(&x, comm_key, false, p ? p->v : NULL, p ? p->n : 0, sizeof(*c->v));

	for (size_t i = 0; !err && i < c->n; i++) {
		const struct sp_comm_stat *cs = &c->v[i], *ps = index_take(&x, cs);
		struct sp_comm_stat *ds;
		uint64_t count = sub(cs->count, ps ? ps->count : 0, st);
		uint64_t time = sub(cs->time_ns, ps ? ps->time_ns : 0, st);

		if (!count && !time)
			continue;
		ds = SP_ARRAY_ADD(d->v, d->n, d->cap);
		if (!ds) {
			err = -ENOMEM;
			break;
		}
		ds->count = count;
		ds->time_ns = time;
		ds->max_ns = cs->max_ns; /* since the start */
		err = xstrdup_to(&ds->comm, cs->comm);
	}
	index_done(&x, st);
	return err;
}

/* ---- stacks ---- */

static int stacks_delta(const struct sp_stack_list *p, const struct sp_stack_list *c,
			struct sp_stack_list *d, struct sp_delta_stats *st)
{
	struct index x;
	int err = index_init(&x, NULL, true, p ? p->v : NULL, p ? p->n : 0, sizeof(*c->v));

	for (size_t i = 0; !err && i < c->n; i++) {
		const struct sp_stack_row *cs = &c->v[i], *ps = index_take(&x, cs);
		struct sp_stack_row *ds;
		uint64_t count = sub(cs->count, ps ? ps->count : 0, st);
		uint64_t time = sub(cs->time_ns, ps ? ps->time_ns : 0, st);

		if (!count && !time)
			continue;
		ds = sp_stack_list_add(d);
		if (!ds) {
			err = -ENOMEM;
			break;
		}
		ds->count = count;
		ds->time_ns = time;
		err = sp_stack_row_copy(ds, cs);
	}
	index_done(&x, st);
	return err;
}

/* ---- wakers ---- */

static void waker_key(const void *e, const char *k[NKEYS])
{
	const struct sp_waker *w = e;

	k[0] = w->comm;
	k[1] = w->function;
}

static int wakers_delta(const struct sp_waker_list *p, const struct sp_waker_list *c,
			struct sp_waker_list *d, struct sp_delta_stats *st)
{
	struct index x;
	int err = index_init(&x, waker_key, false, p ? p->v : NULL, p ? p->n : 0, sizeof(*c->v));

	for (size_t i = 0; !err && i < c->n; i++) {
		const struct sp_waker *cw = &c->v[i], *pw = index_take(&x, cw);
		struct sp_waker *dw;
		uint64_t count = sub(cw->count, pw ? pw->count : 0, st);

		if (!count)
			continue;
		dw = SP_ARRAY_ADD(d->v, d->n, d->cap);
		if (!dw) {
			err = -ENOMEM;
			break;
		}
		dw->count = count;
		err = xstrdup_to(&dw->comm, cw->comm) ?: xstrdup_to(&dw->function, cw->function);
	}
	index_done(&x, st);
	return err;
}

/* ---- schedules ---- */

static void sched_key(const void *e, const char *k[NKEYS])
{
	const struct sp_sched_row *r = e;

	k[0] = r->caller;
	k[1] = r->wait;
}

static int sched_row_delta(const struct sp_sched_row *p, const struct sp_sched_row *c,
			   struct sp_sched_view *dv, struct sp_delta_stats *st)
{
	struct sp_sched_row tmp = {}, *d;
	int err;

	SUB(&tmp, c, p, count, st);
	SUB(&tmp, c, p, offcpu_ns, st);
	SUB(&tmp, c, p, blocked_ns, st);
	SUB(&tmp, c, p, runq_ns, st);
	/* a state, not a sum: the sleeps in progress at the interval's end */
	tmp.unfinished = c->unfinished;
	if (!tmp.count && !tmp.offcpu_ns && !tmp.blocked_ns && !tmp.runq_ns && !tmp.unfinished)
		return 0;
	d = sp_sched_add_row(dv);
	if (!d)
		return -ENOMEM;
	*d = tmp;
	d->has_runq = c->has_runq;
	/* since the start: a maximum or a percentile does not subtract */
	d->max_ns = c->max_ns;
	d->runq_p50_ns = c->runq_p50_ns;
	d->runq_p99_ns = c->runq_p99_ns;
	d->runq_max_ns = c->runq_max_ns;
	err = xstrdup_to(&d->caller, c->caller) ?: xstrdup_to(&d->wait, c->wait);
	err = err ?: comms_delta(p ? &p->comms : NULL, &c->comms, &d->comms, st);
	err = err ?: stacks_delta(p ? &p->stacks : NULL, &c->stacks, &d->stacks, st);
	return err ?: wakers_delta(p ? &p->wakers : NULL, &c->wakers, &d->wakers, st);
}

/* Every member of struct sp_budget_blocked is a uint64_t count of ns. */
#define BLOCKED_N (sizeof(struct sp_budget_blocked) / sizeof(uint64_t))
_Static_assert(sizeof(struct sp_budget_blocked) % sizeof(uint64_t) == 0,
	       "struct sp_budget_blocked holds only uint64_t");

static void budget_delta(const struct sp_budget *p, const struct sp_budget *c,
			 struct sp_budget *d, struct sp_delta_stats *st)
{
	uint64_t pb[BLOCKED_N] = {}, cb[BLOCKED_N], db[BLOCKED_N];

	d->present = c->present;
	if (!c->present)
		return;
	if (p && p->present)
		memcpy(pb, &p->blocked, sizeof(pb));
	else
		p = NULL;
	memcpy(cb, &c->blocked, sizeof(cb));
	for (size_t i = 0; i < BLOCKED_N; i++)
		db[i] = sub(cb[i], pb[i], st);
	memcpy(&d->blocked, db, sizeof(db));
	SUB(d, c, p, oncpu_ns, st);
	SUB(d, c, p, runq_ns, st);
	SUB(d, c, p, blocked_ns, st);
	d->tasks = c->tasks; /* distinct tasks: since the start */
}

static int sched_delta(const struct sp_sched_view *p, const struct sp_sched_view *c,
		       struct sp_sched_view *d, struct sp_delta_stats *st)
{
	struct index x;
	int err;

	if (!c->present)
		return 0;
	if (p && !p->present)
		p = NULL;
	d->present = true;
	d->wakers = c->wakers;
	SUB(d, c, p, total, st);
	SUB(d, c, p, voluntary, st);
	SUB(d, c, p, preempted, st);
	SUB(d, c, p, idle, st);
	SUB(d, c, p, missing_stacks, st);
	SUB(d, c, p, user_truncated, st);
	SUB(d, c, p, user_missing, st);
	SUB(d, c, p, lost_rows, st);
	d->cache.present = c->cache.present;
	d->cache.verify_all = c->cache.verify_all;
	SUB(&d->cache, &c->cache, p ? &p->cache : NULL, fast, st);
	SUB(&d->cache, &c->cache, p ? &p->cache : NULL, verified, st);
	SUB(&d->cache, &c->cache, p ? &p->cache : NULL, mismatched, st);
	budget_delta(p ? &p->budget : NULL, &c->budget, &d->budget, st);
	err = index_init(&x, sched_key, false, p ? p->rows : NULL, p ? p->nrows : 0,
			 sizeof(*c->rows));
	for (size_t i = 0; !err && i < c->nrows; i++)
		err = sched_row_delta(index_take(&x, &c->rows[i]), &c->rows[i], d, st);
	index_done(&x, st);
	return err;
}

/* ---- profile ---- */

static void profile_key(const void *e, const char *k[NKEYS])
{
	const struct sp_profile_row *r = e;

	k[0] = r->function;
	k[1] = r->object;
}

static int profile_row_delta(const struct sp_profile_row *p, const struct sp_profile_row *c,
			     struct sp_profile_view *dv, struct sp_delta_stats *st)
{
	uint64_t samples = sub(c->samples, p ? p->samples : 0, st);
	struct sp_profile_row *d;

	if (!samples)
		return 0;
	d = sp_profile_add_row(dv);
	if (!d)
		return -ENOMEM;
	d->samples = samples;
	return xstrdup_to(&d->function, c->function) ?: xstrdup_to(&d->object, c->object) ?:
	       sp_frame_info_dup(c->info, 1, &d->info) ?:
	       comms_delta(p ? &p->comms : NULL, &c->comms, &d->comms, st) ?:
	       stacks_delta(p ? &p->stacks : NULL, &c->stacks, &d->stacks, st);
}

static int profile_delta(const struct sp_profile_view *p, const struct sp_profile_view *c,
			 struct sp_profile_view *d, struct sp_delta_stats *st)
{
	struct index x;
	int err;

	if (!c->present)
		return 0;
	if (p && !p->present)
		p = NULL;
	d->present = true;
	d->hz = c->hz;
	d->cpus = c->cpus;
	d->callchains = c->callchains;
	SUB(d, c, p, total, st);
	SUB(d, c, p, idle, st);
	SUB(d, c, p, target, st);
	SUB(d, c, p, other, st);
	SUB(d, c, p, unsymbolized, st);
	SUB(d, c, p, lost, st);
	SUB(d, c, p, user_truncated, st);
	SUB(d, c, p, missing_stacks, st);
	err = index_init(&x, profile_key, false, p ? p->rows : NULL, p ? p->nrows : 0,
			 sizeof(*c->rows));
	for (size_t i = 0; !err && i < c->nrows; i++)
		err = profile_row_delta(index_take(&x, &c->rows[i]), &c->rows[i], d, st);
	index_done(&x, st);
	return err;
}

/* ---- locks ---- */

static void lock_key(const void *e, const char *k[NKEYS])
{
	const struct sp_lock_row *r = e;

	k[0] = r->caller;
	k[1] = r->kind;
	k[2] = r->lock;
}

static int lock_row_delta(const struct sp_lock_row *p, const struct sp_lock_row *c,
			  struct sp_lock_view *dv, struct sp_delta_stats *st)
{
	struct sp_lock_row tmp = {}, *d;

	SUB(&tmp, c, p, count, st);
	SUB(&tmp, c, p, wait_ns, st);
	SUB(&tmp, c, p, failed, st);
	if (!tmp.count && !tmp.wait_ns && !tmp.failed)
		return 0;
	d = sp_lock_add_row(dv);
	if (!d)
		return -ENOMEM;
	*d = tmp;
	d->max_ns = c->max_ns; /* since the start */
	return xstrdup_to(&d->caller, c->caller) ?: xstrdup_to(&d->kind, c->kind) ?:
	       xstrdup_to(&d->lock, c->lock) ?: xstrdup_to(&d->source, c->source) ?:
	       comms_delta(p ? &p->comms : NULL, &c->comms, &d->comms, st) ?:
	       stacks_delta(p ? &p->stacks : NULL, &c->stacks, &d->stacks, st) ?:
	       comms_delta(p ? &p->owners : NULL, &c->owners, &d->owners, st);
}

static void sleeper_key(const void *e, const char *k[NKEYS])
{
	const struct sp_sleeper_row *r = e;

	k[0] = r->caller;
	k[1] = r->kind;
	k[2] = r->lock;
}

static int sleeper_delta(const struct sp_sleeper_row *p, const struct sp_sleeper_row *c,
			 struct sp_lock_view *dv, struct sp_delta_stats *st)
{
	struct sp_sleeper_row tmp = {}, *d;

	SUB(&tmp, c, p, count, st);
	SUB(&tmp, c, p, offcpu_ns, st);
	if (!tmp.count && !tmp.offcpu_ns)
		return 0;
	d = sp_sleeper_add_row(dv);
	if (!d)
		return -ENOMEM;
	*d = tmp;
	d->tasks = c->tasks; /* distinct tasks: since the start */
	d->max_ns = c->max_ns;
	return xstrdup_to(&d->caller, c->caller) ?: xstrdup_to(&d->kind, c->kind) ?:
	       xstrdup_to(&d->lock, c->lock) ?:
	       comms_delta(p ? &p->comms : NULL, &c->comms, &d->comms, st);
}

static void group_key(const void *e, const char *k[NKEYS])
{
	const struct sp_sleeper_group *g = e;

	k[0] = g->comm;
	k[1] = g->kind;
	k[2] = g->lock;
}

static int group_delta(const struct sp_sleeper_group *p, const struct sp_sleeper_group *c,
		       struct sp_lock_view *dv, struct sp_delta_stats *st)
{
	struct sp_sleeper_group tmp = {}, *d;

	SUB(&tmp, c, p, count, st);
	SUB(&tmp, c, p, offcpu_ns, st);
	if (!tmp.count && !tmp.offcpu_ns)
		return 0;
	d = sp_sleeper_add_group(dv);
	if (!d)
		return -ENOMEM;
	*d = tmp;
	d->tasks = c->tasks;
	d->max_ns = c->max_ns;
	return xstrdup_to(&d->comm, c->comm) ?: xstrdup_to(&d->kind, c->kind) ?:
	       xstrdup_to(&d->lock, c->lock) ?:
	       comms_delta(p ? &p->callers : NULL, &c->callers, &d->callers, st);
}

static int lock_delta(const struct sp_lock_view *p, const struct sp_lock_view *c,
		      struct sp_lock_view *d, struct sp_delta_stats *st)
{
	struct index x;
	int err;

	if (!c->present)
		return 0;
	if (p && !p->present)
		p = NULL;
	d->present = true;
	d->available = c->available;
	if (xstrdup_to(&d->unavailable, c->unavailable))
		return -ENOMEM;
	SUB(d, c, p, total, st);
	SUB(d, c, p, failed, st);
	SUB(d, c, p, lost, st);
	SUB(d, c, p, missing_stacks, st);
	SUB(d, c, p, user_truncated, st);
	SUB(d, c, p, user_missing, st);
	SUB(d, c, p, missed, st);
	SUB(d, c, p, unpaired, st);
	err = index_init(&x, lock_key, false, p ? p->rows : NULL, p ? p->nrows : 0,
			 sizeof(*c->rows));
	for (size_t i = 0; !err && i < c->nrows; i++)
		err = lock_row_delta(index_take(&x, &c->rows[i]), &c->rows[i], d, st);
	index_done(&x, st);
	if (err)
		return err;
	err = index_init(&x, sleeper_key, false, p ? p->sleepers : NULL, p ? p->nsleepers : 0,
			 sizeof(*c->sleepers));
	for (size_t i = 0; !err && i < c->nsleepers; i++)
		err = sleeper_delta(index_take(&x, &c->sleepers[i]), &c->sleepers[i], d, st);
	index_done(&x, st);
	if (err)
		return err;
	err = index_init(&x, group_key, false, p ? p->groups : NULL, p ? p->ngroups : 0,
			 sizeof(*c->groups));
	for (size_t i = 0; !err && i < c->ngroups; i++)
		err = group_delta(index_take(&x, &c->groups[i]), &c->groups[i], d, st);
	index_done(&x, st);
	return err;
}

/* ---- the run's own fields: cur's ---- */

static int target_copy(struct sp_target_info *d, const struct sp_target_info *c)
{
	d->mode = c->mode;
	d->system = c->system;
	d->exit_status = c->exit_status;
	d->has_rusage = c->has_rusage;
	d->user_ns = c->user_ns;
	d->sys_ns = c->sys_ns;
	if (xstrdup_to(&d->command, c->command) || xstrdup_to(&d->cgroup, c->cgroup))
		return -ENOMEM;
	if (c->npids) {
		d->pids = calloc(c->npids, sizeof(*d->pids));
		if (!d->pids)
			return -ENOMEM;
		memcpy(d->pids, c->pids, c->npids * sizeof(*d->pids));
		d->npids = c->npids;
	}
	return 0;
}

static int run_info_copy(struct sp_run *d, const struct sp_run *c)
{
	int err;

	d->ncpus = c->ncpus;
	d->start_unix_ns = c->start_unix_ns;
	d->elapsed_ns = c->elapsed_ns;
	err = xstrdup_to(&d->schema, c->schema) ?: xstrdup_to(&d->version, c->version) ?:
	      xstrdup_to(&d->kernel, c->kernel) ?: xstrdup_to(&d->hostname, c->hostname) ?:
	      xstrdup_to(&d->options, c->options) ?: target_copy(&d->target, &c->target);
	for (size_t i = 0; !err && i < c->objects.n; i++)
		err = sp_object_list_add(&d->objects, c->objects.v[i].path,
					 c->objects.v[i].build_id);
	return err;
}

int sp_run_delta(const struct sp_run *prev, const struct sp_run *cur, struct sp_run *ret,
		 struct sp_delta_stats *stats)
{
	struct sp_delta_stats st = {};
	int err;

	err = run_info_copy(ret, cur) ?:
	      sched_delta(prev ? &prev->sched : NULL, &cur->sched, &ret->sched, &st) ?:
	      profile_delta(prev ? &prev->profile : NULL, &cur->profile, &ret->profile, &st) ?:
	      lock_delta(prev ? &prev->locks : NULL, &cur->locks, &ret->locks, &st);
	if (stats)
		*stats = st;
	if (err)
		return err;
	/* ranked by what happened in the interval, not since the start */
	sp_sched_sort(&ret->sched);
	sp_profile_sort(&ret->profile);
	sp_lock_sort(&ret->locks, SP_LOCK_SORT_WAIT);
	return 0;
}
