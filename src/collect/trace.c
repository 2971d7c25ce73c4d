// SPDX-License-Identifier: BSD-2-Clause
/*
 * The trace engine's run: load and attach the collectors of the selected views
 * (trace_load.c), follow the target until it ends (or -d, SIGINT, SIGTERM, SIGHUP:
 * trace_wait.c), then detach, read, and hand the run to the caller's sink. Every exit path
 * after attach still hands over the run collected so far.
 *
 * The launched command (-- COMMAND) lives as long as the trace: a stop signal is passed on to
 * it and the trace waits for its end (a second signal sends SIGTERM, a third SIGKILL); it dies
 * with schedprof, even by kill -9 (PR_SET_PDEATHSIG), except after -d without --kill-on-end,
 * where it is left running on purpose.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
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
#include "base/testhook.h"
#include "base/exitcode.h"
#include "loader/attach_ids.h"
#include "loader/cache.h"
#include "collect/collector.h"
#include "loader/corebtf.h"
#include "loader/foldcfg.h"
#include "loader/featprobe.h"
#include "loader/prog_budget.h"
#include "loader/kfeatures.h"
#include "symbols/ksyms.h"
#include "base/log.h"
#include "loader/maps.h"
#include "collect/preflight.h"
#include "loader/refusal.h"
#include "model/run_delta.h"
#include "model/view.h"
#include "collect/target.h"
#include "collect/trace.h"
#include "collect/tracer.h"
#include "base/util.h"
#include "schedprof/schedprof.h"
#include "schedprof.skel.h"

/* For tests: milliseconds to hold the command before its exec (the lifecycle test kills then). */
#define HOLD_ENV "SCHEDPROF_TEST_HOLD_MS"

void tracer_destroy(struct tracer *t)
{
	if (t->ksyms_started)
		pthread_join(t->ksyms_thread, NULL);
	bpf_link__destroy(t->fork_link);
	bpf_link__destroy(t->exit_link);
	bpf_link__destroy(t->exec_link);
	bpf_link__destroy(t->switch_link);
	for (size_t i = 0; i < ncollectors; i++)
		if (t->state[i])
			collectors[i]->destroy(t->state[i]);
	bpf_link__destroy(t->free_link);
	schedprof_bpf__destroy(t->skel);
	core_btf_close(&t->core_btf);
	ksyms__free(t->ctx.ksyms);
	target_user_free(&t->user);
}

static uint64_t timeval_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * NSEC_PER_SEC + (uint64_t)tv->tv_usec * 1000;
}

/* With --: the command line, and its exit status and CPU time once reaped. */
static void fill_command_info(struct sp_target_info *ti, const struct trace_config *o,
			      const struct tracer *t)
{
	int argc = 0;

	while (o->argv[argc])
		argc++;
	ti->command = join_args(argc, o->argv);
	ti->exit_status = -1;
	if (!t->reaped)
		return;
	ti->has_rusage = true;
	ti->still_running = t->still_running;
	ti->user_ns = timeval_ns(&t->ru.ru_utime);
	ti->sys_ns = timeval_ns(&t->ru.ru_stime);
	ti->exit_status = command_status(t);
}

void fill_run_info(struct sp_run *run, const struct trace_config *o, const struct tracer *t)
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
		run->target.system = o->all;
		fill_command_info(&run->target, o, t);
	} else if (o->mode == SP_TARGET_CGROUP) {
		run->target.cgroup = xstrdup(t->cgroup.path);
	} else if (o->mode == SP_TARGET_PIDS || o->mode == SP_TARGET_TIDS) {
		run->target.pids = calloc(o->npids, sizeof(int));
		if (run->target.pids) {
			memcpy(run->target.pids, o->pids, o->npids * sizeof(int));
			run->target.npids = o->npids;
		}
	}
}

static int check_environment(void)
{
	if (preflight_caps())
		return -EPERM;
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		elog("this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): schedprof needs a "
		     "kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return -ENOTSUP;
	}
	return 0;
}

