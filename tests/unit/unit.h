/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the unit tests share: the Check runner of a main(), a fixture run loaded or a test
 * failed, a run rendered into memory, and stderr/stdout captured. Included by tests/unit/LAYER/test_*.c as
 * "../unit.h"; every function is static, each test program takes what it uses.
 */
#ifndef SCHEDPROF_TEST_UNIT_H
#define SCHEDPROF_TEST_UNIT_H

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "model/model_json.h"
#include "format/render.h"

#define FIX(name) FIXTURES_DIR "/" name

/* How many times slower the sanitizers run the code: speed tests' bounds widen by it. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLOWDOWN 5
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define SLOWDOWN 5
#endif
#endif
#ifndef SLOWDOWN
#define SLOWDOWN 1
#endif

/* A new empty directory /tmp/sp_TAG_XXXXXX, its path into dir (len bytes). */
static inline void unit_tmpdir_make(char *dir, size_t len, const char *tag)
{
	ck_assert_int_lt(snprintf(dir, len, "/tmp/sp_%s_XXXXXX", tag), (int)len);
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* Removes dir and the files in it (a test's directory holds no subdirectory). */
static inline void unit_tmpdir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}

/* Runs s; the exit status of main. */
static inline int unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Loads a saved run, or fails the test with the reader's message. */
static inline void unit_load(const char *path, struct sp_run *run)
{
	char err[256];
	int rc = sp_run_load_json(path, run, err, sizeof(err));

	ck_assert_msg(rc == 0, "%s: %d: %s", path, rc, err);
}

/* The run rendered with o (render_run must succeed), malloc'd; its length in *ret_len. */
static inline char *unit_render(const struct sp_run *run, const struct render_opts *o,
				size_t *ret_len)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(render_run(run, o, m), 0);
	ck_assert_int_eq(fclose(m), 0);
	if (ret_len)
		*ret_len = len;
	return buf;
}

/* The stack formats' options of the tests: 20 rows, 3 stacks, format and value given. */
static inline char *unit_render_fmt(const struct sp_run *run, enum sp_format format,
				    unsigned int views, enum sp_value value, size_t *ret_len)
{
	struct render_opts o = { .format = format, .views = views, .nrows = 20, .nstacks = 3,
				 .value = value };

	return unit_render(run, &o, ret_len);
}

/* stderr and stdout redirected into temporary files between capture_start and capture_end */
struct capture {
	FILE *err, *out;
	int saved_err, saved_out;
};

static inline void capture_start(struct capture *c)
{
	fflush(stderr);
	fflush(stdout);
	c->err = tmpfile();
	c->out = tmpfile();
	ck_assert(c->err && c->out);
	c->saved_err = dup(STDERR_FILENO);
	c->saved_out = dup(STDOUT_FILENO);
	ck_assert(c->saved_err >= 0 && c->saved_out >= 0);
	ck_assert_int_ge(dup2(fileno(c->err), STDERR_FILENO), 0);
	ck_assert_int_ge(dup2(fileno(c->out), STDOUT_FILENO), 0);
}

static inline char *capture_slurp(FILE *f)
{
	long n;
	char *s;

	fseek(f, 0, SEEK_END);
	n = ftell(f);
	s = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(s);
	rewind(f);
	ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return s;
}

/*
 * Restores stderr and stdout; what went to stderr (malloc'd), and to stdout in *ret_out;
 * ret_out NULL: stdout must have got nothing.
 */
static inline char *capture_end(struct capture *c, char **ret_out)
{
	char *err, *out;

	fflush(stderr);
	fflush(stdout);
	dup2(c->saved_err, STDERR_FILENO);
	dup2(c->saved_out, STDOUT_FILENO);
	close(c->saved_err);
	close(c->saved_out);
	err = capture_slurp(c->err);
	out = capture_slurp(c->out);
	if (ret_out) {
		*ret_out = out;
		return err;
	}
	ck_assert_msg(!*out, "stdout got: %s", out);
	free(out);
	return err;
}

#endif
