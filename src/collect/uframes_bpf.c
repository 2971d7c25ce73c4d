// SPDX-License-Identifier: BSD-2-Clause
/* The BPF side of user stacks, shared by the views that take them (uframes_bpf.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/testhook.h"
#include "base/log.h"
#include "loader/maps.h"
#include "model/model.h"
#include "rows/records.h"
#include "rows/uframes.h"
#include "collect/uframes_bpf.h"
#include "collect/urules.h"
#include "symbols/usyms.h"
#include "schedprof/schedprof.h"
#include "schedprof.skel.h"

struct uframes_live {
	struct usyms *usyms;
	struct ring_buffer *rb;
	struct urules *rules; /* --stacks by learned rules (ustack_rules_on) */
	unsigned int users;
	uint64_t events, gone;
	uint64_t forked; /* snapshots copied from the process forked from */
	bool reported;	 /* the trace-wide counts logged (by the first view done) */
};

/* One trace at a time: the views of that trace share it. */
static struct uframes_live *live;

void uframes_bpf_size(struct schedprof_bpf *skel, const struct trace_config *o, bool stacks,
		      bool pairs)
{
	int ncpus;

	bpf_map__set_max_entries(skel->maps.prof_seen, SP_PROF_SEEN);
	bpf_map__set_max_entries(skel->maps.prof_ucache, SP_PROF_UCACHE);
	bpf_map__set_max_entries(skel->maps.prof_xcache, SP_PROF_XCACHE);
	bpf_map__set_max_entries(skel->maps.prof_uimage, SP_PROF_SEEN);
	bpf_map__set_max_entries(skel->maps.prof_events, SP_PROF_EVENTS_BYTES);
	/* the bench's: each user stack of the schedules and locks views timed (two clock reads) */
	skel->rodata->ustack_timed = test_hook(UFRAMES_TIMING_ENV) != NULL;
	/* the bench's too: --stacks with kernel stacks only, what the user stacks cost is compared to */
	skel->rodata->ustack_off = test_hook(UFRAMES_OFF_ENV) != NULL;
	/* with the rules only (below) */
	bpf_program__set_autoload(skel->progs.sp_ufork, false);
	if (!stacks)
		return;
	bpf_map__set_max_entries(skel->maps.prof_ustacks, o->max_stacks);
	bpf_map__set_max_entries(skel->maps.stack_pairs, o->max_stacks);
	bpf_map__set_max_entries(skel->maps.ustack_raw, SP_PROF_UCACHE);
	/* --ustack-copy 0: the frame-pointer walk, without copies, as for -g */
	if (!pairs || !o->ustack_copy || skel->rodata->ustack_off)
		return;
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) /* the frame-pointer walk then */
		return;
	skel->rodata->ustack_rules_on = 1;
	bpf_map__set_max_entries(skel->maps.ustack_rules, SP_URULES);
	bpf_map__set_max_entries(skel->maps.urule_forks, SP_URULE_FORKS);
	bpf_program__set_autoload(skel->progs.sp_ufork, true);
	bpf_map__set_max_entries(skel->maps.ustk_copies, SP_USTK_COPY_RING);
	/* a slot per CPU for each view that can nest on it (schedules, locks) */
	bpf_map__set_max_entries(skel->maps.ustk_copy_slots, (uint32_t)ncpus * 2);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct uframes_live *l = ctx;
	const struct sp_prof_event *ev = data;
	int err;

	if (size < sizeof(*ev))
		return 0;
	l->events++;
	err = -ENOENT;
	if (ev->from_tgid && ev->reason == SP_PROF_EV_FIRST) {
		/* forked: the snapshot of whose code it has */
		err = usyms__add_pid_as(l->usyms, (int)ev->tgid, ev->exec_id, (int)ev->from_tgid,
					ev->from_exec_id, ev->from_exec_vm);
		l->forked += !err;
	}
	if (err == -ENOENT)
		err = usyms__add_pid(l->usyms, (int)ev->tgid, ev->exec_id);
	if (err == -ESRCH)
		l->gone++;
	/* only ENOMEM stops the drain: the next poll retries */
	return err == -ENOMEM ? err : 0;
}

static int on_copy(void *ctx, void *data, size_t size)
{
	struct uframes_live *l = ctx;

	return urules__copy(l->rules, data, size);
}

struct uframes_live *uframes_live_get(struct schedprof_bpf *skel, const struct trace_config *o)
{
	struct usyms_opts uo = { .lines = o->lines };
	int err;