/* Starts the command (held before exec), adds the PIDs or threads, and attaches. 0 or -errno. */
static int tracer_start(struct tracer *t, const struct trace_config *o)
{
	int err = 0;

	if (o->argv) {
		err = target_user_resolve(o->user, o->as_root, &t->user);
		if (err == -ENOENT) {
			elog("no such user: %s", t->user.name);
			return err;
		} else if (err) {
			elog("cannot find whom to run %s as: %s", o->argv[0], strerror(-err));
			return err;
		}
		if (t->user.set)
			dlog("running %s as %s (uid %u, gid %u)", o->argv[0], t->user.name,
			     (unsigned int)t->user.uid, (unsigned int)t->user.gid);
		/* after -d without --kill-on-end the command outlives us: no PDEATHSIG then */
		err = target_launch__start(o->argv, !o->duration_ns || o->kill_on_end, &t->user,
					   &t->launch);
		if (err) {
			elog("cannot start %s: %s", o->argv[0], strerror(-err));
			return err;
		}
		t->launched = true;
		/* traced from its exec on: its wait at the gate is ours (sp_exec) */
		if (o->mode == SP_TARGET_COMMAND) {
			t->skel->bss->targ_exec_pid = t->launch.pid;
			t->ctx.job_tid = t->launch.pid; /* its end is the job's (timeline) */
		}
	}
	/* -p -- COMMAND: the command is held until the PIDs are attached, and not traced */
	if (o->mode == SP_TARGET_PIDS) {
		err = tracer_attach(t);
		if (!err)
			err = attach_pids(t, o);
		if (!err)
			err = check_pids_attached(t, o);
	} else if (o->mode == SP_TARGET_TIDS) {
		err = add_tids(t, o);
		if (!err)
			err = tracer_attach(t);
		if (!err)
			err = check_tids_attached(t, o);
	}
	if (err)
		return err;
	return o->mode != SP_TARGET_PIDS && o->mode != SP_TARGET_TIDS ? tracer_attach(t) : 0;
}

/* With --, lets the command exec now that everything is attached. 0 or -errno. */
static int tracer_release(struct tracer *t, const struct trace_config *o)
{
	int err;

	if (!o->argv)
		return 0;
	err = target_launch__release(&t->launch);
	if (err) {
		elog("cannot execute %s: %s", o->argv[0], strerror(-err));
		tracer_reap(t, 0);
	}
	return err;
}

int tracer_read(struct tracer *t, struct sp_run *run)
{
	for (size_t i = 0; i < ncollectors; i++) {
		int err;

		if (!t->state[i])
			continue;
		err = collectors[i]->read(t->state[i], &t->ctx, run);
		if (err) {
			elog("cannot read the %s view: %s", collectors[i]->view->name, strerror(-err));
			return err;
		}
	}
	return 0;
}

void trace_loss_add(struct trace_losses *l, uint64_t n, const char *what)
{
	if (n && l->len < sizeof(l->buf))
		l->len += snprintf(l->buf + l->len, sizeof(l->buf) - l->len, "%s%llu %s",
				   l->len ? ", " : "", (unsigned long long)n, what);
}

/* What a full per-task hash (bpf/common.bpf.h task_hash) lost, for --strict's line. */
#define TASK_STATE_LOSS "tasks' states not kept (the per-task hash was full)"
/* What the traced set (bpf/target.bpf.c) could not hold, for --strict's line. */
#define TARGET_MAP_LOSS "new processes not in the traced set's map (--max-targets was full)"
#define TARGET_MARK_LOSS "new tasks not marked as traced (no task storage)"

/*
 * The losses no view owns: the per-task hashes' (each view counts what it could not time
 * for want of the state, e.g. the schedules view's "sleeps have no off-CPU time") and the
 * traced set's. Said after the views' own; with --strict, the run's one closing line says
 * them instead.
 */
