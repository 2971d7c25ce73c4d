// SPDX-License-Identifier: BSD-2-Clause
/* The samples of a view (see samples.h): stacks, per-comm remainders, and the lost count. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "base/hashmap.h"
#include "model/samples.h"
#include "base/util.h"
#include "model/view.h"

const char *sp_view_name(unsigned int view)
{
	const struct sp_view_ops *v = sp_view_find(view);

	return v ? v->name : "?";
}

const char *sp_view_count_name(unsigned int view)
{
	const struct sp_view_ops *v = sp_view_find(view);

	return v ? v->count_name : "count";
}

const char *sp_view_time_name(unsigned int view)
{
	const struct sp_view_ops *v = sp_view_find(view);

	return v ? v->time_name : "time";
}

unsigned int sp_samples_view(const struct sp_run *run, unsigned int views)
{
	for (size_t i = 0; i < sp_nviews; i++)
		if ((views & sp_views[i]->bit) && sp_views[i]->walk.rows &&
		    sp_view_present(run, sp_views[i]))
			return sp_views[i]->bit;
	return 0;
}

uint64_t sp_sample_value(const struct sp_sample *s, enum sp_value value)
{
	return value == SP_VALUE_TIME ? s->time_ns : s->count;
}

/* A row with its comms and stacks, seen alike for every view (view.h). */
struct row {
	struct sp_view_row r;
	uint64_t period_ns; /* profile: time = count x period; 0: time from the model */
};

static uint64_t sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static int walk_stacks(const struct row *r, const struct sp_stack_list *l, sp_sample_fn fn,
		       void *arg)
{
	struct sp_sample s;
	int err;

	for (size_t i = 0; i < l->n; i++) {
		const struct sp_stack_row *st = &l->v[i];
		size_t first = 0;

		/* the stack from the row's own frame up (see samples.h) */
		for (size_t j = 0; j < st->nframes; j++) {
			if (!strcmp(st->frames[j], r->r.name)) {
				first = j;
				break;
			}
		}
		s = (struct sp_sample){
			.comm = st->comm,
			.pid = st->pid > 0 ? st->pid : 0,
			.frames = (const char *const *)st->frames + first,
			.objects = st->objects ? (const char *const *)st->objects + first : NULL,
			.info = st->info ? st->info + first : NULL,
			.nframes = st->nframes - first,
			.count = st->count,
			.time_ns = r->period_ns ? st->count * r->period_ns : st->time_ns,
		};
		err = fn(&s, arg);
		if (err)
			return err;
	}
	return 0;
}

struct covered {
	uint64_t count, time;
};

/* cov[i]: what the stacks of comm i of the row sum to (one pass, comms found by name). */
static int stacks_by_comm(const struct row *r, struct covered *cov)
{
	struct hashmap idx;
	long i;
	int err;

	hashmap__init(&idx, hashmap_str_hash, hashmap_str_equal, NULL);
	err = hashmap__reserve(&idx, r->r.comms->n);
	for (size_t c = 0; !err && c < r->r.comms->n; c++) {
		err = hashmap__add(&idx, (long)r->r.comms->v[c].comm, (long)c);
		if (err == -EEXIST) /* a name listed twice: see below */
			err = 0;
	}
	for (size_t j = 0; !err && j < r->r.stacks->n; j++) {
		const struct sp_stack_row *st = &r->r.stacks->v[j];

		if (hashmap__find(&idx, (long)st->comm, &i)) {
			cov[i].count += st->count;
			cov[i].time += st->time_ns;
		}
	}
	/* every entry of a name is covered by all its stacks, as a scan per entry would find */
	for (size_t c = 0; !err && c < r->r.comms->n; c++)
		if (hashmap__find(&idx, (long)r->r.comms->v[c].comm, &i) && (size_t)i != c)
			cov[c] = cov[i];
	hashmap__clear(&idx);
	return err;
}

static int walk_row(const struct row *r, bool by_pid, sp_sample_fn fn, void *arg)
{
	struct sp_stack_list merged;
	struct covered *cov;
	struct sp_sample s;
	int err;

	if (by_pid) {
		err = walk_stacks(r, r->r.stacks, fn, arg);
	} else {
		err = sp_stack_list_merge_pids(r->r.stacks, &merged);
		if (!err)
			err = walk_stacks(r, &merged, fn, arg);
		free(merged.v);
	}
	if (err)
		return err;
	/* what the stacks of each comm do not cover */
	cov = calloc(r->r.comms->n ? r->r.comms->n : 1, sizeof(*cov));
	if (!cov)
		return -ENOMEM;
	err = stacks_by_comm(r, cov);
	for (size_t i = 0; !err && i < r->r.comms->n; i++) {
		const struct sp_comm_stat *c = &r->r.comms->v[i];
		uint64_t count = cov[i].count, time = cov[i].time;

		s = (struct sp_sample){
			.comm = c->comm,
			.frames = &r->r.name,
			.objects = r->r.object ? &r->r.object : NULL,
			.info = r->r.info,
			.nframes = 1,
			.count = sat_sub(c->count, count),
		};
		s.time_ns = r->period_ns ? s.count * r->period_ns : sat_sub(c->time_ns, time);
		if (s.count || s.time_ns)
			err = fn(&s, arg);
	}
	free(cov);
	return err;
}

static int walk_lost(uint64_t lost, sp_sample_fn fn, void *arg)
{
	static const char *const frame = SP_FRAME_LOST;
	struct sp_sample s = { .frames = &frame, .nframes = 1, .count = lost };

	return lost ? fn(&s, arg) : 0;
}

static int walk_view(const struct sp_run *run, unsigned int view, bool by_pid, sp_sample_fn fn,
		     void *arg)
{
	const struct sp_view_ops *v = sp_view_find(view);
	struct row r = { 0 };
	const char *rows;
	size_t n, size;
	int err = 0;

	if (!v)
		return -EINVAL;
	if (!v->walk.rows) /* no stacks */
		return 0;
	n = sp_view_rows(v, run, v->walk.rows, &rows, &size);
	if (v->period_ns)
		r.period_ns = v->period_ns(run);
	for (size_t i = 0; !err && i < n; i++) {
		sp_view_walk_row(&v->walk, rows + i * size, &r.r);
		if (v->walk_info_off)
			r.r.info = *SP_CAT(rows + i * size, v->walk_info_off, struct sp_frame_info *);
		err = walk_row(&r, by_pid, fn, arg);
	}
	return err ?: walk_lost(*SP_CAT(sp_view_cdata(run, v), v->walk.lost_off, uint64_t), fn,
				arg);
}

int sp_samples_for_each(const struct sp_run *run, unsigned int view, sp_sample_fn fn, void *arg)
{
	return walk_view(run, view, false, fn, arg);
}

int sp_samples_for_each_pid(const struct sp_run *run, unsigned int view, sp_sample_fn fn,
			    void *arg)
{
	return walk_view(run, view, true, fn, arg);
}
