// SPDX-License-Identifier: BSD-2-Clause
/*
 * The `schedprof trace` command line: its help, options and usage errors, into struct
 * trace_opts (trace_opts.h). The render options come from render_opts.h, shared with report.
 * One registry lists the options of every command that traces (trace, top, agent) and which
 * of them takes each: their getopt tables are made of it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/render_opts.h"
#include "cli/trace_opts.h"
#include "base/util.h"
#include "loader/cache.h"
#include "symbols/ucfi.h"
#include "schedprof/schedprof.h"

static void trace_help(void)
{
	printf("Usage: schedprof trace [OPTIONS] [-p PIDS | -t TIDS | --cgroup PATH | -a]\n"
	       "                       [-- COMMAND [ARGS...]]\n"
	       "\nTrace why tasks are not running: where they call schedule() from, exactly counted,\n"
	       "and where the CPUs went: sampled kernel and user functions.\n"
	       "\nTarget (default -a):\n"
	       "  -- COMMAND ARGS   launch COMMAND, trace it and every descendant until it exits;\n"
	       "                    exit with its status (127 when it cannot be executed)\n"
	       "  -p, --pid PIDS    attach to running processes and all their descendants; with\n"
	       "                    -- COMMAND, for as long as COMMAND runs (COMMAND is not traced)\n"
	       "  -t, --tid TIDS    those threads only (not their process, not the threads they\n"
	       "                    create), until every one has exited, as perf -t\n"
	       "  -a, --all         the whole system; with -- COMMAND, for as long as COMMAND runs\n"
	       "                    (the profile's target samples are then COMMAND's tree)\n"
	       "      --cgroup PATH the tasks of a cgroup v2 and its descendant cgroups (PATH in\n"
	       "                    the cgroup2 mount, or relative to it), until -d or Ctrl-C, or\n"
	       "                    for as long as -- COMMAND runs (COMMAND is not traced)\n"
	       "  -d, --duration S  stop after S seconds (a command is left running, and said so)\n"
	       "      --kill-on-end with -d and -- COMMAND: end the command too (SIGTERM, SIGKILL\n"
	       "                    2 s later)\n"
	       "      --user NAME   run COMMAND as user NAME (a name or a uid); under sudo it runs\n"
	       "                    as the user who ran sudo by default\n"
	       "      --as-root     run COMMAND as root even under sudo\n"
	       "\nReport:\n"
	       "      --views LIST  views to collect and print: %s\n"
	       "                    (default %s;\n"
	       "                    locks: lock:contention_begin/end, Linux >= 5.19; its sleepers\n"
	       "                    are joined with schedules)\n"
	       "%s"
	       "  -i, --interval S  also a report every S seconds (0.5 ok): each view's table of the\n"
	       "                    interval, or one JSON line per interval with -f json (then\n"
	       "                    the whole run is not printed: --save writes it)\n"
	       "  -o, --output FILE write the report to FILE\n"
	       "      --save FILE   also save the run as JSON, for schedprof report and diff\n"
	       "      --strict      exit 3 when anything was lost (rows, stacks, events), naming it\n"
	       "      --timeline    also record each traced task's states over time (running,\n"
	       "                    runnable, blocked, who woke whom) for the job's critical path,\n"
	       "                    its parallelism and its serial phases\n"
	       "      --timeline-buffer SIZE  its ring buffer (default %uM; 4K to 2G, rounded up\n"
	       "                    to a power of 2): events that find it full are counted as lost\n"
	       "      --wakers      name the function that woke each row's sleeps (a kernel stack\n"
	       "                    walk per wake-up of a traced task); the waker's comm is always\n"
	       "                    shown\n"
	       "      --verify-callers  check every cached schedule() caller, kept kernel stack and\n"
	       "                    waker against a full stack walk (slow), and report the\n"
	       "                    mismatches\n"
	       "      --kstack-cache 0|1  build kept kernel stacks and wakers' from the raw stack\n"
	       "                    words by learned frame distances (default 1; 0: walk each)\n"
	       "\nProfile (sampled PCs, kernel and user):\n"
	       "  -F, --freq HZ     samples per second and CPU (default %u; 49/97/99 avoid lock-step\n"
	       "                    with the timer tick; at most kernel.perf_event_max_sample_rate)\n"
	       "  -g, --call-graph  record kernel and user stacks (user stacks are as deep as frame\n"
	       "                    pointers allow); --stacks implies it, and with it the\n"
	       "                    schedules and locks stacks reach the user code too\n"
	       "      --ustack-copy BYTES  -g: the user stack copied per sample, from its SP, and\n"
	       "                    unwound by the binaries' call frame information, so that code\n"
	       "                    without frame pointers has whole stacks (default %u, at most\n"
	       "                    %u; 0: frame pointers only)\n"
	       "      --unwind-tables SIZE  -g: memory for the binaries' unwind tables (default\n"
	       "                    %uM, 1M to 4G); objects beyond it are walked by frame pointers,\n"
	       "                    counted; the per-boot cache keeps as much of them\n"
	       "      --no-profile  do not sample at all\n"
	       "\nLimits (nothing is dropped silently: the report counts what did not fit; values whose\n"
	       "maps would need more than half of MemAvailable are refused before anything starts):\n"
	       "      --max-targets N  traced processes named or found at attach (default %u)\n"
	       "      --max-callers N  (caller, wait, comm) rows (default %u)\n"
	       "      --max-stacks N   distinct stacks kept, per stack map (default %u)\n"
	       "      --max-samples N  distinct sampled (function, comm, stacks) keys (default %u)\n"
	       "      --no-cache    neither read nor write the per-boot caches in /run/schedprof\n"
	       "                    (`schedprof cache show` lists them)\n"
	       "\nPrivileges: root, or CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN); CAP_SYSLOG too to name\n"
	       "kernel functions (without it they are shown as addresses).\n"
	       "Exit status 3: --strict and something was lost; 141: standard output was closed\n"
	       "(a quiet exit).\n"
	       "\n" CLI_HELP_LINES
	       "\nExamples:\n"
	       "  schedprof trace -- make -j8\n"
	       "  schedprof trace -p $(pgrep -o make) -d 30 --stacks\n"
	       "  schedprof trace -a -d 5 -f json -o run.json\n"
	       "  schedprof trace -a -- make -j8\n"
	       "  schedprof trace -t 1234,1240 --views schedules\n"
	       "  schedprof trace -p $(pgrep -o postgres) -- ./bench.sh\n"
	       "  schedprof trace --cgroup system.slice/nginx.service -d 10\n"
	       "  schedprof trace --views locks -d 10 -p $(pgrep -o postgres)\n"
	       "\nExit status: the command's (with --; 0 when -d ended the trace), 0 otherwise;\n"
	       "1 runtime error; 2 usage error; 127 the command could not be executed.\n",
	       SP_VIEW_NAMES_EVERY, SP_VIEW_NAMES_ALL, render_opts_help(), SP_TL_DEF_BUFFER >> 20,
	       SP_PROF_DEF_HZ, SP_PROF_UCOPY_DEF, SP_PROF_UCOPY_MAX, UCFI_DEF_BYTES >> 20,
	       SP_DEF_TARGETS, SP_DEF_CALLERS,
	       SP_DEF_STACKS, SP_DEF_PROF_KEYS);
}

static void top_help(void);

/* top_parse() parses as `top`: its name in usage errors, its help */
static struct cli_cmd trace_cmd = { "trace", trace_help };