static void tracer_losses(const struct tracer *t, const struct trace_config *o)
{
	const struct sp_target_stats *ts = &t->skel->bss->target_stats;
	uint64_t n = t->skel->bss->task_state_full;

	if (o->strict)
		return;
	if (n)
		wlog("the per-task hash (%u tasks, used instead of task storage on this kernel) was "
		     "full %llu times (or busy on that CPU): those tasks' state was not kept",
		     bpf_map__max_entries(t->skel->maps.traced_hash), (unsigned long long)n);
	/*
	 * A process left out of the map is still traced by its task's mark, but the end of a -p
	 * trace (every process in the map gone) and, when a command's end ends the trace, the
	 * count of processes it left running miss it.
	 */
	if (ts->map_full)
		wlog("%llu new processes did not fit the traced set's map (--max-targets %u): %s; "
		     "raise --max-targets", (unsigned long long)ts->map_full, o->max_targets,
		     o->argv ? "the processes left running at the end may be more than counted"
			     : "the trace may have ended before they did");
	/* an unmarked task is traced while its process is in the map, not after it has left */
	if (ts->storage_fail)
		wlog("%llu new tasks could not be marked as traced (no task storage): their "
		     "switches after their process left the traced set were not counted",
		     (unsigned long long)ts->storage_fail);
}

/*
 * --strict: the losses of the run (sp_run_losses()) and those only the collectors see
 * (their losses ops). True (after one line naming them) if there are any.
 */
static bool strict_losses(const struct tracer *t, const struct sp_run *run)
{
	struct trace_losses l = { .len = 0 };
	char all[512];

	for (size_t i = 0; i < ncollectors; i++)
		if (t->state[i] && collectors[i]->losses)
			collectors[i]->losses(t->state[i], &t->ctx, run, &l);
	trace_loss_add(&l, t->skel->bss->task_state_full, TASK_STATE_LOSS);
	trace_loss_add(&l, t->skel->bss->target_stats.map_full, TARGET_MAP_LOSS);
	trace_loss_add(&l, t->skel->bss->target_stats.storage_fail, TARGET_MARK_LOSS);
	if (!sp_run_losses(run, l.buf, all, sizeof(all)))
		return false;
	elog("--strict: the run lost data: %s", all);
	return true;
}

/* The exit code once the report is out (ok: written, every view read). */
static int exit_code_of(const struct tracer *t, const struct trace_config *o, bool ok)
{
	if (!ok)
		return EXIT_FAILURE;
	if (!o->argv)
		return EXIT_SUCCESS;
	/* -d ended the trace: the command was left running, or ended as --kill-on-end asked */
	if (t->left_running || t->ended_at_end)
		return EXIT_SUCCESS;
	if (t->reaped)
		return command_status(t);
	return 128 + (stop_signal ? stop_signal : SIGTERM);
}

/*
 * After the end: detach, read every view and write the report, whatever was read even after
 * a read error. *ret_code gets the exit code once the report is out. 0 or -errno.
 */
