// SPDX-License-Identifier: BSD-2-Clause
/* Lock kinds from contention_begin's flags. */
#include <linux/types.h>
#include "rows/lockflags.h"
#include "schedprof/lock_pair.h"

/*
 * The kernel's callers (5.19 to 6.18): queued_spin_lock_slowpath SPIN; qrwlock SPIN|READ,
 * SPIN|WRITE; rwsem READ, WRITE; __mutex_lock_common MUTEX (|SPIN while it spins);
 * __down_common 0; rt_mutex_slowlock RT; rtlock (PREEMPT_RT spinlocks) RT|SPIN; rwbase_rt
 * (PREEMPT_RT rwsem and rwlock) RT|READ, RT|WRITE; percpu_rwsem_wait PERCPU|READ or WRITE.
 */
const char *lockflags_kind(uint32_t f)
{
	const uint32_t rw = SP_LCB_F_READ | SP_LCB_F_WRITE;

	if (f & ~(uint32_t)(SP_LCB_F_SPIN | rw | SP_LCB_F_RT | SP_LCB_F_PERCPU | SP_LCB_F_MUTEX))
		return "unknown";
	if ((f & rw) == rw)
		return "unknown";
	if (f & SP_LCB_F_MUTEX)
		return (f & ~(uint32_t)(SP_LCB_F_MUTEX | SP_LCB_F_SPIN)) ? "unknown" : "mutex";
	if (f & SP_LCB_F_PERCPU) {
		if (f & (SP_LCB_F_SPIN | SP_LCB_F_RT))
			return "unknown";
		return (f & SP_LCB_F_WRITE) ? "percpu-rwsem-write" : "percpu-rwsem-read";
	}
	if (f & SP_LCB_F_RT) {
		if (f & SP_LCB_F_SPIN)
			return (f & rw) ? "unknown" : "rt-spinlock";
		if (f & SP_LCB_F_READ)
			return "rt-rw-read";
		return (f & SP_LCB_F_WRITE) ? "rt-rw-write" : "rt-mutex";
	}
	if (f & SP_LCB_F_SPIN) {
		if (f & SP_LCB_F_READ)
			return "rwlock-read";
		return (f & SP_LCB_F_WRITE) ? "rwlock-write" : "spinlock";
	}
	if (f & SP_LCB_F_READ)
		return "rwsem-read";
	return (f & SP_LCB_F_WRITE) ? "rwsem-write" : "semaphore";
}

bool lockflags_sleeping(uint32_t flags)
{
	return sp_lock_flags_sleeping(flags);
}