enum {
	OPT_SAVE = RENDER_OPT__END,
	OPT_STRICT,
	OPT_MAX_TARGETS,
	OPT_MAX_CALLERS,
	OPT_MAX_STACKS,
	OPT_NO_PROFILE,
	OPT_MAX_SAMPLES,
	OPT_KILL_ON_END,
	OPT_USER,
	OPT_AS_ROOT,
	OPT_CGROUP,
	OPT_TIMELINE,
	OPT_TIMELINE_BUFFER,
	OPT_WAKERS,
	OPT_VERIFY_CALLERS,
	OPT_NO_CACHE,
	OPT_USTACK_COPY,
	OPT_KSTACK_CACHE,
	OPT_UNWIND_TABLES,
};

/*
 * One option of the commands that trace, besides the render and common options: its getopt
 * entry and the commands that take it.
 */
struct trace_opt {
	const char *name; /* the long option */
	int has_arg;	  /* no_argument or required_argument */
	int val;	  /* getopt's value: the short letter, an OPT_ or an AGENT_OPT_ */
	unsigned int cmds; /* TRACE_CMD_* bits */
};

#define TRACING (TRACE_CMD_TRACE | TRACE_CMD_TOP | TRACE_CMD_AGENT)

/* The registry, in --help's order: each command's getopt table is made of its rows. */
static const struct trace_opt trace_reg[] = {
	{ "pid", required_argument, 'p', TRACING },
	{ "tid", required_argument, 't', TRACING },
	{ "all", no_argument, 'a', TRACING },
	{ "cgroup", required_argument, OPT_CGROUP, TRACING },
	{ "duration", required_argument, 'd', TRACING },
	{ "kill-on-end", no_argument, OPT_KILL_ON_END, TRACING },
	{ "user", required_argument, OPT_USER, TRACING },
	{ "as-root", no_argument, OPT_AS_ROOT, TRACING },
	{ "interval", required_argument, 'i', TRACING },
	{ "output", required_argument, 'o', TRACING },
	{ "save", required_argument, OPT_SAVE, TRACING },
	{ "strict", no_argument, OPT_STRICT, TRACING },
	{ "timeline", no_argument, OPT_TIMELINE, TRACING },
	{ "timeline-buffer", required_argument, OPT_TIMELINE_BUFFER, TRACING },
	{ "wakers", no_argument, OPT_WAKERS, TRACING },
	{ "verify-callers", no_argument, OPT_VERIFY_CALLERS, TRACING },
	{ "freq", required_argument, 'F', TRACING },
	{ "call-graph", no_argument, 'g', TRACING },
	{ "ustack-copy", required_argument, OPT_USTACK_COPY, TRACING },
	{ "kstack-cache", required_argument, OPT_KSTACK_CACHE, TRACING },
	{ "unwind-tables", required_argument, OPT_UNWIND_TABLES, TRACING },
	{ "no-profile", no_argument, OPT_NO_PROFILE, TRACING },
	{ "max-targets", required_argument, OPT_MAX_TARGETS, TRACING },
	{ "max-callers", required_argument, OPT_MAX_CALLERS, TRACING },
	{ "max-stacks", required_argument, OPT_MAX_STACKS, TRACING },
	{ "max-samples", required_argument, OPT_MAX_SAMPLES, TRACING },
	{ "no-cache", no_argument, OPT_NO_CACHE, TRACING },
	{ "sink", required_argument, AGENT_OPT_SINK, TRACE_CMD_AGENT },
	{ "spool", required_argument, AGENT_OPT_SPOOL, TRACE_CMD_AGENT },
	{ "spool-limit", required_argument, AGENT_OPT_SPOOL_LIMIT, TRACE_CMD_AGENT },
	{ "password-file", required_argument, AGENT_OPT_PASSWORD_FILE, TRACE_CMD_AGENT },
	{ "create-schema", no_argument, AGENT_OPT_CREATE_SCHEMA, TRACE_CMD_AGENT },
	{ "ttl", required_argument, AGENT_OPT_TTL, TRACE_CMD_AGENT },
	{ "hostname", required_argument, AGENT_OPT_HOSTNAME, TRACE_CMD_AGENT },
};

