// SPDX-License-Identifier: BSD-2-Clause
/*
 * `schedprof trace`: parse options, load and attach the collectors of the selected views,
 * follow the target until it ends (or -d, SIGINT, SIGTERM), then detach, read and render.
 * Every exit path after attach still prints the report collected so far.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <getopt.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collector.h"
#include "commands.h"
#include "foldcfg.h"
#include "ksyms.h"
#include "log.h"
#include "target.h"
#include "util.h"
#include "schedprof/schedprof.h"
#include "schedprof.skel.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static const struct collector *const collectors[] = {
	&sched_collector,
	&profile_collector,
	&lock_collector,
};

static volatile sig_atomic_t stop_signal;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return log_libbpf((int)level, fmt, ap);
}

static void on_signal(int sig)
{
	stop_signal = sig;
}

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
	       "  -v, --views LIST  views to collect and print (schedules,profile,locks; default all)\n"
	       "  -n, --rows N      rows per table (default 20; 0 = all)\n"
	       "      --stacks      print the top stacks under each row (kernel; the profile's\n"
	       "                    are kernel then user)\n"
	       "      --stack-rows N  stacks per row with --stacks (default 3)\n"
	       "      --by comm     group rows by process name first\n"
	       "  -f, --format FMT  %s (default table)\n"
	       "      --value count|time  folded and flame graph values: counts (default) or\n"
	       "                    nanoseconds (off-CPU, CPU, lock wait)\n"
	       "  -o, --output FILE write the report to FILE\n"
	       "      --save FILE   also save the run as JSON, for schedprof report and diff\n"
	       "\nProfile (sampled PCs, kernel and user):\n"
	       "  -F, --freq HZ     samples per second and CPU (default %u; 49/97/99 avoid lock-step\n"
	       "                    with the timer tick)\n"
	       "  -g, --call-graph  record kernel and user stacks (user stacks are as deep as frame\n"
	       "                    pointers allow); --stacks implies it\n"
	       "      --no-profile  do not sample at all\n"
	       "\nLocks (lock:contention_begin/end, Linux >= 5.19; sleepers joined with schedules):\n"
	       "      --sort KEY    rank the locks table by wait (default), count or max\n"
	       "      --lock-stacks print the top kernel stacks and owners under each lock row\n"
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
	       render_format_names(), SP_PROF_DEF_HZ, SP_DEF_TARGETS, SP_DEF_CALLERS, SP_DEF_STACKS,
	       SP_DEF_PROF_KEYS);
}

enum {
	OPT_STACKS = 0x100,
	OPT_STACK_ROWS,
	OPT_BY,
	OPT_VALUE,
	OPT_SAVE,
	OPT_MAX_TARGETS,
	OPT_MAX_CALLERS,
	OPT_MAX_STACKS,
	OPT_NO_PROFILE,
	OPT_MAX_SAMPLES,
	OPT_SORT,
	OPT_LOCK_STACKS,
};

static const struct option trace_long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "all", no_argument, NULL, 'a' },
	{ "duration", required_argument, NULL, 'd' },
	{ "views", required_argument, NULL, 'v' },
	{ "rows", required_argument, NULL, 'n' },
	{ "stacks", no_argument, NULL, OPT_STACKS },
	{ "stack-rows", required_argument, NULL, OPT_STACK_ROWS },
	{ "by", required_argument, NULL, OPT_BY },
	{ "value", required_argument, NULL, OPT_VALUE },
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "save", required_argument, NULL, OPT_SAVE },
	{ "max-targets", required_argument, NULL, OPT_MAX_TARGETS },
	{ "max-callers", required_argument, NULL, OPT_MAX_CALLERS },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "freq", required_argument, NULL, 'F' },
	{ "call-graph", no_argument, NULL, 'g' },
	{ "no-profile", no_argument, NULL, OPT_NO_PROFILE },
	{ "max-samples", required_argument, NULL, OPT_MAX_SAMPLES },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "lock-stacks", no_argument, NULL, OPT_LOCK_STACKS },
	{ "verbose", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "schedprof trace: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%sTry 'schedprof trace --help'.\n", trace_usage);
	return EXIT_USAGE;
}

static int parse_size_opt(const char *arg, const char *name, uint32_t *ret)
{
	uint64_t v;

	if (parse_u64(arg, 1, 1u << 24, &v))
		return usage_error("bad value for %s (a number from 1 to 16777216)", name);
	*ret = (uint32_t)v;
	return 0;
}

static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/* 0, EXIT_USAGE after printing the error, or -1 for --help (exit 0). */
int trace_parse(int argc, char **argv, struct trace_opts *o)
{
	bool have_pid = false, have_all = false, no_profile = false;
	uint64_t v;
	int c, err;

	memset(o, 0, sizeof(*o));
	o->views = SP_VIEW_ALL;
	o->max_targets = SP_DEF_TARGETS;
	o->max_callers = SP_DEF_CALLERS;
	o->max_stacks = SP_DEF_STACKS;
	o->hz = SP_PROF_DEF_HZ;
	o->max_samples = SP_DEF_PROF_KEYS;
	o->render.nrows = 20;
	o->render.nstacks = 3;
	o->render.views = SP_VIEW_ALL;
	optind = 1;
	opterr = 0;
	/* '+': stop at the first non-option, so COMMAND's own options stay its own. */
	while ((c = getopt_long(argc, argv, "+p:ad:v:n:f:o:F:gVh", trace_long_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			free(o->pids);
			o->pids = NULL;
			if (parse_pid_list(optarg, &o->pids, &o->npids))
				return usage_error("bad PID list '%s' (PID[,PID...])", optarg);
			have_pid = true;
			break;
		case 'a':
			have_all = true;
			break;
		case 'd':
			if (parse_seconds(optarg, &o->duration_ns))
				return usage_error("bad duration '%s' (seconds > 0)", optarg);
			break;
		case 'v':
			if (render_parse_views(optarg, &o->views))
				return usage_error("bad view list '%s' (schedules, profile, locks)", optarg);
			o->render.views = o->views;
			break;
		case 'n':
			if (parse_u64(optarg, 0, 1000000, &v))
				return usage_error("bad row count '%s'", optarg);
			o->render.nrows = (unsigned int)v;
			break;
		case OPT_STACKS:
			o->render.stacks = true;
			break;
		case OPT_STACK_ROWS:
			if (parse_u64(optarg, 1, 1000, &v))
				return usage_error("bad --stack-rows '%s'", optarg);
			o->render.nstacks = (unsigned int)v;
			break;
		case OPT_BY:
			if (strcmp(optarg, "comm") && strcmp(optarg, "caller"))
				return usage_error("bad --by '%s' (comm or caller)", optarg);
			o->render.group = strcmp(optarg, "comm") ? SP_GROUP_CALLER : SP_GROUP_COMM;
			break;
		case OPT_VALUE:
			if (render_parse_value(optarg, &o->render.value))
				return usage_error("bad --value '%s' (count or time)", optarg);
			break;
		case 'f':
			if (render_parse_format(optarg, &o->render.format))
				return usage_error("unknown format '%s'", optarg);
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_SAVE:
			o->save = optarg;
			break;
		case OPT_MAX_TARGETS:
			if ((err = parse_size_opt(optarg, "--max-targets", &o->max_targets)))
				return err;
			break;
		case OPT_MAX_CALLERS:
			if ((err = parse_size_opt(optarg, "--max-callers", &o->max_callers)))
				return err;
			break;
		case OPT_MAX_STACKS:
			if ((err = parse_size_opt(optarg, "--max-stacks", &o->max_stacks)))
				return err;
			break;
		case 'F':
			if (parse_u64(optarg, 1, SP_PROF_MAX_HZ, &v))
				return usage_error("bad frequency '%s' (1 to 100000 Hz)", optarg);
			o->hz = (unsigned int)v;
			break;
		case 'g':
			o->callchains = true;
			break;
		case OPT_NO_PROFILE:
			no_profile = true;
			break;
		case OPT_MAX_SAMPLES:
			if ((err = parse_size_opt(optarg, "--max-samples", &o->max_samples)))
				return err;
			break;
		case OPT_SORT:
			if (!strcmp(optarg, "wait"))
				o->render.lock_sort = SP_LOCK_SORT_WAIT;
			else if (!strcmp(optarg, "count"))
				o->render.lock_sort = SP_LOCK_SORT_COUNT;
			else if (!strcmp(optarg, "max"))
				o->render.lock_sort = SP_LOCK_SORT_MAX;
			else
				return usage_error("bad --sort '%s' (wait, count or max)", optarg);
			break;
		case OPT_LOCK_STACKS:
			o->render.lock_stacks = true;
			break;
		case 'V':
			log_set_level(log_get_level() < LOG_DEBUG ? LOG_DEBUG : LOG_LIBBPF);
			break;
		case 'h':
			trace_help();
			return -1;
		default:
			if (optopt && optopt < 0x100)
				return usage_error("unknown or incomplete option '-%c'",
						   (char[]){ (char)optopt, 0 });
			return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		o->argv = &argv[optind];
		o->mode = SP_TARGET_COMMAND;
	} else if (have_pid) {
		o->mode = SP_TARGET_PIDS;
	} else {
		o->mode = SP_TARGET_ALL;
	}
	if ((have_pid + have_all + (o->argv != NULL)) > 1)
		return usage_error("%s", "choose one target: -p, -a or -- COMMAND");
	if (!o->output && render_format_is_binary(o->render.format) && isatty(STDOUT_FILENO))
		return usage_error("%s", "this format is not for a terminal: write it with -o FILE");
	if (no_profile) {
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

/* Root, or CAP_BPF + CAP_PERFMON (kernel >= 5.8). */
static bool have_bpf_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	uint64_t eff;

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &hdr, data))
		return false;
	eff = data[0].effective | ((uint64_t)data[1].effective << 32);
	return (eff & (1ULL << CAP_BPF)) && (eff & (1ULL << CAP_PERFMON));
}

struct tracer {
	struct trace_ctx ctx;
	struct schedprof_bpf *skel;
	void *state[ARRAY_SIZE(collectors)];
	struct bpf_link *fork_link, *exit_link;
	int targ_tgids_fd;
	struct target_launch launch;
	bool launched, reaped;
	int status;
	struct rusage ru;
	/* kallsyms is read on a thread while libbpf parses BTF and loads (both ~0.1 s) */
	pthread_t ksyms_thread;
	bool ksyms_started;
	bool fold_cached; /* fold configuration from the boot's cache: no need to wait */
	int ksyms_err;
};

static int add_target(struct tracer *t, int pid)
{
	struct sp_target v = { .live = 1 };
	__u32 key = pid;

	if (bpf_map_update_elem(t->targ_tgids_fd, &key, &v, BPF_ANY))
		return -errno;
	/* It may have exited before it was added: then nothing would ever remove it. */
	if (!target_pid_alive(pid))
		bpf_map_delete_elem(t->targ_tgids_fd, &key);
	return 0;
}

/* Drops tgids that exited without the exit hook seeing them; true while any is left. */
static bool targets_alive(struct tracer *t)
{
	__u32 key, next, *prev = NULL;
	bool any = false;

	while (bpf_map_get_next_key(t->targ_tgids_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (target_pid_alive((pid_t)key))
			any = true;
		else
			bpf_map_delete_elem(t->targ_tgids_fd, &key);
	}
	return any;
}

static int attach_pids(struct tracer *t, const struct trace_opts *o)
{
	int *all = NULL, err;
	size_t n = 0;

	/* Twice: a child forked by a not-yet-added parent during the first walk is caught. */
	for (int pass = 0; pass < 2; pass++) {
		err = target_descendants(o->pids, o->npids, &all, &n);
		if (err)
			return err;
		for (size_t i = 0; i < n && !err; i++)
			err = add_target(t, all[i]);
		free(all);
		if (err == -E2BIG || err == -ENOSPC) {
			elog("more than %u processes to attach to: raise --max-targets", o->max_targets);
			return err;
		}
		if (err)
			return err;
		dlog("pass %d: %zu processes in the target tree", pass, n);
	}
	return 0;
}

static void *ksyms_loader(void *arg)
{
	struct tracer *t = arg;

	struct sp_fold_cfg cfg;

	t->ctx.ksyms = ksyms__load(NULL);
	t->ksyms_err = t->ctx.ksyms ? 0 : -errno;
	if (t->fold_cached || !t->ctx.ksyms || ksyms__restricted(t->ctx.ksyms))
		return NULL;
	t->ctx.fold_err = fold_cfg_build(t->ctx.ksyms, &cfg);
	if (t->ctx.fold_err)
		return NULL;
	t->ctx.fold_cfg = cfg;
	if (fold_cfg_cache_store(NULL, &cfg))
		dlog("cannot cache the fold configuration in /run/schedprof");
	return NULL;
}

static int ksyms_join(struct tracer *t)
{
	if (!t->ksyms_started)
		return -ESRCH;
	pthread_join(t->ksyms_thread, NULL);
	t->ksyms_started = false;
	if (t->ksyms_err) {
		elog("cannot read /proc/kallsyms: %s", strerror(-t->ksyms_err));
		return t->ksyms_err;
	}
	if (ksyms__restricted(t->ctx.ksyms)) {
		elog("kernel addresses are hidden in /proc/kallsyms (kernel.kptr_restrict): run as root");
		return -EPERM;
	}
	if (t->ctx.fold_err) {
		elog("kernel symbols __sched_text_start/__sched_text_end not found in /proc/kallsyms");
		return t->ctx.fold_err;
	}
	return 0;
}

static void tracer_destroy(struct tracer *t)
{
	if (t->ksyms_started)
		pthread_join(t->ksyms_thread, NULL);
	bpf_link__destroy(t->fork_link);
	bpf_link__destroy(t->exit_link);
	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++)
		if (t->state[i])
			collectors[i]->destroy(t->state[i]);
	schedprof_bpf__destroy(t->skel);
	ksyms__free(t->ctx.ksyms);
}

static double ms_since(uint64_t t0)
{
	return (now_ns(CLOCK_MONOTONIC) - t0) / 1e6;
}

static int tracer_prepare(struct tracer *t, const struct trace_opts *o)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	int err;

	t->ctx.opts = o;
	t->ctx.ncpus = libbpf_num_possible_cpus();
	t->fold_cached = fold_cfg_cache_load(NULL, &t->ctx.fold_cfg) == 0;
	err = pthread_create(&t->ksyms_thread, NULL, ksyms_loader, t);
	if (err)
		return -err;
	t->ksyms_started = true;
	t->skel = schedprof_bpf__open();
	if (!t->skel)
		return -errno;
	t->ctx.skel = t->skel;
	t->skel->rodata->targ_all = o->mode == SP_TARGET_ALL;
	bpf_map__set_max_entries(t->skel->maps.targ_tgids, o->max_targets);
	if (o->mode == SP_TARGET_ALL) {
		bpf_program__set_autoload(t->skel->progs.sp_fork, false);
		bpf_program__set_autoload(t->skel->progs.sp_exit, false);
	}
	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++) {
		if (!(o->views & collectors[i]->view)) {
			collectors[i]->disable(t->skel);
			continue;
		}
		err = collectors[i]->configure(&t->ctx, &t->state[i]);
		if (err)
			return err;
	}
	dlog("opened and configured in %.1f ms", ms_since(t0));
	err = schedprof_bpf__load(t->skel);
	dlog("loaded at %.1f ms", ms_since(t0));
	if (err) {
		elog("cannot load the BPF programs: %s%s", strerror(-err),
		     log_get_level() < LOG_LIBBPF ? " (-VV shows the verifier's log)" : "");
		return err;
	}
	t->targ_tgids_fd = bpf_map__fd(t->skel->maps.targ_tgids);
	/* kallsyms itself is needed only to symbolize the report: join later if we can */
	if (!t->fold_cached) {
		err = ksyms_join(t);
		if (err)
			return err;
		dlog("kallsyms in at %.1f ms", ms_since(t0));
	}
	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++) {
		if (!t->state[i])
			continue;
		err = collectors[i]->setup(t->state[i], &t->ctx);
		dlog("%s view set up at %.1f ms", collectors[i]->name, ms_since(t0));
		if (err) {
			elog("cannot set up the %s view: %s", collectors[i]->name, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int tracer_attach(struct tracer *t)
{
	int err = 0;

	if (t->ctx.opts->mode != SP_TARGET_ALL) {
		t->fork_link = bpf_program__attach(t->skel->progs.sp_fork);
		t->exit_link = bpf_program__attach(t->skel->progs.sp_exit);
		if (!t->fork_link || !t->exit_link)
			err = -errno;
	}
	for (size_t i = 0; !err && i < ARRAY_SIZE(collectors); i++)
		if (t->state[i])
			err = collectors[i]->attach(t->state[i], &t->ctx);
	if (err)
		elog("cannot attach the BPF programs: %s", strerror(-err));
	return err;
}

static void tracer_detach(struct tracer *t)
{
	/* Links go first so the maps stop changing; the maps stay until destroy. */
	bpf_link__destroy(t->fork_link);
	bpf_link__destroy(t->exit_link);
	t->fork_link = t->exit_link = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++)
		if (t->state[i])
			collectors[i]->detach(t->state[i]);
}

static void reap(struct tracer *t, int options)
{
	pid_t r;

	if (!t->launched || t->reaped)
		return;
	do {
		r = wait4(t->launch.pid, &t->status, options, &t->ru);
	} while (r < 0 && errno == EINTR);
	if (r == t->launch.pid)
		t->reaped = true;
}

/*
 * Sleeps up to ms, or less when a collector's poll fd becomes readable, and lets those
 * collectors do their work (it is time-critical: the processes they look at may be short-lived).
 */
static void poll_collectors(struct tracer *t, int ms)
{
	struct pollfd fds[ARRAY_SIZE(collectors)];
	size_t idx[ARRAY_SIZE(collectors)];
	nfds_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++) {
		int fd;

		if (!t->state[i] || !collectors[i]->poll_fd)
			continue;
		fd = collectors[i]->poll_fd(t->state[i]);
		if (fd < 0)
			continue;
		fds[n].fd = fd;
		fds[n].events = POLLIN;
		fds[n].revents = 0;
		idx[n++] = i;
	}
	if (poll(fds, n, ms) <= 0)
		return;
	for (nfds_t k = 0; k < n; k++) {
		size_t i = idx[k];
		int err;

		if (!fds[k].revents)
			continue;
		err = collectors[i]->poll(t->state[i], &t->ctx);
		if (err)
			dlog("%s: %s", collectors[i]->name, strerror(-err));
	}
}

/* Waits, 50 ms at a time, for the end: target gone, -d, or a signal. */
static void wait_for_end(struct tracer *t, const struct trace_opts *o, uint64_t t0)
{
	uint64_t last_gc = t0;

	for (;;) {
		uint64_t now;

		if (stop_signal)
			break;
		if (o->mode == SP_TARGET_COMMAND) {
			reap(t, WNOHANG);
			if (t->reaped)
				break;
		}
		now = now_ns(CLOCK_MONOTONIC);
		if (o->duration_ns && now - t0 >= o->duration_ns)
			break;
		if (o->mode == SP_TARGET_PIDS && now - last_gc >= 200 * 1000 * 1000ULL) {
			last_gc = now;
			if (!targets_alive(t))
				break;
		}
		poll_collectors(t, 50);
	}
	if (stop_signal && o->mode == SP_TARGET_COMMAND && !t->reaped) {
		/* A signal sent to us alone: pass it on and give the job a moment to end. */
		kill(t->launch.pid, stop_signal);
		for (int i = 0; i < 40 && !t->reaped; i++) {
			struct timespec ts = { 0, 50 * 1000 * 1000 };

			reap(t, WNOHANG);
			if (!t->reaped)
				nanosleep(&ts, NULL);
		}
	}
}

static void fill_run_info(struct sp_run *run, const struct trace_opts *o, const struct tracer *t)
{
	struct utsname u;
	char host[256] = "";

	run->schema = xstrdup(SP_SCHEMA);
	run->version = xstrdup(SCHEDPROF_VERSION);
	if (uname(&u) == 0)
		run->kernel = xstrdup(u.release);
	gethostname(host, sizeof(host) - 1);
	run->hostname = xstrdup(host);
	run->ncpus = t->ctx.ncpus;
	run->options = xstrdup(o->cmdline);
	run->target.mode = o->mode;
	if (o->mode == SP_TARGET_COMMAND) {
		int argc = 0;

		while (o->argv[argc])
			argc++;
		run->target.command = join_args(argc, o->argv);
		if (t->reaped) {
			run->target.has_rusage = true;
			run->target.user_ns = (uint64_t)t->ru.ru_utime.tv_sec * NSEC_PER_SEC +
					      (uint64_t)t->ru.ru_utime.tv_usec * 1000;
			run->target.sys_ns = (uint64_t)t->ru.ru_stime.tv_sec * NSEC_PER_SEC +
					     (uint64_t)t->ru.ru_stime.tv_usec * 1000;
			run->target.exit_status = WIFEXITED(t->status) ? WEXITSTATUS(t->status)
								       : 128 + WTERMSIG(t->status);
		} else {
			run->target.exit_status = -1;
		}
	} else if (o->mode == SP_TARGET_PIDS) {
		run->target.pids = calloc(o->npids, sizeof(int));
		if (run->target.pids) {
			memcpy(run->target.pids, o->pids, o->npids * sizeof(int));
			run->target.npids = o->npids;
		}
	}
}

/* Renders the run to path (NULL: stdout). */
static int write_report(const struct sp_run *run, const struct render_opts *ro, const char *path)
{
	FILE *f = stdout;
	int err;

	if (path) {
		f = fopen(path, "w");
		if (!f) {
			err = -errno;
			elog("cannot write %s: %s", path, strerror(-err));
			return err;
		}
	}
	err = render_run(run, ro, f);
	if (fflush(f) && !err)
		err = -errno;
	if (f != stdout && fclose(f) && !err)
		err = -errno;
	if (err)
		elog("cannot write the report%s%s: %s", path ? " to " : "", path ? path : "",
		     strerror(-err));
	return err;
}

/* The report, then with --save the run as JSON, as -f json writes it. */
static int write_outputs(const struct sp_run *run, const struct trace_opts *o)
{
	struct render_opts json = o->render;
	int err = write_report(run, &o->render, o->output);

	json.format = SP_FMT_JSON;
	if (!err && o->save)
		err = write_report(run, &json, o->save);
	return err;
}

static int check_environment(void)
{
	if (!have_bpf_caps()) {
		elog("tracing needs root, or the CAP_BPF and CAP_PERFMON capabilities: run it with sudo");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		elog("this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): schedprof needs a "
		     "kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return -ENOTSUP;
	}
	return 0;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static int run_trace(const struct trace_opts *o)
{
	struct tracer t = { .launch = { .pid = -1, .gate_fd = -1, .error_fd = -1 } };
	struct sp_run run;
	uint64_t t0, wall0, begin = now_ns(CLOCK_MONOTONIC);
	int err, exit_code = EXIT_FAILURE;

	sp_run_init(&run);
	if (check_environment())
		return EXIT_FAILURE;
	for (size_t i = 0; i < o->npids; i++) {
		if (!target_pid_alive(o->pids[i])) {
			elog("no such process: %d", o->pids[i]);
			return EXIT_FAILURE;
		}
	}
	libbpf_set_print(libbpf_print);
	install_signals();
	err = tracer_prepare(&t, o);
	if (err)
		goto out;
	if (o->mode == SP_TARGET_COMMAND) {
		err = target_launch__start(o->argv, &t.launch);
		if (err) {
			elog("cannot start %s: %s", o->argv[0], strerror(-err));
			goto out;
		}
		t.launched = true;
		err = add_target(&t, t.launch.pid);
	} else if (o->mode == SP_TARGET_PIDS) {
		err = tracer_attach(&t);
		if (!err)
			err = attach_pids(&t, o);
	}
	if (err)
		goto out;
	if (o->mode != SP_TARGET_PIDS && (err = tracer_attach(&t)))
		goto out;
	t0 = now_ns(CLOCK_MONOTONIC);
	wall0 = now_ns(CLOCK_REALTIME);
	if (o->mode == SP_TARGET_COMMAND) {
		err = target_launch__release(&t.launch);
		if (err) {
			elog("cannot execute %s: %s", o->argv[0], strerror(-err));
			reap(&t, 0);
			exit_code = EXIT_NOEXEC;
			goto out;
		}
	}
	ilog("attached in %.1f ms", (t0 - begin) / 1e6);
	wait_for_end(&t, o, t0);
	tracer_detach(&t);
	if (t.ksyms_started && (err = ksyms_join(&t)))
		goto out;
	run.elapsed_ns = now_ns(CLOCK_MONOTONIC) - t0;
	run.start_unix_ns = wall0;
	fill_run_info(&run, o, &t);
	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++) {
		if (!t.state[i])
			continue;
		err = collectors[i]->read(t.state[i], &t.ctx, &run);
		if (err) {
			elog("cannot read the %s view: %s", collectors[i]->name, strerror(-err));
			break;
		}
	}
	/* Names as the saved JSON holds them, so that trace -f X and report -f X agree. */
	if (sp_run_fix_utf8(&run))
		wlog("out of memory: some names keep their invalid UTF-8");
	/* Whatever was read is reported, even after a read error. */
	if (write_outputs(&run, o) == 0 && !err)
		exit_code = EXIT_SUCCESS;
	if (o->mode == SP_TARGET_COMMAND && t.reaped && exit_code == EXIT_SUCCESS)
		exit_code = run.target.exit_status;
	else if (o->mode == SP_TARGET_COMMAND && !t.reaped && exit_code == EXIT_SUCCESS)
		exit_code = 128 + (stop_signal ? stop_signal : SIGTERM);
out:
	if (t.launched && !t.reaped && exit_code != EXIT_NOEXEC && err)
		target_launch__abort(&t.launch);
	tracer_destroy(&t);
	sp_run_free(&run);
	return exit_code;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_opts o;
	int err, code;

	err = trace_parse(argc, argv, &o);
	if (err) {
		free(o.pids);
		free(o.cmdline);
		return err < 0 ? EXIT_SUCCESS : err;
	}
	code = run_trace(&o);
	free(o.pids);
	free(o.cmdline);
	return code;
}
