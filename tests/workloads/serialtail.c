// SPDX-License-Identifier: BSD-2-Clause
/*
 * The serial-tail job of the timeline test (tests/integration/test_timeline.sh): a parent
 * ("sp_tail_main") forks two workers that burn the CPU from the same moment, "sp_par" for
 * SECONDS and "sp_tail" for twice as long, and waits for both. Its critical path is about
 * 2 x SECONDS (the tail's run, then the parent's wake-up), with one serial phase of about
 * SECONDS: sp_tail alone, while a CPU is idle.
 *
 *   serialtail [SECONDS]   default 1
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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

static pid_t worker(const char *name, double start, double end)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid)
		return pid;
	prctl(PR_SET_NAME, name, 0, 0, 0);
	while (now() < start) /* both start together */
		;
	burn_until(end);
	_exit(0);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, t0;
	int status, failed = 0;

	if (secs <= 0 || secs > 60) {
		fprintf(stderr, "usage: serialtail [SECONDS]\n");
		return 2;
	}
	prctl(PR_SET_NAME, "sp_tail_main", 0, 0, 0);
	t0 = now() + 0.02;
	worker("sp_par", t0, t0 + secs);
	worker("sp_tail", t0, t0 + 2 * secs);
	for (int i = 0; i < 2; i++)
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	return failed;
}
