// SPDX-License-Identifier: BSD-2-Clause
/*
 * The timeline's collector (--timeline): the traced tasks' state changes stream
 * through the tl_events ring buffer (bpf/timeline.bpf.[ch]; the switch events come from the
 * shared sp_switch, whose schedules part it turns on for the callers' fold). The buffer is
 * drained while tracing, so its size bounds only the bursts between two drains, and
 * rows.c turns the events into tasks and segments; after the run, critpath.c computes
 * the critical path, the parallelism and the serial phases from them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/collector.h"
#include "model/critpath.h"
#include "symbols/kstack.h"
#include "base/log.h"
#include "collect/cgroup_names.h"
#include "views/timeline/rows.h"
#include "base/util.h"
#include "schedprof/schedprof.h"
#include "schedprof.skel.h"

struct tl_state {
	struct schedprof_bpf *skel;
	struct ring_buffer *rb;
	struct tl_builder *b; /* from the run's start on (ctx->start_ns) */
	struct bpf_link *links[6];
	uint64_t buffer;
	int err; /* the builder's first error: the drain stops, the rest is lost */
};

/* The programs of the timeline, attached in this order: after target.bpf.c's own. */
#define TL_PROGS(skel)                                                                  \
	{ (skel)->progs.tl_fork, (skel)->progs.tl_exec, (skel)->progs.tl_exit,           \
	  (skel)->progs.tl_rename, (skel)->progs.tl_waking, (skel)->progs.tl_wakeup_new }

static int on_event(void *ctx, void *data, size_t size)
{
	struct tl_state *st = ctx;
	int err = tl_builder_add(st->b, data, size);

	/* a malformed event is counted; out of memory stops the drain */
	if (err == -ENOMEM) {
		st->err = err;
		return err;
	}
	return 0;
}

/* The builder, once the run's start is known: the events before wait in the buffer. */
static int builder_get(struct tl_state *st, const struct trace_ctx *ctx)
{
	if (st->b)
		return 0;
	if (!ctx->start_ns)
		return -EAGAIN;
	st->b = tl_builder_new(ctx->start_ns, 0);
	return st->b ? 0 : -ENOMEM;
}

static int drain(struct tl_state *st, const struct trace_ctx *ctx)
{
	int err = st->err ?: builder_get(st, ctx);

	if (err)
		return err == -EAGAIN ? 0 : err;
	err = ring_buffer__consume(st->rb);
	return err < 0 ? (st->err ?: err) : 0;
}

static int tl_poll_fd(void *state)
{
	struct tl_state *st = state;

	return st->rb && !st->err ? ring_buffer__epoll_fd(st->rb) : -1;
}

static int tl_poll(void *state, struct trace_ctx *ctx)
{
	return drain(state, ctx);
}

static void tl_destroy(void *state)
{
	struct tl_state *st = state;

	if (!st)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(st->links); i++)
		bpf_link__destroy(st->links[i]);
	ring_buffer__free(st->rb);
	tl_builder_free(st->b);
	free(st);
}

/* The ring buffer's size: a power of 2 of at least a page, as the kernel wants. */
static uint64_t buffer_size(uint64_t want)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), size = page;

	while (size < want && size < (1ULL << 31))
		size <<= 1;
	return size;
}

static int tl_configure(struct trace_ctx *ctx, void **ret_state)
{
	struct schedprof_bpf *skel = ctx->skel;
	struct tl_state *st;
	int err;

	err = collector_state_new(ctx, sizeof(*st), (void **)&st);
	if (err)
		return err;
	st->skel = skel;
	st->buffer = buffer_size(ctx->opts->timeline_buffer);
	if (st->buffer != ctx->opts->timeline_buffer)
		dlog("timeline: ring buffer of %" PRIu64 " bytes (a power of 2)", st->buffer);
	skel->rodata->switch_timeline = 1;
	preempt_count_setup(skel); /* [irq], [softirq] wakers */
	/*
	 * The callers of the switch-outs come from the schedules part's fold: on, with its maps
	 * at their size even when its view is not shown (sched_disable() made them one entry,
	 * where every other row would be a failed insert on each switch).
	 */
	skel->rodata->switch_sched = 1;
	if (!(ctx->opts->views & SP_VIEW_SCHED)) {
		bpf_map__set_max_entries(skel->maps.callers, ctx->opts->max_callers);
		bpf_map__set_max_entries(skel->maps.stack_counts, ctx->opts->max_stacks);
		bpf_map__set_max_entries(skel->maps.stacks, ctx->opts->max_stacks);
	}
	skel->rodata->tl_wakeup_bytes = st->buffer / 8;
	bpf_map__set_max_entries(skel->maps.tl_events, (__u32)st->buffer);
	*ret_state = st;
	return 0;
}