/* '+': stop at the first non-option, so COMMAND's own options stay its own. */
#define TRACE_SHORT_OPTS "+" RENDER_SHORT_OPTS "p:t:ad:i:o:F:g" CLI_SHORT_OPTS

static const struct option render_long_opts[] = { RENDER_LONG_OPTS };
static const struct option common_long_opts[] = { CLI_LONG_OPTS };

/* Room for the getopt table of any command that traces. */
#define LONG_OPTS_MAX \
	(ARRAY_SIZE(render_long_opts) + ARRAY_SIZE(trace_reg) + ARRAY_SIZE(common_long_opts) + 1)

/* cmd's getopt table into ret: the render options, cmd's in the registry, the common ones. */
static void build_long_opts(unsigned int cmd, struct option ret[LONG_OPTS_MAX])
{
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(render_long_opts); i++)
		ret[n++] = render_long_opts[i];
	for (size_t i = 0; i < ARRAY_SIZE(trace_reg); i++)
		if (trace_reg[i].cmds & cmd)
			ret[n++] = (struct option){ trace_reg[i].name, trace_reg[i].has_arg, NULL,
						    trace_reg[i].val };
	for (size_t i = 0; i < ARRAY_SIZE(common_long_opts); i++)
		ret[n++] = common_long_opts[i];
	ret[n] = (struct option){ 0 };
}

