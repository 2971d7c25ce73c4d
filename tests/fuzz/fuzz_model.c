/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the saved-run reader (src/model/model_json.c) and everything that renders
 * what it accepts. For every input:
 *  1. sp_run_from_json() either fails with one line of error text, or succeeds;
 *  2. an accepted run is written back as JSON, read again and written again: the two
 *     writes must be byte-identical (the reader and the writer agree on every key);
 *  3. an accepted run is rendered in every format (table with and without --stacks and
 *     --by comm, folded by count and time, pprof, svg, html) and diffed against itself,
 *     where every delta must be zero.
 * Any mismatch aborts, which libFuzzer reports as a crash; the sanitizers catch the rest.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/diff.h"
#include "model/model_json.h"
#include "format/render.h"
#include "model/cp_stacks.h"
#include "model/whatif.h"

#define CHECK(cond)								\
	do {									\
		if (!(cond)) {							\
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
				__LINE__, #cond);				\
			abort();						\
		}								\
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *render_mem(const struct sp_run *run, const struct render_opts *o, size_t *ret_len,
			int *ret_err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f);
	*ret_err = render_run(run, o, f);
	CHECK(fclose(f) == 0);
	*ret_len = len;
	return buf;
}

static void check_diff_self(const struct sp_run *run, enum sp_value value)
{
	struct sp_diff_opts o = { "a", "a", 20 };
	struct sp_diff d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(sp_diff_build(run, run, SP_VIEW_SCHED | SP_VIEW_PROFILE | SP_VIEW_LOCKS, value,
			    &d) == 0);
	for (size_t i = 0; i < d.nviews; i++) {
		CHECK(d.views[i].a_total == d.views[i].b_total);
		for (size_t j = 0; j < d.views[i].nrows; j++)
			CHECK(d.views[i].rows[j].a == d.views[i].rows[j].b);
	}
	f = open_memstream(&buf, &len);
	CHECK(f);
	CHECK(sp_diff_write_table(&d, &o, f) == 0);
	CHECK(sp_diff_write_json(&d, &o, f) == 0);
	CHECK(fclose(f) == 0);
	free(buf);
	sp_diff_free(&d);
}

/*
 * What-if replays of a run with a timeline: predictions within their bounds, or a refusal
 * with a reason; the critical path's stacks render.
 */
static void check_whatif(const struct sp_run *run)
{
	static const char *const args[] = { "cpus=1,2,64", "without=pipe", "without=futex_*" };
	struct sp_whatif_opts o = { 0 };
	struct sp_whatif w;
	struct sp_run cp;
	char why[512];
	int rc;

	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
		CHECK(sp_whatif_parse(&o, args[i], why, sizeof(why)) == 0);
	why[0] = '\0';
	rc = sp_whatif_compute(run, &o, &w, why, sizeof(why));
	CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM || rc == -E2BIG ||
	      (rc == -ENODATA && !run->timeline.present));
	CHECK(rc == 0 || rc == -ENOMEM || rc == -E2BIG || why[0]);
	for (size_t k = 0; !rc && k < w.ncases; k++)
		for (size_t i = 0; i < w.npreds; i++) {
			/* unlimited CPUs run each burst as early as it can be: a bound, unless
			 * a cycle of edges was broken (at a time that depends on the rest) */
			CHECK(w.cases[k].preds[i].forced ||
			      w.cases[k].preds[i].wall_ns >= w.cases[k].cp_ns);
			CHECK(w.cases[k].preds[i].wall_ns >= w.cases[k].work_ns /
							      (uint64_t)w.cases[k].preds[i].cpus);
		}
	if (!rc)
		sp_whatif_free(&w);
	sp_whatif_opts_free(&o);
	rc = sp_cp_stacks_run(run, &cp);
	CHECK(rc == 0 || rc == -ENOMEM || (rc == -ENODATA && !run->timeline.present));
	if (!rc) {
		struct render_opts ro = { .format = SP_FMT_FOLDED, .views = SP_VIEW_SCHED,
					  .nrows = 5, .nstacks = 2, .value = SP_VALUE_TIME };
		size_t len;
		int e;

		free(render_mem(&cp, &ro, &len, &e));
		CHECK(e == 0);
		sp_run_free(&cp);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum sp_format formats[] = { SP_FMT_TABLE, SP_FMT_FOLDED, SP_FMT_PPROF,
						  SP_FMT_SVG, SP_FMT_HTML };
	struct render_opts o = {
		.format = SP_FMT_JSON,
		.views = SP_VIEW_SCHED | SP_VIEW_PROFILE | SP_VIEW_LOCKS,
		.nrows = 5,
		.nstacks = 2,
	};
	struct sp_run run, again;
	char err[256], *s1, *s2;
	size_t l1, l2;
	int rc, e;

	rc = sp_run_from_json((const char *)data, size, &run, err, sizeof(err));
	if (rc) {
		CHECK(rc == -EINVAL || rc == -ENOMEM);
		CHECK(err[0] && !strchr(err, '\n'));
		sp_run_free(&run);
		return 0;
	}
	s1 = render_mem(&run, &o, &l1, &e);
	CHECK(e == 0);
	rc = sp_run_from_json(s1, l1, &again, err, sizeof(err));
	if (rc)
		fprintf(stderr, "re-read failed: %s\n%.*s\n", err, (int)l1, s1);
	CHECK(rc == 0);
	s2 = render_mem(&again, &o, &l2, &e);
	CHECK(e == 0);
	if (l1 != l2 || memcmp(s1, s2, l1))
		fprintf(stderr, "first write:\n%.*s\nsecond write:\n%.*s\n", (int)l1, s1, (int)l2,
			s2);
	CHECK(l1 == l2 && !memcmp(s1, s2, l1));
	free(s1);
	free(s2);
	sp_run_free(&again);

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		for (int variant = 0; variant < 2; variant++) {
			o.format = formats[i];
			o.stacks = variant;
			o.group = variant ? SP_GROUP_COMM : SP_GROUP_CALLER;
			o.value = variant ? SP_VALUE_TIME : SP_VALUE_COUNT;
			s1 = render_mem(&run, &o, &l1, &e);
			/* pprof may refuse a hostile run (too many functions): never crash */
			CHECK(e == 0 || formats[i] == SP_FMT_PPROF);
			free(s1);
		}
	}
	/* the timeline's formats: rendered when the run has one, else refused */
	for (int i = 0; i < 2; i++) {
		o.format = i ? SP_FMT_TIMELINE : SP_FMT_TRACE_EVENT;
		s1 = render_mem(&run, &o, &l1, &e);
		CHECK(run.timeline.present ? e == 0 : e == -EINVAL);
		free(s1);
	}
	check_diff_self(&run, SP_VALUE_COUNT);
	check_diff_self(&run, SP_VALUE_TIME);
	check_whatif(&run);
	sp_run_free(&run);
	return 0;
}
