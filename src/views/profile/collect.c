// SPDX-License-Identifier: BSD-2-Clause
/*
 * The profile view's collector: one perf cpu-clock event per online CPU runs prof_sample, or
 * with -g prof_sample_g (src/views/profile/profile.bpf.c); while tracing, the processes that BPF
 * announces (exec, first sample) have their mapped files registered before they exit; after the
 * run, its maps are dumped (maps.h) and rows.c symbolizes the sample keys into rows by
 * (function, object).
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/collector.h"
#include "base/cpulist.h"
#include "base/log.h"
#include "loader/maps.h"
#include "loader/prog_builds.h"
#include "collect/preflight.h"
#include "views/profile/rows.h"
#include "collect/uframes_bpf.h"
#include "collect/ucopy.h"
#include "symbols/usyms.h"
#include "base/util.h"
#include "schedprof/schedprof.h"
#include "schedprof.skel.h"

_Static_assert(sizeof(struct sp_uframe) == sizeof(struct bpf_stack_build_id),
	       "struct sp_uframe must match the kernel's struct bpf_stack_build_id");
_Static_assert(SP_UFRAME_IP == BPF_STACK_BUILD_ID_IP && SP_UFRAME_VALID == BPF_STACK_BUILD_ID_VALID,
	       "frame status values");

#define CPU_ONLINE_PATH "/sys/devices/system/cpu/online"

struct prof_state {
	struct schedprof_bpf *skel;
	const struct trace_config *opts;
	struct uframes_live *live; /* the usyms and announcements shared with the other views */
	struct bpf_link *exec_link;
	struct bpf_link **links; /* one per CPU; each owns its perf event fd */
	size_t nlinks;
	int *cpus;
	size_t ncpus;
	struct ucopy *ucopy; /* -g with stack copies: their unwinding */
	int epfd;	     /* ... readable when the announcements or the copies wait */
	unsigned int hz;
	bool callchains;
	struct bpf_program *sample; /* the build of prof_sample loaded */
};

/* ---- while tracing: register what the announced processes map (uframes_bpf.h) ---- */

static int prof_poll_fd(void *state)
{
	struct prof_state *st = state;

	return st->epfd >= 0 ? st->epfd : uframes_live_poll_fd(st->live);
}

/* The announcements first: a copy's process is then snapshotted already, mostly. */
static int prof_poll(void *state, struct trace_ctx *ctx)
{
	struct prof_state *st = state;
	int err;

	(void)ctx;
	err = uframes_live_poll(st->live);
	return ucopy__poll(st->ucopy) ?: err;
}

/* ---- lifecycle ---- */

static void prof_destroy(void *state)
{
	struct prof_state *st = state;

	if (!st)
		return;
	for (size_t i = 0; i < st->nlinks; i++)
		bpf_link__destroy(st->links[i]);
	free(st->links);
	bpf_link__destroy(st->exec_link);
	ucopy__free(st->ucopy);
	if (st->epfd >= 0)
		close(st->epfd);
	uframes_live_put(st->live);
	free(st->cpus);
	free(st);
}

static int prof_configure(struct trace_ctx *ctx, void **ret_state)
{
	const struct trace_config *o = ctx->opts;
	struct schedprof_bpf *skel = ctx->skel;
	struct prof_state *st;
	int err, ncpus;

	err = collector_state_new(ctx, sizeof(*st), (void **)&st);
	if (err)
		return err;
	st->skel = skel;
	st->opts = o;
	st->hz = o->hz;
	st->callchains = o->callchains;
	st->epfd = -1;
	err = cpulist_read(CPU_ONLINE_PATH, &st->cpus, &st->ncpus);
	if (err) {
		elog("cannot read the online CPUs from %s: %s", CPU_ONLINE_PATH, strerror(-err));
		goto fail;
	}
	st->links = calloc(st->ncpus, sizeof(*st->links));
	if (!st->links) {
		err = -ENOMEM;
		goto fail;
	}
	/* one build of the sampling program: the leaf only, or with -g the stacks */
	st->sample = sp_prog_build_load(skel->obj, "prof_sample",
					o->callchains ? SP_BUILD_CALLCHAINS : 0, true);
	bpf_map__set_max_entries(skel->maps.prof_samples, o->max_samples);
	bpf_map__set_max_entries(skel->maps.prof_kstacks, o->callchains ? o->max_stacks : 1);
	uframes_bpf_size(skel, o, o->callchains, false);
	if (o->callchains && o->ustack_copy) {
		skel->rodata->prof_ucopy_max = o->ustack_copy;
		bpf_map__set_max_entries(skel->maps.prof_ucopies, SP_PROF_UCOPY_RING);
		ncpus = libbpf_num_possible_cpus();
		if (ncpus < 0) {
			err = ncpus;
			elog("cannot count the possible CPUs: %s", strerror(-err));
			goto fail;
		}
		bpf_map__set_max_entries(skel->maps.prof_ucopy_slots, (uint32_t)ncpus);
	}
	*ret_state = st;
	return 0;
fail:
	prof_destroy(st);
	return err;
}

