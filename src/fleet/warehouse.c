// SPDX-License-Identifier: BSD-2-Clause
/*
 * The warehouse's rows -> struct sp_run (warehouse.h): the SQL that selects and sums them with
 * each interval counted once, and the reader of its TabSeparated answers.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "base/util.h"
#include "fleet/warehouse.h"

/* n digits at *s into *ret, advancing *s. */
static bool digits(const char **s, int n, int *ret)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*s)[i]))
			return false;
		v = v * 10 + (*s)[i] - '0';
	}
	*s += n;
	*ret = v;
	return true;
}

static int parse_relative(const char *s, int64_t now_s, int64_t *ret)
{
	static const struct {
		char unit;
		int64_t s;
	} units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 604800 } };
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(s + 1, &end, 10);
	if (errno || end == s + 1 || !isdigit((unsigned char)s[1]) || !end[0] || end[1] ||
	    n > 100ULL * 366 * 86400)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (units[i].unit == *end) {
			if ((int64_t)n > INT64_MAX / units[i].s / 2)
				return -EINVAL;
			*ret = now_s - (int64_t)n * units[i].s;
			return 0;
		}
	return -EINVAL;
}

int warehouse_parse_time(const char *s, int64_t now_s, int64_t *ret)
{
	struct tm tm = { 0 };
	int y, mo, d, h = 0, mi = 0, sec = 0, oh, om, sign;
	const char *p = s;
	time_t t;

	if (!strcmp(s, "now")) {
		*ret = now_s;
		return 0;
	}
	if (*s == '-')
		return parse_relative(s, now_s, ret);
	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
	    !digits(&p, 2, &d))
		return -EINVAL;
	sign = 0;
	oh = om = 0;
	if (*p) {
		if ((*p != 'T' && *p != 't' && *p != ' ') || (p++, !digits(&p, 2, &h)) ||
		    *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' || !digits(&p, 2, &sec))
			return -EINVAL;
		if (*p == '.' || *p == ',') /* a fraction: the warehouse keeps seconds */
			for (p++; isdigit((unsigned char)*p); p++)
				;
		if (*p == 'Z' || *p == 'z') {
			p++;
		} else if (*p == '+' || *p == '-') {
			sign = *p++ == '+' ? 1 : -1;
			if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om) || oh > 23 ||
			    om > 59)
				return -EINVAL;
		} else {
			return -EINVAL; /* RFC 3339 wants the offset: a bare time has no zone */
		}
		if (*p)
			return -EINVAL;
	}
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -EINVAL;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (tm.tm_mday != d) /* 2026-02-31 normalized to March */
		return -EINVAL;
	*ret = (int64_t)t - sign * (oh * 3600 + om * 60);
	return 0;
}

/* s as a ClickHouse string literal. */
static void put_literal(FILE *f, const char *s)
{
	putc('\'', f);
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			putc('\\', f);
		putc(*s, f);
	}
	putc('\'', f);
}

static void put_where(FILE *f, const struct warehouse_select *sel)
{
	fputs(" WHERE 1", f);
	if (sel->nhosts) {
		fputs(" AND host IN (", f);
		for (size_t i = 0; i < sel->nhosts; i++) {
			if (i)
				putc(',', f);
			put_literal(f, sel->hosts[i]);
		}
		putc(')', f);
	}
	if (sel->has_since)
		fprintf(f, " AND interval_start >= toDateTime(%" PRId64 ")", sel->since);
	if (sel->has_until)
		fprintf(f, " AND interval_start < toDateTime(%" PRId64 ")", sel->until);
}

/*
 * One table's rows summed by key: the inner query keeps one row per interval and key (any():
 * the copies of a re-sent interval are equal), so a copy not merged away yet counts once.
 */
struct summed {
	const char *table;
	const char *key;   /* the row key, also the order of the answer */
	const char *inner; /* the values, as any() of the copies */
	const char *outer; /* their sums over the selection */
};

/* a schedules line's count, time and max; the split follows */
#define SCHED_INNER "any(count) AS c, any(offcpu_ns) AS t, any(max_ns) AS m, "

