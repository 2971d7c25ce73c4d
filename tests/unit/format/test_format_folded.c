/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The folded format (src/format/format_folded.c): exact lines for a fixture run, totals equal
 * to the views' totals (counts and times, all three views), the per-comm remainders and
 * [lost], trimming at the row's frame, name escaping.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"

/* Sum of the values of folded text; checks every line's shape on the way. */
static uint64_t folded_total(const char *text, size_t *ret_lines)
{
	uint64_t total = 0;
	size_t lines = 0;

	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n'), *sp;
		char *end;
		unsigned long long v;

		ck_assert_msg(nl != NULL, "last line has no newline");
		sp = nl;
		while (sp > p && sp[-1] != ' ')
			sp--;
		ck_assert_msg(sp > p + 1, "line without a stack: %.*s", (int)(nl - p), p);
		v = strtoull(sp, &end, 10);
		ck_assert_msg(end == nl && v > 0, "bad value in: %.*s", (int)(nl - p), p);
		total += v;
		lines++;
		p = nl + 1;
	}
	if (ret_lines)
		*ret_lines = lines;
	return total;
}

START_TEST(test_folded_lines)
{
	static const char expect[] =
		"as;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;"
		"anon_pipe_read 19990\n"
		"cc1;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;"
		"anon_pipe_read 16099\n"
		"as;anon_pipe_read 10\n"
		"cc1;[preempted] 1500\n"
		"as;[preempted] 500\n"
		"make;entry_SYSCALL_64_after_hwframe;do_syscall_64;__do_sys_wait4;kernel_wait4;"
		"do_wait 1500\n"
		"cc1;do_syscall_64;ksys_write;vfs_write;ext4_buffered_write_iter 401\n";
	struct sp_run run;
	char *out;

	unit_load(FIX("run_a.json"), &run);
	out = unit_render_fmt(&run, SP_FMT_FOLDED, SP_VIEW_SCHED, SP_VALUE_COUNT, NULL);
	ck_assert_str_eq(out, expect);
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(test_folded_time)
{
	struct sp_run run;
	uint64_t sum = 0;
	char *out;

	unit_load(FIX("run_a.json"), &run);
	out = unit_render_fmt(&run, SP_FMT_FOLDED, SP_VIEW_SCHED, SP_VALUE_TIME, NULL);
	/* the remainder of "as" in anon_pipe_read: 4.0s by comm - 3.99s in stacks */
	ck_assert_ptr_nonnull(strstr(out, "\nas;anon_pipe_read 10000000\n"));
	ck_assert_ptr_nonnull(strstr(out, "\ncc1;[preempted] 200000000\n"));
	for (size_t i = 0; i < run.sched.nrows; i++)
		sum += run.sched.rows[i].offcpu_ns;
	ck_assert_uint_eq(folded_total(out, NULL), sum);
	ck_assert_uint_eq(sum, 9202000000ULL);
	free(out);
	sp_run_free(&run);
}
END_TEST

/* Folded totals are the views' totals, in every view of the full fixture. */
START_TEST(test_folded_totals)
{
	struct sp_run run;
	size_t lines;
	char *out;

	unit_load(FIX("run_full.json"), &run);
	/* schedules: rows 115 + lost_rows 5 = total 120 */
	out = unit_render_fmt(&run, SP_FMT_FOLDED, SP_VIEW_SCHED, SP_VALUE_COUNT, NULL);
	ck_assert_uint_eq(folded_total(out, NULL), run.sched.total);
	ck_assert_ptr_nonnull(strstr(out, "\n[lost] 5\n"));
	/* no objects: the stack is trimmed at its caller */
	ck_assert_ptr_nonnull(strstr(out, "demo;vfs_read;pipe_read 100\n"));
	/* kernel stacks only: no "_[k]" (see format_folded.c) */
	ck_assert_ptr_null(strstr(out, "_[k]"));
	free(out);
	/* profile: 600 + 250 = target; the 50 without a stack stay as clear_page_erms */
	out = unit_render_fmt(&run, SP_FMT_FOLDED, SP_VIEW_PROFILE, SP_VALUE_COUNT, &lines);
	ck_assert_uint_eq(folded_total(out, &lines), run.profile.target);
	ck_assert_uint_eq(lines, 3);
	ck_assert_ptr_nonnull(strstr(out, "demo;__libc_start_call_main;main;main_loop 600\n"));
	/* kernel and user frames in one stack: every kernel frame of the file is marked */
	ck_assert_ptr_nonnull(strstr(out, "\ndemo;main;main_loop;asm_exc_page_fault_[k];"
					  "exc_page_fault_[k];handle_mm_fault_[k];"
					  "do_anonymous_page_[k];clear_page_erms_[k] 200\n"));
	ck_assert_ptr_nonnull(strstr(out, "\ndemo;clear_page_erms_[k] 50\n"));
	free(out);
	/* profile time: samples x 1e9/99 ns */
	out = unit_render_fmt(&run, SP_FMT_FOLDED, SP_VIEW_PROFILE, SP_VALUE_TIME, NULL);
	ck_assert_uint_eq(folded_total(out, NULL), 850ULL * (1000000000ULL / 99));
	free(out);
	/* locks: contentions, and wait time */
	out = unit_render_fmt(&run, SP_FMT_FOLDED, SP_VIEW_LOCKS, SP_VALUE_COUNT, NULL);
	ck_assert_str_eq(out, "demo;vfs_read;pipe_read 30\n");
	free(out);
	out = unit_render_fmt(&run, SP_FMT_FOLDED, SP_VIEW_LOCKS, SP_VALUE_TIME, NULL);
	ck_assert_str_eq(out, "demo;vfs_read;pipe_read 3000000\n");
	free(out);
	/* several views selected: the first the run has, in the order schedules, profile, locks */
	out = unit_render_fmt(&run, SP_FMT_FOLDED, SP_VIEW_PROFILE | SP_VIEW_LOCKS, SP_VALUE_COUNT,
			 NULL);
	ck_assert_uint_eq(folded_total(out, NULL), 850);
	free(out);
	sp_run_free(&run);
}
END_TEST

/* ';' would split a frame, control characters a line: both are replaced. */
START_TEST(test_folded_escaping)
{
	struct sp_run run;
	struct sp_sched_row *r;
	char *out;

	sp_run_init(&run);
	run.sched.present = true;
	r = sp_sched_add_row(&run.sched);
	r->caller = strdup("a;b\nc");
	r->count = 3;
	sp_comm_list_add(&r->comms, "my comm\t1", 2, 0, 0);
	sp_comm_list_add(&r->comms, "", 1, 0, 0);
	out = unit_render_fmt(&run, SP_FMT_FOLDED, SP_VIEW_SCHED, SP_VALUE_COUNT, NULL);
	ck_assert_str_eq(out, "my comm?1;a:b?c 2\n[unknown];a:b?c 1\n");
	free(out);
	/* --value time with no times: nothing to draw, an empty (valid) file */
	out = unit_render_fmt(&run, SP_FMT_FOLDED, SP_VIEW_SCHED, SP_VALUE_TIME, NULL);
	ck_assert_str_eq(out, "");
	free(out);
	/* a view the run does not have */
	out = unit_render_fmt(&run, SP_FMT_FOLDED, SP_VIEW_PROFILE, SP_VALUE_COUNT, NULL);
	ck_assert_str_eq(out, "");
	free(out);
	sp_run_free(&run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("format_folded");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_folded_lines);
	tcase_add_test(tc, test_folded_time);
	tcase_add_test(tc, test_folded_totals);
	tcase_add_test(tc, test_folded_escaping);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
