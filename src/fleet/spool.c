// SPDX-License-Identifier: BSD-2-Clause
/* The agent's on-disk queue: see spool.h. */
#include "fleet/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/util.h"

struct spool_item {
	uint64_t seq;
	uint64_t bytes;
};

struct spool {
	char *dir;
	int dfd;	/* the directory, opened once: every file is named relative to it */
	int lock_fd;	/* DIR/lock, flock()ed for the spool's life; holds the pid */
	int carry_fd;	/* DIR/carry, overwritten in place (a full disk still takes it); -1 */
	uint64_t limit;
	uint64_t next_seq;
	pthread_mutex_t lock;
	struct spool_item *v; /* by seq, ascending */
	size_t n, cap;
	uint64_t bytes;
	uint64_t in_flight; /* 0: none */
	spool_drop_fn on_drop;
	void *on_drop_ctx;
};

/* DIR/carry: two counts in a record of fixed length, rewritten where it is */
#define CARRY_LEN 42

static void batch_name(uint64_t seq, char buf[32])
{
	snprintf(buf, 32, "%020" PRIu64 ".batch", seq);
}

/*
 * Writes name whole or not at all: a temporary file renamed into place. The temporary file
 * is created, never opened: a leftover or a link planted under its name is removed first
 * (the link, not what it names), and O_NOFOLLOW refuses a link planted in between.
 */
static int write_file(const struct spool *s, const char *name, const char *text, size_t len)
{
	char tmp[64];
	int fd, err = 0;
	size_t off = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= sizeof(tmp))
		return -ENAMETOOLONG;
	for (int tries = 0;; tries++) {
		fd = openat(s->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			break;
		if (errno != EEXIST || tries)
			return -errno;
		if (unlinkat(s->dfd, tmp, 0) && errno != ENOENT)
			return -errno;
	}
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = w < 0 ? -errno : -EIO;
			break;
		}
		off += w;
	}
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(s->dfd, tmp, s->dfd, name))
		err = -errno;
	if (err)
		unlinkat(s->dfd, tmp, 0);
	return err;
}

/*
 * A batch gzip'd in memory (level 1: JSON rows that repeat their stamp shrink about tenfold
 * for little CPU), so the room made in the spool is for what the file will take.
 */
static int gzip_mem(const char *text, size_t len, unsigned char **ret, size_t *ret_len)
{
	z_stream z = { 0 };
	size_t cap;
	unsigned char *out;
	int rc;

	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, len);
	out = malloc(cap);
	if (!out) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (unsigned char *)text;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = cap;
	rc = deflate(&z, Z_FINISH);
	*ret_len = cap - z.avail_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out);
		return -EIO;
	}
	*ret = out;
	return 0;
}

/*
 * Batch name back: *ret (malloc'ed, NUL-terminated) and its length. -ENODATA: the file is
 * empty; -EBADMSG: not a regular file, or not gzip (zlib would pass other bytes through).
 */
static int read_gz(const struct spool *s, const char *name, char **ret, size_t *ret_len)
{
	int fd = openat(s->dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	size_t n = 0, cap = 0;
	struct stat st;
	char *b = NULL;
	gzFile g;
	int got;

	if (fd < 0)
		return errno == ELOOP ? -EBADMSG : -errno;
	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) || !st.st_size) {
		int err = !S_ISREG(st.st_mode) ? -EBADMSG : -ENODATA;

		close(fd);
		return err;
	}
	g = gzdopen(fd, "rb");
	if (!g) {
		close(fd);
		return -ENOMEM;
	}
	do {
		if (grow((void **)&b, &cap, n + 65537, 1)) {
			free(b);
			gzclose(g);
			return -ENOMEM;
		}
		got = gzread(g, b + n, 65536);
		if (got > 0)
			n += got;
	} while (got > 0);
	if (got == 0 && gzdirect(g))
		got = -2; /* not gzip */
	gzclose(g);
	if (got < 0) {
		free(b);
		return got == -2 ? -EBADMSG : -EIO;
	}
	b[n] = '\0';
	*ret = b;
	*ret_len = n;
	return 0;
}

static int cmp_item(const void *a, const void *b)
{
	const struct spool_item *x = a, *y = b;

	return (x->seq > y->seq) - (x->seq < y->seq);
}

