// SPDX-License-Identifier: BSD-2-Clause
/* The table of views (see view.h). */
#include <string.h>
#include "view.h"
#include "util.h"

/* A new view: its file, and one line here (and its SP_VIEW_* bit in render.h). */
const struct sp_view_ops *const sp_views[] = {
	&sp_view_schedules,
	&sp_view_profile,
	&sp_view_locks,
};
const size_t sp_nviews = ARRAY_SIZE(sp_views);

const struct sp_view_ops *sp_view_find(unsigned int bit)
{
	for (size_t i = 0; i < sp_nviews; i++)
		if (sp_views[i]->bit == bit)
			return sp_views[i];
	return NULL;
}

const struct sp_view_ops *sp_view_by_name(const char *name, size_t len)
{
	for (size_t i = 0; i < sp_nviews; i++)
		if (strlen(sp_views[i]->name) == len && !strncmp(name, sp_views[i]->name, len))
			return sp_views[i];
	return NULL;
}

bool sp_view_present(const struct sp_run *run, const struct sp_view_ops *v)
{
	return *(const bool *)((const char *)run + v->present_off);
}

void *sp_view_data(struct sp_run *run, const struct sp_view_ops *v)
{
	return (char *)run + v->off;
}

const void *sp_view_cdata(const struct sp_run *run, const struct sp_view_ops *v)
{
	return (const char *)run + v->off;
}
