/* SPDX-License-Identifier: BSD-2-Clause */
/* Sub-commands and the documented exit codes. */
#ifndef SCHEDPROF_COMMANDS_H
#define SCHEDPROF_COMMANDS_H

#define EXIT_USAGE 2	/* unknown option or bad value */
#define EXIT_LOSS 3	/* --strict: the run lost rows, stacks or events */
#define EXIT_NOEXEC 127 /* -- COMMAND could not be executed */
#define EXIT_PIPE 141	/* standard output was closed (128 + SIGPIPE, as a shell shows it) */

int cmd_trace(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_cache(int argc, char **argv);

#endif
