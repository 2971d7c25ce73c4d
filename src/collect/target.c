// SPDX-License-Identifier: BSD-2-Clause
/* Launching a held command, and walking /proc for a process tree. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "target.h"
#include "util.h"

int target_launch__start(char *const *argv, struct target_launch *l)
{
	int gate[2], errp[2];
	pid_t pid;

	if (pipe2(gate, O_CLOEXEC))
		return -errno;
	if (pipe2(errp, O_CLOEXEC)) {
		int err = -errno;

		close(gate[0]);
		close(gate[1]);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(gate[0]);
		close(gate[1]);
		close(errp[0]);
		close(errp[1]);
		return err;
	}
	if (pid == 0) {
		char c;
		int e;

		close(gate[1]);
		close(errp[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* Held here until the parent has added us to the traced set. */
		if (read(gate[0], &c, 1) != 0)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(errp[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(gate[0]);
	close(errp[1]);
	l->pid = pid;
	l->gate_fd = gate[1];
	l->error_fd = errp[0];
	return 0;
}

int target_launch__release(struct target_launch *l)
{
	ssize_t n;
	int e = 0;

	close(l->gate_fd);
	l->gate_fd = -1;
	do {
		n = read(l->error_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(l->error_fd);
	l->error_fd = -1;
	if (n == sizeof(e))
		return -(e ? e : ENOEXEC);
	return 0;
}

void target_launch__abort(struct target_launch *l)
{
	if (l->pid <= 0)
		return;
	kill(l->pid, SIGKILL);
	if (l->gate_fd >= 0)
		close(l->gate_fd);
	if (l->error_fd >= 0)
		close(l->error_fd);
	while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
		;
	l->pid = -1;
}

/* Reads state and ppid from /proc/PID/stat; comm may hold spaces and parentheses. */
static int read_stat(pid_t pid, char *ret_state, pid_t *ret_ppid)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd, ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %d", ret_state, &ppid) != 2)
		return -EINVAL;
	*ret_ppid = ppid;
	return 0;
}

bool target_pid_alive(pid_t pid)
{
	pid_t ppid;
	char st;

	return read_stat(pid, &st, &ppid) == 0 && st != 'Z' && st != 'X';
}

int target_descendants(const int *pids, size_t n, int **ret, size_t *ret_n)
{
	struct proc { int pid, ppid; } *procs = NULL;
	size_t np = 0, pcap = 0, out_n = 0, out_cap = 0;
	int *out = NULL, err = 0;
	struct dirent *de;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		uint64_t v;
		pid_t ppid;
		char st;

		if (parse_u64(de->d_name, 1, 0x3fffffff, &v))
			continue;
		if (read_stat((pid_t)v, &st, &ppid) || st == 'Z' || st == 'X')
			continue;
		err = grow((void **)&procs, &pcap, np + 1, sizeof(*procs));
		if (err)
			goto out;
		procs[np].pid = (int)v;
		procs[np].ppid = ppid;
		np++;
	}
	for (size_t i = 0; i < n; i++) {
		err = grow((void **)&out, &out_cap, out_n + 1, sizeof(*out));
		if (err)
			goto out;
		out[out_n++] = pids[i];
	}
	/* Breadth first: out grows while it is scanned. */
	for (size_t i = 0; i < out_n; i++) {
		for (size_t j = 0; j < np; j++) {
			if (procs[j].ppid != out[i] || procs[j].pid == out[i])
				continue;
			err = grow((void **)&out, &out_cap, out_n + 1, sizeof(*out));
			if (err)
				goto out;
			out[out_n++] = procs[j].pid;
			procs[j].ppid = -1; /* never twice */
		}
	}
out:
	closedir(d);
	free(procs);
	if (err) {
		free(out);
		return err;
	}
	*ret = out;
	*ret_n = out_n;
	return 0;
}
