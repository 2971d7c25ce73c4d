// SPDX-License-Identifier: BSD-2-Clause
/* The schedules view (see view.h): off-CPU schedules by kernel caller and wait class. */
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include "model/view.h"
#include "model/view_fields.h"
#include "base/util.h"
#include "model/waitclass.h"

/* ---- JSON ---- */

/* The wakers of a row: function null without --wakers. */
#define T struct sp_waker
static const struct sp_field waker_fields[] = {
	SP_KEY_STR(T, "comm", comm),
	SP_KEY_STR_NULL(T, "function", function),
	SP_U64(T, "count", count),
};
#undef T
static const struct sp_schema waker_schema = SP_SCHEMA_OF("waker", waker_fields);

/* Who took a row's CPU: cgroup null when unknown. */
#define T struct sp_cpu_taker
static const struct sp_field taker_fields[] = {
	SP_KEY_STR(T, "kind", kind),
	SP_KEY_STR(T, "comm", comm),
	SP_KEY_STR_NULL(T, "cgroup", cgroup),
	SP_KEY_STR(T, "where", where),
	SP_NAMED(SP_U64, T, count, ns),
};
#undef T
static const struct sp_schema taker_schema = SP_SCHEMA_OF("cpu_taker", taker_fields);

/* The OFF-CPU split at the wake-up: all or none, as has_runq says. */
#define RUNQ(k, M, kind)                                                                   \
	{ .key = k, .type = SP_T_U64, .flags = SP_GROUP | (kind),                                \
	  .off = offsetof(struct sp_sched_row, M), .group_off = offsetof(struct sp_sched_row, has_runq) }

#define T struct sp_sched_row
static const struct sp_field row_fields[] = {
	SP_KEY_STR(T, "caller", caller),
	SP_KEY_STR_NULL(T, "wait", wait),
	SP_ROW_TIME_FIELDS(T, offcpu_ns),
	RUNQ("blocked_ns", blocked_ns, 0),
	RUNQ("runq_ns", runq_ns, 0),
	RUNQ("runq_p50_ns", runq_p50_ns, SP_SINCE),
	RUNQ("runq_p99_ns", runq_p99_ns, SP_SINCE),
	RUNQ("runq_max_ns", runq_max_ns, SP_MAX),
	RUNQ("unfinished", unfinished, SP_STATE),
	/* written only when not 0: a run without a CPU quota reads as before */
	SP_U64_AS(T, "throttled_ns", throttled_ns, SP_SPARSE),
	/* the same: a run of an older version reads as one without migrations */
	SP_U64_AS(T, "migrated", migrated, SP_SPARSE),
	SP_U64_AS(T, "migrated_runq_ns", migrated_runq_ns, SP_SPARSE),
	/* --timeline only */
	SP_NAMED(SP_U64_SPARSE, T, idle_miss_ns, missed_wakeups),
	/*
	 * by count desc; absent (none) in older files. Read apart from the row: a waker on its
	 * way from a CPU's slots to the map when a read is taken is in the next one
	 * (sched_slots_settle()), possibly in an interval its row has nothing in.
	 */
	SP_ARRAY_AS(T, "wakers", wakers.v, wakers.n, wakers.cap, waker_schema,
		    SP_NONEMPTY | SP_OPTIONAL | SP_INLINE | SP_MOVES_ALONE),
	/* by ns desc; absent (none) in older files. Read apart from the row, as the wakers. */
	SP_ARRAY_AS(T, "cpu_takers", takers.v, takers.n, takers.cap, taker_schema,
		    SP_NONEMPTY | SP_OPTIONAL | SP_INLINE | SP_MOVES_ALONE),
	SP_COMMS(T, "comms", comms, sp_comm_offcpu_max),
	SP_STACKS(T, stacks, sp_stack_offcpu),
};
#undef T
#undef RUNQ
static const struct sp_schema row_schema = SP_SCHEMA_OF("sched_row", row_fields);

