/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The pprof output format (src/format/format_pprof.c) on the fixture runs: gzip, the same
 * bytes whatever --value says (it holds both sample types), a valid profile for an empty run.
 * The encoder itself (src/format/pprof.c) is tested in test_pprof.c.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"

START_TEST(test_pprof_output)
{
	struct sp_run run;
	size_t len, len2;
	char *out, *out2;

	unit_load(FIX("run_full.json"), &run);
	out = unit_render_fmt(&run, SP_FMT_PPROF, SP_VIEW_PROFILE, SP_VALUE_COUNT, &len);
	ck_assert_uint_gt(len, 20);
	ck_assert_int_eq((unsigned char)out[0], 0x1f); /* gzip */
	ck_assert_int_eq((unsigned char)out[1], 0x8b);
	/* --value does not change pprof: it has both sample types */
	out2 = unit_render_fmt(&run, SP_FMT_PPROF, SP_VIEW_PROFILE, SP_VALUE_TIME, &len2);
	ck_assert(len == len2 && !memcmp(out, out2, len));
	free(out);
	free(out2);
	sp_run_free(&run);
	/* an empty run still gives a valid (empty) profile */
	sp_run_init(&run);
	out = unit_render_fmt(&run, SP_FMT_PPROF, SP_VIEW_SCHED, SP_VALUE_COUNT, &len);
	ck_assert_uint_gt(len, 10);
	free(out);
	sp_run_free(&run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("format_pprof");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_pprof_output);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
