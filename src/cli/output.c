// SPDX-License-Identifier: BSD-2-Clause
/* Output files written whole or not at all, never through another user's link (output.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/log.h"
#include "cli/output.h"
#include "base/util.h"

/* Every write of f goes here, so that its errno is kept (stdio's ferror() says only "failed"). */
static ssize_t out_write(void *cookie, const char *buf, size_t n)
{
	struct cli_output *o = cookie;
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(o->fd, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) { /* a non-blocking stdout: wait until it drains */
			struct pollfd p = { .fd = o->fd, .events = POLLOUT };

			if (poll(&p, 1, -1) >= 0 || errno == EINTR)
				continue;
		}
		if (w <= 0) {
			if (!o->werr)
				o->werr = w < 0 ? errno : EIO;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)w;
	}
	return (ssize_t)done;
}

static int open_stream(struct cli_output *o)
{
	static const cookie_io_functions_t io = { .write = out_write };

	o->f = fopencookie(o, "w", io);
	if (!o->f)
		return -errno;
	if (isatty(o->fd))
		setvbuf(o->f, NULL, _IOLBF, 0); /* trace -i's intervals appear as they come */
	else
		setvbuf(o->f, NULL, _IOFBF, 1 << 16);
	return 0;
}

/* Whether uid may own what schedprof writes into or through: root, us, the sudo caller. */
static bool trusted_owner(uid_t uid)
{
	uid_t su;
	gid_t sg;

	return uid == 0 || uid == geteuid() || (sudo_caller(&su, &sg) && uid == su);
}

static const char *kind_of(mode_t m)
{
	return S_ISLNK(m)  ? "symbolic link" :
	       S_ISFIFO(m) ? "FIFO" :
	       S_ISCHR(m)  ? "character device" :
	       S_ISBLK(m)  ? "block device" :
	       S_ISSOCK(m) ? "socket" :
	       S_ISDIR(m)  ? "directory" : "file";
}

/*
 * A FIFO or character device written in place: what is there (st, through the link if
 * via_link) is checked before the open, which can block (a FIFO without a reader), and is
 * the same file as the descriptor after it. 1: not such a file (the link is replaced by a
 * file).
 */
static int open_in_place(struct cli_output *o, const struct stat *st, bool via_link)
{
	struct stat fst;
	int fd;

	if (S_ISREG(st->st_mode))
		return 1;
	if (!S_ISFIFO(st->st_mode) && !S_ISCHR(st->st_mode)) {
		elog("cannot write %s: %s %s: give a file, a FIFO or a character device", o->path,
		     via_link ? "it leads to a" : "a", kind_of(st->st_mode));
		return -EPERM;
	}
	if (!trusted_owner(st->st_uid)) {
		elog("cannot write %s: %s %s of another user (uid %u): give a path of your own",
		     o->path, via_link ? "it leads to a" : "a", kind_of(st->st_mode),
		     (unsigned)st->st_uid);
		return -EPERM;
	}
	fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (via_link ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &fst) || fst.st_dev != st->st_dev || fst.st_ino != st->st_ino) {
		close(fd);
		return -EAGAIN; /* replaced in between: not what was checked */
	}
	o->fd = fd;
	o->dirfd = -1;
	return open_stream(o);
}

/* A name DIR-relative and hidden, random enough that nobody plants it in advance. */
static int random_name(char **ret, const char *prefix, const char *suffix)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char r[12];
	char s[sizeof(r) + 1];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -EAGAIN;
	for (size_t i = 0; i < sizeof(r); i++)
		s[i] = set[r[i] % (sizeof(set) - 1)];
	s[sizeof(r)] = 0;
	return asprintf(ret, "%s%s%s", prefix, s, suffix) < 0 ? -ENOMEM : 0;
}

/* O_CREAT|O_EXCL: an existing name (a link among them) is never opened. */
static int create_named(struct cli_output *o, const char *prefix, const char *suffix, mode_t mode)
{
	for (int tries = 0; tries < 100; tries++) {
		int err = random_name(&o->tmp, prefix, suffix), fd;

		if (err)
			return err;
		fd = openat(o->dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    mode);
		if (fd >= 0)
			return fd;
		err = -errno;
		free(o->tmp);
		o->tmp = NULL;
		if (err != -EEXIST)
			return err;
	}
	return -EEXIST;
}

/*
 * The file that becomes path: unnamed (O_TMPFILE) if the file system and /proc allow linking
 * it in later, else a hidden name beside path. Its mode is set here, the umask aside.
 */
