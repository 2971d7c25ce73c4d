/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Lock kinds from the flags of lock:contention_begin, and whether the running kernel has
 * that tracepoint (Linux >= 5.19), read from its BTF without parsing all of it.
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

/*
 * Whether the BTF file at path (NULL: /sys/kernel/btf/vmlinux) names the tracepoint's BTF
 * typedef "btf_trace_<tp>", which tp_btf programs attach to. Only the header and string
 * section are read. 1 yes, 0 no, or -errno when the file cannot be read or is not BTF.
 */
int lockflags_btf_has_tp(const char *path, const char *tp);

#endif
