// SPDX-License-Identifier: BSD-2-Clause
/* The agent's sinks and their sender thread: see sink.h. */
#include "fleet/sink.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fleet/agent_rows.h"
#include "fleet/clickhouse.h"
#include "base/log.h"
#include "base/util.h"

enum sink_kind { SINK_NDJSON, SINK_CLICKHOUSE };

struct sink {
	enum sink_kind kind;
	const char *spec;
	struct spool *sp;
	/* ndjson: whole intervals written with write(2); a regular file is cut back to where
	 * the interval began when one fails (a full disk), so it only ever holds whole ones */
	int fd;
	bool own_fd, seekable, append;
	bool closed; /* the reader of a pipe has gone (EPIPE): nothing more is sent */
	/* clickhouse */
	struct ch_config cfg;
	struct ch_client *ch;
	bool schema_pending; /* --create-schema not done yet */
	const struct sink_opts *o;
	/* the thread */
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool kicked, stopping;
	uint64_t stop_deadline; /* CLOCK_MONOTONIC ns */
	uint64_t end_by;	/* sink_end_by(): the sender's last moment; 0: not known yet */
	/* the sender's state: what was said last (a failure is said once) */
	int last_err;
	uint64_t spooled_since_fail;
	struct sink_stats st;
};

/* What is read of a ClickHouse answer at most (clickhouse.h's max_answer). */
#define SINK_ANSWER_MAX (64u << 10)

/*
 * The sender's time at the end is over: a request in flight stops (ch_client_set_cancel).
 * libcurl asks about once a second while nothing moves, so the answer is yes from 1 s before
 * the end: the request is over by then, not up to a second after it.
 */
static bool out_of_time(void *ctx)
{
	struct sink *k = ctx;
	uint64_t soon = now_ns(CLOCK_MONOTONIC) + NSEC_PER_SEC;
	bool over;

	pthread_mutex_lock(&k->lock);
	over = (k->stopping && soon >= k->stop_deadline) || (k->end_by && soon >= k->end_by);
	pthread_mutex_unlock(&k->lock);
	return over;
}

int sink_open(const struct sink_opts *o, struct spool *sp, struct sink **ret)
{
	struct sink *k = calloc(1, sizeof(*k));
	int err = 0;

	*ret = NULL;
	if (!k)
		return -ENOMEM;
	k->spec = o->spec;
	k->sp = sp;
	k->o = o;
	k->fd = -1;
	pthread_mutex_init(&k->lock, NULL);
	pthread_cond_init(&k->cond, NULL);
	if (!strncmp(o->spec, "ndjson:", 7) && o->spec[7]) {
		const char *path = o->spec + 7;

		struct stat st;

		k->kind = SINK_NDJSON;
		if (!strcmp(path, "-")) {
			k->fd = STDOUT_FILENO;
		} else {
			k->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
			k->own_fd = k->fd >= 0;
			if (k->fd < 0)
				err = -errno;
		}
		if (!err && !fstat(k->fd, &st) && S_ISREG(st.st_mode)) {
			int fl = fcntl(k->fd, F_GETFL);

			k->seekable = true;
			k->append = fl >= 0 && (fl & O_APPEND);
			/* where an interval begins is found so (a /proc file refuses it now) */
			if (lseek(k->fd, 0, k->append ? SEEK_END : SEEK_CUR) < 0)
				err = -errno;
		}
	} else if (!strncmp(o->spec, "clickhouse://", 13)) {
		k->kind = SINK_CLICKHOUSE;
		err = ch_url_parse(o->spec, &k->cfg) ?: ch_credentials_load(&k->cfg, o->password_file);
		if (!err) {
			/* every query names its tables DB.table: the session's database must
			 * exist before --create-schema has made DB */
			struct ch_config session = k->cfg;

			session.database = NULL;
			/* an INSERT's answer is empty, an error's first line is all that is used */
			session.max_answer = SINK_ANSWER_MAX;
			k->ch = ch_client_new(&session);
			if (!k->ch)
				err = -errno;
			else
				ch_client_set_cancel(k->ch, out_of_time, k);
		}
		k->schema_pending = o->create_schema;
	} else {
		err = -EINVAL;
	}
	if (err) {
		k->started = false;
		sink_close(k, 0, NULL);
		return err;
	}
	*ret = k;
	return 0;
}

