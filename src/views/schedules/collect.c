// SPDX-License-Identifier: BSD-2-Clause
/*
 * The schedules view's collector: sched_switch's program and maps, the wake-up programs
 * (sched_waking, sched_wakeup_new); at the stop, a task iterator charges what is still in
 * progress; then the maps are dumped (maps.h) and rows.c builds the rows and the budget.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader/cache.h"
#include "collect/collector.h"
#include "loader/kfeatures.h"
#include "base/log.h"
#include "loader/maps.h"
#include "views/schedules/rows.h"
#include "rows/uframes.h"
#include "collect/uframes_bpf.h"
#include "collect/cgroup_names.h"
#include "collect/quota.h"
#include "base/testhook.h"
#include "schedprof/schedprof.h"
#include "schedprof.skel.h"
#include "base/util.h"

struct sched_state {
	struct schedprof_bpf *skel;
	struct bpf_link *waking_link, *wakeup_new_link;
	bool stopped;
	int stop_err;			 /* the iterator's, reported at read */
	bool no_iter;			 /* the kernel has no task iterator (kfeatures.h) */
	struct sp_records in_progress;	 /* __u32 pid -> struct sp_sleep, at the stop */
	const struct trace_config *opts;
	bool ustacks;			 /* --stacks: the user stacks too (bpf/ustack.bpf.h) */
	struct uframes_live *live;	 /* their usyms, shared with the other views */
	struct cgq_state cgq;		 /* CPU quotas and steal (quota.h) */
	struct sp_records takers_seen;	 /* the last read's takers (sched_slots_settle()) */
	struct sp_records wakers_seen;	 /* and wakers */
};


/*
 * Where the wake-up program finds the preempt count (kfeatures_preempt_rq_off()): from the
 * kernel's BTF once per boot. Without it (not x86) BPF asks thread_info, or tells no
 * interrupt context apart. 0 or -ENOENT.
 */
static int preempt_rq_off(int64_t *ret)
{
	struct {
		int64_t off;
		int64_t found;
	} c = {};

	if (cache_load_fixed(NULL, CACHE_PREEMPT, &c, sizeof(c))) {
		c.found = !kfeatures_preempt_rq_off_file(NULL, &c.off);
		if (cache_store(NULL, CACHE_PREEMPT, &c, sizeof(c)))
			dlog("cannot cache the preempt count's place in /run/schedprof");
	}
	*ret = c.off;
	return c.found ? 0 : -ENOENT;
}

void preempt_count_setup(struct schedprof_bpf *skel)
{
	int64_t off;

	if (!preempt_rq_off(&off)) {
		skel->rodata->has_preempt_rq_off = 1;
		skel->rodata->preempt_rq_off = off;
	}
}

