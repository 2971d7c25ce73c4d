// SPDX-License-Identifier: BSD-2-Clause
/*
 * `schedprof report FILE.json`: renders a saved run (trace -f json) again, in any format,
 * without BPF or root. The run is read back into the same model `trace` renders from, so
 * `trace -f X` and `trace -f json` + `report -f X` print the same thing.
 * `schedprof report --from clickhouse://...`: the same from the fleet warehouse (warehouse.h),
 * the rows of the hosts and times selected summed into one run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/fleet_cli.h"
#include "base/log.h"
#include "cli/render_opts.h"
#include "cli/resym_cli.h"
#include "cli/whatif_cli.h"

static void report_help(void)
{
	printf("Usage: schedprof report [OPTIONS] FILE.json\n"
	       "       schedprof report [OPTIONS] --from clickhouse://HOST[:PORT][/DB] [--host H]\n"
	       "                        [--since T] [--until T]\n"
	       "\nRender a saved run (schedprof trace -f json -o FILE.json) again; FILE '-' reads\n"
	       "standard input. Needs neither root nor BPF. With --from, the rows schedprof agent\n"
	       "stored in ClickHouse, summed over the hosts and intervals selected (each interval\n"
	       "once): the same tables, folded and pprof, with what the warehouse keeps (no stacks:\n"
	       "a note says what is missing).\n"
	       "\n  -o, --output FILE write to FILE (needed on a terminal for pprof, svg, html and\n"
	       "                    timeline)\n"
	       "      --views LIST  views to render (default: all in the file)\n"
	       "%s"
	       "      --strict      exit 3 when the run lost anything (rows, stacks, lock events),\n"
	       "                    naming the losses\n"
	       RESYM_CLI_HELP
	       WHATIF_HELP_LINES
	       FLEET_HELP_LINES
	       CLI_HELP_LINES
	       "\nExamples:\n"
	       "  schedprof report run.json --stacks\n"
	       "  schedprof report --from clickhouse://ch1:8123/schedprof --since -1h\n"
	       "  schedprof report --from clickhouse://ch1:8123 --host web1,web2 --since -7d -f folded\n"
	       "  schedprof report run.json -f folded | flamegraph.pl > run.svg\n"
	       "  schedprof report run.json -f pprof -o run.pb.gz && go tool pprof -top run.pb.gz\n"
	       "  schedprof report run.json -f html -o run.html\n"
	       "  schedprof report run.json -f timeline -o run.html   (traced with --timeline)\n"
	       "  schedprof report run.json --what-if cpus=1,2,8 --what-if without=pipe\n"
	       "\nExit status: 0 success, 1 the run cannot be read or the output written, 2 usage "
	       "error,\n3 --strict and the run lost something, 4 the warehouse cannot be read (no "
	       "answer,\nrefused credentials, an unreadable --password-file, the server's error: "
	       "one line\nsays which), 141 standard output was closed (quietly).\n",
	       render_opts_help());
}

static const struct cli_cmd report_cmd = { "report", report_help };

/* The table of a warehouse run: one line on where it comes from and what it lacks first. */
struct warehouse_output {
	const struct warehouse_run *w;
	const struct fleet_opts *fo;
	const struct render_opts *ro;
};

static int write_warehouse(const void *ctx, FILE *f)
{
	const struct warehouse_output *out = ctx;
	const struct warehouse_run *w = out->w;

	if (out->ro->format == SP_FMT_TABLE) {
		fprintf(f, "warehouse %s: %s: %" PRIu64 " interval%s of %zu host%s (%s), kernel%s %s\n",
			out->fo->from, fleet_side_name(out->fo, 0), w->intervals,
			w->intervals == 1 ? "" : "s", w->nhosts, w->nhosts == 1 ? "" : "s", w->hosts,
			w->nkernels == 1 ? "" : "s", w->kernels);
		fprintf(f, "  note: %s\n", warehouse_missing());
		if (w->spool_dropped)
			fprintf(f, "  note: the agents' spools dropped %" PRIu64 " intervals (full)\n",
				w->spool_dropped);
		if (w->other_losses)
			fprintf(f, "  note: the agents recorded losses: %s\n", w->other_losses);
	}
	return render_run(&w->run, out->ro, f);
}