static int create_beside(struct cli_output *o, const char *dir, const char *prefix, mode_t mode)
{
	uid_t uid;
	gid_t gid;
	int fd;

	o->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (o->dirfd < 0)
		return -errno;
	fd = openat(o->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0) {
		char proc[64];

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (access(proc, F_OK)) { /* no /proc: linkat() could not name it */
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		fd = create_named(o, prefix, ".schedprof-tmp", 0600);
	if (fd < 0)
		return fd;
	o->fd = fd;
	if (fchmod(fd, mode))
		return -errno;
	if (sudo_caller(&uid, &gid)) /* under sudo, files we write are the caller's */
		(void)!fchown(fd, uid, gid);
	return open_stream(o);
}

static int split_path(struct cli_output *o, const char *path, char **ret_dir)
{
	char *for_base = strdup(path), *for_dir = strdup(path);
	int err = 0;

	if (for_base && for_dir) {
		o->base = strdup(basename(for_base));
		*ret_dir = strdup(dirname(for_dir));
	}
	if (!o->base || !*ret_dir)
		err = -ENOMEM;
	free(for_base);
	free(for_dir);
	return err;
}

/* A link to a descriptor (/dev/stdout, /proc/self/fd/1): what it leads to is no path of its own. */
static bool fd_link(const char *path)
{
	char to[64];
	ssize_t n;

	if (!strncmp(path, "/proc/", 6) || !strncmp(path, "/dev/fd/", 8))
		return true;
	n = readlink(path, to, sizeof(to) - 1);
	to[n > 0 ? n : 0] = 0;
	return !strncmp(to, "/proc/", 6) || !strncmp(to, "/dev/fd/", 8);
}

/* Through a descriptor's link to a regular file (a shell's > or >>): appended in place. */
static int open_appended(struct cli_output *o, const struct stat *st)
{
	struct stat fst;
	int fd = open(o->path, O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &fst) || fst.st_dev != st->st_dev || fst.st_ino != st->st_ino) {
		close(fd);
		return -EAGAIN;
	}
	o->fd = fd;
	o->dirfd = -1;
	return open_stream(o);
}

static int open_path(struct cli_output *o)
{
	struct stat st;
	mode_t mask = umask(0), mode;
	char *dir = NULL, *prefix = NULL, *real = NULL;
	const char *target = o->path; /* the file replaced */
	int err;

	umask(mask);
	mode = 0666 & ~mask;
	if (lstat(o->path, &st)) {
		if (errno != ENOENT)
			return -errno;
	} else if (S_ISLNK(st.st_mode)) {
		if (!trusted_owner(st.st_uid)) {
			elog("cannot write %s: a symbolic link of another user (uid %u), not "
			     "followed: give a path of your own", o->path, (unsigned)st.st_uid);
			return -EPERM;
		}
		/* ours (/dev/stdout is root's): to a FIFO or a device, written in place */
		if (!stat(o->path, &st) && (err = open_in_place(o, &st, true)) <= 0)
			return err;
		if (!access(o->path, F_OK) && fd_link(o->path))
			return open_appended(o, &st);
		/* to a file: that file is replaced (its mode not copied); to nothing: the link */
		if (!access(o->path, F_OK)) {
			real = realpath(o->path, NULL);
			if (!real)
				return -errno;
			target = real;
		}
	} else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
		return open_in_place(o, &st, false);
	} else if (S_ISDIR(st.st_mode)) {
		return -EISDIR;
	} else if (!S_ISREG(st.st_mode)) {
		elog("cannot write %s: a %s: give a file, a FIFO or a character device", o->path,
		     kind_of(st.st_mode));
		return -EPERM;
	} else if (access(o->path, W_OK)) {
		return -errno; /* do not replace a file we may not write */
	} else if (st.st_uid == geteuid()) {
		mode = st.st_mode & 0777; /* our own file keeps its permissions, not set-id bits */
	}
	err = split_path(o, target, &dir);
	if (!err && asprintf(&prefix, ".%s.", o->base) < 0) {
		prefix = NULL;
		err = -ENOMEM;
	}
	if (!err)
		err = create_beside(o, dir, prefix, mode);
	free(dir);
	free(prefix);
	free(real);
	return err;
}

