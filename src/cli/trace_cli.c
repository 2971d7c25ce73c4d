// SPDX-License-Identifier: BSD-2-Clause
/*
 * The `schedprof trace` command line: its help, options and usage errors, into struct
 * trace_opts (trace_opts.h). The render options come from render_opts.h, shared with report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include "commands.h"
#include "log.h"
#include "render_opts.h"
#include "trace_opts.h"
#include "util.h"
#include "schedprof/schedprof.h"

static const char trace_usage[] =
	"Usage: schedprof trace [OPTIONS] [-p PID[,PID...] | -a | -- COMMAND [ARGS...]]\n";

static void trace_help(void)
{
	printf("%s", trace_usage);
	printf("\nTrace why tasks are not running: where they call schedule() from, exactly counted,\n"
	       "and where the CPUs went: sampled kernel and user functions.\n"
	       "\nTarget (default -a):\n"
	       "  -- COMMAND ARGS   launch COMMAND, trace it and every descendant until it exits;\n"
	       "                    exit with its status (127 when it cannot be executed)\n"
	       "  -p, --pid PIDS    attach to running processes and all their descendants\n"
	       "  -a, --all         the whole system\n"
	       "  -d, --duration S  stop after S seconds\n"
	       "\nReport:\n"
	       "  -v, --views LIST  views to collect and print (schedules,profile,locks; default all;\n"
	       "                    locks: lock:contention_begin/end, Linux >= 5.19; its sleepers\n"
	       "                    are joined with schedules)\n"
	       "%s"
	       "  -o, --output FILE write the report to FILE\n"
	       "      --save FILE   also save the run as JSON, for schedprof report and diff\n"
	       "\nProfile (sampled PCs, kernel and user):\n"
	       "  -F, --freq HZ     samples per second and CPU (default %u; 49/97/99 avoid lock-step\n"
	       "                    with the timer tick)\n"
	       "  -g, --call-graph  record kernel and user stacks (user stacks are as deep as frame\n"
	       "                    pointers allow); --stacks implies it\n"
	       "      --no-profile  do not sample at all\n"
	       "\nLimits (nothing is dropped silently: the report counts what did not fit):\n"
	       "      --max-targets N  traced processes named or found at attach (default %u)\n"
	       "      --max-callers N  (caller, wait, comm) rows (default %u)\n"
	       "      --max-stacks N   distinct stacks kept, per stack map (default %u)\n"
	       "      --max-samples N  distinct sampled (function, comm, stacks) keys (default %u)\n"
	       "\n  -V, --verbose     more diagnostics (-VV: libbpf's too)\n"
	       "  -h, --help        this help\n"
	       "\nExamples:\n"
	       "  schedprof trace -- make -j8\n"
	       "  schedprof trace -p $(pgrep -o make) -d 30 --stacks\n"
	       "  schedprof trace -a -d 5 -f json -o run.json\n"
	       "\nExit status: the command's (with --), 0 otherwise; 1 runtime error; 2 usage error;\n"
	       "127 the command could not be executed.\n",
	       render_opts_help(), SP_PROF_DEF_HZ, SP_DEF_TARGETS, SP_DEF_CALLERS, SP_DEF_STACKS,
	       SP_DEF_PROF_KEYS);
}

enum {
	OPT_SAVE = RENDER_OPT__END,
	OPT_MAX_TARGETS,
	OPT_MAX_CALLERS,
	OPT_MAX_STACKS,
	OPT_NO_PROFILE,
	OPT_MAX_SAMPLES,
};

/* '+': stop at the first non-option, so COMMAND's own options stay its own. */
#define TRACE_SHORT_OPTS "+" RENDER_SHORT_OPTS "p:ad:o:F:gVh"

static const struct option trace_long_opts[] = {
	RENDER_LONG_OPTS,
	{ "pid", required_argument, NULL, 'p' },
	{ "all", no_argument, NULL, 'a' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "save", required_argument, NULL, OPT_SAVE },
	{ "max-targets", required_argument, NULL, OPT_MAX_TARGETS },
	{ "max-callers", required_argument, NULL, OPT_MAX_CALLERS },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "freq", required_argument, NULL, 'F' },
	{ "call-graph", no_argument, NULL, 'g' },
	{ "no-profile", no_argument, NULL, OPT_NO_PROFILE },
	{ "max-samples", required_argument, NULL, OPT_MAX_SAMPLES },
	{ "verbose", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

/* What trace_opts does not hold but the checks after the options need. */
struct cli_state {
	bool have_pid, have_all, no_profile;
};

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "schedprof trace: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%sTry 'schedprof trace --help'.\n", trace_usage);
	return EXIT_USAGE;
}

static int unknown_option(char **argv)
{
	char opt[2] = { (char)optopt, 0 };

	if (optopt && optopt < 0x100)
		return usage_error("unknown or incomplete option '-%s'", opt);
	return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
}

