// SPDX-License-Identifier: BSD-2-Clause
/* The locks view (see view.h): contentions and sleepers. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "model/view.h"
#include "model/view_fields.h"
#include "base/util.h"

/* ---- JSON ---- */

#define T struct sp_lock_row
static const struct sp_field row_fields[] = {
	SP_KEY_STR(T, "caller", caller),
	SP_KEY_STR(T, "kind", kind),
	SP_KEY_STR(T, "lock", lock),
	SP_STR_NULL(T, "lock_source", source), /* null: unknown (the warehouse keeps no source) */
	SP_ROW_TIME_FIELDS(T, wait_ns),
	SP_U64(T, "failed", failed),
	SP_COMMS(T, "comms", comms, sp_comm_wait_max),
	SP_COMMS(T, "owners", owners, sp_comm_wait),
	SP_STACKS(T, stacks, sp_stack_wait),
};
#undef T
static const struct sp_schema row_schema = SP_SCHEMA_OF("lock_row", row_fields);

/* A sleeper row and a group have the same fields but the first key and the breakdown's. */
#define SLEEP_FIELDS(T)                              \
	SP_KEY_STR(T, "kind", kind),                 \
	SP_KEY_STR(T, "lock", lock),                 \
	SP_U64_AS(T, "tasks", tasks, SP_SINCE),      \
	SP_ROW_TIME_FIELDS(T, offcpu_ns)

static const struct sp_field sleeper_fields[] = {
	SP_KEY_STR(struct sp_sleeper_row, "caller", caller),
	SLEEP_FIELDS(struct sp_sleeper_row),
	SP_COMMS(struct sp_sleeper_row, "comms", comms, sp_comm_offcpu_max),
};
static const struct sp_schema sleeper_schema = SP_SCHEMA_OF("sleeper_row", sleeper_fields);

static const struct sp_field group_fields[] = {
	SP_KEY_STR(struct sp_sleeper_group, "comm", comm),
	SLEEP_FIELDS(struct sp_sleeper_group),
	SP_COMMS(struct sp_sleeper_group, "callers", callers, sp_comm_offcpu_max),
};
static const struct sp_schema group_schema = SP_SCHEMA_OF("sleeper_group", group_fields);

static bool unavailable(const void *obj)
{
	return !((const struct sp_lock_view *)obj)->available;
}

static const struct sp_field cache_fields[] = {
	SP_U64(struct sp_caller_cache, "attributed", attributed),
	SP_CALLER_CACHE_FIELDS,
	/* lock_stack_cache: of fast, those the memo of stacks built gave */
	SP_U64_AS(struct sp_caller_cache, "memo", memo, SP_SPARSE),
};
static const struct sp_schema cache_schema = SP_SCHEMA_OF("lock_caller_cache", cache_fields);
static const struct sp_schema stack_cache_schema = SP_SCHEMA_OF("lock_stack_cache", cache_fields);
static const struct sp_field ustack_cache_fields[] = {
	SP_U64(struct sp_caller_cache, "attributed", attributed),
	SP_CALLER_CACHE_FIELDS,
	SP_U64_AS(struct sp_caller_cache, "memo", memo, SP_SPARSE),
	/* of the walks ("attributed"), those by the rules of the process forked from */
	SP_U64_AS(struct sp_caller_cache, "forked", forked, SP_SPARSE),
};
static const struct sp_schema ustack_cache_schema =
	SP_SCHEMA_OF("lock_ustack_cache", ustack_cache_fields);

#define T struct sp_lock_view
static const struct sp_field view_fields[] = {
	SP_BOOL(T, "available", available),
	/* why not: only then */
	{ .key = "unavailable", .type = SP_T_STR, .flags = SP_NULLABLE,
	  .off = offsetof(T, unavailable), .when = unavailable },
	SP_NAMED(SP_U64, T, total, failed, lost),
	SP_VIEW_STACK_LOSS_FIELDS(T),
	SP_NAMED(SP_U64, T, missed, unpaired),
	/* only when the caller fast path was on (absent in older files) */
	SP_OBJECT_IF(T, "caller_cache", cache, cache_schema),
	/* only when lock stacks were kept from the whole-stack cache (absent in older files) */
	SP_OBJECT_IF(T, "stack_cache", stack_cache, stack_cache_schema),
	/* --stacks by learned rules: the user-stack walks, those the memo answered */
	SP_OBJECT_IF(T, "ustack_cache", ustack_cache, ustack_cache_schema),
	SP_ARRAY(T, "contentions", rows, nrows, cap, row_schema),
	SP_ARRAY(T, "sleepers", sleepers, nsleepers, sleepers_cap, sleeper_schema),
	SP_ARRAY(T, "sleeper_groups", groups, ngroups, groups_cap, group_schema),
};
#undef T
static const struct sp_schema view_schema = SP_SCHEMA_OF("locks", view_fields);

