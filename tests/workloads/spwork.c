// SPDX-License-Identifier: BSD-2-Clause
/*
 * Ground-truth workloads for the integration tests: each one blocks, waits or gets
 * preempted a known number of times, under a known process name.
 *
 *   spwork pipe N        a reader ("sp_pipe_reader") blocks exactly N times in pipe_read:
 *                        the writer writes each byte only once /proc/PID/wchan shows the
 *                        reader asleep in the pipe
 *   spwork wait K        a parent ("sp_waiter") waits K times for a child that is still alive:
 *                        each child ("sp_child") sleeps 3 ms, then exits once wchan shows
 *                        the parent asleep in do_wait
 *   spwork spin SECONDS  two CPU-bound tasks ("sp_spin") pinned to CPU 0
 *   spwork tree FILE N   waits until FILE exists, then forks a child that forks a grandchild
 *                        ("sp_grandchild") doing `pipe N`
 *   spwork comm NAME     renames itself NAME (any bytes) and sleeps 10 times for 1 ms
 *   spwork threads FILE N  a process whose main thread exits (pthread_exit) once FILE exists,
 *                        while, 0.5 s later, its thread "sp_thr_reader" blocks exactly N times
 *                        in pipe_read, fed by another thread as in `pipe N`
 *   spwork sleepers FILE K  K threads ("sp_sleeper") asleep in a pipe read until FILE exists;
 *                        then the process exits (exit_group), so K + 1 tasks die at once
 *   spwork ignore SIGNALS SECONDS  ignores SIGNALS (a list of INT, TERM, HUP), then sleeps
 *                        SECONDS
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

static const char *const pipe_fns[] = { "pipe_read", "pipe_wait", NULL };

/* true once the task sleeps in a pipe read */
static int asleep_in_pipe(pid_t pid)
{
	int r = asleep_in(pid, pipe_fns);

	if (r < 0)
		die("open wchan");
	return r;
}

static int do_pipe(long n, const char *reader_name)
{
	int p[2], status;
	pid_t pid;
	char c = 'x';

	if (pipe(p))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		set_name(reader_name);
		close(p[1]);
		for (long i = 0; i < n; i++)
			if (read(p[0], &c, 1) != 1)
				_exit(3);
		_exit(0);
	}
	close(p[0]);
	for (long i = 0; i < n; i++) {
		double t0 = now();

		while (!asleep_in_pipe(pid)) {
			if (now() - t0 > 10)
				die("reader never blocked");
		}
		if (write(p[1], &c, 1) != 1)
			die("write");
	}
	close(p[1]);
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static int do_wait(long k)
{
	set_name("sp_waiter");
	for (long i = 0; i < k; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			static const char *const wait_fns[] = { "do_wait", "kernel_wait4", NULL };
			struct timespec ts = { 0, 3 * 1000 * 1000 };

			set_name("sp_child");
			nanosleep(&ts, NULL);
			/* exit once the parent sleeps in do_wait, so that it blocks there exactly
			 * once per child however slow the CPU (an exit before it sleeps is no wait) */
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

static int do_spin(double secs)
{
	cpu_set_t set;
	pid_t pid;
	double t0;
	volatile unsigned long x = 0;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
	set_name("sp_spin");
	pid = fork();
	if (pid < 0)
		die("fork");
	t0 = now();
	while (now() - t0 < secs)
		x++;
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return 0;
}

static int do_tree(const char *file, long n)
{
	pid_t pid;
	int status;

	set_name("sp_tree");
	while (access(file, F_OK)) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		set_name("sp_child");
		_exit(do_pipe(n, "sp_grandchild"));
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int do_comm(const char *name)
{
	set_name(name);
	for (int i = 0; i < 10; i++) {
		struct timespec ts = { 0, 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Until FILE exists, then another 0.5 s when late is set. */
static void wait_for_file(const char *file, int late)
{
	struct timespec half = { 0, 500 * 1000 * 1000 };

	while (access(file, F_OK)) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (late)
		nanosleep(&half, NULL);
}

struct thr {
	const char *file;
	long n;
	int pipe[2];
	volatile pid_t reader_tid;
};

static void *thr_reader(void *arg)
{
	struct thr *t = arg;
	char c;

	set_name("sp_thr_reader");
	t->reader_tid = (pid_t)syscall(SYS_gettid);
	wait_for_file(t->file, 1);
	for (long i = 0; i < t->n; i++)
		if (read(t->pipe[0], &c, 1) != 1)
			die("read");
	return NULL;
}

static void *thr_writer(void *arg)
{
	struct thr *t = arg;
	char c = 'x';

	set_name("sp_thr_writer");
	wait_for_file(t->file, 1);
	for (long i = 0; i < t->n; i++) {
		double t0 = now();

		while (!asleep_in_pipe(t->reader_tid)) {
			if (now() - t0 > 10)
				die("reader never blocked");
		}
		if (write(t->pipe[1], &c, 1) != 1)
			die("write");
	}
	return NULL;
}

static int do_threads(const char *file, long n)
{
	static struct thr t;
	pthread_t r, w;

	set_name("sp_threads");
	t.file = file;
	t.n = n;
	if (pipe(t.pipe))
		die("pipe");
	if (pthread_create(&r, NULL, thr_reader, &t))
		die("pthread_create");
	while (!t.reader_tid)
		sched_yield();
	if (pthread_create(&w, NULL, thr_writer, &t))
		die("pthread_create");
	wait_for_file(file, 0);
	pthread_exit(NULL); /* the process lives on in its two threads, exit status 0 */
}

static void *sleeper(void *arg)
{
	char c;

	set_name("sp_sleeper");
	if (read(*(int *)arg, &c, 1) >= 0)
		die("read returned");
	return NULL;
}

static int do_sleepers(const char *file, long k)
{
	static int p[2];
	pthread_t t;

	set_name("sp_sleepers");
	if (pipe(p))
		die("pipe");
	for (long i = 0; i < k; i++)
		if (pthread_create(&t, NULL, sleeper, &p[0]))
			die("pthread_create");
	wait_for_file(file, 0);
	exit(0);
}

static int do_ignore(const char *names, double secs)
{
	static const char *const known[] = { "INT", "TERM", "HUP" };
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	double t0 = now();

	for (size_t i = 0; i < 3; i++) {
		const char *p = strstr(names, known[i]);
		size_t len = strlen(known[i]);

		if (p && (p == names || p[-1] == ',') && (!p[len] || p[len] == ','))
			signal(sigs[i], SIG_IGN);
	}
	set_name("sp_ignore");
	while (now() - t0 < secs) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "pipe"))
		return do_pipe(atol(argv[2]), "sp_pipe_reader");
	if (argc == 3 && !strcmp(argv[1], "wait"))
		return do_wait(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "spin"))
		return do_spin(atof(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "tree"))
		return do_tree(argv[2], atol(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "comm"))
		return do_comm(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "threads"))
		return do_threads(argv[2], atol(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "sleepers"))
		return do_sleepers(argv[2], atol(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "ignore"))
		return do_ignore(argv[2], atof(argv[3]));
	fprintf(stderr, "usage: spwork pipe N | wait K | spin SECONDS | tree FILE N | comm NAME | "
		"threads FILE N | sleepers FILE K | ignore SIGNALS SECONDS\n");
	return 2;
}