/* The map size an option sets, and the option's name; NULL for other options. */
static uint32_t *limit_of(struct trace_opts *o, int c, const char **ret_name)
{
	switch (c) {
	case OPT_MAX_TARGETS:
		*ret_name = "--max-targets";
		return &o->max_targets;
	case OPT_MAX_CALLERS:
		*ret_name = "--max-callers";
		return &o->max_callers;
	case OPT_MAX_STACKS:
		*ret_name = "--max-stacks";
		return &o->max_stacks;
	case OPT_MAX_SAMPLES:
		*ret_name = "--max-samples";
		return &o->max_samples;
	default:
		return NULL;
	}
}

static int parse_limit(const char *arg, const char *name, uint32_t *ret)
{
	uint64_t v;

	if (parse_u64(arg, 1, 1u << 24, &v))
		return usage_error("bad value for %s (a number from 1 to 16777216)", name);
	*ret = (uint32_t)v;
	return 0;
}

static int parse_freq(const char *arg, unsigned int *ret)
{
	uint64_t v;

	if (parse_u64(arg, 1, SP_PROF_MAX_HZ, &v))
		return usage_error("bad frequency '%s' (1 to 100000 Hz)", arg);
	*ret = (unsigned int)v;
	return 0;
}

static int parse_pids(const char *arg, struct trace_opts *o, struct cli_state *cs)
{
	free(o->pids);
	o->pids = NULL;
	if (parse_pid_list(arg, &o->pids, &o->npids))
		return usage_error("bad PID list '%s' (PID[,PID...])", arg);
	cs->have_pid = true;
	return 0;
}

/* The options that are neither render options nor limits. */
static int parse_trace_opt(struct trace_opts *o, struct cli_state *cs, int c, char **argv)
{
	switch (c) {
	case 'p':
		return parse_pids(optarg, o, cs);
	case 'a':
		cs->have_all = true;
		return 0;
	case 'd':
		if (parse_seconds(optarg, &o->duration_ns))
			return usage_error("bad duration '%s' (seconds > 0)", optarg);
		return 0;
	case 'o':
		o->output = optarg;
		return 0;
	case OPT_SAVE:
		o->save = optarg;
		return 0;
	case 'F':
		return parse_freq(optarg, &o->hz);
	case 'g':
		o->callchains = true;
		return 0;
	case OPT_NO_PROFILE:
		cs->no_profile = true;
		return 0;
	case 'V':
		log_set_level(log_get_level() < LOG_DEBUG ? LOG_DEBUG : LOG_LIBBPF);
		return 0;
	case 'h':
		trace_help();
		return -1;
	default:
		return unknown_option(argv);
	}
}

/* One option from getopt: 0, EXIT_USAGE after printing the error, or -1 for --help. */
static int parse_opt(struct trace_opts *o, struct cli_state *cs, int c, char **argv)
{
	const char *fmt, *name;
	uint32_t *limit;
	int r;

	r = render_opts_parse(&o->render, c, optarg, &fmt);
	if (r < 0)
		return usage_error(fmt, optarg);
	if (r > 0) {
		if (c == 'v')
			o->views = o->render.views; /* the views collected are the views printed */
		return 0;
	}
	limit = limit_of(o, c, &name);
	if (limit)
		return parse_limit(optarg, name, limit);
	return parse_trace_opt(o, cs, c, argv);
}

static void trace_opts_init(struct trace_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->views = SP_VIEW_ALL;
	o->max_targets = SP_DEF_TARGETS;
	o->max_callers = SP_DEF_CALLERS;
	o->max_stacks = SP_DEF_STACKS;
	o->hz = SP_PROF_DEF_HZ;
	o->max_samples = SP_DEF_PROF_KEYS;
	render_opts_init(&o->render);
}

/* The target, and the checks that need every option. */
static int parse_finish(struct trace_opts *o, const struct cli_state *cs, int argc, char **argv)
{
	if (optind < argc) {
		o->argv = &argv[optind];
		o->mode = SP_TARGET_COMMAND;
	} else {
		o->mode = cs->have_pid ? SP_TARGET_PIDS : SP_TARGET_ALL;
	}
	if ((cs->have_pid + cs->have_all + (o->argv != NULL)) > 1)
		return usage_error("%s", "choose one target: -p, -a or -- COMMAND");
	if (!o->output && render_format_is_binary(o->render.format) && isatty(STDOUT_FILENO))
		return usage_error("%s", "this format is not for a terminal: write it with -o FILE");
	if (cs->no_profile) {
		o->views &= ~SP_VIEW_PROFILE;
		o->render.views = o->views;
		if (!o->views)
			return usage_error("%s", "--no-profile leaves no view to collect");
	}
	if (o->render.stacks)
		o->callchains = true; /* --stacks prints the profile's stacks: record them */
	o->cmdline = join_args(argc, argv);
	return o->cmdline ? 0 : usage_error("%s", "out of memory");
}

int trace_parse(int argc, char **argv, struct trace_opts *o)
{
	struct cli_state cs = { 0 };
	int c, err;

	trace_opts_init(o);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, TRACE_SHORT_OPTS, trace_long_opts, NULL)) != -1) {
		err = parse_opt(o, &cs, c, argv);
		if (err)
			return err;
	}
	return parse_finish(o, &cs, argc, argv);
}

void trace_opts_free(struct trace_opts *o)
{
	free(o->pids);
	free(o->cmdline);
	o->pids = NULL;
	o->cmdline = NULL;
}
