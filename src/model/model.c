// SPDX-License-Identifier: BSD-2-Clause
/* Ownership, growth and ranking of the run model (see model.h). */
#include <errno.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "base/hashmap.h"
#include "model/model.h"
#include "model/strpool.h"
#include "base/textsafe.h"
#include "model/schema.h"
#include "base/util.h"
#include "model/view.h"

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

void sp_frame_info_free(struct sp_frame_info *info, size_t n)
{
	for (size_t i = 0; info && i < n; i++) {
		free(info[i].build_id);
		free(info[i].system_name);
		free(info[i].file);
	}
	free(info);
}

int sp_frame_info_dup(const struct sp_frame_info *info, size_t n, struct sp_frame_info **ret)
{
	struct sp_frame_info *d;

	*ret = NULL;
	if (!info)
		return 0;
	d = calloc(n ? n : 1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		d[i] = (struct sp_frame_info){ .addr = info[i].addr, .line = info[i].line,
					       .inlined = info[i].inlined };
		if (xstrdup_to(&d[i].build_id, info[i].build_id) ||
		    xstrdup_to(&d[i].system_name, info[i].system_name) ||
		    xstrdup_to(&d[i].file, info[i].file)) {
			sp_frame_info_free(d, i + 1);
			return -ENOMEM;
		}
	}
	*ret = d;
	return 0;
}

void sp_stack_row_free(struct sp_stack_row *s)
{
	for (size_t i = 0; i < s->nframes; i++) {
		free(s->frames[i]);
		if (s->objects)
			free(s->objects[i]);
	}
	free(s->frames);
	free(s->objects);
	sp_frame_info_free(s->info, s->nframes);
	s->info = NULL;
	free(s->comm);
}

int sp_stack_row_copy(struct sp_stack_row *d, const struct sp_stack_row *s)
{
	d->pid = s->pid;
	if (xstrdup_to(&d->comm, s->comm))
		return -ENOMEM;
	if (!s->nframes)
		return 0;
	d->frames = calloc(s->nframes, sizeof(*d->frames));
	if (!d->frames)
		return -ENOMEM;
	if (s->objects) {
		d->objects = calloc(s->nframes, sizeof(*d->objects));
		if (!d->objects)
			return -ENOMEM;
	}
	/* nframes counts the frames set, so that sp_stack_row_free frees a partial copy */
	for (size_t i = 0; i < s->nframes; i++) {
		d->nframes = i + 1;
		if (xstrdup_to(&d->frames[i], s->frames[i]) ||
		    (s->objects && xstrdup_to(&d->objects[i], s->objects[i])))
			return -ENOMEM;
	}
	return sp_frame_info_dup(s->info, s->nframes, &d->info);
}

static bool is_bracketed(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n >= 2 && s[0] == '[' && s[n - 1] == ']';
}

/* The bracketed objects of user frames (the kernel's names of special mappings, ours). */
static bool is_user_pseudo_object(const char *o)
{
	static const char *const names[] = { "[vdso]", "[vsyscall]", "[vvar]", "[heap]", "[stack]",
					     "[anon]", "[unknown]", "[jit]", "[uprobes]" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(o, names[i]))
			return true;
	/* "[anon:name]", "[stack:tid]" (prctl-named and old per-thread mappings) */
	return strchr(o, ':') != NULL;
}

enum sp_frame_kind sp_frame_kind_of(const char *name, const char *o,
				    const struct sp_frame_info *info)
{
	if (!o || !*o)
		return is_bracketed(name) ? SP_FRAME_PSEUDO : SP_FRAME_KERNEL;
	if (info && info->build_id)
		return SP_FRAME_USER;
	if (!strcmp(o, "[kernel]") || (is_bracketed(o) && !is_user_pseudo_object(o)))
		return SP_FRAME_KERNEL;
	return SP_FRAME_USER;
}

enum sp_frame_kind sp_frame_kind(const struct sp_stack_row *s, size_t i)
{
	return sp_frame_kind_of(s->frames[i], s->objects ? s->objects[i] : NULL,
				s->info ? &s->info[i] : NULL);
}

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

