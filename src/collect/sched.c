// SPDX-License-Identifier: BSD-2-Clause
/*
 * The schedules view's collector: sched_switch's program and maps; after the run, the maps
 * are dumped (maps.h) and sched_rows.c builds the rows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collector.h"
#include "log.h"
#include "maps.h"
#include "sched_rows.h"
#include "schedprof/schedprof.h"
#include "schedprof.skel.h"

struct sched_state {
	struct schedprof_bpf *skel;
};

/* Before load: map sizes, and the schedules part of the shared sp_switch program on. */
static int sched_configure(struct trace_ctx *ctx, void **ret_state)
{
	const struct trace_opts *o = ctx->opts;
	struct schedprof_bpf *skel = ctx->skel;
	struct sched_state *st;

	if (ctx->unavailable)
		return -ENOTSUP;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->skel = skel;
	skel->rodata->switch_sched = 1;
	bpf_map__set_max_entries(skel->maps.callers, o->max_callers);
	bpf_map__set_max_entries(skel->maps.stack_counts, o->max_stacks);
	bpf_map__set_max_entries(skel->maps.stacks, o->max_stacks);
	*ret_state = st;
	return 0;
}

/* Not selected: its part of sp_switch stays off, its preallocated maps as small as can be. */
static void sched_disable(struct schedprof_bpf *skel)
{
	bpf_map__set_max_entries(skel->maps.callers, 1);
	bpf_map__set_max_entries(skel->maps.stack_counts, 1);
	bpf_map__set_max_entries(skel->maps.stacks, 1);
}

static void sched_destroy(void *state)
{
	free(state);
}

static int sched_read(void *state, struct trace_ctx *ctx, struct sp_run *run)
{
	struct sched_state *st = state;
	struct schedprof_bpf *skel = st->skel;
	const struct sp_sched_drops *d = &skel->bss->sched_drops;
	struct sp_sched_view *v = &run->sched;
	struct sched_maps m = {};
	int err;

	v->present = true;
	v->total = skel->bss->sched_counts.total;
	v->voluntary = skel->bss->sched_counts.voluntary;
	v->preempted = skel->bss->sched_counts.preempted;
	v->idle = skel->bss->sched_counts.idle;
	v->missing_stacks = d->stack_fail + d->stack_map_full + d->stackagg_map_full;
	v->lost_rows = d->caller_map_full;
	err = map_dump(bpf_map__fd(skel->maps.callers), &m.callers) ?:
	      map_dump(bpf_map__fd(skel->maps.stack_counts), &m.stack_counts) ?:
	      map_dump(bpf_map__fd(skel->maps.stacks), &m.stacks) ?:
	      sched_rows_build(v, &m, ctx->ksyms, &skel->bss->fold_cfg);
	map_dump_report("schedules", "rows", &m.callers, &m.stack_counts, &m.stacks);
	sched_maps_free(&m);
	if (d->task_storage_fail)
		wlog("%llu sleeps have no off-CPU time (task storage could not be created)",
		     (unsigned long long)d->task_storage_fail);
	return err;
}

const struct collector sched_collector = {
	.view = &sp_view_schedules,
	.configure = sched_configure,
	.disable = sched_disable,
	.read = sched_read,
	.destroy = sched_destroy,
};
