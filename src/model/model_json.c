// SPDX-License-Identifier: BSD-2-Clause
/*
 * The saved-run reader (see model_json.h): walks the JSON tree of json_reader.h and rebuilds
 * the run model view by view, through the schema that the writer uses too (schema.h, view.h). Every failure names the key path where it happened, so a user
 * who edited or truncated a file by hand can find the spot.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/json_reader.h"
#include "model/model_json.h"
#include "model/strpool.h"
#include "model/schema.h"
#include "base/util.h"
#include "model/view.h"

/* The schema name first: a file of another kind or version says so before anything else. */
static int read_schema(struct sp_reader *r, const struct json_value *doc)
{
	const struct json_value *schema = json_get(doc, "schema");
	size_t m;
	int err;

	if (json_type(doc) != JSON_OBJECT)
		return sp_reader_fail(r, "not a schedprof run: the document is %s, not an object",
				      sp_json_type_name(json_type(doc)));
	if (!schema)
		return sp_reader_fail(r, "not a schedprof run: no \"schema\" key");
	m = sp_reader_push_key(r, "schema");
	if (json_type(schema) != JSON_STRING)
		err = sp_reader_fail(r, "expected a string, not %s",
				     sp_json_type_name(json_type(schema)));
	else if (strcmp(json_str(schema), SP_SCHEMA))
		err = sp_reader_fail(r, "\"%.40s\" is not supported (this schedprof reads \"%s\")",
				     json_str(schema), SP_SCHEMA);
	else
		err = 0;
	sp_reader_pop(r, m);
	return err;
}

static int read_run(struct sp_reader *r, const struct json_value *doc, struct sp_run *run)
{
	int err = read_schema(r, doc) ?: sp_schema_read(r, &sp_run_fields, doc, run);

	/* every view section is an object when present, checked before any is read */
	for (size_t i = 0; !err && i < sp_nviews; i++) {
		const struct json_value *o = json_get(doc, sp_views[i]->name);

		if (o && json_type(o) != JSON_OBJECT) {
			size_t m = sp_reader_push_key(r, sp_views[i]->name);

			err = sp_reader_fail(r, "expected an object");
			sp_reader_pop(r, m);
		}
	}
	for (size_t i = 0; !err && i < sp_nviews; i++) {
		const struct sp_view_ops *v = sp_views[i];
		const struct json_value *o = json_get(doc, v->name);
		size_t m;

		if (!o)
			continue;
		*(bool *)((char *)run + v->present_off) = true;
		m = sp_reader_push_key(r, v->name);
		err = sp_schema_read(r, v->schema, o, sp_view_data(run, v));
		sp_reader_pop(r, m);
	}
	return err;
}

int sp_run_from_json(const char *buf, size_t len, struct sp_run *ret_run, char *errbuf,
		     size_t errlen)
{
	struct sp_reader r = { .err = errbuf, .errlen = errlen };
	struct json_value *doc;
	int err;

	sp_run_init(ret_run);
	if (errbuf && errlen)
		errbuf[0] = '\0';
	doc = json_parse(buf, len, errbuf, errlen);
	if (!doc)
		return errno == ENOMEM ? -ENOMEM : -EINVAL;
	r.pool = ret_run->strings = sp_strpool_new();
	err = r.pool ? read_run(&r, doc, ret_run) : -ENOMEM;
	json_free(doc);
	if (err == -ENOMEM && errbuf && errlen)
		snprintf(errbuf, errlen, "out of memory");
	return err;
}

/* Reads all of fd (a file or a pipe) into a malloc'd buffer. */
static int read_all(int fd, char **ret_buf, size_t *ret_len)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;

	for (;;) {
		ssize_t n;

		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 1 << 16;
			char *p;

			if (cap >= SP_RUN_JSON_MAX_SIZE + 1) {
				free(buf);
				return -EFBIG;
			}
			if (ncap > SP_RUN_JSON_MAX_SIZE + 1)
				ncap = SP_RUN_JSON_MAX_SIZE + 1;
			p = realloc(buf, ncap);
			if (!p) {
				free(buf);
				return -ENOMEM;
			}
			buf = p;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			free(buf);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > SP_RUN_JSON_MAX_SIZE) {
		free(buf);
		return -EFBIG;
	}
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

int sp_run_load_json(const char *path, struct sp_run *ret_run, char *errbuf, size_t errlen)
{
	bool is_stdin = !strcmp(path, "-");
	char *buf = NULL;
	size_t len = 0;
	struct stat st;
	int fd, err;

	sp_run_init(ret_run);
	fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		err = -EISDIR;
	else
		err = read_all(fd, &buf, &len);
	if (!is_stdin)
		close(fd);
out:
	if (err) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s",
				 err == -EFBIG ? "file too large for a saved run" : strerror(-err));
		return err;
	}
	if (len == 0) {
		free(buf);
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "empty file, not a saved run");
		return -EINVAL;
	}
	err = sp_run_from_json(buf, len, ret_run, errbuf, errlen);
	free(buf);
	return err;
}
