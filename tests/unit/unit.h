/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the unit tests share: the Check runner of a main(), a fixture run loaded or a test
 * failed, and a run rendered into memory. Included by tests/unit/LAYER/test_*.c as
 * "../unit.h"; every function is static, each test program takes what it uses.
 */
#ifndef SCHEDPROF_TEST_UNIT_H
#define SCHEDPROF_TEST_UNIT_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include "model_json.h"
#include "render.h"

#define FIX(name) FIXTURES_DIR "/" name

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

#endif
