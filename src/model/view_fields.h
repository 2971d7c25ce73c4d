/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What several views (src/views/NAME/model.c) describe alike, beyond view.h's field groups: the
 * keys of their rows' measures and of their losses in the JSON schema, and the losses --strict
 * names. One macro each, so that the views cannot drift apart in a key, a kind over time or a
 * sentence.
 */
#ifndef SCHEDPROF_VIEW_FIELDS_H
#define SCHEDPROF_VIEW_FIELDS_H

#include <stddef.h>
#include "model/schema.h"
#include "model/view.h"

/*
 * A row's events: how many, their time (member time of T, written under its own name:
 * offcpu_ns, wait_ns) and the longest one, in the order and with the kinds of the comm maps'
 * {"count", time key, "max_ns"} (schema.c).
 */
#define SP_ROW_TIME_FIELDS(T, time)                                                             \
	SP_U64(T, "count", count), SP_U64(T, #time, time),                                       \
	SP_U64_AS(T, "max_ns", max_ns, SP_MAX)

/*
 * A view whose events have stacks: those without a kernel stack, then what the user stacks
 * lack (view.h), each counted in every total.
 */
#define SP_VIEW_STACK_LOSS_FIELDS(T)                                                            \
	SP_U64(T, "missing_stacks", missing_stacks), SP_VIEW_USER_STACK_FIELDS(T),                \
	SP_VIEW_USER_CUT_FIELDS(T)

/*
 * The struct sp_view_loss entries of a view (member V of struct sp_run) that keeps its rows
 * in a map and its events' stacks: the events of member lost, in the totals but in no row
 * (what: "schedules"; option: the limit that raises the map's size), and those of
 * missing_stacks.
 */
#define SP_VIEW_ROW_LOSSES(V, lost, what, option)                                               \
	{ offsetof(struct sp_run, V.lost), what " in no row (" option ")" },                     \
	{ offsetof(struct sp_run, V.missing_stacks), what " without a stack" }

#endif
