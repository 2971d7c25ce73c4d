// SPDX-License-Identifier: BSD-2-Clause
/* Diagnostics go to stderr, prefixed with who speaks; reports go to stdout or -o (see log.h). */
#include <stdio.h>
#include "base/log.h"

static int log_level = LOG_WARN;
static const char *log_prefix = "schedprof";

void log_set_level(int level)
{
	log_level = level;
}

int log_get_level(void)
{
	return log_level;
}

void log_more_verbose(void)
{
	log_level = log_level < LOG_DEBUG ? LOG_DEBUG : LOG_LIBBPF;
}

void log_set_prefix(const char *prefix)
{
	log_prefix = prefix;
}

void log_vmsg_as(const char *who, enum log_level level, const char *fmt, va_list ap)
{
	if ((int)level > log_level)
		return;
	fprintf(stderr, "%s: %s", who, level == LOG_WARN ? "warning: " : "");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg_as(log_prefix, level, fmt, ap);
	va_end(ap);
}

void log_plain(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if ((int)level > log_level)
		return;
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
