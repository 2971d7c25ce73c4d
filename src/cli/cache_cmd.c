// SPDX-License-Identifier: BSD-2-Clause
/* `schedprof cache show|clear`: the per-boot caches in /run/schedprof (cache.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "loader/cache.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "base/log.h"

static void cache_help(void)
{
	printf("Usage: schedprof cache show\n"
	       "       schedprof cache clear\n"
	       "\n"
	       "What trace keeps per boot in " CACHE_DIR " so that it starts faster: the kernel's\n"
	       "features, the attach targets' BTF IDs, the CO-RE BTF, where the preempt count is,\n"
	       "the scheduler's text. A file is used only for this boot, kernel and build of\n"
	       "schedprof, when whole and writable by no one but its owner (root or you); a run's\n"
	       "results are the same with or without it (`trace --no-cache` reads and writes none).\n"
	       "\n"
	       "  show              each file: its size, whether this build would use it, and why not\n"
	       "  clear             remove schedprof's files (root's need root)\n"
	       "\n" CLI_HELP_LINES
	       "\nExit status: 0; 1 a file could not be removed; 2 usage error.\n");
}

static const struct cli_cmd cache_cmd = { "cache", cache_help };

static int no_opt(const struct cli_cmd *cmd, void *ctx, int c, const char *arg)
{
	(void)ctx;
	(void)c;
	(void)arg;
	return cli_usage_error(cmd, "unknown option");
}

int cmd_cache(int argc, char **argv)
{
	static const struct option long_opts[] = { CLI_LONG_OPTS, { 0 } };
	unsigned int n;
	int err = cli_parse(&cache_cmd, argc, argv, "+" CLI_SHORT_OPTS, long_opts, no_opt, NULL);

	if (err)
		return err == CLI_DONE ? EXIT_SUCCESS : err;
	if (optind + 1 != argc)
		return cli_usage_error(&cache_cmd, "give one of: show, clear");
	if (!strcmp(argv[optind], "show")) {
		err = cache_show(NULL, stdout);
		if (err)
			return err == -EPIPE ? EXIT_PIPE : EXIT_FAILURE;
		return EXIT_SUCCESS;
	}
	if (strcmp(argv[optind], "clear"))
		return cli_usage_error(&cache_cmd, "'%s': give one of: show, clear", argv[optind]);
	err = cache_clear(NULL, &n);
	if (err) {
		elog("cannot remove the caches in %s: %s%s", CACHE_DIR, strerror(-err),
		     err == -EACCES ? " (root's: run as root)" : "");
		return EXIT_FAILURE;
	}
	printf("%u %s removed from %s\n", n, n == 1 ? "file" : "files", CACHE_DIR);
	return EXIT_SUCCESS;
}
