// SPDX-License-Identifier: BSD-2-Clause
/* Kernel frames into model strings, shared by the collectors (see kstack.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/kstack.h"
#include "symbols/ksyms.h"

char *kstack_name(const struct ksyms *ks, uint64_t ip)
{
	const struct ksym *s;
	char buf[32];

	if (ip == SP_CALLER_UNKNOWN)
		return strdup("[unknown]");
	if (ip == SP_CALLER_PREEMPTED)
		return strdup("[preempted]");
	if (ip == SP_CALLER_IDLE)
		return strdup("cpu_idle");
	s = ksyms__map_addr(ks, ip, NULL);
	if (s)
		return strdup(s->name);
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)ip);
	return strdup(buf);
}

const char *kstack_sym_object(const struct ksym *s, char *buf, size_t len)
{
	if (!s || !s->module)
		return "[kernel]";
	snprintf(buf, len, "[%s]", s->module);
	return buf;
}

char *kstack_object(const struct ksyms *ks, uint64_t ip)
{
	char buf[64];

	return strdup(kstack_sym_object(ksyms__map_addr(ks, ip, NULL), buf, sizeof(buf)));
}

const char *kstack_comm(const char comm[TASK_COMM_LEN], char buf[TASK_COMM_LEN + 1])
{
	memcpy(buf, comm, TASK_COMM_LEN);
	buf[TASK_COMM_LEN] = 0;
	return buf;
}

static bool in_texts(const struct sp_fold_cfg *cfg, unsigned int from, uint64_t ip)
{
	for (int i = 0; i < 3; i++)
		if ((from & (1u << i)) && ip >= cfg->text_start[i] && ip < cfg->text_end[i])
			return true;
	return false;
}

int kstack_fill(struct sp_stack_row *row, const struct ksyms *ks, const struct sp_stack *st,
		const struct sp_fold_cfg *cfg, unsigned int from)
{
	uint32_t nr = st->nr < SP_MAX_STACK_DEPTH ? st->nr : SP_MAX_STACK_DEPTH, first = 0;

	for (uint32_t i = 0; i < nr; i++) {
		if (in_texts(cfg, from, st->ip[i])) {
			first = i;
			break;
		}
	}
	row->frames = calloc(nr - first + 1, sizeof(char *));
	row->objects = calloc(nr - first + 1, sizeof(char *));
	if (!row->frames || !row->objects)
		return -ENOMEM;
	for (uint32_t i = first; i < nr; i++) {
		char *name = kstack_name(ks, st->ip[i]), *object = kstack_object(ks, st->ip[i]);

		if (!name || !object) {
			free(name);
			free(object);
			return -ENOMEM;
		}
		row->frames[row->nframes] = name;
		row->objects[row->nframes] = object;
		row->nframes++;
	}
	return 0;
}
