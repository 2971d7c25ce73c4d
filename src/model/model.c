// SPDX-License-Identifier: BSD-2-Clause
/* Ownership, growth and ranking of the run model (see model.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hashmap.h"
#include "model.h"
#include "util.h"

void sp_run_init(struct sp_run *run)
{
	memset(run, 0, sizeof(*run));
}

void sp_comm_list_free(struct sp_comm_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].comm);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static void stack_row_free(struct sp_stack_row *s)
{
	for (size_t i = 0; i < s->nframes; i++) {
		free(s->frames[i]);
		if (s->objects)
			free(s->objects[i]);
	}
	free(s->frames);
	free(s->objects);
	free(s->comm);
}

static bool stack_rows_alike(const struct sp_stack_row *a, const struct sp_stack_row *b)
{
	if (a->nframes != b->nframes || a->pid != b->pid || strcmp(a->comm, b->comm))
		return false;
	for (size_t k = 0; k < a->nframes; k++)
		if (strcmp(a->frames[k], b->frames[k]))
			return false;
	return true;
}

void sp_stack_list_merge_last(struct sp_stack_list *l)
{
	struct sp_stack_row *s;

	if (!l->n)
		return;
	s = &l->v[l->n - 1];
	for (size_t j = 0; j + 1 < l->n; j++) {
		if (stack_rows_alike(&l->v[j], s)) {
			l->v[j].count += s->count;
			l->v[j].time_ns += s->time_ns;
			stack_row_free(s);
			memset(s, 0, sizeof(*s)); /* the slot is reused by the next add */
			l->n--;
			return;
		}
	}
}

/* Stack rows by what stack_rows_alike() compares: keys are indexes into the list (ctx). */
static uint64_t stack_row_hash(long key, void *ctx)
{
	const struct sp_stack_row *s = &((const struct sp_stack_list *)ctx)->v[key];
	uint64_t h = hashmap_hash_bytes(s->comm, strlen(s->comm), (uint64_t)(unsigned int)s->pid);

	for (size_t k = 0; k < s->nframes; k++)
		h = hashmap_hash_bytes(s->frames[k], strlen(s->frames[k]), h);
	return h;
}

static bool stack_row_equal(long a, long b, void *ctx)
{
	const struct sp_stack_list *l = ctx;

	return stack_rows_alike(&l->v[a], &l->v[b]);
}

/*
 * Moves row i to the end of the merged prefix l->v[0..*n), or adds it to the first row alike
 * there (seen indexes them, with room reserved for every row). true when it merged.
 */
static bool stack_list_place(struct sp_stack_list *l, struct hashmap *seen, size_t i, size_t *n,
			     bool free_merged)
{
	struct sp_stack_row *s = &l->v[i];
	long j;

	if (hashmap__find(seen, (long)i, &j)) {
		l->v[j].count += s->count;
		l->v[j].time_ns += s->time_ns;
		if (free_merged)
			stack_row_free(s);
		memset(s, 0, sizeof(*s));
		return true;
	}
	if (i != *n) {
		l->v[*n] = *s;
		memset(s, 0, sizeof(*s));
	}
	/* keyed by its new place, where the hash and equality read it; cannot fail (reserved) */
	hashmap__add(seen, (long)*n, (long)*n);
	(*n)++;
	return false;
}

/*
 * Merges the rows alike of l in one pass, keeping the first of each kind in place.
 * -ENOMEM, with l untouched, when the index cannot be allocated.
 */
static int stack_list_merge_hashed(struct sp_stack_list *l, bool free_merged, bool *ret_merged)
{
	struct hashmap seen;
	size_t n = 0;
	int err;

	hashmap__init(&seen, stack_row_hash, stack_row_equal, l);
	err = hashmap__reserve(&seen, l->n);
	if (err)
		return err;
	for (size_t i = 0; i < l->n; i++)
		if (stack_list_place(l, &seen, i, &n, free_merged))
			*ret_merged = true;
	hashmap__clear(&seen);
	l->n = n;
	return 0;
}

