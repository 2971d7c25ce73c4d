// SPDX-License-Identifier: BSD-2-Clause
/* The schedules view's rows from its map records (sched_rows.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/kstack.h"
#include "rows/uframes.h"
#include "rows/rows.h"
#include "views/schedules/rows.h"
#include "base/hashmap.h"
#include "base/util.h"
#include "model/waitclass.h"
#include "schedprof/sched.h"

void sched_maps_free(struct sched_maps *m)
{
	sp_records_free(&m->callers);
	sp_records_free(&m->stack_counts);
	sp_records_free(&m->stacks);
	sp_records_free(&m->pairs);
	sp_records_free(&m->ustacks);
	sp_records_free(&m->wakers);
	sp_records_free(&m->takers);
	sp_records_free(&m->in_progress);
	sp_records_free(&m->throttled);
}

/* Folds record i's ncpus values of stride bytes into dst: sums, maxima where max says. */
static void fold_one(void *dst, const char *src, size_t size, size_t stride, int ncpus,
		     bool caller_val)
{
	memcpy(dst, src, size);
	for (int c = 1; c < ncpus; c++) {
		const char *o = src + (size_t)c * stride;

		if (caller_val) {
			struct sp_caller_val *d = dst;
			struct sp_caller_val v;

			memcpy(&v, o, sizeof(v));
			d->count += v.count;
			d->offcpu_ns += v.offcpu_ns;
			d->blocked_ns += v.blocked_ns;
			d->runq_ns += v.runq_ns;
			d->unfinished += v.unfinished;
			d->window_blocked_ns += v.window_blocked_ns;
			d->throttled_ns += v.throttled_ns;
			d->migrated += v.migrated;
			d->migrated_runq_ns += v.migrated_runq_ns;
			if (v.max_ns > d->max_ns)
				d->max_ns = v.max_ns;
			if (v.runq_max_ns > d->runq_max_ns)
				d->runq_max_ns = v.runq_max_ns;
			for (int j = 0; j < SP_RUNQ_SLOTS; j++)
				d->runq_hist[j] += v.runq_hist[j];
		} else { /* __u64 counters, every one of them (a taker's count and ns) */
			for (size_t w = 0; w + sizeof(__u64) <= size; w += sizeof(__u64)) {
				__u64 a, b;

				memcpy(&a, (char *)dst + w, sizeof(a));
				memcpy(&b, o + w, sizeof(b));
				a += b;
				memcpy((char *)dst + w, &a, sizeof(a));
			}
		}
	}
}

/* In place: ncpus values per record (each rounded up to 8 bytes) become one of size bytes. */
static int fold_pcpu(struct sp_records *r, size_t size, int ncpus, bool caller_val)
{
	size_t stride = (size + 7) & ~(size_t)7;
	char tmp[sizeof(struct sp_caller_val)];

	if (ncpus < 1 || size > sizeof(tmp))
		return -EINVAL;
	if (!r->n || (r->value_size == size && ncpus == 1))
		return 0;
	if (r->value_size != stride * (size_t)ncpus)
		return -EINVAL;
	for (size_t i = 0; i < r->n; i++) {
		fold_one(tmp, (const char *)r->values + i * r->value_size, size, stride, ncpus,
			 caller_val);
		memcpy((char *)r->values + i * size, tmp, size);
	}
	r->value_size = size;
	return 0;
}

int sched_fold_pcpu(struct sched_maps *m, int ncpus)
{
	return fold_pcpu(&m->callers, sizeof(struct sp_caller_val), ncpus, true) ?:
	       fold_pcpu(&m->wakers, sizeof(__u64), ncpus, false) ?:
	       fold_pcpu(&m->takers, sizeof(struct sp_taker_val), ncpus, false);
}

/* *ret: out's value of key k (indexed in ix), or NULL when k was new and is appended with v. */
static int slot_rec(struct sp_records *out, struct hashmap *ix, const void *k, const void *v,
		    __u64 **ret)
{
	long i;
	int err;

	if (hashmap__find(ix, (long)k, &i)) {
		*ret = (__u64 *)sp_records_value(out, (size_t)i);
		return 0;
	}
	err = sp_records_add(out, k, v); /* (reserved: the keys the index points to stay put) */
	if (!err)
		err = hashmap__add(ix, (long)sp_records_key(out, out->n - 1), (long)(out->n - 1));
	*ret = NULL;
	return err;
}

