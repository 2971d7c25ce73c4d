/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's BTF parsed from a read-only mapping of /sys/kernel/btf/vmlinux (Linux >= 6.16
 * maps it) instead of from a read copy.
 *
 * libbpf 1.1 (Debian 12's) reads the file into one buffer, a page per read (sysfs hands out
 * no more), then btf_new() copies it into a second: two copies at once, the highest point of
 * a schedules-view run's memory (peak RSS). The mapping is the kernel's own pages
 * (remap_pfn_range: no RSS), so only libbpf's copy is resident: about half the memory and
 * less than half the time. The struct btf is the same: btf__new() of the same bytes.
 *
 * The executable hands this to libbpf too, in place of libbpf's btf__load_vmlinux_btf()
 * (btf_interpose.c). Where the file cannot be mapped (older kernels), libbpf's own does the
 * work: same result, more memory.
 */
#include <bpf/btf.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/vmlinux_btf.h"

struct btf *vmlinux_btf_map(const char *path)
{
	struct btf *btf = NULL;
	struct stat st;
	void *map;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		err = errno;
		goto out;
	}
	if (st.st_size <= 0) {
		err = EINVAL;
		goto out;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		err = errno;
		goto out;
	}
	btf = btf__new(map, st.st_size);
	err = btf ? 0 : errno;
	munmap(map, st.st_size);
out:
	close(fd);
	errno = err;
	return btf;
}

struct btf *vmlinux_btf_load(void)
{
	__typeof__(btf__load_vmlinux_btf) *libbpf_own;
	struct btf *btf = vmlinux_btf_map(VMLINUX_BTF_PATH);

	if (btf)
		return btf;
	/* libbpf's, past the executable's replacement (btf_interpose.c), if it has one */
	libbpf_own = (__typeof__(btf__load_vmlinux_btf) *)dlsym(RTLD_NEXT, "btf__load_vmlinux_btf");
	if (!libbpf_own) {
		errno = ENOSYS;
		return NULL;
	}
	return libbpf_own();
}
