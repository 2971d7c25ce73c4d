// SPDX-License-Identifier: BSD-2-Clause
/* Diagnostics go to stderr, prefixed with the program name; reports go to stdout or -o. */
#include <stdio.h>
#include "log.h"

static int log_level = LOG_WARN;

void log_set_level(int level)
{
	log_level = level;
}

int log_get_level(void)
{
	return log_level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if ((int)level > log_level)
		return;
	fputs(level <= LOG_WARN ? "schedprof: " : "schedprof: ", stderr);
	if (level == LOG_WARN)
		fputs("warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int log_libbpf(int level, const char *fmt, va_list ap)
{
	(void)level;
	if (log_level < LOG_LIBBPF)
		return 0;
	return vfprintf(stderr, fmt, ap);
}