void sp_stack_list_merge(struct sp_stack_list *l)
{
	size_t n = l->n;
	bool merged = false;

	if (!stack_list_merge_hashed(l, true, &merged))
		return;
	/* out of memory for the index: merge row by row, in quadratic time */
	l->n = 0;
	for (size_t i = 0; i < n; i++) {
		if (i != l->n) {
			l->v[l->n] = l->v[i];
			memset(&l->v[i], 0, sizeof(l->v[i]));
		}
		l->n++;
		sp_stack_list_merge_last(l);
	}
}

int sp_stack_list_merge_pids(const struct sp_stack_list *l, struct sp_stack_list *ret)
{
	bool merged = false;
	int err;

	memset(ret, 0, sizeof(*ret));
	if (!l->n)
		return 0;
	ret->v = calloc(l->n, sizeof(*ret->v));
	if (!ret->v)
		return -ENOMEM;
	ret->cap = ret->n = l->n;
	for (size_t i = 0; i < l->n; i++) {
		ret->v[i] = l->v[i];
		ret->v[i].pid = 0;
	}
	err = stack_list_merge_hashed(ret, false, &merged);
	if (err) {
		free(ret->v);
		memset(ret, 0, sizeof(*ret));
		return err;
	}
	if (merged) /* else l's order, whatever it is, stays */
		sp_stack_list_sort(ret);
	return 0;
}

