/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Text that goes to a terminal: any process can put control bytes in its comm (prctl
 * PR_SET_NAME) and any ELF file in its symbol names, and written raw they would move the
 * cursor, recolour or rewrite root's terminal, or forge report lines. The text formats
 * (the tables) show C0 controls and DEL as \xNN and C1 controls (U+0080..U+009F, which some
 * terminals obey as 8-bit escapes) as \uNNNN; the rest of the text is unchanged.
 */
#ifndef SCHEDPROF_TEXTSAFE_H
#define SCHEDPROF_TEXTSAFE_H

#include <stdbool.h>

/* true when s (UTF-8) holds a byte or character the tables show escaped. NULL: false. */
bool text_has_controls(const char *s);
/* A new string with the controls of s escaped, or NULL (ENOMEM). */
char *text_escape_controls(const char *s);

#endif
