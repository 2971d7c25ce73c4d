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

/*
 * Each view's bit, SP_VIEW_SCHED ... (SP_VIEW_LIST, model.h), and the masks: what trace
 * collects by default (schedules, profile, locks), and every view (what report, diff and
 * trace render of a run by default: what it holds).
 */
#define SP_VIEW_BIT_(name, BIT, bit, collector, by_default) SP_VIEW_##BIT = 1u << (bit),
enum { SP_VIEW_LIST(SP_VIEW_BIT_) };
#undef SP_VIEW_BIT_
#define SP_VIEW_IN_ALL_(name, BIT, bit, collector, by_default) | ((by_default) ? SP_VIEW_##BIT : 0u)
#define SP_VIEW_IN_EVERY_(name, BIT, bit, collector, by_default) | SP_VIEW_##BIT
#define SP_VIEW_ALL (0u SP_VIEW_LIST(SP_VIEW_IN_ALL_))
#define SP_VIEW_EVERY (0u SP_VIEW_LIST(SP_VIEW_IN_EVERY_))

/*
 * Their names for help texts and messages, ", " between them: every view, and those trace
 * collects by default.
 */
#define SP_VIEW_IF_1_(s) s
#define SP_VIEW_IF_0_(s)
#define SP_VIEW_NAME_(name, BIT, bit, collector, by_default) ", " #name
#define SP_VIEW_DEFAULT_NAME_(name, BIT, bit, collector, by_default)                             \
	SP_VIEW_IF_##by_default##_(", " #name)
#define SP_VIEW_NAMES_EVERY (("" SP_VIEW_LIST(SP_VIEW_NAME_)) + 2)
#define SP_VIEW_NAMES_ALL (("" SP_VIEW_LIST(SP_VIEW_DEFAULT_NAME_)) + 2)

/* Bits of their own: their sum is their union. */
#define SP_VIEW_SUM_(name, BIT, bit, collector, by_default) + SP_VIEW_##BIT
_Static_assert((0u SP_VIEW_LIST(SP_VIEW_SUM_)) == SP_VIEW_EVERY,
	       "two views of SP_VIEW_LIST (model.h) share a bit");
#undef SP_VIEW_SUM_

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
