// SPDX-License-Identifier: BSD-2-Clause
/*
 * The jobs of the what-if accuracy test (tests/integration/test_whatif.sh). Their work is
 * CPU time (each thread's own clock), not wall time, so that a run on fewer CPUs takes
 * longer, as the model predicts:
 *
 *   whatifwork tail SECONDS
 *       "wi_main" forks "wi_short", which burns SECONDS of CPU, and "wi_long", which burns
 *       twice as much, and waits for both: 3 x SECONDS on 1 CPU, 2 x SECONDS on 2 or more.
 *   whatifwork lock THREADS ITERS COMPUTE_US HOLD_US [nolock]
 *       THREADS threads ("wi_lock") each ITERS times compute COMPUTE_US of CPU, then hold a
 *       shared pthread mutex while computing HOLD_US more; nolock skips the mutex.
 *
 * Prints the wall time in seconds on stdout ("wall 2.013").
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Burns secs of this thread's CPU time. */
static void burn(double secs)
{
	double end = clock_s(CLOCK_THREAD_CPUTIME_ID) + secs;
	volatile unsigned long x = 0;

	while (clock_s(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 2000; i++)
			x += (unsigned long)i;
}

static pid_t worker(const char *name, double secs)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid)
		return pid;
	prctl(PR_SET_NAME, name, 0, 0, 0);
	burn(secs);
	_exit(0);
}

static int tail(double secs)
{
	int status, failed = 0;

	prctl(PR_SET_NAME, "wi_main", 0, 0, 0);
	worker("wi_short", secs);
	worker("wi_long", 2 * secs);
	while (wait(&status) > 0)
		failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	return failed;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long iters;
static double compute_s, hold_s;
static int use_lock = 1;

static void *locker(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "wi_lock", 0, 0, 0);
	for (long i = 0; i < iters; i++) {
		burn(compute_s);
		if (use_lock)
			pthread_mutex_lock(&mu);
		burn(hold_s);
		if (use_lock)
			pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static int lock(int argc, char **argv)
{
	int n;
	pthread_t th[64];

	if (argc < 6)
		return -1;
	n = atoi(argv[2]);
	iters = atol(argv[3]);
	compute_s = atof(argv[4]) / 1e6;
	hold_s = atof(argv[5]) / 1e6;
	use_lock = !(argc > 6 && !strcmp(argv[6], "nolock"));
	if (n < 1 || n > 64 || iters < 1)
		return -1;
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, locker, NULL)) {
			perror("pthread_create");
			return 2;
		}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	double t0 = clock_s(CLOCK_MONOTONIC);
	int rc = -1;

	if (argc >= 3 && !strcmp(argv[1], "tail"))
		rc = tail(atof(argv[2]));
	else if (argc >= 2 && !strcmp(argv[1], "lock"))
		rc = lock(argc, argv);
	if (rc < 0) {
		fprintf(stderr, "usage: whatifwork tail SECONDS | lock THREADS ITERS COMPUTE_US "
				"HOLD_US [nolock]\n");
		return 2;
	}
	printf("wall %.3f\n", clock_s(CLOCK_MONOTONIC) - t0);
	return rc;
}