/* The options, and what trace_opts does not hold but the checks after the options need. */
struct trace_parse {
	struct trace_opts *o;
	/* trace_parse_as(): the command's own options (val >= TRACE_OPT_EXTRA) go there */
	cli_opt_fn extra_opt;
	void *extra_ctx;
	bool have_pid, have_tid, have_all, no_profile, have_freq, timeline, timeline_buffer;
};

/* The map size an option sets, and the option's name; NULL for other options. */
static uint32_t *limit_of(struct trace_opts *o, int c, const char **ret_name)
{
	switch (c) {
	case OPT_MAX_TARGETS:
		*ret_name = "--max-targets";
		return &o->trace.max_targets;
	case OPT_MAX_CALLERS:
		*ret_name = "--max-callers";
		return &o->trace.max_callers;
	case OPT_MAX_STACKS:
		*ret_name = "--max-stacks";
		return &o->trace.max_stacks;
	case OPT_MAX_SAMPLES:
		*ret_name = "--max-samples";
		return &o->trace.max_samples;
	default:
		return NULL;
	}
}

/* The flag an option without argument sets; NULL for other options. */
static bool *flag_of(struct trace_parse *p, int c)
{
	switch (c) {
	case OPT_STRICT:
		return &p->o->trace.strict;
	case 'a':
		return &p->have_all;
	case 'g':
		return &p->o->trace.callchains;
	case OPT_NO_PROFILE:
		return &p->no_profile;
	case OPT_KILL_ON_END:
		return &p->o->trace.kill_on_end;
	case OPT_AS_ROOT:
		return &p->o->trace.as_root;
	case OPT_TIMELINE:
		return &p->timeline;
	case OPT_WAKERS:
		return &p->o->trace.wakers;
	case OPT_VERIFY_CALLERS:
		return &p->o->trace.verify_callers;
	default:
		return NULL;
	}
}

/* The file an option names (-o, --save); NULL for other options. */
static const char **path_of(struct trace_opts *o, int c)
{
	return c == 'o' ? &o->output : c == OPT_SAVE ? &o->save : NULL;
}

#define PID_MAX_LIMIT 4194304 /* the kernel's PID_MAX_LIMIT on 64-bit */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* A PID that is in pids twice (sorted copy: n log n for a long list), or 0. */
static int repeated_pid(const int *pids, size_t n)
{
	int *sorted = malloc(n * sizeof(*sorted)), dup = 0;

	if (!sorted)
		return 0; /* a duplicate is harmless: the set keeps it once */
	memcpy(sorted, pids, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_int);
	for (size_t i = 1; i < n && !dup; i++)
		if (sorted[i] == sorted[i - 1])
			dup = sorted[i];
	free(sorted);
	return dup;
}

