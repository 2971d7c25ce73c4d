// SPDX-License-Identifier: BSD-2-Clause
/* Text inside the HTML and SVG outputs (xmltext.h). */
#include <errno.h>
#include <string.h>
#include "base/util.h"
#include "format/xmltext.h"

static int put(const char *s, size_t len, FILE *f)
{
	return fwrite(s, 1, len, f) == len ? 0 : -EIO;
}

int xml_put_text(const char *str, size_t max, FILE *f)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), chars = 0, i, len;
	int err = 0;

	if (max) {
		for (i = 0; i < n; chars++) {
			len = utf8_seq_len(s + i, n - i);
			i += len ? len : 1;
		}
		if (chars <= max)
			max = 0;
		else
			max -= 2; /* room for ".." */
	}
	for (i = 0, chars = 0; !err && i < n && (!max || chars < max); chars++) {
		len = utf8_seq_len(s + i, n - i);
		if (s[i] < 0x20 || s[i] == 0x7f || !len) {
			err = put("\xef\xbf\xbd", 3, f);
			i++;
			continue;
		}
		switch (s[i]) {
		case '&': err = put("&amp;", 5, f); break;
		case '<': err = put("&lt;", 4, f); break;
		case '>': err = put("&gt;", 4, f); break;
		case '"': err = put("&quot;", 6, f); break;
		default: err = put((const char *)s + i, len, f); break;
		}
		i += len;
	}
	if (!err && max)
		err = put("..", 2, f);
	return err;
}
