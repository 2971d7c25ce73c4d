/* SPDX-License-Identifier: BSD-2-Clause */
/* The parsed `schedprof trace` command line: passed explicitly, never global. */
#ifndef SCHEDPROF_TRACE_OPTS_H
#define SCHEDPROF_TRACE_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/model.h"
#include "format/render.h"

struct trace_opts {
	enum sp_target_mode mode;
	int *pids;    /* -p PIDS, or -t TIDS (SP_TARGET_TIDS) */
	size_t npids;
	char **argv; /* COMMAND mode, NULL-terminated (points into main's argv) */
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
	bool wakers;	   /* --wakers: the waker's function, a stack walk per wake-up */
	bool verify_callers; /* --verify-callers: a full walk per switch checks the cached caller */
	struct render_opts render;
	const char *output; /* -o; NULL = stdout */
	const char *save;   /* --save: the run as JSON too, for report and diff */
	bool kill_on_end;   /* -d with -- COMMAND: end the command at the end (else left running) */
	const char *user;   /* --user: run COMMAND as this user (else the sudo caller, or as is) */
	bool as_root;	    /* --as-root: run COMMAND as root even under sudo */
	char *cmdline;	    /* the trace command line, for the record */
	bool strict;	    /* --strict: any loss makes the exit status EXIT_LOSS */
	/* --timeline (views has SP_VIEW_TIMELINE): its ring buffer's size, --timeline-buffer */
	uint64_t timeline_buffer;
};

/*
 * Parses `schedprof trace` argv (argv[0] is "trace") into o: 0, EXIT_USAGE after printing the
 * usage error, or CLI_DONE (-1) after printing --help or --version. Call trace_opts_free(o) in
 * every case.
 */
int trace_parse(int argc, char **argv, struct trace_opts *o);
/* The same for `schedprof top` (argv[0] is "top"): trace's targets and limits, -i default 1 s. */
int top_parse(int argc, char **argv, struct trace_opts *o);
void trace_opts_free(struct trace_opts *o);

/*
 * A command that traces as trace does, with options of its own (`schedprof agent`): trace's
 * options plus extra (long options only, val >= TRACE_OPT_EXTRA, {}-terminated), each handed
 * to on_extra(cmd, ctx, val, arg); messages and --help are cmd's. Returns as trace_parse().
 */
#define TRACE_OPT_EXTRA 0x1000
struct option;
struct cli_cmd;
typedef int (*cli_opt_fn)(const struct cli_cmd *cmd, void *ctx, int c, const char *arg);
int trace_parse_as(const struct cli_cmd *cmd, int argc, char **argv, const struct option *extra,
		   cli_opt_fn on_extra, void *ctx, struct trace_opts *o);

/* The target for messages: "command make", "PIDs 12,34 and descendants", "the whole system". */
const char *trace_target_describe(const struct trace_opts *o, char *buf, size_t len);

#endif
