// SPDX-License-Identifier: BSD-2-Clause
/*
 * The locks view's rows from its map records (lock_rows.h): each contended lock named, the
 * counts, owners, stacks and sleepers read into rows, and the rows that name alike merged
 * (two inodes' i_rwsem from one caller are one row).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/kstack.h"
#include "rows/uframes.h"
#include "views/locks/rows.h"
#include "rows/lockflags.h"
#include "symbols/lockname.h"
#include "rows/rows.h"
#include "base/util.h"
#include "schedprof/lock.h"

struct reader {
	const struct ksyms *ks;
	const struct sp_fold_cfg *cfg;
	struct lockname_ctx names;
	struct sp_lock_view *v;
	struct row_index rows, sleepers, groups; /* each by (caller or comm, kind, lock) */
	struct key_set kept;	  /* (caller, lock, flags, name, comm) of the rows the map holds */
	struct key_set kept_any;  /* the same without the comm */
};

static const void *kept_key(struct sp_lock_key *k, __u64 caller, __u64 lock, __u32 flags,
			    __u32 name, const char *comm)
{
	memset(k, 0, sizeof(*k));
	k->caller = caller;
	k->lock = lock;
	k->flags = flags;
	k->name = name;
	if (comm)
		memcpy(k->comm, comm, TASK_COMM_LEN);
	return k;
}

/* Names a (caller, flags, lock, name id) into the three strings rows are keyed by. */
struct row_key {
	char *caller;
	const char *kind;
	char lock[192];
	enum lockname_source source;
};

static int row_key_make(struct reader *rd, struct row_key *k, uint64_t caller, uint32_t flags,
			uint64_t lock, uint32_t name)
{
	k->caller = kstack_name(rd->ks, caller);
	if (!k->caller)
		return -ENOMEM;
	k->kind = lockflags_kind(flags);
	k->source = lockname_format(&rd->names, lock, name, k->lock, sizeof(k->lock));
	return 0;
}

/* Copies the key into a new item's strings: false on ENOMEM (the model frees what was copied). */
static bool key3_dup(char **a, char **b, char **c, const char *const *s)
{
	*a = strdup(s[0]);
	*b = strdup(s[1]);
	*c = strdup(s[2]);
	return *a && *b && *c;
}

static void key3(const char *a, const char *b, const char *c, const char *ret[ROW_KEY_MAX])
{
	ret[0] = a;
	ret[1] = b;
	ret[2] = c;
}

static void lock_row_key(void *view, size_t pos, const char *ret[ROW_KEY_MAX])
{
	const struct sp_lock_row *r = &((struct sp_lock_view *)view)->rows[pos];

	key3(r->caller, r->kind, r->lock, ret);
}

static void sleeper_key(void *view, size_t pos, const char *ret[ROW_KEY_MAX])
{
	const struct sp_sleeper_row *r = &((struct sp_lock_view *)view)->sleepers[pos];

	key3(r->caller, r->kind, r->lock, ret);
}

static void group_key(void *view, size_t pos, const char *ret[ROW_KEY_MAX])
{
	const struct sp_sleeper_group *g = &((struct sp_lock_view *)view)->groups[pos];

	key3(g->comm, g->kind, g->lock, ret);
}

static struct sp_stack_list *row_stacks(void *view, size_t i)
{
	return &((struct sp_lock_view *)view)->rows[i].stacks;
}

/* The position of the item keyed s in x, or the new one add() makes (or -ENOMEM). */
static long index_get(struct row_index *x, const char *const *s, long (*add)(void *view,
		      const char *const *s))
{
	long pos = row_index_find(x, s);

	if (pos >= 0)
		return pos;
	pos = add(x->view, s);
	if (pos >= 0 && row_index_add(x, (size_t)pos))
		return -ENOMEM;
	return pos;
}

static long lock_row_add(void *arr, const char *const *s)
{
	struct sp_lock_view *v = arr;
	struct sp_lock_row *r = sp_lock_add_row(v);
	bool ok;

	if (!r)
		return -ENOMEM;
	ok = key3_dup(&r->caller, &r->kind, &r->lock, s);
	r->source = strdup(s[3]);
	if (!ok || !r->source)
		return -ENOMEM;
	return (long)(r - v->rows);
}