int cli_output_open(struct cli_output *o, const char *path)
{
	int err;

	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
	o->path = path;
	if (!path) {
		/* a closed pipe is an EPIPE error, not a signal: a quiet exit, the same everywhere */
		signal(SIGPIPE, SIG_IGN);
		fflush(stdout);
		o->fd = STDOUT_FILENO;
		err = open_stream(o);
		if (err)
			elog("cannot write to standard output: %s", strerror(-err));
		return err;
	}
	err = open_path(o);
	if (err) {
		if (err != -EPERM)
			elog("cannot write %s: %s", path, strerror(-err));
		cli_output_abort(o);
	}
	return err;
}

int cli_output_open_unique(struct cli_output *o, const char *dir, const char *prefix,
			   const char *suffix)
{
	uid_t uid;
	gid_t gid;
	int fd, err;

	memset(o, 0, sizeof(*o));
	o->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fd = o->dirfd < 0 ? -errno : create_named(o, prefix, suffix, 0600);
	if (fd < 0) {
		elog("cannot write a file in %s: %s", dir, strerror(-fd));
		cli_output_abort(o);
		return fd;
	}
	/* the file is in place from the start (base): only a failure removes it */
	o->fd = fd;
	o->base = o->tmp;
	o->tmp = NULL;
	if (sudo_caller(&uid, &gid))
		(void)!fchown(fd, uid, gid);
	err = asprintf(&o->owned, "%s/%s", dir, o->base) < 0 ? (o->owned = NULL, -ENOMEM) :
								 open_stream(o);
	if (err) {
		elog("cannot write a file in %s: %s", dir, strerror(-err));
		if (!o->f) {
			close(fd);
			unlinkat(o->dirfd, o->base, 0);
		}
		cli_output_abort(o);
		return err;
	}
	o->path = o->owned;
	return 0;
}

int cli_output_error(const struct cli_output *o)
{
	return o->werr;
}

static void output_free(struct cli_output *o)
{
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->dirfd = -1;
	free(o->base);
	free(o->tmp);
	o->base = o->tmp = NULL;
}

/* The file, complete, at path: linked in (O_TMPFILE) or renamed over what was there. */
static int put_in_place(struct cli_output *o)
{
	char proc[64], *tmp = NULL;
	int err;

	if (o->owned) /* cli_output_open_unique: created in place */
		return 0;
	if (o->tmp)
		return renameat(o->dirfd, o->tmp, o->dirfd, o->base) ? -errno : 0;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	if (!linkat(AT_FDCWD, proc, o->dirfd, o->base, AT_SYMLINK_FOLLOW))
		return 0;
	if (errno != EEXIST)
		return -errno;
	/* something is there: linked under a random name, then renamed over it */
	for (int tries = 0; tries < 100; tries++) {
		err = random_name(&tmp, ".", ".schedprof-tmp");
		if (err)
			return err;
		if (!linkat(AT_FDCWD, proc, o->dirfd, tmp, AT_SYMLINK_FOLLOW))
			break;
		err = -errno;
		free(tmp);
		tmp = NULL;
		if (err != -EEXIST)
			return err;
	}
	if (!tmp)
		return -EEXIST;
	err = renameat(o->dirfd, tmp, o->dirfd, o->base) ? -errno : 0;
	if (err)
		unlinkat(o->dirfd, tmp, 0);
	free(tmp);
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
	if (fflush(o->f) || o->werr)
		err = o->werr ? -o->werr : -errno;
	fclose(o->f); /* the cookie's stream: its write errors are in werr, the fd is ours */
	o->f = NULL;
	if (!o->path) {
		return err && (err == -EPIPE || stdout_reader_gone()) ? -EPIPE : err;
	}
	if (!err && o->dirfd >= 0 && fsync(o->fd))
		err = -errno;
	if (!err && o->dirfd >= 0)
		err = put_in_place(o);
	close(o->fd);
	o->fd = -1;
	if (err && o->tmp)
		unlinkat(o->dirfd, o->tmp, 0);
	if (err && o->owned)
		unlinkat(o->dirfd, o->base, 0);
	if (!o->owned) /* else kept for o->path until cli_output_abort() */
		output_free(o);
	return err;
}

void cli_output_abort(struct cli_output *o)
{
	if (o->f) {
		fclose(o->f);
		o->f = NULL;
		if (o->path)
			close(o->fd);
		if (o->tmp)
			unlinkat(o->dirfd, o->tmp, 0);
		else if (o->owned)
			unlinkat(o->dirfd, o->base, 0);
	}
	output_free(o);
	free(o->owned);
	o->owned = NULL;
	o->path = NULL;
}
