// SPDX-License-Identifier: BSD-2-Clause
/* The timeline's tasks and segments from the --timeline events (tl_build.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "base/hashmap.h"
#include "views/schedules/rows.h"
#include "views/timeline/rows.h"
#include "base/util.h"
#include "model/waitclass.h"
#include "schedprof/fold.h"
#include "schedprof/timeline.h"

#define NONE UINT32_MAX
/* include/linux/sched.h: the state of a task's very last switch-out */
#define TL_TASK_DEAD 0x80
/*
 * A wake-up that reached the buffer while its task still ran ends the sleep that begins at
 * the task's next switch-out if it comes within this: the wake-up raced that switch-out on
 * another CPU (microseconds apart). Later, it was a wake-up that found the task awake.
 */
#define PENDING_NS 1000000ULL

/* The fixed callers of runnable segments (and of a sleep that began before the trace). */
enum { CALLER_PREEMPTED = 0, CALLER_WOKEN, CALLER_NEW, CALLER_UNKNOWN, CALLER__FIXED };
static const char *const fixed_callers[CALLER__FIXED] = { "[preempted]", "[woken]", "[new]",
							  "[unknown]" };
/* The fixed comms of wakers in interrupt context, first in the comm table. */
enum { COMM_IRQ = 0, COMM_SOFTIRQ, COMM__FIXED };
static const char *const fixed_comms[COMM__FIXED] = { "[irq]", "[softirq]" };

struct comm {
	char s[TASK_COMM_LEN + 1];
};

/*
 * A closed segment, with its strings as ids (the model's come at the end). A runnable one
 * also has its schedules row (row_caller, row_wait), the CPU it then ran on (run_cpu, -1:
 * none) and its task's affinity there (cpus, CPUs 0-63; 0: unknown).
 */
struct seg {
	uint64_t start, ns;
	uint32_t task, comm, caller, waker_comm;
	int32_t cpu, waker_tid;
	uint8_t state, wait, unfinished, woken;
	uint64_t cpus;
	int32_t run_cpu;
	uint32_t row_caller;
	uint8_t row_wait, throttled;
	uint64_t stolen; /* running: of ns, not the task's */
};

/* CPU occupancy entries kept (24 bytes each); later switches are not kept, and counted. */
#define MAX_OCC (4u << 20)
/* The CPUs whose occupancy is kept: the affinity read is of CPUs 0-63. */
#define MAX_CPUS 64

/* A stretch of a CPU's time, from start until the next one's: who ran there (tid 0: idle). */
struct occ {
	uint64_t start;
	uint64_t cg;
	uint32_t tid;
	uint32_t comm : 31, traced : 1;
};

struct cpu_hist {
	struct occ *v;
	size_t n, cap;
};

struct task {
	int tid, pid, parent_tid;
	uint32_t comm;
	uint64_t start, end;
	bool exiting; /* its exit event came: a switch-out in TASK_DEAD will be its last */
	bool ended;   /* no more segments: exited, or cut by the end or the limit */
	bool exited;
	uint64_t exit_ts;
	uint32_t nsegs;
	/* the open segment */
	uint8_t state, wait;
	int32_t cpu;
	uint32_t caller, seg_comm;
	uint64_t seg_start;
	int32_t waker_tid;   /* blocked, once woken */
	uint32_t waker_comm; /* NONE: not woken */
	/* a wake-up that came while it ran (PENDING_NS) */
	bool pending;
	uint64_t wake_ts;
	int32_t pend_waker_tid;
	uint32_t pend_waker_comm;
	uint64_t pend_cpus;
	/* the open runnable segment's (struct seg) */
	uint64_t cpus;
	int32_t run_cpu;
	uint32_t row_caller;
	uint8_t row_wait, woken, throttled;
	/* running: since when (its switch-in; 0: not seen), and its run's stolen time */
	uint64_t in_ts, stolen;
	size_t last_seg; /* its latest closed segment's index + 1; 0: none */
};

struct tl_builder {
	uint64_t t0;
	size_t max_segs;
	struct task *tasks;
	size_t ntasks, tasks_cap, alive;
	struct hashmap by_tid; /* tid -> index of its latest task */
	struct comm *comms;
	size_t ncomms, comms_cap;
	struct hashmap comm_ids; /* comm index (the key) -> 0; the index -1 is the probe */
	const char *probe;
	uint64_t *callers; /* ip of each caller id from CALLER__FIXED on */
	size_t ncallers, callers_cap;
	struct hashmap caller_ids; /* ip -> caller id */
	struct seg *segs;
	size_t nsegs, segs_cap;
	struct tl_counts counts;
	bool truncated;
	struct cpu_hist cpus[MAX_CPUS];
	size_t nocc;
	uint64_t occ_cut; /* occupancy is known up to here (UINT64_MAX: to the end) */
};

/* ---- interning ---- */

static const char *comm_of(const struct tl_builder *b, long key)
{
	return key == -1 ? b->probe : b->comms[key].s;
}

static uint64_t comm_hash(long key, void *ctx)
{
	const char *s = comm_of(ctx, key);

	return hashmap_hash_bytes(s, strlen(s), 0);
}

static bool comm_equal(long a, long c, void *ctx)
{
	return !strcmp(comm_of(ctx, a), comm_of(ctx, c));
}

static uint32_t comm_add(struct tl_builder *b, const char *s)
{
	struct hashmap_entry *e;
	struct comm *c;

	b->probe = s;
	e = hashmap__find_entry(&b->comm_ids, -1);
	if (e)
		return (uint32_t)e->key;
	if (grow((void **)&b->comms, &b->comms_cap, b->ncomms + 1, sizeof(*b->comms)))
		return NONE;
	c = &b->comms[b->ncomms];
	snprintf(c->s, sizeof(c->s), "%s", s);
	if (hashmap__add(&b->comm_ids, (long)b->ncomms, 0))
		return NONE;
	return (uint32_t)b->ncomms++;
}

