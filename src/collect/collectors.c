// SPDX-License-Identifier: BSD-2-Clause
/*
 * The collectors, one per view: a new view adds its line here. Their order does not matter
 * (collector.h); the engine keeps per-collector state for at most TRACE_MAX_COLLECTORS.
 */
#include "base/util.h"
#include "collect/tracer.h"

extern const struct collector sched_collector, profile_collector, lock_collector,
	timeline_collector;

const struct collector *const collectors[] = {
	&sched_collector,
	&profile_collector,
	&lock_collector,
	&timeline_collector,
};
const size_t ncollectors = ARRAY_SIZE(collectors);

_Static_assert(ARRAY_SIZE(collectors) <= TRACE_MAX_COLLECTORS,
	       "raise TRACE_MAX_COLLECTORS (tracer.h)");
