// SPDX-License-Identifier: BSD-2-Clause
/*
 * -f trace-event (src/format/format_trace_event.c) on hand-built timelines, read back with the
 * JSON reader: valid JSON, one event per line; every segment a complete event on its task's
 * track with its name and args; the process and thread names; the wake-ups' flows paired on
 * the waker's and the wakee's tracks; the critical path's track; the counters; escaping;
 * deterministic bytes; a run without a timeline refused; a big timeline streamed.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"
#include "base/json_reader.h"
#include "format/timeline.h"
#include "timeline_fixture.h"

#define CP_PID 4194305

static char *render_te(const struct sp_run *run, size_t *ret_len)
{
	return unit_render_fmt(run, SP_FMT_TRACE_EVENT, SP_VIEW_ALL, SP_VALUE_COUNT, ret_len);
}

static struct json_value *parse(const char *out, size_t len)
{
	char err[128];
	struct json_value *v = json_parse(out, len, err, sizeof(err));

	ck_assert_msg(v != NULL, "not JSON: %s", err);
	ck_assert_int_eq(json_type(json_get(v, "traceEvents")), JSON_ARRAY);
	return v;
}

static const char *ev_str(const struct json_value *e, const char *key)
{
	return json_str(json_get(e, key));
}

static int64_t ev_int(const struct json_value *e, const char *key)
{
	int64_t v = INT64_MIN;

	ck_assert_msg(json_i64(json_get(e, key), &v), "no integer %s", key);
	return v;
}

/* A time in microseconds back to nanoseconds (exact for these: 3 decimals at most). */
static uint64_t ev_ns(const struct json_value *e, const char *key)
{
	double v = -1;

	ck_assert_msg(json_double(json_get(e, key), &v), "no number %s", key);
	ck_assert(v >= 0);
	return (uint64_t)llround(v * 1000.0);
}

static size_t count_ph(const struct json_value *evs, const char *ph)
{
	size_t n = 0;

	for (size_t i = 0; i < json_len(evs); i++)
		n += !strcmp(ev_str(json_at(evs, i), "ph"), ph);
	return n;
}

/* The complete event of segment s: on its task's track, with its times. */
static const struct json_value *find_slice(const struct json_value *evs, int pid, int tid,
					   uint64_t start, uint64_t ns)
{
	const struct json_value *found = NULL;

	for (size_t i = 0; i < json_len(evs); i++) {
		const struct json_value *e = json_at(evs, i);

		if (strcmp(ev_str(e, "ph"), "X") || ev_int(e, "pid") != pid ||
		    ev_int(e, "tid") != tid || ev_ns(e, "ts") != start)
			continue;
		ck_assert_msg(!found, "two slices of %d at %llu", tid, (unsigned long long)start);
		ck_assert_uint_eq(ev_ns(e, "dur"), ns);
		found = e;
	}
	return found;
}

static int pid_of(const struct sp_timeline *tl, int tid)
{
	for (size_t i = 0; i < tl->ntasks; i++)
		if (tl->tasks[i].tid == tid)
			return tl->tasks[i].pid;
	ck_abort_msg("no task %d", tid);
	return -1;
}

START_TEST(test_segments)
{
	struct sp_run run;
	size_t len;
	char *out;
	struct json_value *v;
	const struct json_value *evs;

	tlf_small(&run);
	out = render_te(&run, &len);
	v = parse(out, len);
	evs = json_get(v, "traceEvents");
	/* every segment, once, named as it should be */
	for (size_t i = 0; i < run.timeline.nsegs; i++) {
		const struct sp_tl_seg *s = &run.timeline.segs[i];
		const struct json_value *e = find_slice(evs, pid_of(&run.timeline, s->tid), s->tid,
							 s->start_ns, s->ns);
		const struct json_value *args;
		char name[64];

		ck_assert_msg(e != NULL, "segment %zu (tid %d at %llu) missing", i, s->tid,
			      (unsigned long long)s->start_ns);
		args = json_get(e, "args");
		ck_assert_str_eq(ev_str(e, "cat"), s->state == SP_TL_RUNNING ? "running"
				 : s->state == SP_TL_RUNNABLE ? "runnable" : "blocked");
		if (s->state == SP_TL_RUNNING) {
			ck_assert_str_eq(ev_str(e, "name"), "running");
			ck_assert_int_eq(ev_int(args, "cpu"), s->cpu);
		} else if (s->state == SP_TL_RUNNABLE) {
			snprintf(name, sizeof(name), "runnable %s", s->caller);
			ck_assert_str_eq(ev_str(e, "name"), name);
		} else {
			ck_assert_str_eq(ev_str(e, "name"), s->caller);
			ck_assert_str_eq(ev_str(args, "wait"), s->wait);
			if (s->waker_comm)
				ck_assert_str_eq(ev_str(args, "waker"), s->waker_comm);
			if (s->waker)
				ck_assert_str_eq(ev_str(args, "waker_function"), s->waker);
			if (s->waker_tid)
				ck_assert_int_eq(ev_int(args, "waker_tid"), s->waker_tid);
		}
		ck_assert(json_get(args, "unfinished") ? s->unfinished : !s->unfinished);
	}
	/* segments + critical path: nothing else is a slice */
	ck_assert_uint_eq(count_ph(evs, "X"), run.timeline.nsegs + run.timeline.ncp);
	{
		uint64_t n = 0;

		ck_assert(json_u64(json_get(json_get(v, "otherData"), "segments"), &n));
		ck_assert_uint_eq(n, run.timeline.nsegs);
	}
	json_free(v);
	free(out);
	sp_run_free(&run);
}
END_TEST