/* The id of a TASK_COMM_LEN comm from BPF (not always NUL-terminated). */
static uint32_t comm_id(struct tl_builder *b, const char raw[TASK_COMM_LEN])
{
	char s[TASK_COMM_LEN + 1];

	memcpy(s, raw, TASK_COMM_LEN);
	s[TASK_COMM_LEN] = 0;
	return comm_add(b, s);
}

/* Does the raw comm read as comm id? (the common case: no lookup) */
static bool comm_is(const struct tl_builder *b, uint32_t id, const char raw[TASK_COMM_LEN])
{
	return id != NONE && !strncmp(b->comms[id].s, raw, TASK_COMM_LEN);
}

static uint32_t caller_id(struct tl_builder *b, uint64_t ip)
{
	long id;

	if (hashmap__find(&b->caller_ids, (long)ip, &id))
		return (uint32_t)id;
	if (grow((void **)&b->callers, &b->callers_cap, b->ncallers + 1, sizeof(*b->callers)))
		return NONE;
	b->callers[b->ncallers] = ip;
	id = (long)(CALLER__FIXED + b->ncallers);
	if (hashmap__add(&b->caller_ids, (long)ip, id))
		return NONE;
	b->ncallers++;
	return (uint32_t)id;
}

/* ---- life cycle ---- */

struct tl_builder *tl_builder_new(uint64_t t0, size_t max_segs)
{
	struct tl_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->t0 = t0;
	b->max_segs = max_segs ? max_segs : SP_TL_MAX_SEGS;
	b->occ_cut = UINT64_MAX;
	hashmap__init(&b->by_tid, hashmap_long_hash, hashmap_long_equal, NULL);
	hashmap__init(&b->comm_ids, comm_hash, comm_equal, b);
	hashmap__init(&b->caller_ids, hashmap_long_hash, hashmap_long_equal, NULL);
	for (int i = 0; i < COMM__FIXED; i++) {
		if (comm_add(b, fixed_comms[i]) != (uint32_t)i) {
			tl_builder_free(b);
			return NULL;
		}
	}
	return b;
}

void tl_builder_free(struct tl_builder *b)
{
	if (!b)
		return;
	hashmap__clear(&b->by_tid);
	hashmap__clear(&b->comm_ids);
	hashmap__clear(&b->caller_ids);
	free(b->tasks);
	free(b->comms);
	free(b->callers);
	free(b->segs);
	for (int c = 0; c < MAX_CPUS; c++)
		free(b->cpus[c].v);
	free(b);
}

void tl_builder_counts(const struct tl_builder *b, struct tl_counts *ret)
{
	*ret = b->counts;
}

/* ---- segments ---- */

/* Closes t's open segment at ts (never before its start); nothing for an empty one. */
static int seg_close(struct tl_builder *b, struct task *t, uint64_t ts, bool unfinished)
{
	struct seg *s;

	if (ts <= t->seg_start)
		return 0;
	s = SP_ARRAY_ADD(b->segs, b->nsegs, b->segs_cap);
	if (!s)
		return -ENOMEM;
	s->start = t->seg_start;
	s->ns = ts - t->seg_start;
	s->task = (uint32_t)(t - b->tasks);
	s->comm = t->seg_comm;
	s->state = t->state;
	s->cpu = t->state == SP_TL_RUNNING ? t->cpu : -1;
	s->caller = t->state == SP_TL_RUNNING ? NONE : t->caller;
	s->wait = t->state == SP_TL_BLOCKED ? t->wait : 0;
	s->waker_tid = t->state == SP_TL_BLOCKED ? t->waker_tid : 0;
	s->waker_comm = t->state == SP_TL_BLOCKED ? t->waker_comm : NONE;
	s->unfinished = unfinished;
	t->last_seg = b->nsegs;
	s->run_cpu = t->state == SP_TL_RUNNABLE ? t->run_cpu : -1;
	s->cpus = t->cpus;
	s->row_caller = t->row_caller;
	s->row_wait = t->row_wait;
	s->woken = t->woken;
	s->throttled = t->state == SP_TL_RUNNABLE && t->throttled;
	s->stolen = 0;
	if (t->state == SP_TL_RUNNING) { /* a run split by a new comm: its last piece has it */
		s->stolen = t->stolen < s->ns ? t->stolen : s->ns;
		t->stolen = 0;
	}
	t->nsegs++;
	return 0;
}

static void seg_open(struct task *t, uint64_t ts, enum sp_tl_state state, int cpu,
		     uint32_t caller, uint32_t wait)
{
	t->seg_start = ts;
	t->state = (uint8_t)state;
	t->cpu = cpu;
	t->caller = caller;
	t->wait = (uint8_t)(wait < SP_WAIT__MAX ? wait : SP_WAIT_NONE);
	t->seg_comm = t->comm;
	t->waker_tid = 0;
	t->waker_comm = NONE;
	t->run_cpu = -1;
}

/*
 * t waits for a CPU from now on (the transition follows): its schedules row, its affinity
 * (0: unknown), and whether a wake-up began the wait.
 */
static void runq_begin(struct task *t, uint32_t caller, uint32_t wait, uint64_t cpus, bool woken)
{
	t->throttled = false;
	t->row_caller = caller;
	t->row_wait = (uint8_t)(wait < SP_WAIT__MAX ? wait : SP_WAIT_NONE);
	t->cpus = cpus;
	t->woken = woken;
}

