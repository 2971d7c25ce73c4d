/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A per-boot CO-RE BTF: the part of the kernel's BTF our object's CO-RE relocations can ask
 * about, handed to libbpf as btf_custom_path.
 *
 * libbpf 1.1 finds each relocated local type's candidates by a linear scan of all the vmlinux
 * types, once per relocated type. Against a BTF of only the candidates the same relocations
 * are a small fraction of that. The kernel's BTF is still read by libbpf for
 * the tp_btf attach targets; only the CO-RE candidate search moves to the small BTF.
 *
 * What it holds, so that every relocation result is the one the full BTF gives:
 *  - every kernel type whose flavour-less name is the name of one of the object's named types
 *    (the only possible candidates: libbpf matches by that name and kind), copied with its
 *    members, offsets, sizes, bitfields and enum values;
 *  - what those reach without a pointer (embedded structs and unions, arrays, typedefs,
 *    modifiers, ints, enums), copied the same way: field accesses descend into them;
 *  - behind a pointer, a struct or union that is not a candidate becomes a member-less one of
 *    the same name, kind and size: field relocations accept any pointer for a pointer
 *    (bpf_core_fields_are_compat), type compatibility compares structs and unions by kind only
 *    (bpf_core_types_are_compat), and type matching by name and kind behind a pointer
 *    (bpf_core_types_match).
 * The roots come from the object's .BTF.ext. Relocations that return a kernel type ID
 * (bpf_core_type_id_kernel) would differ, and a root without a kernel candidate would make
 * libbpf search the modules: with either, no CO-RE BTF is used (and the boot's cache says so).
 * tests/integration/test_corebtf.sh compares every relocation against the whole BTF's.
 */
#ifndef SCHEDPROF_COREBTF_H
#define SCHEDPROF_COREBTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct btf;

/*
 * Builds the CO-RE BTF of the object whose BTF is local from the kernel's BTF vmlinux, for
 * the relocations rooted at the local types roots (NULL: every named type of local). *ret
 * (btf__free it), 0 or -errno: -ESRCH when a root has no candidate in vmlinux (libbpf would
 * then search the modules' BTF, which the CO-RE BTF does not hold).
 */
int core_btf_build(const struct btf *local, const uint32_t *roots, size_t nroots,
		   const struct btf *vmlinux, struct btf **ret);

struct core_btf {
	int fd;		/* a memfd holding the BTF, or -1 */
	char path[32];	/* /proc/self/fd/N: for bpf_object_open_opts.btf_custom_path */
	bool made;	/* it was made now, not read from the boot's cache */
};

/*
 * The CO-RE BTF of the BPF object elf (its ELF bytes) for the running kernel: read from the
 * boot's cache in dir (NULL: /run/schedprof) when it was made by this boot for this object and
 * is intact, else made from vmlinux_path (NULL: the kernel's) and cached. Anything else in the
 * cache file is ignored and replaced. 0 or -errno (-ENOTSUP: no CO-RE BTF can serve this
 * object on this kernel); core_btf_close() either way.
 */
int core_btf_open(const char *dir, const void *elf, size_t elf_size, const char *vmlinux_path,
		  struct core_btf *ret);
void core_btf_close(struct core_btf *c);

#endif
