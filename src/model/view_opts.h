/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a view is asked to show: the SP_VIEW_* bit of each view (view.h registers them), and
 * the options its printers and every format take (render_opts).
 */
#ifndef SCHEDPROF_VIEW_OPTS_H
#define SCHEDPROF_VIEW_OPTS_H

#include <stdbool.h>
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

#endif
