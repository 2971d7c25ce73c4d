// SPDX-License-Identifier: BSD-2-Clause
/* A timeline's tasks by (tid, start) (tl_index.h). */
#include <errno.h>
#include <stdlib.h>
#include "model/tl_index.h"

static int cmp_key(const void *pa, const void *pb)
{
	const struct sp_tl_key *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

int sp_tl_keys(const struct sp_timeline *tl, struct sp_tl_key **ret)
{
	struct sp_tl_key *k = malloc((tl->ntasks ? tl->ntasks : 1) * sizeof(*k));

	*ret = k;
	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < tl->ntasks; i++)
		k[i] = (struct sp_tl_key){ .tid = tl->tasks[i].tid, .start = tl->tasks[i].start_ns,
					   .idx = i };
	qsort(k, tl->ntasks, sizeof(*k), cmp_key);
	return 0;
}

size_t sp_tl_task_at(const struct sp_tl_key *keys, size_t n, int tid, uint64_t t, bool first)
{
	size_t lo = 0, hi = n;

	while (lo < hi) { /* the first key of tid that started after t */
		size_t mid = lo + (hi - lo) / 2;

		if (keys[mid].tid < tid || (keys[mid].tid == tid && keys[mid].start <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && keys[lo - 1].tid == tid)
		return keys[lo - 1].idx;
	if (first && lo < n && keys[lo].tid == tid)
		return keys[lo].idx;
	return SP_TL_NONE;
}
