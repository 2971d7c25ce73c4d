// SPDX-License-Identifier: BSD-2-Clause
/* The schedules view's collector: loads sched.bpf.o, reads its maps into the model. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collector.h"
#include "foldcfg.h"
#include "kstack.h"
#include "log.h"
#include "util.h"
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

/* The coarse wait class: a lock kind or io from BPF, else "pipe" for the pipe paths. */
static const char *wait_name(uint32_t wait, const char *caller)
{
	if (fold_wait_name(wait))
		return fold_wait_name(wait);
	if (strstr(caller, "pipe_read") || strstr(caller, "pipe_write") || strstr(caller, "pipe_wait"))
		return "pipe";
	return NULL;
}

static struct sp_sched_row *find_row(struct sp_sched_view *v, const char *caller, const char *wait)
{
	for (size_t i = 0; i < v->nrows; i++) {
		struct sp_sched_row *r = &v->rows[i];

		if (!strcmp(r->caller, caller) && !strcmp(r->wait ? r->wait : "", wait ? wait : ""))
			return r;
	}
	return NULL;
}

static struct sp_sched_row *get_row(struct sp_sched_view *v, const struct ksyms *ks, uint64_t ip,
				    uint32_t wait)
{
	struct sp_sched_row *r;
	const char *w;
	char *name;

	name = kstack_name(ks, ip);
	if (!name)
		return NULL;
	w = wait_name(wait, name);
	r = find_row(v, name, w);
	if (r) {
		free(name);
		return r;
	}
	r = sp_sched_add_row(v);
	if (!r) {
		free(name);
		return NULL;
	}
	r->caller = name;
	r->wait = xstrdup(w);
	if (w && !r->wait)
		return NULL;
	return r;
}

static int read_callers(struct schedprof_bpf *skel, const struct ksyms *ks, struct sp_sched_view *v)
{
	int fd = bpf_map__fd(skel->maps.callers);
	struct sp_caller_key key, *prev = NULL;
	struct sp_caller_val val;
	char comm[TASK_COMM_LEN + 1];

	while (bpf_map_get_next_key(fd, prev, &key) == 0) {
		struct sp_sched_row *r;

		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val))
			continue; /* deleted meanwhile: cannot happen, the programs never delete */
		r = get_row(v, ks, key.caller, key.wait);
		if (!r)
			return -ENOMEM;
		r->count += val.count;
		r->offcpu_ns += val.offcpu_ns;
		if (val.max_ns > r->max_ns)
			r->max_ns = val.max_ns;
		if (sp_comm_list_add(&r->comms, kstack_comm(key.comm, comm), val.count,
				     val.offcpu_ns, val.max_ns))
			return -ENOMEM;
	}
	return 0;
}

static int read_stacks(struct schedprof_bpf *skel, const struct ksyms *ks, struct sp_sched_view *v)
{
	int fd = bpf_map__fd(skel->maps.stack_counts), sfd = bpf_map__fd(skel->maps.stacks);
	struct sp_stack_key key, *prev = NULL;
	struct sp_stack_val val;
	struct sp_stack st;
	char comm[TASK_COMM_LEN + 1];
	int err;

	while (bpf_map_get_next_key(fd, prev, &key) == 0) {
		struct sp_sched_row *r;
		struct sp_stack_row *s;

		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val) || bpf_map_lookup_elem(sfd, &key.stack, &st))
			continue;
		r = get_row(v, ks, key.caller, key.wait);
		if (!r)
			return -ENOMEM;
		s = sp_stack_list_add(&r->stacks);
		if (!s)
			return -ENOMEM;
		s->count = val.count;
		s->time_ns = val.offcpu_ns;
		s->comm = strdup(kstack_comm(key.comm, comm));
		if (!s->comm)
			return -ENOMEM;
		s->pid = (int)key.tgid;
		/* from the first scheduler frame: drops the tracepoint and BPF frames */
		err = kstack_fill(s, ks, &st, &skel->bss->fold_cfg, KSTACK_FROM_SCHED);
		if (err)
			return err;
	}
	return 0;
}

static int sched_read(void *state, struct trace_ctx *ctx, struct sp_run *run)
{
	struct sched_state *st = state;
	struct schedprof_bpf *skel = st->skel;
	struct sp_sched_view *v = &run->sched;
	int err;

	v->present = true;
	v->total = skel->bss->sched_counts.total;
	v->voluntary = skel->bss->sched_counts.voluntary;
	v->preempted = skel->bss->sched_counts.preempted;
	v->idle = skel->bss->sched_counts.idle;
	v->missing_stacks = skel->bss->sched_drops.stack_fail + skel->bss->sched_drops.stack_map_full +
			    skel->bss->sched_drops.stackagg_map_full;
	v->lost_rows = skel->bss->sched_drops.caller_map_full;
	err = read_callers(skel, ctx->ksyms, v);
	if (!err)
		err = read_stacks(skel, ctx->ksyms, v);
	if (err)
		return err;
	for (size_t i = 0; i < v->nrows; i++)
		sp_stack_list_merge(&v->rows[i].stacks);
	if (skel->bss->sched_drops.task_storage_fail)
		wlog("%llu sleeps have no off-CPU time (task storage could not be created)",
		     (unsigned long long)skel->bss->sched_drops.task_storage_fail);
	sp_sched_sort(v);
	return 0;
}

const struct collector sched_collector = {
	.name = "schedules",
	.view = SP_VIEW_SCHED,
	.configure = sched_configure,
	.disable = sched_disable,
	.read = sched_read,
	.destroy = sched_destroy,
};
