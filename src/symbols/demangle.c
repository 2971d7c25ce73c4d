/* SPDX-License-Identifier: BSD-2-Clause */
/* Demangling through libiberty (see demangle.h). */
#include "symbols/demangle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

bool sp_name_is_mangled(const char *name)
{
	/* Itanium C++ and Rust legacy share _Z; Rust v0 is _R */
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

char *sp_demangle(const char *name)
{
	char *s;

	if (!sp_name_is_mangled(name)) {
		errno = EINVAL;
		return NULL;
	}
	/* libiberty returns NULL both for "not mangled" and for out of memory */
	s = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	if (!s)
		errno = EINVAL;
	return s;
}
