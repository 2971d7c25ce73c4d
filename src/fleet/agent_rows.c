// SPDX-License-Identifier: BSD-2-Clause
/* An agent interval as warehouse rows: see agent_rows.h. */
#include "fleet/agent_rows.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/json_escape.h"
#include "base/util.h"

static const char *const table_names[AT__N] = { "schedules", "profile", "locks", "cpu_takers",
						"losses" };

const char *agent_table_name(enum agent_table t)
{
	return t < AT__N ? table_names[t] : NULL;
}

const struct agent_column agent_added_columns[] = {
	{ AT_PROFILE, "hz", "UInt32 DEFAULT 0" },
	{ AT_SCHEDULES, "blocked_ns", "UInt64 DEFAULT 0" },
	{ AT_SCHEDULES, "runq_ns", "UInt64 DEFAULT 0" },
	{ AT_SCHEDULES, "throttled_ns", "UInt64 DEFAULT 0" },
	{ AT_SCHEDULES, "migrated", "UInt64 DEFAULT 0" },
	{ AT_SCHEDULES, "migrated_runq_ns", "UInt64 DEFAULT 0" },
	{ AT_SCHEDULES, "runq_max_ns", "UInt64 DEFAULT 0" },
};
const size_t agent_nadded_columns = ARRAY_SIZE(agent_added_columns);