	if (live) {
		live->users++;
		return live;
	}
	live = calloc(1, sizeof(*live));
	if (!live)
		return NULL;
	live->users = 1;
	live->usyms = usyms__new(&uo);
	if (!live->usyms)
		goto fail;
	live->rb = ring_buffer__new(bpf_map__fd(skel->maps.prof_events), on_event, live, NULL);
	if (!live->rb)
		goto fail;
	if (skel->rodata->ustack_rules_on) {
		live->rules = urules__new(bpf_map__fd(skel->maps.ustack_rules), live->usyms,
					  o->unwind_tables);
		if (!live->rules)
			goto fail;
		err = ring_buffer__add(live->rb, bpf_map__fd(skel->maps.ustk_copies), on_copy,
				       live);
		if (err) {
			errno = -err;
			goto fail;
		}
	}
	return live;
fail:
	err = errno;
	ring_buffer__free(live->rb);
	urules__free(live->rules);
	usyms__free(live->usyms);
	free(live);
	live = NULL;
	errno = err;
	return NULL;
}

void uframes_live_put(struct uframes_live *l)
{
	if (!l || --l->users)
		return;
	ring_buffer__free(l->rb);
	urules__free(l->rules);
	usyms__free(l->usyms);
	free(l);
	live = NULL;
}

void uframes_live_trim(void)
{
	if (live)
		usyms__trim(live->usyms);
}

struct usyms *uframes_live_usyms(struct uframes_live *l)
{
	return l->usyms;
}

int uframes_live_poll_fd(struct uframes_live *l)
{
	return l ? ring_buffer__epoll_fd(l->rb) : -1;
}

int uframes_live_poll(struct uframes_live *l)
{
	int n;

	if (!l)
		return 0;
	n = ring_buffer__consume(l->rb);
	/*
	 * The copies after the announcements (one ring buffer manager, both drained); their
	 * tables compile on threads of their own, so that a process about to exit is
	 * snapshotted while it lives
	 */
	if (n >= 0)
		n = urules__unwind_pending(l->rules);
	return n < 0 ? n : 0;
}

void uframes_live_stats(const struct uframes_live *l, uint64_t *ret_events, uint64_t *ret_gone)
{
	*ret_events = l ? l->events : 0;
	*ret_gone = l ? l->gone : 0;
}

int uframes_live_dump(struct uframes_live *l, struct uframes *uf, struct schedprof_bpf *skel,
		      struct sp_records *pairs, struct sp_records *ustacks, unsigned int nest,
		      struct sp_user_cuts *cuts)
{
	uframes_live_poll(l); /* the announcements still queued */
	int err;

	uf->usyms = uframes_live_usyms(l);
	err = map_dump(bpf_map__fd(skel->maps.stack_pairs), pairs) ?:
	      map_dump(bpf_map__fd(skel->maps.prof_ustacks), ustacks);
	*cuts = (struct sp_user_cuts){ 0 };
	if (!err && l)
		urules__resolve(l->rules, ustacks, nest, cuts);
	return err;
}

/* The user stacks walked by the learned rules, however they ended */
static uint64_t rwalk_walks(const struct sp_ustack_drops *d)
{
	return d->rwalk_end + d->rwalk_stop + d->rwalk_miss + d->rwalk_copy_lost + d->rwalk_memory +
	       d->rwalk_depth;
}

void uframes_memo_counts(const struct schedprof_bpf *skel, const struct sp_ustack_drops *d,
			 struct sp_caller_cache *c)
{
	*c = (struct sp_caller_cache){
		.present = skel->rodata->ustack_rules_on,
		.verify_all = skel->rodata->verify_callers,
		.fast = d->rmemo_hit,
		.verified = d->rmemo_checked,
		.mismatched = d->rmemo_mismatch,
		.attributed = rwalk_walks(d),
		.forked = d->rwalk_forked,
	};
}

void uframes_live_done(const char *view, const struct uframes *uf, const struct sp_ustack_drops *d,
		       const struct schedprof_bpf *skel, const struct sp_records *pairs,
		       const struct sp_records *ustacks, uint64_t *ret_truncated,
		       uint64_t *ret_missing, struct sp_user_cuts *cuts)
{
	*ret_truncated = uf->stacks_truncated;
	*ret_missing = uf->stacks_missing + d->pair_map_full;
	cuts->cfi += d->rwalk_stop;
	cuts->memory += d->rwalk_memory;
	cuts->depth += d->rwalk_depth;
	cuts->lost += d->rwalk_copy_lost;
	uframes_report(view, uf, d, &skel->bss->prof_ucache_stats, pairs, ustacks);
	/* the rest is the trace's, whichever views share it: once */
	if (!live || live->reported)
		return;
	live->reported = true;
	if (skel->rodata->ustack_rules_on)
		dlog("stacks: processes forked that walk by their parent's rules: %llu; snapshots "
		     "of processes copied from whose rules they walk by: %llu",
		     (unsigned long long)skel->bss->ufork_stats.forks,
		     (unsigned long long)live->forked);
	if (skel->bss->ufork_stats.lost)
		wlog("stacks: %llu processes forked walk by rules of their own (not kept: out of "
		     "memory), their first stacks cut",
		     (unsigned long long)skel->bss->ufork_stats.lost);
	urules__report(live->rules, "stacks");
}