/* The budget's blocked time by wait class: the keys are sp_wait_class_name()'s. */
#define BLOCKED(E, name, member) SP_U64(struct sp_budget_blocked, name, member),
static const struct sp_field blocked_fields[] = { SP_WAIT_CLASSES(BLOCKED) };
#undef BLOCKED
static const struct sp_schema blocked_schema = SP_SCHEMA_OF("budget_blocked", blocked_fields);

#define T struct sp_throttler
static const struct sp_field throttler_fields[] = {
	SP_KEY_STR(T, "path", path),
	SP_UINT(T, "quota_us", quota_us, 1, UINT_MAX),
	SP_UINT(T, "period_us", period_us, 1, UINT_MAX),
	SP_U64(T, "throttled_ns", throttled_ns),
	SP_U64(T, "cgroup_throttled_ns", cg_throttled_ns),
	SP_U64(T, "nr_throttled", nr_throttled),
};
#undef T
static const struct sp_schema throttler_schema = SP_SCHEMA_OF("throttler", throttler_fields);

#define T struct sp_cpu_steal
static const struct sp_field cpu_steal_fields[] = {
	{ .key = "cpu", .type = SP_T_INT, .flags = SP_KEY, .off = offsetof(T, cpu), .min = 0,
	  .max = INT_MAX },
	SP_U64(T, "steal_ns", steal_ns),
};
#undef T
static const struct sp_schema cpu_steal_schema = SP_SCHEMA_OF("cpu_steal", cpu_steal_fields);

#define T struct sp_steal
static const struct sp_field steal_fields[] = {
	SP_BOOL(T, "split", split),
	SP_NAMED(SP_U64, T, stolen_ns, steal_ns),
	SP_ARRAY_AS(T, "cpus", cpus, ncpus, cpus_cap, cpu_steal_schema, SP_INLINE),
};
#undef T
static const struct sp_schema steal_schema = SP_SCHEMA_OF("steal", steal_fields);

#define T struct sp_budget
static const struct sp_field budget_fields[] = {
	SP_U64_AS(T, "tasks", tasks, SP_SINCE), /* distinct tasks */
	SP_NAMED(SP_U64, T, oncpu_ns, runq_ns, blocked_ns),
	{ .key = "blocked", .type = SP_T_OBJECT, .off = offsetof(T, blocked), .sub = &blocked_schema },
	/* CPU quotas: only when some of runq_ns was throttled */
	SP_U64_AS(T, "throttled_ns", throttled_ns, SP_SPARSE),
	SP_ARRAY_AS(T, "throttlers", throttlers, nthrottlers, throttlers_cap, throttler_schema,
		    SP_NONEMPTY | SP_OPTIONAL),
	/* absent in older files and in runs that did not read /proc/stat */
	SP_OBJECT_IF(T, "steal", steal, steal_schema),
	/* --timeline only: a wait for a CPU while an allowed CPU sat idle */
	SP_NAMED(SP_U64_SPARSE, T, idle_miss_ns, missed_wakeups),
};
#undef T
static const struct sp_schema budget_schema = SP_SCHEMA_OF("budget", budget_fields);

static const struct sp_field cache_fields[] = { SP_CALLER_CACHE_FIELDS };
static const struct sp_schema cache_schema = SP_SCHEMA_OF("caller_cache", cache_fields);
static const struct sp_field stack_cache_fields[] = {
	SP_CALLER_CACHE_FIELDS,
	/* waker_cache: the wake-ups whose waker's stack was looked for */
	SP_U64_AS(struct sp_caller_cache, "of", attributed, SP_SPARSE),
	/* stack_cache, waker_cache: of fast, those the memo of stacks built gave */
	SP_U64_AS(struct sp_caller_cache, "memo", memo, SP_SPARSE),
};
static const struct sp_schema stack_cache_schema =
	SP_SCHEMA_OF("stack_cache", stack_cache_fields);
static const struct sp_schema waker_cache_schema =
	SP_SCHEMA_OF("waker_cache", stack_cache_fields);
