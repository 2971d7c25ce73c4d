// SPDX-License-Identifier: BSD-2-Clause
/* The wait classes of the time budget (waitclass.h). */
#include <string.h>
#include "base/util.h"
#include "model/waitclass.h"

static const char *const class_names[SP_WC__MAX] = {
	[SP_WC_PIPE] = "pipe",
	[SP_WC_IO] = "io",
	[SP_WC_RWSEM_READ] = "rwsem-read",
	[SP_WC_RWSEM_WRITE] = "rwsem-write",
	[SP_WC_MUTEX] = "mutex",
	[SP_WC_SEMAPHORE] = "semaphore",
	[SP_WC_RTMUTEX] = "rt-mutex",
	[SP_WC_PERCPU_RWSEM] = "percpu-rwsem",
	[SP_WC_CHILD] = "child",
	[SP_WC_SLEEP] = "sleep",
	[SP_WC_OTHER] = "other",
};

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
	switch (c) {
	case SP_WC_PIPE: return &b->pipe;
	case SP_WC_IO: return &b->io;
	case SP_WC_RWSEM_READ: return &b->rwsem_read;
	case SP_WC_RWSEM_WRITE: return &b->rwsem_write;
	case SP_WC_MUTEX: return &b->mutex;
	case SP_WC_SEMAPHORE: return &b->semaphore;
	case SP_WC_RTMUTEX: return &b->rtmutex;
	case SP_WC_PERCPU_RWSEM: return &b->percpu_rwsem;
	case SP_WC_CHILD: return &b->child;
	case SP_WC_SLEEP: return &b->sleep;
	default: return &b->other;
	}
}
