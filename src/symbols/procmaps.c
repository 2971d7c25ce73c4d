/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * /proc/PID/maps parser. Each line is
 *   start-end perms pgoff major:minor inode [padding path]
 * with hex numbers except the decimal inode; the path runs to the end of the line. The
 * executable mappings alone can also come from the PROCMAP_QUERY ioctl on that file.
 */
#include "symbols/procmaps.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/types.h>

#include "base/testhook.h"
#include "base/util.h"

/* Parses at least one digit in base 16 or 10, stopping at the first non-digit. */
static bool parse_num(const char **p, unsigned int base, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;
	int d;

	for (; (d = hex_digit(*s)) >= 0 && (unsigned int)d < base; s++) {
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return false;
		v = v * base + (uint64_t)d;
	}
	if (s == *p)
		return false;
	*p = s;
	*ret = v;
	return true;
}

static bool expect(const char **p, char c)
{
	if (**p != c)
		return false;
	(*p)++;
	return true;
}

/* line has no trailing newline. Fills m (m->path allocated) or returns -EINVAL/-ENOMEM. */
static int parse_line(const char *line, struct proc_map *m)
{
	const char *p = line;
	uint64_t major, minor;
	size_t i;

	if (!parse_num(&p, 16, &m->start) || !expect(&p, '-') || !parse_num(&p, 16, &m->end) ||
	    !expect(&p, ' '))
		return -EINVAL;
	for (i = 0; i < 4; i++) {
		if (!p[i] || p[i] == ' ')
			return -EINVAL;
		m->perms[i] = p[i];
	}
	m->perms[4] = '\0';
	p += 4;
	if (!expect(&p, ' ') || !parse_num(&p, 16, &m->pgoff) || !expect(&p, ' ') ||
	    !parse_num(&p, 16, &major) || !expect(&p, ':') || !parse_num(&p, 16, &minor) ||
	    !expect(&p, ' ') || !parse_num(&p, 10, &m->inode))
		return -EINVAL;
	if (m->end < m->start || major > UINT32_MAX || minor > UINT32_MAX)
		return -EINVAL;
	m->dev_major = (uint32_t)major;
	m->dev_minor = (uint32_t)minor;
	if (*p && *p != ' ')
		return -EINVAL;
	while (*p == ' ')
		p++;
	m->path = strdup(p);
	return m->path ? 0 : -ENOMEM;
}

