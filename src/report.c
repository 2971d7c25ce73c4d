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
#include "render.h"
#include "util.h"

static const char report_usage[] = "Usage: schedprof report [OPTIONS] FILE.json\n";

static void report_help(void)
{
	printf("%s", report_usage);
	printf("\nRender a saved run (schedprof trace -f json -o FILE.json) again; FILE '-' reads\n"
	       "standard input. Needs neither root nor BPF.\n"
	       "\n  -f, --format FMT  %s (default table)\n"
	       "  -o, --output FILE write to FILE (needed for pprof, svg and html on a terminal)\n"
	       "  -v, --views LIST  views to render (default: all in the file)\n"
	       "  -n, --rows N      rows per table (default 20; 0 = all)\n"
	       "      --stacks      print the top stacks under each row\n"
	       "      --stack-rows N  stacks per row with --stacks (default 3)\n"
	       "      --by comm     group rows by process name first\n"
	       "      --sort KEY    rank the locks table by wait (default), count or max\n"
	       "      --lock-stacks print the top kernel stacks and owners under each lock row\n"
	       "      --value count|time  folded and flame graph values: counts (default) or\n"
	       "                    nanoseconds (off-CPU, CPU, lock wait)\n"
	       "  -h, --help        this help\n"
	       "\nExamples:\n"
	       "  schedprof report run.json --stacks\n"
	       "  schedprof report run.json -f folded | flamegraph.pl > run.svg\n"
	       "  schedprof report run.json -f pprof -o run.pb.gz && go tool pprof -top run.pb.gz\n"
	       "  schedprof report run.json -f html -o run.html\n"
	       "\nExit status: 0 success, 1 the run cannot be read or the output written, 2 usage "
	       "error.\n",
	       render_format_names());
}

static int report_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "schedprof report: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%sTry 'schedprof report --help'.\n", report_usage);
	return EXIT_USAGE;
}

enum {
	OPT_STACKS = 0x100,
	OPT_STACK_ROWS,
	OPT_BY,
	OPT_VALUE,
	OPT_SORT,
	OPT_LOCK_STACKS,
};

/* 0, EXIT_USAGE after printing the error, or -1 for --help. */
static int report_parse(int argc, char **argv, struct render_opts *o, const char **ret_file,
			const char **ret_output)
{
	static const struct option long_opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "views", required_argument, NULL, 'v' },
		{ "rows", required_argument, NULL, 'n' },
		{ "stacks", no_argument, NULL, OPT_STACKS },
		{ "stack-rows", required_argument, NULL, OPT_STACK_ROWS },
		{ "by", required_argument, NULL, OPT_BY },
		{ "value", required_argument, NULL, OPT_VALUE },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "lock-stacks", no_argument, NULL, OPT_LOCK_STACKS },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->views = SP_VIEW_SCHED | SP_VIEW_PROFILE | SP_VIEW_LOCKS;
	o->nrows = 20;
	o->nstacks = 3;
	*ret_output = NULL;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "f:o:v:n:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (render_parse_format(optarg, &o->format))
				return report_usage_error("unknown format '%s'", optarg);
			break;
		case 'o':
			*ret_output = optarg;
			break;
		case 'v':
			if (render_parse_views(optarg, &o->views))
				return report_usage_error("bad view list '%s'", optarg);
			break;
		case 'n':
			if (parse_u64(optarg, 0, 1000000, &v))
				return report_usage_error("bad row count '%s'", optarg);
			o->nrows = (unsigned int)v;
			break;
		case OPT_STACKS:
			o->stacks = true;
			break;
		case OPT_STACK_ROWS:
			if (parse_u64(optarg, 1, 1000, &v))
				return report_usage_error("bad --stack-rows '%s'", optarg);
			o->nstacks = (unsigned int)v;
			break;
		case OPT_BY:
			if (strcmp(optarg, "comm") && strcmp(optarg, "caller"))
				return report_usage_error("bad --by '%s' (comm or caller)", optarg);
			o->group = strcmp(optarg, "comm") ? SP_GROUP_CALLER : SP_GROUP_COMM;
			break;
		case OPT_VALUE:
			if (render_parse_value(optarg, &o->value))
				return report_usage_error("bad --value '%s' (count or time)",
							  optarg);
			break;
		case OPT_SORT:
			if (!strcmp(optarg, "wait"))
				o->lock_sort = SP_LOCK_SORT_WAIT;
			else if (!strcmp(optarg, "count"))
				o->lock_sort = SP_LOCK_SORT_COUNT;
			else if (!strcmp(optarg, "max"))
				o->lock_sort = SP_LOCK_SORT_MAX;
			else
				return report_usage_error("bad --sort '%s' (wait, count or max)",
							  optarg);
			break;
		case OPT_LOCK_STACKS:
			o->lock_stacks = true;
			break;
		case 'h':
			report_help();
			return -1;
		default:
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
