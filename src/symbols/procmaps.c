/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * /proc/PID/maps parser. Each line is
 *   start-end perms pgoff major:minor inode [padding path]
 * with hex numbers except the decimal inode; the path runs to the end of the line.
 */
#include "symbols/procmaps.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct proc_map *p = realloc(maps, ncap * sizeof(*p));

			if (!p) {
				err = -ENOMEM;
				goto err;
			}
			maps = p;
			cap = ncap;
		}
		memset(&maps[n], 0, sizeof(maps[n]));
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