/* Before load: map sizes, and the schedules part of the shared sp_switch program on. */
static int sched_configure(struct trace_ctx *ctx, void **ret_state)
{
	const struct trace_config *o = ctx->opts;
	struct schedprof_bpf *skel = ctx->skel;
	struct sched_state *st;
	const char *hook;
	int err;

	err = collector_state_new(ctx, sizeof(*st), (void **)&st);
	if (err)
		return err;
	st->skel = skel;
	sp_records_init(&st->in_progress, sizeof(__u32), sizeof(struct sp_sleep));
	sp_records_init(&st->takers_seen, sizeof(struct sp_taker_key), sizeof(struct sp_taker_val));
	sp_records_init(&st->wakers_seen, sizeof(struct sp_waker_key), sizeof(__u64));
	/* without the task iterator the view runs, and the sleeps still open are not charged */
	if (!ctx->features->has[SP_FEAT_ITER_TASK]) {
		bpf_program__set_autoload(skel->progs.sp_sched_stop, false);
		st->no_iter = true;
	}
	skel->rodata->switch_sched = 1;
	skel->rodata->wake_walk = o->wakers;
	/* full stacks (-g, --stacks, a format that draws them) walk every voluntary switch */
	skel->rodata->caller_fast = !o->full_stacks;
	skel->rodata->kstack_cache = o->kstack_cache;
	skel->rodata->verify_callers = o->verify_callers;
	preempt_count_setup(skel);
	/* without a quota at the start no task can be throttled: BPF checks for none */
	err = cgq_scan(&st->cgq);
	if (err && err != -ENOENT)
		dlog("CPU quotas not read: %s", strerror(-err));
	skel->rodata->quota_check = st->cgq.nq > 0;
	/* the verifier budget measures one build whatever quotas the machine has */
	if ((hook = test_hook("SCHEDPROF_TEST_QUOTA_CHECK")))
		skel->rodata->quota_check = strcmp(hook, "0") != 0;
	/* the kernel's config, read once per boot with the features (kfeatures.h) */
	skel->rodata->steal_split = ctx->features->has[SP_FEAT_STEAL_SPLIT];
	bpf_map__set_max_entries(skel->maps.callers, o->max_callers);
	/*
	 * (row, waker) and (row, taker): a full map only loses the waker's or taker's name. A
	 * quarter of the rows: they are preallocated per CPU (src/views/schedules/schedules.bpf.c),
	 * and a row has few wakers and takers.
	 */
	bpf_map__set_max_entries(skel->maps.wakers, o->max_callers / 4 ?: 1);
	bpf_map__set_max_entries(skel->maps.takers, o->max_callers / 4 ?: 1);
	/*
	 * Without full stacks none is kept: the stack maps as small as can be (`stacks` is
	 * preallocated: its kernel memory is zeroed at every start-up). With them, the
	 * caller cache is off and so is its map.
	 */
	if (skel->rodata->caller_fast) {
		maps_shrink(skel->maps.stack_counts, skel->maps.stacks);
	} else {
		bpf_map__set_max_entries(skel->maps.stack_counts, o->max_stacks);
		bpf_map__set_max_entries(skel->maps.stacks, o->max_stacks);
	}
	st->opts = o;
	st->ustacks = o->full_stacks;
	skel->rodata->sched_ustacks = st->ustacks;
	if (st->ustacks)
		uframes_bpf_size(skel, o, true, true);
	*ret_state = st;
	return 0;
}

/* After load: the user stacks' symbols, fed while tracing by the process announcements. */
static int sched_setup(void *state, struct trace_ctx *ctx)
{
	struct sched_state *st = state;

	(void)ctx;
	if (!st->ustacks)
		return 0;
	st->live = uframes_live_get(st->skel, st->opts);
	return st->live ? 0 : -errno;
}

static int sched_poll_fd(void *state)
{
	return uframes_live_poll_fd(((struct sched_state *)state)->live);
}

static int sched_poll(void *state, struct trace_ctx *ctx)
{
	(void)ctx;
	return uframes_live_poll(((struct sched_state *)state)->live);
}

/* Not selected: its part of sp_switch stays off, its preallocated maps as small as can be. */
static void sched_disable(struct schedprof_bpf *skel)
{
	bpf_program__set_autoload(skel->progs.sp_waking, false);
	bpf_program__set_autoload(skel->progs.sp_wakeup_new, false);
	bpf_program__set_autoload(skel->progs.sp_sched_stop, false);
	maps_shrink(skel->maps.callers, skel->maps.wakers, skel->maps.takers,
		    skel->maps.stack_counts, skel->maps.stacks, skel->maps.throttled_cgs,
		    skel->maps.throttled_tasks);
}

/* The wake-up programs (the sched_switch program is the engine's: trace_load.c). */
static int sched_attach(void *state, struct trace_ctx *ctx)
{
	struct sched_state *st = state;

	(void)ctx;
	cgq_steal_start(&st->cgq);
	st->waking_link = bpf_program__attach(st->skel->progs.sp_waking);
	if (!st->waking_link)
		return -errno;
	st->wakeup_new_link = bpf_program__attach(st->skel->progs.sp_wakeup_new);
	if (!st->wakeup_new_link)
		return -errno;
	return 0;
}

