// SPDX-License-Identifier: BSD-2-Clause
/*
 * `schedprof trace`: the command line (trace_cli.c) into the engine's configuration, and the
 * run into the outputs (-o or stdout, --save) the engine's sink writes, each opened before the
 * trace and written whole or not at all (output.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/trace_opts.h"
#include "base/log.h"

static int outputs_open(void *ctx, FILE **ret_out)
{
	struct trace_outputs *w = ctx;

	if (cli_output_open(&w->out, w->o->output) ||
	    (w->o->save && cli_output_open(&w->save, w->o->save)))
		return -EIO; /* said by cli_output_open() */
	*ret_out = w->out.f;
	return 0;
}

/*
 * A run that could not be written where asked is not lost: its JSON goes to a new file of its
 * own ($TMPDIR or /tmp), of a name nobody can plant in advance, readable by its owner only,
 * and one line names it.
 */
static void save_fallback(const struct sp_run *run, const struct render_opts *json)
{
	const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct cli_output out;
	char path[PATH_MAX];

	if (cli_output_open_unique(&out, dir, "schedprof-run-", ".json"))
		return;
	snprintf(path, sizeof(path), "%s", out.path);
	if (!cli_output_write_run(&out, "run", run, json))
		log_msg(LOG_ERROR, "the run is saved in %s: schedprof report %s renders it", path,
			path);
	cli_output_abort(&out);
}

/* The report into the output opened at start-up, then with --save the run as -f json writes it. */
static int outputs_write(void *ctx, const struct sp_run *run, bool report)
{
	struct trace_outputs *w = ctx;
	const struct trace_opts *o = w->o;
	struct render_opts json = o->render;
	int err, serr = -ENOENT;

	json.format = SP_FMT_JSON;
	if (!report) {
		err = cli_output_commit(&w->out); /* the intervals were the output */
		if (err && err != -EPIPE)
			elog("cannot write the report: %s", strerror(-err));
	} else {
		err = cli_output_write_run(&w->out, "report", run, &o->render);
	}
	if (o->save)
		serr = cli_output_write_run(&w->save, "saved run", run, &json);
	if (err && err != -EPIPE && serr)
		save_fallback(run, &json);
	return err ?: (o->save ? serr : 0);
}

static void outputs_close(void *ctx)
{
	struct trace_outputs *w = ctx;

	cli_output_abort(&w->out);
	cli_output_abort(&w->save);
}

void trace_outputs_sink(struct trace_outputs *w, const struct trace_opts *o,
			struct trace_sink *ret)
{
	memset(w, 0, sizeof(*w));
	w->o = o;
	*ret = (struct trace_sink){ .ctx = w, .open = outputs_open, .write = outputs_write,
				    .close = outputs_close };
}

int cmd_trace(int argc, char **argv)
{
	struct trace_outputs w;
	struct trace_sink sink;
	struct trace_hooks h;
	struct trace_opts o;
	int code;

	code = trace_parse(argc, argv, &o);
	if (!code && o.trace.interval_ns)
		trace_interval_printer(&o, &h);
	if (!code) {
		trace_outputs_sink(&w, &o, &sink);
		code = trace_run(&o.trace, &sink, o.trace.interval_ns ? &h : NULL);
	} else if (code < 0) {
		code = EXIT_SUCCESS; /* --help */
	}
	trace_opts_free(&o);
	return code;
}