static int tracer_report(struct tracer *t, const struct trace_config *o, struct sp_run *run,
			 uint64_t t0, uint64_t wall0, int *ret_code)
{
	int err, werr;

	tracer_detach(t);
	if (t->ksyms_started && (err = ksyms_join(t)))
		return err;
	run->elapsed_ns = now_ns(CLOCK_MONOTONIC) - t0;
	run->start_unix_ns = wall0;
	fill_run_info(run, o, t);
	err = tracer_read(t, run);
	tracer_losses(t, o);
	/* Names as the saved JSON holds them, so that trace -f X and report -f X agree. */
	if (sp_run_fix_utf8(run))
		wlog("out of memory: some names keep their invalid UTF-8");
	/* -i: the last interval, from the final read: the intervals add up to the run */
	if (!err && o->interval_ns && t->hooks && !t->iv_err)
		t->iv_err = tracer_interval_of(t, o, run, run->elapsed_ns, true);
	if (!err && t->iv_err)
		err = t->iv_err;
	if (t->iv_stats.negative || t->iv_stats.vanished)
		wlog("-i: %llu rows changed names between intervals (symbols found later) and %llu "
		     "values went down: those events show under both names, so the intervals' rows "
		     "add up to more than the run's (their totals add up exactly)",
		     (unsigned long long)t->iv_stats.vanished,
		     (unsigned long long)t->iv_stats.negative);
	werr = t->sink->write(t->sink->ctx, run, !(t->hooks && t->hooks->no_report));
	if (t->iv_err == -EPIPE)
		werr = -EPIPE; /* the reader of the intervals has gone */
	*ret_code = werr == -EPIPE ? EXIT_PIPE : exit_code_of(t, o, !werr && !err);
	if (o->strict && !err && !werr && strict_losses(t, run) && *ret_code == EXIT_SUCCESS)
		*ret_code = EXIT_LOSS;
	return err;
}

