/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's BTF parsed from a mapping of its sysfs file, not a read copy (vmlinux_btf.c).
 * The executable also replaces libbpf's btf__load_vmlinux_btf() (btf_interpose.c): libbpf's
 * own calls (bpf_object__load) take this way too, or get a placeholder when the boot's attach
 * id cache answers for them (attach_ids.h). Our own readers of the kernel's BTF (kfeatures.c,
 * corebtf.c) call vmlinux_btf_load(), which is always the real BTF.
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
/*
 * The running kernel's whole BTF, parsed: from the mapping, else as libbpf's own
 * btf__load_vmlinux_btf() reads it (never the placeholder of attach_ids.h). NULL with errno.
 */
struct btf *vmlinux_btf_load(void);

#endif /* SCHEDPROF_VMLINUX_BTF_H */
