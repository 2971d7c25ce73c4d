/* SPDX-License-Identifier: BSD-2-Clause */
/* Output formats: every one renders from the run model (model.h), nothing else. */
#ifndef SCHEDPROF_RENDER_H
#define SCHEDPROF_RENDER_H

#include <stdbool.h>
#include <stdio.h>
#include "model/model.h"
#include "model/view_opts.h"
#include "model/view_print.h"

/* Name <-> enum for the CLI. -EINVAL on an unknown name. */
int render_parse_format(const char *s, enum sp_format *ret);
int render_parse_views(const char *s, unsigned int *ret);
const char *render_format_names(void);
int render_parse_value(const char *s, enum sp_value *ret);
/* Binary or page-sized formats (pprof, svg, html), not for a terminal. */
bool render_format_is_binary(enum sp_format format);
/* Formats that draw the timeline (--timeline) and nothing else: trace-event, timeline. */
bool render_format_is_timeline(enum sp_format format);
/*
 * Why run cannot be rendered in format (the one line a usage error prints: "no timeline in
 * this run: trace with --timeline"), or NULL when it can.
 */
const char *render_run_missing(const struct sp_run *run, enum sp_format format);

/* Writes the run in opts->format to f. 0 or -errno (-EIO on a write error). */
int render_run(const struct sp_run *run, const struct render_opts *opts, FILE *f);

/* Per-format back ends. */
int format_table(const struct sp_run *run, const struct render_opts *opts, FILE *f);
int format_json(const struct sp_run *run, const struct render_opts *opts, FILE *f);
/* The same document on one line (trace -i -f json: JSON lines). */
int format_json_line(const struct sp_run *run, const struct render_opts *opts, FILE *f);
int format_folded(const struct sp_run *run, const struct render_opts *opts, FILE *f);
int format_pprof(const struct sp_run *run, const struct render_opts *opts, FILE *f);
int format_svg(const struct sp_run *run, const struct render_opts *opts, FILE *f);
int format_html(const struct sp_run *run, const struct render_opts *opts, FILE *f);
int format_trace_event(const struct sp_run *run, const struct render_opts *opts, FILE *f);
int format_timeline(const struct sp_run *run, const struct render_opts *opts, FILE *f);

/* "command: CMD (exit N)", "pids: 1,2" or "system-wide", without a newline. */
void sp_print_target(const struct sp_target_info *t, FILE *f);

#endif
