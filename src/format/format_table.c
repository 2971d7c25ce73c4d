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
