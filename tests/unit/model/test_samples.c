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
#include "samples.h"

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

int main(void)
{
	Suite *s = suite_create("samples");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_samples_walk);
	tcase_add_test(tc, test_samples_edges);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