static const struct sp_field ustack_cache_fields[] = {
	SP_CALLER_CACHE_FIELDS,
	SP_U64_AS(struct sp_caller_cache, "of", attributed, SP_SPARSE),
	SP_U64_AS(struct sp_caller_cache, "memo", memo, SP_SPARSE),
	/* of the walks ("of"), those by the rules of the process the task was forked from */
	SP_U64_AS(struct sp_caller_cache, "forked", forked, SP_SPARSE),
};
static const struct sp_schema ustack_cache_schema =
	SP_SCHEMA_OF("ustack_cache", ustack_cache_fields);

#define T struct sp_sched_view
static const struct sp_field view_fields[] = {
	SP_NAMED(SP_U64, T, total, voluntary, preempted, idle),
	SP_VIEW_STACK_LOSS_FIELDS(T),
	SP_U64(T, "lost_rows", lost_rows),
	/* --wakers: written only when true, absent (false) in older files */
	{ .key = "wakers", .type = SP_T_BOOL, .flags = SP_GROUP | SP_OPTIONAL, .off = offsetof(T, wakers),
	  .group_off = offsetof(T, wakers) },
	/* only when the caller fast path was on */
	SP_OBJECT_IF(T, "caller_cache", cache, cache_schema),
	/* only when the whole-stack cache was on: full stacks kept (stack_cache), --wakers */
	SP_OBJECT_IF(T, "stack_cache", stack_cache, stack_cache_schema),
	SP_OBJECT_IF(T, "waker_cache", waker_cache, waker_cache_schema),
	/* --stacks by learned rules: the user-stack walks, those the memo answered */
	SP_OBJECT_IF(T, "ustack_cache", ustack_cache, ustack_cache_schema),
	/* only when measured */
	SP_OBJECT_IF(T, "budget", budget, budget_schema),
	/* the rows' takers summed, by ns desc; absent (none) in older files */
	SP_ARRAY_AS(T, "cpu_takers", takers.v, takers.n, takers.cap, taker_schema,
		    SP_NONEMPTY | SP_OPTIONAL),
	SP_ARRAY(T, "callers", rows, nrows, cap, row_schema),
};
#undef T
static const struct sp_schema view_schema = SP_SCHEMA_OF("schedules", view_fields);

/* ---- table ---- */

/* The run has the OFF-CPU split (an older run has not): its columns. */
static bool has_runq(const struct sp_sched_view *v)
{
	for (size_t i = 0; i < v->nrows; i++)
		if (v->rows[i].has_runq)
			return true;
	return false;
}

static void print_row(uint64_t count, uint64_t total, uint64_t offcpu, uint64_t max,
		      const char *wait, const char *caller, FILE *f)
{
	char d1[32], d2[32];

	fprintf(f, "%10" PRIu64 " %6.1f%% %10s %10s  %-13s %s\n", count, sp_pct(count, total),
		fmt_duration(offcpu, d1, sizeof(d1)), fmt_duration(max, d2, sizeof(d2)),
		wait ? wait : "-", caller);
}

/* Has a row of the run throttled time (a CPU quota)? Then the table has its column. */
static bool has_throttled(const struct sp_sched_view *v)
{
	for (size_t i = 0; i < v->nrows; i++)
		if (v->rows[i].throttled_ns)
			return true;
	return false;
}

/*
 * A row with the split: BLOCKED, RUNQ and the run queue's p99 and max after MAX; with
 * throttled, RUNQ's throttled part after RUNQ; with idle (--timeline), its part while an
 * allowed CPU sat idle after that.
 */