/* t is in state from ts on (times never go back within a task). */
static int transition(struct tl_builder *b, struct task *t, uint64_t ts, enum sp_tl_state state,
		      int cpu, uint32_t caller, uint32_t wait)
{
	int err;

	if (ts < t->seg_start)
		ts = t->seg_start;
	err = seg_close(b, t, ts, false);
	if (!err)
		seg_open(t, ts, state, cpu, caller, wait);
	return err;
}

/* t has no more segments: its open one ends at ts. */
static int task_end(struct tl_builder *b, struct task *t, uint64_t ts, bool unfinished)
{
	if (ts < t->seg_start)
		ts = t->seg_start;
	t->end = ts;
	t->ended = true;
	b->alive--;
	return seg_close(b, t, ts, unfinished);
}

/* ---- tasks ---- */

static struct task *task_new(struct tl_builder *b, int tid, int pid, uint64_t start,
			     uint32_t comm)
{
	struct task *t = SP_ARRAY_ADD(b->tasks, b->ntasks, b->tasks_cap);

	if (!t)
		return NULL;
	t->tid = tid;
	t->pid = pid;
	t->comm = comm;
	t->start = start;
	b->alive++;
	if (hashmap__set(&b->by_tid, tid, (long)(t - b->tasks), NULL, NULL))
		return NULL;
	return t;
}

static struct task *task_find(const struct tl_builder *b, int tid)
{
	long i;

	return hashmap__find(&b->by_tid, tid, &i) ? &b->tasks[i] : NULL;
}

/* What a task first seen in an event was doing since the trace began (or its tid's reuse). */
struct hint {
	enum sp_tl_state state;
	int cpu;
	uint32_t caller;
};

/*
 * The live task tid, or a new one alive since the start in hint's state until ts. raw: its
 * comm as the event gives it, taken as its comm from now on (NULL: none). NULL on ENOMEM.
 */
static struct task *task_get(struct tl_builder *b, int tid, int pid, const char *raw,
			     uint64_t ts, struct hint h)
{
	struct task *t = task_find(b, tid);
	uint32_t comm;

	if (t && !t->ended) {
		if (raw && !comm_is(b, t->comm, raw)) {
			comm = comm_id(b, raw);
			if (comm == NONE)
				return NULL;
			t->comm = comm;
		}
		return t;
	}
	comm = raw ? comm_id(b, raw) : NONE;
	if (raw && comm == NONE)
		return NULL;
	/* a tid seen before has ended: a new task under it, known from now on */
	t = task_new(b, tid, pid, t ? (ts > t->end ? ts : t->end) : 0, comm);
	if (t) {
		seg_open(t, t->start, h.state, h.state == SP_TL_RUNNING ? h.cpu : -1, h.caller, 0);
		runq_begin(t, h.caller, 0, 0, false);
	}
	return t;
}

/* ---- events ---- */

static uint64_t rel(const struct tl_builder *b, uint64_t ts)
{
	return ts > b->t0 ? ts - b->t0 : 0;
}

static int on_switch_out(struct tl_builder *b, const struct sp_tl_switch *e, uint64_t ts)
{
	struct hint h = { SP_TL_RUNNING, e->h.cpu, NONE };
	struct task *t = task_get(b, (int)e->prev_tid, (int)e->prev_pid, e->prev_comm, ts, h);
	uint32_t caller;
	int err;

	if (!t)
		return -ENOMEM;
	/*
	 * Not running: its switch-in was not seen (a kernel may hide switches: docs/trace.md).
	 * It ran here for prev_ran, up to now: else that run, up to a whole slice, would be
	 * time off CPU, and the CPU time the model replays would be short.
	 */
	if (t->state != SP_TL_RUNNING && e->prev_ran) {
		err = transition(b, t, e->prev_ran < ts ? ts - e->prev_ran : 0, SP_TL_RUNNING,
				 e->h.cpu, NONE, 0);
		if (err)
			return err;
	}
	/* after its exit event a task may still sleep or be preempted (in exit_mm, ...) */
	if (e->prev_state & TL_TASK_DEAD) {
		t->exited = true;
		return task_end(b, t, ts, false);
	}
	/*
	 * The run's wall time less its runtime (prev_ran: since its pick, the switch-in) is
	 * what the hypervisor and interrupts took.
	 */
	if (t->state == SP_TL_RUNNING && t->in_ts && ts > t->in_ts)
		t->stolen = ts - t->in_ts > e->prev_ran ? ts - t->in_ts - e->prev_ran : 0;
	t->in_ts = 0;
	if (e->prev_state == 0) {
		t->pending = false;
		runq_begin(t, CALLER_PREEMPTED, 0, e->prev_cpus, false);
		t->throttled = !!(e->flags & SP_TL_PREV_THROTTLED);
		return transition(b, t, ts, SP_TL_RUNNABLE, -1, CALLER_PREEMPTED, 0);
	}
	caller = caller_id(b, e->caller);
	if (caller == NONE)
		return -ENOMEM;
	if (t->pending && (ts > t->wake_ts ? ts - t->wake_ts : t->wake_ts - ts) < PENDING_NS) {
		/* woken on another CPU as it went to sleep: asleep until the wake-up, if at all */
		t->pending = false;
		err = transition(b, t, ts, SP_TL_BLOCKED, -1, caller, e->wait);
		if (err)
			return err;
		t->waker_tid = t->pend_waker_tid;
		t->waker_comm = t->pend_waker_comm;
		runq_begin(t, caller, e->wait, t->pend_cpus, true);
		return transition(b, t, t->wake_ts, SP_TL_RUNNABLE, -1, CALLER_WOKEN, 0);
	}
	t->pending = false;
	return transition(b, t, ts, SP_TL_BLOCKED, -1, caller, e->wait);
}

