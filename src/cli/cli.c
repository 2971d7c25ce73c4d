// SPDX-License-Identifier: BSD-2-Clause
/* What the sub-commands share (see cli.h): options, usage errors, saved runs, outputs. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/commands.h"
#include "base/log.h"
#include "model/model_json.h"
#include "cli/render_opts.h"
#include "model/view.h"
#include "model/schema.h"
#include "base/util.h"

int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
{
	char who[64];
	va_list ap;

	snprintf(who, sizeof(who), "schedprof%s%s", *cmd->name ? " " : "", cmd->name);
	va_start(ap, fmt);
	log_vmsg_as(who, LOG_ERROR, fmt, ap);
	va_end(ap);
	log_plain(LOG_ERROR, "Try '%s --help'.", who);
	return EXIT_USAGE;
}

void cli_print_version(void)
{
	printf("schedprof %s\n", SCHEDPROF_VERSION);
}

int cli_parse_number(const struct cli_cmd *cmd, const char *name, const char *arg, uint64_t min,
		     uint64_t max, uint64_t *ret)
{
	int err = parse_u64(arg, min, max, ret);

	if (err == -ERANGE)
		return cli_usage_error(cmd, "%s: %s is out of range (%" PRIu64 "..%" PRIu64 ")", name,
				       arg, min, max);
	if (err)
		return cli_usage_error(cmd, "%s: '%s' is not a number (%" PRIu64 "..%" PRIu64 ")",
				       name, arg, min, max);
	return 0;
}

/* The suffixes of sizes, each 1024 times the one before it (1K = 1024 bytes). */
static const char size_units[] = "KMGT";

/* v (a whole K, M, G or T, or bytes) as "4K", "2G", "512" into buf. */
static const char *size_str(uint64_t v, char *buf, size_t size)
{
	int i = -1;

	while (i < 3 && v >= 1024 && !(v & 1023)) {
		v >>= 10;
		i++;
	}
	snprintf(buf, size, "%" PRIu64 "%.*s", v, i >= 0, i >= 0 ? &size_units[i] : "");
	return buf;
}

int cli_parse_size(const struct cli_cmd *cmd, const char *name, const char *arg, uint64_t min,
		   uint64_t max, uint64_t *ret)
{
	size_t len = strlen(arg), digits;
	const char *u = len ? strchr(size_units, arg[len - 1] & ~0x20) : NULL;
	unsigned int shift = u && *u ? 10 * (unsigned int)(u - size_units + 1) : 0;
	char lo[24], hi[24];
	uint64_t v = 0;

	digits = len - (shift ? 1 : 0);
	size_str(min, lo, sizeof(lo));
	size_str(max, hi, sizeof(hi));
	if (!digits || strspn(arg, "0123456789") != digits)
		return cli_usage_error(cmd, "%s: '%s' is not a size (%s to %s: a number of bytes, "
					    "or with K, M, G or T)", name, arg, lo, hi);
	for (size_t i = 0; i < digits && v <= max; i++)
		v = v * 10 + (uint64_t)(arg[i] - '0');
	if (v > max >> shift || (v << shift) < min)
		return cli_usage_error(cmd, "%s: %s is out of range (%s to %s)", name, arg, lo, hi);
	*ret = v << shift;
	return 0;
}

int cli_parse_uint(const struct cli_cmd *cmd, const char *name, const char *arg, uint64_t min,
		   uint64_t max, unsigned int *ret)
{
	uint64_t v;
	int err = cli_parse_number(cmd, name, arg, min, max, &v);

	if (!err)
		*ret = (unsigned int)v;
	return err;
}

/* Whether arg ("--name" or "--name=...") is the long option whose value is c. */
static bool is_long_opt(const struct option *longopts, const char *arg, int c)
{
	size_t len = strcspn(arg, "=");

	if (strncmp(arg, "--", 2))
		return false;
	for (; longopts->name; longopts++)
		if (longopts->val == c && strlen(longopts->name) == len - 2 &&
		    !strncmp(longopts->name, arg + 2, len - 2))
			return true;
	return false;
}

/*
 * getopt's '?': an unknown option, or one without its argument. optopt is the short option
 * (or the long option's value when its argument is missing), 0 for an unknown long option.
 */
static int unknown_option(const struct cli_cmd *cmd, char **argv, const struct option *longopts)
{
	const char *arg = argv[optind - 1];

	if (optopt && !is_long_opt(longopts, arg, optopt) && optopt < 0x100)
		return cli_usage_error(cmd, "unknown or incomplete option '-%c'", optopt);
	return cli_usage_error(cmd, "unknown or incomplete option '%.*s'", (int)strcspn(arg, "="),
			       arg);
}

static int common_opt(const struct cli_cmd *cmd, int c)
{
	switch (c) {
	case 'v':
		log_more_verbose();
		return 0;
	case 'V':
		cli_print_version();
		return CLI_DONE;
	default: /* 'h' */
		cmd->help();
		return CLI_DONE;
	}
}

int cli_parse(const struct cli_cmd *cmd, int argc, char **argv, const char *shortopts,
	      const struct option *longopts, cli_opt_fn on_opt, void *ctx)
{
	int c, err;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == '?')
			return unknown_option(cmd, argv, longopts);
		if (c == 'v' || c == 'V' || c == 'h')
			err = common_opt(cmd, c);
		else
			err = on_opt(cmd, ctx, c, optarg);
		if (err)
			return err;
	}
	return 0;
}

