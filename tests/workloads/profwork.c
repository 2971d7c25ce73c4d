// SPDX-License-Identifier: BSD-2-Clause
/*
 * Ground-truth workloads for the profile view: known functions burning known CPU time.
 * Built with frame pointers, so -g user stacks reach main().
 *
 *   profwork forks N MS    forks N children ("sp_prof_child"), two at a time, each spending
 *                          MS ms of CPU in sp_prof_unique_burn() then exiting; the parent only
 *                          waits, so nearly every sample of the job lands in that function
 *   profwork getpid SEC    calls getpid() (a real system call) in a loop for SEC seconds:
 *                          most samples are in the kernel's system call entry and exit
 *   profwork spin SEC [T]  T threads (default 1) computing in sp_prof_spin() for SEC seconds
 *   profwork loop M [T]    T threads (default 1) each computing M million steps in
 *                          sp_prof_loop(): a fixed amount of work, for slowdown benchmarks
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOIPA __attribute__((noipa, noinline))

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The thread's own CPU time: a burn of "ms of CPU" takes as many samples on a machine busy
 * with other work as on an idle one (the clock's time would give it only its share).
 */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The function the forks test looks for: pure user-mode computation for ms ms of CPU. */
NOIPA uint64_t sp_prof_unique_burn(unsigned int ms)
{
	uint64_t end = cpu_ns() + (uint64_t)ms * 1000000ULL, x = 88172645463325252ULL;

	do {
		/* enough work between clock reads that the clock (vdso) is a sliver of the time */
		for (int i = 0; i < 200000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		sink += x;
	} while (cpu_ns() < end);
	return x;
}

NOIPA static int child_main(unsigned int ms)
{
	prctl(PR_SET_NAME, "sp_prof_child", 0, 0, 0);
	sink += sp_prof_unique_burn(ms);
	return 0;
}

static int run_forks(int n, unsigned int ms)
{
	int running = 0, failed = 0, status;

	for (int i = 0; i < n; i++) {
		pid_t pid;

		if (running == 2) {
			if (wait(&status) > 0 && !(WIFEXITED(status) && !WEXITSTATUS(status)))
				failed++;
			running--;
		}
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 2;
		}
		if (pid == 0)
			_exit(child_main(ms));
		running++;
	}
	while (running-- > 0)
		if (wait(&status) > 0 && !(WIFEXITED(status) && !WEXITSTATUS(status)))
			failed++;
	return failed ? 1 : 0;
}

NOIPA static void getpid_loop(double sec)
{
	uint64_t end = now_ns() + (uint64_t)(sec * 1e9);

	prctl(PR_SET_NAME, "sp_prof_getpid", 0, 0, 0);
	do {
		for (int i = 0; i < 10000; i++)
			sink += (uint64_t)syscall(SYS_getpid);
	} while (now_ns() < end);
}

static double spin_sec;

NOIPA static void *sp_prof_spin(void *arg)
{
	uint64_t end = now_ns() + (uint64_t)(spin_sec * 1e9), x = 1;

	(void)arg;
	do {
		for (int i = 0; i < 200000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		sink += x;
	} while (now_ns() < end);
	return NULL;
}

static uint64_t loop_millions;

NOIPA static void *sp_prof_loop(void *arg)
{
	uint64_t x = 1;

	(void)arg;
	for (uint64_t m = 0; m < loop_millions; m++) {
		for (int i = 0; i < 1000000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		sink += x;
	}
	return NULL;
}

static int run_threads(void *(*fn)(void *), int threads)
{
	pthread_t t[64];

	if (threads < 1 || threads > 64)
		return 2;
	for (int i = 1; i < threads; i++)
		if (pthread_create(&t[i], NULL, fn, NULL))
			return 2;
	fn(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: profwork forks N MS | getpid SECONDS | spin SECONDS [THREADS] | "
			"loop MILLIONS [THREADS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "forks"))
		return run_forks(atoi(argv[2]), (unsigned int)atoi(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "getpid")) {
		getpid_loop(atof(argv[2]));
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "spin")) {
		spin_sec = atof(argv[2]);
		return run_threads(sp_prof_spin, argc >= 4 ? atoi(argv[3]) : 1);
	}
	if (argc >= 3 && !strcmp(argv[1], "loop")) {
		loop_millions = strtoull(argv[2], NULL, 10);
		return run_threads(sp_prof_loop, argc >= 4 ? atoi(argv[3]) : 1);
	}
	return usage();
}
