// SPDX-License-Identifier: BSD-2-Clause
/*
 * While the trace runs: the stop signals, the collectors' polls, the intervals (-i), the wait
 * for the end, and the launched command's fate after it (passed the signal on, left running
 * after -d, or ended with --kill-on-end).
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

volatile sig_atomic_t stop_signal, stop_by_tty, stop_count;
static void on_signal(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	if (!stop_signal) {
		stop_signal = sig;
		stop_by_tty = si && si->si_code == SI_KERNEL;
	}
	stop_count++;
}

void install_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void tracer_reap(struct tracer *t, int options)
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
	struct pollfd fds[TRACE_MAX_COLLECTORS + 1];
	size_t idx[TRACE_MAX_COLLECTORS + 1];
	nfds_t n = 0;

	for (size_t i = 0; i < ncollectors; i++) {
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
	/* the hooks' fd (top's terminal) ends the sleep too: its tick reads it */
	if (t->hooks && t->hooks->fd >= 0) {
		fds[n].fd = t->hooks->fd;
		fds[n].events = POLLIN;
		fds[n].revents = 0;
		idx[n++] = SIZE_MAX;
	}
	if (poll(fds, n, ms) <= 0)
		return;
	for (nfds_t k = 0; k < n; k++) {
		size_t i = idx[k];
		int err;

		if (!fds[k].revents || i == SIZE_MAX)
			continue;
		err = collectors[i]->poll(t->state[i], &t->ctx);
		if (err)
			dlog("%s: %s", collectors[i]->view->name, strerror(-err));
	}
}

/*
 * The interval that ends at now (ns since the start) from the cumulative run cur: cur minus
 * the run at the last interval's end (run_delta.h), handed to the hooks; cur becomes the
 * start of the next. 0 or -errno.
 */
int tracer_interval_of(struct tracer *t, const struct trace_config *o, struct sp_run *cur,
			      uint64_t now, bool last)
{
	struct sp_delta_stats st;
	struct sp_run iv;
	int err;

	sp_run_init(&iv);
	err = sp_run_delta(t->iv_index ? &t->iv_prev : NULL, cur, &iv, &st);
	if (err) {
		elog("cannot compute interval %llu: %s", (unsigned long long)t->iv_index + 1,
		     strerror(-err));
		sp_run_free(&iv);
		return err;
	}
	t->iv_stats.negative += st.negative;
	t->iv_stats.vanished += st.vanished;
	if (st.negative || st.vanished)
		dlog("interval %llu: %llu values smaller than at its start, %llu rows renamed",
		     (unsigned long long)t->iv_index + 1, (unsigned long long)st.negative,
		     (unsigned long long)st.vanished);
	sp_lock_sort(&iv.locks, o->lock_sort);
	iv.interval.present = true;
	iv.interval.index = ++t->iv_index;
	iv.interval.start_ns = t->iv_end;
	iv.interval.end_ns = now;
	iv.start_unix_ns = t->wall0 + t->iv_end;
	iv.elapsed_ns = now - t->iv_end;
	iv.target.has_rusage = false; /* the command's CPU time is the whole run's */
	t->iv_end = now;
	err = t->hooks->interval(t->hooks->ctx, &iv, cur, last, t->out);
	sp_run_free(&iv);
	if (last)
		return err;
	sp_run_free(&t->iv_prev);
	t->iv_prev = *cur; /* moved: the caller's cur is the next interval's start */
	sp_run_init(cur);
	return err;
}

/* -i: reads every view into a fresh cumulative run while attached, and hands its interval on. */
static int tracer_interval(struct tracer *t, const struct trace_config *o)
{
	int level = log_get_level(), err;
	struct sp_run cur;
	uint64_t now;

	/* symbols are needed now, not only for the report */
	if (t->ksyms_started && (err = ksyms_join(t)))
		return err;
	sp_run_init(&cur);
	now = now_ns(CLOCK_MONOTONIC) - t->t0;
	cur.elapsed_ns = now;
	cur.start_unix_ns = t->wall0;
	fill_run_info(&cur, o, t);
	/* the reads' warnings (losses so far) are said once, by the final read */
	if (level < LOG_DEBUG)
		log_set_level(LOG_ERROR);
	t->ctx.interval = true;
	err = tracer_read(t, &cur);
	t->ctx.interval = false;
	log_set_level(level);
	if (!err && sp_run_fix_utf8(&cur))
		err = -ENOMEM;
	dlog("interval %llu: read in %.1f ms", (unsigned long long)t->iv_index + 1,
	     ms_since(t->t0 + now));
	err = err ?: tracer_interval_of(t, o, &cur, now, false);
	sp_run_free(&cur);
	return err;
}

/* Waits, 50 ms at a time, for the end: target gone, -d, a signal, or the hooks' quit. */
enum trace_end wait_for_end(struct tracer *t, const struct trace_config *o, uint64_t t0)
{
	uint64_t last_gc = t0, next_iv = t0 + o->interval_ns;

