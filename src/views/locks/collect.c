// SPDX-License-Identifier: BSD-2-Clause
/*
 * The locks view's collector: loads lock.bpf.o's programs when the kernel has the
 * lock:contention_* tracepoints (else the view says it is unavailable and the other views
 * run alone); after the run, its maps are dumped (maps.h) and rows.c names each
 * contended lock and builds the rows, stacks, owners and sleepers, merging rows that name alike.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/collector.h"
#include "views/locks/rows.h"
#include "rows/uframes.h"
#include "collect/uframes_bpf.h"
#include "rows/lockflags.h"
#include "base/log.h"
#include "loader/maps.h"
#include "loader/prog_builds.h"
#include "base/util.h"
#include "schedprof/schedprof.h"
#include "schedprof.skel.h"

struct lock_state {
	struct schedprof_bpf *skel;
	struct bpf_link *begin, *end;
	bool available;
	char *why; /* when not available */
	const struct trace_config *opts;
	bool ustacks;		   /* --stacks: the waiters' user stacks too (bpf/ustack.bpf.h) */
	struct uframes_live *live; /* their usyms, shared with the other views */
	struct bpf_program *begin_prog; /* the build of lock_begin loaded (lock_configure()) */
};

/* Not selected or unavailable: no program, and maps as small as can be. */
static void lock_disable(struct schedprof_bpf *skel)
{
	sp_prog_build_load(skel->obj, "lock_begin", 0, false);
	bpf_program__set_autoload(skel->progs.lock_end, false);
	maps_shrink(skel->maps.lock_stat, skel->maps.lock_sleepers, skel->maps.lock_owners,
		    skel->maps.lock_names, skel->maps.lock_stack_counts, skel->maps.lock_stacks);
}

/* Without the kernel features (lock:contention_*, Linux 5.19), the view says why it is empty. */
static int lock_configure(struct trace_ctx *ctx, void **ret_state)
{
	const struct trace_config *o = ctx->opts;
	struct schedprof_bpf *skel = ctx->skel;
	struct lock_state *st;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->skel = skel;
	*ret_state = st;
	if (ctx->unavailable) {
		st->why = strdup(ctx->unavailable); /* the engine has said it */
		if (!st->why)
			return -ENOMEM;
		lock_disable(skel);
		return 0;
	}
	st->available = true;
	skel->rodata->switch_locks = 1;
	bpf_map__set_max_entries(skel->maps.lock_stat, o->max_callers);
	bpf_map__set_max_entries(skel->maps.lock_sleepers, o->max_callers);
	bpf_map__set_max_entries(skel->maps.lock_owners, o->max_callers);
	bpf_map__set_max_entries(skel->maps.lock_names, o->max_callers);
	bpf_map__set_max_entries(skel->maps.lock_stack_counts, o->max_stacks);
	bpf_map__set_max_entries(skel->maps.lock_stacks, o->max_stacks);
	st->opts = o;
	st->ustacks = o->full_stacks;
	skel->rodata->lock_ustacks = st->ustacks;
	/*
	 * Kept stacks (--lock-stacks, or full stacks) walk every contention; else the caller
	 * comes from the fast path (bpf/fastcaller.bpf.h: its frame_dist is sized with the
	 * shared maps, trace_load.c), and no stack is kept.
	 */
	skel->rodata->lock_caller_fast = !o->lock_stacks && !st->ustacks;
	skel->rodata->verify_callers = o->verify_callers;
	skel->rodata->kstack_cache = o->kstack_cache;
	/* lock_begin's build with the full walks (include/schedprof/progs.h) when stacks are kept */
	st->begin_prog = sp_prog_build_load(skel->obj, "lock_begin",
					    skel->rodata->lock_caller_fast ? 0 : SP_BUILD_FULL_WALKS,
					    true);
	if (skel->rodata->lock_caller_fast)
		maps_shrink(skel->maps.lock_stack_counts, skel->maps.lock_stacks);
	if (st->ustacks) {
		uframes_bpf_size(skel, o, true, true);
		preempt_count_setup(skel); /* no user stack for a contention in an interrupt */
	}
	return 0;
}

static int lock_poll_fd(void *state)
{
	return uframes_live_poll_fd(((struct lock_state *)state)->live);
}

