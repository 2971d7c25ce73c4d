// SPDX-License-Identifier: BSD-2-Clause
/*
 * `schedprof report FILE.json`: renders a saved run (trace -f json) again, in any format,
 * without BPF or root. The run is read back into the same model `trace` renders from, so
 * `trace -f X` and `trace -f json` + `report -f X` print the same thing.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "commands.h"
#include "model_json.h"
#include "render_opts.h"
#include "util.h"

static const char report_usage[] = "Usage: schedprof report [OPTIONS] FILE.json\n";

static void report_help(void)
{
	printf("%s", report_usage);
	printf("\nRender a saved run (schedprof trace -f json -o FILE.json) again; FILE '-' reads\n"
	       "standard input. Needs neither root nor BPF.\n"
	       "\n  -o, --output FILE write to FILE (needed for pprof, svg and html on a terminal)\n"
	       "  -v, --views LIST  views to render (default: all in the file)\n"
	       "%s"
	       "  -h, --help        this help\n"
	       "\nExamples:\n"
	       "  schedprof report run.json --stacks\n"
	       "  schedprof report run.json -f folded | flamegraph.pl > run.svg\n"
	       "  schedprof report run.json -f pprof -o run.pb.gz && go tool pprof -top run.pb.gz\n"
	       "  schedprof report run.json -f html -o run.html\n"
	       "\nExit status: 0 success, 1 the run cannot be read or the output written, 2 usage "
	       "error.\n",
	       render_opts_help());
}

static int report_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "schedprof report: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%sTry 'schedprof report --help'.\n", report_usage);
	return EXIT_USAGE;
}

/* 0, EXIT_USAGE after printing the error, or -1 for --help. */
static int report_parse(int argc, char **argv, struct render_opts *o, const char **ret_file,
			const char **ret_output)
{
	static const struct option long_opts[] = {
		RENDER_LONG_OPTS,
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *fmt;
	int c, r;

	render_opts_init(o);
	*ret_output = NULL;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, RENDER_SHORT_OPTS "o:h", long_opts, NULL)) != -1) {
		r = render_opts_parse(o, c, optarg, &fmt);
		if (r < 0)
			return report_usage_error(fmt, optarg);
		if (r > 0)
			continue;
		if (c == 'o') {
			*ret_output = optarg;
		} else if (c == 'h') {
			report_help();
			return -1;
		} else {
			return report_usage_error("unknown or incomplete option '%s'",
						  argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return report_usage_error("%s", "give one saved run: FILE.json");
	*ret_file = argv[optind];
	if (!*ret_output && render_format_is_binary(o->format) && isatty(STDOUT_FILENO))
		return report_usage_error(
			"%s", "this format is not for a terminal: write it with -o FILE");
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct render_opts o;
	const char *file, *output;
	struct sp_run run;
	char msg[256];
	FILE *f = stdout;
	int err;

	err = report_parse(argc, argv, &o, &file, &output);
	if (err)
		return err < 0 ? EXIT_SUCCESS : err;
	if (sp_run_load_json(file, &run, msg, sizeof(msg))) {
		fprintf(stderr, "schedprof report: %s: %s\n", file, msg);
		sp_run_free(&run);
		return EXIT_FAILURE;
	}
	if (output && !(f = fopen(output, "w"))) {
		fprintf(stderr, "schedprof report: cannot write %s: %s\n", output, strerror(errno));
		sp_run_free(&run);
		return EXIT_FAILURE;
	}
	err = render_run(&run, &o, f);
	if (fflush(f) && !err)
		err = -errno;
	if (f != stdout && fclose(f) && !err)
		err = -errno;
	if (err)
		fprintf(stderr, "schedprof report: cannot write the report%s%s: %s\n",
			output ? " to " : "", output ? output : "", strerror(-err));
	sp_run_free(&run);
	return err ? EXIT_FAILURE : EXIT_SUCCESS;
}