static const struct summed summed[] = {
	[WAREHOUSE_SCHEDULES] = { "schedules", "caller, wait, comm",
				  SCHED_INNER "any(blocked_ns) AS b, any(runq_ns) AS q, "
				  "any(throttled_ns) AS th, any(migrated) AS mg, any(migrated_runq_ns) AS mq, "
				  "any(runq_max_ns) AS qm",
				  "sum(c), sum(t), max(m), sum(b), sum(q), sum(th), sum(mg), sum(mq), "
				  "max(qm)" },
	[WAREHOUSE_TAKERS] = { "cpu_takers", "caller, wait, kind, comm, cgroup, side",
			       "any(count) AS c, any(ns) AS t", "sum(c), sum(t)" },
	[WAREHOUSE_PROFILE] = { "profile", "function, object, comm",
				"any(samples) AS c, any(hz) AS h", "sum(c), max(h)" },
	[WAREHOUSE_LOCKS] = { "locks", "caller, kind, lock, comm",
			      "any(count) AS c, any(wait_ns) AS t, any(max_ns) AS m",
			      "sum(c), sum(t), max(m)" },
	[WAREHOUSE_LOSSES] = { "losses", "what", "any(count) AS c", "sum(c)" },
};

/* The schedules table of an older agent: its split read as zeros (no split, in add_sched). */
static const char old_sched_inner[] =
	SCHED_INNER "0 AS b, 0 AS q, 0 AS th, 0 AS mg, 0 AS mq, 0 AS qm";

/* The profile table of an older agent: no rate (0: not recorded). */
static const char old_profile_inner[] = "any(samples) AS c, 0 AS h";

/* The split's columns, added to the first schema (sink.c adds them to an older table). */
static const char *const split_columns[] = { "blocked_ns", "runq_ns", "throttled_ns", "migrated",
					     "migrated_runq_ns", "runq_max_ns" };

char *warehouse_sql(enum warehouse_query q, const char *db, const struct warehouse_select *sel,
		    const struct warehouse_run *w)
{
	static const char *const tables[] = { "schedules", "profile", "locks", "losses" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (q == WAREHOUSE_COLUMNS) {
		/* the split's columns, the profile's rate, and a column of cpu_takers (a newer table) */
		fprintf(f, "SELECT concat(table, '.', name) AS c FROM system.columns WHERE "
			   "database = '%s' AND (table = 'schedules' AND name IN (", db);
		for (size_t i = 0; i < ARRAY_SIZE(split_columns); i++)
			fprintf(f, "%s'%s'", i ? ", " : "", split_columns[i]);
		fputs(") OR table = 'profile' AND name = 'hz' OR table = 'cpu_takers' AND name = 'ns') "
		      "ORDER BY c", f);
	} else if (q == WAREHOUSE_META) {
		/* min/max/uniq are the same with or without the copies of a re-sent interval */
		fputs("SELECT host, kernel, toUnixTimestamp(min(interval_start)), "
		      "toUnixTimestamp(max(interval_end)), uniqExact(boot_id, seq) FROM (", f);
		for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
			fprintf(f, "%sSELECT host, kernel, interval_start, interval_end, boot_id, seq "
				   "FROM %s.%s",
				i ? " UNION ALL " : "", db, tables[i]);
			put_where(f, sel);
		}
		fputs(") GROUP BY host, kernel ORDER BY host, kernel", f);
	} else {
		const struct summed *s = &summed[q];
		const char *inner = s->inner;

		if (q == WAREHOUSE_SCHEDULES && w && !w->sched_split)
			inner = old_sched_inner;
		else if (q == WAREHOUSE_PROFILE && w && !w->profile_hz)
			inner = old_profile_inner;

		fprintf(f, "SELECT %s, %s FROM (SELECT host, boot_id, seq, %s, %s FROM %s.%s", s->key,
			s->outer, s->key, inner, db, s->table);
		put_where(f, sel);
		fprintf(f, " GROUP BY host, boot_id, seq, %s) GROUP BY %s ORDER BY %s", s->key, s->key,
			s->key);
	}
	fputs(" FORMAT TabSeparated", f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

void warehouse_run_init(struct warehouse_run *w)
{
	memset(w, 0, sizeof(*w));
	sp_run_init(&w->run);
}

void warehouse_run_free(struct warehouse_run *w)
{
	sp_run_free(&w->run);
	free(w->other_losses);
	free(w->hosts);
	free(w->kernels);
	w->other_losses = w->hosts = w->kernels = NULL;
}

const char *warehouse_missing(void)
{
	return "the warehouse keeps no stacks (folded and pprof show the caller or function under "
	       "the comm), no run-queue p50 and p99 (they read 0) or wakers, no profile sample "
	       "classes, no lock sleepers, owners or failed contentions";
}

/* ---- TabSeparated answers ---- */

#define MAX_FIELDS 12

/* Undoes TabSeparated's escapes in place (\t, \n, \\, \', \b, \f, \r, \0). */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (*s != '\\' || !s[1]) {
			*d++ = *s;
			continue;
		}
		switch (*++s) {
		case 't': *d++ = '\t'; break;
		case 'n': *d++ = '\n'; break;
		case 'r': *d++ = '\r'; break;
		case 'b': *d++ = '\b'; break;
		case 'f': *d++ = '\f'; break;
		case '0': *d++ = '\0'; break; /* ends the C string there, as a NUL in a name would */
		default: *d++ = *s; break;
		}
	}
	*d = '\0';
}