static struct sp_lock_row *get_row(struct reader *rd, uint64_t caller, uint32_t flags,
				   uint64_t lock, uint32_t name)
{
	struct row_key k;
	const char *s[4];
	long pos;

	if (row_key_make(rd, &k, caller, flags, lock, name))
		return NULL;
	s[0] = k.caller;
	s[1] = k.kind;
	s[2] = k.lock;
	s[3] = lockname_source_name(k.source);
	pos = index_get(&rd->rows, s, lock_row_add);
	free(k.caller);
	return pos < 0 ? NULL : &rd->v->rows[pos];
}

static int add_rows(struct reader *rd, const struct sp_records *rec)
{
	char comm[TASK_COMM_LEN + 1];

	for (size_t i = 0; i < rec->n; i++) {
		const struct sp_lock_key *key = sp_records_key(rec, i);
		const struct sp_lock_val *val = sp_records_value(rec, i);
		struct sp_lock_row *r = get_row(rd, key->caller, key->flags, key->lock, key->name);
		struct sp_lock_key k;

		if (!r || key_set_add(&rd->kept, kept_key(&k, key->caller, key->lock, key->flags,
							  key->name, key->comm)) ||
		    key_set_add(&rd->kept_any, kept_key(&k, key->caller, key->lock, key->flags,
							key->name, NULL)))
			return -ENOMEM;
		r->count += val->count;
		r->wait_ns += val->wait_ns;
		r->failed += val->failed;
		if (rows_account(&r->comms, &r->max_ns, kstack_comm(key->comm, comm), val->count,
				 val->wait_ns, val->max_ns))
			return -ENOMEM;
	}
	return 0;
}

static int add_owners(struct reader *rd, const struct sp_records *rec)
{
	char comm[TASK_COMM_LEN + 1];

	for (size_t i = 0; i < rec->n; i++) {
		const struct sp_lock_owner_key *key = sp_records_key(rec, i);
		const struct sp_lock_owner_val *val = sp_records_value(rec, i);
		struct sp_lock_key k;
		struct sp_lock_row *r;

		/* owners of a row the full map lost are shown under no row */
		if (!key_set_has(&rd->kept_any, kept_key(&k, key->caller, key->lock, key->flags,
							 key->name, NULL)))
			continue;
		r = get_row(rd, key->caller, key->flags, key->lock, key->name);
		if (!r)
			return -ENOMEM;
		if (sp_comm_list_add(&r->owners, kstack_comm(key->owner, comm), val->count,
				     val->wait_ns, 0))
			return -ENOMEM;
	}
	return 0;
}

/* ---- stacks ---- */

struct stack_ent {
	size_t row;
	uint64_t stack;
	uint32_t pid;
	char comm[TASK_COMM_LEN];
	uint64_t count, wait_ns;
};

static int cmp_stack_ent(const void *pa, const void *pb)
{
	const struct stack_ent *a = pa, *b = pb;

	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	if (a->stack != b->stack)
		return a->stack < b->stack ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return memcmp(a->comm, b->comm, TASK_COMM_LEN);
}