static int on_switch_in(struct tl_builder *b, const struct sp_tl_switch *e, uint64_t ts)
{
	struct hint h = { SP_TL_RUNNABLE, -1, CALLER_UNKNOWN };
	struct task *t = task_get(b, (int)e->next_tid, (int)e->next_pid, e->next_comm, ts, h);

	if (!t)
		return -ENOMEM;
	t->pending = false;
	t->run_cpu = e->h.cpu;
	t->in_ts = ts;
	return transition(b, t, ts, SP_TL_RUNNING, e->h.cpu, NONE, 0);
}

static int on_wake(struct tl_builder *b, const struct sp_tl_wake *e, uint64_t ts)
{
	struct hint h = { SP_TL_BLOCKED, -1, CALLER_UNKNOWN };
	struct task *t = task_get(b, (int)e->tid, (int)e->pid, e->comm, ts, h);
	uint32_t waker_comm;
	int32_t waker_tid = 0;

	if (!t)
		return -ENOMEM;
	if (e->ctx == SP_TL_CTX_IRQ) {
		waker_comm = COMM_IRQ;
	} else if (e->ctx == SP_TL_CTX_SOFTIRQ) {
		waker_comm = COMM_SOFTIRQ;
	} else {
		waker_comm = comm_id(b, e->waker_comm);
		if (waker_comm == NONE)
			return -ENOMEM;
		waker_tid = e->waker_traced ? (int32_t)e->waker_tid : 0;
	}
	switch (t->state) {
	case SP_TL_BLOCKED:
		t->waker_tid = waker_tid;
		t->waker_comm = waker_comm;
		runq_begin(t, t->caller, t->wait, e->cpus, true);
		return transition(b, t, ts, SP_TL_RUNNABLE, -1, CALLER_WOKEN, 0);
	case SP_TL_RUNNING:
		/*
		 * It reached the buffer after the switch-in that it led to (it is older): the
		 * sleep that ended there was its, though its wait for a CPU is not told apart.
		 */
		if (ts <= t->seg_start && t->last_seg) {
			struct seg *s = &b->segs[t->last_seg - 1];

			if (s->state == SP_TL_BLOCKED && s->waker_comm == NONE &&
			    s->start + s->ns == t->seg_start) {
				s->waker_tid = waker_tid;
				s->waker_comm = waker_comm;
				return 0;
			}
		}
		t->pending = true;
		t->wake_ts = ts;
		t->pend_waker_tid = waker_tid;
		t->pend_waker_comm = waker_comm;
		t->pend_cpus = e->cpus;
		return 0;
	default: /* runnable already: a new task's first wake-up, or a second one */
		return 0;
	}
}

static int on_fork(struct tl_builder *b, const struct sp_tl_fork *e, uint64_t ts)
{
	struct hint h = { SP_TL_RUNNING, e->h.cpu, NONE };
	struct task *t = task_get(b, (int)e->parent_tid, (int)e->parent_pid, NULL, ts, h);
	uint32_t comm = comm_id(b, e->comm);
	int parent_tid = (int)e->parent_tid;
	int err;

	if (!t || comm == NONE)
		return -ENOMEM;
	if (t->comm == NONE)
		t->comm = t->seg_comm = comm; /* first seen here: the child has its comm */
	t = task_find(b, (int)e->tid);
	/* its tid still names a task that did not end: that one's end was lost, it ends now */
	if (t && !t->ended && (err = task_end(b, t, ts, false)))
		return err;
	if (t && t->end > ts) /* one tid, one task at a time */
		ts = t->end;
	t = task_new(b, (int)e->tid, (int)e->pid, ts, comm);
	if (!t)
		return -ENOMEM;
	t->parent_tid = parent_tid;
	seg_open(t, ts, SP_TL_RUNNABLE, -1, CALLER_NEW, 0);
	runq_begin(t, CALLER_NEW, 0, 0, false);
	return 0;
}

static int on_task_event(struct tl_builder *b, const struct sp_tl_task_ev *e, uint64_t ts)
{
	struct hint h = { SP_TL_RUNNING, e->h.cpu, NONE };
	struct task *t = task_get(b, (int)e->tid, (int)e->pid, NULL, ts, h);
	uint32_t comm;

	if (!t)
		return -ENOMEM;
	if (e->h.type == SP_TL_EV_EXIT) {
		if (t->comm == NONE && (t->comm = t->seg_comm = comm_id(b, e->comm)) == NONE)
			return -ENOMEM;
		t->exiting = true;
		t->exit_ts = ts;
		return 0;
	}
	/* exec, rename: a new comm from here on; the running segment is split there */
	comm = comm_id(b, e->comm);
	if (comm == NONE)
		return -ENOMEM;
	if (t->comm == NONE)
		t->seg_comm = comm;
	t->comm = comm;
	if (t->state == SP_TL_RUNNING && t->seg_comm != comm)
		return transition(b, t, ts, SP_TL_RUNNING, t->cpu, NONE, 0);
	return 0;
}

/* The segment limit: every live task is cut at ts, later events are dropped. */
static int truncate_at(struct tl_builder *b, uint64_t ts)
{
	int err = 0;

	b->truncated = true;
	b->counts.truncated_ns = ts ? ts : 1;
	for (size_t i = 0; i < b->ntasks && !err; i++)
		if (!b->tasks[i].ended)
			err = task_end(b, &b->tasks[i], ts, true);
	return err;
}

/* ---- the CPUs' occupants ---- */