static const char *object_at(const struct sp_stack_row *s, size_t i)
{
	return s->objects ? str_or_empty(s->objects[i]) : "";
}

static uint64_t hash_str(const char *s, uint64_t h)
{
	s = str_or_empty(s);
	/* the terminating NUL separates the strings */
	return hashmap_hash_bytes(s, strlen(s) + 1, h);
}

uint64_t sp_stack_row_hash(const struct sp_stack_row *s, bool with_objects, uint64_t seed)
{
	uint64_t h = hash_str(s->comm, seed ^ hashmap_hash_u64((uint64_t)(unsigned int)s->pid));

	for (size_t i = 0; i < s->nframes; i++) {
		h = hash_str(s->frames[i], h);
		if (with_objects)
			h = hash_str(object_at(s, i), h);
		if (s->info) /* what sp_stack_rows_alike compares of it */
			h = hash_str(s->info[i].build_id, h ^ hashmap_hash_u64(s->info[i].addr));
	}
	return h;
}

static bool infos_alike(const struct sp_frame_info *a, const struct sp_frame_info *b)
{
	return a->addr == b->addr && !strcmp(str_or_empty(a->build_id), str_or_empty(b->build_id));
}

bool sp_stack_rows_alike(const struct sp_stack_row *a, const struct sp_stack_row *b,
			 bool with_objects)
{
	if (a->nframes != b->nframes || a->pid != b->pid || !a->info != !b->info ||
	    strcmp(str_or_empty(a->comm), str_or_empty(b->comm)))
		return false;
	for (size_t i = 0; i < a->nframes; i++) {
		if (strcmp(a->frames[i], b->frames[i]))
			return false;
		if (with_objects && strcmp(object_at(a, i), object_at(b, i)))
			return false;
		if (a->info && !infos_alike(&a->info[i], &b->info[i]))
			return false;
	}
	return true;
}

void sp_stack_list_merge_last(struct sp_stack_list *l)
{
	struct sp_stack_row *s;

	if (!l->n)
		return;
	s = &l->v[l->n - 1];
	for (size_t j = 0; j + 1 < l->n; j++) {
		if (sp_stack_rows_alike(&l->v[j], s, false)) {
			l->v[j].count += s->count;
			l->v[j].time_ns += s->time_ns;
			sp_stack_row_free(s);
			memset(s, 0, sizeof(*s)); /* the slot is reused by the next add */
			l->n--;
			return;
		}
	}
}

/* Stack rows by what sp_stack_rows_alike() compares: keys are indexes into the list (ctx). */
static uint64_t stack_row_hash(long key, void *ctx)
{
	return sp_stack_row_hash(&((const struct sp_stack_list *)ctx)->v[key], false, 0);
}

