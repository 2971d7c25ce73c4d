// SPDX-License-Identifier: BSD-2-Clause
/*
 * The locks view's collector: loads lock.bpf.o's programs when the kernel has the
 * lock:contention_* tracepoints (else the view says it is unavailable and the other views
 * run alone), names each contended lock and reads the counts, stacks, owners and sleepers
 * into the model, merging the rows that name alike.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collector.h"
#include "foldcfg.h"
#include "kstack.h"
#include "lockflags.h"
#include "lockname.h"
#include "log.h"
#include "util.h"
#include "schedprof/schedprof.h"
#include "schedprof.skel.h"

struct lock_state {
	struct schedprof_bpf *skel;
	struct bpf_link *begin, *end;
	bool available;
	char *why; /* when not available */
};

/* Not selected or unavailable: no program, and maps as small as can be. */
static void lock_disable(struct schedprof_bpf *skel)
{
	bpf_program__set_autoload(skel->progs.lock_begin, false);
	bpf_program__set_autoload(skel->progs.lock_end, false);
	bpf_program__set_autoload(skel->progs.lock_rq_probe, false);
	bpf_map__set_max_entries(skel->maps.lock_stat, 1);
	bpf_map__set_max_entries(skel->maps.lock_sleepers, 1);
	bpf_map__set_max_entries(skel->maps.lock_owners, 1);
	bpf_map__set_max_entries(skel->maps.lock_names, 1);
	bpf_map__set_max_entries(skel->maps.lock_stack_counts, 1);
	bpf_map__set_max_entries(skel->maps.lock_stacks, 1);
}

/* Without the kernel features (lock:contention_*, Linux 5.19), the view says why it is empty. */
static int lock_configure(struct trace_ctx *ctx, void **ret_state)
{
	const struct trace_opts *o = ctx->opts;
	struct schedprof_bpf *skel = ctx->skel;
	struct lock_state *st;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->skel = skel;
	*ret_state = st;
	if (ctx->unavailable) {
		st->why = strdup(ctx->unavailable); /* trace.c has said it */
		if (!st->why)
			return -ENOMEM;
		lock_disable(skel);
		return 0;
	}
	st->available = true;
	skel->rodata->switch_locks = 1;
	bpf_map__set_max_entries(skel->maps.lock_stat, o->max_callers);
	bpf_map__set_max_entries(skel->maps.lock_sleepers, o->max_callers);
	bpf_map__set_max_entries(skel->maps.lock_owners, o->max_callers);
	bpf_map__set_max_entries(skel->maps.lock_names, o->max_callers);
	bpf_map__set_max_entries(skel->maps.lock_stack_counts, o->max_stacks);
	bpf_map__set_max_entries(skel->maps.lock_stacks, o->max_stacks);
	return 0;
}

/* Each CPU's runqueue-lock address, from a program run on that CPU. */
static void probe_rq_locks(struct lock_state *st, int ncpus)
{
	int fd = bpf_program__fd(st->skel->progs.lock_rq_probe), found = 0;

	for (int cpu = 0; cpu < ncpus && cpu < SP_LOCK_MAX_CPUS; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);

		if (bpf_prog_test_run_opts(fd, &opts))
			dlog("runqueue lock of CPU %d not found: %s", cpu, strerror(errno));
		else
			found += st->skel->bss->lock_rq_addrs[cpu] != 0;
	}
	dlog("runqueue locks found for %d of %d CPUs", found, ncpus);
}

static int lock_setup(void *state, struct trace_ctx *ctx)
{
	struct lock_state *st = state;

	if (!st->available)
		return 0;
	probe_rq_locks(st, ctx->ncpus);
	return 0;
}

static int lock_attach(void *state, struct trace_ctx *ctx)
{
	struct lock_state *st = state;

	(void)ctx;
	if (!st->available)
		return 0;
	/* ends first (and sp_switch, by trace.c): a begin is never left without its pair */
	st->end = bpf_program__attach(st->skel->progs.lock_end);
	if (!st->end)
		return -errno;
	st->begin = bpf_program__attach(st->skel->progs.lock_begin);
	return st->begin ? 0 : -errno;
}

static void lock_detach(void *state)
{
	struct lock_state *st = state;

	bpf_link__destroy(st->begin);
	bpf_link__destroy(st->end);
	st->begin = st->end = NULL;
}

static void lock_destroy(void *state)
{
	struct lock_state *st = state;

	if (!st)
		return;
	lock_detach(st);
	free(st->why);
	free(st);
}

/* ---- reading ---- */

/*
 * A small open-addressing index from a string-keyed item to its position in an array,
 * so rows that name alike merge in linear time (dynamic locks can make many rows).
 */
struct sidx {
	size_t *slot; /* 0 empty, else position + 1 */
	uint64_t *hash;
	size_t cap, n;
};

