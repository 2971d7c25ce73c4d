// SPDX-License-Identifier: BSD-2-Clause
/* Control characters escaped for terminals (see textsafe.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/textsafe.h"

/* Bytes of the control that starts at p (1 for C0/DEL, 2 for a UTF-8 C1), or 0. */
static size_t control_len(const unsigned char *p)
{
	if (*p < 0x20 || *p == 0x7f)
		return 1;
	if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
		return 2;
	return 0;
}

bool text_has_controls(const char *s)
{
	/* every string of a saved run goes through here before a table: the plain bytes fast */
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
		if ((*p < 0x20 || *p >= 0x7f) && control_len(p))
			return true;
	return false;
}

char *text_escape_controls(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char *d = malloc(strlen(s) * 6 + 1), *o = d; /* "\u009b" is 6 for 2 bytes */

	if (!d)
		return NULL;
	while (*p) {
		size_t n = control_len(p);

		if (n == 1)
			o += sprintf(o, "\\x%02x", *p);
		else if (n == 2)
			o += sprintf(o, "\\u%04x", p[1]);
		else
			*o++ = (char)*p;
		p += n ? n : 1;
	}
	*o = '\0';
	return d;
}
