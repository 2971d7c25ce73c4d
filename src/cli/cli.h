/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What every sub-command shares: the option loop with the common options (-v, -V, -h), usage
 * errors (one line, then "Try ... --help", exit 2), loading a saved run, and writing an output
 * (-o FILE or stdout, refused on a terminal for binary formats). Messages go through log.h.
 */
#ifndef SCHEDPROF_CLI_H
#define SCHEDPROF_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/model.h"
#include "format/render.h"

/* A parser's result besides 0 and EXIT_USAGE: --help or --version was printed, exit 0. */
#define CLI_DONE (-1)

/* A sub-command, as its messages and its --help need it. */
struct cli_cmd {
	const char *name; /* "report": errors say "schedprof report: ..."; "" for main */
	void (*help)(void); /* prints --help to stdout */
};

/* The options every command takes, to paste into its getopt tables and help. */
#define CLI_SHORT_OPTS "vVh"
#define CLI_LONG_OPTS                                                                            \
	{ "verbose", no_argument, NULL, 'v' },                                                    \
	{ "version", no_argument, NULL, 'V' },                                                    \
	{ "help", no_argument, NULL, 'h' }
#define CLI_HELP_LINES                                                                           \
	"  -v, --verbose     more diagnostics (trace -vv: libbpf's too)\n"                              \
	"  -V, --version     print the version\n"                                                 \
	"  -h, --help        this help\n"

/* -V, --version: "schedprof VERSION" on stdout. */
void cli_print_version(void);

/* Prints "schedprof CMD: MESSAGE" and "Try 'schedprof CMD --help'.". Returns EXIT_USAGE. */
int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A decimal number in [min, max] into *ret. Else the usage error that states the range, for
 * option name: "-n: 2147483647 is out of range (0..1000000)", "-n: 'x' is not a number
 * (0..1000000)"; returns EXIT_USAGE.
 */
int cli_parse_number(const struct cli_cmd *cmd, const char *name, const char *arg, uint64_t min,
		     uint64_t max, uint64_t *ret);
/*
 * A size in bytes: digits, with an optional K, M, G or T (powers of 1024), from min to max
 * (each a whole K, M, G or T: refusals name the range so). 0 or EXIT_USAGE after
 * cli_usage_error() naming the option.
 */
int cli_parse_size(const struct cli_cmd *cmd, const char *name, const char *arg, uint64_t min,
		   uint64_t max, uint64_t *ret);
/* The same into an unsigned int (max at most UINT_MAX). */
int cli_parse_uint(const struct cli_cmd *cmd, const char *name, const char *arg, uint64_t min,
		   uint64_t max, unsigned int *ret);

/*
 * One command's option. Returns 0, EXIT_USAGE after cli_usage_error(), or CLI_DONE. It sees
 * neither the common options nor unknown ones: cli_parse() handles those.
 */
typedef int (*cli_opt_fn)(const struct cli_cmd *cmd, void *ctx, int c, const char *arg);

/*
 * Runs getopt_long over argv (argv[0] is the command) with shortopts and longopts (both
 * including the CLI_* common options), handing each of the command's own options to on_opt.
 * On return, optind is the first operand. 0, EXIT_USAGE (printed) or CLI_DONE.
 */
int cli_parse(const struct cli_cmd *cmd, int argc, char **argv, const char *shortopts,
	      const struct option *longopts, cli_opt_fn on_opt, void *ctx);

/*
 * An operand that is a view list ("schedules,locks") where a file or a command belongs: the
 * old `-v VIEWS` (-v is now --verbose). EXIT_USAGE after saying so, or 0.
 */
int cli_check_stray_views(const struct cli_cmd *cmd, const char *operand);

/*
 * Before any work: a binary or page format (pprof, svg, html) to path NULL (stdout) that is a
 * terminal is refused. 0, or EXIT_USAGE after saying to use -o FILE.
 */
int cli_check_output(const struct cli_cmd *cmd, enum sp_format format, const char *path);

/* Writes the report: one call of write(ctx, f). */
typedef int (*cli_write_fn)(const void *ctx, FILE *f);

/*
 * Opens path for writing (NULL: stdout; output.h: a temporary file renamed into place when
 * complete), lets write_fn write, flushes and closes. A failure
 * is logged once ("cannot write the WHAT to PATH: ..."). 0 or -errno; -EPIPE, unlogged, when
 * stdout is a pipe whose reader has gone (`| head`): the caller exits EXIT_PIPE quietly.
 */
int cli_write_output(const char *path, const char *what, cli_write_fn write_fn, const void *ctx);

struct cli_output;
/*
 * The same into an output already opened (output.h: before the trace), which it commits
 * or, on an error, removes.
 */
int cli_output_write(struct cli_output *out, const char *what, cli_write_fn write_fn,
		     const void *ctx);

/* The run rendered with ro into out, as cli_output_write() ("the WHAT" in its error). */
int cli_output_write_run(struct cli_output *out, const char *what, const struct sp_run *run,
			 const struct render_opts *ro);

/* The run rendered with ro into path (NULL: stdout), as cli_write_output(). */
int cli_write_run(const struct sp_run *run, const struct render_opts *ro, const char *path);

/*
 * Loads a saved run (path "-": stdin) and checks the invariants of its totals
 * (sp_run_check()); a failure is logged as "PATH: why". 0 or -EINVAL.
 */
int cli_load_run(const char *path, struct sp_run *run);

/*
 * --strict: whether the run lost anything (lost rows, missing stacks, skipped or unpaired lock
 * events) or extra (what only the tracer knows, e.g. "2 ring buffer drops"; NULL: none) says
 * so. If it did, logs one line naming the losses and returns true.
 */
bool cli_report_losses(const struct sp_run *run, const char *extra);

/* The options of the commands that read saved runs (report, diff). */
struct runs_opts {
	struct render_opts render;
	bool strict;	    /* report --strict */
	const char *output; /* -o; NULL = stdout */
	char **files;	    /* the saved runs named */
	int nfiles;	    /* how many */
	cli_opt_fn extra; /* runs_parse_with()'s */
	void *extra_ctx;
};

/* report --strict: the long option's value (above any render option's) */
#define CLI_OPT_STRICT 0x200

/* The options of report and diff after their render options. */
#define RUNS_LONG_OPTS                                                                           \
	{ "output", required_argument, NULL, 'o' },                                               \
	CLI_LONG_OPTS,                                                                            \
	{}

/*
 * report and diff: the render options of longopts, -o, the common options, then exactly
 * nfiles saved runs (operands_desc names them in the error). 0, EXIT_USAGE or CLI_DONE.
 * From here on, messages say "schedprof CMD: ".
 */
int runs_parse(const struct cli_cmd *cmd, int argc, char **argv, const struct option *longopts,
	       int nfiles, const char *operands_desc, struct runs_opts *o);
/*
 * The same, and extra (with extra_ctx) sees every option first: the command's own (report
 * --from ...), -ENOENT for the others. nfiles < 0: up to -nfiles runs, the command checks how
 * many (o->nfiles).
 */
int runs_parse_with(const struct cli_cmd *cmd, int argc, char **argv,
		    const struct option *longopts, int nfiles, const char *operands_desc,
		    cli_opt_fn extra, void *extra_ctx, struct runs_opts *o);

#endif