/*
 * Freezes the programs (sched_stop_ns) and runs the task iterator sp_sched_stop once: the
 * state of every traced task still running, asleep or waiting for a CPU, read now since a
 * task that exits later (a command ended at the stop) takes its storage with it. Charged up
 * to the end of the run at read. 0 or -errno.
 */
static int read_in_progress(struct sched_state *st)
{
	struct sp_sleep rec;
	struct bpf_link *link;
	size_t got = 0;
	ssize_t n;
	int fd, err = 0;

	st->skel->bss->sched_stop_ns = now_ns(CLOCK_MONOTONIC);
	link = bpf_program__attach_iter(st->skel->progs.sp_sched_stop, NULL);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	/* whole records: the iterator writes each at once, a read may end between two */
	while ((n = read(fd, (char *)&rec + got, sizeof(rec) - got)) > 0) {
		got += (size_t)n;
		if (got < sizeof(rec))
			continue;
		got = 0;
		if (sp_records_add(&st->in_progress, &rec.pid, &rec)) {
			err = -ENOMEM;
			break;
		}
	}
	if (n < 0)
		err = -errno;
	close(fd);
out:
	bpf_link__destroy(link);
	return err;
}

static void sched_detach(void *state)
{
	struct sched_state *st = state;

	if (st->stopped)
		return;
	st->stopped = true;
	bpf_link__destroy(st->waking_link);
	bpf_link__destroy(st->wakeup_new_link);
	st->waking_link = st->wakeup_new_link = NULL;
	st->stop_err = st->no_iter ? -ENOTSUP : read_in_progress(st);
}

static void sched_destroy(void *state)
{
	struct sched_state *st = state;

	if (st) {
		bpf_link__destroy(st->waking_link);
		bpf_link__destroy(st->wakeup_new_link);
		sp_records_free(&st->in_progress);
		sp_records_free(&st->takers_seen);
		sp_records_free(&st->wakers_seen);
		uframes_live_put(st->live);
		cgq_free(&st->cgq);
	}
	free(state);
}

/* The per-CPU counters and budget (sched_pcpu), added up. 0 or -errno. */
static int read_pcpu(struct sched_state *st, int ncpus, struct sp_budget_counts *bg,
		     struct sp_sched_counts *c)
{
	struct sp_sched_pcpu sum;
	int err;

	_Static_assert(sizeof(struct sp_sched_pcpu) % sizeof(__u64) == 0, "only __u64 sums");
	err = map_pcpu_sum(bpf_map__fd(st->skel->maps.sched_pcpu), &sum, sizeof(sum), ncpus);
	*bg = sum.budget;
	*c = sum.counts;
	return err;
}

/*
 * A per-CPU struct of slots (struct sp_taker_pcpu, struct sp_waker_pcpu): its generation marks
 * its first and last words, then n slots of slot bytes from offset slots, each a key and its
 * value (key_size, value_size), the value's first word its count (0: a free slot).
 */
struct slots_layout {
	const char *what;
	size_t size, slots, slot, key_size, value_size;
	int n;
};

#define SLOTS_LAYOUT(what_, pcpu, key, value_size_, nslots)                                     \
	((struct slots_layout){ .what = (what_),                                                 \
				.size = sizeof(struct pcpu),                                     \
				.slots = offsetof(struct pcpu, last),                            \
				.slot = sizeof(((struct pcpu *)0)->last[0]),                     \
				.key_size = sizeof(struct key),                                  \
				.value_size = (value_size_),                                     \
				.n = (nslots) })

/*
 * Each CPU's last takers or wakers, not yet in their map (struct slots_layout), as records of
 * their own: sched_slots_settle() merges them. Read after the map: one that moves from a slot
 * to the map in between is in neither (the settle keeps the counts from going back), never in
 * both. While sp_switch runs, a CPU's copy that saw a slot half-taken (its generation marks
 * differ) is read again, a few times, then left out. 0 or -errno.
 */