/*
 * Not selected: no program, and maps as small as the kernel allows (--no-profile costs
 * nothing). The user-frame maps it shares are one entry until a view sizes them.
 */
static void prof_disable(struct schedprof_bpf *skel)
{
	sp_prog_build_load(skel->obj, "prof_sample", 0, false);
	bpf_program__set_autoload(skel->progs.prof_exec, false);
	maps_shrink(skel->maps.prof_samples, skel->maps.prof_kstacks);
}

static int prof_setup(void *state, struct trace_ctx *ctx)
{
	struct prof_state *st = state;

	(void)ctx;
	st->live = uframes_live_get(st->skel, st->opts);
	if (!st->live)
		return -errno;
	if (!st->skel->rodata->prof_ucopy_max)
		return 0;
	st->ucopy = ucopy__new(bpf_map__fd(st->skel->maps.prof_ucopies),
			       uframes_live_usyms(st->live), st->opts->unwind_tables);
	if (!st->ucopy)
		return -errno;
	/* one fd for the wait loop: both ring buffers' */
	st->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (st->epfd < 0)
		return -errno;
	if (epoll_ctl(st->epfd, EPOLL_CTL_ADD, uframes_live_poll_fd(st->live),
		      &(struct epoll_event){ .events = EPOLLIN }) ||
	    epoll_ctl(st->epfd, EPOLL_CTL_ADD, ucopy__poll_fd(st->ucopy),
		      &(struct epoll_event){ .events = EPOLLIN }))
		return -errno;
	return 0;
}

static int open_cpu_clock(int cpu, unsigned int hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = hz,
		.freq = 1,
	};
	int fd;

	fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int prof_attach(void *state, struct trace_ctx *ctx)
{
	struct prof_state *st = state;
	struct bpf_program *prog = st->sample;
	int err;

	st->exec_link = bpf_program__attach(st->skel->progs.prof_exec);
	if (!st->exec_link)
		return -errno;
	for (size_t i = 0; i < st->ncpus; i++) {
		struct bpf_link *link;
		int fd = open_cpu_clock(st->cpus[i], st->hz);

		if (fd < 0) {
			char why[200];

			preflight_perf_why(fd, why, sizeof(why));
			elog("cannot open a %u Hz cpu-clock event on CPU %d: %s%s", st->hz,
			     st->cpus[i], strerror(-fd),
			     fd == -EINVAL ? " (above kernel.perf_event_max_sample_rate?)" : why);
			ctx->attach_said = true;
			return fd;
		}
		link = bpf_program__attach_perf_event(prog, fd);
		if (!link) {
			err = -errno;
			close(fd); /* the link owns the fd only once it exists */
			return err;
		}
		st->links[st->nlinks++] = link;
	}
	dlog("profile: sampling %zu CPUs at %u Hz%s", st->ncpus, st->hz,
	     st->callchains ? " with call stacks" : "");
	return 0;
}

static void prof_detach(void *state)
{
	struct prof_state *st = state;

	for (size_t i = 0; i < st->nlinks; i++)
		bpf_link__destroy(st->links[i]);
	st->nlinks = 0;
	bpf_link__destroy(st->exec_link);
	st->exec_link = NULL;
}

