/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The BPF side of user stacks (bpf/ustack.bpf.h), shared by the views that take them: the
 * sizes of the shared maps, and while tracing one usyms (uframes.h names the frames with it)
 * fed by one consumer of the process announcements (prof_events), whichever views run.
 */
#ifndef SCHEDPROF_UFRAMES_BPF_H
#define SCHEDPROF_UFRAMES_BPF_H

#include <stdbool.h>
#include <stdint.h>
#include "collect/trace.h"

struct schedprof_bpf;
struct sp_user_cuts;
struct usyms;

/* Set in the environment: the BPF side times each user stack it takes (the bench's). */
#define UFRAMES_TIMING_ENV "SCHEDPROF_USTACK_TIMING"
/* Set: --stacks takes no user stacks (the bench compares the cost against it). */
#define UFRAMES_OFF_ENV "SCHEDPROF_USTACK_OFF"

/*
 * Before load, by each view that takes user stacks: sizes the user-frame caches and the
 * announcement ring buffer, and with stacks the user stack and pair maps (max_stacks
 * entries). pairs (the schedules and locks views' --stacks): unless --ustack-copy is 0,
 * their user stacks are walked by learned rules (collect/urules.h), whose map, copies'
 * ring buffer and slots are sized here. Until a view asks, they stay at one entry.
 */
void uframes_bpf_size(struct schedprof_bpf *skel, const struct trace_config *o, bool stacks,
		      bool pairs);

/*
 * After load: the shared usyms and the consumer of the announcements, created by the first
 * view that asks and freed when the last one lets go. NULL + errno (ENOMEM, or the ring
 * buffer's). o->lines asks usyms for source lines and inlined calls.
 */
struct uframes_live;
struct uframes_live *uframes_live_get(struct schedprof_bpf *skel, const struct trace_config *o);
void uframes_live_put(struct uframes_live *l);
struct usyms *uframes_live_usyms(struct uframes_live *l);
/* Between reads (the agent's intervals): the shared usyms' usyms__trim(), if a trace has one. */
void uframes_live_trim(void);
/* For a collector's poll_fd/poll: drains the announcements (registers their processes). */
int uframes_live_poll_fd(struct uframes_live *l);
int uframes_live_poll(struct uframes_live *l);
/* Announcements handled, and of those the processes already gone when we looked. */
void uframes_live_stats(const struct uframes_live *l, uint64_t *ret_events, uint64_t *ret_gone);

/*
 * After a view's read: logs what its user stacks lost (BPF's drops d, the dump's failures in
 * pairs and ustacks), how they were named (uf), and how the caches named them (c, every view
 * together). Warns about what is lost.
 */
struct uframes;
struct sp_records;
struct sp_ustack_drops;
struct sp_prof_ucache_stats;
void uframes_report(const char *view, const struct uframes *uf, const struct sp_ustack_drops *d,
		    const struct sp_prof_ucache_stats *c, const struct sp_records *pairs,
		    const struct sp_records *ustacks);
/*
 * The schedules and locks views' read with user stacks: before their rows are built, the
 * announcements still queued are handled, uf names through l's symbols, and the (kernel,
 * user) pairs and user stacks are dumped (0 or -errno), the placeholders of the copies taken
 * put in their place, and the view's stacks that stopped short counted by why in *cuts
 * (nest: the view's copy slots, sp_stack_pair()'s); after, uframes_live_done() sets the view's
 * counts of truncated and missing user stacks, adds the BPF walks' to *cuts, and reports
 * (uframes_report()).
 */
int uframes_live_dump(struct uframes_live *l, struct uframes *uf, struct schedprof_bpf *skel,
		      struct sp_records *pairs, struct sp_records *ustacks, unsigned int nest,
		      struct sp_user_cuts *cuts);
/*
 * --stacks by learned rules: in *c, the view's user-stack walks (attributed) and those its
 * BPF memo answered (fast), checked and found different (struct sp_rmemo); c->present when
 * the rules walked its user stacks.
 */
void uframes_memo_counts(const struct schedprof_bpf *skel, const struct sp_ustack_drops *d,
			 struct sp_caller_cache *c);
void uframes_live_done(const char *view, const struct uframes *uf, const struct sp_ustack_drops *d,
		       const struct schedprof_bpf *skel, const struct sp_records *pairs,
		       const struct sp_records *ustacks, uint64_t *ret_truncated,
		       uint64_t *ret_missing, struct sp_user_cuts *cuts);

#endif