static void print_runq_row(const struct sp_sched_row *r, uint64_t total, bool throttled,
			   bool idle, FILE *f)
{
	char d[8][32];

	fprintf(f, "%10" PRIu64 " %6.1f%% %10s %10s ", r->count, sp_pct(r->count, total),
		fmt_duration(r->offcpu_ns, d[0], sizeof(d[0])),
		fmt_duration(r->max_ns, d[1], sizeof(d[1])));
	if (!r->has_runq)
		fprintf(f, "%10s %10s %s%s%10s %10s", "-", "-", throttled ? "         - " : "",
			idle ? "         - " : "", "-", "-");
	else
	{
		fprintf(f, "%10s %10s ", fmt_duration(r->blocked_ns, d[2], sizeof(d[2])),
			fmt_duration(r->runq_ns, d[3], sizeof(d[3])));
		if (throttled)
			fprintf(f, "%10s ", fmt_duration(r->throttled_ns, d[6], sizeof(d[6])));
		if (idle)
			fprintf(f, "%10s ", fmt_duration(r->idle_miss_ns, d[7], sizeof(d[7])));
		/* waits with a longest but no p99: a warehouse's rows keep no histogram */
		fprintf(f, "%10s %10s",
			!r->runq_p99_ns && r->runq_max_ns ? "-"
							  : fmt_duration(r->runq_p99_ns, d[4], sizeof(d[4])),
			fmt_duration(r->runq_max_ns, d[5], sizeof(d[5])));
	}
	fprintf(f, "  %-13s %s\n", r->wait ? r->wait : "-", r->caller);
}

static void print_columns(bool runq, bool throttled, bool idle, FILE *f)
{
	fprintf(f, "%10s %7s %10s %10s", "COUNT", "SHARE", "OFF-CPU", "MAX");
	if (runq) {
		fprintf(f, " %10s %10s", "BLOCKED", "RUNQ");
		if (throttled)
			fprintf(f, " %10s", "THROTTLED");
		if (idle)
			fprintf(f, " %10s", "IDLE-MISS");
		fprintf(f, " %10s %10s", "RUNQ-P99", "RUNQ-MAX");
	}
	fprintf(f, "  %-13s %s\n", "WAIT", "CALLER");
}

#define WAKERS_SHOWN 3
#define TAKERS_SHOWN 3

/*
 * Under a row whose sleeps ended on another CPU than they began on: how many, and their mean
 * wait for a CPU against the others' ("ended on another CPU: 120 of 500 (24.0%), waiting
 * for a CPU 1.2ms each against 300us on the same one"). The others' wait includes that of
 * the sleeps in progress at the end.
 */
static void print_row_migrated(const struct sp_sched_row *r, const char *whose, FILE *f)
{
	uint64_t ended = r->count - (r->unfinished < r->count ? r->unfinished : r->count);
	uint64_t same = ended > r->migrated ? ended - r->migrated : 0;
	uint64_t same_ns = r->runq_ns > r->migrated_runq_ns ? r->runq_ns - r->migrated_runq_ns : 0;
	char d1[32], d2[32];

	if (!r->migrated || !r->has_runq)
		return;
	fprintf(f, "%8sended on another CPU%s: %" PRIu64 " of %" PRIu64 " (%.1f%%), waiting for a "
		   "CPU %s each",
		"", whose, r->migrated, ended, sp_pct(r->migrated, ended),
		fmt_duration(r->migrated_runq_ns / r->migrated, d1, sizeof(d1)));
	if (same)
		fprintf(f, " against %s on the same one", fmt_duration(same_ns / same, d2, sizeof(d2)));
	fputc('\n', f);
}

/*
 * Under a row with waits for a CPU, who took the CPU, each kind on its line, by time: "preempted
 * by ww_hog (inside) 115 times, 373.6ms of waits after" and "ran before the switch-ins: ww_hog
 * (inside) 117 times, 320.2ms of the waits"; with --timeline, "ran during the waits": every
 * task that did, exactly. The root cgroup goes unsaid.
 */
