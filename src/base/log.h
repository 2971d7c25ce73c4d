/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one place that prints diagnostics, for every command: levels (-v, -vv), the prefix that
 * names who speaks ("schedprof", "schedprof report"), and libbpf's print callback. Reports go
 * to stdout or -o; everything else goes through here to stderr, one line per message.
 */
#ifndef SCHEDPROF_LOG_H
#define SCHEDPROF_LOG_H

#include <stdarg.h>

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG, LOG_LIBBPF };

void log_set_level(int level);
int log_get_level(void);
/* -v once: debug messages; twice: libbpf's too. */
void log_more_verbose(void);
/* Who the messages come from, e.g. "schedprof report" (default "schedprof"); not copied. */
void log_set_prefix(const char *prefix);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "WHO: message", WHO given instead of the prefix (usage errors name their command). */
void log_vmsg_as(const char *who, enum log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* A line with no prefix, printed at the level's threshold: a hint after an error. */
void log_plain(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* libbpf_set_print() callback: libbpf's chatter only with -vv. */
int log_libbpf(int level, const char *fmt, va_list ap);

#define elog(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define wlog(...) log_msg(LOG_WARN, __VA_ARGS__)
#define ilog(...) log_msg(LOG_INFO, __VA_ARGS__)
#define dlog(...) log_msg(LOG_DEBUG, __VA_ARGS__)
/* A notice an operator needs at the default level, without "warning:" (not an error) */
#define nlog(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