static int add_stacks(struct reader *rd, const struct lock_maps *m, struct uframes *uf)
{
	const struct sp_records *rec = &m->stack_counts;
	struct kstack_src src = { .ks = rd->ks, .cfg = rd->cfg, .from = KSTACK_FROM_FOLD };
	struct sp_records_index stacks;
	struct uframes_pairs up;
	struct stack_index alike;
	struct stack_ent *ents = NULL;
	char comm[TASK_COMM_LEN + 1];
	size_t n = 0;
	int err;

	stack_index_init(&alike, row_stacks, rd->v, false);
	err = sp_records_index_u64(&stacks, &m->stacks) ?:
	      uframes_pairs_init(&up, &m->pairs, &m->ustacks, uf != NULL);
	if (!err && rec->n) {
		ents = calloc(rec->n, sizeof(*ents));
		if (!ents)
			err = -ENOMEM;
	}
	for (size_t i = 0; i < rec->n && !err; i++) {
		const struct sp_lock_stack_key *key = sp_records_key(rec, i);
		const struct sp_lock_stack_val *val = sp_records_value(rec, i);
		struct sp_lock_key k;
		struct sp_lock_row *r;

		/* its row was lost (map full): counted in lost, shown under no row */
		if (!key_set_has(&rd->kept, kept_key(&k, key->caller, key->lock, key->flags,
						     key->name, key->comm)))
			continue;
		r = get_row(rd, key->caller, key->flags, key->lock, key->name);
		if (!r) {
			err = -ENOMEM;
			break;
		}
		ents[n].row = (size_t)(r - rd->v->rows);
		ents[n].stack = key->stack;
		ents[n].pid = key->tgid;
		memcpy(ents[n].comm, key->comm, TASK_COMM_LEN);
		ents[n].count = val->count;
		ents[n].wait_ns = val->wait_ns;
		n++;
	}
	if (!err && n > 1)
		qsort(ents, n, sizeof(*ents), cmp_stack_ent);
	for (size_t i = 0; i < n && !err; i++) {
		struct stack_ent *e = &ents[i];
		const struct sp_stack_pair *pair;
		struct sp_stack_row proto;
		const struct sp_stack *st;

		/* the same stack of two locks that name alike (two inodes): one entry */
		while (i + 1 < n && !cmp_stack_ent(e, &ents[i + 1])) {
			ents[i + 1].count += e->count;
			ents[i + 1].wait_ns += e->wait_ns;
			e = &ents[++i];
		}
		st = sp_records_find_u64(&stacks, uframes_pair_kstack(&up, e->stack, &pair));
		if (!st) {
			/* BPF makes no entry for a stack it did not keep: the dump lost this one */
			rd->v->missing_stacks += e->count;
			continue;
		}
		proto = (struct sp_stack_row){ .comm = (char *)kstack_comm(e->comm, comm),
					       .pid = (int)e->pid, .count = e->count,
					       .time_ns = e->wait_ns };
		/* from the first lock or scheduler frame: drops the tracepoint and BPF frames */
		src.st = st;
		if (uf)
			err = uframes_add_stack(uf, &up, &alike, e->row, &proto, &src, pair);
		else
			err = stack_index_add_kstack(&alike, e->row, &proto, &src);
	}
	free(ents);
	sp_records_index_free(&stacks);
	uframes_pairs_free(&up);
	stack_index_free(&alike);
	return err;
}

/* ---- sleepers ---- */

struct sleep_ent {
	size_t row, group;
	uint32_t pid;
};

static long sleeper_add(void *arr, const char *const *s)
{
	struct sp_lock_view *v = arr;
	struct sp_sleeper_row *r = sp_sleeper_add_row(v);

	if (!r || !key3_dup(&r->caller, &r->kind, &r->lock, s))
		return -ENOMEM;
	return (long)(r - v->sleepers);
}

static long group_add(void *arr, const char *const *s)
{
	struct sp_lock_view *v = arr;
	struct sp_sleeper_group *g = sp_sleeper_add_group(v);

	if (!g || !key3_dup(&g->comm, &g->kind, &g->lock, s))
		return -ENOMEM;
	return (long)(g - v->groups);
}

static size_t sleep_at(const struct sleep_ent *e, bool by_row)
{
	return by_row ? e->row : e->group;
}

