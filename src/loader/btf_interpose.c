// SPDX-License-Identifier: BSD-2-Clause
/*
 * libbpf's btf__load_vmlinux_btf(), btf__find_by_name_kind() and btf__free(), replaced for
 * the executable this is linked into.
 *
 * libbpf 1.1 calls all three through its PLT (readelf -rW libbpf.so.1: JUMP_SLOT), so an
 * executable that defines them is called instead (ELF symbol interposition, as malloc
 * replacements are; the linker exports them because libbpf references them):
 *  - btf__load_vmlinux_btf(): the placeholder or the BTF attach_ids_arm() prepared for this
 *    load (attach_ids.h), else the kernel's BTF from a mapping (vmlinux_btf.h);
 *  - btf__find_by_name_kind(): on the placeholder, answered from the boot's attach ID cache;
 *    on any other BTF, libbpf's own;
 *  - btf__free(): of the placeholder, also ends the answers for it.
 * With libbpf linked without interposition (statically, or -Bsymbolic), libbpf's own run:
 * the whole BTF is parsed as before, nothing else changes.
 */
#include <bpf/btf.h>
#include <dlfcn.h>
#include <errno.h>

#include "loader/attach_ids.h"
#include "loader/vmlinux_btf.h"

/* libbpf's own definition of name, past this executable's. */
static void *libbpf_own(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

struct btf *btf__load_vmlinux_btf(void)
{
	struct btf *btf = attach_ids_take_vmlinux();

	return btf ? btf : vmlinux_btf_load();
}

__s32 btf__find_by_name_kind(const struct btf *btf, const char *type_name, __u32 kind)
{
	static __typeof__(btf__find_by_name_kind) *own;
	int id;

	if (attach_ids_answer(btf, type_name, kind, &id)) {
		if (id < 0)
			errno = -id;
		return id;
	}
	if (!own)
		own = (__typeof__(btf__find_by_name_kind) *)libbpf_own("btf__find_by_name_kind");
	if (!own) {
		errno = ENOSYS;
		return -ENOSYS;
	}
	return own(btf, type_name, kind);
}

void btf__free(struct btf *btf)
{
	static __typeof__(btf__free) *own;

	attach_ids_forget(btf);
	if (!own)
		own = (__typeof__(btf__free) *)libbpf_own("btf__free");
	if (own)
		own(btf);
}
