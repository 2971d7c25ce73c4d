/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's BTF parsed from a mapping of its sysfs file, not a read copy (vmlinux_btf.c):
 * this module also defines libbpf's btf__load_vmlinux_btf() for the executable it is linked
 * into, so that libbpf's own calls (bpf_object__load) take this way too.
 */
#ifndef SCHEDPROF_VMLINUX_BTF_H
#define SCHEDPROF_VMLINUX_BTF_H

#define VMLINUX_BTF_PATH "/sys/kernel/btf/vmlinux"

struct btf;

/*
 * The raw BTF file path (e.g. VMLINUX_BTF_PATH) parsed from a read-only mapping: btf__free()
 * it. NULL with errno set when it cannot be opened, mapped (sysfs maps it since Linux 6.16)
 * or parsed.
 */
struct btf *vmlinux_btf_map(const char *path);

#endif /* SCHEDPROF_VMLINUX_BTF_H */
