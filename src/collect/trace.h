/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The trace lifecycle (trace.c) as `trace` and `top` share it: what happens each interval
 * (-i) and each turn of the wait loop is the caller's.
 */
#ifndef SCHEDPROF_TRACE_H
#define SCHEDPROF_TRACE_H

#include <stdbool.h>
#include <stdio.h>
#include "model/model.h"
#include "cli/trace_opts.h"

struct trace_hooks {
	void *ctx;
	/*
	 * Each interval (o->interval_ns), and once more at the end for the last (shorter) one:
	 * iv is the interval's run (iv->interval says which), total the cumulative run at its
	 * end (last: the final run, read once detached); out is the report's output (-o or
	 * stdout). The intervals add up to the final run. An interval holds the events that ended
	 * in it (a sleep counts when it ends). 0, or -errno (logged by the hook): the trace ends.
	 */
	int (*interval)(void *ctx, const struct sp_run *iv, const struct sp_run *total, bool last,
			FILE *out);
	/*
	 * Optional: each turn of the wait loop (every 50 ms at most, at once when fd is
	 * readable): true ends the trace (top's q), as -d would.
	 */
	bool (*tick)(void *ctx);
	/* Optional: once the trace has ended, before the final read and report (top's screen goes) */
	void (*ended)(void *ctx);
	int fd;		/* polled with the collectors' fds (top: the terminal), or -1 */
	bool no_report; /* the whole run is not printed at the end (--save still writes it) */
	bool screen;	/* the terminal is the hooks' (top): no "Ctrl-C to stop" line on it */
};

/* Runs the trace of o; h NULL: no intervals. The exit code (commands.h). */
int trace_run(const struct trace_opts *o, const struct trace_hooks *h);

/* trace -i's hooks (top.c): each interval's tables, or one JSON line per interval. */
void trace_interval_printer(const struct trace_opts *o, struct trace_hooks *h);

#endif
