/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The wait classes of the time budget: what a blocked task waited for, from its
 * row's caller and wait kind. One rule for the budget (struct sp_budget_blocked), the
 * timeline's blocked segments and every output that groups by class.
 */
#ifndef SCHEDPROF_WAITCLASS_H
#define SCHEDPROF_WAITCLASS_H

#include <stddef.h>
#include <stdint.h>
#include "model/model.h"

/*
 * Every class, once: X(ENUM, name, member) with its SP_WC_ENUM, its name (the JSON key of
 * budget.blocked, and the wait a row names for the lock and I/O classes) and its member of
 * struct sp_budget_blocked. The lock and I/O classes come first, child, sleep and other last.
 */
#define SP_WAIT_CLASSES(X)                                                                       \
	X(PIPE, "pipe", pipe) X(IO, "io", io) X(RWSEM_READ, "rwsem-read", rwsem_read)           \
	X(RWSEM_WRITE, "rwsem-write", rwsem_write) X(MUTEX, "mutex", mutex)                      \
	X(SEMAPHORE, "semaphore", semaphore) X(RTMUTEX, "rt-mutex", rtmutex)                     \
	X(PERCPU_RWSEM, "percpu-rwsem", percpu_rwsem) X(CHILD, "child", child)                   \
	X(SLEEP, "sleep", sleep) X(OTHER, "other", other)

#define SP_WC_ENUM(E, name, member) SP_WC_##E,
enum sp_wait_class {
	SP_WAIT_CLASSES(SP_WC_ENUM)
	SP_WC__MAX,
};
#undef SP_WC_ENUM

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
