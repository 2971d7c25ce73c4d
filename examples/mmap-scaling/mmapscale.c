// SPDX-License-Identifier: BSD-2-Clause
/*
 * The mmap_lock scaling workload (after the rwsem/mmap_sem scaling studies): THREADS threads
 * of one process (comm "mmapscale") each map an anonymous region, write one byte per page
 * (page faults), and unmap it, in a loop, for SECONDS. mmap and munmap take the process's
 * mmap_lock for writing; faults take it (or, with per-VMA locks, the VMA's lock) for reading.
 *
 *   mmapscale THREADS SECONDS [PAGES]    (PAGES per region, default 16)
 *
 * Prints "mmapscale: THREADS threads, N ops in S s, R ops/s, R/THREADS ops/s per thread".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static atomic_long ops;
static long pages = 16, page_size;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	size_t len = (size_t)(pages * page_size);
	long n = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("mmapscale: mmap");
			exit(2);
		}
		for (long i = 0; i < pages; i++)
			p[i * page_size] = 1;
		if (munmap(p, len)) {
			perror("mmapscale: munmap");
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
	long nthreads;
	double t0, secs;

	if (argc < 3 || argc > 4 || (nthreads = atol(argv[1])) < 1 || nthreads > 1024 ||
	    (secs = atof(argv[2])) <= 0 || (argc == 4 && (pages = atol(argv[3])) < 1)) {
		fprintf(stderr, "usage: mmapscale THREADS SECONDS [PAGES]\n");
		return 2;
	}
	page_size = sysconf(_SC_PAGESIZE);
	prctl(PR_SET_NAME, "mmapscale", 0, 0, 0);
	tids = calloc(nthreads, sizeof(*tids));
	if (!tids)
		return 2;
	t0 = now();
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, worker, NULL))
			return 2;
	while (now() - t0 < secs)
		usleep(10000);
	atomic_store(&stop, 1);
	for (long i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	secs = now() - t0;
	printf("mmapscale: %ld threads, %ld ops in %.2f s, %.0f ops/s, %.0f ops/s per thread\n",
	       nthreads, atomic_load(&ops), secs, atomic_load(&ops) / secs,
	       atomic_load(&ops) / secs / nthreads);
	free(tids);
	return 0;
}