static int occ_push(struct tl_builder *b, int cpu, uint64_t start, uint32_t tid,
		    const char raw[TASK_COMM_LEN], uint64_t cg, bool traced)
{
	struct cpu_hist *h = &b->cpus[cpu];
	uint32_t comm = tid ? comm_id(b, raw) : NONE;
	struct occ *o;

	if (tid && comm == NONE)
		return -ENOMEM;
	o = SP_ARRAY_ADD(h->v, h->n, h->cap);
	if (!o)
		return -ENOMEM;
	o->start = start;
	o->cg = cg;
	o->tid = tid;
	o->comm = comm & 0x7fffffffu;
	o->traced = traced;
	b->nocc++;
	return 0;
}

/*
 * A switch on its CPU: next runs there from ts on. A CPU's first switch also says who ran
 * there before it, since the trace began (prev).
 */
static int occ_switch(struct tl_builder *b, const struct sp_tl_switch *e, uint64_t ts)
{
	int cpu = e->h.cpu, err = 0;

	if (cpu >= MAX_CPUS || b->occ_cut != UINT64_MAX)
		return 0;
	if (b->nocc + 2 > MAX_OCC) {
		b->occ_cut = ts;
		return 0;
	}
	if (b->cpus[cpu].n && ts < b->cpus[cpu].v[b->cpus[cpu].n - 1].start)
		ts = b->cpus[cpu].v[b->cpus[cpu].n - 1].start; /* a CPU's own events are in order */
	if (!b->cpus[cpu].n)
		err = occ_push(b, cpu, 0, e->prev_tid, e->prev_comm, e->prev_cg,
			       e->flags & SP_TL_PREV_TRACED);
	if (!err)
		err = occ_push(b, cpu, ts, e->next_tid, e->next_comm, e->next_cg,
			       e->flags & SP_TL_NEXT_TRACED);
	return err;
}

static const size_t ev_size[] = {
	[SP_TL_EV_SWITCH] = sizeof(struct sp_tl_switch),
	[SP_TL_EV_WAKE] = sizeof(struct sp_tl_wake),
	[SP_TL_EV_WAKE_NEW] = sizeof(struct sp_tl_wake),
	[SP_TL_EV_FORK] = sizeof(struct sp_tl_fork),
	[SP_TL_EV_EXEC] = sizeof(struct sp_tl_task_ev),
	[SP_TL_EV_EXIT] = sizeof(struct sp_tl_task_ev),
	[SP_TL_EV_RENAME] = sizeof(struct sp_tl_task_ev),
};

int tl_builder_add(struct tl_builder *b, const void *data, size_t size)
{
	const struct sp_tl_hdr *h = data;
	const struct sp_tl_switch *sw = data;
	uint64_t ts;
	int err;

	b->counts.events++;
	if (size < sizeof(*h) || !h->type || h->type >= ARRAY_SIZE(ev_size) ||
	    size < ev_size[h->type]) {
		b->counts.bad++;
		return -EINVAL;
	}
	if (b->truncated) {
		b->counts.dropped++;
		return 0;
	}
	ts = rel(b, h->ts);
	/* room for this event's segments (4 at most) and for cutting every live task */
	if (b->nsegs + 4 + b->alive + 2 > b->max_segs) {
		b->counts.dropped++;
		return truncate_at(b, ts);
	}
	switch (h->type) {
	case SP_TL_EV_SWITCH:
		err = occ_switch(b, sw, ts);
		if (!err && (sw->flags & SP_TL_PREV_TRACED))
			err = on_switch_out(b, sw, ts);
		if (!err && (sw->flags & SP_TL_NEXT_TRACED))
			err = on_switch_in(b, sw, ts);
		return err;
	case SP_TL_EV_WAKE:
	case SP_TL_EV_WAKE_NEW:
		return on_wake(b, data, ts);
	case SP_TL_EV_FORK:
		return on_fork(b, data, ts);
	default:
		return on_task_event(b, data, ts);
	}
}

/* ---- the model ---- */

struct names {
	char **callers; /* by caller id */
	size_t n;
	const char **classes; /* by caller id * SP_WAIT__MAX + wait: the wait class, lazily */
};

static void names_free(struct names *nm)
{
	for (size_t i = 0; nm->callers && i < nm->n; i++)
		free(nm->callers[i]);
	free(nm->callers);
	free(nm->classes);
}

static int names_fill(struct tl_builder *b, struct names *nm, tl_name_fn name, void *arg)
{
	nm->n = CALLER__FIXED + b->ncallers;
	nm->callers = calloc(nm->n, sizeof(*nm->callers));
	nm->classes = calloc(nm->n * SP_WAIT__MAX, sizeof(*nm->classes));
	if (!nm->callers || !nm->classes)
		return -ENOMEM;
	for (size_t i = 0; i < nm->n; i++) {
		nm->callers[i] = i < CALLER__FIXED ? xstrdup(fixed_callers[i])
						   : name(arg, b->callers[i - CALLER__FIXED]);
		if (!nm->callers[i])
			return -ENOMEM;
	}
	return 0;
}

static const char *class_of(struct names *nm, uint32_t caller, uint8_t wait)
{
	const char **c = &nm->classes[(size_t)caller * SP_WAIT__MAX + wait];
	const char *name = nm->callers[caller];

	if (!*c)
		*c = sp_wait_class_name(sp_wait_class(name, sched_wait_name(wait, name)));
	return *c;
}

/* Dup of s into *ret; false on ENOMEM. */
static bool dup_to(char **ret, const char *s)
{
	*ret = xstrdup(s);
	return *ret != NULL;
}