/* -p PID[,PID...] or -t TID[,TID...]: no empty entry ("1,,2"), none twice, 1..PID_MAX_LIMIT. */
static int parse_pids(struct trace_opts *o, const char *arg, const char *opt, const char *what)
{
	const char *s = arg;
	size_t cap = 0;
	int dup;

	free(o->trace.pids);
	o->trace.pids = NULL;
	o->trace.npids = 0;
	for (;;) {
		size_t len = strcspn(s, ",");
		char *tok;
		uint64_t v;
		int err;

		if (!len)
			return cli_usage_error(&trace_cmd, "%s: empty entry in '%s' (%s[,%s...])",
					       opt, arg, what, what);
		tok = strndup(s, len);
		if (!tok)
			return cli_usage_error(&trace_cmd, "out of memory");
		err = cli_parse_number(&trace_cmd, opt, tok, 1, PID_MAX_LIMIT, &v);
		free(tok);
		if (err)
			return err;
		if (grow((void **)&o->trace.pids, &cap, o->trace.npids + 1, sizeof(*o->trace.pids)))
			return cli_usage_error(&trace_cmd, "out of memory");
		o->trace.pids[o->trace.npids++] = (int)v;
		s += len;
		if (!*s)
			break;
		s++; /* the comma: something must follow it */
	}
	dup = repeated_pid(o->trace.pids, o->trace.npids);
	return dup ? cli_usage_error(&trace_cmd, "%s: %s %d is given twice", opt, what, dup) : 0;
}

/* The longest -d and -i: about 115 days, as parse_seconds() takes. */
#define MAX_DURATION_S 10000000
/* The shortest -i: each interval reads and symbolizes every map. */
#define MIN_INTERVAL_MS 50

/*
 * -d and -i (opt) SECONDS into *ret: decimal only ("5", "0.5", ".5"): no hex, exponent, sign,
 * inf or unit; example is the whole number its refusal shows. At least min_ms (0: more than
 * 0), at most MAX_DURATION_S.
 */
static int parse_seconds_opt(const char *opt, const char *arg, const char *example,
			     unsigned int min_ms, uint64_t *ret)
{
	size_t int_digits = strspn(arg, "0123456789"), frac_digits = 0;
	const char *end = arg + int_digits;

	if (*end == '.')
		frac_digits = strspn(end + 1, "0123456789"), end += 1 + frac_digits;
	if (*end || !(int_digits + frac_digits))
		return cli_usage_error(&trace_cmd, "%s: '%s' is not a number of seconds (a decimal "
					      "number such as %s or 0.5)", opt, arg, example);
	if (!parse_seconds(arg, ret) && *ret >= min_ms * 1000000ULL &&
	    *ret <= MAX_DURATION_S * NSEC_PER_SEC)
		return 0;
	if (!min_ms)
		return cli_usage_error(&trace_cmd, "%s: %s is out of range (more than 0, at most %d "
					      "seconds)", opt, arg, MAX_DURATION_S);
	return cli_usage_error(&trace_cmd, "%s: %s is out of range (%g to %d seconds)", opt, arg,
			       min_ms / 1000.0, MAX_DURATION_S);
}

/* The options that take an argument and are neither render options nor limits. */
static int parse_arg_opt(struct trace_parse *p, int c, const char *arg)
{
	struct trace_opts *o = p->o;
	int err;

	switch (c) {
	case 'p':
	case 't': {
		bool tids = c == 't';

		if (tids ? p->have_pid : p->have_tid)
			return cli_usage_error(&trace_cmd, "-p and -t exclude each other");
		err = parse_pids(o, arg, tids ? "-t" : "-p", tids ? "TID" : "PID");
		*(tids ? &p->have_tid : &p->have_pid) = !err;
		return err;
	}
	case OPT_CGROUP:
		if (!*arg)
			return cli_usage_error(&trace_cmd, "--cgroup needs a cgroup v2 path");
		o->trace.cgroup = arg;
		return 0;
	case OPT_USER:
		if (!*arg)
			return cli_usage_error(&trace_cmd, "--user needs a user name or uid");
		o->trace.user = arg;
		return 0;
	case 'd':
		return parse_seconds_opt("-d", arg, "5", 0, &o->trace.duration_ns);
	case 'i':
		return parse_seconds_opt("-i", arg, "1", MIN_INTERVAL_MS, &o->trace.interval_ns);
	case OPT_TIMELINE_BUFFER:
		p->timeline_buffer = true;
		return cli_parse_size(&trace_cmd, "--timeline-buffer", arg, 4ULL << 10, 2ULL << 30,
				      &o->trace.timeline_buffer);
	default: /* 'F': its range, with the kernel's limit, once the views are known */
		p->have_freq = true;
		return cli_parse_uint(&trace_cmd, "-F", arg, 1, UINT32_MAX, &o->trace.hz);
	}
}

