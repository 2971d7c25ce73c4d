/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Output files: opened before the work that fills them, so a mistyped -o or --save fails at
 * once instead of after a whole trace; written to a temporary file in the same directory and
 * renamed into place only when complete, so a failed write (a full disk) leaves neither a
 * truncated file nor a clobbered old one. Paths that are not regular files (/dev/null, a
 * FIFO, a terminal) are written in place. Under sudo, files belong to the invoking user.
 */
#ifndef SCHEDPROF_OUTPUT_H
#define SCHEDPROF_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

struct cli_output {
	const char *path; /* NULL: standard output */
	char *tmp;	  /* the temporary file beside path, until commit or abort */
	FILE *f;
};

/* Opens path (NULL: stdout). Logs "cannot write PATH: why" on failure. 0 or -errno. */
int cli_output_open(struct cli_output *o, const char *path);
/*
 * Flushes and closes f, then renames the temporary file into place. On any error the
 * temporary file is removed. Not logged. 0 or -errno (-EPIPE: stdout's reader has gone).
 */
int cli_output_commit(struct cli_output *o);
/* Closes and removes what was written (a run that failed). Safe to call twice. */
void cli_output_abort(struct cli_output *o);

#endif
