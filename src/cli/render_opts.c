// SPDX-License-Identifier: BSD-2-Clause
/* The render options shared by `trace` and `report` (see render_opts.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cli/commands.h"
#include "cli/render_opts.h"
#include "base/util.h"

void render_opts_init(struct render_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->views = SP_VIEW_EVERY; /* what the run holds: the timeline too */
	o->nrows = 20;
	o->nstacks = 3;
}

static int parse_lock_sort(const char *s, enum sp_lock_sort *ret)
{
	if (!strcmp(s, "wait"))
		*ret = SP_LOCK_SORT_WAIT;
	else if (!strcmp(s, "count"))
		*ret = SP_LOCK_SORT_COUNT;
	else if (!strcmp(s, "max"))
		*ret = SP_LOCK_SORT_MAX;
	else
		return -EINVAL;
	return 0;
}

static int parse_group(const char *s, enum sp_group *ret)
{
	if (strcmp(s, "comm") && strcmp(s, "caller"))
		return -EINVAL;
	*ret = strcmp(s, "comm") ? SP_GROUP_CALLER : SP_GROUP_COMM;
	return 0;
}

/* The options with an argument: 0, -EINVAL with *ret_fmt set, or -ENOENT when c is none. */
static int parse_arg_opt(struct render_opts *o, int c, const char *arg, const char **ret_fmt)
{
	static char views_fmt[128]; /* the view names are not a literal (view_opts.h) */

	switch (c) {
	case 'f':
		*ret_fmt = "unknown format '%s'";
		return render_parse_format(arg, &o->format);
	case RENDER_OPT_VIEWS:
		snprintf(views_fmt, sizeof(views_fmt), "bad view list '%%s' (%s)",
			 SP_VIEW_NAMES_EVERY);
		*ret_fmt = views_fmt;
		return render_parse_views(arg, &o->views);
	case RENDER_OPT_BY:
		*ret_fmt = "bad --by '%s' (comm or caller)";
		return parse_group(arg, &o->group);
	case RENDER_OPT_VALUE:
		*ret_fmt = "bad --value '%s' (count or time)";
		return render_parse_value(arg, &o->value);
	case RENDER_OPT_SORT:
		*ret_fmt = "bad --sort '%s' (wait, count or max)";
		return parse_lock_sort(arg, &o->lock_sort);
	default:
		return -ENOENT;
	}
}

int render_opts_parse(const struct cli_cmd *cmd, struct render_opts *o, int c, const char *arg)
{
	const char *fmt;
	int err;

	switch (c) {
	case RENDER_OPT_STACKS:
		o->stacks = true;
		return 0;
	case RENDER_OPT_LOCK_STACKS:
		o->lock_stacks = true;
		return 0;
	case RENDER_OPT_LINES:
		o->lines = true;
		return 0;
	case 'n':
		return cli_parse_uint(cmd, "-n", arg, 0, 1000000, &o->nrows);
	case RENDER_OPT_STACK_ROWS:
		return cli_parse_uint(cmd, "--stack-rows", arg, 1, 1000, &o->nstacks);
	}
	err = parse_arg_opt(o, c, arg, &fmt);
	if (err == -ENOENT)
		return err;
	return err ? cli_usage_error(cmd, fmt, arg) : 0;
}

const char *render_opts_help(void)
{
	static char buf[1792];

	if (!buf[0])
		snprintf(buf, sizeof(buf),
			 "  -f, --format FMT  %s\n"
			 "                    (default table); trace-event (Perfetto, speedscope) and\n"
			 "                    timeline (HTML) draw a run traced with --timeline\n"
			 "  -n, --rows N      rows per table (default 20; 0 = all)\n"
			 "      --stacks      print the top stacks under each row (kernel; the profile's\n"
			 "                    are kernel then user)\n"
			 "      --stack-rows N  stacks per row with --stacks (default 3)\n"
			 "      --by comm     group rows by process name first\n"
			 "      --value count|time  folded and flame graph values: counts (default) or\n"
			 "                    nanoseconds (off-CPU, CPU, lock wait)\n"
			 "      --sort KEY    rank the locks table by wait (default), count or max\n"
			 "      --lock-stacks print the top kernel stacks and owners under each lock row\n"
			 "      --lines       stacks show each frame's source file:line and mark inlined\n"
			 "                    frames (trace: DWARF looked up for user frames, when present)\n",
			 render_format_names());
	return buf;
}
