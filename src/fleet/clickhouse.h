/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A small ClickHouse client over its HTTP interface (libcurl): POST one query, optionally with a
 * body (e.g. JSONEachRow rows for an INSERT), and get the status and the response body back.
 * Works with every server since 18.16 (Debian 12's): the query goes in the URL, the database in
 * the `database` parameter, credentials as HTTP basic auth. Never prints: errors are returned
 * (negative errno) with a one-line reason in the response.
 *
 * libcurl is not linked but loaded (dlopen) by the first ch_client_new(): commands that never
 * talk to ClickHouse do not map it and the dozen libraries it pulls in (TLS, Kerberos, LDAP).
 */
#ifndef SCHEDPROF_CLICKHOUSE_H
#define SCHEDPROF_CLICKHOUSE_H

#include <stdbool.h>
#include <stddef.h>

/* Where the credentials come from when no file is given. */
#define CH_ENV_USER "SCHEDPROF_CLICKHOUSE_USER"
#define CH_ENV_PASSWORD "SCHEDPROF_CLICKHOUSE_PASSWORD"
/* The library loaded (package libcurl4); libcurl-gnutls.so.4 is tried when it is missing. */
#define CH_LIBCURL "libcurl.so.4"
/* Another libcurl to load instead (a file name or path; ignored in set-uid programs). */
#define CH_ENV_LIBCURL "SCHEDPROF_LIBCURL"

struct ch_config {
	char *host;		/* "127.0.0.1", "ch1.example" or "[::1]" as given */
	unsigned int port;	/* HTTP port (8123) */
	char *database;		/* "schedprof"; NULL: the server's default */
	char *user;		/* NULL: the server's "default" user */
	char *password;		/* NULL: none */
	long connect_timeout_ms; /* 0: 2000 */
	long timeout_ms;	/* whole request; 0: 10000 */
	size_t max_answer;	/* the most of an answer's body read; 0: CH_ANSWER_MAX */
};

/*
 * What is read of an answer at most (16 MiB: a fleet's summed rows for report --from): a
 * server that answers more (a 200 MB error page) costs no more memory than that.
 */
#define CH_ANSWER_MAX (16u << 20)

/* Parses "clickhouse://HOST[:PORT][/DB]" (port 8123, database "schedprof" when absent) into
 * cfg (zeroed first). -EINVAL on anything else, e.g. user:password@ in the URL: credentials
 * never go on the command line. */
int ch_url_parse(const char *url, struct ch_config *cfg);

/* Credentials: user from $SCHEDPROF_CLICKHOUSE_USER; password from password_file (first line,
 * trailing newline stripped) when given, else from $SCHEDPROF_CLICKHOUSE_PASSWORD. A file that
 * cannot be read is an error (negative errno). Replaces what cfg held. */
int ch_credentials_load(struct ch_config *cfg, const char *password_file);

void ch_config_free(struct ch_config *cfg);

struct ch_response {
	long status;		/* HTTP status; 0 when no answer came */
	char *body;		/* NUL-terminated response body (may be empty); NULL when none */
	size_t len;
	char error[256];	/* one line: why it failed (transport or the server's first line) */
	size_t max;		/* the client's max_answer, while the request runs */
	bool too_large;		/* the body went past it: the transfer was stopped there */
};

void ch_response_free(struct ch_response *r);

struct ch_client;

/*
 * NULL with errno set: ENOMEM, EINVAL for a config without host/port, ELIBACC when libcurl
 * cannot be loaded (ch_library_error() says why). Copies cfg.
 */
struct ch_client *ch_client_new(const struct ch_config *cfg);
/*
 * Why libcurl could not be loaded, one line naming the library and the package, e.g.
 * "cannot load libcurl.so.4 (package libcurl4): libcurl.so.4: cannot open shared object
 * file: No such file or directory"; NULL when it was loaded or not tried yet.
 */
const char *ch_library_error(void);
void ch_client_free(struct ch_client *c);

/*
 * A request in flight is stopped (-ECANCELED) as soon as cancel(ctx) returns true; libcurl
 * asks about once a second while nothing moves, more often otherwise. Called from the
 * thread that runs ch_query().
 */
void ch_client_set_cancel(struct ch_client *c, bool (*cancel)(void *ctx), void *ctx);

/* POSTs query (in the URL) with body (len bytes; NULL: none). Returns 0 with r->status 200, or:
 *   -ECONNREFUSED / -EHOSTUNREACH / -ETIMEDOUT / -EIO  no HTTP answer (r->error says why);
 *   -EACCES   the server refused the credentials (401/403, or its authentication error 516/192);
 *   -EBADMSG  any other non-200 answer (r->error holds the first line of the server's message);
 *   -EFBIG    a 200 answer longer than max_answer (r->error says so);
 *   -ECANCELED  stopped by the cancel callback.
 * r is filled in every case and must be freed with ch_response_free(). */
int ch_query(struct ch_client *c, const char *query, const char *body, size_t len,
	     struct ch_response *r);

/* The server's version ("18.16.1"); -errno as ch_query. *ret_version is malloc'ed. */
int ch_server_version(struct ch_client *c, char **ret_version, struct ch_response *r);

/* Whether version "A.B..." is at least major.minor. */
bool ch_version_at_least(const char *version, int major, int minor);

#endif
