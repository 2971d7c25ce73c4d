// SPDX-License-Identifier: BSD-2-Clause
/* CPU quotas and steal from the kernel's text files (cgquota.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "rows/cgquota.h"

/* An unsigned decimal at *p (after blanks), *p moved past it. false when there is none. */
static bool take_u64(const char **p, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*ret = v;
	return true;
}

static bool at_end(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	return !*p;
}

int cgq_parse_cpu_max(const char *text, uint64_t *ret_quota_us, uint64_t *ret_period_us)
{
	const char *p = text;
	uint64_t quota = 0, period;

	if (!strncmp(p, "max", 3) && (p[3] == ' ' || p[3] == '\t'))
		p += 3;
	else if (!take_u64(&p, &quota) || !quota)
		return -EINVAL;
	if (!take_u64(&p, &period) || !period || !at_end(p))
		return -EINVAL;
	*ret_quota_us = quota;
	*ret_period_us = period;
	return 0;
}

int cgq_parse_us(const char *text, uint64_t *ret_us)
{
	const char *p = text;
	uint64_t v;

	while (*p == ' ')
		p++;
	if (!strncmp(p, "-1", 2) && at_end(p + 2)) {
		*ret_us = 0;
		return 0;
	}
	if (!take_u64(&p, &v) || !at_end(p))
		return -EINVAL;
	*ret_us = v;
	return 0;
}

int cgq_parse_cpu_stat(const char *text, uint64_t *ret_nr, uint64_t *ret_throttled_ns)
{
	bool nr = false, t = false;
	const char *line = text;

	while (line && *line) {
		const char *p = strchr(line, ' ');
		const char *next = strchr(line, '\n');
		size_t klen = p ? (size_t)(p - line) : 0;
		uint64_t v;

		if (p && (!next || p < next) && take_u64(&p, &v)) {
			if (klen == 12 && !strncmp(line, "nr_throttled", klen)) {
				*ret_nr = v;
				nr = true;
			} else if (klen == 14 && !strncmp(line, "throttled_time", klen)) {
				*ret_throttled_ns = v; /* v1: ns */
				t = true;
			} else if (klen == 14 && !strncmp(line, "throttled_usec", klen)) {
				*ret_throttled_ns = v > UINT64_MAX / 1000 ? UINT64_MAX : v * 1000;
				t = true;
			}
		}
		line = next ? next + 1 : NULL;
	}
	return nr && t ? 0 : -ENOENT;
}

int cgq_parse_steal(const char *text, long hz, struct sp_cpu_steal **ret, size_t *ret_n)
{
	struct sp_cpu_steal *v = NULL, *nv;
	const char *line = text;
	size_t n = 0;

	if (hz <= 0)
		return -EINVAL;
	while (line && *line) {
		const char *next = strchr(line, '\n');
		const char *p = line + 3;
		uint64_t cpu, x = 0;
		int i;

		if (strncmp(line, "cpu", 3) || *p < '0' || *p > '9')
			goto next_line;
		if (!take_u64(&p, &cpu) || cpu > INT32_MAX)
			goto bad;
		/* user nice system idle iowait irq softirq steal */
		for (i = 0; i < 8; i++)
			if (!take_u64(&p, &x))
				goto bad;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		v[n].cpu = (int)cpu;
		v[n].steal_ns = x > UINT64_MAX / 1000000000u ? UINT64_MAX
							     : x * 1000000000u / (uint64_t)hz;
		n++;
next_line:
		line = next ? next + 1 : NULL;
	}
	*ret = v;
	*ret_n = n;
	return 0;
bad:
	free(v);
	return -EINVAL;
}

int cgq_steal_delta(struct sp_steal *s, const struct sp_cpu_steal *start, size_t nstart,
		    const struct sp_cpu_steal *end, size_t nend)
{
	free(s->cpus);
	s->cpus = calloc(nend ? nend : 1, sizeof(*s->cpus));
	s->ncpus = s->cpus_cap = 0;
	s->steal_ns = 0;
	if (!s->cpus)
		return -ENOMEM;
	s->cpus_cap = nend ? nend : 1;
	for (size_t i = 0; i < nend; i++) {
		uint64_t from = 0;

		for (size_t j = 0; j < nstart; j++)
			if (start[j].cpu == end[i].cpu)
				from = start[j].steal_ns;
		s->cpus[i].cpu = end[i].cpu;
		s->cpus[i].steal_ns = end[i].steal_ns > from ? end[i].steal_ns - from : 0;
		s->steal_ns += s->cpus[i].steal_ns;
	}
	s->ncpus = nend;
	s->present = true;
	return 0;
}

static int by_throttled(const void *a, const void *b)
{
	const struct sp_throttler *x = a, *y = b;

	if (x->throttled_ns != y->throttled_ns)
		return x->throttled_ns < y->throttled_ns ? 1 : -1;
	return strcmp(x->path ? x->path : "", y->path ? y->path : "");
}

void cgq_sort_throttlers(struct sp_budget *b)
{
	if (b->nthrottlers > 1)
		qsort(b->throttlers, b->nthrottlers, sizeof(*b->throttlers), by_throttled);
}