/* Splits line (modified) at tabs into exactly n fields. */
static bool split(char *line, char **fields, int n)
{
	int i = 0;

	for (char *p = line;; p++) {
		if (*p != '\t' && *p)
			continue;
		if (i == n)
			return false;
		fields[i++] = line;
		if (!*p)
			break;
		*p = '\0';
		line = p + 1;
	}
	for (int j = 0; j < i; j++)
		unescape(fields[j]);
	return i == n;
}

static bool number(const char *s, uint64_t *ret)
{
	return !parse_u64(s, 0, UINT64_MAX, ret);
}

static int nfields(enum warehouse_query q)
{
	static const int n[] = { [WAREHOUSE_COLUMNS] = 1, [WAREHOUSE_META] = 5,
				 [WAREHOUSE_SCHEDULES] = 12, [WAREHOUSE_TAKERS] = 8,
				 [WAREHOUSE_PROFILE] = 5, [WAREHOUSE_LOCKS] = 7,
				 [WAREHOUSE_LOSSES] = 2 };
	return n[q];
}

/* "a, b" += s, when s is not in it yet: 1 (added), 0 (there) or -ENOMEM */
static int add_name(char **list, const char *s)
{
	size_t n = *list ? strlen(*list) : 0, k = strlen(s);
	char *p;

	for (const char *q = *list; q && (q = strstr(q, s)); q += k)
		if ((q == *list || q[-1] == ' ') && (q[k] == ',' || !q[k]))
			return 0;
	p = realloc(*list, n + k + 3);
	if (!p)
		return -ENOMEM;
	sprintf(p + n, "%s%s", n ? ", " : "", s);
	*list = p;
	return 1;
}

static int add_meta(struct warehouse_run *w, char **f)
{
	struct sp_run *r = &w->run;
	uint64_t start, end, n;
	int err;

	if (!number(f[2], &start) || !number(f[3], &end) || !number(f[4], &n) || end < start)
		return -EINVAL;
	if ((err = add_name(&w->hosts, f[0])) < 0)
		return err;
	w->nhosts += err;
	if ((err = add_name(&w->kernels, f[1])) < 0)
		return err;
	w->nkernels += err;
	w->intervals += n;
	if (!r->start_unix_ns || start * 1000000000ull < r->start_unix_ns) {
		uint64_t old_end = r->start_unix_ns + r->elapsed_ns;

		r->start_unix_ns = start * 1000000000ull;
		r->elapsed_ns = old_end > r->start_unix_ns ? old_end - r->start_unix_ns : 0;
	}
	if (end * 1000000000ull > r->start_unix_ns + r->elapsed_ns)
		r->elapsed_ns = end * 1000000000ull - r->start_unix_ns;
	return 0;
}

