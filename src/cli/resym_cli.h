/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `report`'s re-symbolization (resym.h) on the command line: on by default, with
 * --no-resymbolize and --debug-dir DIR. The options are taken out of argv before the shared
 * parser sees it, so the commands' common option loop needs no change; --lines is the render
 * option (render_opts.h), copied into `lines` by the command.
 */
#ifndef SCHEDPROF_RESYM_CLI_H
#define SCHEDPROF_RESYM_CLI_H

#include <stdbool.h>

#include "cli/cli.h"
#include "model/model.h"

struct resym_cli {
	bool off;	       /* --no-resymbolize */
	bool lines;	       /* the render option --lines: file:line of re-symbolized frames */
	const char *debug_dir; /* --debug-dir DIR; NULL: /usr/lib/debug */
};

#define RESYM_CLI_HELP                                                                           \
	"      --no-resymbolize  print user frames as saved; by default the unresolved\n"     \
	"                    ones (obj+0x...) are named again from the debug files known\n"    \
	"                    now (debug packages installed since, debuginfod with\n"          \
	"                    DEBUGINFOD_URLS), C++/Rust names demangled\n"                    \
	"      --debug-dir DIR  separate debug files' root (default /usr/lib/debug)\n"

/*
 * Takes the options above out of argv (up to a "--"), shifting the rest down and lowering
 * *argc. 0, or EXIT_USAGE (a message printed) when --debug-dir lacks its value.
 */
int resym_cli_take(const struct cli_cmd *cmd, int *argc, char **argv, struct resym_cli *o);
/* Re-symbolizes run unless o->off; says what changed at -v; a failure is a warning only. */
void resym_cli_apply(struct sp_run *run, const struct resym_cli *o);

#endif /* SCHEDPROF_RESYM_CLI_H */
