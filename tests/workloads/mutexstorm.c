// SPDX-License-Identifier: BSD-2-Clause
/*
 * Contention on kernel mutexes a user program can force (comm "mutexstorm"):
 *
 *   mutexstorm pipe THREADS SECONDS   THREADS writers write 64-byte records into ONE pipe
 *                                     that one reader drains: pipe_write and pipe_read
 *                                     serialize on pipe_inode_info.mutex
 *   mutexstorm fpos THREADS SECONDS FILE
 *                                     THREADS threads read() one shared file descriptor:
 *                                     each read takes the file's f_pos_lock mutex
 *   mutexstorm pi THREADS SECONDS     THREADS threads take turns on ONE priority-inheritance
 *                                     pthread mutex, holding it for a short spin: its
 *                                     waiters sleep in the kernel's rt-mutex (futex_lock_pi)
 *
 * Prints "mutexstorm: MODE THREADS threads, N ops in S s".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static int fd_r = -1, fd_w = -1;
static atomic_int stop;
static atomic_long ops;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *pipe_writer(void *arg)
{
	char rec[64];
	long n = 0;

	(void)arg;
	memset(rec, 'x', sizeof(rec));
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (write(fd_w, rec, sizeof(rec)) != (ssize_t)sizeof(rec)) {
			if (errno == EINTR)
				continue;
			break; /* reader gone */
		}
		n++;
	}
	atomic_fetch_add(&ops, n);
	return NULL;
}

static void *pipe_reader(void *arg)
{
	char buf[65536];

	(void)arg;
	while (read(fd_r, buf, sizeof(buf)) > 0)
		;
	return NULL;
}

static void *fpos_reader(void *arg)
{
	char buf[512];
	long n = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		ssize_t k = read(fd_r, buf, sizeof(buf));

		if (k == 0)
			lseek(fd_r, 0, SEEK_SET); /* also under f_pos_lock */
		else if (k < 0 && errno != EINTR)
			break;
		n++;
	}
	atomic_fetch_add(&ops, n);
	return NULL;
}

static pthread_mutex_t pi_mutex;
static volatile unsigned long pi_sink;

static void *pi_locker(void *arg)
{
	long n = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		pthread_mutex_lock(&pi_mutex);
		for (int i = 0; i < 20000; i++)
			pi_sink += (unsigned long)i;
		pthread_mutex_unlock(&pi_mutex);
		n++;
	}
	atomic_fetch_add(&ops, n);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_mutexattr_t attr;
	pthread_t *tids, reader;
	bool is_pipe, is_pi;
	long nthreads;
	double t0, secs;
	int p[2];

	if (argc < 4 || (nthreads = atol(argv[2])) < 1 || nthreads > 1024 ||
	    (secs = atof(argv[3])) <= 0 ||
	    (strcmp(argv[1], "pipe") && strcmp(argv[1], "fpos") && strcmp(argv[1], "pi")) ||
	    (!strcmp(argv[1], "fpos") && argc != 5)) {
		fprintf(stderr, "usage: mutexstorm pipe THREADS SECONDS\n"
				"       mutexstorm fpos THREADS SECONDS FILE\n"
				"       mutexstorm pi THREADS SECONDS\n");
		return 2;
	}
	is_pipe = !strcmp(argv[1], "pipe");
	is_pi = !strcmp(argv[1], "pi");
	prctl(PR_SET_NAME, "mutexstorm", 0, 0, 0);
	if (is_pi) {
		if (pthread_mutexattr_init(&attr) ||
		    pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT) ||
		    pthread_mutex_init(&pi_mutex, &attr)) {
			fprintf(stderr, "mutexstorm: no priority-inheritance mutex\n");
			return 2;
		}
	} else if (is_pipe) {
		if (pipe(p)) {
			perror("mutexstorm: pipe");
			return 2;
		}
		fd_r = p[0];
		fd_w = p[1];
		if (pthread_create(&reader, NULL, pipe_reader, NULL))
			return 2;
	} else {
		fd_r = open(argv[4], O_RDONLY);
		if (fd_r < 0) {
			perror("mutexstorm: open");
			return 2;
		}
	}
	tids = calloc(nthreads, sizeof(*tids));
	if (!tids)
		return 2;
	t0 = now();
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL,
				   is_pi ? pi_locker : is_pipe ? pipe_writer : fpos_reader, NULL))
			return 2;
	while (now() - t0 < secs)
		usleep(10000);
	atomic_store(&stop, 1);
	for (long i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	if (is_pipe) {
		close(fd_w);
		pthread_join(reader, NULL);
	}
	secs = now() - t0;
	printf("mutexstorm: %s %ld threads, %ld ops in %.2f s\n", argv[1], nthreads,
	       atomic_load(&ops), secs);
	free(tids);
	return 0;
}