/*
 * The agent writes a row's count not covered by its comms (the collector keeps the top comms)
 * as comm "[other]": it counts in the row, and is no comm of the row, as in the saved run.
 */
#define OTHER_COMM "[other]"

static int add_comm(struct sp_comm_list *l, const char *comm, uint64_t count, uint64_t time_ns,
		    uint64_t max_ns)
{
	return strcmp(comm, OTHER_COMM) ? sp_comm_list_add(l, comm, count, time_ns, max_ns) : 0;
}

static bool same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b);
}

/*
 * Answers come ordered by the row key then comm, so a row's comms are consecutive: the last
 * row when it has the key, else a new one (NULL: ENOMEM).
 */
static struct sp_sched_row *sched_row(struct sp_sched_view *v, char **f)
{
	struct sp_sched_row *r = v->nrows ? &v->rows[v->nrows - 1] : NULL;

	if (r && same(r->caller, f[0]) && same(r->wait, f[1]))
		return r;
	r = sp_sched_add_row(v);
	if (r && (xstrdup_to(&r->caller, f[0]) || (*f[1] && xstrdup_to(&r->wait, f[1])))) {
		free(r->caller);
		v->nrows--;
		return NULL;
	}
	return r;
}

bool warehouse_query_needed(enum warehouse_query q, const struct warehouse_run *w)
{
	return q != WAREHOUSE_TAKERS || !w || w->has_takers;
}

/*
 * A newer column the tables have ("schedules.runq_ns"): the split is there when all are;
 * "profile.hz", the profile's rate.
 */
static int add_column(struct warehouse_run *w, char **f)
{
	if (!strncmp(f[0], "schedules.", 10))
		for (size_t i = 0; i < ARRAY_SIZE(split_columns); i++)
			if (!strcmp(f[0] + 10, split_columns[i]))
				w->split_seen |= 1u << i;
	w->sched_split = w->split_seen == (1u << ARRAY_SIZE(split_columns)) - 1;
	if (!strcmp(f[0], "cpu_takers.ns"))
		w->has_takers = true;
	if (!strcmp(f[0], "profile.hz"))
		w->profile_hz = true;
	return 0;
}

/*
 * A (row, comm) line: count, time and max, then the row's split (on one of its comm lines, the
 * others 0: sql/schema.sql), all zero where the agent measured none.
 */
static int add_sched(struct sp_sched_view *v, char **f)
{
	uint64_t n[9]; /* c, t, m, b, q, th, mg, mq, qm */
	struct sp_sched_row *r;

	for (int i = 0; i < 9; i++)
		if (!number(f[3 + i], &n[i]))
			return -EINVAL;
	r = sched_row(v, f);
	if (!r)
		return -ENOMEM;
	v->present = true;
	r->count += n[0];
	r->offcpu_ns += n[1];
	r->max_ns = r->max_ns > n[2] ? r->max_ns : n[2];
	if (n[3] || n[4]) {
		r->has_runq = true;
		r->blocked_ns += n[3];
		r->runq_ns += n[4];
		r->throttled_ns += n[5];
		r->migrated += n[6];
		r->migrated_runq_ns += n[7];
		r->runq_max_ns = r->runq_max_ns > n[8] ? r->runq_max_ns : n[8];
	}
	return add_comm(&r->comms, f[2], n[0], n[1], n[2]);
}

