/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A view's BPF side. All views' programs live in one BPF object (one BTF parse, one load);
 * the engine (trace_load.c) opens it, lets each selected collector configure it, loads it, then drives the
 * collectors: setup (after load), attach, detach, read into the model, destroy. The
 * programs of views that are not selected are never loaded.
 */
#ifndef SCHEDPROF_COLLECTOR_H
#define SCHEDPROF_COLLECTOR_H

#include <errno.h>
#include <stdlib.h>
#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>
#include "model/model.h"
#include "model/view.h"
#include "loader/kfeatures.h"
#include "schedprof/fold.h"
#include "collect/trace.h"

struct ksyms;
struct sp_features;
struct schedprof_bpf;

/* Shared by every collector of one trace. */
struct trace_ctx {
	const struct trace_config *opts;
	struct schedprof_bpf *skel;
	struct ksyms *ksyms; /* NULL in configure (it is read in parallel with the load) */
	/* built from ksyms on the same thread; fold_err is 0 or -ENOENT (no __sched_text) */
	struct sp_fold_cfg fold_cfg;
	int fold_err;
	int ncpus;
	/* the running kernel's features (kfeatures.h), probed before configure */
	const struct sp_features *features;
	/* in configure: why the kernel cannot run this view (kfeatures.h), else NULL */
	const char *unavailable;
	/*
	 * In read: true for an interval's read (trace -i, top), while still attached. read is
	 * then called again later, so it must leave the collector's state as the final read
	 * needs it; it may skip what intervals do not show (the timeline).
	 */
	bool interval;
	/* CLOCK_MONOTONIC ns at the run's start (0 before it: attached, not yet started) */
	uint64_t start_ns;
	/* -- COMMAND (traced): the command's pid, whose end is the job's; else 0 */
	int job_tid;
	/* set by an attach that failed after its own line said why: no second line */
	bool attach_said;
};

/* --strict: the losses only the BPF side counts, said in one line with the run's own. */
struct trace_losses {
	char buf[256];
	size_t len;
};
/* Appends "N what" (nothing for 0). */
void trace_loss_add(struct trace_losses *l, uint64_t n, const char *what);

/*
 * A view's descriptor on the BPF side: with its model's (view, model/view.h), everything the
 * engine knows of the view. The order of the collectors does not matter: every view not
 * selected is disabled before any selected one is configured, and the maps views share are
 * sized after them all (trace_load.c).
 */
struct collector {
	const struct sp_view_ops *view; /* the view it fills: its name and SP_VIEW_* bit */
	/* The kernel features (kfeatures.h: SP_FEAT() bits) its programs need with c's options. */
	unsigned int (*needs)(const struct trace_config *c);
	/*
	 * It has a part in the one sched_switch program (src/views/schedules/schedules.bpf.c
	 * sp_switch*, turned on by its configure): a refusal of that program is charged to such a
	 * view.
	 */
	bool switch_part;
	/*
	 * Before load: rodata, map sizes. Allocates the collector's state. With
	 * ctx->unavailable set, either keeps a state that reports the view as unavailable, or
	 * returns -ENOTSUP (then the view is dropped, and disable is called).
	 */
	int (*configure)(struct trace_ctx *ctx, void **ret_state);
	/* Before load, for views not selected: turn their programs' autoload off. */
	void (*disable)(struct schedprof_bpf *skel);
	/* Optional (NULL: nothing to do), after load, before attach: needs kallsyms (.bss). */
	int (*setup)(void *state, struct trace_ctx *ctx);
	/* Optional: the sched_switch program is attached by the engine for every view. */
	int (*attach)(void *state, struct trace_ctx *ctx);
	void (*detach)(void *state); /* stop counting; maps stay readable */
	int (*read)(void *state, struct trace_ctx *ctx, struct sp_run *run);
	void (*destroy)(void *state);
	/*
	 * Optional, while tracing: work to do as events arrive (e.g. a ring buffer to drain while
	 * the processes it names still live). poll_fd returns an fd that becomes readable when
	 * poll has work (or -1); the wait loop polls every collector's fd and calls poll.
	 */
	int (*poll_fd)(void *state);
	int (*poll)(void *state, struct trace_ctx *ctx);
	/* Optional, --strict, after read: what its BPF part lost that the run does not hold. */
	void (*losses)(void *state, const struct trace_ctx *ctx, const struct sp_run *run,
		       struct trace_losses *l);
};

/*
 * Tells the wake-up programs where the CPU's preempt count is (interrupt context), from the
 * kernel's BTF, cached once per boot (src/views/schedules/collect.c). Before load; nothing when it
 * is not found.
 */
void preempt_count_setup(struct schedprof_bpf *skel);

/*
 * The operations of a collector whose functions are P_configure() ... P_poll() (every one
 * has them all): its table is .view and COLLECTOR_OPS(P).
 */
#define COLLECTOR_OPS(P)                                                                        \
	.configure = P##_configure, .disable = P##_disable, .setup = P##_setup,                  \
	.attach = P##_attach, .detach = P##_detach, .read = P##_read, .destroy = P##_destroy,    \
	.poll_fd = P##_poll_fd, .poll = P##_poll

/*
 * configure()'s start for a view that drops out when the kernel cannot run it: -ENOTSUP
 * then, else *ret a zeroed state of size bytes (or -ENOMEM).
 */
static inline int collector_state_new(const struct trace_ctx *ctx, size_t size, void **ret)
{
	if (ctx->unavailable)
		return -ENOTSUP;
	*ret = calloc(1, size);
	return *ret ? 0 : -ENOMEM;
}

#endif
