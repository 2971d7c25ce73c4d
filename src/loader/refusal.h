/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which program the kernel's verifier refused at a load, and its log's error line, read from
 * libbpf's messages (which it prints on a refused load whatever the log level): so a refusal
 * is said as one, not as the errno libbpf returns ("Permission denied" reads as a privilege
 * problem), and the loader can leave out the view that owns the program.
 */
#ifndef SCHEDPROF_REFUSAL_H
#define SCHEDPROF_REFUSAL_H

#include <stdbool.h>

struct refusal {
	char prog[64];	 /* the first program refused at this load; "" when none */
	char line[160];	 /* the verifier's error line for it; "" when its log was not seen */
};

/* Forgets what an earlier load said. */
void refusal_reset(struct refusal *r);

/*
 * Takes one of libbpf's messages, as printed ("libbpf: prog 'NAME': BPF program load failed: ...",
 * "prog 'NAME': -- BEGIN PROG LOAD LOG --\n...-- END PROG LOAD LOG --\n"); others are ignored.
 */
void refusal_feed(struct refusal *r, const char *msg);

/*
 * Whether a libbpf message format may be one refusal_feed() takes: the caller formats only
 * those (a verifier log can be megabytes).
 */
bool refusal_wants(const char *fmt);

#endif