/* One of trace's options from cli_parse(): 0 or EXIT_USAGE. */
static int trace_opt(const struct cli_cmd *cmd, void *ctx, int c, const char *arg)
{
	struct trace_parse *p = ctx;
	struct trace_opts *o = p->o;
	const char *name, **path;
	uint32_t *limit;
	bool *flag;
	int r;

	if (c >= TRACE_OPT_EXTRA && p->extra_opt)
		return p->extra_opt(cmd, p->extra_ctx, c, arg);
	r = render_opts_parse(cmd, &o->render, c, arg);
	if (r != -ENOENT) {
		if (c == RENDER_OPT_VIEWS)
			o->trace.views = o->render.views; /* the views collected are the views printed */
		return r;
	}
	limit = limit_of(o, c, &name);
	if (limit)
		return cli_parse_uint(&trace_cmd, name, arg, 1, 1u << 24, limit);
	if (c == OPT_UNWIND_TABLES)
		return cli_parse_size(&trace_cmd, "--unwind-tables", arg, 1ULL << 20, 4ULL << 30,
				      &o->trace.unwind_tables);
	if (c == OPT_USTACK_COPY)
		return cli_parse_uint(&trace_cmd, "--ustack-copy", arg, 0, SP_PROF_UCOPY_MAX,
				      &o->trace.ustack_copy);
	if (c == OPT_KSTACK_CACHE)
		return cli_parse_uint(&trace_cmd, "--kstack-cache", arg, 0, 1, &o->trace.kstack_cache);
	if (c == OPT_NO_CACHE) {
		cache_disable(); /* for the whole process: nothing is read or written */
		return 0;
	}
	flag = flag_of(p, c);
	path = path_of(o, c);
	if (flag)
		*flag = true;
	else if (path)
		*path = arg;
	else
		return parse_arg_opt(p, c, arg);
	return 0;
}

static void trace_opts_init(struct trace_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->trace.views = SP_VIEW_ALL;
	o->trace.max_targets = SP_DEF_TARGETS;
	o->trace.max_callers = SP_DEF_CALLERS;
	o->trace.max_stacks = SP_DEF_STACKS;
	o->trace.hz = SP_PROF_DEF_HZ;
	o->trace.timeline_buffer = SP_TL_DEF_BUFFER;
	o->trace.max_samples = SP_DEF_PROF_KEYS;
	o->trace.ustack_copy = SP_PROF_UCOPY_DEF;
	o->trace.kstack_cache = 1;
	render_opts_init(&o->render);
}

/* The target: -- COMMAND (a view list there is the old -v VIEWS), -p, or -a. */
static int parse_target(struct trace_parse *p, int argc, char **argv)
{
	struct trace_opts *o = p->o;

	if (optind < argc) {
		/* without "--", a view list is no command: it is the old `-v VIEWS` */
		if (strcmp(argv[optind - 1], "--") && cli_check_stray_views(&trace_cmd, argv[optind]))
			return EXIT_USAGE;
		o->trace.argv = &argv[optind];
		/* -p PIDS -- COMMAND, --cgroup PATH -- COMMAND: for as long as the command runs */
		o->trace.mode = p->have_pid ? SP_TARGET_PIDS : o->trace.cgroup ? SP_TARGET_CGROUP
			: SP_TARGET_COMMAND;
	} else if (optind > 1 && !strcmp(argv[optind - 1], "--")) {
		/* "--" ends the options to name a command: without one it is no -a */
		return cli_usage_error(&trace_cmd, "no command after '--' (-- COMMAND [ARGS...])");
	} else {
		o->trace.mode = p->have_pid ? SP_TARGET_PIDS : p->have_tid ? SP_TARGET_TIDS
			: o->trace.cgroup ? SP_TARGET_CGROUP : SP_TARGET_ALL;
	}
	/* -a -- COMMAND: the whole system, for as long as the command runs */
	o->trace.all = p->have_all && o->trace.argv;
	if (p->have_pid + p->have_tid + p->have_all > 1 || (p->have_tid && o->trace.argv))
		return cli_usage_error(&trace_cmd, "choose one target: -p, -t, -a or -- COMMAND");
	if (o->trace.cgroup && (p->have_pid || p->have_tid || p->have_all))
		return cli_usage_error(&trace_cmd, "--cgroup is a target of its own: not with %s",
				       p->have_pid ? "-p" : p->have_tid ? "-t" : "-a");
	return 0;
}