static int report_warehouse(const struct runs_opts *o, const struct fleet_opts *fo)
{
	struct warehouse_run w;
	struct warehouse_output out = { &w, fo, &o->render };
	const char *missing;
	int err;

	err = fleet_load(&report_cmd, fo, 0, &w);
	if (err) {
		warehouse_run_free(&w);
		return err == -ENOMEM ? EXIT_FAILURE : EXIT_WAREHOUSE;
	}
	if (!w.intervals) {
		elog("%s has no interval of %s", fo->from, fleet_side_name(fo, 0));
		warehouse_run_free(&w);
		return EXIT_FAILURE;
	}
	if ((missing = render_run_missing(&w.run, o->render.format))) {
		warehouse_run_free(&w);
		return cli_usage_error(&report_cmd, "%s: %s", fo->from, missing);
	}
	if (o->render.format != SP_FMT_TABLE && o->render.format != SP_FMT_JSON)
		wlog("%s", warehouse_missing());
	err = cli_write_output(o->output, "report", write_warehouse, &out);
	if (!err && o->strict && cli_report_losses(&w.run, w.other_losses))
		err = -ENODATA;
	warehouse_run_free(&w);
	return err == -EPIPE ? EXIT_PIPE : err == -ENODATA ? EXIT_LOSS : err ? EXIT_FAILURE :
							 EXIT_SUCCESS;
}

/* report's own options: --what-if, and the warehouse's. */
struct report_extra {
	struct fleet_opts *fo;
	struct sp_whatif_opts *wi;
	bool critical_path;
};

static int report_opt(const struct cli_cmd *cmd, void *ctx, int c, const char *arg)
{
	struct report_extra *x = ctx;

	if (c == WHATIF_OPT)
		return whatif_cli_opt(cmd, x->wi, arg);
	if (c == WHATIF_OPT_CRITICAL_PATH) {
		x->critical_path = true;
		return 0;
	}
	return fleet_opt(cmd, x->fo, c, arg);
}

int cmd_report(int argc, char **argv)
{
	static const struct option long_opts[] = {
		RENDER_LONG_OPTS,
		{ "strict", no_argument, NULL, CLI_OPT_STRICT },
		FLEET_LONG_OPTS,
		WHATIF_LONG_OPTS,
		RUNS_LONG_OPTS,
	};
	struct fleet_opts fo = { 0 };
	struct sp_whatif_opts wi = { 0 };
	struct report_extra x = { &fo, &wi, false };
	struct resym_cli rs;
	struct runs_opts o;
	struct sp_run run;
	const char *missing;
	int err;

	err = resym_cli_take(&report_cmd, &argc, argv, &rs);
	if (err)
		return err;
	err = runs_parse_with(&report_cmd, argc, argv, long_opts, -1,
			      "one saved run: FILE.json", report_opt, &x, &o);
	if (!err && !fo.from && o.nfiles != 1)
		err = cli_usage_error(&report_cmd, "give one saved run: FILE.json");
	if (!err && fo.from && o.nfiles)
		err = cli_usage_error(&report_cmd, "give a saved run or --from, not both");
	if (!err && !fo.from && (fleet_side_given(&fo, 0) || fo.password_file))
		err = cli_usage_error(&report_cmd, "--host, --since, --until and --password-file "
						   "select from the warehouse: give --from");
	if (!err && fo.from && (wi.ncpus || wi.nwithout || x.critical_path))
		err = cli_usage_error(&report_cmd, "--what-if and --critical-path need a saved "
						   "run's timeline: give FILE.json, not --from");
	if (!err && x.critical_path && (wi.ncpus || wi.nwithout))
		err = cli_usage_error(&report_cmd, "give --what-if or --critical-path, not both");
	if (!err && fo.from)
		err = report_warehouse(&o, &fo);
	if (err || fo.from) {
		fleet_opts_free(&fo);
		sp_whatif_opts_free(&wi);
		return err == CLI_DONE ? EXIT_SUCCESS : err;
	}
	fleet_opts_free(&fo);
	err = cli_load_run(o.files[0], &run);
	rs.lines = o.render.lines;
	if (!err)
		resym_cli_apply(&run, &rs);
	if (!err && (wi.ncpus || wi.nwithout)) {
		err = whatif_cli_report(&report_cmd, &run, o.files[0], &wi, &o.render, o.output);
		sp_run_free(&run);
		sp_whatif_opts_free(&wi);
		return err;
	}
	sp_whatif_opts_free(&wi);
	if (!err && x.critical_path &&
	    (err = whatif_cli_critical_path(&report_cmd, &run, o.files[0], &o.render))) {
		sp_run_free(&run);
		return err;
	}
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