static void say(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (!why || !whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

/*
 * DIR/seq: the next sequence number, 1 to SPOOL_SEQ_MAX and nothing else. Anything else is
 * refused, not repaired: starting again from 1 would give this boot's new intervals the
 * numbers of old ones, which the warehouse would then take for copies of them.
 */
static int load_seq(struct spool *s, char *why, size_t whylen)
{
	char buf[64];
	int fd = openat(s->dfd, "seq", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;
	uint64_t v;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (parse_u64(buf, 1, SPOOL_SEQ_MAX, &v)) {
		for (char *p = buf; *p; p++)
			if (*p < ' ' || *p > '~' || *p == '\'')
				*p = '?';
		say(why, whylen, "its seq file holds '%.32s', not a sequence number (1 to %" PRIu64
		    "): correct it, or remove it to number from 1 again", buf, (uint64_t)SPOOL_SEQ_MAX);
		return -EBADMSG;
	}
	s->next_seq = v;
	return 0;
}

static int load(struct spool *s, char *why, size_t whylen)
{
	struct dirent *de;
	DIR *d;
	int err = load_seq(s, why, whylen), fd;

	if (err)
		return err;
	fd = dup(s->dfd);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	while (!err && (de = readdir(d))) {
		const char *dot = strchr(de->d_name, '.');
		struct stat st;
		uint64_t seq;

		if (!dot)
			continue;
		if (!strcmp(dot, ".batch.tmp") || !strcmp(dot, ".tmp")) {
			unlinkat(s->dfd, de->d_name, 0); /* a write that never finished */
			continue;
		}
		if (strcmp(dot, ".batch") || parse_u64(strndupa(de->d_name, dot - de->d_name), 1,
						       SPOOL_SEQ_MAX, &seq))
			continue;
		if (fstatat(s->dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v))) {
			err = -ENOMEM;
			break;
		}
		s->v[s->n++] = (struct spool_item){ seq, (uint64_t)st.st_size };
		s->bytes += st.st_size;
		if (seq >= s->next_seq)
			s->next_seq = seq + 1;
	}
	closedir(d);
	if (s->n > 1) /* an empty spool has no array yet */
		qsort(s->v, s->n, sizeof(*s->v), cmp_item);
	if (!s->next_seq)
		s->next_seq = 1;
	return err;
}

/* mkdir -p, each directory made 0700 */
static int make_dirs(const char *dir)
{
	char p[4096];
	size_t len = strlen(dir);

	if (len >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, len + 1);
	for (char *q = p + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = '\0';
		if (mkdir(p, 0700) && errno != EEXIST)
			return -errno;
		*q = '/';
	}
	return mkdir(p, 0700) && errno != EEXIST ? -errno : 0;
}

/*
 * Whoever may write the spool decides what the agent sends (rows, hosts, loss counts) and,
 * through links, where an agent running as root writes: only a directory of the agent's
 * own user that no one else may write is used.
 */
static int check_trust(const struct spool *s, char *why, size_t whylen)
{
	struct stat st;

	if (fstat(s->dfd, &st))
		return -errno;
	if (st.st_uid != geteuid()) {
		say(why, whylen, "it belongs to uid %u, not to this agent's user (uid %u): whoever "
		    "owns the spool controls what the agent sends; give --spool a directory of "
		    "your own", (unsigned int)st.st_uid, (unsigned int)geteuid());
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		say(why, whylen, "it is writable by its group or others (mode %04o): chmod 700 it, "
		    "or give --spool a directory of your own", (unsigned int)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* DIR/lock, held with flock() while the spool is open: one agent per spool */
static int take_lock(struct spool *s, char *why, size_t whylen)
{
	char buf[32];
	ssize_t n;
	int len;

	s->lock_fd = openat(s->dfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->lock_fd < 0) {
		int err = -errno;

		say(why, whylen, "cannot write in it: %s", strerror(-err));
		return err;
	}
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB)) {
		int err = -errno;

		if (err != -EWOULDBLOCK) {
			say(why, whylen, "cannot lock it: %s", strerror(-err));
			return err;
		}
		n = pread(s->lock_fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		buf[strspn(buf, "0123456789")] = '\0';
		say(why, whylen, "another agent (pid %s) uses it: stop that one first, or give this "
		    "one another --spool", buf[0] ? buf : "unknown");
		return -EBUSY;
	}
	len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(s->lock_fd, 0) == 0 && pwrite(s->lock_fd, buf, len, 0) != len)
		(void)ftruncate(s->lock_fd, 0); /* a full disk: the lock holds all the same */
	return 0;
}

/* DIR/carry made its full length now, so that rewriting it later needs no new space */
static void open_carry(struct spool *s)
{
	char buf[CARRY_LEN + 1];
	unsigned long long d = 0, u = 0;
	struct stat st;
	ssize_t n;

	s->carry_fd = openat(s->dfd, "carry", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->carry_fd < 0)
		return;
	if (fstat(s->carry_fd, &st) || !S_ISREG(st.st_mode)) {
		close(s->carry_fd);
		s->carry_fd = -1;
		return;
	}
	if (st.st_size == CARRY_LEN)
		return;
	/* a shorter record ("D U\n", as earlier versions wrote it): padded to the length */
	n = pread(s->carry_fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	if (sscanf(buf, "%llu %llu", &d, &u) != 2)
		d = u = 0;
	if (!spool_carry_save(s, d, u))
		(void)ftruncate(s->carry_fd, CARRY_LEN);
}

int spool_open(const char *dir, uint64_t limit, struct spool **ret, char *why, size_t whylen)
{
	struct spool *s = calloc(1, sizeof(*s));
	char buf[32];
	int err, n;

	*ret = NULL;
	say(why, whylen, "%s", "");
	if (!s)
		return -ENOMEM;
	s->dfd = s->lock_fd = s->carry_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	s->limit = limit;
	s->dir = strdup(dir);
	err = s->dir ? make_dirs(dir) : -ENOMEM;
	if (!err) {
		/* a link would lend the spool's rules (and its *.tmp cleaning) to any directory */
		s->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (s->dfd < 0) {
			struct stat st;

			err = -errno;
			/* O_DIRECTORY says ENOTDIR of a link, O_NOFOLLOW ELOOP */
			if (err == -ELOOP || (err == -ENOTDIR && !lstat(dir, &st) &&
					      S_ISLNK(st.st_mode))) {
				err = -ELOOP;
				say(why, whylen, "it is a symbolic link: give --spool the directory "
				    "itself");
			}
		}
	}
	err = err ?: check_trust(s, why, whylen) ?: take_lock(s, why, whylen) ?:
		     load(s, why, whylen);
	if (!err) {
		/* the sequence number written now: a spool that cannot be written is refused
		 * here, not found out interval by interval (a full disk may be freed: taken) */
		n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", s->next_seq);
		err = write_file(s, "seq", buf, n);
		if (err == -ENOSPC || err == -EDQUOT)
			err = 0;
		else if (err)
			say(why, whylen, "cannot write in it: %s", strerror(-err));
	}
	if (err) {
		spool_close(s);
		return err;
	}
	open_carry(s);
	*ret = s;
	return 0;
}

void spool_close(struct spool *s)
{
	if (!s)
		return;
	if (s->carry_fd >= 0)
		close(s->carry_fd);
	if (s->lock_fd >= 0)
		close(s->lock_fd); /* the lock goes with it */
	if (s->dfd >= 0)
		close(s->dfd);
	pthread_mutex_destroy(&s->lock);
	free(s->v);
	free(s->dir);
	free(s);
}

int spool_next_seq(struct spool *s, uint64_t *ret_seq)
{
	char buf[32];
	int err, n;

	pthread_mutex_lock(&s->lock);
	if (s->next_seq > SPOOL_SEQ_MAX) {
		pthread_mutex_unlock(&s->lock);
		return -EOVERFLOW;
	}
	n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", s->next_seq + 1);
	err = write_file(s, "seq", buf, n);
	if (!err)
		*ret_seq = s->next_seq++;
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* Drops item i (the lock held). */
static void drop(struct spool *s, size_t i)
{
	char name[32];

	batch_name(s->v[i].seq, name);
	unlinkat(s->dfd, name, 0);
	s->bytes -= s->v[i].bytes;
	memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof(*s->v));
	s->n--;
}

void spool_on_drop(struct spool *s, spool_drop_fn fn, void *ctx)
{
	s->on_drop = fn;
	s->on_drop_ctx = ctx;
}

/* Drops item i to make room: the hook sees its text first (the lock held). */
static void evict(struct spool *s, size_t i)
{
	char name[32], *text;
	size_t len;

	batch_name(s->v[i].seq, name);
	if (s->on_drop && !read_gz(s, name, &text, &len)) {
		s->on_drop(s->on_drop_ctx, text, len);
		free(text);
	}
	drop(s, i);
}

int spool_put(struct spool *s, uint64_t seq, const char *text, size_t len, uint64_t *ret_dropped,
	      uint64_t *ret_first, uint64_t *ret_last)
{
	unsigned char *gz = NULL;
	char name[32];
	size_t size;
	int err;

	*ret_dropped = *ret_first = *ret_last = 0;
	err = gzip_mem(text, len, &gz, &size);
	if (err)
		return err;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; s->bytes + size > s->limit && i < s->n;) {
		if (s->v[i].seq == s->in_flight) {
			i++;
			continue;
		}
		if (!*ret_dropped)
			*ret_first = s->v[i].seq;
		*ret_last = s->v[i].seq;
		++*ret_dropped;
		evict(s, i);
	}
	if (s->bytes + size > s->limit) {
		/* larger than the limit alone, or than what the interval being sent leaves */
		if (s->on_drop)
			s->on_drop(s->on_drop_ctx, text, len);
		++*ret_dropped;
		if (!*ret_first)
			*ret_first = seq;
		*ret_last = seq;
		goto out;
	}
	batch_name(seq, name);
	err = write_file(s, name, (const char *)gz, size);
	if (!err && grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v))) {
		unlinkat(s->dfd, name, 0);
		err = -ENOMEM;
	}
	if (!err) {
		s->v[s->n++] = (struct spool_item){ seq, size };
		s->bytes += size;
	}
out:
	pthread_mutex_unlock(&s->lock);
	free(gz);
	return err;
}

int spool_take(struct spool *s, uint64_t *ret_seq, char **ret_text, size_t *ret_len)
{
	char name[32];
	uint64_t seq;
	int err;

	pthread_mutex_lock(&s->lock);
	if (!s->n) {
		pthread_mutex_unlock(&s->lock);
		return -ENOENT;
	}
	seq = s->v[0].seq;
	s->in_flight = seq;
	pthread_mutex_unlock(&s->lock);
	/* read outside the lock: the tracing thread may queue meanwhile, never drop this one */
	*ret_seq = seq;
	*ret_text = NULL;
	batch_name(seq, name);
	err = read_gz(s, name, ret_text, ret_len);
	if (err == -ENOMEM)
		spool_done(s, seq, false); /* try again later */
	else if (err)
		spool_done(s, seq, true); /* gone, empty or not gzip: it cannot be sent, ever */
	return err == -ENOENT ? -EIO : err;
}

void spool_done(struct spool *s, uint64_t seq, bool delivered)
{
	pthread_mutex_lock(&s->lock);
	s->in_flight = 0;
	if (delivered)
		for (size_t i = 0; i < s->n; i++)
			if (s->v[i].seq == seq) {
				drop(s, i);
				break;
			}
	pthread_mutex_unlock(&s->lock);
}

size_t spool_count(struct spool *s, uint64_t *ret_bytes)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->n;
	if (ret_bytes)
		*ret_bytes = s->bytes;
	pthread_mutex_unlock(&s->lock);
	return n;
}

int spool_carry_save(struct spool *s, uint64_t dropped, uint64_t unwritten)
{
	char buf[CARRY_LEN + 1];

	snprintf(buf, sizeof(buf), "%20" PRIu64 " %20" PRIu64 "\n", dropped, unwritten);
	if (s->carry_fd < 0)
		return write_file(s, "carry", buf, CARRY_LEN);
	errno = 0;
	if (pwrite(s->carry_fd, buf, CARRY_LEN, 0) != CARRY_LEN)
		return errno ? -errno : -ENOSPC; /* a short write: the disk is full */
	return 0;
}

void spool_carry_load(struct spool *s, uint64_t *ret_dropped, uint64_t *ret_unwritten)
{
	char buf[CARRY_LEN + 1];
	unsigned long long d = 0, u = 0;
	int fd = s->carry_fd >= 0 ? s->carry_fd :
				    openat(s->dfd, "carry", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	*ret_dropped = *ret_unwritten = 0;
	if (fd < 0)
		return;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (fd != s->carry_fd)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (sscanf(buf, "%llu %llu", &d, &u) == 2) {
		*ret_dropped = d;
		*ret_unwritten = u;
	}
}
