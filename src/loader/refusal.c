// SPDX-License-Identifier: BSD-2-Clause
/* A verifier refusal from libbpf's messages (refusal.h). */
#include <stdio.h>
#include <string.h>
#include "loader/refusal.h"

#define FAILED " BPF program load failed: "
#define LOG_BEGIN " -- BEGIN PROG LOAD LOG --\n"
#define LOG_END "-- END PROG LOAD LOG --"

void refusal_reset(struct refusal *r)
{
	r->prog[0] = r->line[0] = '\0';
}

bool refusal_wants(const char *fmt)
{
	return fmt && (strstr(fmt, "BPF program load failed") || strstr(fmt, "BEGIN PROG LOAD LOG"));
}

/* "prog 'NAME':" at msg's start: NAME into buf; the rest after the colon, or NULL. */
static const char *prog_name(const char *msg, char *buf, size_t len)
{
	const char *e;

	if (!strncmp(msg, "libbpf: ", 8)) /* libbpf's formats start with it */
		msg += 8;
	if (strncmp(msg, "prog '", 6))
		return NULL;
	msg += 6;
	e = strstr(msg, "':");
	if (!e || (size_t)(e - msg) >= len || e == msg)
		return NULL;
	memcpy(buf, msg, e - msg);
	buf[e - msg] = '\0';
	return e + 2;
}

/* The verifier's statistics, printed after the error: not the error. */
static bool is_stats(const char *s, size_t n)
{
	static const char *const pfx[] = { "processed ", "verification time ", "stack depth ",
					   "max_states_per_insn " };

	for (size_t i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (n >= strlen(pfx[i]) && !strncmp(s, pfx[i], strlen(pfx[i])))
			return true;
	return false;
}

/* The last line of log[0, end) that is neither empty nor statistics: the error. */
static void error_line(const char *log, const char *end, char *buf, size_t len)
{
	const char *s = log, *best = NULL;
	size_t bestn = 0;

	while (s < end) {
		const char *nl = memchr(s, '\n', end - s);
		size_t n = (nl ? nl : end) - s;

		while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
			n--;
		if (n && !is_stats(s, n)) {
			best = s;
			bestn = n;
		}
		s = nl ? nl + 1 : end;
	}
	if (!best)
		return;
	if (bestn >= len)
		bestn = len - 1;
	memcpy(buf, best, bestn);
	buf[bestn] = '\0';
	/* one line of text: no control characters from the log */
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
}

void refusal_feed(struct refusal *r, const char *msg)
{
	char name[sizeof(r->prog)];
	const char *rest, *end;

	if (!msg || !(rest = prog_name(msg, name, sizeof(name))))
		return;
	if (!strncmp(rest, FAILED, strlen(FAILED))) {
		if (!r->prog[0])
			snprintf(r->prog, sizeof(r->prog), "%s", name);
		return;
	}
	if (strncmp(rest, LOG_BEGIN, strlen(LOG_BEGIN)) || strcmp(name, r->prog) || r->line[0])
		return;
	rest += strlen(LOG_BEGIN);
	end = strstr(rest, LOG_END);
	error_line(rest, end ? end : rest + strlen(rest), r->line, sizeof(r->line));
}