/* ---- table ---- */

static int print_lock_stacks(const struct sp_lock_row *r, const struct render_opts *o, FILE *f)
{
	char d[32];

	fprintf(f, "        lock %s named by %s\n", r->lock, r->source ? r->source : "address");
	if (r->owners.n) {
		fprintf(f, "        held by:");
		for (size_t i = 0; i < r->owners.n && i < o->nstacks; i++)
			fprintf(f, "%s %s (%" PRIu64 ", %s)", i ? "," : "", r->owners.v[i].comm,
				r->owners.v[i].count,
				fmt_duration(r->owners.v[i].time_ns, d, sizeof(d)));
		if (r->owners.n > o->nstacks)
			fprintf(f, ", %zu more", r->owners.n - o->nstacks);
		fputc('\n', f);
	}
	return sp_print_stack_list(&r->stacks, r->count, "wait", o, f);
}

static int cmp_lock_ptr(const void *pa, const void *pb, void *key)
{
	return sp_lock_row_cmp(*(const struct sp_lock_row *const *)pa,
			       *(const struct sp_lock_row *const *)pb, *(enum sp_lock_sort *)key);
}

/* "dirlock: 8 tasks slept 1.900s in rwsem-write on inode.i_rwsem, from a / b" */
static void print_sleepers(const struct sp_lock_view *v, const struct render_opts *o, FILE *f)
{
	size_t n = sp_rows_shown(v->ngroups, o);
	char d1[32], d2[32];

	if (!v->ngroups && !v->nsleepers)
		return;
	fprintf(f, "\nsleepers: time asleep in sleeping-lock slow paths, by process, kind and lock\n");
	for (size_t i = 0; i < n; i++) {
		const struct sp_sleeper_group *g = &v->groups[i];

		fprintf(f, "  %s: %" PRIu64 " task%s slept %s in %s on %s, from ", g->comm, g->tasks,
			g->tasks == 1 ? "" : "s", fmt_duration(g->offcpu_ns, d1, sizeof(d1)), g->kind,
			g->lock);
		for (size_t j = 0; j < g->callers.n && j < 4; j++)
			fprintf(f, "%s%s", j ? " / " : "", g->callers.v[j].comm);
		if (g->callers.n > 4)
			fprintf(f, " / %zu more", g->callers.n - 4);
		fprintf(f, "  (%" PRIu64 " sleep%s, max %s)\n", g->count, g->count == 1 ? "" : "s",
			fmt_duration(g->max_ns, d2, sizeof(d2)));
	}
	if (n < v->ngroups)
		fprintf(f, "  (%zu more: -n 0 shows all)\n", v->ngroups - n);
	if (v->ngroups)
		return;
	/* a saved run without groups: the per-caller rows */
	for (size_t i = 0; i < sp_rows_shown(v->nsleepers, o); i++) {
		const struct sp_sleeper_row *r = &v->sleepers[i];

		fprintf(f, "  %" PRIu64 " task%s slept %s in %s on %s, from %s  (%" PRIu64 " sleeps, max %s)\n",
			r->tasks, r->tasks == 1 ? "" : "s", fmt_duration(r->offcpu_ns, d1, sizeof(d1)),
			r->kind, r->lock, r->caller, r->count, fmt_duration(r->max_ns, d2, sizeof(d2)));
	}
}

