// SPDX-License-Identifier: BSD-2-Clause
/* The table helpers the views' printers share (view_print.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/util.h"
#include "model/model.h"
#include "model/view_print.h"

double sp_pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
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

/* The first --stack-rows stacks of a row (see view_print.h). */
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
			  uint64_t user_truncated, const struct sp_user_cuts *cuts, FILE *f)
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
	if (cuts && (cuts->cfi || cuts->memory || cuts->depth || cuts->lost))
		fprintf(f, "  note: user stacks stopped short: %" PRIu64 " at code whose call frame "
			   "information cannot be followed, %" PRIu64 " at memory not readable, %"
			   PRIu64 " as deep as the frames kept, %" PRIu64 " without their copy\n",
			cuts->cfi, cuts->memory, cuts->depth, cuts->lost);
}

void sp_print_lost_rows(uint64_t n, const char *what, const char *map, const char *option,
			FILE *f)
{
	if (n)
		fprintf(f, "  note: %" PRIu64 " %s are in the totals but in no row (the %s map was "
			   "full: raise %s)\n", n, what, map, option);
}

void sp_print_cache(const char *label, const struct sp_caller_cache *c, uint64_t of,
		    const char *what, FILE *f)
{
	if (!c->present)
		return;
	fprintf(f, "  %s: %" PRIu64 " of %" PRIu64 " %s from the cache (%.1f%%", label, c->fast, of,
		what, sp_pct(c->fast, of));
	if (c->memo)
		fprintf(f, ", %" PRIu64 " of them from its memo", c->memo);
	fprintf(f, "), the rest by a full stack walk; %" PRIu64 " checked by one%s, %" PRIu64
		   " mismatched\n",
		c->verified, c->verify_all ? " (--verify-callers)" : "", c->mismatched);
	if (c->forked)
		fprintf(f, "  %s: %" PRIu64 " of %" PRIu64 " %s by the rules their parent process "
			   "learned (forked without exec)\n", label, c->forked, of, what);
}

void sp_print_caller_cache(const struct sp_caller_cache *c, uint64_t of, const char *what,
			   FILE *f)
{
	sp_print_cache("callers", c, of, what, f);
}

void sp_print_more_rows(size_t shown, size_t n, FILE *f)
{
	if (shown < n)
		fprintf(f, "  (%zu more rows: -n 0 shows all)\n", n - shown);
}