int cli_check_stray_views(const struct cli_cmd *cmd, const char *operand)
{
	unsigned int views;

	if (render_parse_views(operand, &views) || !access(operand, F_OK))
		return 0;
	return cli_usage_error(cmd, "'%s' is a view list: choose views with --views %s "
				    "(-v means --verbose)", operand, operand);
}

int cli_check_output(const struct cli_cmd *cmd, enum sp_format format, const char *path)
{
	if (!render_format_is_binary(format) || path || !isatty(STDOUT_FILENO))
		return 0;
	return cli_usage_error(cmd, "this format is not for a terminal: write it with -o FILE");
}

/* Whether stdout is a pipe whose reader has gone: a write fails with EPIPE (POLLERR). */
int cli_write_output(const char *path, const char *what, cli_write_fn write_fn, const void *ctx)
{
	struct cli_output out;
	int err = cli_output_open(&out, path);

	return err ? err : cli_output_write(&out, what, write_fn, ctx);
}

int cli_output_write(struct cli_output *out, const char *what, cli_write_fn write_fn,
		     const void *ctx)
{
	bool to_stdout = !out->path;
	char *path = out->path ? strdup(out->path) : NULL; /* the output's, gone by the end */
	int err = write_fn(ctx, out->f), cerr;

	/* ENOSPC, EPIPE: what the write met, not ferror's EIO */
	if (err && cli_output_error(out))
		err = -cli_output_error(out);
	if (err)
		cli_output_abort(out);
	else if ((cerr = cli_output_commit(out)))
		err = cerr;
	if (err == -EPIPE && to_stdout)
		return -EPIPE; /* the reader went away (| head): a quiet exit */
	if (err)
		elog("cannot write the %s%s%s: %s", what, path ? " to " : "", path ? path : "",
		     strerror(-err));
	free(path);
	return err;
}

struct run_output {
	const struct sp_run *run;
	const struct render_opts *ro;
};

static int write_run(const void *ctx, FILE *f)
{
	const struct run_output *ro = ctx;

	return render_run(ro->run, ro->ro, f);
}

int cli_output_write_run(struct cli_output *out, const char *what, const struct sp_run *run,
			 const struct render_opts *ro)
{
	struct run_output ctx = { run, ro };

	return cli_output_write(out, what, write_run, &ctx);
}

int cli_write_run(const struct sp_run *run, const struct render_opts *ro, const char *path)
{
	struct run_output ctx = { run, ro };

	return cli_write_output(path, "report", write_run, &ctx);
}

int cli_load_run(const char *path, struct sp_run *run)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	char msg[256];

	/*
	 * An interval of trace -i: its totals and rows were read a moment apart while tracing
	 * went on, so they agree only to within the events of that moment (docs/trace.md, "Intervals").
	 */
	if (sp_run_load_json(path, run, msg, sizeof(msg)) ||
	    (!run->interval.present && sp_run_check(run, msg, sizeof(msg)))) {
		elog("%s: %s", path, msg);
		return -EINVAL;
	}
	dlog("%s: read in %.1f ms", path, (now_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	return 0;
}

bool cli_report_losses(const struct sp_run *run, const char *extra)
{
	char buf[512];

	if (!sp_run_losses(run, extra, buf, sizeof(buf)))
		return false;
	elog("--strict: the run lost data: %s", buf);
	return true;
}

static int runs_opt(const struct cli_cmd *cmd, void *ctx, int c, const char *arg)
{
	struct runs_opts *o = ctx;
	int r = o->extra ? o->extra(cmd, o->extra_ctx, c, arg) : -ENOENT;

	if (r != -ENOENT)
		return r;
	r = render_opts_parse(cmd, &o->render, c, arg);
	if (r != -ENOENT)
		return r;
	if (c == CLI_OPT_STRICT) {
		o->strict = true;
		return 0;
	}
	o->output = arg; /* -o: the only other option runs_parse passes on */
	return 0;
}

int runs_parse(const struct cli_cmd *cmd, int argc, char **argv, const struct option *longopts,
	       int nfiles, const char *operands_desc, struct runs_opts *o)
{
	return runs_parse_with(cmd, argc, argv, longopts, nfiles, operands_desc, NULL, NULL, o);
}

int runs_parse_with(const struct cli_cmd *cmd, int argc, char **argv,
		    const struct option *longopts, int nfiles, const char *operands_desc,
		    cli_opt_fn extra, void *extra_ctx, struct runs_opts *o)
{
	static char prefix[64];
	int err;

	snprintf(prefix, sizeof(prefix), "schedprof %s", cmd->name);
	log_set_prefix(prefix); /* "schedprof report: run.json: ..." */
	memset(o, 0, sizeof(*o));
	o->extra = extra;
	o->extra_ctx = extra_ctx;
	render_opts_init(&o->render);
	err = cli_parse(cmd, argc, argv, RENDER_SHORT_OPTS "o:" CLI_SHORT_OPTS, longopts, runs_opt,
			o);
	if (err)
		return err;
	for (int i = optind; i < argc; i++)
		if ((err = cli_check_stray_views(cmd, argv[i])))
			return err;
	if (nfiles >= 0 ? argc - optind != nfiles : argc - optind > -nfiles)
		return cli_usage_error(cmd, "give %s", operands_desc);
	o->files = &argv[optind];
	o->nfiles = argc - optind;
	return cli_check_output(cmd, o->render.format, o->output);
}