static int lock_poll(void *state, struct trace_ctx *ctx)
{
	(void)ctx;
	return uframes_live_poll(((struct lock_state *)state)->live);
}

static int lock_setup(void *state, struct trace_ctx *ctx)
{
	struct lock_state *st = state;

	(void)ctx;
	if (!st->available || !st->ustacks)
		return 0;
	st->live = uframes_live_get(st->skel, st->opts);
	return st->live ? 0 : -errno;
}

static int lock_attach(void *state, struct trace_ctx *ctx)
{
	struct lock_state *st = state;

	(void)ctx;
	if (!st->available)
		return 0;
	/* ends first (and sp_switch, by the engine): a begin is never left without its pair */
	st->end = bpf_program__attach(st->skel->progs.lock_end);
	if (!st->end)
		return -errno;
	st->begin = bpf_program__attach(st->begin_prog);
	return st->begin ? 0 : -errno;
}

static void lock_detach(void *state)
{
	struct lock_state *st = state;

	bpf_link__destroy(st->begin);
	bpf_link__destroy(st->end);
	st->begin = st->end = NULL;
}

static void lock_destroy(void *state)
{
	struct lock_state *st = state;

	if (!st)
		return;
	lock_detach(st);
	uframes_live_put(st->live);
	free(st->why);
	free(st);
}

/* The totals (lock_counts, per CPU): summed into v. */
static int read_totals(struct schedprof_bpf *skel, int ncpus, struct sp_lock_view *v)
{
	struct sp_lock_counts sum;
	int err = map_pcpu_sum(bpf_map__fd(skel->maps.lock_counts), &sum, sizeof(sum), ncpus);

	v->total = sum.total;
	v->failed = sum.failed;
	return err;
}

static uint64_t prog_misses(struct bpf_program *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = p ? bpf_program__fd(p) : -1;

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.recursion_misses;
}

/* lock_begin's caller fast path, or lock_begin_full's kept stacks: the per-CPU counters, summed. */
static int read_cache(struct lock_state *st, int ncpus, struct sp_caller_cache *cache,
		      struct sp_caller_cache *stack_cache)
{
	struct schedprof_bpf *skel = st->skel;
	struct sp_lock_cache_counts c;
	int err;

	cache->present = skel->rodata->lock_caller_fast;
	cache->verify_all = skel->rodata->verify_callers;
	stack_cache->present = !cache->present && skel->rodata->kstack_cache;
	stack_cache->verify_all = skel->rodata->verify_callers;
	if (!cache->present && !stack_cache->present)
		return 0;
	err = map_pcpu_sum(bpf_map__fd(skel->maps.lock_cache_pcpu), &c, sizeof(c), ncpus);
	stack_cache->attributed = c.stacks;
	stack_cache->fast = c.stacks_fast;
	stack_cache->memo = c.stacks_memo;
	stack_cache->verified = c.stacks_verified;
	stack_cache->mismatched = c.stacks_mismatched;
	if (c.stacks_off)
		dlog("%llu kept lock stacks came in an interrupt on its own stack (no raw stack "
		     "words): walked", (unsigned long long)c.stacks_off);
	if (!cache->present)
		return err;
	cache->attributed = c.attributed;
	cache->fast = c.fast;
	cache->verified = c.verified;
	cache->mismatched = c.mismatched;
	if (c.fast_off)
		dlog("%llu lock contentions came in an interrupt on its own stack (no raw stack "
		     "words): walked", (unsigned long long)c.fast_off);
	if (skel->bss->frame_dist_full && !skel->rodata->caller_fast) /* else the schedules view says it */
		dlog("%llu frame distances not learned (frame_dist full)",
		     (unsigned long long)skel->bss->frame_dist_full);
	return err;
}

