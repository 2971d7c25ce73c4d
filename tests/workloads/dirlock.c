// SPDX-License-Identifier: BSD-2-Clause
/*
 * The "superblock-lock" workload of the locks view: THREADS threads (comm "dirlock") create,
 * close and unlink files in ONE directory for SECONDS. Creating and unlinking both take the
 * directory inode's i_rwsem for writing, so the threads serialize on it.
 *
 *   dirlock DIR THREADS SECONDS
 *
 * Prints "dirlock: THREADS threads, N ops in S s, R ops/s" (one op = create + unlink).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static const char *dir;
static atomic_int stop;
static atomic_long ops;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	long id = (long)arg, n = 0;
	char path[4096];

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int fd;

		snprintf(path, sizeof(path), "%s/dl_%ld_%ld", dir, id, n & 15);
		fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
		if (fd < 0) {
			perror("dirlock: open");
			exit(2);
		}
		close(fd);
		if (unlink(path)) {
			perror("dirlock: unlink");
			exit(2);
		}
		n++;
	}
	atomic_fetch_add(&ops, n);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t *tids;
	double t0, secs;
	long nthreads;
	int err;

	if (argc != 4 || (nthreads = atol(argv[2])) < 1 || nthreads > 1024 ||
	    (secs = atof(argv[3])) <= 0) {
		fprintf(stderr, "usage: dirlock DIR THREADS SECONDS\n");
		return 2;
	}
	dir = argv[1];
	prctl(PR_SET_NAME, "dirlock", 0, 0, 0); /* threads inherit it */
	tids = calloc(nthreads, sizeof(*tids));
	if (!tids)
		return 2;
	t0 = now();
	for (long i = 0; i < nthreads; i++) {
		err = pthread_create(&tids[i], NULL, worker, (void *)i);
		if (err) {
			fprintf(stderr, "dirlock: pthread_create: %s\n", strerror(err));
			return 2;
		}
	}
	while (now() - t0 < secs)
		usleep(10000);
	atomic_store(&stop, 1);
	for (long i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	secs = now() - t0;
	printf("dirlock: %ld threads, %ld ops in %.2f s, %.0f ops/s\n", nthreads, atomic_load(&ops),
	       secs, atomic_load(&ops) / secs);
	free(tids);
	return 0;
}