static int seg_fill(struct tl_builder *b, struct names *nm, const struct seg *s,
		    struct sp_tl_seg *o)
{
	o->tid = b->tasks[s->task].tid;
	o->state = (enum sp_tl_state)s->state;
	o->start_ns = s->start;
	o->ns = s->ns;
	o->cpu = s->cpu;
	o->unfinished = s->unfinished;
	o->waker_tid = s->waker_tid;
	o->throttled = s->throttled;
	o->stolen_ns = s->stolen;
	if (s->comm != NONE && !dup_to(&o->comm, b->comms[s->comm].s))
		return -ENOMEM;
	if (s->state == SP_TL_RUNNING)
		return 0;
	if (!dup_to(&o->caller, nm->callers[s->caller]))
		return -ENOMEM;
	if (s->state != SP_TL_BLOCKED)
		return 0;
	if (!dup_to(&o->wait, class_of(nm, s->caller, s->wait)))
		return -ENOMEM;
	if (s->waker_comm != NONE && !dup_to(&o->waker_comm, b->comms[s->waker_comm].s))
		return -ENOMEM;
	return 0;
}

/* Tasks by start, then as first seen. */
static int cmp_task(const void *pa, const void *pb, void *arg)
{
	const struct tl_builder *b = arg;
	uint32_t a = *(const uint32_t *)pa, c = *(const uint32_t *)pb;
	uint64_t sa = b->tasks[a].start, sc = b->tasks[c].start;

	if (sa != sc)
		return sa < sc ? -1 : 1;
	return (a > c) - (a < c);
}

/* The tasks (in order) and their segments, each task's together, in time order. */
static int fill_model(struct tl_builder *b, struct names *nm, const uint32_t *order,
		      struct sp_timeline *tl)
{
	size_t *pos = calloc(b->ntasks ? b->ntasks : 1, sizeof(*pos)), at = 0;
	int err = 0;

	tl->tasks = calloc(b->ntasks ? b->ntasks : 1, sizeof(*tl->tasks));
	tl->segs = calloc(b->nsegs ? b->nsegs : 1, sizeof(*tl->segs));
	if (!pos || !tl->tasks || !tl->segs) {
		free(pos);
		return -ENOMEM;
	}
	tl->tasks_cap = b->ntasks ? b->ntasks : 1;
	tl->segs_cap = b->nsegs ? b->nsegs : 1;
	for (size_t k = 0; k < b->ntasks && !err; k++) {
		const struct task *t = &b->tasks[order[k]];
		struct sp_tl_task *o = &tl->tasks[tl->ntasks++];

		pos[order[k]] = at;
		at += t->nsegs;
		o->tid = t->tid;
		o->pid = t->pid;
		o->parent_tid = t->parent_tid;
		o->start_ns = t->start;
		o->end_ns = t->end;
		o->exited = t->exited;
		if (t->comm != NONE && !dup_to(&o->comm, b->comms[t->comm].s))
			err = -ENOMEM;
	}
	for (size_t i = 0; i < b->nsegs && !err; i++) {
		const struct seg *s = &b->segs[i];

		err = seg_fill(b, nm, s, &tl->segs[pos[s->task]++]);
		tl->nsegs++;
	}
	free(pos);
	return err;
}

/* ---- the waits for a CPU (struct tl_runq) ---- */

/* A taker of a row, by comm id, cgroup and side; seen: the last wait it was counted for. */
struct rq_taker {
	uint32_t comm;
	bool traced;
	uint64_t cg, count, ns;
	size_t seen;
};

struct rq_row {
	uint32_t caller;
	uint8_t wait;
	uint64_t waits, idle_miss_ns, missed_wakeups;
	struct rq_taker *t;
	size_t nt, tcap;
};

struct rq_build {
	struct rq_row *rows;
	size_t nrows, rows_cap;
	struct hashmap row_index; /* (caller << 8 | wait) -> index in rows */
	uint64_t (*idle)[2]; /* scratch: idle stretches of the other CPUs */
	size_t nidle, idle_cap;
};

/* The index of CPU h's stretch at ts (the last that starts at or before it); -1: none. */
static ssize_t occ_at(const struct cpu_hist *h, uint64_t ts)
{
	return (ssize_t)upper_bound(h->v, h->n, sizeof(*h->v), offsetof(struct occ, start), ts) - 1;
}

static uint64_t occ_end(const struct cpu_hist *h, size_t i)
{
	return i + 1 < h->n ? h->v[i + 1].start : UINT64_MAX;
}

