// SPDX-License-Identifier: BSD-2-Clause
/* CPU quotas and steal for the schedules view's budget (quota.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "collect/quota.h"
#include "rows/cgquota.h"
#include "base/log.h"
#include "base/util.h"

/* A cgroup tree is shallow; deeper directories are not walked. */
#define CGQ_MAX_DEPTH 16

/* Has comma-separated opts the word w? */
static bool has_opt(const char *opts, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = opts; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, w, n) && (p[n] == ',' || p[n] == '\0' || p[n] == '\n'))
			return true;
	return false;
}

/* The cpu controller's hierarchy: a v1 mount with "cpu", else the first cgroup2 mount. */
static int find_root(struct cgq_state *st)
{
	char line[1024], mnt[512], fstype[64], opts[512], v2[512] = "";
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 ||
		    sscanf(dash, " - %63s %*s %511s", fstype, opts) != 2)
			continue;
		if (!strcmp(fstype, "cgroup") && has_opt(opts, "cpu")) {
			st->root = strdup(mnt);
			st->v2 = false;
			break;
		}
		if (!strcmp(fstype, "cgroup2") && !v2[0])
			snprintf(v2, sizeof(v2), "%s", mnt);
	}
	fclose(f);
	if (!st->root && v2[0]) {
		st->root = strdup(v2);
		st->v2 = true;
	}
	return st->root ? 0 : -ENOENT;
}

/* dir's quota: 0 and *ret_quota_us 0 when it has none. */
static int read_quota(const struct cgq_state *st, const char *dir, uint64_t *ret_quota_us,
		      uint64_t *ret_period_us)
{
	char path[PATH_MAX], buf[128];
	int err;

	*ret_quota_us = 0;
	if (st->v2) {
		snprintf(path, sizeof(path), "%s/cpu.max", dir);
		err = read_small_file(path, buf, sizeof(buf));
		return err ? err : cgq_parse_cpu_max(buf, ret_quota_us, ret_period_us);
	}
	snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir);
	err = read_small_file(path, buf, sizeof(buf)) ?: cgq_parse_us(buf, ret_quota_us);
	if (err || !*ret_quota_us)
		return err;
	snprintf(path, sizeof(path), "%s/cpu.cfs_period_us", dir);
	return read_small_file(path, buf, sizeof(buf)) ?: cgq_parse_us(buf, ret_period_us);
}

static int read_stat(const char *dir, uint64_t *ret_nr, uint64_t *ret_ns)
{
	char path[PATH_MAX], buf[1024];

	snprintf(path, sizeof(path), "%s/cpu.stat", dir);
	return read_small_file(path, buf, sizeof(buf)) ?: cgq_parse_cpu_stat(buf, ret_nr, ret_ns);
}

/*
 * Walks dir's subdirectories (dir itself first): with ino 0 records those with a quota in
 * st; else stops at the one whose inode (its cgroup id: kernfs numbers its inodes by id)
 * is ino, its path copied to found. 1 when found, 0, or -ENOMEM.
 */
static int walk(struct cgq_state *st, const char *dir, int depth, uint64_t ino, char *found,
		size_t flen)
{
	struct dirent *e;
	struct stat sb;
	DIR *d;
	int ret = 0;

	if (ino) {
		if (!stat(dir, &sb) && (uint64_t)sb.st_ino == ino) {
			snprintf(found, flen, "%s", dir);
			return 1;
		}
	} else {
		struct cgq_quota q = { 0 }, *nq;

		if (!read_quota(st, dir, &q.quota_us, &q.period_us) && q.quota_us) {
			if (read_stat(dir, &q.nr0, &q.throttled0))
				q.nr0 = q.throttled0 = 0;
			nq = realloc(st->q, (st->nq + 1) * sizeof(*nq));
			q.path = strdup(dir);
			if (!nq || !q.path) {
				free(q.path);
				if (nq)
					st->q = nq;
				return -ENOMEM;
			}
			st->q = nq;
			st->q[st->nq++] = q;
		}
	}
	if (depth >= CGQ_MAX_DEPTH)
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while (!ret && (e = readdir(d))) {
		char sub[PATH_MAX];

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) >= sizeof(sub))
			continue;
		ret = walk(st, sub, depth + 1, ino, found, flen);
	}
	closedir(d);
	return ret;
}

