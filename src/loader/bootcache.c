// SPDX-License-Identifier: BSD-2-Clause
/* Per-boot caches of what start-up learns about the kernel (bootcache.h). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "loader/bootcache.h"

#define BOOT_CACHE_DIR "/run/schedprof"

/* The file: this header, then size bytes of data. */
struct cache_header {
	char magic[16];
	char release[65];
	char boot_id[40];
	char pad[7];
	uint32_t size;
	uint32_t pad2;
};

static int read_boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	int err = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		err = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return err ? err : (buf[0] ? 0 : -EIO);
}

static int make_header(struct cache_header *h, const char *magic, size_t size)
{
	struct utsname u;

	memset(h, 0, sizeof(*h));
	if (strlen(magic) > sizeof(h->magic) || size > UINT32_MAX)
		return -EINVAL;
	memcpy(h->magic, magic, strlen(magic));
	if (uname(&u))
		return -errno;
	snprintf(h->release, sizeof(h->release), "%s", u.release);
	h->size = (uint32_t)size;
	return read_boot_id(h->boot_id, sizeof(h->boot_id));
}

static void cache_path(const char *dir, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", dir ? dir : BOOT_CACHE_DIR, name);
}

/*
 * Opens dir/name for reading when it is a regular file of root's or ours that nobody else
 * may write (a cache is trusted only as far as its writer is; a run with capabilities but
 * not root reads root's). The fd, or -ENOENT (no valid cache).
 */
static int cache_open(const char *dir, const char *name)
{
	char path[4096];
	struct stat st;
	int fd;

	cache_path(dir, name, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT || errno == ELOOP ? -ENOENT : -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_uid && st.st_uid != geteuid()) ||
	    (st.st_mode & 022)) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

/* Reads the header and checks it against this boot and magic: the data's size, or -ENOENT. */
static ssize_t cache_check_header(int fd, const char *magic)
{
	struct cache_header want, got;

	if (make_header(&want, magic, 0))
		return -ENOENT;
	if (read(fd, &got, sizeof(got)) != (ssize_t)sizeof(got) ||
	    memcmp(got.magic, want.magic, sizeof(got.magic)) ||
	    strncmp(got.release, want.release, sizeof(got.release)) ||
	    strncmp(got.boot_id, want.boot_id, sizeof(got.boot_id)))
		return -ENOENT;
	return got.size;
}

int boot_cache_load(const char *dir, const char *name, const char *magic, void *data, size_t size)
{
	void *buf;
	size_t n;
	int err = boot_cache_load_alloc(dir, name, magic, size, &buf, &n);

	if (err)
		return err;
	if (n == size)
		memcpy(data, buf, size);
	else
		err = -ENOENT;
	free(buf);
	return err;
}

int boot_cache_load_alloc(const char *dir, const char *name, const char *magic, size_t max,
			  void **ret_data, size_t *ret_size)
{
	ssize_t size, n;
	char extra;
	void *buf;
	int fd;

	if (strlen(magic) > sizeof(((struct cache_header *)0)->magic))
		return -EINVAL;
	fd = cache_open(dir, name);
	if (fd < 0)
		return fd;
	size = cache_check_header(fd, magic);
	if (size < 0 || (size_t)size > max) {
		close(fd);
		return -ENOENT;
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	/* exactly size bytes: a short or a longer file is not this cache */
	n = size ? read(fd, buf, size) : 0;
	if (n != size || read(fd, &extra, 1) != 0) {
		close(fd);
		free(buf);
		return -ENOENT;
	}
	close(fd);
	*ret_data = buf;
	*ret_size = size;
	return 0;
}

/*
 * /run/schedprof, root's and 0755: anyone may read the shared caches in it, nobody else write.
 * An older 0700 one of ours is opened up when a shared cache goes in.
 */
static int make_dir(bool shared)
{
	struct stat st;

	if (mkdir(BOOT_CACHE_DIR, 0755) && errno != EEXIST)
		return -errno;
	if (!shared || lstat(BOOT_CACHE_DIR, &st) || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 07777) == 0755)
		return 0;
	return chmod(BOOT_CACHE_DIR, 0755) ? -errno : 0;
}

static int store(const char *dir, const char *name, const char *magic, const void *data,
		 size_t size, bool shared)
{
	struct cache_header h;
	char path[4096], tmp[4200];
	int fd, err;

	err = make_header(&h, magic, size);
	if (err)
		return err;
	if (!dir && (err = make_dir(shared)))
		return err;
	cache_path(dir, name, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (shared && fchmod(fd, 0644)) /* the umask aside */
		err = -errno;
	else if (write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) ||
		 write(fd, data, size) != (ssize_t)size)
		err = -EIO;
	else if (fsync(fd))
		err = -errno;
	close(fd);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int boot_cache_store(const char *dir, const char *name, const char *magic, const void *data,
		     size_t size)
{
	return store(dir, name, magic, data, size, false);
}

int boot_cache_store_shared(const char *dir, const char *name, const char *magic,
			    const void *data, size_t size)
{
	return store(dir, name, magic, data, size, true);
}
