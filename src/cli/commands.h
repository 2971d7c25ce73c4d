/* SPDX-License-Identifier: BSD-2-Clause */
/* Sub-commands; they return the documented exit codes (base/exitcode.h). */
#ifndef SCHEDPROF_COMMANDS_H
#define SCHEDPROF_COMMANDS_H

#include "base/exitcode.h"

int cmd_trace(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_cache(int argc, char **argv);

#endif
