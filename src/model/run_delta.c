// SPDX-License-Identifier: BSD-2-Clause
/*
 * An interval's run = the cumulative run at its end minus the one at its start (run_delta.h),
 * view by view through the field descriptors (sp_schema_delta): the schema says which field
 * is a counter, a maximum, a value since the start or a state, and which fields key a row.
 */
#include "model/run_delta.h"
#include "model/view.h"

int sp_run_delta(const struct sp_run *prev, const struct sp_run *cur, struct sp_run *ret,
		 struct sp_delta_stats *stats)
{
	struct sp_delta_stats st = {};
	int err;

	/* the run's own fields: cur's */
	err = sp_schema_delta(&sp_run_fields, NULL, cur, ret, &st);
	for (size_t i = 0; !err && i < sp_nviews; i++) {
		const struct sp_view_ops *v = sp_views[i];

		if (v->whole_run || !sp_view_present(cur, v))
			continue;
		*(bool *)((char *)ret + v->present_off) = true;
		err = sp_schema_delta(v->schema,
				      prev && sp_view_present(prev, v) ? sp_view_cdata(prev, v) : NULL,
				      sp_view_cdata(cur, v), sp_view_data(ret, v), &st);
	}
	if (stats)
		*stats = st;
	if (err)
		return err;
	/* ranked by what happened in the interval, not since the start */
	sp_sched_sort(&ret->sched);
	sp_profile_sort(&ret->profile);
	sp_lock_sort(&ret->locks, SP_LOCK_SORT_WAIT);
	return 0;
}