static void print_row_takers(const struct sp_sched_row *r, const char *whose, FILE *f)
{
	static const struct {
		const char *kind, *title, *what;
	} kinds[] = {
		{ "preempted-by", "preempted by", "of waits after" },
		{ "ran-before", "ran before the switch-ins", "of the waits" },
		{ "ran-during", "ran during the waits", "of the waits" },
	};
	char d[32];

	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
		size_t shown = 0, more = 0;

		for (size_t i = 0; i < r->takers.n; i++) {
			const struct sp_cpu_taker *t = &r->takers.v[i];
			bool cg = t->cgroup && strcmp(t->cgroup, "/");

			if (strcmp(t->kind, kinds[k].kind))
				continue;
			if (shown == TAKERS_SHOWN) {
				more++;
				continue;
			}
			fprintf(f, shown ? "; " : "%8s%s%s: ", "", kinds[k].title, whose);
			fprintf(f, "%s (%s%s%s) %" PRIu64 " %s, %s %s", t->comm, t->where,
				cg ? " " : "", cg ? t->cgroup : "", t->count,
				t->count == 1 ? "time" : "times", fmt_duration(t->ns, d, sizeof(d)),
				kinds[k].what);
			shown++;
		}
		if (more)
			fprintf(f, "; %zu more", more);
		if (shown)
			fputc('\n', f);
	}
}

/*
 * Under a row: its sleeps still in progress at the end, and its top wakers ("woken by cc1
 * (anon_pipe_write) 98.0%, make 2.0%"), each a share of the row's wake-ups. all_comms: under
 * one comm's line (--by comm), where they are still the whole row's.
 */
static void print_row_notes(const struct sp_sched_row *r, bool all_comms, FILE *f)
{
	const char *whose = all_comms && r->comms.n > 1 ? " (all comms)" : "";
	const struct sp_waker_list *w = &r->wakers;
	uint64_t all = 0;

	if (r->unfinished)
		fprintf(f, "%8s%" PRIu64 " %s%s in progress at the end (charged up to it)\n", "",
			r->unfinished, r->unfinished == 1 ? "sleep" : "sleeps", whose);
	print_row_migrated(r, whose, f);
	print_row_takers(r, whose, f);
	if (!w->n)
		return;
	for (size_t i = 0; i < w->n; i++)
		all = sp_sat_add(all, w->v[i].count);
	fprintf(f, "%8swoken%s by ", "", whose);
	for (size_t i = 0; i < w->n && i < WAKERS_SHOWN; i++) {
		fprintf(f, "%s%s", i ? ", " : "", w->v[i].comm);
		if (w->v[i].function)
			fprintf(f, " (%s)", w->v[i].function);
		fprintf(f, " %.1f%%", sp_pct(w->v[i].count, all));
	}
	if (w->n > WAKERS_SHOWN)
		fprintf(f, ", %zu more", w->n - WAKERS_SHOWN);
	fputc('\n', f);
}

/*
 * Under the budget: the tasks that ran just before the job's tasks' switch-ins, by their
 * time taken from its waits ("CPU taken by: spin (outside) 1.100s, cc1 (inside) 200.0ms");
 * with --timeline, those that ran during the waits (exact).
 */
static void print_budget_takers(const struct sp_sched_view *v, FILE *f)
{
	const char *kind = "ran-before";
	size_t shown = 0;
	char d[32];

	for (size_t i = 0; i < v->takers.n; i++)
		if (!strcmp(v->takers.v[i].kind, "ran-during"))
			kind = "ran-during";
	for (size_t i = 0; i < v->takers.n && shown < TAKERS_SHOWN; i++) {
		const struct sp_cpu_taker *t = &v->takers.v[i];
		bool cg = t->cgroup && strcmp(t->cgroup, "/");

		if (strcmp(t->kind, kind))
			continue;
		fprintf(f, shown ? ", %s (%s%s%s) %s" : "  CPU taken from the waits by: %s (%s%s%s) %s",
			t->comm, t->where, cg ? " " : "", cg ? t->cgroup : "",
			fmt_duration(t->ns, d, sizeof(d)));
		shown++;
	}
	if (shown)
		fputc('\n', f);
}

/*
 * Under the budget: the cgroups whose CPU quota throttled the tasks ("throttled by
 * /sys/fs/cgroup/cpu/job (quota 20.0ms per 100.0ms): 1.640s of the tasks'; cpu.stat 1.641s
 * in 21 periods"), and the time the hypervisor took.
 */
