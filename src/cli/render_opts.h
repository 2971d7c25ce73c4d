/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The rendering options that `trace` and `report` share (-f, -v, -n, --stacks, --stack-rows,
 * --by, --value, --sort, --lock-stacks): their getopt entries, one parser that applies one
 * option to struct render_opts, and their help lines. The commands print the errors.
 */
#ifndef SCHEDPROF_RENDER_OPTS_H
#define SCHEDPROF_RENDER_OPTS_H

#include <getopt.h>
#include "render.h"

/* getopt values of the long-only render options; a command's own start at RENDER_OPT__END. */
enum {
	RENDER_OPT_STACKS = 0x100,
	RENDER_OPT_STACK_ROWS,
	RENDER_OPT_BY,
	RENDER_OPT_VALUE,
	RENDER_OPT_SORT,
	RENDER_OPT_LOCK_STACKS,
	RENDER_OPT__END,
};

/* To paste into a command's getopt short options string and struct option table. */
#define RENDER_SHORT_OPTS "f:v:n:"
#define RENDER_LONG_OPTS                                                                         \
	{ "format", required_argument, NULL, 'f' },                                               \
	{ "views", required_argument, NULL, 'v' },                                                \
	{ "rows", required_argument, NULL, 'n' },                                                 \
	{ "stacks", no_argument, NULL, RENDER_OPT_STACKS },                                       \
	{ "stack-rows", required_argument, NULL, RENDER_OPT_STACK_ROWS },                         \
	{ "by", required_argument, NULL, RENDER_OPT_BY },                                         \
	{ "value", required_argument, NULL, RENDER_OPT_VALUE },                                   \
	{ "sort", required_argument, NULL, RENDER_OPT_SORT },                                     \
	{ "lock-stacks", no_argument, NULL, RENDER_OPT_LOCK_STACKS }

/* The defaults: table, every view, 20 rows, 3 stacks per row with --stacks. */
void render_opts_init(struct render_opts *o);

/*
 * Applies getopt's option c (argument arg, NULL for flags) to o. Returns 1 when c is a render
 * option, 0 when it is not (o unchanged), or -EINVAL for a bad argument, with *ret_fmt a
 * message about it (one %s: the argument) for the command's usage error.
 */
int render_opts_parse(struct render_opts *o, int c, const char *arg, const char **ret_fmt);

/* The help lines of the render options but -v (its meaning depends on the command). */
const char *render_opts_help(void);

#endif