static uint64_t hash_strs(const char *const *s, int n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < n; i++) {
		for (const char *p = s[i] ? s[i] : ""; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
		h = (h ^ 0xff) * 0x100000001b3ULL; /* separator */
	}
	return h;
}

static int sidx_grow(struct sidx *x)
{
	size_t cap = x->cap ? x->cap * 2 : 256;
	size_t *slot = calloc(cap, sizeof(*slot));
	uint64_t *hash = calloc(cap, sizeof(*hash));

	if (!slot || !hash) {
		free(slot);
		free(hash);
		return -ENOMEM;
	}
	for (size_t i = 0; i < x->cap; i++) {
		size_t j;

		if (!x->slot[i])
			continue;
		for (j = x->hash[i] & (cap - 1); slot[j]; j = (j + 1) & (cap - 1))
			;
		slot[j] = x->slot[i];
		hash[j] = x->hash[i];
	}
	free(x->slot);
	free(x->hash);
	x->slot = slot;
	x->hash = hash;
	x->cap = cap;
	return 0;
}

/*
 * The position of the item with key s[0..n) (eq(pos, s) compares), or, when missing, the
 * position add() returns (or -ENOMEM from it). ret_new says which.
 */
static long sidx_get(struct sidx *x, const char *const *s, int n,
		     bool (*eq)(void *arr, size_t pos, const char *const *s), void *arr,
		     long (*add)(void *arr, const char *const *s), bool *ret_new)
{
	uint64_t h = hash_strs(s, n);
	size_t j;
	long pos;

	*ret_new = false;
	if ((x->n + 1) * 2 > x->cap && sidx_grow(x))
		return -ENOMEM;
	for (j = h & (x->cap - 1); x->slot[j]; j = (j + 1) & (x->cap - 1))
		if (x->hash[j] == h && eq(arr, x->slot[j] - 1, s))
			return (long)(x->slot[j] - 1);
	pos = add(arr, s);
	if (pos < 0)
		return pos;
	x->slot[j] = (size_t)pos + 1;
	x->hash[j] = h;
	x->n++;
	*ret_new = true;
	return pos;
}

static void sidx_free(struct sidx *x)
{
	free(x->slot);
	free(x->hash);
	memset(x, 0, sizeof(*x));
}

struct reader {
	struct schedprof_bpf *skel;
	const struct ksyms *ks;
	struct lockname_ctx names;
	uint64_t rq[SP_LOCK_MAX_CPUS];
	struct sp_lock_view *v;
	struct sidx rows, sleepers, groups;
};

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

/* Rows, sleepers and groups are keyed by three strings: (caller or comm, kind, lock). */
static bool key3_eq(const char *a, const char *b, const char *c, const char *const *s)
{
	return !strcmp(a, s[0]) && !strcmp(b, s[1]) && !strcmp(c, s[2]);
}

/* Copies the key into a new item's strings: false on ENOMEM (the model frees what was copied). */
static bool key3_dup(char **a, char **b, char **c, const char *const *s)
{
	*a = strdup(s[0]);
	*b = strdup(s[1]);
	*c = strdup(s[2]);
	return *a && *b && *c;
}

static bool lock_row_eq(void *arr, size_t pos, const char *const *s)
{
	const struct sp_lock_row *r = &((struct sp_lock_view *)arr)->rows[pos];

	return key3_eq(r->caller, r->kind, r->lock, s);
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
	bool fresh;
	long pos;

	if (row_key_make(rd, &k, caller, flags, lock, name))
		return NULL;
	s[0] = k.caller;
	s[1] = k.kind;
	s[2] = k.lock;
	s[3] = lockname_source_name(k.source);
	pos = sidx_get(&rd->rows, s, 3, lock_row_eq, rd->v, lock_row_add, &fresh);
	free(k.caller);
	return pos < 0 ? NULL : &rd->v->rows[pos];
}

static int read_rows(struct reader *rd)
{
	int fd = bpf_map__fd(rd->skel->maps.lock_stat);
	struct sp_lock_key key, *prev = NULL;
	struct sp_lock_val val;
	char comm[TASK_COMM_LEN + 1];

	while (bpf_map_get_next_key(fd, prev, &key) == 0) {
		struct sp_lock_row *r;

		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val))
			continue;
		r = get_row(rd, key.caller, key.flags, key.lock, key.name);
		if (!r)
			return -ENOMEM;
		r->count += val.count;
		r->wait_ns += val.wait_ns;
		r->failed += val.failed;
		if (val.max_ns > r->max_ns)
			r->max_ns = val.max_ns;
		if (sp_comm_list_add(&r->comms, kstack_comm(key.comm, comm), val.count, val.wait_ns,
				     val.max_ns))
			return -ENOMEM;
	}
	return 0;
}

