/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The stack formats' common ground (src/model/samples.c): which view they draw, the walk's
 * totals and order, a callback's error stopping it, stacks without the row's frame kept
 * whole, and stacks holding more than their comm (no negative remainder).
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"
#include "model/samples.h"

static int count_samples(const struct sp_sample *s, void *arg)
{
	uint64_t *sum = arg;

	sum[0] += s->count;
	sum[1] += s->time_ns;
	sum[2]++;
	return 0;
}

static int stop_at_two(const struct sp_sample *s, void *arg)
{
	int *n = arg;

	(void)s;
	return ++*n == 2 ? -EINTR : 0;
}

START_TEST(test_samples_walk)
{
	struct sp_run run;
	uint64_t sum[3] = { 0 };
	int n = 0;

	unit_load(FIX("run_a.json"), &run);
	ck_assert_uint_eq(sp_samples_view(&run, SP_VIEW_SCHED | SP_VIEW_PROFILE), SP_VIEW_SCHED);
	ck_assert_uint_eq(sp_samples_view(&run, SP_VIEW_PROFILE), 0);
	ck_assert_int_eq(sp_samples_for_each(&run, SP_VIEW_SCHED, count_samples, sum), 0);
	ck_assert_uint_eq(sum[0], 40000);
	ck_assert_uint_eq(sum[2], 7);
	/* a callback's error stops the walk and is returned */
	ck_assert_int_eq(sp_samples_for_each(&run, SP_VIEW_SCHED, stop_at_two, &n), -EINTR);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(sp_samples_for_each(&run, 1u << 7, count_samples, sum), -EINVAL);
	sp_run_free(&run);
}
END_TEST

/* Stacks without the row's frame stay whole; more in stacks than in comms is no remainder. */
START_TEST(test_samples_edges)
{
	static const char *const frames[] = { "__schedule", "other_fn", "main" };
	struct sp_run run;
	struct sp_sched_row *r;
	struct sp_stack_row *s;
	char *out;

	sp_run_init(&run);
	run.sched.present = true;
	run.sched.total = 7;
	r = sp_sched_add_row(&run.sched);
	r->caller = strdup("my_caller");
	r->count = 7;
	sp_comm_list_add(&r->comms, "x", 7, 70, 10);
	s = sp_stack_list_add(&r->stacks);
	s->comm = strdup("x");
	s->count = 9; /* inconsistent: more than the comm's count */
	s->time_ns = 90;
	s->frames = calloc(3, sizeof(char *));
	for (int i = 0; i < 3; i++)
		s->frames[i] = strdup(frames[i]);
	s->nframes = 3;
	out = unit_render_fmt(&run, SP_FMT_FOLDED, SP_VIEW_SCHED, SP_VALUE_COUNT, NULL);
	ck_assert_str_eq(out, "x;main;other_fn;__schedule 9\n");
	free(out);
	sp_run_free(&run);
}
END_TEST

/* What the samples of run_user's profile carry of their frames' identities. */
struct seen_info {
	size_t n;
	uint64_t addr[8], leaf_line[8];
	const char *leaf[8];
	bool has_info[8];
};

static int record_info(const struct sp_sample *s, void *arg)
{
	struct seen_info *si = arg;

	ck_assert_uint_lt(si->n, 8);
	si->leaf[si->n] = s->frames[0];
	si->has_info[si->n] = s->info != NULL;
	si->addr[si->n] = s->info ? s->info[0].addr : 0;
	si->leaf_line[si->n] = s->info ? s->info[0].line : 0;
	si->n++;
	return 0;
}

/*
 * Stacks pass their frame infos on, cut where the frames are; a row's remainder gets the
 * row's own info (a profile function's), a row without one none.
 */
START_TEST(test_samples_info)
{
	struct sp_run run;
	struct seen_info si = { 0 };

	unit_load(FIX("run_user.json"), &run);
	ck_assert_int_eq(sp_samples_for_each_pid(&run, SP_VIEW_PROFILE, record_info, &si), 0);
	ck_assert_uint_eq(si.n, 4);
	ck_assert_uint_eq(si.addr[0], 0x5c3a10);
	ck_assert_uint_eq(si.leaf_line[0], 1450);
	ck_assert_str_eq(si.leaf[1], "cc1+0x1f00a8");
	ck_assert_uint_eq(si.addr[1], 0x1f00a8);
	ck_assert_uint_eq(si.addr[2], 0xffffffff81d2c7e8ull);
	/* the 10 samples of clear_page_erms without a stack: the row's info */
	ck_assert_str_eq(si.leaf[3], "clear_page_erms");
	ck_assert_uint_eq(si.addr[3], 0xffffffff81d2c7e0ull);
	memset(&si, 0, sizeof(si));
	ck_assert_int_eq(sp_samples_for_each(&run, SP_VIEW_SCHED, record_info, &si), 0);
	ck_assert_uint_eq(si.n, 3);
	/* cut at the caller: futex_wait is frames[3] of the stack, and its info goes along */
	ck_assert_str_eq(si.leaf[0], "futex_wait");
	ck_assert_uint_eq(si.addr[0], 0xffffffff8118b1d9ull);
	ck_assert(!si.has_info[1]); /* [preempted]: no row info in the schedules view */
	ck_assert(!si.has_info[2]); /* a stack without infos */
	sp_run_free(&run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("samples");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_samples_walk);
	tcase_add_test(tc, test_samples_edges);
	tcase_add_test(tc, test_samples_info);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
