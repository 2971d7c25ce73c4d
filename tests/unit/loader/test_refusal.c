// SPDX-License-Identifier: BSD-2-Clause
/*
 * A verifier refusal from libbpf's messages (src/loader/refusal.c): the first refused
 * program, its log's error line past the statistics, and messages that are not a refusal.
 */
#include <check.h>
#include <string.h>

#include "../unit.h"
#include "loader/refusal.h"

/* As libbpf 1.1 prints them on Linux 6.1, sp_switch refused (the log cut short here). */
static const char failed_msg[] =
	"libbpf: prog 'sp_switch': BPF program load failed: Permission denied\n";
static const char log_msg[] =
	"libbpf: prog 'sp_switch': -- BEGIN PROG LOAD LOG --\n"
	"reg type unsupported for arg#0 function count_caller#42\n"
	"0: R1=mem(id=0,ref_obj_id=0,off=0,imm=0) R10=fp0\n"
	"; v = sp_lookup_or_init(&callers, key, &zero);\n"
	"7: (85) call bpf_map_lookup_elem#1\n"
	"R2 type=mem expected=fp, pkt, pkt_meta, map_key, map_value\n"
	"processed 1843 insns (limit 1000000) max_states_per_insn 4 total_states 97 peak_states 97 mark_read 31\n"
	"-- END PROG LOAD LOG --\n";

START_TEST(switch_refused)
{
	struct refusal r;

	refusal_reset(&r);
	ck_assert(refusal_wants("prog '%s': BPF program load failed: %s\n"));
	ck_assert(refusal_wants("prog '%s': -- BEGIN PROG LOAD LOG --\n%s-- END PROG LOAD LOG --\n"));
	ck_assert(!refusal_wants("prog '%s': failed to load: %d\n"));
	ck_assert(!refusal_wants(NULL));
	/* the log before the "failed" line belongs to no known refusal: ignored */
	refusal_feed(&r, log_msg);
	ck_assert_str_eq(r.line, "");
	refusal_feed(&r, failed_msg);
	refusal_feed(&r, log_msg);
	ck_assert_str_eq(r.prog, "sp_switch");
	ck_assert_str_eq(r.line, "R2 type=mem expected=fp, pkt, pkt_meta, map_key, map_value");
	/* a second refusal at the same load does not replace the first */
	refusal_feed(&r, "prog 'prof_sample': BPF program load failed: Invalid argument\n");
	refusal_feed(&r, "prog 'prof_sample': -- BEGIN PROG LOAD LOG --\nother\n-- END PROG LOAD LOG --\n");
	ck_assert_str_eq(r.prog, "sp_switch");
	ck_assert_str_eq(r.line, "R2 type=mem expected=fp, pkt, pkt_meta, map_key, map_value");
	refusal_reset(&r);
	ck_assert_str_eq(r.prog, "");
	ck_assert_str_eq(r.line, "");
}
END_TEST

START_TEST(stack_and_stats)
{
	struct refusal r;

	refusal_reset(&r);
	refusal_feed(&r, "prog 'sp_switch_full': BPF program load failed: Permission denied\n");
	refusal_feed(&r, "prog 'sp_switch_full': -- BEGIN PROG LOAD LOG --\n"
			 "combined stack size of 2 calls is 544. Too large\n"
			 "verification time 1931 usec\n"
			 "stack depth 512+32\n"
			 "processed 4021 insns (limit 1000000)\n\n"
			 "-- END PROG LOAD LOG --\n");
	ck_assert_str_eq(r.line, "combined stack size of 2 calls is 544. Too large");
	/* a log with no error line, a tab made a space, and an unterminated log */
	refusal_reset(&r);
	refusal_feed(&r, "prog 'a': BPF program load failed: Invalid argument\n");
	refusal_feed(&r, "prog 'a': -- BEGIN PROG LOAD LOG --\nprocessed 3 insns\n-- END PROG LOAD LOG --\n");
	ck_assert_str_eq(r.line, "");
	refusal_feed(&r, "prog 'a': -- BEGIN PROG LOAD LOG --\nbad\tinsn  \n");
	ck_assert_str_eq(r.line, "bad insn");
}
END_TEST

START_TEST(not_refusals)
{
	struct refusal r;
	char longname[200];

	refusal_reset(&r);
	refusal_feed(&r, NULL);
	refusal_feed(&r, "libbpf:  prog 'x': BPF program load failed: Invalid argument\n");
	refusal_feed(&r, "prog '': BPF program load failed: Invalid argument\n");
	refusal_feed(&r, "prog 'x: BPF program load failed: Invalid argument\n");
	refusal_feed(&r, "prog 'x': failed to load: -13\n");
	memset(longname, 'n', sizeof(longname));
	memcpy(longname, "prog '", 6);
	snprintf(longname + 150, sizeof(longname) - 150, "': BPF program load failed: x\n");
	refusal_feed(&r, longname);
	ck_assert_str_eq(r.prog, "");
	/* a long error line is cut, not overrun */
	refusal_feed(&r, "prog 'y': BPF program load failed: Permission denied\n");
	memset(longname, 'e', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	{
		char msg[400];

		snprintf(msg, sizeof(msg), "prog 'y': -- BEGIN PROG LOAD LOG --\n%s\n", longname);
		refusal_feed(&r, msg);
	}
	ck_assert_uint_eq(strlen(r.line), sizeof(r.line) - 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("refusal");
	TCase *tc = tcase_create("refusal");

	tcase_add_test(tc, switch_refused);
	tcase_add_test(tc, stack_and_stats);
	tcase_add_test(tc, not_refusals);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
