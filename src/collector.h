/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A view's BPF side: open+load (prepare), attach, read into the model, destroy.
 * trace.c drives the collectors of the selected views through this table.
 */
#ifndef SCHEDPROF_COLLECTOR_H
#define SCHEDPROF_COLLECTOR_H

#include "model.h"
#include "trace_opts.h"

struct ksyms;
struct bpf_object;

/* Shared by every collector of one trace. */
struct trace_ctx {
	const struct trace_opts *opts;
	struct ksyms *ksyms;
	int ncpus;
	/* fds of the traced-set maps owned by target.bpf.o; every object reuses them */
	int targ_tgids_fd;
	int traced_fd;
};

struct collector {
	const char *name;
	unsigned int view; /* SP_VIEW_* */
	int (*prepare)(struct trace_ctx *ctx, void **ret_state); /* open, size, load */
	int (*attach)(void *state);
	void (*detach)(void *state); /* stop counting; maps stay readable */
	int (*read)(void *state, struct trace_ctx *ctx, struct sp_run *run);
	void (*destroy)(void *state);
};

extern const struct collector sched_collector;

/* Points the object's targ_tgids/traced maps at the shared ones and sets targ_all. */
int collector_share_target(struct bpf_object *obj, const struct trace_ctx *ctx);

#endif