void uframes_report(const char *view, const struct uframes *uf, const struct sp_ustack_drops *d,
		    const struct sp_prof_ucache_stats *c, const struct sp_records *pairs,
		    const struct sp_records *ustacks)
{
	uint64_t lost = d->read_fail + d->map_full + d->pair_map_full;

	dlog("%s: %llu stacks with user frames (%llu look cut short: no frame pointers, or deeper "
	     "than %d); user frames named %llu, no symbol %llu, unknown build-id %llu, raw IP "
	     "without image %llu, raw IP outside the image's files %llu; stacks cut at a frame "
	     "astray (an offset no file holds) %llu",
	     view, (unsigned long long)uf->stacks, (unsigned long long)uf->stacks_truncated,
	     SP_PROF_UDEPTH, (unsigned long long)uf->how[UFRAME_NAMED],
	     (unsigned long long)uf->how[UFRAME_NOSYM], (unsigned long long)uf->how[UFRAME_BUILDID],
	     (unsigned long long)uf->how[UFRAME_IMAGE], (unsigned long long)uf->how[UFRAME_NOMAP],
	     (unsigned long long)uf->astray);
	dlog("%s: user stacks (every view) named from the caches %llu, by the kernel's build-id "
	     "lookup %llu (pages not cached) + %llu (re-validation, %llu found a cached page "
	     "changed)", view, (unsigned long long)c->hit, (unsigned long long)c->miss,
	     (unsigned long long)c->check, (unsigned long long)c->stale);
	if (d->timed)
		dlog("%s: %llu user stacks took %llu ns each (%s)", view,
		     (unsigned long long)d->timed, (unsigned long long)(d->timed_ns / d->timed),
		     UFRAMES_TIMING_ENV);
	if (d->timed_user) {
		static const char *const part[SP_USTACK_PARTS] = { "walk", "recover", "name",
								     "keep", "pair" };
		char buf[256];
		size_t len = 0;

		for (int i = 0; i < SP_USTACK_PARTS; i++)
			len += snprintf(buf + len, sizeof(buf) - len, "%s%s %llu", i ? ", " : "",
					part[i],
					(unsigned long long)(d->timed_part[i] / d->timed_user));
		dlog("%s: %llu user stacks of user tasks by part (ns each): %s", view,
		     (unsigned long long)d->timed_user, buf);
	}
	if (lost || uf->stacks_missing || pairs->failed || ustacks->failed)
		wlog("%s: %llu stacks lack their user frames (user stack not read %llu, user "
		     "stack map full %llu, pair map full %llu, lost by the dump %llu; raise "
		     "--max-stacks)",
		     view, (unsigned long long)uf->stacks_missing, (unsigned long long)d->read_fail,
		     (unsigned long long)d->map_full, (unsigned long long)d->pair_map_full,
		     (unsigned long long)(pairs->failed + ustacks->failed));
	if (rwalk_walks(d))
		dlog("%s: user stacks walked by the learned rules: whole %llu, stopped at code they "
		     "cannot leave %llu, copied at an address without a rule %llu (no copy possible "
		     "%llu), a word not readable %llu, %d frames deep %llu", view,
		     (unsigned long long)d->rwalk_end, (unsigned long long)d->rwalk_stop,
		     (unsigned long long)d->rwalk_miss, (unsigned long long)d->rwalk_copy_lost,
		     (unsigned long long)d->rwalk_memory, SP_PROF_UDEPTH,
		     (unsigned long long)d->rwalk_depth);
	if (d->rwalk_forked)
		dlog("%s: %llu of those walks followed the rules of the process they were forked "
		     "from", view, (unsigned long long)d->rwalk_forked);
	if (d->rwalk_copy_lost)
		wlog("%s: %llu user stacks end where the learned rules did: no copy could be sent "
		     "(ring buffer full, stack not readable)", view,
		     (unsigned long long)d->rwalk_copy_lost);
	if (d->event_lost)
		wlog("%s: %llu process announcements were lost (ring buffer full): some user "
		     "frames may stay unnamed", view, (unsigned long long)d->event_lost);
}