/* A (row, taker) line: to the schedules row of the same caller and wait. */
static int add_taker(struct warehouse_run *w, char **f)
{
	struct sp_sched_view *v = &w->run.sched;
	struct sp_cpu_taker t = { .kind = f[2], .comm = f[3], .cgroup = *f[4] ? f[4] : NULL,
				  .where = f[5] };

	if (!number(f[6], &t.count) || !number(f[7], &t.ns))
		return -EINVAL;
	/* both answers are in (caller, wait) order: the row of the last line, or one after it */
	for (size_t k = 0; k < v->nrows; k++) {
		size_t i = (w->taker_row + k) % v->nrows;

		if (same(v->rows[i].caller, f[0]) && same(v->rows[i].wait, f[1])) {
			w->taker_row = i;
			return sp_cpu_taker_add(&v->rows[i].takers, &t);
		}
	}
	w->takers_without_row++;
	return 0;
}

static struct sp_profile_row *profile_row(struct sp_profile_view *v, char **f)
{
	struct sp_profile_row *r = v->nrows ? &v->rows[v->nrows - 1] : NULL;

	if (r && same(r->function, f[0]) && same(r->object, f[1]))
		return r;
	r = sp_profile_add_row(v);
	if (r && (xstrdup_to(&r->function, f[0]) || xstrdup_to(&r->object, f[1]))) {
		free(r->function);
		v->nrows--;
		return NULL;
	}
	return r;
}

static int add_profile(struct sp_profile_view *v, char **f)
{
	struct sp_profile_row *r;
	uint64_t n, hz;

	if (!number(f[3], &n) || !number(f[4], &hz) || hz > UINT32_MAX)
		return -EINVAL;
	r = profile_row(v, f);
	if (!r)
		return -ENOMEM;
	v->present = true;
	/* the highest rate of the intervals selected (agents sampling at different rates: the
	 * table's CPU times are then upper bounds) */
	if (hz > v->hz)
		v->hz = (unsigned int)hz;
	r->samples += n;
	return add_comm(&r->comms, f[2], n, 0, 0);
}

static struct sp_lock_row *lock_row(struct sp_lock_view *v, char **f)
{
	struct sp_lock_row *r = v->nrows ? &v->rows[v->nrows - 1] : NULL;

	if (r && same(r->caller, f[0]) && same(r->kind, f[1]) && same(r->lock, f[2]))
		return r;
	r = sp_lock_add_row(v);
	if (r && (xstrdup_to(&r->caller, f[0]) || xstrdup_to(&r->kind, f[1]) ||
		  xstrdup_to(&r->lock, f[2]))) {
		free(r->caller);
		free(r->kind);
		v->nrows--;
		return NULL;
	}
	return r;
}

static int add_lock(struct sp_lock_view *v, char **f)
{
	struct sp_lock_row *r;
	uint64_t c, t, m;

	if (!number(f[4], &c) || !number(f[5], &t) || !number(f[6], &m))
		return -EINVAL;
	r = lock_row(v, f);
	if (!r)
		return -ENOMEM;
	v->present = v->available = true;
	r->count += c;
	r->wait_ns += t;
	r->max_ns = r->max_ns > m ? r->max_ns : m;
	return add_comm(&r->comms, f[3], c, t, m);
}

/*
 * The losses the agent records (the names of the model's counters: view.field), into the
 * model's fields; any other name is kept for the note.
 */
static int add_loss(struct warehouse_run *w, char **f)
{
	struct sp_run *r = &w->run;
	const struct {
		const char *what;
		uint64_t *field;
		bool *present;
	} known[] = {
		{ "schedules.lost_rows", &r->sched.lost_rows, &r->sched.present },
		{ "schedules.missing_stacks", &r->sched.missing_stacks, &r->sched.present },
		{ "profile.lost", &r->profile.lost, &r->profile.present },
		{ "profile.missing_stacks", &r->profile.missing_stacks, &r->profile.present },
		{ "profile.unsymbolized", &r->profile.unsymbolized, &r->profile.present },
		{ "profile.user_truncated", &r->profile.user_truncated, &r->profile.present },
		{ "locks.lost", &r->locks.lost, &r->locks.present },
		{ "locks.missing_stacks", &r->locks.missing_stacks, &r->locks.present },
		{ "locks.missed", &r->locks.missed, &r->locks.present },
		{ "locks.unpaired", &r->locks.unpaired, &r->locks.present },
		{ "spool.dropped_intervals", &w->spool_dropped, NULL },
	};
	char *item;
	uint64_t n;
	int err;

	if (!number(f[1], &n))
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (!strcmp(known[i].what, f[0])) {
			*known[i].field += n;
			if (known[i].present && n)
				*known[i].present = true;
			return 0;
		}
	if (!n)
		return 0;
	if (asprintf(&item, "%s %" PRIu64, f[0], n) < 0)
		return -ENOMEM;
	err = add_name(&w->other_losses, item);
	free(item);
	return err < 0 ? err : 0;
}

