/* SPDX-License-Identifier: BSD-2-Clause */
/* The parsed `schedprof trace` command line: passed explicitly, never global. */
#ifndef SCHEDPROF_TRACE_OPTS_H
#define SCHEDPROF_TRACE_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/model.h"
#include "collect/trace.h"
#include "format/render.h"
#include "cli/output.h"

struct trace_opts {
	struct trace_config trace; /* what the engine takes (collect/trace.h) */
	struct render_opts render;
	const char *output; /* -o; NULL = stdout */
	const char *save;   /* --save: the run as JSON too, for report and diff */
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

/* The commands that trace, as the registry of their options (trace_cli.c) names them. */
#define TRACE_CMD_TRACE 1u
#define TRACE_CMD_TOP 2u
#define TRACE_CMD_AGENT 4u

/* getopt values of the agent's own options: trace_parse_as() hands them to its on_extra */
#define TRACE_OPT_EXTRA 0x1000
enum {
	AGENT_OPT_SINK = TRACE_OPT_EXTRA,
	AGENT_OPT_SPOOL,
	AGENT_OPT_SPOOL_LIMIT,
	AGENT_OPT_PASSWORD_FILE,
	AGENT_OPT_CREATE_SCHEMA,
	AGENT_OPT_TTL,
	AGENT_OPT_HOSTNAME,
};

/*
 * A command that traces as trace does, with options of its own (`schedprof agent`): the
 * registry's options of which (TRACE_CMD_*), those with val >= TRACE_OPT_EXTRA handed to
 * on_extra(cmd, ctx, val, arg); messages and --help are cmd's. Returns as trace_parse().
 */
struct cli_cmd;
typedef int (*cli_opt_fn)(const struct cli_cmd *cmd, void *ctx, int c, const char *arg);
int trace_parse_as(const struct cli_cmd *cmd, unsigned int which, int argc, char **argv,
		   cli_opt_fn on_extra, void *ctx, struct trace_opts *o);

/* trace -i's hooks (top.c): each interval's tables, or one JSON line per interval. */
void trace_interval_printer(const struct trace_opts *o, struct trace_hooks *h);

/* The report and --save files of o, as a trace's sink (trace_cmd.c). */
struct trace_outputs {
	const struct trace_opts *o;
	struct cli_output out, save; /* -o (or stdout) and --save */
};
void trace_outputs_sink(struct trace_outputs *w, const struct trace_opts *o,
			struct trace_sink *ret);

#endif