static int read_slots(int fd, int ncpus, const struct slots_layout *l, struct sp_records *out)
{
	char *per;
	bool *done;
	int err = 0, left = ncpus;

	if (l->size % sizeof(__u64))
		return -EINVAL;
	per = calloc((size_t)ncpus, l->size);
	done = calloc((size_t)ncpus, sizeof(*done));
	if (!per || !done) {
		free(per);
		free(done);
		return -ENOMEM;
	}
	if (!out->n) { /* an empty dump's sizes may be its per-CPU ones: set the folded ones */
		uint64_t failed = out->failed;

		sp_records_free(out);
		sp_records_init(out, l->key_size, l->value_size);
		out->failed = failed;
	}
	for (int tries = 0; !err && left && tries < 8; tries++) {
		err = map_pcpu_read(fd, per, l->size, ncpus);
		for (int i = 0; !err && i < ncpus; i++) {
			const char *c = per + (size_t)i * l->size;
			__u64 begin, end, count;

			memcpy(&begin, c, sizeof(begin));
			memcpy(&end, c + l->size - sizeof(end), sizeof(end));
			if (done[i] || begin != end)
				continue;
			done[i] = true;
			left--;
			for (int k = 0; !err && k < l->n; k++) {
				const char *slot = c + l->slots + (size_t)k * l->slot;

				memcpy(&count, slot + l->key_size, sizeof(count));
				if (count && sp_records_add(out, slot, slot + l->key_size))
					err = -ENOMEM;
			}
		}
	}
	if (!err && left)
		dlog("the CPU %s' slots of %d CPUs changed at every read: left to a later one",
		     l->what, left);
	free(per);
	free(done);
	return err;
}

/* The takers and wakers of a read: their maps' (folded), then the CPUs' slots, settled. */
static int read_slotted(struct sched_state *st, int ncpus, struct sched_maps *m)
{
	const struct slots_layout tl = SLOTS_LAYOUT("takers", sp_taker_pcpu, sp_taker_key,
						    sizeof(struct sp_taker_val), SP_TAKER_SLOTS);
	const struct slots_layout wl = SLOTS_LAYOUT("wakers", sp_waker_pcpu, sp_waker_key,
						    sizeof(__u64), SP_WAKER_SLOTS);

	_Static_assert(offsetof(struct sp_taker_slot, val) == sizeof(struct sp_taker_key) &&
			       offsetof(struct sp_waker_slot, count) == sizeof(struct sp_waker_key),
		       "a slot's value follows its key");
	_Static_assert(offsetof(struct sp_taker_pcpu, gen_begin) == 0 &&
			       offsetof(struct sp_taker_pcpu, gen_end) ==
				       sizeof(struct sp_taker_pcpu) - sizeof(__u64) &&
			       offsetof(struct sp_waker_pcpu, gen_begin) == 0 &&
			       offsetof(struct sp_waker_pcpu, gen_end) ==
				       sizeof(struct sp_waker_pcpu) - sizeof(__u64),
		       "the generation marks are first and last");
	return read_slots(bpf_map__fd(st->skel->maps.taker_pcpu), ncpus, &tl, &m->takers) ?:
	       read_slots(bpf_map__fd(st->skel->maps.waker_pcpu), ncpus, &wl, &m->wakers) ?:
	       sched_slots_settle(&m->takers, &st->takers_seen) ?:
	       sched_slots_settle(&m->wakers, &st->wakers_seen);
}

/* The budget's throttling cgroups (named from the ids BPF kept) and the run's steal. */
static int budget_quota(struct sched_state *st, struct sp_budget *b)
{
	struct sp_records cg = { 0 };
	int err = 0;

	sp_records_init(&cg, sizeof(__u64), sizeof(__u64));
	if (st->skel->rodata->quota_check)
		err = map_dump(bpf_map__fd(st->skel->maps.throttled_cgs), &cg);
	if (!err)
		err = cgq_fill(&st->cgq, &cg, b);
	sp_records_free(&cg);
	/*
	 * The tasks' stolen time is at most the CPUs' steal over the run: the rest of the slices'
	 * differences is the measurement's own bias (on this 6.18 VM, with no steal, a spinner's
	 * slices differ by 2.8 us each on average, a compile job's by more).
	 */
	if (b->steal.present && b->steal.stolen_ns > b->steal.steal_ns)
		b->steal.stolen_ns = b->steal.steal_ns;
	return err;
}

