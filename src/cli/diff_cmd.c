// SPDX-License-Identifier: BSD-2-Clause
/*
 * `schedprof diff A.json B.json`: loads two saved runs, diffs them (diff.h), writes the diff.
 * `schedprof diff --from clickhouse://... --since A --vs-since B` (or --host X --vs-host Y):
 * the two runs are two selections of the fleet warehouse (fleet_cli.h), diffed the same way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/commands.h"
#include "format/diff.h"
#include "cli/fleet_cli.h"
#include "base/log.h"
#include "cli/render_opts.h"
#include "cli/whatif_cli.h"

static void diff_help(void)
{
	printf("Usage: schedprof diff [OPTIONS] A.json B.json\n"
	       "       schedprof diff [OPTIONS] --from clickhouse://HOST[:PORT][/DB] SELECTION\n"
	       "                      --vs-host H|--vs-since T|--vs-until T ...\n"
	       "\nCompare two saved runs (trace -f json): totals, elapsed and CPU time (and the\n"
	       "time budget, the critical path and serial time when both have them), then per\n"
	       "view every row of either run with its value in A and B, ranked by the absolute\n"
	       "change (the critical path's steps always by time), then the parallelism\n"
	       "profiles of two runs with a timeline.\n"
	       "\n  -f, --format FMT  table (default), json, or html (differential flame graphs:\n"
	       "                    B's stacks red where they grew, blue where they shrank)\n"
	       "  -o, --output FILE write to FILE\n"
	       "  -n, --rows N      rows per view in the table (default 20; 0 = all)\n"
	       "      --views LIST  views to compare: %s\n"
	       "                    (default: all in either run)\n"
	       "      --value count|time  compare counts (default) or times\n"
	       WHATIF_DIFF_HELP_LINES
	       "\nFrom the fleet warehouse (schedprof agent's rows), A is the selection of --host,\n"
	       "--since and --until, B the same with the --vs-* options given instead:\n"
	       FLEET_HELP_LINES
	       "      --vs-host H[,H], --vs-since T, --vs-until T  B's hosts and times (at least\n"
	       "                    one; without --vs-host B has A's hosts, without a --vs time\n"
	       "                    A's time range)\n"
	       CLI_HELP_LINES
	       "\nExamples:\n"
	       "  schedprof diff nopipe.json pipe.json\n"
	       "  schedprof diff --from clickhouse://ch1:8123 --since -14d --until -7d \\\n"
	       "      --vs-since -7d --vs-until now          (this week against the last)\n"
	       "  schedprof diff --from clickhouse://ch1:8123 --since -1d --host old1,old2 \\\n"
	       "      --vs-host new1,new2                    (before and after the upgrade)\n"
	       "\nExit status: 0 success, 1 a run cannot be read or the output written, 2 usage\n"
	       "error, 4 the warehouse cannot be read (one line says why), 141 standard output\n"
	       "was closed (quietly). A and B can be '-' (standard input), one of them.\n",
	       SP_VIEW_NAMES_EVERY);
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

/* Two saved runs, or --from with a B side; never both. 0 or EXIT_USAGE. */
static int check_sources(const struct runs_opts *o, const struct fleet_opts *fo)
{
	if (!fo->from) {
		if (fleet_side_given(fo, 0) || fleet_side_given(fo, 1) || fo->password_file)
			return cli_usage_error(&diff_cmd, "--host, --since, --until, --vs-* and "
							  "--password-file select from the "
							  "warehouse: give --from");
		if (o->nfiles != 2)
			return cli_usage_error(&diff_cmd, "give two saved runs: A.json B.json");
		return 0;
	}
	if (o->nfiles)
		return cli_usage_error(&diff_cmd, "give saved runs or --from, not both");
	if (!fleet_side_given(fo, 1))
		return cli_usage_error(&diff_cmd, "--from: say what B is: --vs-host, --vs-since "
						  "or --vs-until (A is --host, --since, --until)");
	return 0;
}