static int read_owners(struct reader *rd)
{
	int fd = bpf_map__fd(rd->skel->maps.lock_owners);
	struct sp_lock_owner_key key, *prev = NULL;
	struct sp_lock_owner_val val;
	char comm[TASK_COMM_LEN + 1];

	while (bpf_map_get_next_key(fd, prev, &key) == 0) {
		struct sp_lock_row *r;

		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val))
			continue;
		r = get_row(rd, key.caller, key.flags, key.lock, key.name);
		if (!r)
			return -ENOMEM;
		if (sp_comm_list_add(&r->owners, kstack_comm(key.owner, comm), val.count,
				     val.wait_ns, 0))
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

static int read_stacks(struct reader *rd)
{
	int fd = bpf_map__fd(rd->skel->maps.lock_stack_counts);
	int sfd = bpf_map__fd(rd->skel->maps.lock_stacks);
	struct sp_lock_stack_key key, *prev = NULL;
	struct sp_lock_stack_val val;
	struct stack_ent *ents = NULL;
	size_t n = 0, cap = 0;
	char comm[TASK_COMM_LEN + 1];
	struct sp_stack st;
	int err = 0;

	while (bpf_map_get_next_key(fd, prev, &key) == 0) {
		struct sp_lock_row *r;

		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val))
			continue;
		r = get_row(rd, key.caller, key.flags, key.lock, key.name);
		if (!r || grow((void **)&ents, &cap, n + 1, sizeof(*ents))) {
			err = -ENOMEM;
			goto out;
		}
		ents[n].row = (size_t)(r - rd->v->rows);
		ents[n].stack = key.stack;
		ents[n].pid = key.tgid;
		memcpy(ents[n].comm, key.comm, TASK_COMM_LEN);
		ents[n].count = val.count;
		ents[n].wait_ns = val.wait_ns;
		n++;
	}
	if (n > 1)
		qsort(ents, n, sizeof(*ents), cmp_stack_ent);
	for (size_t i = 0; i < n; i++) {
		struct stack_ent *e = &ents[i];
		struct sp_stack_list *l;
		struct sp_stack_row *s;

		/* the same stack of two locks that name alike (two inodes): one entry */
		while (i + 1 < n && !cmp_stack_ent(e, &ents[i + 1])) {
			ents[i + 1].count += e->count;
			ents[i + 1].wait_ns += e->wait_ns;
			e = &ents[++i];
		}
		if (bpf_map_lookup_elem(sfd, &e->stack, &st))
			continue; /* not kept: counted in missing_stacks by BPF */
		l = &rd->v->rows[e->row].stacks;
		s = sp_stack_list_add(l);
		if (!s) {
			err = -ENOMEM;
			goto out;
		}
		s->count = e->count;
		s->time_ns = e->wait_ns;
		s->comm = strdup(kstack_comm(e->comm, comm));
		if (!s->comm) {
			err = -ENOMEM;
			goto out;
		}
		s->pid = (int)e->pid;
		/* from the first lock or scheduler frame: drops the tracepoint and BPF frames */
		err = kstack_fill(s, rd->ks, &st, &rd->skel->bss->fold_cfg, KSTACK_FROM_FOLD);
		if (err)
			goto out;
		sp_stack_list_merge_last(l);
	}
out:
	free(ents);
	return err;
}

/* ---- sleepers ---- */

struct sleep_ent {
	size_t row, group;
	uint32_t pid;
};

static bool sleeper_eq(void *arr, size_t pos, const char *const *s)
{
	const struct sp_sleeper_row *r = &((struct sp_lock_view *)arr)->sleepers[pos];

	return key3_eq(r->caller, r->kind, r->lock, s);
}

static long sleeper_add(void *arr, const char *const *s)
{
	struct sp_lock_view *v = arr;
	struct sp_sleeper_row *r = sp_sleeper_add_row(v);

	if (!r || !key3_dup(&r->caller, &r->kind, &r->lock, s))
		return -ENOMEM;
	return (long)(r - v->sleepers);
}