/*
 * -F at most the kernel's kernel.perf_event_max_sample_rate, as perf does: above it the
 * cpu-clock events cannot be opened at that rate, and the kernel lowers it when sampling
 * takes too long. Refused (not clamped), since the user asked for that rate.
 */
static int check_freq(const struct trace_opts *o)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	unsigned int kmax = 0;

	if (f) {
		if (fscanf(f, "%u", &kmax) != 1)
			kmax = 0;
		fclose(f);
	}
	if (kmax && kmax <= SP_PROF_MAX_HZ && o->trace.hz > kmax)
		return cli_usage_error(&trace_cmd, "-F: %u is out of range (1..%u Hz, the kernel's "
					      "kernel.perf_event_max_sample_rate)", o->trace.hz, kmax);
	if (o->trace.hz > SP_PROF_MAX_HZ)
		return cli_usage_error(&trace_cmd, "-F: %u is out of range (1..%u Hz)", o->trace.hz,
				       SP_PROF_MAX_HZ);
	return 0;
}

/* The checks that need every option. */
static int parse_finish(struct trace_parse *p, int argc, char **argv)
{
	struct trace_opts *o = p->o;
	int err = parse_target(p, argc, argv);

	if (err)
		return err;
	err = cli_check_output(&trace_cmd, o->render.format, o->output);
	if (err)
		return err;
	if (p->timeline) { /* collected, and shown: as --views ...,timeline */
		o->trace.views |= SP_VIEW_TIMELINE;
		o->render.views |= SP_VIEW_TIMELINE;
	}
	if (render_format_is_timeline(o->render.format) && !(o->trace.views & SP_VIEW_TIMELINE))
		return cli_usage_error(&trace_cmd, "this format draws the timeline: trace with "
				       "--timeline");
	/* -F against the kernel's limit, when the profile view samples */
	if (p->have_freq && !p->no_profile && (o->trace.views & SP_VIEW_PROFILE) && (err = check_freq(o)))
		return err;
	if (p->no_profile) {
		o->trace.views &= ~SP_VIEW_PROFILE;
		o->render.views = o->trace.views;
		if (!o->trace.views)
			return cli_usage_error(&trace_cmd, "--no-profile leaves no view to collect");
	}
	/* --lines (a render option) also asks the symbol layer for lines and inlined calls */
	o->trace.lines = o->render.lines;
	if (o->trace.kill_on_end && (!o->trace.argv || !o->trace.duration_ns))
		return cli_usage_error(&trace_cmd, "--kill-on-end needs -d and -- COMMAND");
	if ((o->trace.user || o->trace.as_root) && !o->trace.argv)
		return cli_usage_error(&trace_cmd, "%s needs -- COMMAND",
				       o->trace.user ? "--user" : "--as-root");
	if (o->trace.user && o->trace.as_root)
		return cli_usage_error(&trace_cmd, "--user and --as-root exclude each other");
	if (o->trace.interval_ns && o->render.format != SP_FMT_TABLE && o->render.format != SP_FMT_JSON)
		return cli_usage_error(&trace_cmd, "-i prints tables or JSON lines: -f table or "
					      "-f json");
	if (p->timeline_buffer && !(o->trace.views & SP_VIEW_TIMELINE))
		return cli_usage_error(&trace_cmd, "--timeline-buffer needs --timeline");
	if (o->render.stacks)
		o->trace.callchains = true; /* --stacks prints the profile's stacks: record them */
	/* what the output needs of the collectors (the engine knows no render option) */
	o->trace.full_stacks = o->trace.callchains || o->render.format == SP_FMT_FOLDED ||
			       o->render.format == SP_FMT_PPROF || o->render.format == SP_FMT_SVG ||
			       o->render.format == SP_FMT_HTML;
	o->trace.lock_stacks = o->render.lock_stacks;
	o->trace.lock_sort = o->render.lock_sort;
	o->trace.cmdline = join_args(argc, argv);
	return o->trace.cmdline ? 0 : cli_usage_error(&trace_cmd, "out of memory");
}

