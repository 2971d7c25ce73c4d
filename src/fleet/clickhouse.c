// SPDX-License-Identifier: BSD-2-Clause
/*
 * ClickHouse over HTTP with libcurl: see clickhouse.h. libcurl is dlopen()ed at the first
 * client, not linked: with its TLS, Kerberos and LDAP libraries it is half of the binary's
 * resident shared-library pages, and only the fleet commands need it. Its header still gives
 * the function types, so a change of signature breaks the build rather than the call.
 */
#include "fleet/clickhouse.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

struct ch_client {
	struct ch_config cfg;
	CURL *curl;		/* reused: keeps the connection alive between intervals */
	bool (*cancel)(void *ctx);
	void *cancel_ctx;
};

/* The sonames tried in turn: Debian's libcurl4 (OpenSSL), then its GnuTLS build (same ABI). */
static const char *const curl_sonames[] = { CH_LIBCURL, "libcurl-gnutls.so.4" };

/* libcurl's functions, filled once by curl_load() */
static struct {
	void *lib;
	bool ok;
	char why[320];
	__typeof__(curl_global_init) *global_init;
	__typeof__(curl_easy_init) *easy_init;
	__typeof__(curl_easy_setopt) *easy_setopt;
	__typeof__(curl_easy_perform) *easy_perform;
	__typeof__(curl_easy_getinfo) *easy_getinfo;
	__typeof__(curl_easy_reset) *easy_reset;
	__typeof__(curl_easy_cleanup) *easy_cleanup;
	__typeof__(curl_easy_escape) *easy_escape;
	__typeof__(curl_easy_strerror) *easy_strerror;
	__typeof__(curl_free) *free;
} cl;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

#define CURL_FN(name, member) { name, offsetof(__typeof__(cl), member) }
static const struct {
	const char *name;
	size_t off; /* of the function pointer in cl */
} curl_fns[] = {
	CURL_FN("curl_global_init", global_init),   CURL_FN("curl_easy_init", easy_init),
	CURL_FN("curl_easy_setopt", easy_setopt),   CURL_FN("curl_easy_perform", easy_perform),
	CURL_FN("curl_easy_getinfo", easy_getinfo), CURL_FN("curl_easy_reset", easy_reset),
	CURL_FN("curl_easy_cleanup", easy_cleanup), CURL_FN("curl_easy_escape", easy_escape),
	CURL_FN("curl_easy_strerror", easy_strerror), CURL_FN("curl_free", free),
};

/* The library named by $SCHEDPROF_LIBCURL, else the first of curl_sonames that loads. */
static void *curl_open(void)
{
	const char *env = secure_getenv(CH_ENV_LIBCURL);
	bool own = env && *env;
	void *lib = NULL;

	for (size_t i = 0; !lib && i < (own ? 1 : ARRAY_SIZE(curl_sonames)); i++) {
		const char *name = own ? env : curl_sonames[i];
		const char *err;

		lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
		/* the first one's reason, copied before the next dlopen() reuses it */
		if (!lib && !cl.why[0] && (err = dlerror()))
			snprintf(cl.why, sizeof(cl.why), "cannot load %s (package libcurl4): %s",
				 name, err);
	}
	if (lib)
		cl.why[0] = '\0';
	return lib;
}

static void curl_load(void)
{
	const char *missing = NULL;

	cl.lib = curl_open();
	if (!cl.lib)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(curl_fns); i++) {
		void *f = dlsym(cl.lib, curl_fns[i].name);

		if (!f && !missing)
			missing = curl_fns[i].name;
		memcpy((char *)&cl + curl_fns[i].off, &f, sizeof(f));
	}
	if (missing) {
		snprintf(cl.why, sizeof(cl.why), "the libcurl loaded has no function %s", missing);
		return;
	}
	if (cl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(cl.why, sizeof(cl.why), "libcurl could not be initialized");
		return;
	}
	cl.ok = true;
}