static int prof_read(void *state, struct trace_ctx *ctx, struct sp_run *run)
{
	struct prof_state *st = state;
	struct schedprof_bpf *skel = st->skel;
	const struct sp_prof_drops *d = &skel->bss->prof_drops;
	struct sp_profile_view *v = &run->profile;
	struct profile_unnamed u = {};
	struct profile_maps m = {};
	uint64_t events, gone;
	int err;

	/* announcements and copies still queued: their processes are likely gone, but not all */
	uframes_live_poll(st->live);
	err = ucopy__poll(st->ucopy);
	if (err)
		return err;
	uframes_live_stats(st->live, &events, &gone);
	v->present = true;
	v->hz = st->hz;
	v->cpus = (int)st->ncpus;
	v->callchains = st->callchains;
	v->total = skel->bss->prof_counts.total;
	v->idle = skel->bss->prof_counts.idle;
	v->target = skel->bss->prof_counts.target;
	v->other = skel->bss->prof_counts.other;
	v->lost = d->key_map_full;
	if (st->callchains)
		v->missing_stacks = d->kstack_map_full + d->ustack_map_full;
	err = map_dump(bpf_map__fd(skel->maps.prof_samples), &m.samples);
	if (!err && st->callchains)
		err = map_dump(bpf_map__fd(skel->maps.prof_kstacks), &m.kstacks) ?:
		      map_dump(bpf_map__fd(skel->maps.prof_ustacks), &m.ustacks);
	if (!err && st->ucopy) {
		if (!m.samples.key_size)
			sp_records_init(&m.samples, sizeof(struct sp_prof_key), sizeof(__u64));
		if (!m.ustacks.key_size)
			sp_records_init(&m.ustacks, sizeof(__u64), sizeof(struct sp_prof_ustack));
		err = ucopy__flush(st->ucopy, &m.samples, &m.ustacks);
	}
	if (!err)
		err = profile_rows_build(run, &m, ctx->ksyms, uframes_live_usyms(st->live),
					 st->callchains, &u);
	map_dump_report("profile", "sample keys", &m.samples, &m.kstacks, &m.ustacks);
	profile_maps_free(&m);
	dlog("profile: %" PRIu64 " samples, %" PRIu64 " target in %zu rows; %" PRIu64
	     " process announcements (%" PRIu64 " lost, %" PRIu64 " gone before we looked), %zu "
	     "images; unnamed leaves: kernel %" PRIu64 ", unknown build-id %" PRIu64
	     ", no symbol %" PRIu64 ", raw IP without image %" PRIu64 ", raw IP outside the image's "
	     "files %" PRIu64 ", no frame %" PRIu64
	     "; keys with raw-IP user frames %" PRIu64 ", with a user stack cut at a frame astray "
	     "(an offset no file holds) %" PRIu64 "; stack reads failed: kernel %" PRIu64
	     ", user %" PRIu64,
	     v->total, v->target, v->nrows, events, (uint64_t)d->event_lost, gone,
	     usyms__nr_images(uframes_live_usyms(st->live)), u.kernel, u.buildid, u.nosym, u.image,
	     u.nomap, u.empty,
	     u.raw_keys, u.astray, (uint64_t)d->kstack_fail, (uint64_t)d->ustack_fail);
	{
		const struct sp_prof_ucache_stats *c = &skel->bss->prof_ucache_stats;

		dlog("profile: samples with user frames named from the page cache %" PRIu64
		     ", by the kernel's build-id lookup %" PRIu64 " (pages not cached) + %" PRIu64
		     " (re-validation, %" PRIu64 " found a cached page changed)",
		     (uint64_t)c->hit, (uint64_t)c->miss, (uint64_t)c->check, (uint64_t)c->stale);
	}
	if (st->ucopy)
		ucopy__report(st->ucopy, d->ucopy_lost, d->ucopy_busy, d->ucopy_fail);
	if (d->event_lost)
		wlog("%llu process announcements were lost (ring buffer full): some user frames may "
		     "stay unnamed", (unsigned long long)d->event_lost);
	return err;
}

/* The kernel features its programs need (kfeatures.h). */
static unsigned int prof_needs(const struct trace_config *c)
{
	/* bpf_loop() only hashes the -g stacks */
	return SP_FEAT(SP_FEAT_RINGBUF) | (c->callchains ? SP_FEAT(SP_FEAT_LOOP) : 0);
}

/* --strict: the process announcements its ring buffer lost. */
static void prof_losses(void *state, const struct trace_ctx *ctx, const struct sp_run *run,
			struct trace_losses *l)
{
	(void)state;
	(void)run;
	trace_loss_add(l, ctx->skel->bss->prof_drops.event_lost,
		       "process announcements lost (ring buffer full)");
}

const struct collector profile_collector = {
	.view = &sp_view_profile,
	.needs = prof_needs,
	.losses = prof_losses,
	COLLECTOR_OPS(prof),
};
