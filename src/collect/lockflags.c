// SPDX-License-Identifier: BSD-2-Clause
/* Lock kinds from contention_begin's flags, and the tracepoint's presence in the kernel BTF. */
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lockflags.h"
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

/* struct btf_header of include/uapi/linux/btf.h, kept here to read a file without libbpf */
struct btf_hdr {
	uint16_t magic;
	uint8_t version;
	uint8_t flags;
	uint32_t hdr_len;
	uint32_t type_off;
	uint32_t type_len;
	uint32_t str_off;
	uint32_t str_len;
};

#define BTF_MAGIC_LE 0xeB9F

/* sysfs hands binary files out a page or so at a time: loop until len bytes or EOF. */
static int pread_full(int fd, void *buf, size_t len, off_t at)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, at + (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EINVAL; /* truncated */
		got += (size_t)n;
	}
	return 0;
}

int lockflags_btf_has_tp(const char *path, const char *tp)
{
	struct btf_hdr h;
	char want[128];
	char *strs = NULL;
	size_t wlen;
	int fd, ret;
	off_t at;

	if (snprintf(want, sizeof(want), "btf_trace_%s", tp) >= (int)sizeof(want))
		return -EINVAL;
	wlen = strlen(want) + 1; /* with its NUL: a whole string of the section */
	fd = open(path ? path : "/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = pread_full(fd, &h, sizeof(h), 0);
	if (ret)
		goto out;
	ret = -EINVAL;
	if (h.magic != BTF_MAGIC_LE || h.hdr_len < sizeof(h) || h.str_len == 0 ||
	    h.str_len > (1u << 30))
		goto out;
	strs = malloc(h.str_len);
	if (!strs) {
		ret = -ENOMEM;
		goto out;
	}
	at = (off_t)h.hdr_len + h.str_off;
	ret = pread_full(fd, strs, h.str_len, at);
	if (ret)
		goto out;
	ret = -EINVAL;
	if (strs[h.str_len - 1])
		goto out;
	ret = 0;
	for (size_t i = 0; i + wlen <= h.str_len; i += strlen(strs + i) + 1) {
		if (!memcmp(strs + i, want, wlen)) {
			ret = 1;
			break;
		}
	}
out:
	free(strs);
	close(fd);
	return ret;
}