/* Adds v's words to o's, or (max) keeps the larger of each. */
static void slot_merge(__u64 *o, const void *v, size_t size, bool max)
{
	for (size_t w = 0; w < size / sizeof(__u64); w++) {
		__u64 x;

		memcpy(&x, (const char *)v + w * sizeof(x), sizeof(x));
		if (!max)
			o[w] += x;
		else if (x > o[w])
			o[w] = x;
	}
}

int sched_slots_settle(struct sp_records *rec, struct sp_records *seen)
{
	const size_t ks = seen->key_size, vs = seen->value_size;
	struct sp_records out, copy;
	struct hashmap ix;
	int err = 0;

	if (rec->n && (rec->key_size != ks || rec->value_size != vs))
		return -EINVAL;
	hashmap__init(&ix, hashmap_mem_hash, hashmap_mem_equal, (void *)ks);
	sp_records_init(&out, ks, vs);
	sp_records_init(&copy, ks, vs);
	err = sp_records_reserve(&out, rec->n + seen->n);
	for (size_t pass = 0; pass < 2; pass++) {
		const struct sp_records *r = pass ? seen : rec;

		for (size_t i = 0; !err && i < r->n; i++) {
			const void *v = sp_records_value(r, i);
			__u64 *o;

			err = slot_rec(&out, &ix, sp_records_key(r, i), v, &o);
			if (!err && o)
				slot_merge(o, v, vs, pass);
		}
	}
	if (!err)
		err = sp_records_reserve(&copy, out.n);
	for (size_t i = 0; !err && i < out.n; i++)
		err = sp_records_add(&copy, sp_records_key(&out, i), sp_records_value(&out, i));
	hashmap__clear(&ix);
	if (err) {
		sp_records_free(&out);
		sp_records_free(&copy);
		return err;
	}
	out.failed = rec->failed;
	sp_records_free(rec);
	sp_records_free(seen);
	*rec = out;
	*seen = copy;
	return 0;
}

uint64_t sched_in_window(uint64_t t0, uint64_t a, uint64_t b)
{
	if (!t0)
		return 0;
	if (a < t0)
		a = t0;
	return b > a ? b - a : 0;
}

void sched_split(const struct sp_sleep *s, uint64_t now, struct sched_split *ret)
{
	uint64_t wake = s->wake_ts;

	memset(ret, 0, sizeof(*ret));
	if (now < s->ts)
		now = s->ts;
	ret->offcpu = now - s->ts;
	ret->woken = s->key.caller != SP_CALLER_IDLE && wake && wake <= now;
	if (s->key.caller == SP_CALLER_PREEMPTED) {
		ret->runnable = s->ts;
		ret->woken = false;
	} else if (ret->woken) {
		ret->runnable = wake > s->ts ? wake : s->ts;
	} else {
		ret->runnable = now;
	}
	ret->runq = now - ret->runnable;
	ret->blocked = ret->offcpu - ret->runq;
}

static const char *const wait_names[SP_WAIT__MAX] = {
	[SP_WAIT_NONE] = NULL,
	[SP_WAIT_RWSEM_READ] = "rwsem-read",
	[SP_WAIT_RWSEM_WRITE] = "rwsem-write",
	[SP_WAIT_MUTEX] = "mutex",
	[SP_WAIT_SEMAPHORE] = "semaphore",
	[SP_WAIT_RTMUTEX] = "rt-mutex",
	[SP_WAIT_PERCPU_RWSEM] = "percpu-rwsem",
	[SP_WAIT_IO] = "io",
};

const char *fold_wait_name(__u32 wait)
{
	return wait < SP_WAIT__MAX ? wait_names[wait] : NULL;
}

const char *sched_wait_name(uint32_t wait, const char *caller)
{
	if (fold_wait_name(wait))
		return fold_wait_name(wait);
	if (strstr(caller, "pipe_read") || strstr(caller, "pipe_write") || strstr(caller, "pipe_wait"))
		return "pipe";
	return NULL;
}

/* What a row adds up from its records that the model does not keep. */
struct row_extra {
	uint64_t hist[SP_RUNQ_SLOTS]; /* run-queue waits, log2 slots */
	uint64_t window_blocked_ns;   /* blocked inside the trace's window: the budget's */
};

