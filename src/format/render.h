/* SPDX-License-Identifier: BSD-2-Clause */
/* Output formats: every one renders from the run model (model.h), nothing else. */
#ifndef SCHEDPROF_RENDER_H
#define SCHEDPROF_RENDER_H

#include <stdbool.h>
#include <stdio.h>
#include "model/model.h"

enum sp_format {
	SP_FMT_TABLE = 0,
	SP_FMT_JSON,
	SP_FMT_FOLDED,
	SP_FMT_PPROF,
	SP_FMT_SVG,
	SP_FMT_HTML,
	SP_FMT_TRACE_EVENT, /* the timeline as Chrome trace-event JSON */
	SP_FMT_TIMELINE,    /* the timeline as an HTML page */
};

#define SP_VIEW_SCHED (1u << 0)
#define SP_VIEW_PROFILE (1u << 1)
#define SP_VIEW_LOCKS (1u << 2)
#define SP_VIEW_TIMELINE (1u << 3) /* --timeline only: not in SP_VIEW_ALL */
/* What trace collects by default: schedules, profile, locks. */
#define SP_VIEW_ALL (SP_VIEW_SCHED | SP_VIEW_PROFILE | SP_VIEW_LOCKS)
/* Every view: what report, diff and trace render of a run by default (what it holds). */
#define SP_VIEW_EVERY (SP_VIEW_ALL | SP_VIEW_TIMELINE)

enum sp_group { SP_GROUP_CALLER = 0, SP_GROUP_COMM };

/* What stack-based formats (folded, flame graphs) and diff measure. */
enum sp_value {
	SP_VALUE_COUNT = 0, /* schedules, samples, contentions */
	SP_VALUE_TIME,	    /* off-CPU, CPU (samples x period), lock wait: nanoseconds */
};

struct render_opts {
	enum sp_format format;
	unsigned int views; /* SP_VIEW_* to print */
	unsigned int nrows; /* -n */
	bool stacks;	    /* --stacks */
	unsigned int nstacks; /* stacks printed per row with --stacks */
	enum sp_group group;  /* --by comm */
	enum sp_value value;  /* --value */
	enum sp_lock_sort lock_sort; /* --sort: the locks table's ranking */
	bool lock_stacks;	     /* --lock-stacks */
	bool lines;		     /* --lines: stacks show file:line and inlined frames */
};

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

/* Table helpers shared by the views' printers (format_table.c). */
double sp_pct(uint64_t part, uint64_t total);
/* The rows shown of n: at most -n (0: all). */
size_t sp_rows_shown(size_t n, const struct render_opts *o);
/*
 * The notes on what the stacks of a view's events (what: "schedules", "contentions") lack:
 * no kernel stack, no user frames, a truncated user stack; nothing for a count of 0.
 */
void sp_print_stack_notes(const char *what, uint64_t missing, uint64_t user_missing,
			  uint64_t user_truncated, FILE *f);
/* "(N more rows: -n 0 shows all)" when shown < n. */
void sp_print_more_rows(size_t shown, size_t n, FILE *f);
/*
 * The first --stack-rows stacks of a row whose total is total (merged across the pids of a
 * comm): count, share, time_label and time when time_label is set, comm; then the frames.
 * 0 or -ENOMEM.
 */
int sp_print_stack_list(const struct sp_stack_list *stacks, uint64_t total,
			const char *time_label, const struct render_opts *o, FILE *f);

#endif