static void hold_for_tests(const struct tracer *t)
{
	const char *env = test_hook(HOLD_ENV);
	uint64_t ms;

	if (!t->launched || !env || parse_u64(env, 0, 60000, &ms))
		return;
	for (uint64_t i = 0; i < ms / 10 && !stop_count; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
}

/* The line that says what is traced: one stderr line on a terminal when only Ctrl-C ends it. */
static void say_attached(const struct tracer *t, const struct trace_config *o, uint64_t ns)
{
	char what[256];

	trace_target_describe(o, what, sizeof(what));
	if (!o->duration_ns && isatty(STDERR_FILENO) && !(t->hooks && t->hooks->screen)) {
		if (o->argv)
			notice("tracing %s (pid %d) until it exits; Ctrl-C to stop", what,
			       (int)t->launch.pid);
		else
			notice("tracing %s; Ctrl-C to stop", what);
	}
	ilog("tracing %s: attached in %.1f ms", what, ns / 1e6);
}

const char *trace_target_describe(const struct trace_config *o, char *buf, size_t len)
{
	size_t n = 0;

	switch (o->mode) {
	case SP_TARGET_COMMAND:
		snprintf(buf, len, "%scommand %s", o->all ? "the whole system while " : "", o->argv[0]);
		break;
	case SP_TARGET_PIDS:
		n = snprintf(buf, len, "%s", o->npids > 1 ? "PIDs" : "PID");
		for (size_t i = 0; i < o->npids && n < len; i++)
			n += snprintf(buf + n, len - n, "%s%d", i ? "," : " ", o->pids[i]);
		if (n < len)
			snprintf(buf + n, len - n, " and descendants%s%s%s", o->argv ? " while " : "",
				 o->argv ? o->argv[0] : "", o->argv ? " runs" : "");
		break;
	case SP_TARGET_CGROUP:
		snprintf(buf, len, "cgroup %s and its descendants%s%s%s", o->cgroup,
			 o->argv ? " while " : "", o->argv ? o->argv[0] : "", o->argv ? " runs" : "");
		break;
	case SP_TARGET_TIDS:
		n = snprintf(buf, len, "%s", o->npids > 1 ? "threads" : "thread");
		for (size_t i = 0; i < o->npids && n < len; i++)
			n += snprintf(buf + n, len - n, "%s%d", i ? "," : " ", o->pids[i]);
		break;
	default:
		snprintf(buf, len, "the whole system");
		break;
	}
	return buf;
}

/* --cgroup PATH into cg, or one line that says why not: 0 or -errno. */
static int resolve_cgroup(const char *path, struct target_cgroup *cg)
{
	int err = target_cgroup_resolve(path, cg);

	if (err == -EMEDIUMTYPE)
		elog("--cgroup %s: not a cgroup v2 directory (a path in the cgroup2 mount, or "
		     "relative to it)", path);
	else if (err == -ENOENT)
		elog("--cgroup %s: no such cgroup (a path in the cgroup2 mount, or relative to it)",
		     path);
	else if (err)
		elog("--cgroup %s: %s", path, strerror(-err));
	else
		dlog("cgroup %s: id %llu, level %u", cg->path, cg->id, cg->level);
	return err;
}

int trace_run(const struct trace_config *opts, const struct trace_sink *out,
	      const struct trace_hooks *h)
{
	struct tracer t = { .launch = { .pid = -1, .gate_fd = -1, .error_fd = -1 }, .hooks = h,
			    .sink = out, .core_btf = { .fd = -1 } };
	struct trace_config ro = *opts, *o = &ro; /* with -p resolved to processes */
	struct sp_run run;
	uint64_t t0, wall0, begin = now_ns(CLOCK_MONOTONIC);
	int err, exit_code = EXIT_FAILURE;

	sp_run_init(&run);
	ro.pids = NULL;
	if (check_environment() || (opts->mode == SP_TARGET_PIDS &&
				    resolve_pids(opts, &ro.pids, &ro.npids)))
		return EXIT_FAILURE;
	if (opts->mode == SP_TARGET_TIDS) { /* ro.pids is ours, freed below: a copy */
		ro.pids = calloc(opts->npids, sizeof(*ro.pids));
		if (!ro.pids) {
			elog("out of memory");
			return EXIT_FAILURE;
		}
		memcpy(ro.pids, opts->pids, opts->npids * sizeof(*ro.pids));
	}
	if (o->mode == SP_TARGET_CGROUP && resolve_cgroup(o->cgroup, &t.cgroup))
		return EXIT_FAILURE;
	for (size_t i = 0; o->mode == SP_TARGET_TIDS && i < o->npids; i++) {
		if (!target_tid_alive(o->pids[i])) {
			elog("no such thread: %d", o->pids[i]);
			free(ro.pids);
			return EXIT_FAILURE;
		}
	}
	/* a mistyped -o or --save fails now, not after the trace */
	if (out->open(out->ctx, &t.out)) {
		out->close(out->ctx);
		free(ro.pids);
		return EXIT_FAILURE;
	}
	libbpf_set_print(trace_libbpf_print);
	install_signals();
	err = tracer_prepare(&t, o) ?: tracer_start(&t, o);
	if (err)
		goto out;
	hold_for_tests(&t);
	if (stop_count && t.launched) {
		/* a signal during start-up: the command was never released, so it never ran */
		elog("interrupted before %s started: nothing was traced", o->argv[0]);
		exit_code = 128 + stop_signal;
		goto out;
	}
	t0 = now_ns(CLOCK_MONOTONIC);
	t.skel->bss->trace_t0 = t0; /* the schedules view's budget counts from here */
	wall0 = now_ns(CLOCK_REALTIME);
	t.ctx.start_ns = t0; /* the timeline's times count from here */
	err = tracer_release(&t, o);
	if (err) {
		exit_code = EXIT_NOEXEC;
		goto out;
	}
	t.t0 = t0; /* the intervals' times count from here */
	t.wall0 = wall0;
	say_attached(&t, o, t0 - begin);
	settle_command(&t, o, wait_for_end(&t, o, t0));
	if (t.reaped)
		t.still_running = targets_left(&t);
	if (h && h->ended)
		h->ended(h->ctx);
	err = tracer_report(&t, o, &run, t0, wall0, &exit_code);
out:
	if (t.budget)
		exit_code = err == -ECANCELED ? EXIT_SUCCESS : EXIT_FAILURE;
	if (t.launched && !t.reaped && exit_code != EXIT_NOEXEC && (err || stop_count) &&
	    !t.left_running)
		target_launch__abort(&t.launch);
	tracer_destroy(&t);
	out->close(out->ctx); /* nothing once written; a partial file otherwise */
	sp_run_free(&run);
	sp_run_free(&t.iv_prev);
	free(ro.pids);
	return exit_code;
}
