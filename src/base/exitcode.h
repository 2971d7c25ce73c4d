/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The documented exit codes (README) besides EXIT_SUCCESS and EXIT_FAILURE: the commands and
 * the trace engine, which returns the trace's, give them.
 */
#ifndef SCHEDPROF_EXITCODE_H
#define SCHEDPROF_EXITCODE_H

#include <stdlib.h>

#define EXIT_USAGE 2	/* unknown option or bad value */
#define EXIT_LOSS 3	/* --strict: the run lost rows, stacks or events */
#define EXIT_NOEXEC 127 /* -- COMMAND could not be executed */
#define EXIT_PIPE 141	/* standard output was closed (128 + SIGPIPE, as a shell shows it) */

#endif
