/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The rendering options that `trace`, `report` and (the first four) `diff` share (-f, --views,
 * -n, --value, --stacks, --stack-rows, --by, --sort, --lock-stacks, --lines): their getopt entries, one
 * parser that applies one option to struct render_opts, and their help lines.
 */
#ifndef SCHEDPROF_RENDER_OPTS_H
#define SCHEDPROF_RENDER_OPTS_H

#include <getopt.h>
#include "cli/cli.h"
#include "format/render.h"

/* getopt values of the long-only render options; a command's own start at RENDER_OPT__END. */
enum {
	RENDER_OPT_VIEWS = 0x100,
	RENDER_OPT_STACKS,
	RENDER_OPT_STACK_ROWS,
	RENDER_OPT_BY,
	RENDER_OPT_VALUE,
	RENDER_OPT_SORT,
	RENDER_OPT_LOCK_STACKS,
	RENDER_OPT_LINES,
	RENDER_OPT__END,
};

/* To paste into a command's getopt short options string and struct option table. */
/* --views has no short letter: -v is --verbose, as in perf, bpftrace and libbpf-tools. */
#define RENDER_SHORT_OPTS "f:n:"
/* The ones diff takes too. */
#define RENDER_BASE_LONG_OPTS                                                                    \
	{ "format", required_argument, NULL, 'f' },                                               \
	{ "views", required_argument, NULL, RENDER_OPT_VIEWS },                                   \
	{ "rows", required_argument, NULL, 'n' },                                                 \
	{ "value", required_argument, NULL, RENDER_OPT_VALUE }
#define RENDER_LONG_OPTS                                                                         \
	RENDER_BASE_LONG_OPTS,                                                                    \
	{ "stacks", no_argument, NULL, RENDER_OPT_STACKS },                                       \
	{ "stack-rows", required_argument, NULL, RENDER_OPT_STACK_ROWS },                         \
	{ "by", required_argument, NULL, RENDER_OPT_BY },                                         \
	{ "sort", required_argument, NULL, RENDER_OPT_SORT },                                     \
	{ "lock-stacks", no_argument, NULL, RENDER_OPT_LOCK_STACKS },                             \
	{ "lines", no_argument, NULL, RENDER_OPT_LINES }

/* The defaults: table, every view, 20 rows, 3 stacks per row with --stacks. */
void render_opts_init(struct render_opts *o);

/*
 * Applies getopt's option c (argument arg, NULL for flags) to o. Returns 0, EXIT_USAGE after
 * cmd's usage error about a bad argument, or -ENOENT when c is no render option (o unchanged).
 */
int render_opts_parse(const struct cli_cmd *cmd, struct render_opts *o, int c, const char *arg);

/* The help lines of the render options but --views (its meaning depends on the command). */
const char *render_opts_help(void);

#endif