static bool group_eq(void *arr, size_t pos, const char *const *s)
{
	const struct sp_sleeper_group *g = &((struct sp_lock_view *)arr)->groups[pos];

	return key3_eq(g->comm, g->kind, g->lock, s);
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

static int read_sleepers(struct reader *rd)
{
	int fd = bpf_map__fd(rd->skel->maps.lock_sleepers);
	struct sp_lock_sleep_key key, *prev = NULL;
	struct sp_lock_sleep_val val;
	struct sleep_ent *ents = NULL;
	size_t n = 0, cap = 0;
	char comm[TASK_COMM_LEN + 1];
	int err = 0;

	while (bpf_map_get_next_key(fd, prev, &key) == 0) {
		struct sp_sleeper_row *r;
		struct sp_sleeper_group *g;
		struct row_key k;
		const char *s[3];
		long row, group;
		bool fresh;

		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val))
			continue;
		if (row_key_make(rd, &k, key.caller, key.flags, key.lock, key.name)) {
			err = -ENOMEM;
			break;
		}
		kstack_comm(key.comm, comm);
		s[0] = k.caller;
		s[1] = k.kind;
		s[2] = k.lock;
		row = sidx_get(&rd->sleepers, s, 3, sleeper_eq, rd->v, sleeper_add, &fresh);
		s[0] = comm;
		group = row < 0 ? row : sidx_get(&rd->groups, s, 3, group_eq, rd->v, group_add, &fresh);
		if (row < 0 || group < 0 || grow((void **)&ents, &cap, n + 1, sizeof(*ents))) {
			free(k.caller);
			err = -ENOMEM;
			break;
		}
		r = &rd->v->sleepers[row];
		r->count += val.sleeps;
		r->offcpu_ns += val.offcpu_ns;
		if (val.max_ns > r->max_ns)
			r->max_ns = val.max_ns;
		g = &rd->v->groups[group];
		g->count += val.sleeps;
		g->offcpu_ns += val.offcpu_ns;
		if (val.max_ns > g->max_ns)
			g->max_ns = val.max_ns;
		err = sp_comm_list_add(&r->comms, comm, val.sleeps, val.offcpu_ns, val.max_ns) ?:
		      sp_comm_list_add(&g->callers, k.caller, val.sleeps, val.offcpu_ns, val.max_ns);
		free(k.caller);
		if (err)
			break;
		ents[n++] = (struct sleep_ent){ (size_t)row, (size_t)group, key.pid };
	}
	if (!err && n) {
		count_tasks(rd->v, ents, n, true);
		count_tasks(rd->v, ents, n, false);
	}
	free(ents);
	return err;
}

static uint64_t prog_misses(struct bpf_program *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_program__fd(p);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.recursion_misses;
}

static int lock_read(void *state, struct trace_ctx *ctx, struct sp_run *run)
{
	struct lock_state *st = state;
	struct schedprof_bpf *skel = st->skel;
	struct sp_lock_view *v = &run->locks;
	const struct sp_lock_drops *d = &skel->bss->lock_drops;
	struct reader *rd;
	int err;

	v->present = true;
	v->available = st->available;
	if (!st->available) {
		v->unavailable = xstrdup(st->why);
		return v->unavailable ? 0 : -ENOMEM;
	}
	v->total = skel->bss->lock_counts.total;
	v->failed = skel->bss->lock_counts.failed;
	v->lost = d->row_map_full;
	v->missing_stacks = d->stack_fail + d->stack_map_full + d->stackagg_map_full;
	v->unpaired = d->unpaired;
	v->missed = prog_misses(skel->progs.lock_begin) + prog_misses(skel->progs.lock_end);
	if (d->task_storage_fail || d->nest_overflow)
		wlog("%llu lock contentions were not timed (task storage failed %llu, nested "
		     "deeper than %d on a CPU %llu)",
		     (unsigned long long)(d->task_storage_fail + d->nest_overflow),
		     (unsigned long long)d->task_storage_fail, SP_LOCK_SPIN_NEST,
		     (unsigned long long)d->nest_overflow);
	if (d->sleeper_map_full || d->owner_map_full)
		wlog("sleeper or owner map full: %llu sleeping contentions and %llu owners not "
		     "counted (raise --max-callers)",
		     (unsigned long long)d->sleeper_map_full, (unsigned long long)d->owner_map_full);
	rd = calloc(1, sizeof(*rd));
	if (!rd)
		return -ENOMEM;
	rd->skel = skel;
	rd->ks = ctx->ksyms;
	rd->v = v;
	memcpy(rd->rq, skel->bss->lock_rq_addrs, sizeof(rd->rq));
	rd->names = (struct lockname_ctx){ .ks = ctx->ksyms, .rq_locks = rd->rq,
					   .nrq = SP_LOCK_MAX_CPUS };
	err = read_rows(rd) ?: read_owners(rd) ?: read_stacks(rd) ?: read_sleepers(rd);
	sidx_free(&rd->rows);
	sidx_free(&rd->sleepers);
	sidx_free(&rd->groups);
	free(rd);
	if (err)
		return err;
	sp_lock_sort(v, ctx->opts->render.lock_sort);
	return 0;
}

const struct collector lock_collector = {
	.name = "locks",
	.view = SP_VIEW_LOCKS,
	.configure = lock_configure,
	.disable = lock_disable,
	.setup = lock_setup,
	.attach = lock_attach,
	.detach = lock_detach,
	.read = lock_read,
	.destroy = lock_destroy,
};
