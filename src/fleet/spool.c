// SPDX-License-Identifier: BSD-2-Clause
/* The agent's on-disk queue: see spool.h. */
#include "spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util.h"

struct spool_item {
	uint64_t seq;
	uint64_t bytes;
};

struct spool {
	char *dir;
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

static int path_of(const struct spool *s, uint64_t seq, const char *ext, char *buf, size_t len)
{
	int n = seq ? snprintf(buf, len, "%s/%020" PRIu64 ".%s", s->dir, seq, ext)
		    : snprintf(buf, len, "%s/%s", s->dir, ext);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Writes the file whole or not at all: a temporary file renamed into place. */
static int write_file(const char *path, const char *text, size_t len)
{
	char tmp[4096 + 8];
	int fd, err = 0;
	size_t off = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
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
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
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

/* A batch back: *ret (malloc'ed, NUL-terminated) and its length. */
static int read_gz(const char *path, char **ret, size_t *ret_len)
{
	gzFile g = gzopen(path, "rbe");
	size_t n = 0, cap = 0;
	char *b = NULL;
	int got;

	if (!g)
		return errno ? -errno : -ENOMEM;
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
	gzclose(g);
	if (got < 0) {
		free(b);
		return -EIO;
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

static int load(struct spool *s)
{
	char path[4096], buf[32];
	struct dirent *de;
	DIR *d;
	FILE *f;
	int err = 0;

	if (path_of(s, 0, "seq", path, sizeof(path)) == 0 && (f = fopen(path, "re"))) {
		if (fgets(buf, sizeof(buf), f))
			s->next_seq = strtoull(buf, NULL, 10);
		fclose(f);
	}
	d = opendir(s->dir);
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		const char *dot = strchr(de->d_name, '.');
		struct stat st;
		uint64_t seq;

		if (!dot)
			continue;
		if (!strcmp(dot, ".batch.tmp") || !strcmp(dot, ".tmp")) {
			unlinkat(dirfd(d), de->d_name, 0); /* a write that never finished */
			continue;
		}
		if (strcmp(dot, ".batch") || parse_u64(strndupa(de->d_name, dot - de->d_name), 1,
						       UINT64_MAX, &seq))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0))
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

int spool_open(const char *dir, uint64_t limit, struct spool **ret)
{
	struct spool *s = calloc(1, sizeof(*s));
	int err;

	*ret = NULL;
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->limit = limit;
	s->dir = strdup(dir);
	if (!s->dir) {
		spool_close(s);
		return -ENOMEM;
	}
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		spool_close(s);
		return err;
	}
	err = load(s);
	if (err) {
		spool_close(s);
		return err;
	}
	*ret = s;
	return 0;
}

void spool_close(struct spool *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s->v);
	free(s->dir);
	free(s);
}

int spool_next_seq(struct spool *s, uint64_t *ret_seq)
{
	char path[4096], buf[32];
	int err, n;

	pthread_mutex_lock(&s->lock);
	n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", s->next_seq + 1);
	err = path_of(s, 0, "seq", path, sizeof(path)) ?: write_file(path, buf, n);
	if (!err)
		*ret_seq = s->next_seq++;
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* Drops item i (the lock held). */
static void drop(struct spool *s, size_t i)
{
	char path[4096];

	if (!path_of(s, s->v[i].seq, "batch", path, sizeof(path)))
		unlink(path);
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
	char path[4096], *text;
	size_t len;

	if (s->on_drop && !path_of(s, s->v[i].seq, "batch", path, sizeof(path)) &&
	    !read_gz(path, &text, &len)) {
		s->on_drop(s->on_drop_ctx, text, len);
		free(text);
	}
	drop(s, i);
}

int spool_put(struct spool *s, uint64_t seq, const char *text, size_t len, uint64_t *ret_dropped,
	      uint64_t *ret_first, uint64_t *ret_last)
{
	unsigned char *gz = NULL;
	char path[4096];
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
	err = path_of(s, seq, "batch", path, sizeof(path)) ?:
	      write_file(path, (const char *)gz, size);
	if (!err && grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v))) {
		unlink(path);
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
	char path[4096];
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
	err = path_of(s, seq, "batch", path, sizeof(path)) ?: read_gz(path, ret_text, ret_len);
	if (err == -ENOMEM)
		spool_done(s, seq, false); /* try again later */
	else if (err)
		spool_done(s, seq, true); /* gone or not gzip: it cannot be sent, ever */
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
	char path[4096], buf[64];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64 " %" PRIu64 "\n", dropped, unwritten);

	if (path_of(s, 0, "carry", path, sizeof(path)))
		return -ENAMETOOLONG;
	if (!dropped && !unwritten)
		return unlink(path) && errno != ENOENT ? -errno : 0;
	return write_file(path, buf, n);
}

void spool_carry_load(struct spool *s, uint64_t *ret_dropped, uint64_t *ret_unwritten)
{
	char path[4096];
	unsigned long long d = 0, u = 0;
	FILE *f;

	*ret_dropped = *ret_unwritten = 0;
	if (path_of(s, 0, "carry", path, sizeof(path)) || !(f = fopen(path, "re")))
		return;
	if (fscanf(f, "%llu %llu", &d, &u) == 2) {
		*ret_dropped = d;
		*ret_unwritten = u;
	}
	fclose(f);
	unlink(path);
}