int abuf_add(struct abuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

int abuf_printf(struct abuf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n < sizeof(tmp))
		return abuf_add(b, tmp, n);
	{
		char *big = NULL;
		int err;

		va_start(ap, fmt);
		n = vasprintf(&big, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -ENOMEM;
		err = abuf_add(b, big, n);
		free(big);
		return err;
	}
}

void abuf_free(struct abuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* "key":"escaped value", with the comma before it unless first */
static int put_str(struct abuf *b, const char *key, const char *v, bool first)
{
	const unsigned char *s = (const unsigned char *)(v ? v : "");
	int err = abuf_printf(b, "%s\"%s\":\"", first ? "" : ",", key);

	for (; !err && *s; s++) {
		char e = json_escape_letter(*s);
		char esc[8];

		if (e) {
			esc[0] = '\\';
			esc[1] = e;
			err = abuf_add(b, esc, 2);
		} else if (*s < 0x20 || *s == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", *s);
			err = abuf_add(b, esc, 6);
		} else {
			err = abuf_add(b, (const char *)s, 1);
		}
	}
	return err ?: abuf_add(b, "\"", 1);
}

static int put_u64(struct abuf *b, const char *key, uint64_t v)
{
	return abuf_printf(b, ",\"%s\":%llu", key, (unsigned long long)v);
}

const char *agent_utc(uint64_t unix_ns, char *buf, size_t len)
{
	time_t t = (time_t)(unix_ns / 1000000000ULL);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "1970-01-01 00:00:00");
	return buf;
}

/* The stamp every row starts with: {"host":...,"seq":N */
static int put_stamp(struct abuf *b, const struct agent_stamp *s)
{
	char t0[32], t1[32];

	return abuf_add(b, "{", 1) ?: put_str(b, "host", s->host, true) ?:
	       put_str(b, "boot_id", s->boot_id, false) ?: put_str(b, "kernel", s->kernel, false) ?:
	       put_str(b, "interval_start", agent_utc(s->start_unix_ns, t0, sizeof(t0)), false) ?:
	       put_str(b, "interval_end", agent_utc(s->end_unix_ns, t1, sizeof(t1)), false) ?:
	       put_u64(b, "seq", s->seq);
}

/* The comms of a row, then "[other]" for the part of its count they do not cover. */
struct comm_part {
	const char *comm;
	uint64_t count, time_ns, max_ns;
};

/* Part j of a row: its comm j, then (j == n) "[other]" for what its comms do not cover. */
static bool comm_part(const struct sp_comm_list *l, uint64_t count, uint64_t time_ns,
		      uint64_t max_ns, size_t j, struct comm_part *p)
{
	uint64_t c = 0, t = 0;

	if (j < l->n) {
		*p = (struct comm_part){ l->v[j].comm, l->v[j].count, l->v[j].time_ns,
					 l->v[j].max_ns };
		return true;
	}
	if (j > l->n)
		return false;
	for (size_t i = 0; i < l->n; i++) {
		c += l->v[i].count;
		t += l->v[i].time_ns;
	}
	if (count <= c && time_ns <= t)
		return false;
	*p = (struct comm_part){ "[other]", count > c ? count - c : 0, time_ns > t ? time_ns - t : 0,
				 max_ns };
	return true;
}

static int sched_rows(const struct sp_run *iv, const struct agent_stamp *s, struct agent_batch *b)
{
	struct abuf *o = &b->t[AT_SCHEDULES];
	int err = 0;

	for (size_t i = 0; !err && i < iv->sched.nrows; i++) {
		const struct sp_sched_row *r = &iv->sched.rows[i];
		struct comm_part p;

		for (size_t j = 0; !err && comm_part(&r->comms, r->count, r->offcpu_ns, r->max_ns, j,
							&p); j++) {
			/*
			 * The row's split is not per comm: its first line carries it, the others
			 * 0, so that a row's lines add up to the row. No split measured: 0 and 0.
			 */
			bool split = j == 0 && r->has_runq;

			err = put_stamp(o, s) ?: put_str(o, "caller", r->caller, false) ?:
			      put_str(o, "wait", r->wait, false) ?: put_str(o, "comm", p.comm, false) ?:
			      put_u64(o, "count", p.count) ?: put_u64(o, "offcpu_ns", p.time_ns) ?:
			      put_u64(o, "max_ns", p.max_ns) ?:
			      put_u64(o, "blocked_ns", split ? r->blocked_ns : 0) ?:
			      put_u64(o, "runq_ns", split ? r->runq_ns : 0) ?:
			      put_u64(o, "throttled_ns", split ? r->throttled_ns : 0) ?:
			      put_u64(o, "migrated", split ? r->migrated : 0) ?:
			      put_u64(o, "migrated_runq_ns", split ? r->migrated_runq_ns : 0) ?:
			      put_u64(o, "runq_max_ns", split ? r->runq_max_ns : 0) ?:
			      abuf_add(o, "}\n", 2);
			b->rows[AT_SCHEDULES]++;
		}
	}
	return err;
}

static int profile_rows(const struct sp_run *iv, const struct agent_stamp *s,
			struct agent_batch *b)
{
	struct abuf *o = &b->t[AT_PROFILE];
	int err = 0;

	for (size_t i = 0; !err && i < iv->profile.nrows; i++) {
		const struct sp_profile_row *r = &iv->profile.rows[i];
		struct comm_part p;

		for (size_t j = 0; !err && comm_part(&r->comms, r->samples, 0, 0, j, &p); j++) {
			err = put_stamp(o, s) ?: put_str(o, "function", r->function, false) ?:
			      put_str(o, "object", r->object, false) ?:
			      put_str(o, "comm", p.comm, false) ?: put_u64(o, "samples", p.count) ?:
			      put_u64(o, "hz", iv->profile.hz) ?: abuf_add(o, "}\n", 2);
			b->rows[AT_PROFILE]++;
		}
	}
	return err;
}

static int lock_rows(const struct sp_run *iv, const struct agent_stamp *s, struct agent_batch *b)
{
	struct abuf *o = &b->t[AT_LOCKS];
	int err = 0;

	for (size_t i = 0; !err && i < iv->locks.nrows; i++) {
		const struct sp_lock_row *r = &iv->locks.rows[i];
		struct comm_part p;

		for (size_t j = 0; !err && comm_part(&r->comms, r->count, r->wait_ns, r->max_ns, j,
							&p); j++) {
			err = put_stamp(o, s) ?: put_str(o, "caller", r->caller, false) ?:
			      put_str(o, "kind", r->kind, false) ?: put_str(o, "lock", r->lock, false) ?:
			      put_str(o, "comm", p.comm, false) ?: put_u64(o, "count", p.count) ?:
			      put_u64(o, "wait_ns", p.time_ns) ?: put_u64(o, "max_ns", p.max_ns) ?:
			      abuf_add(o, "}\n", 2);
			b->rows[AT_LOCKS]++;
		}
	}
	return err;
}

/* Who took the rows' CPU: a line per (row, taker), its cgroup '' where unknown. */
static int taker_rows(const struct sp_run *iv, const struct agent_stamp *s, struct agent_batch *b)
{
	struct abuf *o = &b->t[AT_TAKERS];
	int err = 0;

	for (size_t i = 0; !err && i < iv->sched.nrows; i++) {
		const struct sp_sched_row *r = &iv->sched.rows[i];

		for (size_t j = 0; !err && j < r->takers.n; j++) {
			const struct sp_cpu_taker *t = &r->takers.v[j];

			if (!t->count && !t->ns)
				continue;
			err = put_stamp(o, s) ?: put_str(o, "caller", r->caller, false) ?:
			      put_str(o, "wait", r->wait, false) ?: put_str(o, "kind", t->kind, false) ?:
			      put_str(o, "comm", t->comm, false) ?:
			      put_str(o, "cgroup", t->cgroup, false) ?:
			      put_str(o, "side", t->where, false) ?: put_u64(o, "count", t->count) ?:
			      put_u64(o, "ns", t->ns) ?: abuf_add(o, "}\n", 2);
			b->rows[AT_TAKERS]++;
		}
	}
	return err;
}

int agent_batch_loss(struct agent_batch *b, const struct agent_stamp *s, const char *what,
		     uint64_t count)
{
	struct abuf *o = &b->t[AT_LOSSES];
	int err;

	if (!count)
		return 0;
	err = put_stamp(o, s) ?: put_str(o, "what", what, false) ?: put_u64(o, "count", count) ?:
	      abuf_add(o, "}\n", 2);
	if (!err)
		b->rows[AT_LOSSES]++;
	return err;
}

int agent_batch_build(const struct sp_run *iv, const struct agent_stamp *s, struct agent_batch *b)
{
	const struct {
		const char *what;
		uint64_t n;
	} losses[] = {
		{ "schedules.lost_rows", iv->sched.lost_rows },
		{ "schedules.missing_stacks", iv->sched.missing_stacks },
		{ "profile.lost", iv->profile.lost },
		{ "profile.missing_stacks", iv->profile.missing_stacks },
		{ "locks.lost", iv->locks.lost },
		{ "locks.missing_stacks", iv->locks.missing_stacks },
		{ "locks.missed", iv->locks.missed },
		{ "locks.unpaired", iv->locks.unpaired },
	};
	int err;

	memset(b, 0, sizeof(*b));
	b->seq = s->seq;
	err = sched_rows(iv, s, b) ?: profile_rows(iv, s, b) ?: lock_rows(iv, s, b) ?:
	      taker_rows(iv, s, b);
	for (size_t i = 0; !err && i < ARRAY_SIZE(losses); i++)
		err = agent_batch_loss(b, s, losses[i].what, losses[i].n);
	return err;
}

void agent_batch_free(struct agent_batch *b)
{
	for (int t = 0; t < AT__N; t++)
		abuf_free(&b->t[t]);
}

int agent_batch_text(const struct agent_batch *b, struct abuf *out)
{
	int err = 0;

	for (int t = 0; !err && t < AT__N; t++)
		if (b->t[t].len)
			err = abuf_printf(out, "#%s\n", table_names[t]) ?:
			      abuf_add(out, b->t[t].p, b->t[t].len);
	return err;
}

int agent_batch_parse(const char *text, size_t len, const char *ret_tables[AT__N],
		      size_t ret_lens[AT__N])
{
	const char *p = text, *end = text + len;
	int cur = -1;

	for (int t = 0; t < AT__N; t++) {
		ret_tables[t] = NULL;
		ret_lens[t] = 0;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);

		if (!nl)
			return -EINVAL; /* every line ends: a cut file is not a batch */
		if (*p == '#') {
			cur = -1;
			for (int t = 0; t < AT__N; t++)
				if ((size_t)(nl - p - 1) == strlen(table_names[t]) &&
				    !memcmp(p + 1, table_names[t], nl - p - 1))
					cur = t;
			if (cur < 0 || ret_tables[cur])
				return -EINVAL;
			ret_tables[cur] = nl + 1;
		} else if (*p != '{' || cur < 0) {
			return -EINVAL;
		} else {
			ret_lens[cur] += nl + 1 - p;
		}
		p = nl + 1;
	}
	return 0;
}

uint64_t agent_batch_losses(const char *text, size_t len, const char *what)
{
	const char *tables[AT__N], *p, *end;
	size_t lens[AT__N];
	char key[128];
	uint64_t sum = 0;
	int n;

	n = snprintf(key, sizeof(key), "\"what\":\"%s\",\"count\":", what);
	if (n < 0 || (size_t)n >= sizeof(key) || agent_batch_parse(text, len, tables, lens))
		return 0;
	for (p = tables[AT_LOSSES], end = p + lens[AT_LOSSES]; p && p < end;) {
		const char *nl = memchr(p, '\n', end - p), *k = memmem(p, nl - p, key, n);

		if (k)
			sum += strtoull(k + n, NULL, 10);
		p = nl + 1;
	}
	return sum;
}
