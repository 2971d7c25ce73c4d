// SPDX-License-Identifier: BSD-2-Clause
/*
 * Workloads for the run-queue, wakers and budget tests, each under known
 * process names:
 *
 *   wakework runq SECONDS CPU HOGS  HOGS CPU-bound processes ("ww_hog") and a sleeper
 *                          ("ww_sleeper") that sleeps 10 ms at a time, all pinned to CPU,
 *                          for SECONDS; the parent waits for them
 *   wakework pipe N        a producer ("ww_producer") writes N bytes into a pipe, one every
 *                          200 us, which a consumer ("ww_consumer") reads one at a time:
 *                          every read blocks, and only a write wakes it
 *   wakework wait K        a parent ("ww_parent") waits K times for a child ("ww_child")
 *                          that sleeps 3 ms and exits once wchan shows the parent asleep
 *                          in do_wait: each wait blocks there until the child's exit wakes it
 *   wakework budget        one process ("ww_budget"), three threads for as long as it runs:
 *                          two burn CPU ("ww_burn"), one sleeps 5 ms at a time ("ww_nap");
 *                          it prints its pid, then runs until killed
 *   wakework spin MS       one process ("ww_spin") burns MS ms of its own CPU time, then
 *                          exits: under a CPU quota of Q%, for about MS / Q% of wall time
 *   wakework migrate N MOVE  a reader ("ww_hopper"), started on CPU 0, blocks N times in a
 *                          pipe read, each ended by a write of its parent ("ww_mover") once
 *                          wchan shows it asleep there; with MOVE 1 the parent first moves it
 *                          to the other CPU (1, 0, 1, ...), so that every sleep ends on
 *                          another CPU than it began on; with MOVE 0 it stays on CPU 0
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "wchan.h"

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void set_name(const char *name)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	nanosleep(&ts, NULL);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static volatile unsigned long sink;

static void burn_until(double end)
{
	while (now() < end)
		for (int i = 0; i < 10000; i++)
			sink += i;
}

static int do_runq(double secs, int cpu, int hogs)
{
	double end = now() + secs;
	pid_t pids[16];
	int status, bad = 0;

	if (hogs < 0 || hogs > 15)
		return 2;
	pin(cpu);
	for (int i = 0; i <= hogs; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork");
		if (pids[i] == 0) {
			if (i < hogs) {
				set_name("ww_hog");
				burn_until(end);
			} else {
				set_name("ww_sleeper");
				while (now() < end)
					nap(10 * 1000 * 1000);
			}
			_exit(0);
		}
	}
	for (int i = 0; i <= hogs; i++)
		if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad = 1;
	return bad;
}

/*
 * A child named name (pinned to cpu, unless -1) that reads n bytes from the pipe p, one at a
 * time, then exits; p[0] is closed here, p[1] is the parent's. Returns the child's pid.
 */
static pid_t fork_reader(int p[2], long n, const char *name, int cpu)
{
	pid_t pid;
	char c;

	if (pipe(p))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		set_name(name);
		if (cpu >= 0)
			pin(cpu);
		close(p[1]);
		for (long i = 0; i < n; i++)
			if (read(p[0], &c, 1) != 1)
				_exit(3);
		_exit(0);
	}
	close(p[0]);
	return pid;
}

static int do_pipe(long n)
{
	int p[2], status;
	pid_t pid = fork_reader(p, n, "ww_consumer", -1);
	char c = 'x';

	set_name("ww_producer");
	for (long i = 0; i < n; i++) {
		nap(200 * 1000);
		if (write(p[1], &c, 1) != 1)
			die("write");
	}
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	close(p[1]);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static int do_wait(long k)
{
	set_name("ww_parent");
	for (long i = 0; i < k; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			static const char *const wait_fns[] = { "do_wait", "kernel_wait4", NULL };

			set_name("ww_child");
			nap(3 * 1000 * 1000);
			/* exit once the parent sleeps in do_wait: one wait blocks per child, however
			 * slow the CPU */
			if (nap_until_asleep(getppid(), wait_fns, 10))
				_exit(4);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid)
			die("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			return 1; /* the child never saw its parent asleep in the wait */
	}
	return 0;
}

static void *burner(void *arg)
{
	(void)arg;
	set_name("ww_burn");
	for (;;)
		burn_until(now() + 1);
	return NULL;
}

static void *napper(void *arg)
{
	(void)arg;
	set_name("ww_nap");
	for (;;)
		nap(5 * 1000 * 1000);
	return NULL;
}

static int do_budget(void)
{
	pthread_t t;

	set_name("ww_budget");
	if (pthread_create(&t, NULL, burner, NULL) || pthread_create(&t, NULL, napper, NULL))
		die("pthread_create");
	printf("%d\n", (int)getpid());
	fflush(stdout);
	burner(NULL);
	return 0;
}

static int do_spin(long ms)
{
	struct timespec ts;
	volatile unsigned long n = 0;

	set_name("ww_spin");
	for (;;) {
		for (int i = 0; i < 100000; i++)
			n++;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		if (ts.tv_sec * 1000L + ts.tv_nsec / 1000000L >= ms)
			return 0;
	}
}

static int do_migrate(long n, int move)
{
	static const char *const read_fns[] = { "pipe_read", "pipe_wait", NULL };
	int p[2], status, err = 0;
	pid_t pid = fork_reader(p, n, "ww_hopper", 0);
	cpu_set_t set;
	char c = 'x';

	set_name("ww_mover");
	for (long i = 0; i < n && !err; i++) {
		/* one sleep per write, at any CPU speed */
		if (nap_until_asleep(pid, read_fns, 10)) {
			err = 1;
			break;
		}
		if (move) {
			CPU_ZERO(&set);
			CPU_SET((int)((i + 1) % 2), &set);
			if (sched_setaffinity(pid, sizeof(set), &set))
				die("sched_setaffinity");
		}
		if (write(p[1], &c, 1) != 1)
			die("write");
	}
	if (err)
		kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	close(p[1]);
	return !err && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "runq"))
		return do_runq(atof(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "pipe"))
		return do_pipe(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "wait"))
		return do_wait(atol(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "budget"))
		return do_budget();
	if (argc == 3 && !strcmp(argv[1], "spin"))
		return do_spin(atol(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "migrate"))
		return do_migrate(atol(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: wakework runq SECONDS CPU HOGS | pipe N | wait K | budget | spin MS "
			"| migrate N MOVE\n");
	return 2;
}
