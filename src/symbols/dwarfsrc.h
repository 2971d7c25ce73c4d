/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Source positions and inlined calls of addresses, from the DWARF of one ELF file (the object
 * itself or its separate debug file), read with libdw. Addresses are link-time virtual
 * addresses (elfsyms converts file offsets). Results are cached per address and, with every
 * string, live until dwarf_src__free(); the file stays open until then.
 *
 * Not thread-safe.
 */
#ifndef SCHEDPROF_DWARFSRC_H
#define SCHEDPROF_DWARFSRC_H

#include <stddef.h>
#include <stdint.h>

#include "symbols/usyms.h"

struct dwarf_src;

/* What DWARF says of one address (see struct usym_inline for the order and meaning). */
struct dwarf_pos {
	const char *file; /* position in the enclosing (not inlined) function; NULL/0 unknown */
	unsigned int line;
	const struct usym_inline *inlined; /* innermost first */
	size_t ninlined;
};

/* NULL + errno: open() errors, ENOEXEC (not ELF), ENODATA (no DWARF), ENOMEM. */
struct dwarf_src *dwarf_src__open(const char *path);
void dwarf_src__free(struct dwarf_src *d);
/* 0 and *ret (owned by d), -ENOENT (no unit covers vaddr), -ENOMEM. */
int dwarf_src__lookup(struct dwarf_src *d, uint64_t vaddr, const struct dwarf_pos **ret);

#endif /* SCHEDPROF_DWARFSRC_H */
