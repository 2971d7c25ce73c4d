// SPDX-License-Identifier: BSD-2-Clause
/* The human report: a header, then one ranked table per view. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/render.h"
#include "base/util.h"
#include "model/view.h"

double sp_pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

void sp_print_target(const struct sp_target_info *t, FILE *f)
{
	switch (t->mode) {
	case SP_TARGET_COMMAND:
		fprintf(f, "command: %s", t->command ? t->command : "?");
		if (t->exit_status >= 0)
			fprintf(f, " (exit %d)", t->exit_status);
		if (t->system)
			fputs(", the whole system traced while it ran", f);
		break;
	case SP_TARGET_PIDS:
	case SP_TARGET_TIDS: /* pids holds the thread ids */
		fputs(t->mode == SP_TARGET_PIDS ? "pids:" : "threads:", f);
		for (size_t i = 0; i < t->npids; i++)
			fprintf(f, "%s%d", i ? "," : " ", t->pids[i]);
		break;
	case SP_TARGET_CGROUP:
		fprintf(f, "cgroup: %s", t->cgroup ? t->cgroup : "?");
		break;
	default:
		fputs("system-wide", f);
		break;
	}
}

static void print_header(const struct sp_run *run, FILE *f)
{
	const struct sp_target_info *t = &run->target;
	char d1[32], d2[32], d3[32];

	sp_print_target(t, f);
	fputs(t->mode == SP_TARGET_PIDS || t->mode == SP_TARGET_CGROUP ? " and descendants\n" : "\n",
	      f);
	fprintf(f, "elapsed %s", fmt_duration(run->elapsed_ns, d1, sizeof(d1)));
	if (t->has_rusage) {
		fprintf(f, ", user %s, sys %s, CPU %.0f%% of %d CPUs",
			fmt_duration(t->user_ns, d2, sizeof(d2)), fmt_duration(t->sys_ns, d3, sizeof(d3)),
			sp_pct(t->user_ns + t->sys_ns, run->elapsed_ns), run->ncpus);
	}
	fprintf(f, "  [%s, %s]\n", run->kernel ? run->kernel : "?", run->hostname ? run->hostname : "?");
	if (t->mode == SP_TARGET_COMMAND && t->still_running)
		fprintf(f, "note: %" PRIu64 " process%s of the command %s still running when it "
			   "ended (a daemon, a background job): not traced after its end\n",
			t->still_running, t->still_running == 1 ? "" : "es",
			t->still_running == 1 ? "was" : "were");
}

/*
 * A frame of a stack under a row: its name as the model has it (an unresolved user frame is
 * already "cc1+0x1a2b3c"), its object unless [kernel]; with --lines, "[inlined]" on a frame
 * inlined into the next one and its source position "(file:line)" when known.
 */
static void print_frame(const struct sp_stack_row *s, size_t j, const struct render_opts *o,
			FILE *f)
{
	const char *obj = s->objects ? s->objects[j] : "[kernel]";
	const struct sp_frame_info *in = o->lines && s->info ? &s->info[j] : NULL;

	fprintf(f, "          %s", s->frames[j]);
	if (in && in->inlined)
		fputs(" [inlined]", f);
	if (strcmp(obj, "[kernel]"))
		fprintf(f, " %s", obj);
	if (in && in->file && in->line)
		fprintf(f, " (%s:%u)", in->file, in->line);
	else if (in && in->file)
		fprintf(f, " (%s)", in->file);
	putc('\n', f);
}

/* The first --stack-rows stacks of a row (see render.h). */
int sp_print_stack_list(const struct sp_stack_list *stacks, uint64_t total,
			const char *time_label, const struct render_opts *o, FILE *f)
{
	struct sp_stack_list merged;
	const struct sp_stack_list *l = &merged;
	char d[32];
	int err = sp_stack_list_merge_pids(stacks, &merged);

	if (err)
		return err;
	for (size_t i = 0; i < l->n && i < o->nstacks; i++) {
		const struct sp_stack_row *s = &l->v[i];

		fprintf(f, "        stack #%zu: %" PRIu64 " (%.1f%%), ", i + 1, s->count,
			sp_pct(s->count, total));
		if (time_label)
			fprintf(f, "%s %s, ", time_label, fmt_duration(s->time_ns, d, sizeof(d)));
		fprintf(f, "comm %s\n", s->comm);
		for (size_t j = 0; j < s->nframes; j++)
			print_frame(s, j, o, f);
	}
	if (l->n > o->nstacks)
		fprintf(f, "        (%zu more stacks)\n", l->n - o->nstacks);
	free(merged.v);
	return 0;
}

size_t sp_rows_shown(size_t n, const struct render_opts *o)
{
	return o->nrows && n > o->nrows ? o->nrows : n;
}

void sp_print_stack_notes(const char *what, uint64_t missing, uint64_t user_missing,
			  uint64_t user_truncated, FILE *f)
{
	if (missing)
		fprintf(f, "  note: %" PRIu64 " %s have no kernel stack (unreadable or the stack map "
			   "was full: raise --max-stacks); they are counted in every total\n",
			missing, what);
	if (user_missing)
		fprintf(f, "  note: %" PRIu64 " %s have a kernel stack without its user frames "
			   "(unreadable, or a map was full: raise --max-stacks)\n",
			user_missing, what);
	if (user_truncated)
		fprintf(f, "  note: %" PRIu64 " %s have a truncated user stack (code without frame "
			   "pointers, or deeper than the frames kept)\n",
			user_truncated, what);
}

void sp_print_more_rows(size_t shown, size_t n, FILE *f)
{
	if (shown < n)
		fprintf(f, "  (%zu more rows: -n 0 shows all)\n", n - shown);
}

/* The header, then the table of each view that the run holds and opts selects. */
int format_table(const struct sp_run *run, const struct render_opts *opts, FILE *f)
{
	int err = 0;

	print_header(run, f);
	for (size_t i = 0; !err && i < sp_nviews; i++) {
		const struct sp_view_ops *v = sp_views[i];

		if (sp_view_present(run, v) && (opts->views & v->bit))
			err = v->print_table(run, opts, f);
	}
	if (!err && ferror(f))
		err = -EIO;
	return err;
}