static double ms_of(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1e3 + (b->tv_nsec - a->tv_nsec) / 1e6;
}

/* ---- the schema ---- */

void sink_free_statements(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* s with every "schedprof." replaced by "DB." and "DATABASE IF NOT EXISTS schedprof" too */
static char *rename_db(const char *s, const char *db)
{
	struct abuf b = { 0 };
	const char *p = s;

	while (*p) {
		const char *hit = strstr(p, "schedprof");

		if (!hit) {
			if (abuf_add(&b, p, strlen(p)))
				goto fail;
			break;
		}
		if (abuf_add(&b, p, hit - p) || abuf_add(&b, db, strlen(db)))
			goto fail;
		p = hit + strlen("schedprof");
	}
	return b.p ? b.p : strdup("");
fail:
	abuf_free(&b);
	return NULL;
}

char **sink_schema_statements(const char *schema_sql, const char *db, const char *ttl)
{
	struct abuf text = { 0 };
	const char *p = schema_sql;
	char **v = NULL, *all, *save = NULL, *tok;
	size_t n = 0, cap = 0;

	/* comments out: "--" to the end of the line */
	while (*p) {
		size_t len = strcspn(p, "\n");
		const char *c = memmem(p, len, "--", 2);

		if (abuf_add(&text, p, c ? (size_t)(c - p) : len) || abuf_add(&text, "\n", 1))
			goto fail;
		p += len + (p[len] == '\n');
	}
	all = text.p;
	for (tok = strtok_r(all, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		struct abuf st = { 0 };
		char *m, *r;

		while (*tok == '\n' || *tok == ' ' || *tok == '\t')
			tok++;
		if (!*tok)
			continue;
		m = strstr(tok, "/*TTL*/");
		if (abuf_add(&st, tok, m ? (size_t)(m - tok) : strlen(tok)) ||
		    (m && ttl && abuf_add(&st, ttl, strlen(ttl))) ||
		    (m && abuf_add(&st, m + 7, strlen(m + 7)))) {
			abuf_free(&st);
			goto fail;
		}
		r = rename_db(st.p, db);
		abuf_free(&st);
		if (!r || grow((void **)&v, &cap, n + 2, sizeof(*v))) {
			free(r);
			goto fail;
		}
		v[n++] = r;
		v[n] = NULL;
	}
	abuf_free(&text);
	return v;
fail:
	abuf_free(&text);
	sink_free_statements(v);
	return NULL;
}

/* Whether names (TabSeparated, one a line) holds name. */
static bool has_line(const char *names, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = names; p && (p = strstr(p, name)); p += n)
		if ((p == names || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

/*
 * To a table an older agent made, the columns added since (agent_added_columns[]), one ALTER
 * each: 18.16 has no ADD COLUMN IF NOT EXISTS, so the table's columns are asked first. On a
 * failure, r holds the server's reason.
 */
static int add_columns(struct sink *k, struct ch_response *r)
{
	char q[512];
	int err = 0;

	for (int t = 0; !err && t < AT__N; t++) {
		const char *table = agent_table_name(t);
		char *names = NULL;
		bool added = false;

		for (size_t i = 0; i < agent_nadded_columns; i++)
			added |= agent_added_columns[i].table == (enum agent_table)t;
		if (!added)
			continue;
		snprintf(q, sizeof(q), "SELECT name FROM system.columns WHERE database = '%s' AND "
				       "table = '%s' FORMAT TabSeparated", k->cfg.database, table);
		err = ch_query(k->ch, q, NULL, 0, r);
		if (err)
			break;
		names = r->body;
		r->body = NULL;
		ch_response_free(r);
		for (size_t i = 0; !err && i < agent_nadded_columns; i++) {
			const struct agent_column *c = &agent_added_columns[i];

			if (c->table != (enum agent_table)t || has_line(names, c->name))
				continue;
			snprintf(q, sizeof(q), "ALTER TABLE %s.%s ADD COLUMN %s %s", k->cfg.database,
				 table, c->name, c->type);
			err = ch_query(k->ch, q, NULL, 0, r);
			if (!err) {
				ch_response_free(r);
				ilog("%s: column %s added to %s.%s (a table of an older schedprof)",
				     k->spec, c->name, k->cfg.database, table);
			}
		}
		free(names);
	}
	return err;
}

static int create_schema(struct sink *k, struct ch_response *r)
{
	char *version = NULL, ttl[96];
	char **v;
	int err;

	err = ch_server_version(k->ch, &version, r);
	if (err)
		return err;
	ch_response_free(r);
	/* table TTL came with 19.6 (DateTime columns) */
	snprintf(ttl, sizeof(ttl), "TTL interval_end + INTERVAL %u DAY", k->o->ttl_days);
	v = sink_schema_statements(k->o->schema_sql, k->cfg.database,
				   k->o->ttl_days && ch_version_at_least(version, 19, 6) ? ttl : NULL);
	if (!v) {
		free(version);
		return -ENOMEM;
	}
	for (size_t i = 0; !err && v[i]; i++) {
		err = ch_query(k->ch, v[i], NULL, 0, r);
		if (!err)
			ch_response_free(r);
	}
	if (!err)
		err = add_columns(k, r);
	if (!err)
		ilog("%s: schema created or already there (server %s%s)", k->spec, version,
		     k->o->ttl_days && !ch_version_at_least(version, 19, 6) ?
			     ", no TTL before 19.6: drop old partitions" : "");
	sink_free_statements(v);
	free(version);
	return err;
}

/* ---- delivery ---- */

/* The interval's lines, each with its "table" first, into one buffer. */
static int ndjson_text(const char *tables[AT__N], const size_t lens[AT__N], struct abuf *b)
{
	char head[64];

	for (int t = 0; t < AT__N; t++) {
		const char *p = tables[t], *end = p + lens[t];
		int n = snprintf(head, sizeof(head), "{\"table\":\"%s\",", agent_table_name(t));

		while (p && p < end) {
			const char *nl = memchr(p, '\n', end - p);

			if (!nl) /* agent_batch_parse() gives whole lines */
				return -EINVAL;
			if (abuf_add(b, head, n) || abuf_add(b, p + 1, nl - p))
				return -ENOMEM;
			p = nl + 1;
		}
	}
	return 0;
}

static int send_ndjson(struct sink *k, const char *tables[AT__N], const size_t lens[AT__N])
{
	struct abuf b = { 0 };
	off_t good = -1;
	size_t off = 0;
	int err = ndjson_text(tables, lens, &b);

	if (!err && k->seekable) {
		good = lseek(k->fd, 0, k->append ? SEEK_END : SEEK_CUR);
		if (good < 0)
			err = -errno;
	}
	while (!err && off < b.len) {
		ssize_t w = write(k->fd, b.p + off, b.len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			err = w < 0 ? -errno : -EIO;
		else
			off += w;
	}
	abuf_free(&b);
	if (err && off && good >= 0) {
		/* part of the interval went in: cut it off, it is sent again whole */
		if (ftruncate(k->fd, good) || (!k->append && lseek(k->fd, good, SEEK_SET) < 0)) {
			wlog("%s: cannot cut off the %zu bytes of interval rows a failed write left "
			     "at offset %lld: %s: the file keeps that part of an interval",
			     k->spec, off, (long long)good, strerror(errno));
		} else {
			pthread_mutex_lock(&k->lock);
			k->st.cut_back++;
			pthread_mutex_unlock(&k->lock);
		}
	}
	return err;
}

static int send_clickhouse(struct sink *k, const char *tables[AT__N], const size_t lens[AT__N],
			   struct ch_response *r)
{
	char q[256];
	int err = 0;

	for (int t = 0; !err && t < AT__N; t++) {
		if (!lens[t])
			continue;
		snprintf(q, sizeof(q), "INSERT INTO %s.%s FORMAT JSONEachRow", k->cfg.database,
			 agent_table_name(t));
		err = ch_query(k->ch, q, tables[t], lens[t], r);
		if (!err)
			ch_response_free(r);
	}
	return err;
}

/* One failure, said once per kind of failure (not per retry). */
static void say_failure(struct sink *k, int err, const char *why, uint64_t seq)
{
	uint64_t bytes;
	size_t n = spool_count(k->sp, &bytes);

	k->st.failures++;
	/*
	 * Said once. The tracing thread turns warnings off while it reads an interval (its
	 * losses are said once, at the end): then the next retry says it.
	 */
	if (err == k->last_err || log_get_level() < LOG_WARN)
		return;
	k->last_err = err;
	if (err == -EACCES)
		wlog("%s: the server refused the credentials of user '%s' (%s): intervals stay in "
		     "the spool (%zu now), retrying", k->spec, k->cfg.user ? k->cfg.user : "default",
		     why, n);
	else
		wlog("%s: cannot send interval %llu: %s%s%s%s: intervals stay in the spool (%zu now), "
		     "retrying", k->spec, (unsigned long long)seq, strerror(-err), why[0] ? ": " : "",
		     why, strstr(why, "Unknown field") ? " (a table of an older schedprof: start the "
		     "agent once with --create-schema, which adds the columns)" : "", n);
}

static bool no_rows(const size_t lens[AT__N])
{
	for (int t = 0; t < AT__N; t++)
		if (lens[t])
			return false;
	return true;
}

/* Delivers the oldest interval: 0, -ENOENT (none) or the failure. */
static int send_one(struct sink *k)
{
	struct ch_response r = { 0 };
	const char *tables[AT__N];
	size_t lens[AT__N], len;
	struct timespec a, b;
	uint64_t seq;
	char *text;
	int err;

	err = spool_take(k->sp, &seq, &text, &len);
	if (err == -ENOENT)
		return err;
	if (err || agent_batch_parse(text, len, tables, lens)) {
		/* unreadable or not a batch (cut, edited): removed, or it would block the rest */
		pthread_mutex_lock(&k->lock);
		k->st.corrupt++;
		pthread_mutex_unlock(&k->lock);
		wlog("spool: interval %llu %s: removed, counted in table losses as "
		     "spool.unreadable_intervals", (unsigned long long)seq,
		     err == -ENODATA ? "is empty" : err == -EBADMSG ? "is not gzip" :
		     err ? strerror(-err) : "is not a batch (cut or edited)");
		if (!err)
			spool_done(k->sp, seq, true);
		free(text);
		return 0;
	}
	/* --create-schema first, outside the flush's time */
	if (k->schema_pending) {
		err = create_schema(k, &r);
		if (err) {
			spool_done(k->sp, seq, false);
			say_failure(k, err, r.error, seq);
			ch_response_free(&r);
			free(text);
			return err;
		}
		k->schema_pending = false;
		ch_response_free(&r);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	err = k->kind == SINK_NDJSON ? send_ndjson(k, tables, lens)
				     : send_clickhouse(k, tables, lens, &r);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (err == -EPIPE && k->kind == SINK_NDJSON) {
		/*
		 * The reader has gone (ndjson:- | head): the part of this interval it took cannot
		 * be taken back, and sending the interval again would give its first rows twice;
		 * it leaves the spool. The rest stays for the next start.
		 */
		spool_done(k->sp, seq, true);
		pthread_mutex_lock(&k->lock);
		k->closed = true;
		pthread_mutex_unlock(&k->lock);
		dlog("%s: the reader has gone, in interval %llu", k->spec, (unsigned long long)seq);
		free(text);
		return err;
	}
	spool_done(k->sp, seq, !err);
	if (err) {
		say_failure(k, err, k->kind == SINK_NDJSON ? "" : r.error, seq);
	} else {
		double ms = ms_of(&a, &b);

		pthread_mutex_lock(&k->lock);
		k->st.sent++;
		k->st.flush_sum_ms += ms;
		if (ms > k->st.flush_max_ms)
			k->st.flush_max_ms = ms;
		pthread_mutex_unlock(&k->lock);
		dlog("%s: interval %llu sent in %.1f ms", k->spec, (unsigned long long)seq, ms);
		/* an interval without rows asks nothing of the sink: no sign that it works */
		if (k->last_err && !no_rows(lens)) {
			nlog("%s: sending again (interval %llu delivered; %zu still in the spool)",
			     k->spec, (unsigned long long)seq, spool_count(k->sp, NULL));
			k->last_err = 0;
		}
	}
	ch_response_free(&r);
	free(text);
	return err;
}

static void *sender(void *arg)
{
	struct sink *k = arg;
	unsigned int backoff_ms = 0;

	for (;;) {
		struct timespec ts;
		bool stopping;
		int err;

		pthread_mutex_lock(&k->lock);
		k->kicked = false;
		stopping = k->stopping;
		pthread_mutex_unlock(&k->lock);
		/* everything in the spool, oldest first; a failure waits for the retry */
		do {
			err = send_one(k);
			pthread_mutex_lock(&k->lock);
			stopping = k->stopping;
			pthread_mutex_unlock(&k->lock);
		} while (!err && (!stopping || now_ns(CLOCK_MONOTONIC) < k->stop_deadline));
		if (k->closed)
			break;
		if (stopping && (err || now_ns(CLOCK_MONOTONIC) >= k->stop_deadline))
			break;
		backoff_ms = err == -ENOENT ? 0 : backoff_ms ? backoff_ms * 2 : 1000;
		if (backoff_ms > 30000)
			backoff_ms = 30000;
		pthread_mutex_lock(&k->lock);
		if (!k->kicked && !k->stopping) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			if (backoff_ms) {
				ts.tv_sec += backoff_ms / 1000;
				ts.tv_nsec += (backoff_ms % 1000) * 1000000L;
				if (ts.tv_nsec >= 1000000000L) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000L;
				}
				pthread_cond_timedwait(&k->cond, &k->lock, &ts);
			} else {
				pthread_cond_wait(&k->cond, &k->lock);
			}
		}
		/* a kick during a retry's wait sends at once: the server may be back */
		pthread_mutex_unlock(&k->lock);
	}
	return NULL;
}

int sink_start(struct sink *k)
{
	pthread_condattr_t ca;
	int err;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_destroy(&k->cond);
	pthread_cond_init(&k->cond, &ca);
	pthread_condattr_destroy(&ca);
	err = -pthread_create(&k->thread, NULL, sender, k);
	k->started = !err;
	return err;
}

void sink_kick(struct sink *k)
{
	pthread_mutex_lock(&k->lock);
	k->kicked = true;
	pthread_cond_signal(&k->cond);
	pthread_mutex_unlock(&k->lock);
}

void sink_end_by(struct sink *k, unsigned int ms)
{
	pthread_mutex_lock(&k->lock);
	k->end_by = now_ns(CLOCK_MONOTONIC) + ms * 1000000ULL;
	pthread_mutex_unlock(&k->lock);
}

bool sink_closed(struct sink *k)
{
	bool closed;

	pthread_mutex_lock(&k->lock);
	closed = k->closed;
	pthread_mutex_unlock(&k->lock);
	return closed;
}

void sink_get_stats(struct sink *k, struct sink_stats *ret)
{
	pthread_mutex_lock(&k->lock);
	*ret = k->st;
	pthread_mutex_unlock(&k->lock);
}

size_t sink_close(struct sink *k, unsigned int wait_ms, struct sink_stats *ret_stats)
{
	size_t left;

	if (!k)
		return 0;
	if (k->started) {
		pthread_mutex_lock(&k->lock);
		k->stopping = true;
		k->stop_deadline = now_ns(CLOCK_MONOTONIC) + wait_ms * 1000000ULL;
		if (k->end_by && k->end_by < k->stop_deadline)
			k->stop_deadline = k->end_by;
		pthread_cond_signal(&k->cond);
		pthread_mutex_unlock(&k->lock);
		pthread_join(k->thread, NULL);
	}
	left = k->sp ? spool_count(k->sp, NULL) : 0;
	if (ret_stats)
		*ret_stats = k->st;
	if (k->own_fd)
		close(k->fd);
	ch_client_free(k->ch);
	ch_config_free(&k->cfg);
	pthread_cond_destroy(&k->cond);
	pthread_mutex_destroy(&k->lock);
	free(k);
	return left;
}