static void tl_disable(struct schedprof_bpf *skel)
{
	struct bpf_program *progs[] = TL_PROGS(skel);
	long page = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < ARRAY_SIZE(progs); i++)
		bpf_program__set_autoload(progs[i], false);
	if (page > 0)
		bpf_map__set_max_entries(skel->maps.tl_events, (__u32)page);
}

static int tl_setup(void *state, struct trace_ctx *ctx)
{
	struct tl_state *st = state;

	(void)ctx;
	st->rb = ring_buffer__new(bpf_map__fd(st->skel->maps.tl_events), on_event, st, NULL);
	return st->rb ? 0 : -errno;
}

static int tl_attach(void *state, struct trace_ctx *ctx)
{
	struct tl_state *st = state;
	struct bpf_program *progs[] = TL_PROGS(st->skel);

	(void)ctx;
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
		st->links[i] = bpf_program__attach(progs[i]);
		if (!st->links[i])
			return -errno;
	}
	return 0;
}

static void tl_detach(void *state)
{
	struct tl_state *st = state;

	for (size_t i = 0; i < ARRAY_SIZE(st->links); i++) {
		bpf_link__destroy(st->links[i]);
		st->links[i] = NULL;
	}
}

static char *name_of(void *arg, uint64_t ip)
{
	return kstack_name(arg, ip);
}

static int tl_read(void *state, struct trace_ctx *ctx, struct sp_run *run)
{
	struct tl_state *st = state;
	struct sp_timeline *tl = &run->timeline;
	struct tl_counts c = {};
	int err;

	/* an interval of trace -i or top shows no timeline; the final read builds it once */
	if (ctx->interval)
		return 0;
	err = drain(st, ctx);
	tl->present = true;
	tl->buffer_bytes = st->buffer;
	tl->lost = st->skel->bss->tl_stats.lost;
	if (st->b)
		tl_builder_counts(st->b, &c);
	tl->events = c.events;
	tl->dropped = c.dropped;
	if (!err && st->b) {
		struct tl_runq rq = { 0 };

		err = tl_builder_finish(st->b, run->elapsed_ns, ctx->job_tid, name_of, ctx->ksyms,
					tl, run->sched.present ? &rq : NULL);
		if (!err && run->sched.present)
			err = tl_runq_join(&rq, &run->sched) ?: cgroup2_name_takers(&run->sched);
		/* without the CPUs' steal over the run, no stolen time is told apart */
		if (!err)
			tl_cap_stolen(tl, run->sched.present && run->sched.budget.steal.present
						  ? run->sched.budget.steal.steal_ns : 0);
		if (rq.unknown_cpu)
			dlog("timeline: %" PRIu64 " waits for a CPU not laid against their CPU (no "
			     "switch seen there, or past the occupants' limit)", rq.unknown_cpu);
		tl_runq_free(&rq);
	}
	if (!err)
		err = sp_timeline_analyze(tl, run->ncpus);
	dlog("timeline: %" PRIu64 " events (%" PRIu64 " lost, %" PRIu64 " malformed, %" PRIu64
	     " after the segment limit), %zu tasks, %zu segments", c.events, tl->lost, c.bad,
	     c.dropped, tl->ntasks, tl->nsegs);
	if (tl->lost)
		wlog("timeline: %" PRIu64 " events lost (the ring buffer was full): raise "
		     "--timeline-buffer (%" PRIu64 " bytes)", tl->lost, st->buffer);
	if (c.dropped)
		wlog("timeline: cut at %.3f s, after %u segments: %" PRIu64 " later events not kept",
		     c.truncated_ns / 1e9, SP_TL_MAX_SEGS, c.dropped);
	if (c.bad)
		wlog("timeline: %" PRIu64 " malformed events ignored", c.bad);
	return err;
}

/* The kernel features its programs need (kfeatures.h). */
static unsigned int tl_needs(const struct trace_config *c)
{
	(void)c;
	return SP_FEAT(SP_FEAT_RINGBUF) | SP_FEAT(SP_FEAT_SWITCH_TP) | SP_FEAT(SP_FEAT_LOOP);
}

/* --strict: the events its ring buffer lost, and those after its segment limit. */
static void tl_losses(void *state, const struct trace_ctx *ctx, const struct sp_run *run,
		      struct trace_losses *l)
{
	(void)state;
	(void)ctx;
	trace_loss_add(l, run->timeline.lost, "timeline events lost (--timeline-buffer)");
	trace_loss_add(l, run->timeline.dropped, "timeline events after its segment limit");
}

const struct collector timeline_collector = {
	.view = &sp_view_timeline,
	.needs = tl_needs,
	.switch_part = true,
	.losses = tl_losses,
	COLLECTOR_OPS(tl),
};