	for (;;) {
		uint64_t now;

		if (stop_count)
			return END_SIGNAL;
		if (t->hooks && t->hooks->tick && t->hooks->tick(t->hooks->ctx))
			return END_QUIT;
		if (t->iv_err)
			return END_QUIT;
		if (o->argv) {
			tracer_reap(t, WNOHANG);
			if (t->reaped)
				return END_TARGET;
		}
		now = now_ns(CLOCK_MONOTONIC);
		if (o->duration_ns && now - t0 >= o->duration_ns)
			return END_DURATION;
		/* -- COMMAND: only the retired tgids go (the end is the command's) */
		if (now - last_gc >= 200 * 1000 * 1000ULL && o->mode == SP_TARGET_TIDS) {
			last_gc = now;
			if (!tids_alive(t, o))
				return END_TARGET;
		}
		if (now - last_gc >= 200 * 1000 * 1000ULL &&
		    (o->mode == SP_TARGET_PIDS || o->mode == SP_TARGET_COMMAND)) {
			last_gc = now;
			/* -p -- COMMAND: the command's end is the trace's, not the PIDs' */
			if (!targets_gc(t, o->mode == SP_TARGET_PIDS) && o->mode == SP_TARGET_PIDS &&
			    !o->argv)
				return END_TARGET;
		}
		/*
		 * -i: the next interval is due (after the end's checks: -d's end is no interval
		 * of its own; a late one does not shift the ones after it)
		 */
		if (o->interval_ns && now >= next_iv) {
			t->iv_err = tracer_interval(t, o);
			while (next_iv <= now_ns(CLOCK_MONOTONIC))
				next_iv += o->interval_ns;
			continue;
		}
		/* woken up for the next interval, not up to 50 ms after it */
		poll_collectors(t, o->interval_ns && next_iv - now < 50 * 1000000ULL ?
				   (int)((next_iv - now) / 1000000) + 1 : 50);
	}
}

/* Polls the collectors for up to ms, or until the command is reaped or another signal comes. */
static void wait_command(struct tracer *t, int ms, int count)
{
	for (int i = 0; i < ms / 50 && !t->reaped && stop_count == count; i++) {
		poll_collectors(t, 50);
		tracer_reap(t, WNOHANG);
	}
}

static const char *again_hint(void)
{
	switch (stop_signal) {
	case SIGINT:
		return "Ctrl-C";
	case SIGHUP:
		return "SIGHUP";
	default:
		return "SIGTERM";
	}
}

/* The terminal's Ctrl-C went to its whole foreground process group: the command has it too. */
static bool command_got_it(pid_t pid)
{
	return stop_signal == SIGINT && stop_by_tty && getpgid(pid) == getpgrp();
}

/*
 * A stop signal with -- COMMAND: pass it on (not a second time) and keep tracing until the
 * command exits; each further signal escalates (SIGTERM, then SIGKILL).
 */
static void stop_command(struct tracer *t, const struct trace_config *o)
{
	const char *cmd = o->argv[0];
	pid_t pid = t->launch.pid;
	int level = 0;

	while (!t->reaped) {
		int count = stop_count;

		if (level < count && level < 3) {
			level++;
			if (level == 1 && !command_got_it(pid))
				kill(pid, stop_signal);
			else if (level == 2)
				kill(pid, SIGTERM);
			else if (level == 3)
				kill(pid, SIGKILL);
			wait_command(t, 300, count);
			if (t->reaped || stop_count != count)
				continue;
			if (level == 1)
				notice("waiting for %s (pid %d) to exit; %s again to terminate it", cmd,
				       (int)pid, again_hint());
			else if (level == 2)
				notice("sent SIGTERM to %s (pid %d); %s again to kill it", cmd, (int)pid,
				       again_hint());
		}
		wait_command(t, 1000, count);
	}
}

/* -d with --kill-on-end: SIGTERM, then SIGKILL after 2 s (or at once on a stop signal). */
static void end_command(struct tracer *t, const struct trace_config *o)
{
	int count = stop_count;

	kill(t->launch.pid, SIGTERM);
	for (int i = 0; i < 40 && !t->reaped && stop_count == count; i++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		tracer_reap(t, WNOHANG);
		if (!t->reaped)
			nanosleep(&ts, NULL);
	}
	if (t->reaped)
		return;
	notice("%s (pid %d) did not end on SIGTERM: killing it", o->argv[0], (int)t->launch.pid);
	kill(t->launch.pid, SIGKILL);
	tracer_reap(t, 0);
}

/* After the end, the command's fate: waited for (signal), left running or ended (-d). */
void settle_command(struct tracer *t, const struct trace_config *o, enum trace_end end)
{
	if (!o->argv || t->reaped)
		return;
	if (end == END_SIGNAL) {
		stop_command(t, o);
	} else if ((end == END_DURATION && o->kill_on_end) || end == END_QUIT) {
		tracer_detach(t); /* -d is the trace's length: the command's end is not in it */
		end_command(t, o);
		t->ended_at_end = true;
	} else if (end == END_DURATION) {
		t->left_running = true;
		notice("%s (pid %d) is still running: -d ended the trace, not the command "
		       "(--kill-on-end ends it)", o->argv[0], (int)t->launch.pid);
	}
}

/* The reaped command's exit status, as a shell gives it (128 + signal when killed). */
int command_status(const struct tracer *t)
{
	return WIFEXITED(t->status) ? WEXITSTATUS(t->status) : 128 + WTERMSIG(t->status);
}