static int cmp_map(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* The next slot of *maps (n in use, *cap allocated), zeroed: NULL when out of memory. */
static struct proc_map *maps_next(struct proc_map **maps, size_t n, size_t *cap)
{
	if (n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct proc_map *p = realloc(*maps, ncap * sizeof(*p));

		if (!p)
			return NULL;
		*maps = p;
		*cap = ncap;
	}
	memset(&(*maps)[n], 0, sizeof((*maps)[n]));
	return &(*maps)[n];
}

static int parse_stream(FILE *f, struct proc_map **ret_maps, size_t *ret_n)
{
	struct proc_map *maps = NULL;
	size_t n = 0, cap = 0, linecap = 0;
	char *line = NULL;
	ssize_t len;
	int err = 0;

	errno = 0;
	while ((len = getline(&line, &linecap, f)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (!len)
			continue;
		if (!maps_next(&maps, n, &cap)) {
			err = -ENOMEM;
			goto err;
		}
		err = parse_line(line, &maps[n]);
		if (err)
			goto err;
		n++;
		errno = 0;
	}
	if (ferror(f)) {
		err = errno ? -errno : -EIO;
		goto err;
	}
	free(line);
	if (n > 1)
		qsort(maps, n, sizeof(*maps), cmp_map);
	*ret_maps = maps;
	*ret_n = n;
	return 0;

err:
	free(line);
	proc_maps__free(maps, n);
	return err;
}

int proc_maps__parse_file(const char *path, struct proc_map **ret_maps, size_t *ret_n)
{
	FILE *f;
	int err;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	err = parse_stream(f, ret_maps, ret_n);
	fclose(f);
	return err;
}

int proc_maps__read(int pid, struct proc_map **ret_maps, size_t *ret_n)
{
	char path[32];
	FILE *f;
	int err;

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	err = parse_stream(f, ret_maps, ret_n);
	fclose(f);
	return err;
}

/*
 * Keeps the mappings of maps[] that are executable, in place, but the vsyscall page: it is no
 * mapping of the process (the ioctl does not show it), and nothing is named in it.
 */
static size_t keep_exec(struct proc_map *maps, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (maps[i].perms[2] == 'x' && strcmp(maps[i].path, "[vsyscall]"))
			maps[k++] = maps[i];
		else
			free(maps[i].path);
	}
	return k;
}

/*
 * The kernel's struct procmap_query (include/uapi/linux/fs.h, 6.11): the build machine's headers
 * may predate it. The kernel takes any size it knows a prefix of.
 */
struct sp_procmap_query {
	__u64 size;
	__u64 query_flags;
	__u64 query_addr;
	__u64 vma_start;
	__u64 vma_end;
	__u64 vma_flags;
	__u64 vma_page_size;
	__u64 vma_offset;
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 vma_name_size;
	__u32 build_id_size;
	__u64 vma_name_addr;
	__u64 build_id_addr;
};

#define SP_PROCMAP_QUERY _IOWR('f', 17, struct sp_procmap_query)
enum {
	SP_PMQ_READABLE = 0x01,
	SP_PMQ_WRITABLE = 0x02,
	SP_PMQ_EXECUTABLE = 0x04,
	SP_PMQ_SHARED = 0x08,
	SP_PMQ_COVERING_OR_NEXT = 0x10,
};

/* The executable mappings of the open maps file fd, by address. */
static int query_exec(int fd, struct proc_map **ret_maps, size_t *ret_n)
{
	struct proc_map *maps = NULL, *m;
	struct sp_procmap_query q;
	size_t n = 0, cap = 0;
	uint64_t addr = 0;
	char name[PATH_MAX];
	int err;

	for (;;) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_flags = SP_PMQ_EXECUTABLE | SP_PMQ_COVERING_OR_NEXT;
		q.query_addr = addr;
		q.vma_name_addr = (__u64)(uintptr_t)name;
		q.vma_name_size = sizeof(name);
		if (ioctl(fd, SP_PROCMAP_QUERY, &q)) {
			if (errno == ENOENT) /* no executable mapping above addr */
				break;
			err = -errno;
			goto err;
		}
		if (q.vma_end <= addr || q.vma_end < q.vma_start) { /* never looping */
			err = -EINVAL;
			goto err;
		}
		m = maps_next(&maps, n, &cap);
		if (!m) {
			err = -ENOMEM;
			goto err;
		}
		m->start = q.vma_start;
		m->end = q.vma_end;
		m->pgoff = q.vma_offset;
		m->inode = q.inode;
		m->dev_major = q.dev_major;
		m->dev_minor = q.dev_minor;
		m->perms[0] = q.vma_flags & SP_PMQ_READABLE ? 'r' : '-';
		m->perms[1] = q.vma_flags & SP_PMQ_WRITABLE ? 'w' : '-';
		m->perms[2] = 'x';
		m->perms[3] = q.vma_flags & SP_PMQ_SHARED ? 's' : 'p';
		/* vma_name_size counts the NUL; 0: a mapping without a name (anonymous) */
		if (q.vma_name_size > sizeof(name) ||
		    (q.vma_name_size && name[q.vma_name_size - 1])) {
			err = -EINVAL;
			goto err;
		}
		m->path = strdup(q.vma_name_size ? name : "");
		if (!m->path) {
			err = -ENOMEM;
			goto err;
		}
		n++;
		addr = q.vma_end;
	}
	*ret_maps = maps;
	*ret_n = n;
	return 0;
err:
	proc_maps__free(maps, n);
	return err;
}

static int open_maps(int pid)
{
	char path[32];
	int fd;

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return fd;
}

int proc_maps__query_exec(int pid, struct proc_map **ret_maps, size_t *ret_n)
{
	int fd = open_maps(pid), err;

	if (fd < 0)
		return fd;
	err = query_exec(fd, ret_maps, ret_n);
	close(fd);
	return err;
}

/* Set once the kernel answered PROCMAP_QUERY with ENOTTY: it predates the ioctl. */
static int no_query;

int proc_maps__read_exec(int pid, struct proc_map **ret_maps, size_t *ret_n)
{
	struct proc_map *maps;
	size_t n;
	FILE *f;
	int fd, err;

	fd = open_maps(pid);
	if (fd < 0)
		return fd;
	if (!__atomic_load_n(&no_query, __ATOMIC_RELAXED) && !test_hook("SCHEDPROF_TEST_MAPS_TEXT")) {
		err = query_exec(fd, ret_maps, ret_n);
		/* a gone process or no memory answers for both ways; anything else: the text */
		if (!err || err == -ESRCH || err == -ENOMEM) {
			close(fd);
			return err;
		}
		if (err == -ENOTTY)
			__atomic_store_n(&no_query, 1, __ATOMIC_RELAXED);
	}
	f = fdopen(fd, "re");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	err = parse_stream(f, &maps, &n);
	fclose(f);
	if (err)
		return err;
	*ret_n = keep_exec(maps, n);
	*ret_maps = maps;
	return 0;
}

void proc_maps__free(struct proc_map *maps, size_t n)
{
	size_t i;

	if (!maps)
		return;
	for (i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}

const struct proc_map *proc_maps__find(const struct proc_map *maps, size_t n, uint64_t ip)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ip < maps[mid].start)
			hi = mid;
		else if (ip >= maps[mid].end)
			lo = mid + 1;
		else
			return &maps[mid];
	}
	return NULL;
}