static int cmp_span(const void *a, const void *c)
{
	const uint64_t *x = a, *y = c;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

/*
 * Of [a, z), the time during which some CPU of mask but cpu sat idle (known: a CPU without
 * a switch seen is taken as busy).
 */
static int idle_elsewhere(struct tl_builder *b, struct rq_build *rb, uint64_t mask, int cpu,
			  uint64_t a, uint64_t z, uint64_t *ret)
{
	uint64_t sum = 0, from = 0, to = 0;

	rb->nidle = 0;
	for (int d = 0; d < MAX_CPUS; d++) {
		const struct cpu_hist *h = &b->cpus[d];
		ssize_t i;

		if (d == cpu || !(mask >> d & 1) || !h->n)
			continue;
		i = occ_at(h, a);
		for (i = i < 0 ? 0 : i; i < (ssize_t)h->n && h->v[i].start < z; i++) {
			uint64_t s0 = h->v[i].start, s1 = occ_end(h, (size_t)i);

			if (h->v[i].tid || s1 <= a)
				continue;
			if (!SP_ARRAY_ADD(rb->idle, rb->nidle, rb->idle_cap))
				return -ENOMEM;
			rb->idle[rb->nidle - 1][0] = s0 > a ? s0 : a;
			rb->idle[rb->nidle - 1][1] = s1 < z ? s1 : z;
		}
	}
	qsort(rb->idle, rb->nidle, sizeof(*rb->idle), cmp_span);
	for (size_t k = 0; k < rb->nidle; k++) { /* the union's length */
		if (rb->idle[k][0] > to) {
			sum += to - from;
			from = rb->idle[k][0];
			to = rb->idle[k][1];
		} else if (rb->idle[k][1] > to) {
			to = rb->idle[k][1];
		}
	}
	*ret = sum + (to - from);
	return 0;
}

static struct rq_row *rq_row(struct rq_build *rb, uint32_t caller, uint8_t wait)
{
	long key = (long)((uint64_t)caller << 8 | wait), i;
	struct rq_row *r;

	if (hashmap__find(&rb->row_index, key, &i))
		return &rb->rows[i];
	r = SP_ARRAY_ADD(rb->rows, rb->nrows, rb->rows_cap);
	if (!r)
		return NULL;
	if (hashmap__add(&rb->row_index, key, (long)(rb->nrows - 1))) {
		rb->nrows--;
		return NULL;
	}
	memset(r, 0, sizeof(*r));
	r->caller = caller;
	r->wait = wait;
	return r;
}

/* o's time ns in wait number seg of row r. */
static int rq_take(struct rq_row *r, const struct occ *o, size_t seg, uint64_t ns)
{
	struct rq_taker *t = NULL;

	for (size_t k = 0; k < r->nt && !t; k++)
		if (r->t[k].comm == o->comm && r->t[k].cg == o->cg && r->t[k].traced == o->traced)
			t = &r->t[k];
	if (!t) {
		t = SP_ARRAY_ADD(r->t, r->nt, r->tcap);
		if (!t)
			return -ENOMEM;
		*t = (struct rq_taker){ .comm = o->comm, .traced = o->traced, .cg = o->cg,
					.seen = SIZE_MAX };
	}
	t->ns += ns;
	if (t->seen != seg) {
		t->seen = seg;
		t->count++;
	}
	return 0;
}

/*
 * Runnable segment k (s) on the CPU it then ran on: who ran there meanwhile, and the time
 * that CPU was busy while another its affinity allows sat idle. Into rq's totals and, for
 * a wait with a schedules row (not a new task's, not one begun before the trace), its row.
 */
static int runq_seg(struct tl_builder *b, struct rq_build *rb, struct tl_runq *rq, size_t k)
{
	const struct seg *s = &b->segs[k];
	const struct cpu_hist *h;
	uint64_t miss = 0, end = s->start + s->ns;
	bool row = s->row_caller != CALLER_NEW && s->row_caller != CALLER_UNKNOWN;
	bool missed_wakeup = false;
	struct rq_row *r = NULL;
	ssize_t i;
	int err = 0;

	if (s->run_cpu < 0 || s->run_cpu >= MAX_CPUS || !b->cpus[s->run_cpu].n ||
	    end > b->occ_cut) {
		rq->unknown_cpu++;
		return 0;
	}
	h = &b->cpus[s->run_cpu];
	if (row && !(r = rq_row(rb, s->row_caller, s->row_wait)))
		return -ENOMEM;
	i = occ_at(h, s->start);
	for (i = i < 0 ? 0 : i; !err && i < (ssize_t)h->n && h->v[i].start < end; i++) {
		const struct occ *o = &h->v[i];
		uint64_t a = o->start > s->start ? o->start : s->start, z = occ_end(h, (size_t)i);
		uint64_t idle = 0;

		z = z < end ? z : end;
		if (z <= a || !o->tid || o->tid == (uint32_t)b->tasks[s->task].tid)
			continue;
		if (r)
			err = rq_take(r, o, k, z - a);
		if (!err && (s->cpus & ~(1ULL << s->run_cpu)))
			err = idle_elsewhere(b, rb, s->cpus, s->run_cpu, a, z, &idle);
		miss += idle;
		/*
		 * a wake-up that found its CPU busy while another sat idle: an idle span from a
		 * on (rb->idle: clipped to [a, z), sorted by start)
		 */
		if (!err && idle && s->woken && a == s->start && rb->idle[0][0] == a)
			missed_wakeup = true;
	}
	rq->idle_miss_ns += miss;
	rq->missed_wakeups += missed_wakeup;
	if (r) {
		r->waits++;
		r->idle_miss_ns += miss;
		r->missed_wakeups += missed_wakeup;
	}
	return err;
}

/* rb's rows into rq, named (nm), with their takers as the model's. */
static int runq_rows(struct tl_builder *b, struct names *nm, struct rq_build *rb,
		     struct tl_runq *rq)
{
	for (size_t i = 0; i < rb->nrows; i++) {
		const struct rq_row *r = &rb->rows[i];
		const char *caller = nm->callers[r->caller];
		const char *wait = sched_wait_name(r->wait, caller);
		struct tl_runq_row *o = SP_ARRAY_ADD(rq->v, rq->n, rq->cap);

		if (!o)
			return -ENOMEM;
		memset(o, 0, sizeof(*o));
		if (!dup_to(&o->caller, caller) || (wait && !dup_to(&o->wait, wait)))
			return -ENOMEM;
		o->waits = r->waits;
		o->idle_miss_ns = r->idle_miss_ns;
		o->missed_wakeups = r->missed_wakeups;
		for (size_t k = 0; k < r->nt; k++) {
			const struct rq_taker *t = &r->t[k];
			struct sp_cpu_taker c = {
				.kind = "ran-during", .comm = b->comms[t->comm].s,
				.cgroup_id = t->cg, .count = t->count, .ns = t->ns,
				.where = t->traced ? "inside" : "outside" };

			if (sp_cpu_taker_add(&o->takers, &c))
				return -ENOMEM;
		}
	}
	return 0;
}

static int runq_build(struct tl_builder *b, struct names *nm, struct tl_runq *rq)
{
	struct rq_build rb = { 0 };
	int err = 0;

	hashmap__init(&rb.row_index, hashmap_long_hash, hashmap_long_equal, NULL);
	memset(rq, 0, sizeof(*rq));
	for (size_t k = 0; k < b->nsegs && !err; k++)
		if (b->segs[k].state == SP_TL_RUNNABLE)
			err = runq_seg(b, &rb, rq, k);
	if (!err)
		err = runq_rows(b, nm, &rb, rq);
	for (size_t i = 0; i < rb.nrows; i++)
		free(rb.rows[i].t);
	free(rb.rows);
	free(rb.idle);
	hashmap__clear(&rb.row_index);
	return err;
}

void tl_runq_free(struct tl_runq *rq)
{
	for (size_t i = 0; rq && i < rq->n; i++) {
		struct tl_runq_row *r = &rq->v[i];

		free(r->caller);
		free(r->wait);
		for (size_t k = 0; k < r->takers.n; k++) {
			free(r->takers.v[k].kind);
			free(r->takers.v[k].comm);
			free(r->takers.v[k].cgroup);
			free(r->takers.v[k].where);
		}
		free(r->takers.v);
	}
	if (rq) {
		free(rq->v);
		memset(rq, 0, sizeof(*rq));
	}
}

static bool same_str(const char *a, const char *c)
{
	return a == c || (a && c && !strcmp(a, c));
}

int tl_runq_join(const struct tl_runq *rq, struct sp_sched_view *v)
{
	int err = 0;

	for (size_t i = 0; !err && i < rq->n; i++) {
		const struct tl_runq_row *q = &rq->v[i];
		struct sp_sched_row *r = NULL;

		for (size_t j = 0; j < v->nrows && !r; j++)
			if (same_str(v->rows[j].caller, q->caller) &&
			    same_str(v->rows[j].wait, q->wait))
				r = &v->rows[j];
		if (!r)
			continue;
		r->idle_miss_ns += q->idle_miss_ns;
		r->missed_wakeups += q->missed_wakeups;
		for (size_t k = 0; !err && k < q->takers.n; k++)
			err = sp_cpu_taker_add(&r->takers, &q->takers.v[k]) ?:
			      sp_cpu_taker_add(&v->takers, &q->takers.v[k]);
	}
	if (v->budget.present) {
		v->budget.idle_miss_ns += rq->idle_miss_ns;
		v->budget.missed_wakeups += rq->missed_wakeups;
	}
	sp_sched_sort(v);
	return err;
}

void tl_cap_stolen(struct sp_timeline *tl, uint64_t cap)
{
	unsigned __int128 sum = 0;

	for (size_t i = 0; i < tl->nsegs; i++)
		sum += tl->segs[i].stolen_ns;
	if (sum <= cap)
		return;
	for (size_t i = 0; i < tl->nsegs; i++)
		tl->segs[i].stolen_ns =
			(uint64_t)((unsigned __int128)tl->segs[i].stolen_ns * cap / sum);
}

/* Where the job ends, and the task the critical path starts from (see tl_builder_finish). */
static void job_end(const struct tl_builder *b, uint64_t end_ns, int job_tid,
		    struct sp_timeline *tl)
{
	const struct task *t = job_tid ? task_find(b, job_tid) : NULL;
	const struct task *last = NULL, *alive = NULL;

	if (t) {
		tl->end_ns = t->end;
		tl->end_tid = t->tid;
		return;
	}
	for (size_t i = 0; i < b->ntasks; i++) {
		const struct task *c = &b->tasks[i];

		if (!c->exited) {
			/* still alive: the one running at the end, else the last to change */
			if (!alive || (c->state == SP_TL_RUNNING) > (alive->state == SP_TL_RUNNING) ||
			    ((c->state == SP_TL_RUNNING) == (alive->state == SP_TL_RUNNING) &&
			     c->seg_start > alive->seg_start))
				alive = c;
		} else if (!last || c->end > last->end) {
			last = c;
		}
	}
	if (alive) {
		tl->end_ns = end_ns;
		tl->end_tid = alive->tid;
	} else if (last) {
		tl->end_ns = last->end;
		tl->end_tid = last->tid;
	} else {
		tl->end_ns = end_ns;
		tl->end_tid = 0;
	}
}

int tl_builder_finish(struct tl_builder *b, uint64_t end_ns, int job_tid, tl_name_fn name,
		      void *arg, struct sp_timeline *tl, struct tl_runq *rq)
{
	struct names nm = {};
	uint32_t *order;
	int err = 0;

	if (b->truncated)
		end_ns = b->counts.truncated_ns;
	for (size_t i = 0; i < b->ntasks && !err; i++) {
		struct task *t = &b->tasks[i];

		if (t->ended)
			continue;
		/* its exit came, not its last switch (lost, or after the end): it ran until then */
		if (t->exiting) {
			t->exited = true;
			err = task_end(b, t, t->exit_ts, false);
		} else {
			err = task_end(b, t, end_ns, true);
		}
	}
	order = malloc((b->ntasks ? b->ntasks : 1) * sizeof(*order));
	if (err || !order) {
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < b->ntasks; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, b->ntasks, sizeof(*order), cmp_task, b);
	job_end(b, end_ns, job_tid, tl);
	err = names_fill(b, &nm, name, arg);
	if (!err)
		err = fill_model(b, &nm, order, tl);
	if (!err && rq)
		err = runq_build(b, &nm, rq);
	names_free(&nm);
	free(order);
	return err;
}