static void print_budget_quota(const struct sp_budget *b, FILE *f)
{
	const struct sp_steal *s = &b->steal;
	char d1[32], d2[32], d3[32], d4[32];

	for (size_t i = 0; i < b->nthrottlers; i++) {
		const struct sp_throttler *t = &b->throttlers[i];

		fprintf(f, "  throttled by %s (quota %s per %s): %s of the tasks'; its cpu.stat %s "
			   "in %" PRIu64 " %s\n",
			t->path, fmt_duration((uint64_t)t->quota_us * 1000, d1, sizeof(d1)),
			fmt_duration((uint64_t)t->period_us * 1000, d2, sizeof(d2)),
			fmt_duration(t->throttled_ns, d3, sizeof(d3)),
			fmt_duration(t->cg_throttled_ns, d4, sizeof(d4)), t->nr_throttled,
			t->nr_throttled == 1 ? "period" : "periods");
	}
	if (!s->present)
		return;
	if (s->split)
		fprintf(f, "  on CPU: running %s, stolen %s; ",
			fmt_duration(b->oncpu_ns - (s->stolen_ns < b->oncpu_ns ? s->stolen_ns
									       : b->oncpu_ns),
				     d1, sizeof(d1)),
			fmt_duration(s->stolen_ns, d2, sizeof(d2)));
	else
		fprintf(f, "  on CPU: stolen time not told apart (the kernel's task clock counts "
			   "steal); ");
	fprintf(f, "steal over the run %s", fmt_duration(s->steal_ns, d3, sizeof(d3)));
	for (size_t i = 0; i < s->ncpus; i++)
		fprintf(f, "%scpu%d %s", i ? ", " : " (", s->cpus[i].cpu,
			fmt_duration(s->cpus[i].steal_ns, d4, sizeof(d4)));
	fprintf(f, "%s\n", s->ncpus ? ")" : "");
}

/*
 * Under the budget, with --timeline: "while a CPU sat idle: 3.2ms of the wait for a CPU
 * (0.8%), 4 wake-ups onto a busy CPU; [preempted] 3.0ms, do_wait 0.2ms", the rows with the
 * most first (at most 3).
 */
static void print_budget_idle(const struct sp_sched_view *v, FILE *f)
{
	const struct sp_budget *b = &v->budget;
	uint64_t last = UINT64_MAX;
	size_t last_i = SIZE_MAX;
	char d[32];

	if (!b->idle_miss_ns && !b->missed_wakeups)
		return;
	fprintf(f, "  while an allowed CPU sat idle: %s of the wait for a CPU (%.1f%%), %" PRIu64
		   " wake-up%s onto a busy CPU", fmt_duration(b->idle_miss_ns, d, sizeof(d)),
		sp_pct(b->idle_miss_ns, b->runq_ns), b->missed_wakeups,
		b->missed_wakeups == 1 ? "" : "s");
	/* by miss, largest first, ties in row order: each the first after (last, last_i) */
	for (int n = 0; n < 3; n++) {
		size_t bi = SIZE_MAX;

		for (size_t i = 0; i < v->nrows; i++) {
			uint64_t m = v->rows[i].idle_miss_ns;

			if (!m || m > last || (m == last && i <= last_i))
				continue;
			if (bi == SIZE_MAX || m > v->rows[bi].idle_miss_ns)
				bi = i;
		}
		if (bi == SIZE_MAX)
			break;
		fprintf(f, "%s%s %s", n ? ", " : "; ", v->rows[bi].caller,
			fmt_duration(v->rows[bi].idle_miss_ns, d, sizeof(d)));
		last = v->rows[bi].idle_miss_ns;
		last_i = bi;
	}
	fputc('\n', f);
}

/*
 * The job's time budget: "budget: 12 tasks, 40.800s task time: on CPU 5.800s (14.2%),
 * waiting for a CPU 400.0ms (1.0%), blocked 34.600s (84.8%)", then the blocked time by wait
 * class, largest first.
 */
