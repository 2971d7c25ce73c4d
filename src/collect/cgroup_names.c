// SPDX-License-Identifier: BSD-2-Clause
/* cgroup v2 ids named by a walk of the v2 mount: a directory's inode number is its id. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "collect/cgroup_names.h"
#include "base/util.h"

/* Deeper than any hierarchy systemd or a container runtime makes; bounds the walk. */
#define MAX_DEPTH 32

void cgroup2_mount(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	char dev[256], dir[4096], type[64];

	snprintf(buf, len, "/sys/fs/cgroup");
	if (!f)
		return;
	while (fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir, type) == 3) {
		if (!strcmp(type, "cgroup2")) {
			snprintf(buf, len, "%s", dir);
			break;
		}
	}
	fclose(f);
}

struct walk {
	const uint64_t *ids;
	char **names;
	size_t n, left; /* left: ids not named yet */
	size_t root_len;
};

/* Names the ids that are dir's inode; then its subdirectories'. 0 or -ENOMEM. */
static int walk(struct walk *w, const char *dir, int depth)
{
	struct dirent *e;
	struct stat st;
	DIR *d;
	int err = 0;

	if (stat(dir, &st))
		return 0; /* removed during the walk */
	for (size_t i = 0; i < w->n; i++) {
		if (w->names[i] || w->ids[i] != (uint64_t)st.st_ino)
			continue;
		w->names[i] = strdup(dir[w->root_len] ? dir + w->root_len : "/");
		if (!w->names[i])
			return -ENOMEM;
		w->left--;
	}
	if (!w->left || depth >= MAX_DEPTH || !(d = opendir(dir)))
		return 0;
	while (!err && w->left && (e = readdir(d))) {
		char sub[4096];

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) >= (int)sizeof(sub))
			continue;
		err = walk(w, sub, depth + 1);
	}
	closedir(d);
	return err;
}

int cgroup2_names(const uint64_t *ids, size_t n, char **names)
{
	struct walk w = { .ids = ids, .names = names, .n = n };
	char root[4096];

	for (size_t i = 0; i < n; i++)
		if (ids[i])
			w.left++;
	if (!w.left)
		return 0;
	cgroup2_mount(root, sizeof(root));
	w.root_len = strlen(root);
	return walk(&w, root, 0);
}

/* The list of v's takers number i: its rows' in order, then its summed ones. */
static struct sp_cpu_taker_list *takers_of(struct sp_sched_view *v, size_t i)
{
	return i < v->nrows ? &v->rows[i].takers : &v->takers;
}

int cgroup2_name_takers(struct sp_sched_view *v)
{
	uint64_t *ids = NULL;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	for (size_t i = 0; i <= v->nrows; i++) {
		const struct sp_cpu_taker_list *l = takers_of(v, i);

		for (size_t j = 0; j < l->n; j++) {
			size_t k = 0;

			if (l->v[j].cgroup)
				continue;
			while (k < n && ids[k] != l->v[j].cgroup_id)
				k++;
			if (k < n)
				continue;
			if (!SP_ARRAY_ADD(ids, n, cap))
				return -ENOMEM;
			ids[n - 1] = l->v[j].cgroup_id;
		}
	}
	if (!n)
		return 0;
	names = calloc(n, sizeof(*names));
	err = names ? cgroup2_names(ids, n, names) : -ENOMEM;
	for (size_t i = 0; !err && i <= v->nrows; i++) {
		struct sp_cpu_taker_list *l = takers_of(v, i);

		for (size_t j = 0; !err && j < l->n; j++) {
			struct sp_cpu_taker *t = &l->v[j];
			size_t k = 0;

			if (t->cgroup)
				continue;
			while (ids[k] != t->cgroup_id)
				k++;
			if (names[k] && !(t->cgroup = strdup(names[k])))
				err = -ENOMEM;
		}
	}
	for (size_t k = 0; names && k < n; k++)
		free(names[k]);
	free(names);
	free(ids);
	return err;
}
