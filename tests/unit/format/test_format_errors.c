/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Formatters return their errors: for the table, JSON, folded and timeline formats (trace-event,
 * timeline) and the diff's table
 * and JSON, every allocation in turn is made to fail, and the formatter must then either
 * return a negative errno or have written the complete output; and a stream that cannot be
 * written must give a negative errno, never 0 (a truncated table with exit status 0).
 *
 * The allocation failures come from malloc, calloc and realloc defined here, which the
 * executable's copies of the core library call instead of libc's.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/diff.h"
#include "model/model_json.h"
#include "format/render.h"

#define FIX(name) FIXTURES_DIR "/" name

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

/* The allocation that fails: -1 none, 0 the next one, N the one after N more. */
static long countdown = -1;

static bool fail_now(void)
{
	if (countdown < 0)
		return false;
	return countdown-- == 0;
}

void *malloc(size_t n)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, n);
}

struct job {
	const char *name;
	enum sp_format format; /* for runs */
	bool diff, diff_json;
	bool stacks, by_comm, lock_stacks;
	bool timeline; /* renders run_timeline.json */
};

static const struct job jobs[] = {
	{ .name = "table", .format = SP_FMT_TABLE },
	{ .name = "table --stacks", .format = SP_FMT_TABLE, .stacks = true, .lock_stacks = true },
	{ .name = "table --by comm", .format = SP_FMT_TABLE, .by_comm = true },
	{ .name = "json", .format = SP_FMT_JSON },
	{ .name = "folded", .format = SP_FMT_FOLDED },
	{ .name = "trace-event", .format = SP_FMT_TRACE_EVENT, .timeline = true },
	{ .name = "timeline", .format = SP_FMT_TIMELINE, .timeline = true },
	{ .name = "diff table", .diff = true },
	{ .name = "diff json", .diff = true, .diff_json = true },
};

static struct sp_run run_a, run_b, run_t;
static struct sp_diff the_diff;

static int render(const struct job *j, FILE *f)
{
	struct render_opts o = {
		.format = j->format, .views = SP_VIEW_ALL, .nrows = 20, .nstacks = 3,
		.stacks = j->stacks, .lock_stacks = j->lock_stacks,
		.group = j->by_comm ? SP_GROUP_COMM : SP_GROUP_CALLER,
	};
	struct sp_diff_opts d = { "a.json", "b.json", 20 };

	if (!j->diff)
		return render_run(j->timeline ? &run_t : &run_a, &o, f);
	return j->diff_json ? sp_diff_write_json(&the_diff, &d, f)
			    : sp_diff_write_table(&the_diff, &d, f);
}

/* Renders with allocation number fail failing (-1: none); *ret_hit: it was reached. */
static int render_mem(const struct job *j, long fail, char **ret, size_t *ret_len, bool *ret_hit)
{
	FILE *m = open_memstream(ret, ret_len);
	int err, cerr;

	ck_assert_ptr_nonnull(m);
	countdown = fail;
	err = render(j, m);
	cerr = fflush(m);
	*ret_hit = fail >= 0 && countdown < 0;
	countdown = -1;
	ck_assert_int_eq(fclose(m), 0);
	return err ?: (cerr ? -EIO : 0);
}

static void setup(void)
{
	char err[256];

	ck_assert_msg(!sp_run_load_json(FIX("run_full.json"), &run_a, err, sizeof(err)), "%s", err);
	ck_assert_msg(!sp_run_load_json(FIX("run_b.json"), &run_b, err, sizeof(err)), "%s", err);
	ck_assert_msg(!sp_run_load_json(FIX("run_timeline.json"), &run_t, err, sizeof(err)), "%s",
		      err);
	ck_assert_int_eq(sp_diff_build(&run_a, &run_b, SP_VIEW_ALL, SP_VALUE_COUNT, &the_diff), 0);
}

static void teardown(void)
{
	sp_diff_free(&the_diff);
	sp_run_free(&run_a);
	sp_run_free(&run_b);
	sp_run_free(&run_t);
}

START_TEST(test_allocation_failures)
{
	const struct job *j = &jobs[_i];
	char *want = NULL, *got = NULL;
	size_t want_len = 0, got_len = 0;
	unsigned int failed = 0;
	bool hit = true;

	ck_assert_int_eq(render_mem(j, -1, &want, &want_len, &(bool){ false }), 0);
	for (long n = 0; hit; n++) {
		int err = render_mem(j, n, &got, &got_len, &hit);

		if (err) {
			ck_assert_msg(err < 0, "%s: allocation %ld: %d", j->name, n, err);
			failed++;
		} else {
			/* the failure was absorbed (or not reached): the output is whole */
			ck_assert_msg(got_len == want_len && !memcmp(got, want, want_len),
				      "%s: allocation %ld failed, the output is cut, and 0 returned",
				      j->name, n);
		}
		free(got);
		got = NULL;
	}
	(void)failed; /* 0 for the outputs that allocate nothing (the stream's buffer is libc's) */
	free(want);
}
END_TEST

static ssize_t write_fails(void *cookie, const char *buf, size_t len)
{
	(void)cookie;
	(void)buf;
	(void)len;
	errno = ENOSPC;
	return -1;
}

START_TEST(test_write_errors)
{
	const struct job *j = &jobs[_i];
	FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){ .write = write_fails });
	int err;

	ck_assert_ptr_nonnull(f);
	setvbuf(f, NULL, _IONBF, 0);
	err = render(j, f);
	ck_assert_msg(err < 0, "%s: a failed write returned %d", j->name, err);
	fclose(f);
}
END_TEST

static Suite *errors_suite(void)
{
	Suite *s = suite_create("format errors");
	TCase *tc = tcase_create("errors");
	int n = sizeof(jobs) / sizeof(jobs[0]);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_allocation_failures, 0, n);
	tcase_add_loop_test(tc, test_write_errors, 0, n);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(errors_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
