// SPDX-License-Identifier: BSD-2-Clause
/* Output files written whole or not at all (see output.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "log.h"
#include "output.h"
#include "util.h"

/* A temporary file beside path, with the mode a new file gets (or path's, if it exists). */
static int open_beside(struct cli_output *o, const struct stat *old)
{
	char *for_base = strdup(o->path), *for_dir = strdup(o->path);
	mode_t mask = umask(0);
	uid_t uid;
	gid_t gid;
	int fd, n = -1;

	umask(mask);
	if (for_base && for_dir)
		n = asprintf(&o->tmp, "%s/.%s.schedprof-XXXXXX", dirname(for_dir),
			     basename(for_base));
	free(for_base);
	free(for_dir);
	if (n < 0) {
		o->tmp = NULL;
		return -ENOMEM;
	}
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		free(o->tmp);
		o->tmp = NULL;
		return err;
	}
	fchmod(fd, old ? old->st_mode & 07777 : 0666 & ~mask);
	if (sudo_caller(&uid, &gid)) /* under sudo, files we write are the caller's */
		(void)!fchown(fd, uid, gid);
	else if (old && geteuid() == 0)
		(void)!fchown(fd, old->st_uid, old->st_gid);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int err = -errno;

		close(fd);
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		return err;
	}
	return 0;
}

int cli_output_open(struct cli_output *o, const char *path)
{
	struct stat st;
	bool exists;
	int err;

	memset(o, 0, sizeof(*o));
	o->path = path;
	if (!path) {
		/* a closed pipe is an EPIPE error, not a signal: a quiet exit, the same everywhere */
		signal(SIGPIPE, SIG_IGN);
		o->f = stdout;
		return 0;
	}
	exists = stat(path, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) { /* /dev/null, a FIFO: written as it is */
		o->f = fopen(path, "w");
		err = o->f ? 0 : -errno;
	} else if (exists && access(path, W_OK)) {
		err = -errno; /* do not replace a file we may not write */
	} else {
		err = open_beside(o, exists ? &st : NULL);
	}
	if (err)
		elog("cannot write %s: %s", path, strerror(-err));
	return err;
}

static bool stdout_reader_gone(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

int cli_output_commit(struct cli_output *o)
{
	int err = 0;

	if (!o->f)
		return -EBADF;
	if (fflush(o->f))
		err = -errno;
	if (o->f == stdout) {
		o->f = NULL;
		return err && (err == -EPIPE || stdout_reader_gone()) ? -EPIPE : err;
	}
	if (!err && o->tmp && fsync(fileno(o->f)))
		err = -errno;
	if (fclose(o->f) && !err)
		err = -errno;
	o->f = NULL;
	if (!err && o->tmp && rename(o->tmp, o->path))
		err = -errno;
	if (o->tmp) {
		if (err)
			unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
	return err;
}

void cli_output_abort(struct cli_output *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
}