const char *ch_library_error(void)
{
	return cl.why[0] ? cl.why : NULL;
}

void ch_config_free(struct ch_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->host);
	free(cfg->database);
	free(cfg->user);
	if (cfg->password) {
		explicit_bzero(cfg->password, strlen(cfg->password));
		free(cfg->password);
	}
	memset(cfg, 0, sizeof(*cfg));
}

/* a database or host name: letters, digits, '_', '-', '.' (and ':' inside brackets) */
static bool name_ok(const char *s, size_t n, bool host)
{
	size_t i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++) {
		char ch = s[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '_' || (host && (ch == '-' || ch == '.')))
			continue;
		return false;
	}
	return true;
}

int ch_url_parse(const char *url, struct ch_config *cfg)
{
	static const char scheme[] = "clickhouse://";
	const char *h, *end, *p, *db;
	size_t hlen;
	unsigned long port = 8123;

	memset(cfg, 0, sizeof(*cfg));
	if (!url || strncmp(url, scheme, sizeof(scheme) - 1) != 0)
		return -EINVAL;
	h = url + sizeof(scheme) - 1;
	db = strchr(h, '/');
	end = db ? db : h + strlen(h);
	if (memchr(h, '@', end - h))
		return -EINVAL; /* user:password@ would put the password on the command line */
	if (*h == '[') { /* [v6]:port */
		const char *rb = memchr(h, ']', end - h);
		size_t i;

		if (!rb || rb == h + 1)
			return -EINVAL;
		for (i = 1; h + i < rb; i++)
			if (!strchr("0123456789abcdefABCDEF:.", h[i]))
				return -EINVAL;
		p = rb + 1;
		hlen = p - h;
	} else {
		p = memchr(h, ':', end - h);
		if (!p)
			p = end;
		hlen = p - h;
		if (!name_ok(h, hlen, true))
			return -EINVAL;
	}
	if (p < end) {
		char *e;

		if (*p != ':' || p + 1 == end)
			return -EINVAL;
		errno = 0;
		port = strtoul(p + 1, &e, 10);
		if (errno || e != end || port == 0 || port > 65535)
			return -EINVAL;
	}
	if (db && db[1] && !name_ok(db + 1, strlen(db + 1), false))
		return -EINVAL;
	cfg->host = strndup(h, hlen);
	cfg->database = strdup(db && db[1] ? db + 1 : "schedprof");
	cfg->port = port;
	if (!cfg->host || !cfg->database) {
		ch_config_free(cfg);
		return -ENOMEM;
	}
	return 0;
}

static int set_secret(char **dst, const char *v)
{
	if (*dst) {
		explicit_bzero(*dst, strlen(*dst));
		free(*dst);
		*dst = NULL;
	}
	return xstrdup_to(dst, v);
}

int ch_credentials_load(struct ch_config *cfg, const char *password_file)
{
	const char *u = getenv(CH_ENV_USER);
	char buf[512];
	int err;

	err = set_secret(&cfg->user, u && *u ? u : NULL);
	if (err)
		return err;
	if (password_file) {
		FILE *f = fopen(password_file, "re");
		size_t n;

		if (!f)
			return -errno;
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		err = ferror(f) ? -EIO : 0;
		fclose(f);
		if (err)
			return err;
		n = strcspn(buf, "\r\n");
		buf[n] = '\0';
		err = set_secret(&cfg->password, buf);
		explicit_bzero(buf, sizeof(buf));
		return err;
	}
	u = getenv(CH_ENV_PASSWORD);
	return set_secret(&cfg->password, u);
}

struct ch_client *ch_client_new(const struct ch_config *cfg)
{
	struct ch_client *c;

