// SPDX-License-Identifier: BSD-2-Clause
/*
 * The serial-tail job of the timeline test (tests/integration/test_timeline.sh): a parent
 * ("sp_tail_main") forks two workers that burn the CPU from the same moment, "sp_par" for
 * SECONDS and "sp_tail" until SECONDS after sp_par has ended, and waits for both. Its
 * critical path is about 2 x SECONDS (the tail's run, then the parent's wake-up), with one
 * serial phase of about SECONDS: sp_tail alone, while a CPU is idle.
 *
 * sp_tail's second SECONDS count from sp_par's end as sp_tail sees it (the end of a pipe
 * that only sp_par holds open for writing), not from when sp_par should have ended: a
 * worker that waited for a CPU ends late (an emulated CPU on a loaded host: sp_par 123 ms
 * late, and the parent's wait for sp_tail after it 896 ms), and the serial phase and that
 * wait would be cut by as much.
 *
 *   serialtail [SECONDS]   default 1
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Burns the CPU until the monotonic clock reaches end (wall time: the phases keep their length
 * on a loaded machine). */
static void burn_until(double end)
{
	volatile unsigned long x = 0;

	while (now() < end)
		for (int i = 0; i < 10000; i++)
			x += (unsigned long)i;
}

/* Whether the pipe's write end is closed everywhere (its one writer, sp_par, has ended). */
static int ended(int rfd)
{
	struct pollfd p = { .fd = rfd, .events = POLLIN };
	char c;

	return poll(&p, 1, 0) == 1 && read(rfd, &c, 1) == 0;
}

/* sp_tail: burns until secs after sp_par's end, which closes the pipe (rfd). */
static void burn_tail(double start, double secs, int rfd)
{
	volatile unsigned long x = 0;
	double end;

	burn_until(start + secs);
	while (!ended(rfd))
		for (int i = 0; i < 10000; i++)
			x += (unsigned long)i;
	end = now() + secs;
	burn_until(end);
}

/* A worker: sp_par keeps wfd (the pipe's write end) and burns secs; sp_tail keeps rfd. */
static pid_t worker(const char *name, double start, double secs, int keep, int drop)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid)
		return pid;
	close(drop);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	while (now() < start) /* both start together */
		;
	if (keep < 0)
		burn_until(start + secs);
	else
		burn_tail(start, secs, keep);
	_exit(0);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, t0;
	int status, failed = 0, fds[2];

	if (secs <= 0 || secs > 60) {
		fprintf(stderr, "usage: serialtail [SECONDS]\n");
		return 2;
	}
	prctl(PR_SET_NAME, "sp_tail_main", 0, 0, 0);
	if (pipe(fds)) {
		perror("pipe");
		return 2;
	}
	t0 = now() + 0.02;
	worker("sp_par", t0, secs, -1, fds[0]);
	close(fds[1]); /* sp_par's alone now: its end is the pipe's */
	worker("sp_tail", t0, secs, fds[0], -1);
	close(fds[0]);
	for (int i = 0; i < 2; i++)
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	return failed;
}
