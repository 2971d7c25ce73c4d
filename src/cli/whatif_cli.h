/* SPDX-License-Identifier: BSD-2-Clause */
/* `report --what-if`: its option, and the predictions written for a run. */
#ifndef SCHEDPROF_WHATIF_CLI_H
#define SCHEDPROF_WHATIF_CLI_H

#include "cli/cli.h"
#include "format/render.h"
#include "model/whatif.h"

/* Above the fleet options' values (fleet_cli.h). */
#define WHATIF_OPT 0x380
#define WHATIF_OPT_CRITICAL_PATH 0x381
#define WHATIF_LONG_OPTS                                                                         \
	{ "what-if", required_argument, NULL, WHATIF_OPT },                                       \
	{ "critical-path", no_argument, NULL, WHATIF_OPT_CRITICAL_PATH }
#define WHATIF_HELP_LINES                                                                        \
	"      --what-if cpus=LIST  the job's wall time predicted on LIST CPUs (default\n"        \
	"                    " SP_WHATIF_DEFAULT_CPUS "), from a run traced with --timeline; a\n"   \
	"                    table or -f json (docs/what-if.md)\n"                                \
	"      --what-if without=CLASS|CALLER|KIND:LOCK  the same without those sleeps\n"        \
	"                    (repeatable)\n"                                                      \
	"      --critical-path  the critical path's time by comm, state and caller as stacks\n"  \
	"                    (-f folded, pprof, svg, html; a run traced with --timeline)\n"

#define WHATIF_DIFF_HELP_LINES                                                                    \
	"      --what-if cpus=LIST | without=SPEC  (repeatable; runs traced with --timeline)\n"   \
	"                    both runs' predicted wall times side by side (report --what-if)\n"

/* Adds --what-if arg to o: 0, or EXIT_USAGE after cmd's usage error. */
int whatif_cli_opt(const struct cli_cmd *cmd, struct sp_whatif_opts *o, const char *arg);

/*
 * Writes the predictions for run (read from path) to output (NULL: stdout) in ro's format
 * (table or json, else a usage error). Returns the exit status: 0, EXIT_USAGE (a spec that
 * matches nothing or is refused, no timeline: one line says which), EXIT_FAILURE, EXIT_PIPE.
 */
int whatif_cli_report(const struct cli_cmd *cmd, const struct sp_run *run, const char *path,
		      const struct sp_whatif_opts *o, const struct render_opts *ro,
		      const char *output);

/* diff --what-if: the predictions of runs a and b (read from path_a, path_b) side by side. */
int whatif_cli_diff(const struct cli_cmd *cmd, const struct sp_run *a, const char *path_a,
		    const struct sp_run *b, const char *path_b, const struct sp_whatif_opts *o,
		    enum sp_format format, const char *output);

/*
 * --critical-path: replaces *run by its critical path as stacks (cp_stacks.h), and sets ro to
 * draw it (the schedules view, time). 0, or the exit status after one line saying why not
 * (no timeline, a format that draws no stacks: EXIT_USAGE; EXIT_FAILURE).
 */
int whatif_cli_critical_path(const struct cli_cmd *cmd, struct sp_run *run, const char *path,
			     struct render_opts *ro);

#endif