static void print_budget(const struct sp_sched_view *v, FILE *f)
{
	const struct sp_budget *b = &v->budget;
	struct sp_budget_blocked cls = b->blocked;
	uint64_t all = sp_sat_add(sp_sat_add(b->oncpu_ns, b->runq_ns), b->blocked_ns);
	bool shown[SP_WC__MAX] = { false };
	char d1[32], d2[32], d3[32], d4[32];

	uint64_t thr = b->throttled_ns < b->runq_ns ? b->throttled_ns : b->runq_ns;

	fprintf(f, "budget: %" PRIu64 " %s, %s task time: on CPU %s (%.1f%%), ", b->tasks,
		b->tasks == 1 ? "task" : "tasks", fmt_duration(all, d1, sizeof(d1)),
		fmt_duration(b->oncpu_ns, d2, sizeof(d2)), sp_pct(b->oncpu_ns, all));
	if (thr)
		fprintf(f, "throttled %s (%.1f%%), ", fmt_duration(thr, d3, sizeof(d3)),
			sp_pct(thr, all));
	fprintf(f, "waiting for a CPU %s (%.1f%%), blocked %s (%.1f%%)\n",
		fmt_duration(b->runq_ns - thr, d3, sizeof(d3)), sp_pct(b->runq_ns - thr, all),
		fmt_duration(b->blocked_ns, d4, sizeof(d4)), sp_pct(b->blocked_ns, all));
	print_budget_quota(b, f);
	print_budget_idle(v, f);
	print_budget_takers(v, f);
	for (int n = 0;; n++) {
		int best = -1;
		uint64_t best_ns = 0;

		for (int c = 0; c < SP_WC__MAX; c++) {
			uint64_t ns = *sp_budget_slot(&cls, (enum sp_wait_class)c);

			if (!shown[c] && ns && (best < 0 || ns > best_ns)) {
				best = c;
				best_ns = ns;
			}
		}
		if (best < 0) {
			if (n)
				fputc('\n', f);
			break;
		}
		shown[best] = true;
		fprintf(f, "%s%s %s (%.1f%%)", n ? ", " : "  blocked in: ",
			sp_wait_class_name((enum sp_wait_class)best),
			fmt_duration(best_ns, d1, sizeof(d1)), sp_pct(best_ns, all));
	}
}

/* --by comm: every comm with its callers. */
static int print_by_comm(const struct sp_sched_view *v, const struct render_opts *o, FILE *f)
{
	struct sp_comm_list all = { 0 };
	int err = 0;

	for (size_t i = 0; !err && i < v->nrows; i++)
		for (size_t j = 0; !err && j < v->rows[i].comms.n; j++) {
			const struct sp_comm_stat *c = &v->rows[i].comms.v[j];

			err = sp_comm_list_add(&all, c->comm, c->count, c->time_ns, c->max_ns);
		}
	sp_comm_list_sort(&all);
	for (size_t k = 0; !err && k < sp_rows_shown(all.n, o); k++) {
		const struct sp_comm_stat *c = &all.v[k];
		unsigned int shown = 0;

		fprintf(f, "\n%s: %" PRIu64 " schedules (%.1f%%)\n", c->comm, c->count,
			sp_pct(c->count, v->total));
		/* the split and the wakers are the caller's, not per comm: no such columns */
		print_columns(false, false, false, f);
		/* rows are ranked by their total count, which is close enough within a comm */
		for (size_t i = 0; i < v->nrows && (!o->nrows || shown < o->nrows); i++) {
			const struct sp_sched_row *r = &v->rows[i];

			for (size_t j = 0; j < r->comms.n; j++) {
				const struct sp_comm_stat *rc = &r->comms.v[j];

				if (strcmp(rc->comm, c->comm))
					continue;
				print_row(rc->count, v->total, rc->time_ns, rc->max_ns, r->wait,
					  r->caller, f);
				print_row_notes(r, true, f);
				shown++;
			}
		}
	}
	sp_comm_list_free(&all);
	return err;
}

