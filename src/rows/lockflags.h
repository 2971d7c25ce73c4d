/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Lock kinds from the flags of lock:contention_begin. Whether the kernel has the tracepoint
 * is a kernel feature (kfeatures.h).
 */
#ifndef SCHEDPROF_LOCKFLAGS_H
#define SCHEDPROF_LOCKFLAGS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * "spinlock", "rwlock-read", "rwlock-write", "rwsem-read", "rwsem-write", "mutex",
 * "semaphore", "rt-mutex", "rt-spinlock", "rt-rw-read", "rt-rw-write", "percpu-rwsem-read",
 * "percpu-rwsem-write", or "unknown" for flags no kernel emits. Static strings.
 */
const char *lockflags_kind(uint32_t flags);
/* True for locks whose waiter may sleep (timed per task), false for spinning ones. */
bool lockflags_sleeping(uint32_t flags);

#endif
