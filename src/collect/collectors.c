// SPDX-License-Identifier: BSD-2-Clause
/*
 * The collectors, one per view, named by SP_VIEW_LIST (model.h): a new view adds its line
 * there. Their order does not matter (collector.h); the engine keeps per-collector state for
 * at most TRACE_MAX_COLLECTORS.
 */
#include "base/util.h"
#include "collect/tracer.h"

#define COLLECTOR_EXTERN_(name, BIT, bit, coll, by_default) \
	extern const struct collector coll##_collector;
SP_VIEW_LIST(COLLECTOR_EXTERN_)
#undef COLLECTOR_EXTERN_

#define COLLECTOR_ENTRY_(name, BIT, bit, coll, by_default) &coll##_collector,
const struct collector *const collectors[] = { SP_VIEW_LIST(COLLECTOR_ENTRY_) };
#undef COLLECTOR_ENTRY_
const size_t ncollectors = ARRAY_SIZE(collectors);

_Static_assert(ARRAY_SIZE(collectors) <= TRACE_MAX_COLLECTORS,
	       "raise TRACE_MAX_COLLECTORS (tracer.h)");
