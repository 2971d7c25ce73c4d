// SPDX-License-Identifier: BSD-2-Clause
/* The critical path as a schedules view of stacks (cp_stacks.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "model/cp_stacks.h"
#include "base/util.h"

/* The label of a rank's row, the leaf of its stack. */
static const char *label(const struct sp_cp_rank *r)
{
	if (r->state == SP_TL_RUNNING)
		return r->alone ? "[running alone]" : "[running]";
	return r->caller ? r->caller : "[unknown]";
}

static int copy_header(const struct sp_run *run, struct sp_run *out)
{
	int rc = xstrdup_to(&out->schema, run->schema);

	if (!rc)
		rc = xstrdup_to(&out->version, run->version);
	if (!rc)
		rc = xstrdup_to(&out->kernel, run->kernel);
	if (!rc)
		rc = xstrdup_to(&out->hostname, run->hostname);
	if (!rc)
		rc = xstrdup_to(&out->target.command, run->target.command);
	out->ncpus = run->ncpus;
	out->start_unix_ns = run->start_unix_ns;
	out->elapsed_ns = run->elapsed_ns;
	out->target.mode = run->target.mode;
	out->target.system = run->target.system;
	out->target.exit_status = run->target.exit_status;
	return rc;
}

static struct sp_sched_row *row_of(struct sp_sched_view *v, const char *caller)
{
	struct sp_sched_row *row;

	for (size_t i = 0; i < v->nrows; i++)
		if (!strcmp(v->rows[i].caller, caller))
			return &v->rows[i];
	row = sp_sched_add_row(v);
	if (row && xstrdup_to(&row->caller, caller)) {
		v->nrows--;
		return NULL;
	}
	return row;
}

static int add_rank(struct sp_sched_view *v, const struct sp_cp_rank *r)
{
	struct sp_sched_row *row = row_of(v, label(r));
	struct sp_stack_row *s;
	size_t n = r->state == SP_TL_RUNNING ? 1 : 2;

	if (!row)
		return -ENOMEM;
	row->count++;
	row->offcpu_ns += r->ns;
	if (r->ns > row->max_ns)
		row->max_ns = r->ns;
	v->total++;
	if (sp_comm_list_add(&row->comms, r->comm ? r->comm : "[unknown]", 1, r->ns, r->ns))
		return -ENOMEM;
	s = sp_stack_list_add(&row->stacks);
	if (!s)
		return -ENOMEM;
	s->frames = calloc(n, sizeof(*s->frames));
	if (!s->frames)
		return -ENOMEM;
	s->nframes = n;
	s->count = 1;
	s->time_ns = r->ns;
	if (xstrdup_to(&s->comm, r->comm ? r->comm : "[unknown]") ||
	    xstrdup_to(&s->frames[0], label(r)))
		return -ENOMEM;
	if (n > 1 && xstrdup_to(&s->frames[1], r->state != SP_TL_RUNNABLE ? "[blocked]" :
						r->throttled		  ? "[throttled]" :
									    "[runnable]"))
		return -ENOMEM;
	return 0;
}

int sp_cp_stacks_run(const struct sp_run *run, struct sp_run *out)
{
	const struct sp_timeline *tl = &run->timeline;
	int rc;

	sp_run_init(out);
	if (!tl->present)
		return -ENODATA;
	rc = copy_header(run, out);
	out->sched.present = true;
	for (size_t i = 0; i < tl->ncp_ranks && !rc; i++)
		rc = add_rank(&out->sched, &tl->cp_ranks[i]);
	if (rc) {
		sp_run_free(out);
		sp_run_init(out);
		return rc;
	}
	for (size_t i = 0; i < out->sched.nrows; i++)
		sp_stack_list_merge(&out->sched.rows[i].stacks);
	sp_sched_sort(&out->sched);
	return 0;
}
