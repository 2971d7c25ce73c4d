/* SPDX-License-Identifier: BSD-2-Clause */
/* report's re-symbolization options (see resym_cli.h). */
#include "cli/resym_cli.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "symbols/debuginfod.h"
#include "base/log.h"
#include "symbols/resym.h"

int resym_cli_take(const struct cli_cmd *cmd, int *argc, char **argv, struct resym_cli *o)
{
	int i = 1, n = 1;

	memset(o, 0, sizeof(*o));
	for (; i < *argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--no-resymbolize")) {
			o->off = true;
		} else if (!strncmp(a, "--debug-dir=", 12)) {
			o->debug_dir = a + 12;
		} else if (!strcmp(a, "--debug-dir")) {
			if (i + 1 >= *argc)
				return cli_usage_error(cmd, "option '--debug-dir' requires an argument");
			o->debug_dir = argv[++i];
		} else {
			argv[n++] = argv[i];
		}
	}
	for (; i < *argc; i++)
		argv[n++] = argv[i];
	argv[n] = NULL;
	*argc = n;
	return 0;
}

void resym_cli_apply(struct sp_run *run, const struct resym_cli *o)
{
	struct sp_resym_opts ro = { .debug_dir = o->debug_dir, .lines = o->lines,
				    .debuginfod = sp_debuginfod_enabled() };
	struct sp_resym_stats st;
	int err;

	if (o->off)
		return;
	err = sp_resym_run(run, &ro, &st);
	if (err)
		wlog("cannot symbolize the run again (%s): some frames print as saved",
		     strerror(-err));
	dlog("re-symbolized: %" PRIu64 " user frames with a build-id, %" PRIu64 " renamed, %" PRIu64
	     " with a line, %" PRIu64 " of unknown build-ids, %" PRIu64 " still unnamed, %" PRIu64
	     " profile rows merged",
	     st.frames, st.renamed, st.lines, st.unknown, st.unnamed, st.rows_merged);
}
