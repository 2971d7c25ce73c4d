/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The trace engine (trace.c) as `trace`, `top` and `agent` share it: what to trace is a
 * trace_config that cli/ fills from the command line; where the run goes is the caller's
 * (trace_sink), and so is what happens each interval (-i) and each turn of the wait loop
 * (trace_hooks).
 */
#ifndef SCHEDPROF_TRACE_H
#define SCHEDPROF_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "model/model.h"

/* What to trace and how: passed explicitly, never global. */
struct trace_config {
	enum sp_target_mode mode;
	int *pids;    /* -p PIDS, or -t TIDS (SP_TARGET_TIDS) */
	size_t npids;
	char **argv; /* COMMAND mode, NULL-terminated */
	bool all;    /* -a -- COMMAND: the whole system while the command runs */
	const char *cgroup; /* --cgroup PATH, as given */
	uint64_t duration_ns; /* -d; 0 = until the target ends or a signal */
	uint64_t interval_ns; /* -i: a report per interval (top: its refresh); 0 = none */
	unsigned int views;   /* SP_VIEW_* mask of what to collect */
	/* map sizes */
	uint32_t max_targets, max_callers, max_stacks;
	/* profile view */
	unsigned int hz;   /* -F */
	bool callchains;   /* -g (or --stacks): kernel and user stacks, not only the leaf */
	bool lines;	   /* --lines: source file:line and inlined calls of user frames (DWARF) */
	uint32_t max_samples;
	uint32_t ustack_copy; /* -g: bytes of user stack copied per sample (0: frame pointers) */
	uint64_t unwind_tables; /* --unwind-tables: bytes of unwind tables held (0: default) */
	bool wakers;	   /* --wakers: the waker's function, a stack walk per wake-up */
	uint32_t kstack_cache; /* 0: every kept kernel stack and waker's stack is walked */
	bool verify_callers; /* --verify-callers: a full walk per switch checks the cached caller */
	bool kill_on_end;   /* -d with -- COMMAND: end the command at the end (else left running) */
	const char *user;   /* --user: run COMMAND as this user (else the sudo caller, or as is) */
	bool as_root;	    /* --as-root: run COMMAND as root even under sudo */
	char *cmdline;	    /* the trace command line, for the record */
	bool strict;	    /* --strict: any loss makes the exit status EXIT_LOSS */
	/* --timeline (views has SP_VIEW_TIMELINE): its ring buffer's size, --timeline-buffer */
	uint64_t timeline_buffer;
	/* what the output asks of the collectors */
	bool full_stacks;  /* whole stacks with user frames (the stack formats, or callchains) */
	bool lock_stacks;  /* --lock-stacks: the locks view keeps whole stacks */
	enum sp_lock_sort lock_sort; /* the locks' order in the run and in each interval */
};

/* Where the run goes (cli/: -o or stdout, and --save). */
struct trace_sink {
	void *ctx;
	/*
	 * Once the target is checked, before anything is loaded or launched (a mistyped -o fails
	 * then, not after the trace): 0 and *ret_out, the stream intervals print to, or -errno
	 * (said).
	 */
	int (*open)(void *ctx, FILE **ret_out);
	/*
	 * The final run; report false: the intervals were the output (-i -f json, top, agent).
	 * 0, -EPIPE (the reader has gone) or -errno (said); what cannot be written where asked
	 * is saved elsewhere, never lost.
	 */
	int (*write)(void *ctx, const struct sp_run *run, bool report);
	/* At the end, after write or instead of it: what was not written is dropped. */
	void (*close)(void *ctx);
};

struct trace_hooks {
	void *ctx;
	/*
	 * Each interval (interval_ns), and once more at the end for the last (shorter) one:
	 * iv is the interval's run (iv->interval says which), total the cumulative run at its
	 * end (last: the final run, read once detached); out is the sink's stream. The intervals
	 * add up to the final run. An interval holds the events that ended in it (a sleep counts
	 * when it ends). 0, or -errno (logged by the hook): the trace ends.
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

/* Runs the trace of c into out; h NULL: no intervals. The exit code (base/exitcode.h). */
int trace_run(const struct trace_config *c, const struct trace_sink *out,
	      const struct trace_hooks *h);

/* The target for messages: "command make", "PIDs 12,34 and descendants", "the whole system". */
const char *trace_target_describe(const struct trace_config *c, char *buf, size_t len);

#endif
