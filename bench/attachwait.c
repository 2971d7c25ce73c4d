// SPDX-License-Identifier: BSD-2-Clause
/*
 * attachwait PID STABLE_MS TIMEOUT_S -- when did the tracer under PID attach?
 *
 * Polls PID and its descendants (/proc/PID/task/TID/children) every 0.5 ms for their bpf_link
 * and perf_event descriptors, and prints "READY_US N" (the epoch microseconds at which the
 * count last changed, and that count) once it has been non-zero and unchanged for STABLE_MS.
 * Exit 1: PID exited first; 2: TIMEOUT_S passed. bench/compare.sh's start-up column comes
 * from here: a bash loop (find, sleep 0.01) resolved it only to 20-30 ms, about the
 * difference being measured, and an interpreter would start too late.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXP 256

static long long usec(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int alive(int pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] && p[2] != 'Z';
}

/* PID and its descendants into pids[]; returns how many */
static int tree(int pid, int *pids)
{
	int n = 1, i;

	pids[0] = pid;
	for (i = 0; i < n; i++) {
		char path[64];
		struct dirent *e;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/task", pids[i]);
		d = opendir(path);
		if (!d)
			continue;
		while ((e = readdir(d))) {
			char cpath[400];
			FILE *f;
			int c;

			if (e->d_name[0] == '.')
				continue;
			snprintf(cpath, sizeof(cpath), "%s/%s/children", path, e->d_name);
			f = fopen(cpath, "r");
			if (!f)
				continue;
			while (n < MAXP && fscanf(f, "%d", &c) == 1)
				pids[n++] = c;
			fclose(f);
		}
		closedir(d);
	}
	return n;
}

static int attach_fds(const int *pids, int n)
{
	int count = 0;

	for (int i = 0; i < n; i++) {
		char path[64], lpath[350], target[64];
		struct dirent *e;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/fd", pids[i]);
		d = opendir(path);
		if (!d)
			continue;
		while ((e = readdir(d))) {
			ssize_t len;

			if (e->d_name[0] == '.')
				continue;
			snprintf(lpath, sizeof(lpath), "%s/%s", path, e->d_name);
			len = readlink(lpath, target, sizeof(target) - 1);
			if (len <= 0)
				continue;
			target[len] = 0;
			if (!strcmp(target, "anon_inode:bpf_link") ||
			    !strcmp(target, "anon_inode:[perf_event]"))
				count++;
		}
		closedir(d);
	}
	return count;
}

int main(int argc, char **argv)
{
	int pid, pids[MAXP], npids = 1, last = -1, n;
	long long stable, deadline, changed = 0, tree_at = 0, mono;

	if (argc != 4) {
		fprintf(stderr, "usage: attachwait PID STABLE_MS TIMEOUT_S\n");
		return 2;
	}
	pid = atoi(argv[1]);
	stable = atoll(argv[2]) * 1000;
	deadline = usec(CLOCK_MONOTONIC) + (long long)(atof(argv[3]) * 1e6);
	pids[0] = pid;
	for (;;) {
		if (!alive(pid))
			return 1;
		mono = usec(CLOCK_MONOTONIC);
		if (mono - tree_at > 5000) { /* processes come seldom; descriptors are the event */
			npids = tree(pid, pids);
			tree_at = mono;
		}
		n = attach_fds(pids, npids);
		if (n != last) {
			last = n;
			changed = usec(CLOCK_REALTIME);
		}
		if (n > 0 && usec(CLOCK_REALTIME) - changed >= stable) {
			printf("%lld %d\n", changed, n);
			return 0;
		}
		if (mono > deadline)
			return 2;
		usleep(500);
	}
}