static int lock_read(void *state, struct trace_ctx *ctx, struct sp_run *run)
{
	struct lock_state *st = state;
	struct schedprof_bpf *skel = st->skel;
	struct sp_lock_view *v = &run->locks;
	const struct sp_lock_drops *d = &skel->bss->lock_drops;
	uint64_t rq[SP_MAX_CPUS];
	struct lock_maps m = {};
	struct uframes uf = { .run = run };
	int err;

	v->present = true;
	v->available = st->available;
	if (!st->available) {
		v->unavailable = xstrdup(st->why);
		return v->unavailable ? 0 : -ENOMEM;
	}
	err = read_totals(skel, ctx->ncpus, v);
	if (err)
		return err;
	v->lost = d->row_map_full;
	v->missing_stacks = d->stack_fail + d->stack_map_full + d->stackagg_map_full;
	v->unpaired = d->unpaired;
	v->missed = prog_misses(st->begin_prog) + prog_misses(skel->progs.lock_end);
	err = read_cache(st, ctx->ncpus, &v->cache, &v->stack_cache);
	if (err)
		wlog("the locks view's caller cache counters could not be read: %s", strerror(-err));
	if (d->task_storage_fail || d->nest_overflow)
		wlog("%llu lock contentions were not timed (task storage failed %llu, nested "
		     "deeper than %d on a CPU %llu)",
		     (unsigned long long)(d->task_storage_fail + d->nest_overflow),
		     (unsigned long long)d->task_storage_fail, SP_LOCK_SPIN_NEST,
		     (unsigned long long)d->nest_overflow);
	if (d->sleeper_map_full || d->owner_map_full)
		wlog("sleeper or owner map full: %llu sleeping contentions and %llu owners not "
		     "counted (raise --max-callers)",
		     (unsigned long long)d->sleeper_map_full, (unsigned long long)d->owner_map_full);
	err = map_dump(bpf_map__fd(skel->maps.lock_stat), &m.stat) ?:
	      map_dump(bpf_map__fd(skel->maps.lock_owners), &m.owners) ?:
	      map_dump(bpf_map__fd(skel->maps.lock_stack_counts), &m.stack_counts) ?:
	      map_dump(bpf_map__fd(skel->maps.lock_stacks), &m.stacks) ?:
	      map_dump(bpf_map__fd(skel->maps.lock_sleepers), &m.sleepers);
	if (!err && st->live)
		err = uframes_live_dump(st->live, &uf, skel, &m.pairs, &m.ustacks, 1, &v->user_cuts);
	if (!err) {
		/* a copy: the builder reads it many times, .bss is the kernel's */
		memcpy(rq, skel->bss->sp_cpu_rq_lock, sizeof(rq)); /* trace_load.c probe_cpu_rqs() */
		err = lock_rows_build(v, &m, ctx->ksyms, &skel->bss->fold_cfg, rq, SP_MAX_CPUS,
				      st->live ? &uf : NULL);
	}
	if (st->live) {
		uframes_memo_counts(skel, &skel->bss->lock_udrops, &v->ustack_cache);
		uframes_live_done("locks", &uf, &skel->bss->lock_udrops, skel, &m.pairs, &m.ustacks,
				  &v->user_truncated, &v->user_missing, &v->user_cuts);
	}
	map_dump_report("locks", "rows", &m.stat, &m.stack_counts, &m.stacks);
	if (m.owners.failed || m.sleepers.failed)
		wlog("%llu owner and %llu sleeper entries could not be read from their maps",
		     (unsigned long long)m.owners.failed, (unsigned long long)m.sleepers.failed);
	lock_maps_free(&m);
	if (err)
		return err;
	sp_lock_sort(v, ctx->opts->lock_sort);
	return 0;
}

/* The kernel features its programs need (kfeatures.h). */
static unsigned int lock_needs(const struct trace_config *c)
{
	(void)c;
	return SP_FEAT(SP_FEAT_LOCK_TP) | SP_FEAT(SP_FEAT_SWITCH_TP) | SP_FEAT(SP_FEAT_LOOP);
}

/* --strict: the contentions, sleepers and owners its BPF part could not count. */
static void lock_losses(void *state, const struct trace_ctx *ctx, const struct sp_run *run,
			struct trace_losses *l)
{
	const struct schedprof_bpf__bss *b = ctx->skel->bss;

	(void)state;
	(void)run;
	trace_loss_add(l, b->lock_drops.task_storage_fail + b->lock_drops.nest_overflow,
		       "contentions not timed");
	trace_loss_add(l, b->lock_drops.sleeper_map_full, "lock sleeps not counted (--max-callers)");
	trace_loss_add(l, b->lock_drops.owner_map_full, "lock owners not counted (--max-callers)");
}

const struct collector lock_collector = {
	.view = &sp_view_locks,
	.needs = lock_needs,
	.switch_part = true,
	.losses = lock_losses,
	COLLECTOR_OPS(lock),
};
