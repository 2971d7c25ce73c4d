// SPDX-License-Identifier: BSD-2-Clause
/* Ownership, growth and ranking of the run model (see model.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "util.h"

void sp_run_init(struct sp_run *run)
{
	memset(run, 0, sizeof(*run));
}

static void comm_list_free(struct sp_comm_list *l)
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
		comm_list_free(&v->rows[i].comms);
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
		comm_list_free(&v->rows[i].comms);
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
		comm_list_free(&v->rows[i].comms);
		stack_list_free(&v->rows[i].stacks);
	}
	for (size_t i = 0; i < v->nsleepers; i++) {
		free(v->sleepers[i].caller);
		free(v->sleepers[i].kind);
		free(v->sleepers[i].lock);
		comm_list_free(&v->sleepers[i].comms);
	}
	free(v->rows);
	free(v->sleepers);
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