/* The options of which (TRACE_CMD_*) in argv, by the registry: 0, EXIT_USAGE or CLI_DONE. */
static int parse_opts(struct trace_parse *p, unsigned int which, int argc, char **argv)
{
	struct option longopts[LONG_OPTS_MAX];

	trace_opts_init(p->o);
	build_long_opts(which, longopts);
	return cli_parse(&trace_cmd, argc, argv, TRACE_SHORT_OPTS, longopts, trace_opt, p);
}

int trace_parse(int argc, char **argv, struct trace_opts *o)
{
	struct trace_parse p = { .o = o };
	int err = parse_opts(&p, TRACE_CMD_TRACE, argc, argv);

	return err ? err : parse_finish(&p, argc, argv);
}

void trace_opts_free(struct trace_opts *o)
{
	free(o->trace.pids);
	free(o->trace.cmdline);
	o->trace.pids = NULL;
	o->trace.cmdline = NULL;
}

int trace_parse_as(const struct cli_cmd *cmd, unsigned int which, int argc, char **argv,
		   cli_opt_fn on_extra, void *ctx, struct trace_opts *o)
{
	struct trace_parse p = { .o = o, .extra_opt = on_extra, .extra_ctx = ctx };
	int err;

	trace_cmd = *cmd;
	err = parse_opts(&p, which, argc, argv);
	return err ? err : parse_finish(&p, argc, argv);
}

static void top_help(void)
{
	printf("Usage: schedprof top [OPTIONS] [-p PIDS | -t TIDS | --cgroup PATH | -a]\n"
	       "                     [-- COMMAND [ARGS...]]\n"
	       "\nA live view of trace's tables, refreshed every interval: what happened in the last\n"
	       "one, fitted to the terminal.\n"
	       "\nTargets, views and limits as `schedprof trace` (see trace --help), and:\n"
	       "  -i, --interval S  refresh every S seconds (default 1; 0.5 ok)\n"
	       "  -d, --duration S  quit after S seconds\n"
	       "      --save FILE   at the end, save the whole run as JSON (for report and diff)\n"
	       "\nKeys: 1 2 3 or Tab: schedules, profile, locks; s: the next sort; p or space: pause\n"
	       "(collection goes on, the screen stays); q: quit (Ctrl-C too). With -- COMMAND, q\n"
	       "ends the command (SIGTERM, SIGKILL 2 s later).\n"
	       "\nExit status: 0; 1 runtime error, or standard input or output is not a terminal;\n"
	       "2 usage error.\n"
	       "\nExamples:\n"
	       "  schedprof top -a\n"
	       "  schedprof top -i 0.5 -p $(pgrep -o postgres)\n"
	       "  schedprof top -- make -j8\n");
}

int top_parse(int argc, char **argv, struct trace_opts *o)
{
	struct trace_parse p = { .o = o };
	int err;

	trace_cmd.name = "top";
	trace_cmd.help = top_help;
	err = parse_opts(&p, TRACE_CMD_TOP, argc, argv);
	if (err)
		return err;
	if (o->output || o->render.format != SP_FMT_TABLE)
		return cli_usage_error(&trace_cmd, "%s: top draws on the terminal (trace -i prints "
					      "intervals to a file or pipe)", o->output ? "-o" : "-f");
	if (!o->trace.interval_ns)
		o->trace.interval_ns = NSEC_PER_SEC;
	return parse_finish(&p, argc, argv);
}
