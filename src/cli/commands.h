/* SPDX-License-Identifier: BSD-2-Clause */
/* Sub-commands and the documented exit codes. */
#ifndef SCHEDPROF_COMMANDS_H
#define SCHEDPROF_COMMANDS_H

#define EXIT_USAGE 2	/* unknown option or bad value */
#define EXIT_NOEXEC 127 /* -- COMMAND could not be executed */

int cmd_trace(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);

#endif
