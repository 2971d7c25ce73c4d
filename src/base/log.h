/* SPDX-License-Identifier: BSD-2-Clause */
/* One place that prints diagnostics: levels, -v, and libbpf's print callback. */
#ifndef SCHEDPROF_LOG_H
#define SCHEDPROF_LOG_H

#include <stdarg.h>

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG, LOG_LIBBPF };

void log_set_level(int level);
int log_get_level(void);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* libbpf_set_print() callback: libbpf's chatter only with -vv. */
int log_libbpf(int level, const char *fmt, va_list ap);

#define elog(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define wlog(...) log_msg(LOG_WARN, __VA_ARGS__)
#define ilog(...) log_msg(LOG_INFO, __VA_ARGS__)
#define dlog(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