int cgq_scan(struct cgq_state *st)
{
	int err = find_root(st);

	if (err)
		return err;
	return walk(st, st->root, 0, 0, NULL, 0);
}

void cgq_steal_start(struct cgq_state *st)
{
	char *buf = malloc(1 << 16);

	st->has_steal0 = buf && !read_small_file("/proc/stat", buf, 1 << 16) &&
			 !cgq_parse_steal(buf, sysconf(_SC_CLK_TCK), &st->steal0, &st->nsteal0);
	free(buf);
}

/* The throttler of path: the quota'd cgroup that is path or its nearest ancestor. */
static const struct cgq_quota *quota_of(const struct cgq_state *st, const char *path)
{
	const struct cgq_quota *best = NULL;

	for (size_t i = 0; i < st->nq; i++) {
		size_t n = strlen(st->q[i].path);

		if (strncmp(path, st->q[i].path, n) || (path[n] && path[n] != '/'))
			continue;
		if (!best || n > strlen(best->path))
			best = &st->q[i];
	}
	return best;
}

static int add_throttled(struct cgq_state *st, struct sp_budget *b, const struct cgq_quota *q,
			 uint64_t ns)
{
	struct sp_throttler *t = NULL;
	uint64_t nr, tns;

	for (size_t i = 0; i < b->nthrottlers; i++)
		if (!strcmp(b->throttlers[i].path, q->path))
			t = &b->throttlers[i];
	if (!t) {
		if (grow((void **)&b->throttlers, &b->throttlers_cap, b->nthrottlers + 1,
			 sizeof(*t)))
			return -ENOMEM;
		t = &b->throttlers[b->nthrottlers];
		memset(t, 0, sizeof(*t));
		t->path = strdup(q->path);
		if (!t->path)
			return -ENOMEM;
		b->nthrottlers++;
		t->quota_us = q->quota_us < UINT_MAX ? (unsigned int)q->quota_us : UINT_MAX;
		t->period_us = q->period_us < UINT_MAX ? (unsigned int)q->period_us : UINT_MAX;
		if (!read_stat(q->path, &nr, &tns)) {
			t->nr_throttled = nr > q->nr0 ? nr - q->nr0 : 0;
			t->cg_throttled_ns = tns > q->throttled0 ? tns - q->throttled0 : 0;
		}
	}
	t->throttled_ns += ns;
	(void)st;
	return 0;
}

int cgq_fill(struct cgq_state *st, const struct sp_records *cg_ns, struct sp_budget *b)
{
	uint64_t unnamed = 0;
	int err = 0;

	for (size_t i = 0; cg_ns && st->root && i < cg_ns->n && !err; i++) {
		const uint64_t *id = sp_records_key(cg_ns, i);
		const uint64_t *ns = sp_records_value(cg_ns, i);
		const struct cgq_quota *q = NULL;
		char path[PATH_MAX];

		if (*ns && walk(st, st->root, 0, *id, path, sizeof(path)) == 1)
			q = quota_of(st, path);
		if (q)
			err = add_throttled(st, b, q, *ns);
		else
			unnamed += *ns;
	}
	if (unnamed)
		dlog("%llu ns throttled in cgroups not found, or with no quota at the start",
		     (unsigned long long)unnamed);
	cgq_sort_throttlers(b);
	if (!err && st->has_steal0) {
		char *buf = malloc(1 << 16);
		struct sp_cpu_steal *end = NULL;
		size_t nend = 0;

		if (buf && !read_small_file("/proc/stat", buf, 1 << 16) &&
		    !cgq_parse_steal(buf, sysconf(_SC_CLK_TCK), &end, &nend))
			err = cgq_steal_delta(&b->steal, st->steal0, st->nsteal0, end, nend);
		free(end);
		free(buf);
	}
	return err;
}

void cgq_free(struct cgq_state *st)
{
	for (size_t i = 0; i < st->nq; i++)
		free(st->q[i].path);
	free(st->q);
	free(st->steal0);
	free(st->root);
	memset(st, 0, sizeof(*st));
}