static bool stack_row_equal(long a, long b, void *ctx)
{
	const struct sp_stack_list *l = ctx;

	return sp_stack_rows_alike(&l->v[a], &l->v[b], false);
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
			sp_stack_row_free(s);
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

void sp_run_free(struct sp_run *run)
{
	if (!run)
		return;
	sp_schema_free(&sp_run_fields, run, run->strings);
	for (size_t i = 0; i < sp_nviews; i++)
		sp_schema_free(sp_views[i]->schema, sp_view_data(run, sp_views[i]), run->strings);
	sp_strpool_free(run->strings);
	memset(run, 0, sizeof(*run));
}

void *sp_array_add(void **v, size_t *n, size_t *cap, size_t size)
{
	if (grow(v, cap, *n + 1, size))
		return NULL;
	return (char *)*v + (*n)++ * size;
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

/* ---- UTF-8 fix-up: every string of the model, through the schema ---- */

bool sp_run_has_controls(const struct sp_run *run)
{
	/* a run read from JSON: its distinct strings, not each of its millions of frames */
	if (run->strings)
		return sp_strpool_any(run->strings, text_has_controls);
	if (sp_schema_has_controls(&sp_run_fields, run))
		return true;
	for (size_t i = 0; i < sp_nviews; i++)
		if (sp_schema_has_controls(sp_views[i]->schema,
					   sp_view_data((struct sp_run *)run, sp_views[i])))
			return true;
	return false;
}

/* fn on the run's own fields, then on each view's. */
static int each_schema(struct sp_run *run,
		       int (*fn)(const struct sp_schema *s, void *obj, struct sp_strpool *pool))
{
	int err = fn(&sp_run_fields, run, run->strings);

	for (size_t i = 0; !err && i < sp_nviews; i++)
		err = fn(sp_views[i]->schema, sp_view_data(run, sp_views[i]), run->strings);
	return err;
}

int sp_run_escape_controls(struct sp_run *run)
{
	return each_schema(run, sp_schema_escape_controls);
}

int sp_run_fix_utf8(struct sp_run *run)
{
	return each_schema(run, sp_schema_fix_utf8);
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

/*
 * A ranking as data: uint64_t members by descending value, or char * members (NULL as "")
 * in byte order, the first that differs deciding.
 */
struct sort_key {
	size_t off;
	bool str;
};

#define BY_U64(T, M) { offsetof(T, M), false }
#define BY_STR(T, M) { offsetof(T, M), true }
#define END_KEYS { SIZE_MAX, false }

static int cmp_keys(const void *a, const void *b, void *arg)
{
	int c = 0;

	for (const struct sort_key *k = arg; !c && k->off != SIZE_MAX; k++) {
		if (k->str)
			c = cmp_str(*(char *const *)((const char *)a + k->off),
				    *(char *const *)((const char *)b + k->off));
		else
			c = cmp_u64_desc(*(const uint64_t *)((const char *)a + k->off),
					 *(const uint64_t *)((const char *)b + k->off));
	}
	return c;
}

static void sort_by(void *v, size_t n, size_t size, const struct sort_key *keys)
{
	if (n > 1)
		qsort_r(v, n, size, cmp_keys, (void *)keys);
}

static const struct sort_key sched_keys[] = {
	BY_U64(struct sp_sched_row, count), BY_U64(struct sp_sched_row, offcpu_ns),
	BY_STR(struct sp_sched_row, caller), BY_STR(struct sp_sched_row, wait), END_KEYS,
};
/* wakers: by count desc, then comm, then function (NULL first) */
static const struct sort_key waker_keys[] = {
	BY_U64(struct sp_waker, count), BY_STR(struct sp_waker, comm),
	BY_STR(struct sp_waker, function), END_KEYS,
};
/* takers: by time desc, then count desc, then name */
static const struct sort_key taker_keys[] = {
	BY_U64(struct sp_cpu_taker, ns), BY_U64(struct sp_cpu_taker, count),
	BY_STR(struct sp_cpu_taker, kind), BY_STR(struct sp_cpu_taker, comm),
	BY_STR(struct sp_cpu_taker, cgroup), BY_STR(struct sp_cpu_taker, where), END_KEYS,
};
static const struct sort_key comm_keys[] = {
	BY_U64(struct sp_comm_stat, count), BY_U64(struct sp_comm_stat, time_ns),
	BY_STR(struct sp_comm_stat, comm), END_KEYS,
};
/* By time, not count: a caller list of a group ranks by what it cost. */
static const struct sort_key comm_time_keys[] = {
	BY_U64(struct sp_comm_stat, time_ns), BY_U64(struct sp_comm_stat, count),
	BY_STR(struct sp_comm_stat, comm), END_KEYS,
};
static const struct sort_key profile_keys[] = {
	BY_U64(struct sp_profile_row, samples), BY_STR(struct sp_profile_row, function),
	BY_STR(struct sp_profile_row, object), END_KEYS,
};
static const struct sort_key sleeper_keys[] = {
	BY_U64(struct sp_sleeper_row, offcpu_ns), BY_U64(struct sp_sleeper_row, count),
	BY_STR(struct sp_sleeper_row, caller), BY_STR(struct sp_sleeper_row, kind),
	BY_STR(struct sp_sleeper_row, lock), END_KEYS,
};
static const struct sort_key group_keys[] = {
	BY_U64(struct sp_sleeper_group, offcpu_ns), BY_U64(struct sp_sleeper_group, count),
	BY_STR(struct sp_sleeper_group, comm), BY_STR(struct sp_sleeper_group, kind),
	BY_STR(struct sp_sleeper_group, lock), END_KEYS,
};

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
	sort_by(l->v, l->n, sizeof(*l->v), comm_keys);
}

void sp_stack_list_sort(struct sp_stack_list *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_stack);
}

void sp_sched_sort(struct sp_sched_view *v)
{
	sort_by(v->rows, v->nrows, sizeof(*v->rows), sched_keys);
	sort_by(v->takers.v, v->takers.n, sizeof(*v->takers.v), taker_keys);
	for (size_t i = 0; i < v->nrows; i++) {
		struct sp_waker_list *w = &v->rows[i].wakers;

		sort_by(w->v, w->n, sizeof(*w->v), waker_keys);
		sort_by(v->rows[i].takers.v, v->rows[i].takers.n, sizeof(*v->rows[i].takers.v),
			taker_keys);
		sp_comm_list_sort(&v->rows[i].comms);
		sp_stack_list_sort(&v->rows[i].stacks);
	}
}

static bool taker_alike(const struct sp_cpu_taker *a, const struct sp_cpu_taker *b)
{
	if (strcmp(a->kind, b->kind) || strcmp(a->comm, b->comm) || strcmp(a->where, b->where))
		return false;
	if (a->cgroup_id || b->cgroup_id)
		return a->cgroup_id == b->cgroup_id;
	return a->cgroup && b->cgroup ? !strcmp(a->cgroup, b->cgroup) : a->cgroup == b->cgroup;
}

int sp_cpu_taker_add(struct sp_cpu_taker_list *l, const struct sp_cpu_taker *t)
{
	struct sp_cpu_taker *s = NULL;

	for (size_t k = 0; k < l->n && !s; k++)
		if (taker_alike(&l->v[k], t))
			s = &l->v[k];
	if (!s) {
		s = SP_ARRAY_ADD(l->v, l->n, l->cap);
		if (!s)
			return -ENOMEM;
		*s = (struct sp_cpu_taker){ .kind = strdup(t->kind), .comm = strdup(t->comm),
					    .where = strdup(t->where), .cgroup_id = t->cgroup_id };
		if (t->cgroup)
			s->cgroup = strdup(t->cgroup);
		if (!s->kind || !s->comm || !s->where || (t->cgroup && !s->cgroup))
			return -ENOMEM;
	}
	s->count += t->count;
	s->ns += t->ns;
	return 0;
}

int sp_sched_sum_takers(struct sp_sched_view *v)
{
	int err = 0;

	for (size_t i = 0; !err && i < v->nrows; i++)
		for (size_t j = 0; !err && j < v->rows[i].takers.n; j++)
			err = sp_cpu_taker_add(&v->takers, &v->rows[i].takers.v[j]);
	if (!err)
		sort_by(v->takers.v, v->takers.n, sizeof(*v->takers.v), taker_keys);
	return err;
}

void sp_profile_sort(struct sp_profile_view *v)
{
	sort_by(v->rows, v->nrows, sizeof(*v->rows), profile_keys);
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

void sp_lock_sort(struct sp_lock_view *v, enum sp_lock_sort key)
{
	if (v->nrows > 1)
		qsort_r(v->rows, v->nrows, sizeof(*v->rows), cmp_lock_row, &key);
	sort_by(v->sleepers, v->nsleepers, sizeof(*v->sleepers), sleeper_keys);
	sort_by(v->groups, v->ngroups, sizeof(*v->groups), group_keys);
	for (size_t i = 0; i < v->nrows; i++) {
		sp_comm_list_sort(&v->rows[i].comms);
		sp_comm_list_sort(&v->rows[i].owners);
		sp_stack_list_sort(&v->rows[i].stacks);
	}
	for (size_t i = 0; i < v->nsleepers; i++)
		sp_comm_list_sort(&v->sleepers[i].comms);
	for (size_t i = 0; i < v->ngroups; i++)
		sort_by(v->groups[i].callers.v, v->groups[i].callers.n,
			sizeof(*v->groups[i].callers.v), comm_time_keys);
}
