/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Control characters escaped for terminals (src/base/textsafe.c): C0 and DEL as \xNN, C1
 * (UTF-8 C2 80..C2 9F) as \uNNNN, everything else (other UTF-8, backslashes) unchanged;
 * and a run whose comm holds them renders an escaped table but an unchanged JSON.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "format/render.h"
#include "base/textsafe.h"
#include "../unit.h"

static void esc(const char *in, const char *want)
{
	char *got = text_escape_controls(in);

	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	ck_assert(!text_has_controls(got));
	free(got);
}

START_TEST(test_escape)
{
	ck_assert(!text_has_controls(NULL));
	ck_assert(!text_has_controls("cc1 \xc3\xa9t\xc3\xa9 \\x1b"));
	ck_assert(text_has_controls("a\x1b"));
	ck_assert(text_has_controls("a\xc2\x9b"));
	ck_assert(text_has_controls("\x7f"));
	esc("", "");
	esc("plain", "plain");
	esc("ev\x1b[31mil\nX", "ev\\x1b[31mil\\x0aX");
	esc("\x01\x1f\x7f", "\\x01\\x1f\\x7f");
	esc("a\xc2\x9b" "b\xc2\x80\xc2\x9f", "a\\u009bb\\u0080\\u009f");
	esc("\xc2\xa0\xc3\xa9", "\xc2\xa0\xc3\xa9"); /* U+00A0, U+00E9: printable */
	esc("\xc2", "\xc2");			 /* a lone lead byte is not a C1 */
}
END_TEST

/* the table with --by comm, so each comm has a heading line */
static char *render(const struct sp_run *run, enum sp_format format)
{
	struct render_opts o = { .format = format, .views = SP_VIEW_ALL, .nrows = 20,
				 .nstacks = 3, .group = SP_GROUP_COMM };

	return unit_render(run, &o, NULL);
}

START_TEST(test_table_escaped_json_kept)
{
	struct sp_run run;
	struct sp_sched_row *r;
	char *table, *json;

	sp_run_init(&run);
	run.schema = strdup(SP_SCHEMA);
	run.version = strdup("0");
	run.kernel = strdup("6.18");
	run.hostname = strdup("vm");
	run.options = strdup("trace -a");
	run.ncpus = 2;
	run.sched.present = true;
	run.sched.total = run.sched.voluntary = 3;
	r = sp_sched_add_row(&run.sched);
	ck_assert_ptr_nonnull(r);
	r->caller = strdup("do_\x1b]0;pwned\x07wait");
	r->count = 3;
	ck_assert_int_eq(sp_comm_list_add(&r->comms, "ev\x1b[31mil\nX", 3, 10, 10), 0);

	table = render(&run, SP_FMT_TABLE);
	ck_assert_ptr_null(strchr(table, '\x1b'));
	ck_assert_ptr_nonnull(strstr(table, "ev\\x1b[31mil\\x0aX: 3 schedules"));
	ck_assert_ptr_nonnull(strstr(table, "do_\\x1b]0;pwned\\x07wait"));
	json = render(&run, SP_FMT_JSON);
	ck_assert_ptr_nonnull(strstr(json, "\"ev\\u001b[31mil\\nX\""));
	/* the run itself is unchanged: escaping works on a copy */
	ck_assert_str_eq(run.sched.rows[0].comms.v[0].comm, "ev\x1b[31mil\nX");
	free(table);
	free(json);
	sp_run_free(&run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("textsafe");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_table_escaped_json_kept);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
