// SPDX-License-Identifier: BSD-2-Clause
/* The schedules view's rows from its map records (sched_rows.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "foldcfg.h"
#include "kstack.h"
#include "rows.h"
#include "sched_rows.h"
#include "util.h"
#include "schedprof/sched.h"

void sched_maps_free(struct sched_maps *m)
{
	sp_records_free(&m->callers);
	sp_records_free(&m->stack_counts);
	sp_records_free(&m->stacks);
}

const char *sched_wait_name(uint32_t wait, const char *caller)
{
	if (fold_wait_name(wait))
		return fold_wait_name(wait);
	if (strstr(caller, "pipe_read") || strstr(caller, "pipe_write") || strstr(caller, "pipe_wait"))
		return "pipe";
	return NULL;
}

struct builder {
	struct sp_sched_view *v;
	const struct ksyms *ks;
	struct row_index rows;
	struct stack_index stacks;
	struct key_set kept; /* (caller, wait, comm) of the rows the map holds */
};

static const void *kept_key(struct sp_caller_key *k, __u64 caller, __u32 wait, const char *comm)
{
	memset(k, 0, sizeof(*k));
	k->caller = caller;
	k->wait = wait;
	memcpy(k->comm, comm, TASK_COMM_LEN);
	return k;
}

static void row_key(void *view, size_t pos, const char *ret[ROW_KEY_MAX])
{
	const struct sp_sched_row *r = &((struct sp_sched_view *)view)->rows[pos];

	ret[0] = r->caller;
	ret[1] = r->wait;
}

static struct sp_stack_list *row_stacks(void *view, size_t i)
{
	return &((struct sp_sched_view *)view)->rows[i].stacks;
}

/* The row of (caller, wait), created when new; NULL on ENOMEM. */
static struct sp_sched_row *get_row(struct builder *b, uint64_t ip, uint32_t wait)
{
	struct sp_sched_row *r;
	const char *key[2];
	char *name;
	long pos;

	name = kstack_name(b->ks, ip);
	if (!name)
		return NULL;
	key[0] = name;
	key[1] = sched_wait_name(wait, name);
	pos = row_index_find(&b->rows, key);
	if (pos >= 0) {
		free(name);
		return &b->v->rows[pos];
	}
	r = sp_sched_add_row(b->v);
	if (!r) {
		free(name);
		return NULL;
	}
	r->caller = name;
	r->wait = xstrdup(key[1]);
	if (key[1] && !r->wait)
		return NULL;
	return row_index_add(&b->rows, (size_t)(r - b->v->rows)) ? NULL : r;
}

static int add_callers(struct builder *b, const struct sp_records *rec)
{
	char comm[TASK_COMM_LEN + 1];

	for (size_t i = 0; i < rec->n; i++) {
		const struct sp_caller_key *key = sp_records_key(rec, i);
		const struct sp_caller_val *val = sp_records_value(rec, i);
		struct sp_sched_row *r = get_row(b, key->caller, key->wait);
		struct sp_caller_key k;

		if (!r || key_set_add(&b->kept, kept_key(&k, key->caller, key->wait, key->comm)))
			return -ENOMEM;
		r->count += val->count;
		r->offcpu_ns += val->offcpu_ns;
		if (rows_account(&r->comms, &r->max_ns, kstack_comm(key->comm, comm), val->count,
				 val->offcpu_ns, val->max_ns))
			return -ENOMEM;
	}
	return 0;
}

static int add_stacks(struct builder *b, const struct sched_maps *m, const struct sp_fold_cfg *cfg)
{
	const struct sp_records *rec = &m->stack_counts;
	struct kstack_src src = { .ks = b->ks, .cfg = cfg, .from = KSTACK_FROM_SCHED };
	struct sp_records_index stacks;
	char comm[TASK_COMM_LEN + 1];
	int err;

	err = sp_records_index_u64(&stacks, &m->stacks);
	for (size_t i = 0; i < rec->n && !err; i++) {
		const struct sp_stack_key *key = sp_records_key(rec, i);
		const struct sp_stack_val *val = sp_records_value(rec, i);
		const struct sp_stack *st = sp_records_find_u64(&stacks, key->stack);
		struct sp_stack_row proto;
		struct sp_sched_row *r;
		struct sp_caller_key k;

		/* its row was lost (map full): counted in lost_rows, shown under no row */
		if (!key_set_has(&b->kept, kept_key(&k, key->caller, key->wait, key->comm)))
			continue;
		if (!st) {
			/* BPF counted the stacks it did not keep (id 0); the others the dump lost */
			if (key->stack)
				b->v->missing_stacks += val->count;
			continue;
		}
		r = get_row(b, key->caller, key->wait);
		if (!r) {
			err = -ENOMEM;
			break;
		}
		proto = (struct sp_stack_row){ .comm = (char *)kstack_comm(key->comm, comm),
					       .pid = (int)key->tgid, .count = val->count,
					       .time_ns = val->offcpu_ns };
		/* from the first scheduler frame: drops the tracepoint and BPF frames */
		src.st = st;
		err = stack_index_add_kstack(&b->stacks, (size_t)(r - b->v->rows), &proto, &src);
	}
	sp_records_index_free(&stacks);
	return err;
}

int sched_rows_build(struct sp_sched_view *v, const struct sched_maps *m, const struct ksyms *ks,
		     const struct sp_fold_cfg *cfg)
{
	struct builder b = { .v = v, .ks = ks };
	int err;

	if (!sp_records_are(&m->callers, sizeof(struct sp_caller_key), sizeof(struct sp_caller_val)) ||
	    !sp_records_are(&m->stack_counts, sizeof(struct sp_stack_key),
			    sizeof(struct sp_stack_val)) ||
	    !sp_records_are(&m->stacks, sizeof(__u64), sizeof(struct sp_stack)))
		return -EINVAL;
	v->lost_rows += m->callers.failed;
	v->missing_stacks += m->stack_counts.failed;
	row_index_init(&b.rows, row_key, v, 2);
	stack_index_init(&b.stacks, row_stacks, v, false);
	key_set_init(&b.kept, sizeof(struct sp_caller_key));
	err = add_callers(&b, &m->callers) ?: add_stacks(&b, m, cfg);
	row_index_free(&b.rows);
	stack_index_free(&b.stacks);
	key_set_free(&b.kept);
	if (!err)
		sp_sched_sort(v);
	return err;
}