static int print_table(const struct sp_run *run, const struct render_opts *o, FILE *f)
{
	static const char *const keys[] = { "wait", "count", "max" };
	const struct sp_lock_view *v = &run->locks;
	enum sp_lock_sort key = o->lock_sort;
	const struct sp_lock_row **rows;
	size_t n = v->nrows;
	char d1[32], d2[32], d3[32];
	int err = 0;

	if (!v->available) {
		fprintf(f, "\nlocks: unavailable: %s\n", v->unavailable ? v->unavailable : "?");
		return 0;
	}
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	fprintf(f, "\nlocks: %" PRIu64 " contentions", v->total);
	if (v->failed)
		fprintf(f, ", %" PRIu64 " gave up (%.1f%%)", v->failed, sp_pct(v->failed, v->total));
	fprintf(f, ", ranked by %s\n", keys[key % 3]);
	sp_print_caller_cache(&v->cache, v->cache.attributed, "contentions", f);
	sp_print_cache("kernel stacks", &v->stack_cache, v->stack_cache.attributed, "contentions",
		       f);
	sp_print_cache("user stacks", &v->ustack_cache, v->ustack_cache.attributed, "walks", f);
	sp_print_stack_notes("contentions", v->missing_stacks, v->user_missing, v->user_truncated,
			     &v->user_cuts, f);
	sp_print_lost_rows(v->lost, "contentions", "row", "--max-callers", f);
	if (v->missed || v->unpaired)
		fprintf(f, "  note: %" PRIu64 " lock events were skipped by the kernel (a program "
			   "already running on that CPU) and %" PRIu64 " begins had no end\n",
			v->missed, v->unpaired);
	for (size_t i = 0; i < n; i++)
		rows[i] = &v->rows[i];
	if (n > 1)
		qsort_r(rows, n, sizeof(*rows), cmp_lock_ptr, &key);
	n = sp_rows_shown(n, o);
	fprintf(f, "%10s %10s %10s %10s  %-13s %-31s %s\n", "COUNT", "WAIT", "AVG", "MAX", "KIND",
		"LOCK", "CALLER");
	for (size_t i = 0; !err && i < n; i++) {
		const struct sp_lock_row *r = rows[i];

		fprintf(f, "%10" PRIu64 " %10s %10s %10s  %-13s %-31s %s", r->count,
			fmt_duration(r->wait_ns, d1, sizeof(d1)),
			fmt_duration(r->count ? r->wait_ns / r->count : 0, d2, sizeof(d2)),
			fmt_duration(r->max_ns, d3, sizeof(d3)), r->kind, r->lock, r->caller);
		if (r->failed)
			fprintf(f, "  (%" PRIu64 " gave up)", r->failed);
		fputc('\n', f);
		if (o->lock_stacks)
			err = print_lock_stacks(r, o, f);
	}
	free(rows);
	if (err)
		return err;
	sp_print_more_rows(n, v->nrows, f);
	print_sleepers(v, o, f);
	return 0;
}

/* ---- stack walk (sleepers have no stacks) and diff ---- */

#define R struct sp_lock_row
#define S struct sp_sleeper_row
static const struct sp_diff_table diff[] = {
	{ "locks", "lock contentions", "CALLER (KIND LOCK)", "wait time", "lock", "contentions",
	  offsetof(R, caller), offsetof(R, kind), offsetof(R, lock), offsetof(R, count),
	  offsetof(R, wait_ns), offsetof(struct sp_lock_view, total), false, NULL },
	{ "lock_sleepers", "sleeping-lock waits", "CALLER (KIND LOCK)", "off-CPU time", "lock",
	  "sleepers", offsetof(S, caller), offsetof(S, kind), offsetof(S, lock),
	  offsetof(S, count), offsetof(S, offcpu_ns), SP_NONE, false, NULL },
};
#undef S

static const struct sp_view_total totals[] = {
	{ "lock contentions", "lock_contentions", offsetof(struct sp_run, locks.total), false },
};

static const struct sp_view_loss losses[] = {
	SP_VIEW_ROW_LOSSES(locks, lost, "contentions", "--max-callers"),
	{ offsetof(struct sp_run, locks.missed), "lock events skipped by the kernel" },
	{ offsetof(struct sp_run, locks.unpaired), "lock begins without an end" },
};

const struct sp_view_ops sp_view_locks = {
	.name = "locks",
	.bit = SP_VIEW_LOCKS,
	.count_name = "contentions",
	.time_name = "lock wait",
	.flame_title = "Locks: lock contention flame graph",
	.pprof = { { "contentions", "delay" }, "contentions", "count" },
	.walk = { "contentions", offsetof(R, caller), SP_NONE, offsetof(R, comms),
		  offsetof(R, stacks), offsetof(struct sp_lock_view, lost) },
	.losses = losses,
	.nlosses = ARRAY_SIZE(losses),
	SP_VIEW_COMMON(locks),
};
#undef R