struct builder {
	struct sp_sched_view *v;
	const struct ksyms *ks;
	struct row_index rows;
	struct stack_index stacks;
	struct key_set kept; /* (caller, wait, comm) of the rows the map holds */
	struct row_extra *extra; /* by row position */
	size_t extra_cap;
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

/* The extra sums of row r (zeroed when new); NULL on ENOMEM. */
static struct row_extra *row_extra(struct builder *b, const struct sp_sched_row *r)
{
	size_t pos = (size_t)(r - b->v->rows), old = b->extra_cap;

	if (pos >= old) {
		if (grow((void **)&b->extra, &b->extra_cap, pos + 1, sizeof(*b->extra)))
			return NULL;
		memset(b->extra + old, 0, (b->extra_cap - old) * sizeof(*b->extra));
	}
	return &b->extra[pos];
}

static int add_callers(struct builder *b, const struct sp_records *rec)
{
	char comm[TASK_COMM_LEN + 1];

	for (size_t i = 0; i < rec->n; i++) {
		const struct sp_caller_key *key = sp_records_key(rec, i);
		const struct sp_caller_val *val = sp_records_value(rec, i);
		struct sp_sched_row *r = get_row(b, key->caller, key->wait);
		struct sp_caller_key k;
		struct row_extra *x;

		if (!r || key_set_add(&b->kept, kept_key(&k, key->caller, key->wait, key->comm)))
			return -ENOMEM;
		x = row_extra(b, r);
		if (!x)
			return -ENOMEM;
		r->count += val->count;
		r->offcpu_ns += val->offcpu_ns;
		r->blocked_ns += val->blocked_ns;
		r->runq_ns += val->runq_ns;
		r->unfinished += val->unfinished;
		r->throttled_ns += val->throttled_ns;
		r->migrated += val->migrated;
		r->migrated_runq_ns += val->migrated_runq_ns;
		r->has_runq = true;
		if (val->runq_max_ns > r->runq_max_ns)
			r->runq_max_ns = val->runq_max_ns;
		for (int j = 0; j < SP_RUNQ_SLOTS; j++)
			x->hist[j] += val->runq_hist[j];
		x->window_blocked_ns += val->window_blocked_ns;
		if (rows_account(&r->comms, &r->max_ns, kstack_comm(key->comm, comm), val->count,
				 val->offcpu_ns, val->max_ns))
			return -ENOMEM;
	}
	return 0;
}

uint64_t sched_runq_percentile(const uint64_t hist[SP_RUNQ_SLOTS], double q, uint64_t max_ns)
{
	uint64_t n = 0, rank, seen = 0;

	for (int i = 0; i < SP_RUNQ_SLOTS; i++)
		n += hist[i];
	if (!n)
		return 0;
	rank = (uint64_t)(q * (double)n); /* ceil(q * n) */
	if ((double)rank < q * (double)n)
		rank++;
	if (rank < 1)
		rank = 1;
	for (int i = 0; i < SP_RUNQ_SLOTS; i++) {
		uint64_t bound = (i == SP_RUNQ_SLOTS - 1) ? UINT64_MAX : (2ULL << i) - 1;

		seen += hist[i];
		if (seen >= rank)
			return bound < max_ns ? bound : max_ns;
	}
	return max_ns;
}

/* The waker's comm as the model names it: "[irq]", "[softirq]", or the task's comm. */
static const char *waker_comm(const struct sp_waker_key *k, char buf[TASK_COMM_LEN + 1])
{
	switch (k->ctx) {
	case SP_WAKER_HARDIRQ:
		return "[irq]";
	case SP_WAKER_SOFTIRQ:
		return "[softirq]";
	default:
		return kstack_comm(k->comm, buf);
	}
}

/* The waker's function, malloc'd: NULL (not walked, or ENOMEM: *ret_err), "[timer]", ... */
static char *waker_function(const struct ksyms *ks, uint64_t fn, int *ret_err)
{
	char *name;

	switch (fn) {
	case SP_WAKER_NOT_WALKED:
		return NULL;
	case SP_WAKER_UNKNOWN:
		name = strdup("[unknown]");
		break;
	case SP_WAKER_TIMER:
		name = strdup("[timer]");
		break;
	default:
		name = kstack_name(ks, fn);
	}
	if (!name)
		*ret_err = -ENOMEM;
	return name;
}

static int strcmp_null(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static int waker_by_name(const void *pa, const void *pb)
{
	const struct sp_waker *a = pa, *b = pb;

	return strcmp(a->comm, b->comm) ?: strcmp_null(a->function, b->function);
}

static int waker_by_count(const void *pa, const void *pb)
{
	const struct sp_waker *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return waker_by_name(pa, pb);
}

/* Wakers named alike merged (the records differ by the sleeper's comm, the offset), by count. */
static void wakers_merge(struct sp_waker_list *l)
{
	size_t n = 0;

	if (!l->n)
		return;
	qsort(l->v, l->n, sizeof(*l->v), waker_by_name);
	for (size_t i = 1; i < l->n; i++) {
		if (!waker_by_name(&l->v[n], &l->v[i])) {
			l->v[n].count += l->v[i].count;
			free(l->v[i].comm);
			free(l->v[i].function);
			continue;
		}
		l->v[++n] = l->v[i];
	}
	l->n = n + 1;
	qsort(l->v, l->n, sizeof(*l->v), waker_by_count);
}

static int add_wakers(struct builder *b, const struct sp_records *rec)
{
	char comm[TASK_COMM_LEN + 1];
	int err = 0;

	for (size_t i = 0; i < rec->n && !err; i++) {
		const struct sp_waker_key *key = sp_records_key(rec, i);
		const __u64 *count = sp_records_value(rec, i);
		struct sp_caller_key k;
		struct sp_sched_row *r;
		struct sp_waker *w;

		/* the row was lost (map full): its wake-ups are in no row, as its switches */
		if (!key_set_has(&b->kept, kept_key(&k, key->row.caller, key->row.wait,
						      key->row.comm)))
			continue;
		r = get_row(b, key->row.caller, key->row.wait);
		w = r ? SP_ARRAY_ADD(r->wakers.v, r->wakers.n, r->wakers.cap) : NULL;
		if (!w)
			return -ENOMEM;
		w->count = *count;
		w->comm = strdup(waker_comm(key, comm));
		w->function = waker_function(b->ks, key->function, &err);
		if (!w->comm)
			err = -ENOMEM;
	}
	for (size_t i = 0; i < b->v->nrows; i++)
		wakers_merge(&b->v->rows[i].wakers);
	return err;
}

/*
 * Each row's takers (the records differ by the waiting task's comm, and a CPU's last takers
 * come as records of their own: collect.c): alike ones merged. The collector names the cgroups.
 */
static int add_takers(struct builder *b, const struct sp_records *rec)
{
	char comm[TASK_COMM_LEN + 1];

	for (size_t i = 0; i < rec->n; i++) {
		const struct sp_taker_key *key = sp_records_key(rec, i);
		const struct sp_taker_val *val = sp_records_value(rec, i);
		struct sp_cpu_taker t = { 0 };
		struct sp_caller_key k;
		struct sp_sched_row *r;

		if (!val->count || !key_set_has(&b->kept, kept_key(&k, key->row.caller,
								   key->row.wait, key->row.comm)))
			continue;
		r = get_row(b, key->row.caller, key->row.wait);
		if (!r)
			return -ENOMEM;
		t.kind = key->kind == SP_TAKER_PREEMPTOR ? "preempted-by" : "ran-before";
		t.comm = (char *)kstack_comm(key->comm, comm);
		t.cgroup_id = key->cgroup;
		t.where = key->inside ? "inside" : "outside";
		t.count = val->count;
		t.ns = val->ns;
		if (sp_cpu_taker_add(&r->takers, &t))
			return -ENOMEM;
	}
	return 0;
}

/* dst: a copy of src's records (dst initialized here). 0 or -ENOMEM. */
static int records_copy(struct sp_records *dst, const struct sp_records *src)
{
	sp_records_init(dst, src->key_size, src->value_size);
	dst->failed = src->failed;
	for (size_t i = 0; i < src->n; i++)
		if (sp_records_add(dst, sp_records_key(src, i), sp_records_value(src, i)))
			return -ENOMEM;
	return 0;
}

/* Was pid preempted while its group was throttled, and is still waiting (m->throttled)? */
static bool is_throttled(const struct sched_maps *m, __u32 pid)
{
	if (!sp_records_are(&m->throttled, sizeof(__u32), sizeof(struct sp_throttled)))
		return false;
	for (size_t i = 0; i < m->throttled.n; i++)
		if (*(const __u32 *)sp_records_key(&m->throttled, i) == pid)
			return true;
	return false;
}

/*
 * The tasks still in progress at the stop (m->in_progress), charged up to m->stop as BPF
 * charges a switch-in: a sleep or a wait for a CPU to its row (marked unfinished; the
 * run-queue histogram and max keep finished waits only), its stack (a record added to
 * stack_counts) and its waker (to wakers); time on a CPU and the waits of new tasks to the
 * budget bg. A sleep whose row the map lost is in the budget only (blocked, "other").
 */
static int add_in_progress(struct builder *b, const struct sched_maps *m,
			   struct sp_records *stack_counts, struct sp_records *wakers,
			   struct sp_budget_counts *bg)
{
	char comm[TASK_COMM_LEN + 1];

	if (m->in_progress.n && !sp_records_are(&m->in_progress, sizeof(__u32),
						 sizeof(struct sp_sleep)))
		return -EINVAL;
	for (size_t i = 0; i < m->in_progress.n; i++) {
		const struct sp_sleep *s = sp_records_value(&m->in_progress, i);
		struct sp_stack_key sk = { .stack = s->stack, .caller = s->key.caller,
					   .wait = s->key.wait, .tgid = s->tgid };
		struct sp_stack_val sv = {};
		struct sp_waker_key wk = {};
		struct sched_split sp;
		struct sp_sched_row *r;
		struct sp_caller_key k;
		struct row_extra *x;
		__u64 one = 1;
		bool thr;

		if (s->state == SP_TS_RUNNING) {
			bg->oncpu_ns += sched_in_window(m->t0, s->ts_in, m->stop);
			continue;
		}
		if (s->state == SP_TS_NEW) {
			bg->runq_ns += sched_in_window(m->t0, s->wake_ts, m->stop);
			continue;
		}
		if (s->state != SP_TS_OFF || s->key.caller == SP_CALLER_IDLE)
			continue;
		sched_split(s, m->stop, &sp);
		bg->runq_ns += sched_in_window(m->t0, sp.runnable, m->stop);
		/* as BPF's charge_throttled(), all of the wait: still throttled, as far as known */
		thr = s->key.caller == SP_CALLER_PREEMPTED && is_throttled(m, s->pid);
		if (thr)
			bg->throttled_ns += sched_in_window(m->t0, sp.runnable, m->stop);
		if (!key_set_has(&b->kept, kept_key(&k, s->key.caller, s->key.wait, s->key.comm))) {
			bg->blocked_norow_ns += sched_in_window(m->t0, s->ts, sp.runnable);
			continue;
		}
		r = get_row(b, s->key.caller, s->key.wait);
		x = r ? row_extra(b, r) : NULL;
		if (!x)
			return -ENOMEM;
		r->offcpu_ns += sp.offcpu;
		r->blocked_ns += sp.blocked;
		r->runq_ns += sp.runq;
		if (thr)
			r->throttled_ns += sp.runq;
		r->unfinished++;
		x->window_blocked_ns += sched_in_window(m->t0, s->ts, sp.runnable);
		if (rows_account(&r->comms, &r->max_ns, kstack_comm(s->key.comm, comm), 0,
				 sp.offcpu, sp.offcpu))
			return -ENOMEM;
		memcpy(sk.comm, s->key.comm, sizeof(sk.comm));
		sv.offcpu_ns = sp.offcpu;
		if (s->stack && sp_records_add(stack_counts, &sk, &sv))
			return -ENOMEM;
		if (!sp.woken)
			continue;
		wk.row = s->key;
		wk.function = s->waker_fn;
		wk.ctx = s->waker_ctx;
		if (wk.ctx == SP_WAKER_TASK)
			memcpy(wk.comm, s->waker_comm, sizeof(wk.comm));
		if (sp_records_add(wakers, &wk, &one))
			return -ENOMEM;
	}
	return 0;
}

/* Each row's run-queue percentiles, and the budget from the rows and the BPF sums. */
static void finish_rows(struct builder *b, const struct sched_maps *m,
			const struct sp_budget_counts *sums)
{
	struct sp_budget *bg = &b->v->budget;

	for (size_t i = 0; i < b->v->nrows && i < b->extra_cap; i++) {
		struct sp_sched_row *r = &b->v->rows[i];
		const struct row_extra *x = &b->extra[i];

		r->runq_p50_ns = sched_runq_percentile(x->hist, 0.50, r->runq_max_ns);
		r->runq_p99_ns = sched_runq_percentile(x->hist, 0.99, r->runq_max_ns);
		if (m->has_budget)
			*sp_budget_slot(&bg->blocked, sp_wait_class(r->caller, r->wait)) +=
				x->window_blocked_ns;
	}
	if (!m->has_budget)
		return;
	bg->present = true;
	bg->oncpu_ns += sums->oncpu_ns;
	bg->runq_ns += sums->runq_ns;
	bg->tasks += sums->tasks;
	bg->throttled_ns += sums->throttled_ns;
	bg->blocked.other += sums->blocked_norow_ns;
	if (m->steal_split) {
		/* a two's complement sum of each slice's difference: jitter of either sign */
		int64_t stolen = (int64_t)sums->stolen_ns;

		bg->steal.present = true;
		bg->steal.split = true;
		bg->steal.stolen_ns = stolen > 0 ? (uint64_t)stolen : 0;
		if (bg->steal.stolen_ns > bg->oncpu_ns)
			bg->steal.stolen_ns = bg->oncpu_ns;
	}
	bg->blocked_ns = 0;
	for (int c = 0; c < SP_WC__MAX; c++)
		bg->blocked_ns += *sp_budget_slot(&bg->blocked, (enum sp_wait_class)c);
}

static int add_stacks(struct builder *b, const struct sp_records *rec, const struct sched_maps *m,
		      const struct sp_fold_cfg *cfg, struct uframes *uf)
{
	struct kstack_src src = { .ks = b->ks, .cfg = cfg, .from = KSTACK_FROM_SCHED };
	struct sp_records_index stacks;
	struct uframes_pairs up;
	char comm[TASK_COMM_LEN + 1];
	int err;

	err = sp_records_index_u64(&stacks, &m->stacks) ?:
	      uframes_pairs_init(&up, &m->pairs, &m->ustacks, uf != NULL);
	for (size_t i = 0; i < rec->n && !err; i++) {
		const struct sp_stack_key *key = sp_records_key(rec, i);
		const struct sp_stack_val *val = sp_records_value(rec, i);
		const struct sp_stack_pair *pair;
		const struct sp_stack *st =
			sp_records_find_u64(&stacks, uframes_pair_kstack(&up, key->stack, &pair));
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
		if (uf)
			err = uframes_add_stack(uf, &up, &b->stacks, (size_t)(r - b->v->rows),
						&proto, &src, pair);
		else
			err = stack_index_add_kstack(&b->stacks, (size_t)(r - b->v->rows), &proto,
						     &src);
	}
	sp_records_index_free(&stacks);
	uframes_pairs_free(&up);
	return err;
}

int sched_rows_build(struct sp_sched_view *v, const struct sched_maps *m, const struct ksyms *ks,
		     const struct sp_fold_cfg *cfg, struct uframes *uf)
{
	struct builder b = { .v = v, .ks = ks };
	struct sp_budget_counts sums = m->budget;
	struct sp_records stack_counts, wakers;
	int err;

	if (!sp_records_are(&m->callers, sizeof(struct sp_caller_key), sizeof(struct sp_caller_val)) ||
	    !sp_records_are(&m->stack_counts, sizeof(struct sp_stack_key),
			    sizeof(struct sp_stack_val)) ||
	    !sp_records_are(&m->stacks, sizeof(__u64), sizeof(struct sp_stack)) ||
	    !sp_records_are(&m->wakers, sizeof(struct sp_waker_key), sizeof(__u64)) ||
	    !sp_records_are(&m->takers, sizeof(struct sp_taker_key), sizeof(struct sp_taker_val)))
		return -EINVAL;
	v->lost_rows += m->callers.failed;
	v->missing_stacks += m->stack_counts.failed;
	row_index_init(&b.rows, row_key, v, 2);
	stack_index_init(&b.stacks, row_stacks, v, false);
	key_set_init(&b.kept, sizeof(struct sp_caller_key));
	sp_records_init(&stack_counts, sizeof(struct sp_stack_key), sizeof(struct sp_stack_val));
	sp_records_init(&wakers, sizeof(struct sp_waker_key), sizeof(__u64));
	err = records_copy(&stack_counts, &m->stack_counts) ?: records_copy(&wakers, &m->wakers) ?:
	      add_callers(&b, &m->callers) ?:
	      add_in_progress(&b, m, &stack_counts, &wakers, &sums) ?:
	      add_stacks(&b, &stack_counts, m, cfg, uf) ?: add_wakers(&b, &wakers) ?:
	      add_takers(&b, &m->takers);
	if (!err)
		finish_rows(&b, m, &sums);
	sp_records_free(&stack_counts);
	sp_records_free(&wakers);
	row_index_free(&b.rows);
	stack_index_free(&b.stacks);
	key_set_free(&b.kept);
	free(b.extra);
	if (!err)
		sp_sched_sort(v);
	return err;
}