/*
 * A throttled wait is named "throttled CALLER"; a run's stolen time is in its args and a slice
 * "stolen" nested at its end (cc1's run at 1050-3000 us, 300 us stolen; its [preempted] wait
 * at 3000-3200 throttled).
 */
START_TEST(test_throttled_and_stolen)
{
	struct sp_run run;
	size_t len;
	char *out;
	struct json_value *v;
	const struct json_value *evs, *e;

	tlf_small(&run);
	tlf_throttle_and_steal(&run);
	out = render_te(&run, &len);
	v = parse(out, len);
	evs = json_get(v, "traceEvents");
	e = find_slice(evs, 200, 200, 3000 * US, 200 * US);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(ev_str(e, "name"), "throttled [preempted]");
	ck_assert_ptr_nonnull(json_get(json_get(e, "args"), "throttled"));
	e = find_slice(evs, 200, 200, 1050 * US, 1950 * US);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(ev_int(json_get(e, "args"), "stolen_ns"), 300 * US);
	e = find_slice(evs, 200, 200, 2700 * US, 300 * US);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(ev_str(e, "name"), "stolen");
	ck_assert_str_eq(ev_str(e, "cat"), "stolen");
	ck_assert_uint_eq(count_ph(evs, "X"), run.timeline.nsegs + run.timeline.ncp + 1);
	json_free(v);
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(test_names)
{
	struct sp_run run;
	size_t len, nthreads = 0, nprocs = 0;
	char *out;
	struct json_value *v;
	const struct json_value *evs;

	tlf_small(&run);
	out = render_te(&run, &len);
	v = parse(out, len);
	evs = json_get(v, "traceEvents");
	for (size_t i = 0; i < json_len(evs); i++) {
		const struct json_value *e = json_at(evs, i);
		const char *name = ev_str(json_get(e, "args"), "name");
		int64_t pid = ev_int(e, "pid"), tid = ev_int(e, "tid");

		if (strcmp(ev_str(e, "ph"), "M"))
			continue;
		if (!strcmp(ev_str(e, "name"), "thread_name")) {
			nthreads++;
			if (pid == CP_PID)
				ck_assert_str_eq(name, "critical path");
			else
				ck_assert_str_eq(name, tid == 100 ? "make" : tid == 200 ? "cc1"
						 : tid == 300 ? "as" : "as-helper");
		} else if (!strcmp(ev_str(e, "name"), "process_name")) {
			nprocs++;
			ck_assert_int_eq(pid, tid);
			/* a process is named by its main thread */
			ck_assert_str_eq(name, pid == CP_PID ? "critical path" : pid == 100 ? "make"
					 : pid == 200 ? "cc1" : "as");
		}
	}
	ck_assert_uint_eq(nthreads, run.timeline.ntasks + 1);
	ck_assert_uint_eq(nprocs, 3 + 1);
	json_free(v);
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(test_flows)
{
	struct sp_run run;
	size_t len, nflows = 0;
	char *out;
	struct json_value *v;
	const struct json_value *evs;

	tlf_small(&run);
	out = render_te(&run, &len);
	v = parse(out, len);
	evs = json_get(v, "traceEvents");
	/* cc1 -> as at 3 ms, as -> make at 9 ms; not [irq], not the unfinished futex wait */
	ck_assert_uint_eq(count_ph(evs, "s"), 2);
	ck_assert_uint_eq(count_ph(evs, "f"), 2);
	for (size_t i = 0; i < json_len(evs); i++) {
		const struct json_value *s = json_at(evs, i), *f = NULL;

		if (strcmp(ev_str(s, "ph"), "s"))
			continue;
		for (size_t j = 0; j < json_len(evs); j++) {
			const struct json_value *e = json_at(evs, j);

			if (!strcmp(ev_str(e, "ph"), "f") && ev_int(e, "id") == ev_int(s, "id")) {
				ck_assert_msg(!f, "two ends of flow %lld", (long long)ev_int(s, "id"));
				f = e;
			}
		}
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(ev_ns(s, "ts"), ev_ns(f, "ts"));
		ck_assert_str_eq(ev_str(s, "bp"), "e");
		ck_assert_str_eq(ev_str(s, "cat"), "wakeup");
		if (ev_int(f, "tid") == 300) {
			ck_assert_int_eq(ev_int(s, "tid"), 200);
			ck_assert_int_eq(ev_int(s, "pid"), 200);
			ck_assert_uint_eq(ev_ns(s, "ts"), 3000 * US);
			/* the waker's enclosing slice: cc1 running then */
			ck_assert_ptr_nonnull(find_slice(evs, 200, 200, 1050 * US, 1950 * US));
		} else {
			ck_assert_int_eq(ev_int(f, "tid"), 100);
			ck_assert_int_eq(ev_int(s, "tid"), 300);
			ck_assert_uint_eq(ev_ns(s, "ts"), 9000 * US);
		}
		/* the wakee's next slice begins there */
		ck_assert_ptr_nonnull(find_slice(evs, (int)ev_int(f, "pid"), (int)ev_int(f, "tid"),
						 ev_ns(f, "ts"), 100 * US));
		nflows++;
	}
	ck_assert_uint_eq(nflows, 2);
	{
		uint64_t n = 0;

		ck_assert(json_u64(json_get(json_get(v, "otherData"), "wakeup_flows"), &n));
		ck_assert_uint_eq(n, 2);
	}
	json_free(v);
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(test_critical_path_and_counters)
{
	struct sp_run run;
	size_t len, ncp = 0, ncounters = 0;
	uint64_t cp_ns = 0, last_ts = 0;
	char *out;
	struct json_value *v;
	const struct json_value *evs, *last = NULL;

	tlf_small(&run);
	out = render_te(&run, &len);
	v = parse(out, len);
	evs = json_get(v, "traceEvents");
	for (size_t i = 0; i < json_len(evs); i++) {
		const struct json_value *e = json_at(evs, i);
		const char *ph = ev_str(e, "ph");

		if (!strcmp(ph, "X") && ev_int(e, "pid") == CP_PID) {
			const struct sp_cp_seg *c = &run.timeline.cp[ncp++];
			char name[64];

			snprintf(name, sizeof(name), "%s %s%s%s", c->comm,
				 c->state == SP_TL_RUNNING ? "running" : "runnable",
				 c->caller ? " " : "", c->caller ? c->caller : "");
			ck_assert_str_eq(ev_str(e, "name"), name);
			ck_assert_uint_eq(ev_ns(e, "ts"), c->start_ns);
			ck_assert_int_eq(ev_int(json_get(e, "args"), "tid"), c->tid);
			cp_ns += ev_ns(e, "dur");
		} else if (!strcmp(ph, "C")) {
			int64_t r = ev_int(json_get(e, "args"), "running");

			ck_assert_str_eq(ev_str(e, "name"), "tasks");
			ck_assert_int_eq(ev_int(e, "pid"), CP_PID);
			ck_assert(r >= 0 && r <= 2); /* never more than the 2 running at once */
			ck_assert(!ncounters || ev_ns(e, "ts") > last_ts);
			last_ts = ev_ns(e, "ts");
			last = e;
			ncounters++;
		}
	}
	ck_assert_uint_eq(ncp, run.timeline.ncp);
	ck_assert_uint_eq(cp_ns, run.timeline.cp_total_ns);
	/* the last step: nothing running or runnable, at the end of the last segment */
	ck_assert_ptr_nonnull(last);
	ck_assert_int_eq(ev_int(json_get(last, "args"), "running"), 0);
	ck_assert_int_eq(ev_int(json_get(last, "args"), "runnable"), 0);
	ck_assert_uint_eq(last_ts, 10000 * US);
	ck_assert(ncounters > 5);
	json_free(v);
	free(out);
	sp_run_free(&run);
}
END_TEST

/* The running/runnable steps (timeline.h) against a count by brute force at every step. */
START_TEST(test_counts)
{
	struct sp_run run;
	struct sp_tl_count *c;
	size_t n;

	tlf_small(&run);
	ck_assert_int_eq(sp_tl_counts(&run.timeline, &c, &n), 0);
	ck_assert(n > 0);
	for (size_t i = 0; i < n; i++) {
		uint32_t r = 0, q = 0;

		for (size_t k = 0; k < run.timeline.nsegs; k++) {
			const struct sp_tl_seg *s = &run.timeline.segs[k];

			if (s->start_ns <= c[i].ns && c[i].ns < s->start_ns + s->ns) {
				r += s->state == SP_TL_RUNNING;
				q += s->state == SP_TL_RUNNABLE;
			}
		}
		ck_assert_msg(c[i].running == r && c[i].runnable == q, "at %llu: %u/%u, not %u/%u",
			      (unsigned long long)c[i].ns, c[i].running, c[i].runnable, r, q);
		ck_assert(!i || c[i].ns > c[i - 1].ns);
		ck_assert(!i || c[i].running != c[i - 1].running ||
			  c[i].runnable != c[i - 1].runnable);
	}
	/* 0: make running; 1 ms: make blocks, cc1 and as runnable [new] */
	ck_assert_uint_eq(c[0].ns, 0);
	ck_assert_uint_eq(c[0].running, 1);
	ck_assert_uint_eq(c[1].ns, 500 * US);
	ck_assert_uint_eq(c[1].running, 0);
	free(c);
	sp_run_free(&run);
}
END_TEST

START_TEST(test_deterministic_and_lines)
{
	struct sp_run run;
	size_t len1, len2, lines = 0;
	char *a, *b;

	tlf_small(&run);
	a = render_te(&run, &len1);
	b = render_te(&run, &len2);
	ck_assert_uint_eq(len1, len2);
	ck_assert(!memcmp(a, b, len1));
	/* one event per line, the document's head and tail on lines of their own */
	for (size_t i = 0; i < len1; i++)
		lines += a[i] == '\n';
	ck_assert(!strncmp(a, "{\"traceEvents\":[\n{\"ph\":\"M\"", 26));
	ck_assert_msg(lines > 40, "%zu lines", lines);
	ck_assert(a[len1 - 1] == '\n');
	free(a);
	free(b);
	sp_run_free(&run);
}
END_TEST

START_TEST(test_escaping)
{
	struct sp_run run;
	size_t len;
	char *out;
	struct json_value *v;
	const struct json_value *evs;
	bool seen = false;

	tlf_small(&run);
	free(run.timeline.tasks[1].comm);
	run.timeline.tasks[1].comm = xstrdup("c\"c\\1\n\x01\xff");
	free(run.timeline.segs[7].caller); /* cc1's runnable [new] */
	run.timeline.segs[7].caller = xstrdup("</script>\t");
	out = render_te(&run, &len);
	v = parse(out, len);
	evs = json_get(v, "traceEvents");
	for (size_t i = 0; i < json_len(evs); i++) {
		const struct json_value *e = json_at(evs, i);

		if (!strcmp(ev_str(e, "ph"), "M") && ev_int(e, "tid") == 200 &&
		    !strcmp(ev_str(e, "name"), "thread_name")) {
			ck_assert_str_eq(ev_str(json_get(e, "args"), "name"),
					 "c\"c\\1\n\x01\xef\xbf\xbd");
			seen = true;
		}
	}
	ck_assert(seen);
	ck_assert_ptr_nonnull(strstr(out, "\"name\":\"runnable </script>\\t\""));
	json_free(v);
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(test_no_timeline)
{
	struct sp_run run;
	struct render_opts o = { .format = SP_FMT_TRACE_EVENT, .views = SP_VIEW_ALL };
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	unit_load(FIX("run_a.json"), &run);
	ck_assert(!run.timeline.present);
	ck_assert_str_eq(render_run_missing(&run, SP_FMT_TRACE_EVENT),
			 "no timeline in this run: trace with --timeline");
	ck_assert_str_eq(render_run_missing(&run, SP_FMT_TIMELINE),
			 "no timeline in this run: trace with --timeline");
	ck_assert_ptr_null(render_run_missing(&run, SP_FMT_TABLE));
	ck_assert_ptr_null(render_run_missing(&run, SP_FMT_HTML));
	m = open_memstream(&buf, &len);
	ck_assert_int_eq(render_run(&run, &o, m), -EINVAL);
	fclose(m);
	ck_assert_uint_eq(len, 0);
	free(buf);
	sp_run_free(&run);
	tlf_small(&run);
	ck_assert_ptr_null(render_run_missing(&run, SP_FMT_TRACE_EVENT));
	ck_assert_ptr_null(render_run_missing(&run, SP_FMT_TABLE));
	sp_run_free(&run);
}
END_TEST

START_TEST(test_write_error)
{
	struct sp_run run;
	struct render_opts o = { .format = SP_FMT_TRACE_EVENT, .views = SP_VIEW_ALL };
	FILE *f = fopen("/dev/full", "w");

	ck_assert_ptr_nonnull(f);
	tlf_small(&run);
	ck_assert_int_lt(render_run(&run, &o, f), 0);
	fclose(f);
	sp_run_free(&run);
}
END_TEST

/* 10^5 segments: every one out, flows for every wake-up, one line each. */
START_TEST(test_big)
{
	struct sp_run run;
	size_t len, lines = 0, ntasks = 50, nsegs = 2000, blocked_woken;
	char *out;
	struct json_value *v;
	const struct json_value *evs;

	tlf_big(&run, (int)ntasks, (int)nsegs);
	out = render_te(&run, &len);
	v = parse(out, len);
	evs = json_get(v, "traceEvents");
	for (size_t i = 0; i < len; i++)
		lines += out[i] == '\n';
	/* tasks 1.. are woken by the task before: every third segment */
	blocked_woken = (ntasks - 1) * (nsegs / 3);
	ck_assert_uint_eq(count_ph(evs, "X"), ntasks * nsegs + nsegs);
	ck_assert_uint_eq(count_ph(evs, "s"), blocked_woken);
	ck_assert_uint_eq(count_ph(evs, "f"), blocked_woken);
	ck_assert_uint_eq(json_len(evs) + 2, lines);
	json_free(v);
	free(out);
	sp_run_free(&run);
}
END_TEST

/*
 * trace -f trace-event and trace -f json | report -f trace-event: the same bytes, for the
 * hand-built run through the JSON writer and reader, and for the fixture file written from it
 * (tests/fixtures/run_timeline.json); the timeline page too.
 */
START_TEST(test_round_trip)
{
	static const enum sp_format fmts[] = { SP_FMT_TRACE_EVENT, SP_FMT_TIMELINE };
	struct sp_run run, back, file;
	char err[256], *json;
	size_t len;

	tlf_small(&run);
	json = unit_render_fmt(&run, SP_FMT_JSON, SP_VIEW_EVERY, SP_VALUE_COUNT, &len);
	ck_assert_msg(sp_run_from_json(json, len, &back, err, sizeof(err)) == 0, "%s", err);
	ck_assert(back.timeline.present);
	ck_assert_uint_eq(back.timeline.nsegs, run.timeline.nsegs);
	unit_load(FIX("run_timeline.json"), &file);
	for (size_t i = 0; i < ARRAY_SIZE(fmts); i++) {
		size_t l1, l2, l3;
		char *a = unit_render_fmt(&run, fmts[i], SP_VIEW_EVERY, SP_VALUE_COUNT, &l1);
		char *b = unit_render_fmt(&back, fmts[i], SP_VIEW_EVERY, SP_VALUE_COUNT, &l2);
		char *c = unit_render_fmt(&file, fmts[i], SP_VIEW_EVERY, SP_VALUE_COUNT, &l3);

		ck_assert_msg(l1 == l2 && !memcmp(a, b, l1), "format %d differs after JSON", fmts[i]);
		ck_assert_msg(l1 == l3 && !memcmp(a, c, l1), "format %d differs from the fixture",
			      fmts[i]);
		free(a);
		free(b);
		free(c);
	}
	free(json);
	sp_run_free(&file);
	sp_run_free(&back);
	sp_run_free(&run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("format_trace_event");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_segments);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_throttled_and_stolen);
	tcase_add_test(tc, test_flows);
	tcase_add_test(tc, test_critical_path_and_counters);
	tcase_add_test(tc, test_counts);
	tcase_add_test(tc, test_deterministic_and_lines);
	tcase_add_test(tc, test_escaping);
	tcase_add_test(tc, test_no_timeline);
	tcase_add_test(tc, test_write_error);
	tcase_add_test(tc, test_big);
	tcase_add_test(tc, test_round_trip);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
