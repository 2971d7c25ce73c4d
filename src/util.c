// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "util.h"

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int parse_seconds(const char *s, uint64_t *ret_ns)
{
	double d;
	char *end;

	if (!s || !*s || ((*s < '0' || *s > '9') && *s != '.'))
		return -EINVAL;
	errno = 0;
	d = strtod(s, &end);
	if (errno || *end || !(d > 0) || d > 1e7)
		return -EINVAL;
	*ret_ns = (uint64_t)(d * 1e9);
	return *ret_ns ? 0 : -EINVAL;
}

int parse_pid_list(const char *s, int **ret, size_t *ret_n)
{
	int *pids = NULL;
	size_t n = 0, cap = 0;
	char *copy, *tok, *save = NULL;
	int err = 0;

	copy = xstrdup(s);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		err = parse_u64(tok, 1, 0x3fffffff, &v);
		if (err)
			goto out;
		err = grow((void **)&pids, &cap, n + 1, sizeof(*pids));
		if (err)
			goto out;
		pids[n++] = (int)v;
	}
	if (!n)
		err = -EINVAL;
out:
	free(copy);
	if (err) {
		free(pids);
		return err;
	}
	*ret = pids;
	*ret_n = n;
	return 0;
}

uint64_t now_ns(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

int grow(void **v, size_t *cap, size_t n, size_t elt)
{
	size_t ncap;
	void *p;

	if (n <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < n)
		ncap *= 2;
	p = realloc(*v, ncap * elt);
	if (!p)
		return -ENOMEM;
	memset((char *)p + *cap * elt, 0, (ncap - *cap) * elt);
	*v = p;
	*cap = ncap;
	return 0;
}

const char *fmt_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns >= NSEC_PER_SEC)
		snprintf(buf, len, "%.3fs", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, len, "%.1fms", ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	return buf;
}
