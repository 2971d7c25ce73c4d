// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel frames into model strings (src/symbols/kstack.c) on the fixture kallsyms: names with
 * pseudo callers and the raw fallback, objects, comms, stack rows from the first scheduler or lock
 * frame. The merging of stack rows that symbolize alike is model.c's (model/test_model.c).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "loader/foldcfg.h"
#include "symbols/ksyms.h"
#include "symbols/kstack.h"
#include "model/model.h"
#include "../unit.h"
#include "../kallsyms_fixture.h"

static void check_name(uint64_t ip, const char *want)
{
	char *got = kstack_name(ks, ip);

	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	free(got);
}

static void check_object(uint64_t ip, const char *want)
{
	char *got = kstack_object(ks, ip);

	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(names)
{
	check_name(SP_CALLER_UNKNOWN, "[unknown]");
	check_name(SP_CALLER_PREEMPTED, "[preempted]");
	check_name(SP_CALLER_IDLE, "cpu_idle");
	check_name(3, "0x3"); /* not a pseudo caller: before every symbol */
	check_name(A("anon_pipe_read", 0), "anon_pipe_read");
	check_name(A("anon_pipe_read", 0x2ff), "anon_pipe_read");
	check_name(A("path_openat", 0), "path_openat"); /* the next symbol starts there */
	check_name(A("__schedule", 0x10), "__schedule");
	check_name(A("ext4_buffered_write_iter", 0x80), "ext4_buffered_write_iter");
	/* past the end marker _etext, and past the module's last symbol: raw addresses */
	check_name(A("_etext", 8), "0xffffffff82276f50");
	check_name(A("ext4_other", KSYMS_LAST_SIZE), "0xffffffffc0a03000");
}
END_TEST

START_TEST(objects)
{
	char buf[8];
	struct ksym mod = { .name = "f", .module = "ext4" };

	check_object(A("do_exit", 4), "[kernel]");
	check_object(A("ext4_other", 4), "[ext4]");
	check_object(A("ext4_other", KSYMS_LAST_SIZE), "[kernel]"); /* unnamed: the kernel's */
	check_object(SP_CALLER_UNKNOWN, "[kernel]");
	ck_assert_str_eq(kstack_sym_object(NULL, buf, sizeof(buf)), "[kernel]");
	ck_assert_ptr_eq(kstack_sym_object(&mod, buf, sizeof(buf)), buf);
	ck_assert_str_eq(buf, "[ext4]");
	/* a buffer too small cuts the name, never overflows */
	ck_assert_str_eq(kstack_sym_object(&mod, buf, 4), "[ex");
}
END_TEST

START_TEST(comms)
{
	char full[TASK_COMM_LEN] = "0123456789abcdef"; /* 16 chars, no NUL */
	char shrt[TASK_COMM_LEN] = "cat";
	char buf[TASK_COMM_LEN + 1];

	memset(buf, 'x', sizeof(buf));
	ck_assert_ptr_eq(kstack_comm(full, buf), buf);
	ck_assert_str_eq(buf, "0123456789abcdef");
	ck_assert_str_eq(kstack_comm(shrt, buf), "cat");
}
END_TEST

/* A stack row of a run (sp_run_free frees it), filled from ips. */
static struct sp_stack_row *fill(struct sp_run *run, const uint64_t *ips, uint32_t nr,
				 unsigned int from)
{
	struct sp_sched_row *r = run->sched.nrows ? run->sched.rows : sp_sched_add_row(&run->sched);
	struct sp_stack st = { .nr = nr };
	struct sp_stack_row *s;

	ck_assert_ptr_nonnull(r);
	s = sp_stack_list_add(&r->stacks);
	ck_assert_ptr_nonnull(s);
	for (uint32_t i = 0; i < nr && i < SP_MAX_STACK_DEPTH; i++)
		st.ip[i] = ips[i];
	ck_assert_int_eq(kstack_fill(s, ks, &st, &cfg, from), 0);
	return s;
}

static void check_frames(const struct sp_stack_row *s, const char *const *want, size_t n)
{
	ck_assert_uint_eq(s->nframes, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(s->frames[i], want[i]);
	ck_assert_ptr_null(s->frames[n]); /* NULL-terminated */
	ck_assert_ptr_null(s->objects[n]);
}

START_TEST(fill_from_sched)
{
	uint64_t ips[] = { A("bpf_trace_run4", 0x40), A("__bpf_trace_sched_switch", 0x20),
			   A("__schedule", 0x300), A("schedule", 0x30), A("anon_pipe_read", 0x1a0),
			   A("ext4_buffered_write_iter", 0x10), 0xffffffff80000000ULL };
	static const char *const want[] = { "__schedule", "schedule", "anon_pipe_read",
					     "ext4_buffered_write_iter", "0xffffffff80000000" };
	struct sp_run run;
	struct sp_stack_row *s;

	sp_run_init(&run);
	s = fill(&run, ips, 7, KSTACK_FROM_SCHED);
	check_frames(s, want, 5);
	ck_assert_str_eq(s->objects[0], "[kernel]");
	ck_assert_str_eq(s->objects[3], "[ext4]");
	ck_assert_str_eq(s->objects[4], "[kernel]");
	sp_run_free(&run);
}
END_TEST

START_TEST(fill_from_lock_text)
{
	uint64_t ips[] = { A("bpf_trace_run4", 0x40), A("_raw_spin_lock", 0x10),
			   A("__schedule", 0x300), A("do_exit", 0x30) };
	static const char *const fold[] = { "_raw_spin_lock", "__schedule", "do_exit" };
	static const char *const sched[] = { "__schedule", "do_exit" };
	struct sp_run run;

	sp_run_init(&run);
	/* lock text starts the locks view's stacks, not the schedules view's */
	check_frames(fill(&run, ips, 4, KSTACK_FROM_FOLD), fold, 3);
	check_frames(fill(&run, ips, 4, KSTACK_FROM_SCHED), sched, 2);
	/* cpuidle text too */
	ips[1] = A("default_idle", 0x10);
	ck_assert_str_eq(fill(&run, ips, 4, KSTACK_FROM_FOLD)->frames[0], "default_idle");
	sp_run_free(&run);
}
END_TEST

START_TEST(fill_edges)
{
	uint64_t ips[SP_MAX_STACK_DEPTH + 8];
	static const char *const all[] = { "do_exit", "anon_pipe_read" };
	struct sp_stack_row *s;
	struct sp_run run;

	sp_run_init(&run);
	/* no scheduler frame: every frame is kept */
	ips[0] = A("do_exit", 0);
	ips[1] = A("anon_pipe_read", 0);
	check_frames(fill(&run, ips, 2, KSTACK_FROM_FOLD), all, 2);
	/* empty */
	s = fill(&run, ips, 0, KSTACK_FROM_FOLD);
	ck_assert_uint_eq(s->nframes, 0);
	ck_assert_ptr_nonnull(s->frames);
	ck_assert_ptr_null(s->frames[0]);
	/* deeper than BPF keeps: cut at SP_MAX_STACK_DEPTH */
	for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++)
		ips[i] = A("schedule", i);
	s = fill(&run, ips, SP_MAX_STACK_DEPTH + 8, KSTACK_FROM_SCHED);
	ck_assert_uint_eq(s->nframes, SP_MAX_STACK_DEPTH);
	ck_assert_str_eq(s->frames[SP_MAX_STACK_DEPTH - 1], "schedule");
	sp_run_free(&run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kstack");
	TCase *tc = tcase_create("kstack");

	tcase_add_checked_fixture(tc, fixture_load, fixture_free);
	tcase_add_test(tc, names);
	tcase_add_test(tc, objects);
	tcase_add_test(tc, comms);
	tcase_add_test(tc, fill_from_sched);
	tcase_add_test(tc, fill_from_lock_text);
	tcase_add_test(tc, fill_edges);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
