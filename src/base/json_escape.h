/* SPDX-License-Identifier: BSD-2-Clause */
/* JSON's two-character escapes, shared by the writer (json_writer.c) and the reader. */
#ifndef SCHEDPROF_JSON_ESCAPE_H
#define SCHEDPROF_JSON_ESCAPE_H

/* raw character, and the letter after the backslash ('/' is read, never written escaped) */
static const char json_escapes[][2] = {
	{ '"', '"' }, { '\\', '\\' }, { '\b', 'b' }, { '\f', 'f' },
	{ '\n', 'n' }, { '\r', 'r' }, { '\t', 't' }, { '/', '/' },
};
#define JSON_NESCAPES_WRITTEN 7

/* The character escape letter e stands for, or -1 (not a two-character escape). */
static inline int json_unescape(char e)
{
	for (unsigned int i = 0; i < sizeof(json_escapes) / sizeof(json_escapes[0]); i++)
		if (json_escapes[i][1] == e)
			return (unsigned char)json_escapes[i][0];
	return -1;
}

/* The letter that escapes c when written, or 0 (written as \uXXXX or as it is). */
static inline char json_escape_letter(unsigned char c)
{
	for (unsigned int i = 0; i < JSON_NESCAPES_WRITTEN; i++)
		if ((unsigned char)json_escapes[i][0] == c)
			return json_escapes[i][1];
	return 0;
}

#endif
