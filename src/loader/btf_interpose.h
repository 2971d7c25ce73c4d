/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Whether the executable's replacements of libbpf's btf__load_vmlinux_btf(),
 * btf__find_by_name_kind() and btf__free() (btf_interpose.c) are the ones libbpf calls.
 *
 * They are when libbpf is a shared library that calls the three through its PLT (1.1 and
 * 1.4 do); not when it is linked in statically, with -Bsymbolic, or calls an internal alias
 * for one of them. A half-applied replacement would hand libbpf a placeholder BTF that its
 * own lookups then search: the load would fail. So before the first load the self-check runs
 * libbpf_find_vmlinux_btf_id(), which goes through the same three calls (and the same lookup
 * function, find_attach_btf_id()) as bpf_object__load(), against a placeholder whose one
 * answer only the replacements know. Anything else: one warning, and every later call goes
 * to libbpf's own, the plain path.
 *
 * SCHEDPROF_BTF_INTERPOSE=0 is the kill switch: libbpf's own, no check, no warning.
 */
#ifndef SCHEDPROF_BTF_INTERPOSE_H
#define SCHEDPROF_BTF_INTERPOSE_H

#include <stdbool.h>

#define BTF_INTERPOSE_ENV "SCHEDPROF_BTF_INTERPOSE"

/*
 * true when the replacements are in use (checked once, the first call); false: the plain
 * path, for this process. quiet: no warning when the check fails (tests).
 */
bool btf_interpose_ready(bool quiet);

#endif