/* The diff of two selections of the warehouse. An exit status. */
static int diff_warehouse(const struct runs_opts *o, const struct fleet_opts *fo)
{
	struct warehouse_run w[2];
	struct sp_diff d = { 0 };
	struct diff_output out = { .d = &d, .fmt = o->render.format };
	int err = 0, i;

	if (out.fmt != SP_FMT_TABLE && out.fmt != SP_FMT_JSON && out.fmt != SP_FMT_HTML)
		return cli_usage_error(&diff_cmd, "diff writes table, json or html only (-f)");
	err = cli_check_output(&diff_cmd, out.fmt, o->output);
	if (err)
		return err;
	for (i = 0; i < 2 && !err; i++)
		err = fleet_load(&diff_cmd, fo, i, &w[i]);
	if (err) {
		while (i-- > 0)
			warehouse_run_free(&w[i]);
		return err == -ENOMEM ? EXIT_FAILURE : EXIT_WAREHOUSE;
	}
	if (!w[0].intervals && !w[1].intervals) {
		elog("%s has no interval of %s nor of %s", fo->from, fleet_side_name(fo, 0),
		     fleet_side_name(fo, 1));
		warehouse_run_free(&w[0]);
		warehouse_run_free(&w[1]);
		return EXIT_FAILURE;
	}
	for (i = 0; i < 2; i++)
		if (!w[i].intervals)
			wlog("%s: no interval of %s", fo->from, fleet_side_name(fo, i));
	out.o = (struct sp_diff_opts){ .name_a = fleet_side_name(fo, 0),
				       .name_b = fleet_side_name(fo, 1), .nrows = o->render.nrows };
	if (out.fmt == SP_FMT_TABLE &&
	    (err = sp_run_escape_controls(&w[0].run) ?: sp_run_escape_controls(&w[1].run)))
		elog("cannot compare the selections: %s", strerror(-err));
	if (!err && (err = sp_diff_build(&w[0].run, &w[1].run, o->render.views, o->render.value,
					 &d)))
		elog("cannot compare the selections: %s", strerror(-err));
	if (!err)
		err = cli_write_output(o->output, "diff", write_diff, &out);
	sp_diff_free(&d);
	warehouse_run_free(&w[0]);
	warehouse_run_free(&w[1]);
	return err == -EPIPE ? EXIT_PIPE : err ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* diff's own options: --what-if, and the warehouse's. */
struct diff_extra {
	struct fleet_opts *fo;
	struct sp_whatif_opts *wi;
};

static int diff_opt(const struct cli_cmd *cmd, void *ctx, int c, const char *arg)
{
	struct diff_extra *x = ctx;

	return c == WHATIF_OPT ? whatif_cli_opt(cmd, x->wi, arg) : fleet_opt(cmd, x->fo, c, arg);
}

/* diff --what-if A B: both runs' predictions side by side. */
static int diff_whatif(const struct runs_opts *o, struct sp_whatif_opts *wi)
{
	struct sp_run a, b;
	int err;

	err = cli_load_run(o->files[0], &a);
	if (!err)
		err = cli_load_run(o->files[1], &b);
	else
		sp_run_init(&b);
	if (!err)
		err = whatif_cli_diff(&diff_cmd, &a, o->files[0], &b, o->files[1], wi,
				      o->render.format, o->output);
	else
		err = EXIT_FAILURE;
	sp_run_free(&a);
	sp_run_free(&b);
	sp_whatif_opts_free(wi);
	return err;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option long_opts[] = { RENDER_BASE_LONG_OPTS, FLEET_LONG_OPTS,
						   FLEET_VS_LONG_OPTS,
						   { "what-if", required_argument, NULL, WHATIF_OPT },
						   RUNS_LONG_OPTS };
	struct sp_whatif_opts wi = { 0 };
	struct diff_extra x = { NULL, &wi };
	struct sp_run a, b;
	struct sp_diff d = { 0 };
	struct fleet_opts fo = { 0 };
	struct runs_opts o;
	struct diff_output out = { .d = &d };
	enum sp_format fmt;
	int err;

	x.fo = &fo;
	err = runs_parse_with(&diff_cmd, argc, argv, long_opts, -2,
			      "two saved runs: A.json B.json", diff_opt, &x, &o);
	if (!err && fo.from && (wi.ncpus || wi.nwithout))
		err = cli_usage_error(&diff_cmd, "--what-if needs saved runs' timelines: give "
						 "A.json B.json, not --from");
	if (!err)
		err = check_sources(&o, &fo);
	if (err || fo.from) {
		if (!err)
			err = diff_warehouse(&o, &fo);
		fleet_opts_free(&fo);
		sp_whatif_opts_free(&wi);
		return err == CLI_DONE ? EXIT_SUCCESS : err;
	}
	if (!strcmp(o.files[0], "-") && !strcmp(o.files[1], "-")) {
		sp_whatif_opts_free(&wi);
		return cli_usage_error(&diff_cmd, "standard input can be read once: give '-' for "
						  "one run only");
	}
	if (wi.ncpus || wi.nwithout)
		return diff_whatif(&o, &wi);
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
