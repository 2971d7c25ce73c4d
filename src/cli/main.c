// SPDX-License-Identifier: BSD-2-Clause
/* Entry point: dispatches sub-commands from a table (prefix match, like bpftool). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/commands.h"
#include "collect/target.h"
#include "base/util.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "trace", cmd_trace, "trace a command, processes or the system; print the report" },
	{ "report", cmd_report, "render a saved run (trace -f json) again, in any format" },
	{ "diff", cmd_diff, "compare two saved runs, row by row" },
	{ "top", cmd_top, "a live view of trace's tables, refreshed every interval" },
	{ "agent", cmd_agent, "trace continuously and stream every interval's rows to a sink" },
	{ "cache", cmd_cache, "show or clear the per-boot caches in /run/schedprof" },
};

static void usage(void)
{
	printf("Usage: schedprof COMMAND [OPTIONS]\n"
	       "       schedprof --help | --version\n\n"
	       "Why are my tasks not running? Schedules by caller, exactly counted in BPF.\n\n"
	       "Commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		printf("  %-8s %s\n", commands[i].name, commands[i].summary);
	printf("\n'schedprof COMMAND --help' describes each one; every command takes\n"
	       "-v (--verbose, -vv: libbpf's messages too) and -V (--version).\n");
}

/* Usage errors before a command is known name no command. */
static const struct cli_cmd main_cmd = { "", usage };

static const struct command *find_command(const char *name)
{
	const struct command *found = NULL;
	size_t len = strlen(name);

	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (!strcmp(commands[i].name, name))
			return &commands[i];
		if (len && !strncmp(commands[i].name, name, len)) {
			if (found)
				return NULL; /* ambiguous prefix */
			found = &commands[i];
		}
	}
	return found;
}

int main(int argc, char **argv)
{
	const struct command *cmd;

	if (argc < 2)
		return cli_usage_error(&main_cmd, "give a command: trace, top, agent, report or diff");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage();
		return EXIT_SUCCESS;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		cli_print_version();
		return EXIT_SUCCESS;
	}
	cmd = find_command(argv[1]);
	if (!cmd)
		return cli_usage_error(&main_cmd, "unknown command '%s'", argv[1]);
	target_raise_nofile();
	return cmd->run(argc - 1, argv + 1);
}