int warehouse_add_result(struct warehouse_run *w, enum warehouse_query q, const char *body,
			 size_t len, char *msg, size_t msgsize)
{
	char *copy = malloc(len + 1), *line, *next;
	char *f[MAX_FIELDS];
	size_t lineno = 0;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, body, len);
	copy[len] = '\0';
	for (line = copy; !err && line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		if (!split(line, f, nfields(q))) {
			err = -EINVAL;
			break;
		}
		switch (q) {
		case WAREHOUSE_COLUMNS: err = add_column(w, f); break;
		case WAREHOUSE_META: err = add_meta(w, f); break;
		case WAREHOUSE_SCHEDULES: err = add_sched(&w->run.sched, f); break;
		case WAREHOUSE_TAKERS: err = add_taker(w, f); break;
		case WAREHOUSE_PROFILE: err = add_profile(&w->run.profile, f); break;
		case WAREHOUSE_LOCKS: err = add_lock(&w->run.locks, f); break;
		default: err = add_loss(w, f); break;
		}
	}
	if (err == -EINVAL)
		snprintf(msg, msgsize, "line %zu of the answer is no %d-column row of numbers where "
				       "they belong",
			 lineno, nfields(q));
	free(copy);
	return err;
}

int warehouse_run_finish(struct warehouse_run *w)
{
	struct sp_run *r = &w->run;
	struct sp_sched_view *s = &r->sched;
	struct sp_profile_view *p = &r->profile;
	struct sp_lock_view *l = &r->locks;

	if (!(r->schema = xstrdup(SP_SCHEMA)) || !(r->version = xstrdup("warehouse")))
		return -ENOMEM;
	if (w->nhosts == 1 ? !(r->hostname = xstrdup(w->hosts)) :
			     asprintf(&r->hostname, "%zu hosts", w->nhosts) < 0)
		return -ENOMEM;
	if (w->nkernels == 1 ? !(r->kernel = xstrdup(w->kernels)) :
			       asprintf(&r->kernel, "%zu kernels", w->nkernels) < 0)
		return -ENOMEM;
	r->target.mode = SP_TARGET_ALL;
	r->target.exit_status = -1;
	s->total = s->lost_rows;
	for (size_t i = 0; i < s->nrows; i++) {
		s->total += s->rows[i].count;
		if (!strcmp(s->rows[i].caller, "[preempted]"))
			s->preempted += s->rows[i].count;
		sp_comm_list_sort(&s->rows[i].comms);
	}
	s->voluntary = s->total - s->preempted;
	if (sp_sched_sum_takers(s))
		return -ENOMEM;
	if (w->takers_without_row) {
		char item[64];

		snprintf(item, sizeof(item), "cpu_takers.without_row %" PRIu64,
			 w->takers_without_row);
		if (add_name(&w->other_losses, item) < 0)
			return -ENOMEM;
	}
	p->total = p->lost;
	for (size_t i = 0; i < p->nrows; i++) {
		p->total += p->rows[i].samples;
		sp_comm_list_sort(&p->rows[i].comms);
	}
	p->target = p->total; /* no classes: every sample counts as the target's */
	l->total = l->lost;
	for (size_t i = 0; i < l->nrows; i++) {
		l->total += l->rows[i].count;
		sp_comm_list_sort(&l->rows[i].comms);
	}
	sp_sched_sort(s);
	sp_profile_sort(p);
	sp_lock_sort(l, SP_LOCK_SORT_WAIT);
	return 0;
}
