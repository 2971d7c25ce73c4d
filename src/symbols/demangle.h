/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * C++ (Itanium ABI, "_Z...") and Rust (legacy "_ZN...17h<hash>E" and v0 "_R...") symbol names
 * made readable with libiberty's demangler: parameters kept for C++ (overloads stay apart), the
 * hash dropped for Rust legacy names (as rustc's own demangler prints them).
 */
#ifndef SCHEDPROF_DEMANGLE_H
#define SCHEDPROF_DEMANGLE_H

#include <stdbool.h>

/* The name could be mangled (a cheap test on its prefix). */
bool sp_name_is_mangled(const char *name);
/* The demangled name (malloc'd), or NULL + errno: EINVAL (not a mangled name), ENOMEM. */
char *sp_demangle(const char *name);

#endif /* SCHEDPROF_DEMANGLE_H */
