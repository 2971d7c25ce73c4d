// SPDX-License-Identifier: BSD-2-Clause
/* `report --what-if` (whatif_cli.h). */
#include <errno.h>
#include <stdlib.h>
#include "cli/commands.h"
#include "model/cp_stacks.h"
#include "format/format_whatif.h"
#include "base/log.h"
#include "cli/whatif_cli.h"

int whatif_cli_opt(const struct cli_cmd *cmd, struct sp_whatif_opts *o, const char *arg)
{
	char why[256];
	int rc = sp_whatif_parse(o, arg, why, sizeof(why));

	if (rc == -ENOMEM)
		return cli_usage_error(cmd, "--what-if: out of memory");
	return rc ? cli_usage_error(cmd, "--what-if: %s", why) : 0;
}

struct whatif_output {
	const struct sp_whatif *w, *b; /* b: diff's second run */
	const char *name_a, *name_b;
	enum sp_format format;
};

static int write_whatif(const void *ctx, FILE *f)
{
	const struct whatif_output *out = ctx;

	if (out->b)
		return out->format == SP_FMT_JSON ?
			       format_whatif_diff_json(out->w, out->b, f) :
			       format_whatif_diff_table(out->w, out->b, out->name_a, out->name_b, f);
	return out->format == SP_FMT_JSON ? format_whatif_json(out->w, f) :
					    format_whatif_table(out->w, f);
}

/* Computes run's predictions into w: 0, or the exit status after one line saying why not. */
static int compute(const struct cli_cmd *cmd, const struct sp_run *run, const char *path,
		   const struct sp_whatif_opts *o, struct sp_whatif *w)
{
	char why[512];
	int rc = sp_whatif_compute(run, o, w, why, sizeof(why));

	if (rc == -ENOMEM) {
		elog("%s: out of memory for the what-if replays", path);
		return EXIT_FAILURE;
	}
	return rc ? cli_usage_error(cmd, "%s: %s", path, why) : 0;
}

int whatif_cli_diff(const struct cli_cmd *cmd, const struct sp_run *a, const char *path_a,
		    const struct sp_run *b, const char *path_b, const struct sp_whatif_opts *o,
		    enum sp_format format, const char *output)
{
	struct sp_whatif wa, wb;
	struct whatif_output out = { &wa, &wb, path_a, path_b, format };
	int rc;

	if (format != SP_FMT_TABLE && format != SP_FMT_JSON)
		return cli_usage_error(cmd, "--what-if prints a table or -f json");
	rc = compute(cmd, a, path_a, o, &wa);
	if (rc)
		return rc;
	rc = compute(cmd, b, path_b, o, &wb);
	if (rc) {
		sp_whatif_free(&wa);
		return rc;
	}
	rc = cli_write_output(output, "diff", write_whatif, &out);
	sp_whatif_free(&wa);
	sp_whatif_free(&wb);
	return rc == -EPIPE ? EXIT_PIPE : rc ? EXIT_FAILURE : EXIT_SUCCESS;
}

int whatif_cli_report(const struct cli_cmd *cmd, const struct sp_run *run, const char *path,
		      const struct sp_whatif_opts *o, const struct render_opts *ro,
		      const char *output)
{
	struct sp_whatif w;
	struct whatif_output out = { &w, NULL, path, NULL, ro->format };
	int rc;

	if (ro->format != SP_FMT_TABLE && ro->format != SP_FMT_JSON)
		return cli_usage_error(cmd, "--what-if prints a table or -f json");
	rc = compute(cmd, run, path, o, &w);
	if (rc)
		return rc;
	rc = cli_write_output(output, "report", write_whatif, &out);
	sp_whatif_free(&w);
	return rc == -EPIPE ? EXIT_PIPE : rc ? EXIT_FAILURE : EXIT_SUCCESS;
}

int whatif_cli_critical_path(const struct cli_cmd *cmd, struct sp_run *run, const char *path,
			     struct render_opts *ro)
{
	struct sp_run cp;
	int rc;

	if (ro->format != SP_FMT_FOLDED && ro->format != SP_FMT_PPROF &&
	    ro->format != SP_FMT_SVG && ro->format != SP_FMT_HTML)
		return cli_usage_error(cmd, "--critical-path draws stacks: give -f folded, pprof, "
					    "svg or html");
	rc = sp_cp_stacks_run(run, &cp);
	if (rc == -ENODATA)
		return cli_usage_error(cmd, "%s: no timeline in this run: trace with --timeline",
				       path);
	if (rc) {
		elog("%s: out of memory for the critical path's stacks", path);
		return EXIT_FAILURE;
	}
	sp_run_free(run);
	*run = cp;
	ro->views = SP_VIEW_SCHED;
	ro->value = SP_VALUE_TIME;
	return 0;
}
