// SPDX-License-Identifier: BSD-2-Clause
/*
 * -f timeline (src/format/format_timeline.c) on hand-built timelines: a self-contained page
 * (no script, no external resource); the lanes grouped by comm with their labels; every
 * segment a rect of its state's colour with its tooltip; the critical path's lane and
 * outlines; the CPU use; the serial phases; the tables; escaping; deterministic bytes; a big
 * timeline drawn by pixel columns (at most one rect per column and lane, the states' colours
 * mixed by their shares of the time, merged tooltips that sum the segments exactly).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"
#include "timeline_fixture.h"

/*
 * GCC 12 takes pointers into unit_render()'s result (open_memstream's buffer, inlined) for
 * pointers to its local variable: a false -Wdangling-pointer.
 */
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wdangling-pointer"

/* The page's geometry (format_timeline.c) */
#define PLOT_X 190
#define PLOT_W 1000
#define USE_Y 54
#define CP_Y 168
#define LANES_Y 194
#define LANE_H 14

#define C_RUNNING "#3a9a3a"
#define C_RUNNABLE "#f0a030"
#define C_BLOCKED "#c8d2e0"

static char *render_tl(const struct sp_run *run, size_t *ret_len)
{
	return unit_render_fmt(run, SP_FMT_TIMELINE, SP_VIEW_EVERY, SP_VALUE_COUNT, ret_len);
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* A state's rect: <rect x= y= width= height="11" fill=>, its title after it. */
struct bar {
	int x, y, w;
	char fill[8];
	const char *title; /* into the page */
};

/* The next bar from *p on, or false. */
static bool next_bar(const char **p, struct bar *b)
{
	const char *r;

	while ((r = strstr(*p, "<rect x=\""))) {
		*p = r + 1;
		if (sscanf(r, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"11\" fill=\"%7[^\"]\">",
			   &b->x, &b->y, &b->w, b->fill) == 4) {
			b->title = strstr(r, "<title>") + 7;
			return true;
		}
	}
	return false;
}

static bool title_is(const struct bar *b, const char *title)
{
	return !strncmp(b->title, title, strlen(title)) &&
	       !strncmp(b->title + strlen(title), "</title>", 8);
}

START_TEST(test_page)
{
	struct sp_run run;
	size_t len;
	char *out, *http;

	tlf_small(&run);
	out = render_tl(&run, &len);
	ck_assert(!strncmp(out, "<!DOCTYPE html>\n", 16));
	ck_assert_str_eq(out + len - 8, "</html>\n");
	ck_assert_uint_eq(count(out, "<svg"), 1);
	ck_assert_uint_eq(count(out, "</svg>"), 1);
	/* self-contained: no script, no link, no image, no font or style loaded from elsewhere */
	ck_assert_uint_eq(count(out, "<script"), 0);
	ck_assert_uint_eq(count(out, "src="), 0);
	ck_assert_uint_eq(count(out, "href"), 0);
	ck_assert_uint_eq(count(out, "url("), 0);
	ck_assert_uint_eq(count(out, "@import"), 0);
	http = strstr(out, "http");
	ck_assert_ptr_nonnull(http);
	ck_assert(!strncmp(http - 7, "xmlns=\"http://www.w3.org/2000/svg\"", 34));
	ck_assert_uint_eq(count(out, "http"), 1);
	/* the legend, the axis' ends */
	for (const char *const *w = (const char *const[]){ ">running<", ">blocked<",
		">runnable (waiting for a CPU)<", ">critical path<", ">CPU use<", ">serial phase<",
		">0ns</text>", ">10.0ms</text>", NULL }; *w; w++)
		ck_assert_msg(strstr(out, *w), "no %s", *w);
	free(out);
	sp_run_free(&run);
}
END_TEST

/*
 * Throttled waits and stolen time have their colours, tips and legend entries only when the
 * run has them (cc1's [preempted] wait at 3000-3200 us throttled, its run at 1050-3000 with
 * 300 us stolen).
 */
START_TEST(test_throttled_and_stolen)
{
	struct sp_run run;
	size_t len;
	char *out;

	tlf_small(&run);
	out = render_tl(&run, &len);
	ck_assert_ptr_null(strstr(out, "throttled (CPU quota)"));
	ck_assert_ptr_null(strstr(out, "stolen (hypervisor, IRQs)"));
	free(out);
	tlf_throttle_and_steal(&run);
	out = render_tl(&run, &len);
	for (const char *const *w = (const char *const[]){ ">throttled (CPU quota)<",
		">stolen (hypervisor, IRQs)<", ">runnable<", ">demand<", "fill=\"#e0508a\"",
		", throttled by its CPU quota", ", stolen 300.0us", NULL }; *w; w++)
		ck_assert_msg(strstr(out, *w), "no %s", *w);
	free(out);
	sp_run_free(&run);
}
END_TEST

/* Lanes by comm (then start, tid), labelled; each segment one rect of its colour, its tip. */
START_TEST(test_lanes)
{
	static const char *const labels[] = { ">as 300</text>", ">as-helper 301</text>",
					      ">cc1 200</text>", ">make 100</text>" };
	static const int lane_tid[] = { 300, 301, 200, 100 };
	struct sp_run run;
	const char *p, *prev = NULL;
	struct bar b;
	size_t per_lane[4] = { 0 }, nbars = 0;
	char *out;

	tlf_small(&run);
	out = render_tl(&run, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(labels); i++) {
		p = strstr(out, labels[i]);
		ck_assert_msg(p && p > prev, "label %s missing or out of order", labels[i]);
		prev = p;
	}
	for (p = out; next_bar(&p, &b);) {
		size_t lane;
		const struct sp_tl_seg *s = NULL;

		if (b.y < LANES_Y)
			continue; /* the critical path's lane */
		lane = (size_t)(b.y - LANES_Y) / LANE_H;
		ck_assert_uint_lt(lane, 4);
		ck_assert_int_eq(b.y, LANES_Y + (int)lane * LANE_H);
		/* the segment at this x on this lane's task */
		for (size_t i = 0; i < run.timeline.nsegs; i++) {
			const struct sp_tl_seg *t = &run.timeline.segs[i];

			if (t->tid == lane_tid[lane] && (int)(t->start_ns / 10000) == b.x - PLOT_X)
				s = t;
		}
		ck_assert_msg(s, "a rect at x %d of lane %zu is no segment", b.x, lane);
		ck_assert_int_eq(b.w, (int)(s->ns / 10000)); /* 10 us a pixel */
		ck_assert_str_eq(b.fill, s->state == SP_TL_RUNNING ? C_RUNNING
				 : s->state == SP_TL_RUNNABLE ? C_RUNNABLE : C_BLOCKED);
		per_lane[lane]++;
		nbars++;
	}
	ck_assert_uint_eq(nbars, run.timeline.nsegs);
	ck_assert_uint_eq(per_lane[0], 5);
	ck_assert_uint_eq(per_lane[1], 1);
	ck_assert_uint_eq(per_lane[2], 4);
	ck_assert_uint_eq(per_lane[3], 7);
	/* the tooltips say it all */
	ck_assert_ptr_nonnull(strstr(out, "<title>as 300: blocked 1.0ms in anon_pipe_read (pipe), "
				     "woken by cc1 200 from anon_pipe_write, at 2.0ms</title>"));
	ck_assert_ptr_nonnull(strstr(out, "<title>make 100: blocked 8.0ms in do_wait (child), "
				     "woken by as 300 from do_notify_parent, at 1.0ms</title>"));
	ck_assert_ptr_nonnull(strstr(out, "<title>cc1 200: runnable 200.0us [preempted], at "
				     "3.0ms</title>"));
	ck_assert_ptr_nonnull(strstr(out, "<title>make 100: running 900.0us on CPU 1, at "
				     "9.1ms</title>"));
	ck_assert_ptr_nonnull(strstr(out, "<title>as-helper 301: blocked 8.5ms in futex_wait_queue"
				     " (other), at 1.5ms (unfinished at the end of the trace)"));
	ck_assert_ptr_nonnull(strstr(out, "woken by [irq], at 500.0us</title>"));
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(test_critical_path)
{
	struct sp_run run;
	const char *p, *g, *g_end;
	struct bar b;
	size_t n = 0;
	char *out;

	tlf_small(&run);
	out = render_tl(&run, NULL);
	for (p = out; next_bar(&p, &b);) {
		const struct sp_cp_seg *c;

		if (b.y != CP_Y)
			continue;
		ck_assert_uint_lt(n, run.timeline.ncp);
		c = &run.timeline.cp[n++];
		ck_assert_int_eq(b.x, PLOT_X + (int)(c->start_ns / 10000));
		ck_assert_int_eq(b.w, (int)(c->ns / 10000));
		ck_assert_str_eq(b.fill, c->state == SP_TL_RUNNING ? C_RUNNING : C_RUNNABLE);
	}
	ck_assert_uint_eq(n, run.timeline.ncp);
	ck_assert(strstr(out, "<title>critical path: as 300 running 5.9ms at 3.1ms</title>"));
	/* outlined on the lanes: make 0-1 ms, cc1 1-3 ms, as 3-9 ms, make 9-10 ms */
	g = strstr(out, "<g class=\"cpo\">");
	ck_assert_ptr_nonnull(g);
	g_end = strstr(g, "</g>");
	ck_assert_ptr_nonnull(g_end);
	n = 0;
	for (p = g; (p = strstr(p, "<rect ")) && p < g_end; p++)
		n++;
	ck_assert_uint_eq(n, 4);
	ck_assert(strstr(g, "<rect x=\"490.5\" y=\"193.5\" width=\"599\" height=\"12\"/>"));
	free(out);
	sp_run_free(&run);
}
END_TEST

/* The CPU use: running tasks / CPUs per pixel column, 100% at USE_Y, 0% 100 px lower. */
START_TEST(test_cpu_use)
{
	struct sp_run run;
	const char *p;
	char *out, *poly;

	tlf_small(&run);
	out = render_tl(&run, NULL);
	p = strstr(out, "<polygon fill=\"#8fd18f\" points=\"");
	ck_assert_ptr_nonnull(p);
	poly = strndup(p, (size_t)(strstr(p, "\">") - p));
	ck_assert_ptr_nonnull(poly);
	/* 600 us: nothing running (make sleeps); 1.5 ms: cc1 and as on both CPUs; 7 ms: as alone */
	ck_assert(strstr(poly, " 250,154.0 251,154.0 "));
	ck_assert(strstr(poly, " 340,54.0 341,54.0 "));
	ck_assert(strstr(poly, " 890,104.0 891,104.0 "));
	ck_assert_uint_eq(count(poly, ","), 2 * PLOT_W + 2);
	free(poly);
	/* the serial phase under it, with its tip */
	ck_assert(strstr(out, "<rect class=\"serial\" x=\"790\" y=\"54\" width=\"300\" height=\"100\">"
			 "<title>serial phase: as 300 alone for 3.0ms from 6.0ms</title></rect>"));
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(test_tables)
{
	struct sp_run run;
	char *out;

	tlf_small(&run);
	out = render_tl(&run, NULL);
	ck_assert(strstr(out, "<h2>Critical path</h2>\n<p>10.0ms in 7 steps, from task 100"));
	ck_assert(strstr(out, "<tr><td>as</td><td>running</td><td></td><td class=\"n\">5.9ms</td>"
			 "<td class=\"n\">59.0%</td></tr>"));
	ck_assert(strstr(out, "<tr><td>cc1</td><td>runnable</td><td>[new]</td>"));
	/* parallelism: 1 running 6.8 of 10 ms, 2 runnable 100 us */
	ck_assert(strstr(out, "<tr><td class=\"n\">1</td><td class=\"n\">6.8ms</td><td class=\"n\">"
			 "68.0%</td><td class=\"n\">450.0us</td><td class=\"n\">4.5%</td></tr>"));
	ck_assert(strstr(out, "<tr><td>as</td><td class=\"n\">300</td><td class=\"n\">6.0ms</td>"
			 "<td class=\"n\">3.0ms</td></tr>"));
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(test_escaping_and_losses)
{
	struct sp_run run;
	char *out;

	tlf_small(&run);
	free(run.timeline.tasks[1].comm);
	run.timeline.tasks[1].comm = xstrdup("<b>&\"x\x01\xff");
	free(run.timeline.segs[7].comm);
	run.timeline.segs[7].comm = xstrdup("<i>");
	run.timeline.lost = 17;
	out = render_tl(&run, NULL);
	ck_assert(strstr(out, ">&lt;b&gt;&amp;&quot;x\xef\xbf\xbd\xef\xbf\xbd 200</text>"));
	ck_assert(strstr(out, "<title>&lt;i&gt; 200: runnable 50.0us [new]"));
	ck_assert(!strstr(out, "<b>") && !strstr(out, "<i>"));
	ck_assert(strstr(out, "<p class=\"warn\">17 events were lost"));
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(test_deterministic_and_errors)
{
	struct sp_run run;
	struct render_opts o = { .format = SP_FMT_TIMELINE, .views = SP_VIEW_EVERY };
	size_t l1, l2, len = 0;
	char *a, *b, *buf = NULL;
	FILE *f;

	tlf_small(&run);
	a = render_tl(&run, &l1);
	b = render_tl(&run, &l2);
	ck_assert(l1 == l2 && !memcmp(a, b, l1));
	free(a);
	free(b);
	f = fopen("/dev/full", "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_lt(render_run(&run, &o, f), 0);
	fclose(f);
	sp_run_free(&run);
	/* no timeline: refused, nothing written */
	unit_load(FIX("run_full.json"), &run);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(render_run(&run, &o, f), -EINVAL);
	fclose(f);
	ck_assert_uint_eq(len, 0);
	free(buf);
	sp_run_free(&run);
}
END_TEST

/*
 * 100 tasks x 3000 segments (3 x 10^5) of 1-3 us, 6 us a cycle, on a plot of 6.006 us
 * columns: each of the first 999 columns holds a cycle (+6 ns), 1/6 running, 2/6 runnable,
 * 3/6 blocked: one rect of the colours mixed 2:3:5 (in tenths), whose tooltip sums the
 * lane's 3000 segments exactly; the last column holds only the last 6 ns of the last
 * (blocked) segment: a blocked rect with that segment's own tooltip.
 */
START_TEST(test_big_aggregated)
{
	struct sp_run run;
	const char *p;
	struct bar b;
	size_t len, lanes = 0, ntasks = 100, nbars = 0;
	char *out, mix[8];

	/* 2 x #3a9a3a + 3 x #f0a030 + 5 x #c8d2e0, per channel, / 10 rounded */
	snprintf(mix, sizeof(mix), "#%02x%02x%02x", (2 * 0x3a + 3 * 0xf0 + 5 * 0xc8 + 5) / 10,
		 (2 * 0x9a + 3 * 0xa0 + 5 * 0xd2 + 5) / 10, (2 * 0x3a + 3 * 0x30 + 5 * 0xe0 + 5) / 10);
	tlf_big(&run, (int)ntasks, 3000);
	out = render_tl(&run, &len);
	ck_assert_msg(len < 2 * 1024 * 1024, "%zu bytes", len);
	for (p = out; next_bar(&p, &b);) {
		if (b.y < LANES_Y)
			continue;
		if (!(nbars++ % 2)) {
			ck_assert_int_eq(b.y, LANES_Y + (int)lanes * LANE_H);
			ck_assert_int_eq(b.x, PLOT_X);
			ck_assert_int_eq(b.w, PLOT_W - 1);
			ck_assert_str_eq(b.fill, mix);
			ck_assert(title_is(&b, "3000 segments: running 1.0ms, runnable 2.0ms, "
					       "blocked 3.0ms"));
			lanes++;
		} else {
			ck_assert_int_eq(b.x, PLOT_X + PLOT_W - 1);
			ck_assert_int_eq(b.w, 1);
			ck_assert_str_eq(b.fill, C_BLOCKED);
			ck_assert(!strncmp(b.title, "worker/", 7));
			ck_assert(strstr(b.title, ": blocked 3.0us in do_wait") < strstr(b.title, "</title>"));
		}
	}
	ck_assert_uint_eq(lanes, ntasks);
	ck_assert_uint_eq(nbars, 2 * ntasks);
	/* lanes grouped by comm: worker/0 (tasks 0, 7, 14, ...) first */
	ck_assert(strstr(out, ">worker/0 1000</text>") < strstr(out, ">worker/0 1007</text>"));
	ck_assert(strstr(out, ">worker/0 1098</text>") < strstr(out, ">worker/1 1001</text>"));
	free(out);
	sp_run_free(&run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("format_timeline");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_page);
	tcase_add_test(tc, test_lanes);
	tcase_add_test(tc, test_throttled_and_stolen);
	tcase_add_test(tc, test_critical_path);
	tcase_add_test(tc, test_cpu_use);
	tcase_add_test(tc, test_tables);
	tcase_add_test(tc, test_escaping_and_losses);
	tcase_add_test(tc, test_deterministic_and_errors);
	tcase_add_test(tc, test_big_aggregated);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
