// SPDX-License-Identifier: BSD-2-Clause
/* `schedprof diff A.json B.json`: loads two saved runs, diffs them (diff.h), writes the diff. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "commands.h"
#include "diff.h"
#include "log.h"
#include "render_opts.h"

static void diff_help(void)
{
	printf("Usage: schedprof diff [OPTIONS] A.json B.json\n"
	       "\nCompare two saved runs (trace -f json): totals, elapsed and CPU time (and the\n"
	       "time budget, the critical path and serial time when both have them), then per\n"
	       "view every row of either run with its value in A and B, ranked by the absolute\n"
	       "change (the critical path's steps always by time), then the parallelism\n"
	       "profiles of two runs with a timeline.\n"
	       "\n  -f, --format FMT  table (default), json, or html (differential flame graphs:\n"
	       "                    B's stacks red where they grew, blue where they shrank)\n"
	       "  -o, --output FILE write to FILE\n"
	       "  -n, --rows N      rows per view in the table (default 20; 0 = all)\n"
	       "      --views LIST  views to compare: schedules, profile, locks, timeline\n"
	       "                    (default: all in either run)\n"
	       "      --value count|time  compare counts (default) or times\n"
	       CLI_HELP_LINES
	       "\nExample:\n"
	       "  schedprof diff nopipe.json pipe.json\n"
	       "\nExit status: 0 success, 1 a run cannot be read or the output written, 2 usage\n"
	       "error, 141 standard output was closed (quietly). A and B can be '-' (standard\n"
	       "input), one of them.\n");
}

static const struct cli_cmd diff_cmd = { "diff", diff_help };

struct diff_output {
	const struct sp_diff *d;
	struct sp_diff_opts o;
	enum sp_format fmt;
};

static int write_diff(const void *ctx, FILE *f)
{
	const struct diff_output *out = ctx;

	switch (out->fmt) {
	case SP_FMT_JSON:
		return sp_diff_write_json(out->d, &out->o, f);
	case SP_FMT_HTML:
		return sp_diff_write_html(out->d, &out->o, f);
	default:
		return sp_diff_write_table(out->d, &out->o, f);
	}
}

int cmd_diff(int argc, char **argv)
{
	static const struct option long_opts[] = { RENDER_BASE_LONG_OPTS, RUNS_LONG_OPTS };
	struct sp_run a, b;
	struct sp_diff d = { 0 };
	struct runs_opts o;
	struct diff_output out = { .d = &d };
	enum sp_format fmt;
	int err;

	err = runs_parse(&diff_cmd, argc, argv, long_opts, 2, "two saved runs: A.json B.json", &o);
	if (err)
		return err == CLI_DONE ? EXIT_SUCCESS : err;
	if (!strcmp(o.files[0], "-") && !strcmp(o.files[1], "-"))
		return cli_usage_error(&diff_cmd, "standard input can be read once: give '-' for "
						  "one run only");
	fmt = o.render.format;
	if (fmt != SP_FMT_TABLE && fmt != SP_FMT_JSON && fmt != SP_FMT_HTML)
		return cli_usage_error(&diff_cmd, "diff writes table, json or html only (-f)");
	err = cli_check_output(&diff_cmd, fmt, o.output);
	if (err)
		return err;
	out.fmt = fmt;
	out.o = (struct sp_diff_opts){ .name_a = o.files[0], .name_b = o.files[1],
				       .nrows = o.render.nrows };
	err = cli_load_run(o.files[0], &a);
	if (err) {
		sp_run_free(&a);
		return EXIT_FAILURE;
	}
	err = cli_load_run(o.files[1], &b);
	/* the table goes to terminals: control characters of comms and symbols escaped */
	if (!err && fmt == SP_FMT_TABLE && (err = sp_run_escape_controls(&a) ?: sp_run_escape_controls(&b)))
		elog("cannot compare the runs: %s", strerror(-err));
	if (!err && (err = sp_diff_build(&a, &b, o.render.views, o.render.value, &d)))
		elog("cannot compare the runs: %s", strerror(-err));
	if (!err)
		err = cli_write_output(o.output, "diff", write_diff, &out);
	sp_diff_free(&d);
	sp_run_free(&a);
	sp_run_free(&b);
	return err == -EPIPE ? EXIT_PIPE : err ? EXIT_FAILURE : EXIT_SUCCESS;
}
