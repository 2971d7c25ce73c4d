/* SPDX-License-Identifier: BSD-2-Clause */
/* Text inside the HTML and SVG outputs (the flame graph, the timeline page). */
#ifndef SCHEDPROF_XMLTEXT_H
#define SCHEDPROF_XMLTEXT_H

#include <stddef.h>
#include <stdio.h>

/*
 * Writes str escaped for XML/HTML (& < > "), with control characters and each byte of
 * invalid UTF-8 as U+FFFD, so the document is always well-formed. At most max characters
 * (0: all), ".." ending a cut text. 0, or -EIO when a write failed (open_memstream loses
 * output silently when it cannot grow: every write is checked).
 */
int xml_put_text(const char *str, size_t max, FILE *f);

#endif
