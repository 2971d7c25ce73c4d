/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The wait classes of the time budget (issue #10): what a blocked task waited for, from its
 * row's caller and wait kind. One rule for the budget (struct sp_budget_blocked), the
 * timeline's blocked segments and every output that groups by class.
 */
#ifndef SCHEDPROF_WAITCLASS_H
#define SCHEDPROF_WAITCLASS_H

#include <stddef.h>
#include <stdint.h>
#include "model/model.h"

enum sp_wait_class {
	SP_WC_PIPE = 0,
	SP_WC_IO,
	SP_WC_RWSEM_READ,
	SP_WC_RWSEM_WRITE,
	SP_WC_MUTEX,
	SP_WC_SEMAPHORE,
	SP_WC_RTMUTEX,
	SP_WC_PERCPU_RWSEM,
	SP_WC_CHILD,
	SP_WC_SLEEP,
	SP_WC_OTHER,
	SP_WC__MAX,
};

/*
 * The class of a sleep from its row: wait ("pipe", "io", a lock kind as fold_wait_name()
 * names it, or NULL) first, then the caller (do_wait: child; nanosleep and friends: sleep).
 */
enum sp_wait_class sp_wait_class(const char *caller, const char *wait);
/* "pipe", "io", "rwsem-read", ..., "child", "sleep", "other": the JSON keys of budget.blocked. */
const char *sp_wait_class_name(enum sp_wait_class c);
/* The class's slot in b. */
uint64_t *sp_budget_slot(struct sp_budget_blocked *b, enum sp_wait_class c);

#endif
