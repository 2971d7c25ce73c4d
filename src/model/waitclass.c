// SPDX-License-Identifier: BSD-2-Clause
/* The wait classes of the time budget (waitclass.h). */
#include <string.h>
#include "base/util.h"
#include "model/waitclass.h"

#define NAME(E, name, member) [SP_WC_##E] = name,
static const char *const class_names[SP_WC__MAX] = { SP_WAIT_CLASSES(NAME) };
#undef NAME

/* Callers that wait for a child, or for time to pass; a prefix ends with '*'. */
static const char *const child_callers[] = { "do_wait*", "kernel_wait4", "__do_sys_wait4" };
static const char *const sleep_callers[] = {
	"do_nanosleep", "hrtimer_nanosleep*", "common_nsleep*", "msleep*", "usleep_range*",
	"schedule_timeout_*interruptible", "do_sys_pause", "__do_sys_pause",
};

static bool any(const char *name, const char *const *pats, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (name_matches(name, pats[i]))
			return true;
	return false;
}

enum sp_wait_class sp_wait_class(const char *caller, const char *wait)
{
	if (wait)
		for (int c = 0; c < SP_WC_CHILD; c++)
			if (!strcmp(wait, class_names[c]))
				return (enum sp_wait_class)c;
	if (!caller)
		return SP_WC_OTHER;
	if (any(caller, child_callers, ARRAY_SIZE(child_callers)))
		return SP_WC_CHILD;
	if (any(caller, sleep_callers, ARRAY_SIZE(sleep_callers)))
		return SP_WC_SLEEP;
	return SP_WC_OTHER;
}

const char *sp_wait_class_name(enum sp_wait_class c)
{
	return (unsigned int)c < SP_WC__MAX ? class_names[c] : "other";
}

uint64_t *sp_budget_slot(struct sp_budget_blocked *b, enum sp_wait_class c)
{
#define SLOT(E, name, member) [SP_WC_##E] = offsetof(struct sp_budget_blocked, member),
	static const size_t slots[SP_WC__MAX] = { SP_WAIT_CLASSES(SLOT) };
#undef SLOT

	return (uint64_t *)((char *)b + slots[(unsigned int)c < SP_WC__MAX ? c : SP_WC_OTHER]);
}
