// SPDX-License-Identifier: BSD-2-Clause
/*
 * tests/workloads/wchan.h -- whether a task is asleep in a kernel function, from
 * /proc/PID/wchan, which the kernel shows only for a task off its run queue. A workload that
 * acts only once its peer sleeps there makes that peer block exactly once per step at any
 * CPU speed (a 10x slower guest included), so its count is the ground truth.
 */
#ifndef SP_WORKLOADS_WCHAN_H
#define SP_WORKLOADS_WCHAN_H
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* 1 when TID (a thread too: its entry is hidden, not missing) sleeps in a function whose name
 * contains one of FNS (NULL-terminated), 0 otherwise, -1 when wchan cannot be read */
static inline int asleep_in(pid_t tid, const char *const *fns)
{
	char path[64], buf[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	for (; *fns; fns++)
		if (strstr(buf, *fns))
			return 1;
	return 0;
}

/* naps of 200 us until TID sleeps in one of FNS; 0 when it does, -1 after SECS seconds or
 * when wchan cannot be read */
static inline int nap_until_asleep(pid_t tid, const char *const *fns, double secs)
{
	struct timespec nap = { 0, 200 * 1000 };
	long tries = (long)(secs * 5000);
	int r;

	while ((r = asleep_in(tid, fns)) == 0 && tries-- > 0)
		nanosleep(&nap, NULL);
	return r == 1 ? 0 : -1;
}
#endif
