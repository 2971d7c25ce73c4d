// SPDX-License-Identifier: BSD-2-Clause
/* The table of views (see view.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "model/view.h"
#include "base/util.h"

/* A new view: its line in SP_VIEW_LIST (model.h; every file it touches: docs/adding-a-view.md). */
#define SP_VIEW_ENTRY_(name, BIT, bit, collector, by_default) &sp_view_##name,
const struct sp_view_ops *const sp_views[] = { SP_VIEW_LIST(SP_VIEW_ENTRY_) };
#undef SP_VIEW_ENTRY_
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

size_t sp_run_losses(const struct sp_run *run, const char *extra, char *buf, size_t size)
{
	size_t len = 0;

	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < sp_nviews; i++) {
		const struct sp_view_ops *v = sp_views[i];

		if (!sp_view_present(run, v))
			continue;
		for (size_t j = 0; j < v->nlosses && len < size; j++) {
			uint64_t n = SP_VIEW_U64(run, v->losses[j].off);

			if (n)
				len += snprintf(buf + len, size - len, "%s%" PRIu64 " %s",
						len ? ", " : "", n, v->losses[j].what);
		}
	}
	if (extra && *extra && len < size)
		len += snprintf(buf + len, size - len, "%s%s", len ? ", " : "", extra);
	return len < size ? len : size - 1;
}

size_t sp_view_rows(const struct sp_view_ops *view, const struct sp_run *run, const char *key,
		    const char **ret_rows, size_t *ret_size)
{
	size_t off = 0;
	const struct sp_field *f = key ? sp_schema_path(view->schema, key, &off) : NULL;
	const char *v = (const char *)sp_view_cdata(run, view) + off;

	if (!f || f->type != SP_T_ARRAY) {
		*ret_rows = NULL;
		*ret_size = 0;
		return 0;
	}
	*ret_rows = *SP_CAT(v, f->off, char *);
	*ret_size = f->size;
	return *SP_CAT(v, f->n_off, size_t);
}

void sp_view_walk_row(const struct sp_view_walk *w, const void *r, struct sp_view_row *ret)
{
	*ret = (struct sp_view_row){
		.name = *SP_CAT(r, w->name_off, char *),
		.object = w->object_off == SP_NONE ? NULL : *SP_CAT(r, w->object_off, char *),
		.comms = SP_CAT(r, w->comms_off, struct sp_comm_list),
		.stacks = SP_CAT(r, w->stacks_off, struct sp_stack_list),
	};
}