static int print_table(const struct sp_run *run, const struct render_opts *o, FILE *f)
{
	const struct sp_sched_view *v = &run->sched;
	bool runq = has_runq(v), throttled = has_throttled(v), idle = v->budget.idle_miss_ns > 0;
	size_t n = v->nrows;
	int err = 0;

	fprintf(f, "\nschedules: %" PRIu64 " total, %" PRIu64 " voluntary (%.1f%%), %" PRIu64
		   " preempted (%.1f%%)",
		v->total, v->voluntary, sp_pct(v->voluntary, v->total), v->preempted,
		sp_pct(v->preempted, v->total));
	if (v->idle)
		fprintf(f, ", %" PRIu64 " idle", v->idle);
	fputc('\n', f);
	sp_print_caller_cache(&v->cache, v->voluntary, "voluntary", f);
	sp_print_cache("kernel stacks", &v->stack_cache, v->voluntary, "voluntary", f);
	sp_print_cache("wakers", &v->waker_cache, v->waker_cache.attributed, "wake-ups", f);
	sp_print_cache("user stacks", &v->ustack_cache, v->ustack_cache.attributed, "walks", f);
	if (v->budget.present)
		print_budget(v, f);
	sp_print_stack_notes("schedules", v->missing_stacks, v->user_missing, v->user_truncated,
			     &v->user_cuts, f);
	sp_print_lost_rows(v->lost_rows, "schedules", "row", "--max-callers", f);
	if (o->group == SP_GROUP_COMM)
		return print_by_comm(v, o, f);
	print_columns(runq, throttled, idle, f);
	n = sp_rows_shown(v->nrows, o);
	for (size_t i = 0; !err && i < n; i++) {
		const struct sp_sched_row *r = &v->rows[i];

		if (runq)
			print_runq_row(r, v->total, throttled, idle, f);
		else
			print_row(r->count, v->total, r->offcpu_ns, r->max_ns, r->wait, r->caller, f);
		print_row_notes(r, false, f);
		if (o->stacks)
			err = sp_print_stack_list(&r->stacks, r->count, "off-CPU", o, f);
	}
	if (!err)
		sp_print_more_rows(n, v->nrows, f);
	return err;
}

/* ---- stack walk and diff ---- */

#define R struct sp_sched_row
static const struct sp_diff_table diff[] = {
	{ "schedules", "schedules by caller", "CALLER (WAIT)", "off-CPU time", NULL, "callers",
	  offsetof(R, caller), offsetof(R, wait), SP_NONE, offsetof(R, count),
	  offsetof(R, offcpu_ns), offsetof(struct sp_sched_view, total), false, NULL },
	{ "cpu_takers", "who took the CPU", "TASK (KIND, WHERE)", "time", "where",
	  "cpu_takers", offsetof(struct sp_cpu_taker, comm), offsetof(struct sp_cpu_taker, kind),
	  offsetof(struct sp_cpu_taker, where), offsetof(struct sp_cpu_taker, ns),
	  offsetof(struct sp_cpu_taker, ns), SP_NONE, true, NULL },
};

static const struct sp_view_total totals[] = {
	{ "schedules", "schedules", offsetof(struct sp_run, sched.total), false },
	{ "  voluntary", "voluntary", offsetof(struct sp_run, sched.voluntary), false },
	{ "  preempted", "preempted", offsetof(struct sp_run, sched.preempted), false },
};

static const struct sp_view_loss losses[] = {
	SP_VIEW_ROW_LOSSES(sched, lost_rows, "schedules", "--max-callers"),
};

const struct sp_view_ops sp_view_schedules = {
	.name = "schedules",
	.bit = SP_VIEW_SCHED,
	.count_name = "schedules",
	.time_name = "off-CPU",
	.flame_title = "Schedules: off-CPU flame graph",
	.pprof = { { "schedules", "offcpu" }, "schedules", "count" },
	.walk = { "callers", offsetof(R, caller), SP_NONE, offsetof(R, comms), offsetof(R, stacks),
		  offsetof(struct sp_sched_view, lost_rows) },
	.losses = losses,
	.nlosses = ARRAY_SIZE(losses),
	SP_VIEW_COMMON(sched),
};
#undef R