/* By row (or group), then pid. */
static int cmp_sleep_ent(const void *pa, const void *pb, void *by_row)
{
	const struct sleep_ent *a = pa, *b = pb;
	size_t x = sleep_at(a, *(bool *)by_row), y = sleep_at(b, *(bool *)by_row);

	if (x != y)
		return x < y ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* Distinct tasks per row (by_row) or per group, from (row, group, pid) entries. */
static void count_tasks(struct sp_lock_view *v, struct sleep_ent *e, size_t n, bool by_row)
{
	qsort_r(e, n, sizeof(*e), cmp_sleep_ent, &by_row);
	for (size_t i = 0; i < n; i++) {
		size_t at = sleep_at(&e[i], by_row);

		if (i && sleep_at(&e[i - 1], by_row) == at && e[i - 1].pid == e[i].pid)
			continue;
		if (by_row)
			v->sleepers[at].tasks++;
		else
			v->groups[at].tasks++;
	}
}

static int add_sleepers(struct reader *rd, const struct sp_records *rec)
{
	struct sleep_ent *ents = rec->n ? calloc(rec->n, sizeof(*ents)) : NULL;
	char comm[TASK_COMM_LEN + 1];
	size_t n = 0;
	int err = 0;

	if (rec->n && !ents)
		return -ENOMEM;
	for (size_t i = 0; i < rec->n; i++) {
		const struct sp_lock_sleep_key *key = sp_records_key(rec, i);
		const struct sp_lock_sleep_val *val = sp_records_value(rec, i);
		struct sp_sleeper_row *r;
		struct sp_sleeper_group *g;
		struct row_key k;
		const char *s[3];
		long row, group;

		if (row_key_make(rd, &k, key->caller, key->flags, key->lock, key->name)) {
			err = -ENOMEM;
			break;
		}
		kstack_comm(key->comm, comm);
		key3(k.caller, k.kind, k.lock, s);
		row = index_get(&rd->sleepers, s, sleeper_add);
		s[0] = comm;
		group = row < 0 ? row : index_get(&rd->groups, s, group_add);
		if (row < 0 || group < 0) {
			free(k.caller);
			err = -ENOMEM;
			break;
		}
		r = &rd->v->sleepers[row];
		r->count += val->sleeps;
		r->offcpu_ns += val->offcpu_ns;
		g = &rd->v->groups[group];
		g->count += val->sleeps;
		g->offcpu_ns += val->offcpu_ns;
		err = rows_account(&r->comms, &r->max_ns, comm, val->sleeps, val->offcpu_ns,
				   val->max_ns) ?:
		      rows_account(&g->callers, &g->max_ns, k.caller, val->sleeps, val->offcpu_ns,
				   val->max_ns);
		free(k.caller);
		if (err)
			break;
		ents[n++] = (struct sleep_ent){ (size_t)row, (size_t)group, key->pid };
	}
	if (!err && n) {
		count_tasks(rd->v, ents, n, true);
		count_tasks(rd->v, ents, n, false);
	}
	free(ents);
	return err;
}

void lock_maps_free(struct lock_maps *m)
{
	sp_records_free(&m->stat);
	sp_records_free(&m->owners);
	sp_records_free(&m->stack_counts);
	sp_records_free(&m->stacks);
	sp_records_free(&m->pairs);
	sp_records_free(&m->ustacks);
	sp_records_free(&m->sleepers);
}

int lock_rows_build(struct sp_lock_view *v, const struct lock_maps *m, const struct ksyms *ks,
		    const struct sp_fold_cfg *cfg, const uint64_t *rq_locks, size_t nrq,
		    struct uframes *uf)
{
	struct reader rd = {
		.ks = ks,
		.cfg = cfg,
		.names = { .ks = ks, .rq_locks = rq_locks, .nrq = nrq },
		.v = v,
	};
	int err;

	if (!sp_records_are(&m->stat, sizeof(struct sp_lock_key), sizeof(struct sp_lock_val)) ||
	    !sp_records_are(&m->owners, sizeof(struct sp_lock_owner_key),
			    sizeof(struct sp_lock_owner_val)) ||
	    !sp_records_are(&m->stack_counts, sizeof(struct sp_lock_stack_key),
			    sizeof(struct sp_lock_stack_val)) ||
	    !sp_records_are(&m->stacks, sizeof(__u64), sizeof(struct sp_stack)) ||
	    !sp_records_are(&m->sleepers, sizeof(struct sp_lock_sleep_key),
			    sizeof(struct sp_lock_sleep_val)))
		return -EINVAL;
	v->lost += m->stat.failed;
	v->missing_stacks += m->stack_counts.failed;
	row_index_init(&rd.rows, lock_row_key, v, 3);
	row_index_init(&rd.sleepers, sleeper_key, v, 3);
	row_index_init(&rd.groups, group_key, v, 3);
	key_set_init(&rd.kept, sizeof(struct sp_lock_key));
	key_set_init(&rd.kept_any, sizeof(struct sp_lock_key));
	err = add_rows(&rd, &m->stat) ?: add_owners(&rd, &m->owners) ?: add_stacks(&rd, m, uf) ?:
	      add_sleepers(&rd, &m->sleepers);
	row_index_free(&rd.rows);
	row_index_free(&rd.sleepers);
	row_index_free(&rd.groups);
	key_set_free(&rd.kept);
	key_set_free(&rd.kept_any);
	return err;
}