static void stack_list_free(struct sp_stack_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		stack_row_free(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static void sched_view_free(struct sp_sched_view *v)
{
	for (size_t i = 0; i < v->nrows; i++) {
		free(v->rows[i].caller);
		free(v->rows[i].wait);
		sp_comm_list_free(&v->rows[i].comms);
		stack_list_free(&v->rows[i].stacks);
	}
	free(v->rows);
	memset(v, 0, sizeof(*v));
}

static void profile_view_free(struct sp_profile_view *v)
{
	for (size_t i = 0; i < v->nrows; i++) {
		free(v->rows[i].function);
		free(v->rows[i].object);
		sp_comm_list_free(&v->rows[i].comms);
		stack_list_free(&v->rows[i].stacks);
	}
	free(v->rows);
	memset(v, 0, sizeof(*v));
}

static void lock_view_free(struct sp_lock_view *v)
{
	for (size_t i = 0; i < v->nrows; i++) {
		free(v->rows[i].caller);
		free(v->rows[i].kind);
		free(v->rows[i].lock);
		free(v->rows[i].source);
		sp_comm_list_free(&v->rows[i].comms);
		stack_list_free(&v->rows[i].stacks);
		sp_comm_list_free(&v->rows[i].owners);
	}
	for (size_t i = 0; i < v->nsleepers; i++) {
		free(v->sleepers[i].caller);
		free(v->sleepers[i].kind);
		free(v->sleepers[i].lock);
		sp_comm_list_free(&v->sleepers[i].comms);
	}
	for (size_t i = 0; i < v->ngroups; i++) {
		free(v->groups[i].comm);
		free(v->groups[i].kind);
		free(v->groups[i].lock);
		sp_comm_list_free(&v->groups[i].callers);
	}
	free(v->rows);
	free(v->sleepers);
	free(v->groups);
	free(v->unavailable);
	memset(v, 0, sizeof(*v));
}

void sp_run_free(struct sp_run *run)
{
	if (!run)
		return;
	free(run->schema);
	free(run->version);
	free(run->kernel);
	free(run->hostname);
	free(run->target.command);
	free(run->target.pids);
	free(run->options);
	sched_view_free(&run->sched);
	profile_view_free(&run->profile);
	lock_view_free(&run->locks);
	for (size_t i = 0; i < run->objects.n; i++) {
		free(run->objects.v[i].path);
		free(run->objects.v[i].build_id);
	}
	free(run->objects.v);
	memset(run, 0, sizeof(*run));
}

struct sp_sched_row *sp_sched_add_row(struct sp_sched_view *v)
{
	if (grow((void **)&v->rows, &v->cap, v->nrows + 1, sizeof(*v->rows)))
		return NULL;
	return &v->rows[v->nrows++];
}

struct sp_stack_row *sp_stack_list_add(struct sp_stack_list *l)
{
	if (grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return NULL;
	return &l->v[l->n++];
}

struct sp_profile_row *sp_profile_add_row(struct sp_profile_view *v)
{
	if (grow((void **)&v->rows, &v->cap, v->nrows + 1, sizeof(*v->rows)))
		return NULL;
	return &v->rows[v->nrows++];
}

struct sp_lock_row *sp_lock_add_row(struct sp_lock_view *v)
{
	if (grow((void **)&v->rows, &v->cap, v->nrows + 1, sizeof(*v->rows)))
		return NULL;
	return &v->rows[v->nrows++];
}

struct sp_sleeper_row *sp_sleeper_add_row(struct sp_lock_view *v)
{
	if (grow((void **)&v->sleepers, &v->sleepers_cap, v->nsleepers + 1, sizeof(*v->sleepers)))
		return NULL;
	return &v->sleepers[v->nsleepers++];
}

struct sp_sleeper_group *sp_sleeper_add_group(struct sp_lock_view *v)
{
	if (grow((void **)&v->groups, &v->groups_cap, v->ngroups + 1, sizeof(*v->groups)))
		return NULL;
	return &v->groups[v->ngroups++];
}

int sp_comm_list_add(struct sp_comm_list *l, const char *comm, uint64_t count, uint64_t time_ns,
		     uint64_t max_ns)
{
	struct sp_comm_stat *c = NULL;

	for (size_t i = 0; i < l->n; i++) {
		if (!strcmp(l->v[i].comm, comm)) {
			c = &l->v[i];
			break;
		}
	}
	if (!c) {
		if (grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
			return -ENOMEM;
		c = &l->v[l->n];
		c->comm = strdup(comm);
		if (!c->comm)
			return -ENOMEM;
		l->n++;
	}
	c->count += count;
	c->time_ns += time_ns;
	if (max_ns > c->max_ns)
		c->max_ns = max_ns;
	return 0;
}

/* ---- UTF-8 fix-up: every string of the model, view by view ---- */

static int fix(char **s)
{
	char *d;

	for (const unsigned char *p = (const unsigned char *)*s; p && *p; p++) {
		if (*p < 0x80)
			continue;
		d = utf8_fix(*s); /* some non-ASCII: let the full check decide */
		if (!d)
			return -ENOMEM;
		free(*s);
		*s = d;
		break;
	}
	return 0;
}

static int fix_comms(struct sp_comm_list *l)
{
	int err = 0;

	for (size_t i = 0; !err && i < l->n; i++)
		err = fix(&l->v[i].comm);
	return err;
}

static int fix_stacks(struct sp_stack_list *l)
{
	int err = 0;

	for (size_t i = 0; !err && i < l->n; i++) {
		struct sp_stack_row *s = &l->v[i];

		err = fix(&s->comm);
		for (size_t j = 0; !err && j < s->nframes; j++)
			err = fix(&s->frames[j]) ?: (s->objects ? fix(&s->objects[j]) : 0);
	}
	return err;
}

int sp_run_fix_utf8(struct sp_run *run)
{
	struct sp_lock_view *lv = &run->locks;
	int err;

	err = fix(&run->version) ?: fix(&run->kernel) ?: fix(&run->hostname) ?:
	      fix(&run->options) ?: fix(&run->target.command);
	for (size_t i = 0; !err && i < run->objects.n; i++)
		err = fix(&run->objects.v[i].path) ?: fix(&run->objects.v[i].build_id);
	for (size_t i = 0; !err && i < run->sched.nrows; i++) {
		struct sp_sched_row *r = &run->sched.rows[i];

		err = fix(&r->caller) ?: fix(&r->wait) ?: fix_comms(&r->comms) ?:
		      fix_stacks(&r->stacks);
	}
	for (size_t i = 0; !err && i < run->profile.nrows; i++) {
		struct sp_profile_row *r = &run->profile.rows[i];

		err = fix(&r->function) ?: fix(&r->object) ?: fix_comms(&r->comms) ?:
		      fix_stacks(&r->stacks);
	}
	for (size_t i = 0; !err && i < lv->nrows; i++) {
		struct sp_lock_row *r = &lv->rows[i];

		err = fix(&r->caller) ?: fix(&r->kind) ?: fix(&r->lock) ?: fix(&r->source) ?:
		      fix_comms(&r->comms) ?: fix_comms(&r->owners) ?: fix_stacks(&r->stacks);
	}
	for (size_t i = 0; !err && i < lv->nsleepers; i++) {
		struct sp_sleeper_row *r = &lv->sleepers[i];

		err = fix(&r->caller) ?: fix(&r->kind) ?: fix(&r->lock) ?: fix_comms(&r->comms);
	}
	for (size_t i = 0; !err && i < lv->ngroups; i++) {
		struct sp_sleeper_group *g = &lv->groups[i];

		err = fix(&g->comm) ?: fix(&g->kind) ?: fix(&g->lock) ?: fix_comms(&g->callers);
	}
	return err ?: fix(&lv->unavailable);
}

int sp_object_list_add(struct sp_object_list *l, const char *path, const char *build_id)
{
	struct sp_object *o;

	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].path, path))
			return 0;
	if (grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return -ENOMEM;
	o = &l->v[l->n];
	o->path = strdup(path);
	o->build_id = strdup(build_id);
	if (!o->path || !o->build_id) {
		free(o->path);
		free(o->build_id);
		o->path = o->build_id = NULL;
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

const char *sp_run_build_id(const struct sp_run *run, const char *path)
{
	for (size_t i = 0; path && i < run->objects.n; i++)
		if (!strcmp(run->objects.v[i].path, path))
			return run->objects.v[i].build_id;
	return NULL;
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_sched_row(const void *pa, const void *pb)
{
	const struct sp_sched_row *a = pa, *b = pb;
	int c;

	c = cmp_u64_desc(a->count, b->count);
	if (!c)
		c = cmp_u64_desc(a->offcpu_ns, b->offcpu_ns);
	if (!c)
		c = cmp_str(a->caller, b->caller);
	if (!c)
		c = cmp_str(a->wait, b->wait);
	return c;
}

static int cmp_comm(const void *pa, const void *pb)
{
	const struct sp_comm_stat *a = pa, *b = pb;
	int c = cmp_u64_desc(a->count, b->count);

	if (!c)
		c = cmp_u64_desc(a->time_ns, b->time_ns);
	return c ? c : cmp_str(a->comm, b->comm);
}

static int cmp_stack(const void *pa, const void *pb)
{
	const struct sp_stack_row *a = pa, *b = pb;
	int c = cmp_u64_desc(a->count, b->count);

	if (!c)
		c = cmp_u64_desc(a->time_ns, b->time_ns);
	if (!c)
		c = cmp_str(a->comm, b->comm);
	for (size_t i = 0; !c && i < a->nframes && i < b->nframes; i++)
		c = cmp_str(a->frames[i], b->frames[i]);
	if (!c)
		c = a->nframes < b->nframes ? -1 : a->nframes > b->nframes;
	if (!c)
		c = a->pid < b->pid ? -1 : a->pid > b->pid;
	return c;
}

void sp_comm_list_sort(struct sp_comm_list *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_comm);
}

void sp_stack_list_sort(struct sp_stack_list *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_stack);
}

void sp_sched_sort(struct sp_sched_view *v)
{
	if (v->nrows > 1)
		qsort(v->rows, v->nrows, sizeof(*v->rows), cmp_sched_row);
	for (size_t i = 0; i < v->nrows; i++) {
		sp_comm_list_sort(&v->rows[i].comms);
		sp_stack_list_sort(&v->rows[i].stacks);
	}
}

static int cmp_profile_row(const void *pa, const void *pb)
{
	const struct sp_profile_row *a = pa, *b = pb;
	int c = cmp_u64_desc(a->samples, b->samples);

	if (!c)
		c = cmp_str(a->function, b->function);
	return c ? c : cmp_str(a->object, b->object);
}

void sp_profile_sort(struct sp_profile_view *v)
{
	if (v->nrows > 1)
		qsort(v->rows, v->nrows, sizeof(*v->rows), cmp_profile_row);
	for (size_t i = 0; i < v->nrows; i++) {
		sp_comm_list_sort(&v->rows[i].comms);
		sp_stack_list_sort(&v->rows[i].stacks);
	}
}

int sp_lock_row_cmp(const struct sp_lock_row *a, const struct sp_lock_row *b,
		    enum sp_lock_sort key)
{
	uint64_t ka[3] = { a->wait_ns, a->count, a->max_ns }, kb[3] = { b->wait_ns, b->count, b->max_ns };
	int c = cmp_u64_desc(ka[key % 3], kb[key % 3]);

	for (int i = 0; !c && i < 3; i++)
		c = cmp_u64_desc(ka[i], kb[i]);
	if (!c)
		c = cmp_str(a->caller, b->caller);
	if (!c)
		c = cmp_str(a->kind, b->kind);
	return c ? c : cmp_str(a->lock, b->lock);
}

static int cmp_lock_row(const void *pa, const void *pb, void *key)
{
	return sp_lock_row_cmp(pa, pb, *(const enum sp_lock_sort *)key);
}

static int cmp_sleeper(const void *pa, const void *pb)
{
	const struct sp_sleeper_row *a = pa, *b = pb;
	int c = cmp_u64_desc(a->offcpu_ns, b->offcpu_ns);

	if (!c)
		c = cmp_u64_desc(a->count, b->count);
	if (!c)
		c = cmp_str(a->caller, b->caller);
	if (!c)
		c = cmp_str(a->kind, b->kind);
	return c ? c : cmp_str(a->lock, b->lock);
}

static int cmp_group(const void *pa, const void *pb)
{
	const struct sp_sleeper_group *a = pa, *b = pb;
	int c = cmp_u64_desc(a->offcpu_ns, b->offcpu_ns);

	if (!c)
		c = cmp_u64_desc(a->count, b->count);
	if (!c)
		c = cmp_str(a->comm, b->comm);
	if (!c)
		c = cmp_str(a->kind, b->kind);
	return c ? c : cmp_str(a->lock, b->lock);
}

/* By time, not count: a caller list of a group ranks by what it cost. */
static int cmp_by_time(const void *pa, const void *pb)
{
	const struct sp_comm_stat *a = pa, *b = pb;
	int c = cmp_u64_desc(a->time_ns, b->time_ns);

	if (!c)
		c = cmp_u64_desc(a->count, b->count);
	return c ? c : cmp_str(a->comm, b->comm);
}

void sp_lock_sort(struct sp_lock_view *v, enum sp_lock_sort key)
{
	if (v->nrows > 1)
		qsort_r(v->rows, v->nrows, sizeof(*v->rows), cmp_lock_row, &key);
	if (v->nsleepers > 1)
		qsort(v->sleepers, v->nsleepers, sizeof(*v->sleepers), cmp_sleeper);
	if (v->ngroups > 1)
		qsort(v->groups, v->ngroups, sizeof(*v->groups), cmp_group);
	for (size_t i = 0; i < v->nrows; i++) {
		sp_comm_list_sort(&v->rows[i].comms);
		sp_comm_list_sort(&v->rows[i].owners);
		sp_stack_list_sort(&v->rows[i].stacks);
	}
	for (size_t i = 0; i < v->nsleepers; i++)
		sp_comm_list_sort(&v->sleepers[i].comms);
	for (size_t i = 0; i < v->ngroups; i++)
		if (v->groups[i].callers.n > 1)
			qsort(v->groups[i].callers.v, v->groups[i].callers.n,
			      sizeof(*v->groups[i].callers.v), cmp_by_time);
}