	if (!cfg || !cfg->host || !cfg->port) {
		errno = EINVAL;
		return NULL;
	}
	pthread_once(&curl_once, curl_load);
	if (!cl.ok) {
		errno = ELIBACC;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cfg = *cfg;
	c->cfg.host = strdup(cfg->host);
	c->cfg.database = NULL;
	c->cfg.user = NULL;
	c->cfg.password = NULL;
	if (!c->cfg.host || xstrdup_to(&c->cfg.database, cfg->database) ||
	    xstrdup_to(&c->cfg.user, cfg->user) || xstrdup_to(&c->cfg.password, cfg->password))
		goto fail;
	if (!c->cfg.connect_timeout_ms)
		c->cfg.connect_timeout_ms = 2000;
	if (!c->cfg.timeout_ms)
		c->cfg.timeout_ms = 10000;
	if (!c->cfg.max_answer)
		c->cfg.max_answer = CH_ANSWER_MAX;
	c->curl = cl.easy_init();
	if (!c->curl)
		goto fail;
	return c;
fail:
	ch_client_free(c);
	errno = ENOMEM;
	return NULL;
}

void ch_client_free(struct ch_client *c)
{
	if (!c)
		return;
	if (c->curl)
		cl.easy_cleanup(c->curl);
	ch_config_free(&c->cfg);
	free(c);
}

void ch_client_set_cancel(struct ch_client *c, bool (*cancel)(void *ctx), void *ctx)
{
	c->cancel = cancel;
	c->cancel_ctx = ctx;
}

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct ch_client *c = user;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return c->cancel(c->cancel_ctx) ? 1 : 0;
}

void ch_response_free(struct ch_response *r)
{
	if (!r)
		return;
	free(r->body);
	r->body = NULL;
	r->len = 0;
}

/* An error answer is read up to this much: its first line is all that is used. */
#define CH_ERROR_ANSWER_MAX (64u << 10)