static int sched_read(void *state, struct trace_ctx *ctx, struct sp_run *run)
{
	struct sched_state *st = state;
	struct schedprof_bpf *skel = st->skel;
	const struct sp_sched_drops *d = &skel->bss->sched_drops;
	struct sp_sched_view *v = &run->sched;
	struct sched_maps m = {};
	struct sp_sched_counts c = {};
	struct uframes uf = { .run = run };
	bool strict;
	int err;

	/* the stop's part (in-progress tasks, budget) only after the detach, not between */
	if (st->no_iter) {
		char why[160];

		kfeatures_describe(SP_FEAT_ITER_TASK, why, sizeof(why));
		wlog("the sleeps in progress at the stop are not charged: %s", why);
	} else if (st->stop_err) {
		wlog("the sleeps in progress at the stop are not charged (task iterator: %s)",
		     strerror(-st->stop_err));
	}
	/* the end of the run's window: its start (trace_t0) + elapsed, as the report says */
	m.t0 = skel->bss->trace_t0;
	m.stop = m.t0 && run->elapsed_ns ? m.t0 + run->elapsed_ns : skel->bss->sched_stop_ns;
	m.in_progress = st->in_progress;
	sp_records_init(&st->in_progress, sizeof(__u32), sizeof(struct sp_sleep));
	err = read_pcpu(st, ctx->ncpus, &m.budget, &c);
	if (err)
		wlog("the schedules view's counters could not be read: %s", strerror(-err));
	m.has_budget = st->stopped && !st->stop_err && !err;
	m.steal_split = skel->rodata->steal_split;
	v->present = true;
	v->wakers = ctx->opts->wakers;
	v->total = c.total;
	v->voluntary = c.voluntary;
	v->preempted = c.preempted;
	v->idle = c.idle;
	v->cache.present = skel->rodata->caller_fast;
	v->cache.verify_all = skel->rodata->verify_callers;
	v->cache.fast = c.callers_fast;
	v->cache.verified = c.callers_verified;
	v->cache.mismatched = c.callers_mismatched;
	v->stack_cache.present = !skel->rodata->caller_fast && skel->rodata->kstack_cache;
	v->stack_cache.verify_all = skel->rodata->verify_callers;
	v->stack_cache.fast = c.stacks_fast;
	v->stack_cache.memo = c.stacks_memo;
	v->waker_cache.memo = c.wakes_memo;
	v->stack_cache.verified = c.stacks_verified;
	v->stack_cache.mismatched = c.stacks_mismatched;
	v->waker_cache.present = skel->rodata->wake_walk && skel->rodata->kstack_cache;
	v->waker_cache.verify_all = skel->rodata->verify_callers;
	v->waker_cache.fast = c.wakes_fast;
	v->waker_cache.verified = c.wakes_verified;
	v->waker_cache.mismatched = c.wakes_mismatched;
	v->waker_cache.attributed = c.wakes_walked;
	if (c.stacks_off || c.wakes_off)
		dlog("%llu kept stacks and %llu wakers' could not read their raw stack (not the "
		     "task's: an interrupt's): walked", (unsigned long long)c.stacks_off,
		     (unsigned long long)c.wakes_off);
	if (c.callers_fast_off)
		dlog("%llu voluntary switches could not read their raw stack (the BPF stack is not "
		     "the task's): walked", (unsigned long long)c.callers_fast_off);
	if (skel->bss->frame_dist_full)
		dlog("%llu frame distances not learned (frame_dist full)",
		     (unsigned long long)skel->bss->frame_dist_full);
	v->missing_stacks = d->stack_fail + d->stack_map_full + d->stackagg_map_full;
	v->lost_rows = d->caller_map_full;
	err = map_dump(bpf_map__fd(skel->maps.callers), &m.callers) ?:
	      map_dump(bpf_map__fd(skel->maps.stack_counts), &m.stack_counts) ?:
	      map_dump(bpf_map__fd(skel->maps.stacks), &m.stacks) ?:
	      map_dump(bpf_map__fd(skel->maps.wakers), &m.wakers) ?:
	      map_dump(bpf_map__fd(skel->maps.takers), &m.takers) ?:
	      (skel->rodata->quota_check
		       ? map_dump(bpf_map__fd(skel->maps.throttled_tasks), &m.throttled)
		       : 0) ?:
	      sched_fold_pcpu(&m, ctx->ncpus) ?:
	      read_slotted(st, ctx->ncpus, &m);
	if (!err && st->live)
		err = uframes_live_dump(st->live, &uf, skel, &m.pairs, &m.ustacks, 0, &v->user_cuts);
	if (!err)
		err = sched_rows_build(v, &m, ctx->ksyms, &skel->bss->fold_cfg,
				       st->live ? &uf : NULL);
	if (!err)
		err = cgroup2_name_takers(v) ?: sp_sched_sum_takers(v);
	if (!err && v->budget.present)
		err = budget_quota(st, &v->budget);
	if (st->live) {
		uframes_memo_counts(skel, &skel->bss->sched_udrops, &v->ustack_cache);
		uframes_live_done("schedules", &uf, &skel->bss->sched_udrops, skel, &m.pairs,
				  &m.ustacks, &v->user_truncated, &v->user_missing, &v->user_cuts);
	}
	map_dump_report("schedules", "rows", &m.callers, &m.stack_counts, &m.stacks);
	sched_maps_free(&m);
	/* with --strict, the run's one closing line names the kernel side's losses instead */
	strict = ctx->opts && ctx->opts->strict;
	if (d->task_storage_fail && !strict)
		wlog("%llu sleeps have no off-CPU time (task storage could not be created)",
		     (unsigned long long)d->task_storage_fail);
	if ((d->waker_map_full && !strict) || m.wakers.failed)
		wlog("%llu wake-ups are counted in their rows but under no waker (--max-callers)",
		     (unsigned long long)(d->waker_map_full + m.wakers.failed));
	if ((d->taker_map_full && !strict) || m.takers.failed)
		wlog("%llu waits for a CPU are counted in their rows but under no taker of the CPU "
		     "(--max-callers)", (unsigned long long)(d->taker_map_full + m.takers.failed));
	if (d->switch_in_missed)
		dlog("%llu switch-outs had no switch-in seen before them: placed from the task's "
		     "runtime", (unsigned long long)d->switch_in_missed);
	if (d->wake_stack_fail)
		wlog("%llu wakers' stacks could not be read: their function is [unknown]",
		     (unsigned long long)d->wake_stack_fail);
	return err;
}

/* The kernel features its programs need (kfeatures.h). */
static unsigned int sched_needs(const struct trace_config *c)
{
	(void)c;
	return SP_FEAT(SP_FEAT_SWITCH_TP) | SP_FEAT(SP_FEAT_LOOP);
}

/* --strict: the sleeps and wake-ups its BPF part could not count. */
static void sched_losses(void *state, const struct trace_ctx *ctx, const struct sp_run *run,
			 struct trace_losses *l)
{
	const struct schedprof_bpf__bss *b = ctx->skel->bss;

	(void)state;
	(void)run;
	trace_loss_add(l, b->sched_drops.task_storage_fail, "sleeps without off-CPU time");
	trace_loss_add(l, b->sched_drops.waker_map_full, "wake-ups under no waker (--max-callers)");
	trace_loss_add(l, b->sched_drops.taker_map_full,
		       "waits for a CPU under no taker of the CPU (--max-callers)");
}

const struct collector sched_collector = {
	.view = &sp_view_schedules,
	.needs = sched_needs,
	.switch_part = true,
	.losses = sched_losses,
	COLLECTOR_OPS(sched),
};
