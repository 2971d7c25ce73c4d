// SPDX-License-Identifier: BSD-2-Clause
/*
 * The BPF programs' builds (src/loader/prog_builds.c, include/schedprof/progs.h): the build a
 * program loads for what a run needs (the first that provides it all), and the table's shape.
 */
#include <check.h>
#include <string.h>

#include "../unit.h"
#include "loader/prog_builds.h"

static const char *pick(const char *program, unsigned int needs)
{
	const struct sp_prog_build *b = sp_prog_build_pick(program, needs);

	return b ? b->build : NULL;
}

START_TEST(picks)
{
	ck_assert_str_eq(pick("sp_switch", 0), "sp_switch");
	ck_assert_str_eq(pick("sp_switch", SP_BUILD_TIMELINE), "sp_switch_tl");
	ck_assert_str_eq(pick("sp_switch", SP_BUILD_FULL_WALKS), "sp_switch_full");
	ck_assert_str_eq(pick("sp_switch", SP_BUILD_FULL_WALKS | SP_BUILD_TIMELINE),
			 "sp_switch_full");
	ck_assert_str_eq(pick("lock_begin", 0), "lock_begin");
	ck_assert_str_eq(pick("lock_begin", SP_BUILD_FULL_WALKS), "lock_begin_full");
	ck_assert_str_eq(pick("prof_sample", 0), "prof_sample");
	ck_assert_str_eq(pick("prof_sample", SP_BUILD_CALLCHAINS), "prof_sample_g");
	ck_assert_ptr_null(pick("prof_sample", SP_BUILD_TIMELINE));
	ck_assert_ptr_null(pick("lock_end", 0));
	ck_assert(sp_prog_is_build_of("sp_switch_tl", "sp_switch"));
	ck_assert(!sp_prog_is_build_of("sp_switch_tl", "lock_begin"));
	ck_assert(!sp_prog_is_build_of("sp_waking", "sp_switch"));
}
END_TEST

/* Seven builds of three programs; each name once; a program's first build needs nothing. */
START_TEST(table)
{
	ck_assert_uint_eq(sp_nprog_builds, 7);
	for (size_t i = 0; i < sp_nprog_builds; i++) {
		const struct sp_prog_build *b = &sp_prog_builds[i];

		ck_assert(*b->options);
		ck_assert_ptr_eq(sp_prog_build_pick(b->program, b->provides), b);
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(sp_prog_builds[j].build, b->build);
		ck_assert_ptr_nonnull(pick(b->program, 0));
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("prog_builds");
	TCase *tc = tcase_create("prog_builds");

	tcase_add_test(tc, picks);
	tcase_add_test(tc, table);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