struct answer {
	struct ch_response *r;
	CURL *h;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *user)
{
	struct answer *a = user;
	struct ch_response *r = a->r;
	size_t n = size * nmemb;
	long status = 0;
	char *b;

	/* once, as the body passes the error bound: is it an error's? */
	if (r->len <= CH_ERROR_ANSWER_MAX && n > CH_ERROR_ANSWER_MAX - r->len &&
	    cl.easy_getinfo(a->h, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK && status != 200) {
		r->too_large = true;
		return 0;
	}
	if (n > r->max - r->len) {
		r->too_large = true;
		return 0; /* stops the transfer: CURLE_WRITE_ERROR */
	}
	b = realloc(r->body, r->len + n + 1);
	if (!b)
		return 0; /* curl fails the transfer: CURLE_WRITE_ERROR */
	memcpy(b + r->len, ptr, n);
	r->len += n;
	b[r->len] = '\0';
	r->body = b;
	return n;
}

static int curl_errno(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_OUT_OF_MEMORY:
	case CURLE_WRITE_ERROR:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

/* the server's first line, e.g. "Code: 193, e.displayText() = DB::Exception: Wrong password" */
static void first_line(struct ch_response *r)
{
	size_t n;

	if (!r->body || !r->len) {
		snprintf(r->error, sizeof(r->error), "HTTP status %ld", r->status);
		return;
	}
	n = strcspn(r->body, "\r\n");
	if (n >= sizeof(r->error))
		n = sizeof(r->error) - 1;
	memcpy(r->error, r->body, n);
	r->error[n] = '\0';
}

static bool auth_failed(const struct ch_response *r)
{
	/* 192 UNKNOWN_USER, 193 WRONG_PASSWORD, 194 REQUIRED_PASSWORD, 516 AUTHENTICATION_FAILED */
	static const char *const codes[] = { "Code: 192,", "Code: 193,", "Code: 194,", "Code: 516," };
	size_t i;

	if (r->status == 401 || r->status == 403)
		return true;
	for (i = 0; r->body && i < sizeof(codes) / sizeof(codes[0]); i++)
		if (strncmp(r->body, codes[i], strlen(codes[i])) == 0)
			return true;
	return false;
}

int ch_query(struct ch_client *c, const char *query, const char *body, size_t len,
	     struct ch_response *r)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	char *q = NULL, *url = NULL;
	CURL *h = c->curl;
	struct answer a = { r, h };
	CURLcode rc;
	int err = 0;

	memset(r, 0, sizeof(*r));
	r->max = c->cfg.max_answer;
	q = cl.easy_escape(h, query, 0);
	if (!q || asprintf(&url, "http://%s:%u/?database=%s&query=%s", c->cfg.host, c->cfg.port,
			   c->cfg.database ? c->cfg.database : "default", q) < 0) {
		url = NULL;
		err = -ENOMEM;
		snprintf(r->error, sizeof(r->error), "out of memory");
		goto out;
	}
	cl.easy_reset(h);
	cl.easy_setopt(h, CURLOPT_URL, url);
	cl.easy_setopt(h, CURLOPT_POST, 1L);
	cl.easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
	cl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
	cl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	cl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->cfg.connect_timeout_ms);
	cl.easy_setopt(h, CURLOPT_TIMEOUT_MS, c->cfg.timeout_ms);
	cl.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	cl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	cl.easy_setopt(h, CURLOPT_WRITEDATA, &a);
	cl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
	if (c->cancel) {
		cl.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
		cl.easy_setopt(h, CURLOPT_XFERINFODATA, c);
		cl.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	}
	if (c->cfg.user || c->cfg.password) {
		cl.easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		cl.easy_setopt(h, CURLOPT_USERNAME, c->cfg.user ? c->cfg.user : "default");
		cl.easy_setopt(h, CURLOPT_PASSWORD, c->cfg.password ? c->cfg.password : "");
	}
	rc = cl.easy_perform(h);
	if (rc == CURLE_WRITE_ERROR && r->too_large) {
		/* an error's first line is all that is used of it; rows must come whole */
		cl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
		if (r->status && r->status != 200) {
			first_line(r);
			err = auth_failed(r) ? -EACCES : -EBADMSG;
		} else {
			bool mib = r->max >= (1u << 20);

			snprintf(r->error, sizeof(r->error), "the answer is larger than %zu %s, the "
				 "most that is read of one", mib ? r->max >> 20 : r->max >> 10,
				 mib ? "MiB" : "KiB");
			err = -EFBIG;
		}
		goto out;
	}
	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		snprintf(r->error, sizeof(r->error), "stopped: no more time to send");
		err = -ECANCELED;
		goto out;
	}
	if (rc != CURLE_OK) {
		err = curl_errno(rc);
		snprintf(r->error, sizeof(r->error), "%s", errbuf[0] ? errbuf : cl.easy_strerror(rc));
		goto out;
	}
	cl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->status != 200) {
		first_line(r);
		err = auth_failed(r) ? -EACCES : -EBADMSG;
	}
out:
	/* the password must not linger in the handle between requests */
	cl.easy_setopt(h, CURLOPT_PASSWORD, "");
	if (q)
		cl.free(q);
	free(url);
	return err;
}

int ch_server_version(struct ch_client *c, char **ret_version, struct ch_response *r)
{
	int err = ch_query(c, "SELECT version()", NULL, 0, r);
	size_t n;

	*ret_version = NULL;
	if (err)
		return err;
	n = r->body ? strcspn(r->body, "\r\n") : 0;
	if (!n) {
		snprintf(r->error, sizeof(r->error), "empty answer to SELECT version()");
		return -EBADMSG;
	}
	*ret_version = strndup(r->body, n);
	return *ret_version ? 0 : -ENOMEM;
}

bool ch_version_at_least(const char *version, int major, int minor)
{
	int a = 0, b = 0;

	if (!version || sscanf(version, "%d.%d", &a, &b) < 1)
		return false;
	return a > major || (a == major && b >= minor);
}
