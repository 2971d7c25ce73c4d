// SPDX-License-Identifier: BSD-2-Clause
/*
 * `schedprof report FILE.json`: renders a saved run (trace -f json) again, in any format,
 * without BPF or root. The run is read back into the same model `trace` renders from, so
 * `trace -f X` and `trace -f json` + `report -f X` print the same thing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "cli.h"
#include "commands.h"
#include "render_opts.h"
#include "resym_cli.h"

static void report_help(void)
{
	printf("Usage: schedprof report [OPTIONS] FILE.json\n"
	       "\nRender a saved run (schedprof trace -f json -o FILE.json) again; FILE '-' reads\n"
	       "standard input. Needs neither root nor BPF.\n"
	       "\n  -o, --output FILE write to FILE (needed on a terminal for pprof, svg, html and\n"
	       "                    timeline)\n"
	       "      --views LIST  views to render (default: all in the file)\n"
	       "%s"
	       "      --strict      exit 3 when the run lost anything (rows, stacks, lock events),\n"
	       "                    naming the losses\n"
	       RESYM_CLI_HELP
	       CLI_HELP_LINES
	       "\nExamples:\n"
	       "  schedprof report run.json --stacks\n"
	       "  schedprof report run.json -f folded | flamegraph.pl > run.svg\n"
	       "  schedprof report run.json -f pprof -o run.pb.gz && go tool pprof -top run.pb.gz\n"
	       "  schedprof report run.json -f html -o run.html\n"
	       "  schedprof report run.json -f timeline -o run.html   (traced with --timeline)\n"
	       "\nExit status: 0 success, 1 the run cannot be read or the output written, 2 usage "
	       "error,\n3 --strict and the run lost something, 141 standard output was closed "
	       "(quietly).\n",
	       render_opts_help());
}

static const struct cli_cmd report_cmd = { "report", report_help };

int cmd_report(int argc, char **argv)
{
	static const struct option long_opts[] = {
		RENDER_LONG_OPTS,
		{ "strict", no_argument, NULL, CLI_OPT_STRICT },
		RUNS_LONG_OPTS,
	};
	struct resym_cli rs;
	struct runs_opts o;
	struct sp_run run;
	const char *missing;
	int err;

	err = resym_cli_take(&report_cmd, &argc, argv, &rs);
	if (err)
		return err;
	err = runs_parse(&report_cmd, argc, argv, long_opts, 1, "one saved run: FILE.json", &o);
	if (err)
		return err == CLI_DONE ? EXIT_SUCCESS : err;
	err = cli_load_run(o.files[0], &run);
	if (!err)
		resym_cli_apply(&run, &rs);
	if (!err && (missing = render_run_missing(&run, o.render.format))) {
		sp_run_free(&run);
		return cli_usage_error(&report_cmd, "%s: %s", o.files[0], missing);
	}
	if (!err)
		err = cli_write_run(&run, &o.render, o.output);
	if (!err && o.strict && cli_report_losses(&run, NULL))
		err = -ENODATA;
	sp_run_free(&run);
	return err == -EPIPE ? EXIT_PIPE : err == -ENODATA ? EXIT_LOSS : err ? EXIT_FAILURE :
							 EXIT_SUCCESS;
}
