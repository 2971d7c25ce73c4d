// SPDX-License-Identifier: BSD-2-Clause
/*
 * -f timeline: the timeline (--timeline) as one self-contained HTML page with an inline SVG,
 * no script and no external resource: one lane per task, grouped by comm, coloured running /
 * runnable / blocked; the CPU use over time (running tasks / CPUs, and running + runnable
 * ones: the demand) with the serial phases shaded; the critical path as a lane of its own and
 * outlined on the tasks' lanes; a legend, a time axis, task labels, and tooltips (<title>).
 * Below it, the critical path's ranking, the parallelism and the serial phases as tables.
 *
 * A big timeline (10^6 segments) stays a page a browser draws: each lane is drawn by pixel
 * columns (the plot is PLOT_W columns wide, each an exact integer range of nanoseconds),
 * every column shows its states' colours mixed by their shares of its time (in tenths: a
 * column of one state has that state's colour), and neighbouring columns of the same mix are
 * one rectangle. A rectangle that stands for one segment has that segment's tooltip; one that
 * merges several says how many and sums their states. So a lane has at most PLOT_W
 * rectangles, whatever its number of segments.
 *
 * Also here, what both timeline outputs share (timeline.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/render.h"
#include "format/timeline.h"
#include "base/util.h"
#include "format/xmltext.h"

/* ---- shared with format_trace_event.c ---- */

static int cmp_by_tid(const void *pa, const void *pb, void *arg)
{
	const struct sp_tl_task *tasks = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;

	if (tasks[a].tid != tasks[b].tid)
		return tasks[a].tid < tasks[b].tid ? -1 : 1;
	return a < b ? -1 : a > b;
}

int sp_tl_index_init(struct sp_tl_index *ix, const struct sp_timeline *tl)
{
	ix->tl = tl;
	ix->n = tl->ntasks;
	ix->by_tid = malloc((tl->ntasks ? tl->ntasks : 1) * sizeof(*ix->by_tid));
	if (!ix->by_tid)
		return -ENOMEM;
	for (size_t i = 0; i < tl->ntasks; i++)
		ix->by_tid[i] = i;
	qsort_r(ix->by_tid, ix->n, sizeof(*ix->by_tid), cmp_by_tid, tl->tasks);
	return 0;
}

void sp_tl_index_free(struct sp_tl_index *ix)
{
	free(ix->by_tid);
	ix->by_tid = NULL;
	ix->n = 0;
}

static ssize_t index_find(const struct sp_tl_index *ix, int tid)
{
	size_t lo = 0, hi = ix->n;

	/* the first entry whose tid is >= tid */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->tl->tasks[ix->by_tid[mid]].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ix->n && ix->tl->tasks[ix->by_tid[lo]].tid == tid)
		return (ssize_t)ix->by_tid[lo];
	return -1;
}

const struct sp_tl_task *sp_tl_index_find(const struct sp_tl_index *ix, int tid)
{
	ssize_t i = index_find(ix, tid);

	return i < 0 ? NULL : &ix->tl->tasks[i];
}

struct count_edge {
	uint64_t ns;
	int32_t running, runnable; /* +1 at a segment's start, -1 at its end */
};

static int cmp_edge(const void *pa, const void *pb)
{
	const struct count_edge *a = pa, *b = pb;

	return a->ns < b->ns ? -1 : a->ns > b->ns;
}

int sp_tl_counts(const struct sp_timeline *tl, struct sp_tl_count **ret, size_t *ret_n)
{
	struct count_edge *e = malloc((2 * tl->nsegs + 1) * sizeof(*e));
	struct sp_tl_count *c = NULL;
	size_t n = 0, k = 0;
	int64_t running = 0, runnable = 0;

	*ret = NULL;
	*ret_n = 0;
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < tl->nsegs; i++) {
		const struct sp_tl_seg *s = &tl->segs[i];
		int32_t r = s->state == SP_TL_RUNNING, q = s->state == SP_TL_RUNNABLE;

		if ((!r && !q) || !s->ns)
			continue;
		e[n++] = (struct count_edge){ s->start_ns, r, q };
		e[n++] = (struct count_edge){ sp_tl_end(s->start_ns, s->ns), -r, -q };
	}
	/* the order among equal times does not matter: all of a time's edges make one step */
	qsort(e, n, sizeof(*e), cmp_edge);
	c = malloc((n ? n : 1) * sizeof(*c));
	if (!c) {
		free(e);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n;) {
		uint64_t t = e[i].ns;

		for (; i < n && e[i].ns == t; i++) {
			running += e[i].running;
			runnable += e[i].runnable;
		}
		/* a step that changes nothing (one segment ends as the next begins) is none */
		if (k && c[k - 1].running == running && c[k - 1].runnable == runnable)
			continue;
		c[k++] = (struct sp_tl_count){ t, (uint32_t)running, (uint32_t)runnable };
	}
	free(e);
	*ret = c;
	*ret_n = k;
	return 0;
}

/* ---- the page ---- */

#define PAD 10
#define LABEL_W 180			  /* the task labels left of the plot */
#define PLOT_X (PAD + LABEL_W)		  /* where time 0 is */
#define PLOT_W 1000			  /* pixel columns */
#define SVG_W (PLOT_X + PLOT_W + 3 * PAD) /* room for the last tick label */
#define LEGEND_Y 18
#define AXIS_Y 44			  /* the time axis' labels */
#define USE_Y 54			  /* top of the CPU use chart */
#define USE_H 100
#define LANE_H 14
#define BAR_H 11
#define CP_Y (USE_Y + USE_H + 14)	  /* the critical path's lane */
#define LANES_Y (CP_Y + LANE_H + 12)	  /* the first task's lane */

#define C_RUNNING "#3a9a3a"
#define C_RUNNABLE "#f0a030"
#define C_BLOCKED "#c8d2e0"
#define C_CP "#d0203a"
#define C_USE "#8fd18f"
#define C_DEMAND "#e07b00"
#define C_SERIAL "#9060c0"
#define C_THROTTLED "#e0508a"
#define C_STOLEN "#3a6a9a"

/*
 * What a lane draws: the three states, then runnable while throttled by a CPU quota and the
 * part of running that was stolen (by the hypervisor, interrupts).
 */
enum draw { D_THROTTLED = SP_TL_BLOCKED + 1, D_STOLEN, D__N };
static const char *const state_colour[D__N] = { C_RUNNING, C_RUNNABLE, C_BLOCKED, C_THROTTLED,
						C_STOLEN };

struct page {
	const struct sp_run *run;
	const struct sp_timeline *tl;
	struct sp_tl_index ix;
	FILE *f;
	/*
	 * The first write error, sticky: nothing is written after it. Every write is checked,
	 * since a stream in memory that cannot grow loses output without setting its error
	 * (glibc's open_memstream; the allocation failure tests, test_format_errors.c).
	 */
	int err;
	uint64_t span; /* the plot's time range: [0, span) */
	size_t *lanes;	/* task indexes in lane order */
	size_t *lane_of; /* by task index: its lane */
	size_t *segs;	/* segment indexes by lane, then time */
	size_t *seg_first; /* by lane: its first entry in segs; [nlanes] = nsegs */
	bool throttled, stolen; /* some segment has them: their legend */
	struct col {
		uint64_t ns[D__N]; /* time in each drawn state */
		size_t first, last; /* the first and last item in the column */
		bool used;
	} cols[PLOT_W];
};

static void pw(struct page *p, const char *s, size_t len)
{
	if (!p->err && len && fwrite(s, 1, len, p->f) != len)
		p->err = -EIO;
}

static void ps(struct page *p, const char *s)
{
	pw(p, s, strlen(s));
}

__attribute__((format(printf, 2, 3)))
static void pf(struct page *p, const char *fmt, ...)
{
	va_list ap;

	if (p->err)
		return;
	va_start(ap, fmt);
	if (vfprintf(p->f, fmt, ap) < 0)
		p->err = -EIO;
	va_end(ap);
}

/* Text for HTML and SVG (xmltext.h); "?" for none. */
static void put_text(struct page *p, const char *str)
{
	if (!p->err && xml_put_text(str ? str : "?", 0, p->f))
		p->err = -EIO;
}

static void put_dur(struct page *p, uint64_t ns)
{
	char d[32];

	ps(p, fmt_duration(ns, d, sizeof(d)));
}

static double pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

/* v with one decimal ("154.0"), from integers: a locale's decimal comma would break the SVG. */
static const char *fx1(double v, char buf[static 32])
{
	long long t = (long long)(v * 10 + (v < 0 ? -0.5 : 0.5));
	unsigned long long a = t < 0 ? (unsigned long long)-t : (unsigned long long)t;

	snprintf(buf, 32, "%s%llu.%llu", t < 0 ? "-" : "", a / 10, a % 10);
	return buf;
}

/* The first nanosecond of column c (c = PLOT_W: span). */
static uint64_t col_ns(const struct page *p, size_t c)
{
	return (uint64_t)((unsigned __int128)c * p->span / PLOT_W);
}

static size_t col_of(const struct page *p, uint64_t ns)
{
	size_t c;

	if (ns >= p->span)
		return PLOT_W - 1;
	c = (size_t)((unsigned __int128)ns * PLOT_W / p->span);
	/* col_ns() rounds down: the column whose range holds ns */
	while (c + 1 < PLOT_W && col_ns(p, c + 1) <= ns)
		c++;
	while (c && col_ns(p, c) > ns)
		c--;
	return c;
}

/* Columns [*c0, *c1] covered by [start, start + ns); false when outside the plot or empty. */
static bool col_range(const struct page *p, uint64_t start, uint64_t ns, size_t *c0, size_t *c1)
{
	if (!ns || start >= p->span)
		return false;
	*c0 = col_of(p, start);
	*c1 = col_of(p, sp_tl_end(start, ns) - 1);
	return true;
}

/*
 * What a lane draws: count items, each in time order, with a time range, a drawn state
 * (enum draw) and of its time, the part stolen (spread over its range).
 */
struct lane_src {
	size_t n;
	void (*get)(const struct page *p, const void *ctx, size_t i, uint64_t *start, uint64_t *ns,
		    int *state, uint64_t *stolen);
	void (*tip)(struct page *p, const void *ctx, size_t i); /* one item's tooltip */
	const void *ctx;
};

static void put_merged_tip(struct page *p, size_t n, const uint64_t ns[D__N])
{
	pf(p, "%zu segments: running ", n);
	put_dur(p, ns[SP_TL_RUNNING] + ns[D_STOLEN]);
	if (ns[D_STOLEN]) {
		ps(p, " (stolen ");
		put_dur(p, ns[D_STOLEN]);
		ps(p, ")");
	}
	ps(p, ", runnable ");
	put_dur(p, ns[SP_TL_RUNNABLE] + ns[D_THROTTLED]);
	if (ns[D_THROTTLED]) {
		ps(p, " (throttled ");
		put_dur(p, ns[D_THROTTLED]);
		ps(p, ")");
	}
	ps(p, ", blocked ");
	put_dur(p, ns[SP_TL_BLOCKED]);
}

/* Tenths of the drawn states but blocked (the rest), in enum draw's order, by the mix. */
static const int mix_states[] = { SP_TL_RUNNING, SP_TL_RUNNABLE, D_THROTTLED, D_STOLEN };

/*
 * What a column shows: its states' shares of its time in tenths, as running * 11 + runnable
 * + 121 * (throttled * 11 + stolen) (blocked is the rest); -1 for a column with no time.
 * Neighbouring columns of one mix are one rect.
 */
static int col_mix(const struct col *c)
{
	/* 128 bits: overlapping segments of a hostile run may sum past 2^64 */
	unsigned __int128 total = 0;
	int w[ARRAY_SIZE(mix_states)], left = 10;

	for (int i = 0; i < D__N; i++)
		total += c->ns[i];
	if (!total)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(mix_states); i++) { /* rounded, at most 10 in all */
		w[i] = (int)(((unsigned __int128)c->ns[mix_states[i]] * 20 + total) / (2 * total));
		w[i] = w[i] < left ? w[i] : left;
		left -= w[i];
	}
	return w[0] * 11 + w[1] + 121 * (w[2] * 11 + w[3]);
}

/* A mix's colour: the states' colours weighted by their tenths (a pure state: its own). */
static const char *mix_colour(int mix, char buf[static 8])
{
	static const unsigned int rgb[D__N] = { 0x3a9a3a, 0xf0a030, 0xc8d2e0, 0xe0508a,
						0x3a6a9a }; /* C_RUNNING... */
	unsigned int w[D__N], out = 0;

	w[SP_TL_RUNNING] = (unsigned int)mix % 121 / 11;
	w[SP_TL_RUNNABLE] = (unsigned int)mix % 11;
	w[D_THROTTLED] = (unsigned int)mix / 121 / 11;
	w[D_STOLEN] = (unsigned int)mix / 121 % 11;
	w[SP_TL_BLOCKED] = 10 - w[SP_TL_RUNNING] - w[SP_TL_RUNNABLE] - w[D_THROTTLED] - w[D_STOLEN];
	for (int i = 0; i < D__N; i++)
		if (w[i] == 10)
			return state_colour[i];
	for (int shift = 16; shift >= 0; shift -= 8) {
		unsigned int v = 0;

		for (int i = 0; i < D__N; i++)
			v += w[i] * ((rgb[i] >> shift) & 0xff);
		out |= ((v + 5) / 10) << shift;
	}
	snprintf(buf, 8, "#%06x", out);
	return buf;
}

/* One lane at y: its items summed into the columns, then each run of a state one rect. */
static void put_lane(struct page *p, const struct lane_src *src, int y)
{
	size_t umin = PLOT_W, umax = 0;

	for (size_t i = 0; i < src->n; i++) {
		uint64_t start, ns, end, stolen;
		size_t c0, c1;
		int st;

		src->get(p, src->ctx, i, &start, &ns, &st, &stolen);
		if (!col_range(p, start, ns, &c0, &c1))
			continue;
		end = sp_tl_end(start, ns);
		for (size_t c = c0; c <= c1; c++) {
			struct col *col = &p->cols[c];
			uint64_t a = start > col_ns(p, c) ? start : col_ns(p, c);
			uint64_t b = end < col_ns(p, c + 1) ? end : col_ns(p, c + 1);
			uint64_t part = b > a ? b - a : 0, gone = 0;

			if (stolen && ns) /* the stolen share, spread over the item's range */
				gone = (uint64_t)((unsigned __int128)part *
						  (stolen < ns ? stolen : ns) / ns);

			col->ns[st] += part - gone;
			col->ns[D_STOLEN] += gone;
			if (!col->used)
				col->first = i;
			col->last = i;
			col->used = true;
		}
		umin = c0 < umin ? c0 : umin;
		umax = c1 > umax ? c1 : umax;
	}
	for (size_t c = umin; c <= umax && umin < PLOT_W;) {
		int mix = col_mix(&p->cols[c]);
		uint64_t sum[D__N] = { 0 };
		size_t e = c, first = p->cols[c].first, last;
		char colour[8];

		while (e + 1 <= umax && col_mix(&p->cols[e + 1]) == mix)
			e++;
		if (mix < 0) {
			c = e + 1;
			continue;
		}
		last = p->cols[e].last;
		for (size_t k = c; k <= e; k++)
			for (int s = 0; s < D__N; s++)
				sum[s] += p->cols[k].ns[s];
		pf(p, "<rect x=\"%zu\" y=\"%d\" width=\"%zu\" height=\"%d\" fill=\"%s\">"
			      "<title>", PLOT_X + c, y, e - c + 1, BAR_H, mix_colour(mix, colour));
		if (first == last)
			src->tip(p, src->ctx, first);
		else
			put_merged_tip(p, last - first + 1, sum);
		ps(p, "</title></rect>\n");
		c = e + 1;
	}
	if (umin < PLOT_W)
		memset(&p->cols[umin], 0, (umax - umin + 1) * sizeof(p->cols[0]));
}

/* ---- the tasks' lanes ---- */

static void seg_get(const struct page *p, const void *ctx, size_t i, uint64_t *start,
		    uint64_t *ns, int *state, uint64_t *stolen)
{
	const size_t *idx = ctx;
	const struct sp_tl_seg *s = &p->tl->segs[idx[i]];

	*start = s->start_ns;
	*ns = s->ns;
	*state = s->state <= SP_TL_BLOCKED ? (int)s->state : SP_TL_BLOCKED;
	if (s->state == SP_TL_RUNNABLE && s->throttled)
		*state = D_THROTTLED;
	*stolen = s->state == SP_TL_RUNNING ? s->stolen_ns : 0;
}

static void seg_tip(struct page *p, const void *ctx, size_t i)
{
	const size_t *idx = ctx;
	const struct sp_tl_seg *s = &p->tl->segs[idx[i]];

	put_text(p, s->comm);
	pf(p, " %d: %s ", s->tid, sp_tl_state_name(s->state));
	put_dur(p, s->ns);
	if (s->state == SP_TL_RUNNING) {
		pf(p, " on CPU %d", s->cpu);
		if (s->stolen_ns) {
			ps(p, ", stolen ");
			put_dur(p, s->stolen_ns);
		}
	} else if (s->state == SP_TL_RUNNABLE) {
		ps(p, " ");
		put_text(p, s->caller ? s->caller : "[unknown]");
		if (s->throttled)
			ps(p, ", throttled by its CPU quota");
	} else {
		ps(p, " in ");
		put_text(p, s->caller ? s->caller : "[unknown]");
		if (s->wait) {
			ps(p, " (");
			put_text(p, s->wait);
			ps(p, ")");
		}
		if (s->waker_comm) {
			ps(p, ", woken by ");
			put_text(p, s->waker_comm);
			if (s->waker_tid)
				pf(p, " %d", s->waker_tid);
			if (s->waker) {
				ps(p, " from ");
				put_text(p, s->waker);
			}
		}
	}
	ps(p, ", at ");
	put_dur(p, s->start_ns);
	if (s->unfinished)
		ps(p, " (unfinished at the end of the trace)");
}

static void cp_get(const struct page *p, const void *ctx, size_t i, uint64_t *start,
		   uint64_t *ns, int *state, uint64_t *stolen)
{
	const struct sp_cp_seg *c = &p->tl->cp[i];

	(void)ctx;
	*start = c->start_ns;
	*ns = c->ns;
	*state = c->state <= SP_TL_BLOCKED ? (int)c->state : SP_TL_BLOCKED;
	if (c->state == SP_TL_RUNNABLE && c->throttled)
		*state = D_THROTTLED;
	*stolen = 0;
}

static void cp_tip(struct page *p, const void *ctx, size_t i)
{
	const struct sp_cp_seg *c = &p->tl->cp[i];

	(void)ctx;
	ps(p, "critical path: ");
	put_text(p, c->comm);
	pf(p, " %d %s", c->tid, sp_tl_state_name(c->state));
	if (c->caller) {
		ps(p, " ");
		put_text(p, c->caller);
	}
	ps(p, " ");
	put_dur(p, c->ns);
	ps(p, " at ");
	put_dur(p, c->start_ns);
	if (c->throttled)
		ps(p, ", throttled by its CPU quota");
}

static int cmp_lane(const void *pa, const void *pb, void *arg)
{
	const struct sp_tl_task *tasks = arg;
	size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
	const struct sp_tl_task *a = &tasks[ia], *b = &tasks[ib];
	int c = strcmp(a->comm ? a->comm : "", b->comm ? b->comm : "");

	if (c)
		return c;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

static int cmp_seg(const void *pa, const void *pb, void *arg)
{
	const struct page *p = arg;
	size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
	const struct sp_tl_seg *a = &p->tl->segs[ia], *b = &p->tl->segs[ib];
	ssize_t ta = index_find(&p->ix, a->tid), tb = index_find(&p->ix, b->tid);
	size_t la = ta < 0 ? SIZE_MAX : p->lane_of[ta], lb = tb < 0 ? SIZE_MAX : p->lane_of[tb];

	if (la != lb)
		return la < lb ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

/* Lanes by (comm, start, tid), and the segments by lane and time. */
static int layout(struct page *p)
{
	const struct sp_timeline *tl = p->tl;
	size_t nt = tl->ntasks, l = 0;

	p->lanes = malloc((nt + 1) * sizeof(size_t));
	p->lane_of = malloc((nt + 1) * sizeof(size_t));
	p->segs = malloc((tl->nsegs + 1) * sizeof(size_t));
	p->seg_first = malloc((nt + 1) * sizeof(size_t));
	if (!p->lanes || !p->lane_of || !p->segs || !p->seg_first)
		return -ENOMEM;
	for (size_t i = 0; i < nt; i++)
		p->lanes[i] = i;
	qsort_r(p->lanes, nt, sizeof(size_t), cmp_lane, tl->tasks);
	for (size_t i = 0; i < nt; i++)
		p->lane_of[p->lanes[i]] = i;
	for (size_t i = 0; i < tl->nsegs; i++)
		p->segs[i] = i;
	qsort_r(p->segs, tl->nsegs, sizeof(size_t), cmp_seg, p);
	for (size_t i = 0; i <= nt; i++) {
		while (l < tl->nsegs) {
			ssize_t t = index_find(&p->ix, tl->segs[p->segs[l]].tid);

			if (t >= 0 && p->lane_of[t] >= i)
				break;
			l++; /* a segment of no task: sp_run_check() refuses it */
		}
		p->seg_first[i] = l;
	}
	p->seg_first[nt] = tl->nsegs;
	return 0;
}

static int lane_y(size_t lane)
{
	return LANES_Y + (int)lane * LANE_H;
}

static void put_lanes(struct page *p)
{
	const struct sp_timeline *tl = p->tl;
	unsigned int group = 0;

	for (size_t l = 0; l < tl->ntasks; l++) {
		const struct sp_tl_task *t = &tl->tasks[p->lanes[l]];
		bool first = !l || strcmp(t->comm ? t->comm : "",
					  tl->tasks[p->lanes[l - 1]].comm ? tl->tasks[p->lanes[l - 1]].comm : "");
		struct lane_src src = { p->seg_first[l + 1] - p->seg_first[l], seg_get, seg_tip,
					&p->segs[p->seg_first[l]] };
		int y = lane_y(l);

		group += first && l;
		if (group & 1)
			pf(p, "<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f2f2ee\"/>\n",
				y - 1, SVG_W, LANE_H);
		if (first && l)
			pf(p, "<line x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#bbb\"/>\n",
				y - 1, SVG_W, y - 1);
		pf(p, "<text class=\"%s\" x=\"%d\" y=\"%d\">", first ? "lbl grp" : "lbl", PAD,
			y + BAR_H - 1);
		put_text(p, t->comm);
		pf(p, " %d</text>\n", t->tid);
		put_lane(p, &src, y);
	}
}

/* The critical path outlined on its tasks' lanes: one outline per run of steps of a task. */
static void put_cp_outlines(struct page *p)
{
	const struct sp_timeline *tl = p->tl;
	ssize_t task = -1;
	size_t c0 = 0, c1 = 0, a = 0, b = 0;

	ps(p, "<g class=\"cpo\">\n");
	for (size_t i = 0; i <= tl->ncp; i++) {
		ssize_t t = i < tl->ncp ? index_find(&p->ix, tl->cp[i].tid) : -1;
		bool in = i < tl->ncp && t >= 0 && col_range(p, tl->cp[i].start_ns, tl->cp[i].ns, &a, &b);

		if (in && t == task && a <= c1 + 1) {
			c1 = b > c1 ? b : c1;
			continue;
		}
		if (task >= 0)
			pf(p, "<rect x=\"%zu.5\" y=\"%d.5\" width=\"%zu\" height=\"%d\"/>\n",
				PLOT_X + c0, lane_y(p->lane_of[task]) - 1, c1 - c0 ? c1 - c0 : 1,
				BAR_H + 1);
		task = in ? t : -1;
		c0 = a;
		c1 = b;
	}
	ps(p, "</g>\n");
}

/* ---- CPU use, axis, legend ---- */

/* Mean running and running + runnable tasks per column, from the counts' steps. */
static int put_use(struct page *p)
{
	int ncpus = p->run->ncpus > 0 ? p->run->ncpus : 1;
	struct sp_tl_count *c;
	size_t n;
	double *run = calloc(PLOT_W, sizeof(double)), *dem = calloc(PLOT_W, sizeof(double));
	double ymax = 1.0;
	char b1[32];
	int err = run && dem ? sp_tl_counts(p->tl, &c, &n) : -ENOMEM;

	if (err)
		goto out;
	for (size_t i = 0; i + 1 < n; i++) {
		uint64_t start = c[i].ns, end = c[i + 1].ns;
		size_t c0, c1;

		if (!col_range(p, start, end - start, &c0, &c1))
			continue;
		for (size_t k = c0; k <= c1; k++) {
			uint64_t a = start > col_ns(p, k) ? start : col_ns(p, k);
			uint64_t b = end < col_ns(p, k + 1) ? end : col_ns(p, k + 1);
			double w = b > a ? (double)(b - a) : 0;

			run[k] += w * c[i].running;
			dem[k] += w * (c[i].running + c[i].runnable);
		}
	}
	for (size_t k = 0; k < PLOT_W; k++) {
		double w = (double)(col_ns(p, k + 1) - col_ns(p, k));

		run[k] = w > 0 ? run[k] / w / ncpus : 0;
		dem[k] = w > 0 ? dem[k] / w / ncpus : 0;
		if (dem[k] > ymax)
			ymax = dem[k];
	}
	ymax = (double)(int)(ymax * 2 + 0.999) / 2; /* up to a multiple of 50% */
	pf(p, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fbfbf8\" "
		   "stroke=\"#ccc\"/>\n", PLOT_X, USE_Y, PLOT_W, USE_H);
	for (size_t i = 0; i < p->tl->nserial; i++) {
		const struct sp_serial_phase *s = &p->tl->serial[i];
		size_t a, b;

		if (!col_range(p, s->start_ns, s->ns, &a, &b))
			continue;
		pf(p, "<rect class=\"serial\" x=\"%zu\" y=\"%d\" width=\"%zu\" height=\"%d\">"
			   "<title>serial phase: ", PLOT_X + a, USE_Y, b - a + 1, USE_H);
		put_text(p, s->comm);
		pf(p, " %d alone for ", s->tid);
		put_dur(p, s->ns);
		ps(p, " from ");
		put_dur(p, s->start_ns);
		ps(p, "</title></rect>\n");
	}
	/* the area of the CPU use, and the demand's line */
	pf(p, "<polygon fill=\"%s\" points=\"%d,%d", C_USE, PLOT_X, USE_Y + USE_H);
	for (size_t k = 0; k < PLOT_W; k++)
		pf(p, " %zu,%s %zu,%s", PLOT_X + k, fx1(USE_Y + USE_H - run[k] / ymax * USE_H, b1),
			PLOT_X + k + 1, b1);
	pf(p, " %d,%d\"><title>CPU use: running tasks / %d CPUs</title></polygon>\n",
		PLOT_X + PLOT_W, USE_Y + USE_H, ncpus);
	pf(p, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" points=\"", C_DEMAND);
	for (size_t k = 0; k < PLOT_W; k++)
		pf(p, "%s%zu.5,%s", k ? " " : "", PLOT_X + k,
			fx1(USE_Y + USE_H - dem[k] / ymax * USE_H, b1));
	pf(p, "\"><title>demand: running + runnable tasks / %d CPUs</title></polyline>\n",
		ncpus);
	if (ymax > 1.0)
		pf(p, "<line x1=\"%d\" y1=\"%s\" x2=\"%d\" y2=\"%s\" stroke=\"#888\" "
			   "stroke-dasharray=\"4 3\"/>\n", PLOT_X, fx1(USE_Y + USE_H - USE_H / ymax, b1),
			PLOT_X + PLOT_W, b1);
	pf(p, "<text class=\"lbl grp\" x=\"%d\" y=\"%d\">CPU use</text>\n", PAD, USE_Y + 12);
	pf(p, "<text class=\"lbl\" x=\"%d\" y=\"%d\">%d CPUs</text>\n", PAD, USE_Y + 26, ncpus);
	pf(p, "<text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%d%%</text>\n",
		PLOT_X - 4, USE_Y + 10, (int)(ymax * 100 + 0.5));
	if (ymax > 1.0 && USE_H / ymax >= 14) /* clear of the 0% label */
		pf(p, "<text class=\"ax\" x=\"%d\" y=\"%s\" text-anchor=\"end\">100%%</text>\n",
			PLOT_X - 4, fx1(USE_Y + USE_H - USE_H / ymax + 4, b1));
	pf(p, "<text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"end\">0%%</text>\n",
		PLOT_X - 4, USE_Y + USE_H);
	free(c);
out:
	free(run);
	free(dem);
	return err;
}

/* Ticks every 1, 2 or 5 x 10^k ns, at most 10 over the span; grid lines down to y_end. */
static void put_axis(struct page *p, int y_end)
{
	static const uint64_t mult[] = { 1, 2, 5 };
	uint64_t step = 1;
	char b1[32];

	for (uint64_t base = 1; base < UINT64_MAX / 10; base *= 10) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(mult); i++)
			if (p->span / (base * mult[i]) <= 10)
				break;
		if (i < ARRAY_SIZE(mult)) {
			step = base * mult[i];
			break;
		}
	}
	for (uint64_t t = 0; t <= p->span; t += step) {
		const char *x = fx1(PLOT_X + (double)t * PLOT_W / (double)p->span, b1);

		pf(p, "<line class=\"grid\" x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\"/>\n", x,
			AXIS_Y + 3, x, y_end);
		pf(p, "<text class=\"ax\" x=\"%s\" y=\"%d\" text-anchor=\"middle\">", x, AXIS_Y);
		put_dur(p, t);
		ps(p, "</text>\n");
		if (UINT64_MAX - t < step)
			break;
	}
}

static void put_legend(struct page *p)
{
	/* short: the name when the last two are shown too (the line's width) */
	static const struct {
		const char *name, *fill, *stroke, *short_name;
	} items[] = {
		{ "running", C_RUNNING, NULL, NULL },
		{ "runnable (waiting for a CPU)", C_RUNNABLE, NULL, "runnable" },
		{ "blocked", C_BLOCKED, NULL, NULL },
		{ "critical path", "none", C_CP, NULL },
		{ "CPU use", C_USE, NULL, NULL },
		{ "demand (running + runnable)", C_DEMAND, NULL, "demand" },
		{ "serial phase", C_SERIAL, NULL, NULL },
		{ "throttled (CPU quota)", C_THROTTLED, NULL, NULL },
		{ "stolen (hypervisor, IRQs)", C_STOLEN, NULL, NULL },
	};
	bool more = p->throttled || p->stolen;
	int x = PLOT_X;

	for (size_t i = 0; i < ARRAY_SIZE(items); i++) {
		const char *name = items[i].name;

		if (more && items[i].short_name)
			name = items[i].short_name;

		/* the last two only when the run has them */
		if ((i == ARRAY_SIZE(items) - 2 && !p->throttled) ||
		    (i == ARRAY_SIZE(items) - 1 && !p->stolen))
			continue;
		pf(p, "<rect x=\"%d.5\" y=\"%d.5\" width=\"12\" height=\"10\" fill=\"%s\" "
			   "stroke=\"%s\"%s/>", x, LEGEND_Y - 9, items[i].fill,
			items[i].stroke ? items[i].stroke : "#666",
			items[i].stroke ? " stroke-width=\"2\"" : "");
		pf(p, "<text class=\"lbl\" x=\"%d\" y=\"%d\">%s</text>\n", x + 16, LEGEND_Y,
			name);
		x += 16 + (int)strlen(name) * 7 + 14;
	}
}

/* ---- tables ---- */

/* Under a figure derived from the timeline, when events were lost. */
static void put_incomplete(struct page *p)
{
	if (p->tl->lost)
		pf(p, "<p class=\"warn\">From incomplete data: %" PRIu64 " events were lost.</p>\n",
		   p->tl->lost);
}

static void put_tables(struct page *p)
{
	const struct sp_timeline *tl = p->tl;
	uint64_t total;
	char b1[32];

	ps(p, "<h2>Critical path</h2>\n");
	put_incomplete(p);
	ps(p, "<p>");
	put_dur(p, tl->cp_total_ns);
	pf(p, " in %zu steps, from task %d backwards from ", tl->ncp, tl->end_tid);
	put_dur(p, tl->end_ns);
	ps(p, ".</p>\n<table><tr><th>comm</th><th>state</th><th>caller</th><th>time</th>"
	      "<th>share</th></tr>\n");
	for (size_t i = 0; i < tl->ncp_ranks; i++) {
		const struct sp_cp_rank *r = &tl->cp_ranks[i];

		ps(p, "<tr><td>");
		put_text(p, r->comm);
		pf(p, "</td><td>%s</td><td>", r->throttled ? "throttled" : sp_tl_state_name(r->state));
		put_text(p, r->caller ? r->caller : "");
		ps(p, "</td><td class=\"n\">");
		put_dur(p, r->ns);
		pf(p, "</td><td class=\"n\">%s%%</td></tr>\n", fx1(pct(r->ns, tl->cp_total_ns), b1));
	}
	ps(p, "</table>\n<h2>Parallelism</h2>\n");
	put_incomplete(p);
	ps(p, "<table><tr><th>tasks</th><th>running</th>"
	      "<th>share</th><th>runnable</th><th>share</th></tr>\n");
	total = 0;
	for (size_t i = 0; i < tl->nrunning; i++)
		total += tl->running[i].ns;
	for (size_t i = 0, j = 0; i < tl->nrunning || j < tl->nrunnable;) {
		int n = i < tl->nrunning && (j >= tl->nrunnable || tl->running[i].n <= tl->runnable[j].n)
			? tl->running[i].n : tl->runnable[j].n;
		uint64_t a = i < tl->nrunning && tl->running[i].n == n ? tl->running[i++].ns : 0;
		uint64_t b = j < tl->nrunnable && tl->runnable[j].n == n ? tl->runnable[j++].ns : 0;

		pf(p, "<tr><td class=\"n\">%d</td><td class=\"n\">", n);
		put_dur(p, a);
		pf(p, "</td><td class=\"n\">%s%%</td><td class=\"n\">", fx1(pct(a, total), b1));
		put_dur(p, b);
		pf(p, "</td><td class=\"n\">%s%%</td></tr>\n", fx1(pct(b, total), b1));
	}
	ps(p, "</table>\n<h2>Serial phases</h2>\n");
	put_incomplete(p);
	if (!tl->nserial)
		ps(p, "<p>None: no 100 ms or more with one task running while CPUs were idle.</p>\n");
	else
		ps(p, "<table><tr><th>comm</th><th>tid</th><th>from</th><th>for</th></tr>\n");
	for (size_t i = 0; i < tl->nserial; i++) {
		const struct sp_serial_phase *s = &tl->serial[i];

		ps(p, "<tr><td>");
		put_text(p, s->comm);
		pf(p, "</td><td class=\"n\">%d</td><td class=\"n\">", s->tid);
		put_dur(p, s->start_ns);
		ps(p, "</td><td class=\"n\">");
		put_dur(p, s->ns);
		ps(p, "</td></tr>\n");
	}
	if (tl->nserial) {
		ps(p, "</table>\n<p>In all ");
		put_dur(p, tl->serial_ns);
		ps(p, ".</p>\n");
	}
}

static const char page_css[] =
	"body{font:14px sans-serif;margin:12px;background:#fff;color:#222}\n"
	"h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:18px 0 4px}\n"
	".meta{color:#555;margin:0 0 8px}.warn{color:#b00}\n"
	"svg text{font:11px sans-serif;fill:#222}\n"
	"svg text.grp{font-weight:bold}svg text.ax{fill:#555}\n"
	".grid{stroke:#e4e4e4}.serial{fill:" C_SERIAL ";fill-opacity:.22}\n"
	".cpo rect{fill:none;stroke:" C_CP ";stroke-width:1.5}\n"
	"table{border-collapse:collapse;font-size:13px}td,th{padding:2px 10px;text-align:left}\n"
	"td.n{text-align:right}tr:nth-child(even){background:#f4f4f0}\n";

static void put_title(struct page *p, const struct sp_run *run)
{
	const struct sp_target_info *t = &run->target;

	if (t->mode == SP_TARGET_COMMAND) {
		ps(p, "command: ");
		put_text(p, t->command);
	} else if (t->mode == SP_TARGET_PIDS || t->mode == SP_TARGET_TIDS) {
		ps(p, t->mode == SP_TARGET_PIDS ? "pids:" : "tids:");
		for (size_t i = 0; i < t->npids; i++)
			pf(p, "%s%d", i ? "," : " ", t->pids[i]);
	} else if (t->mode == SP_TARGET_CGROUP) {
		ps(p, "cgroup: ");
		put_text(p, t->cgroup);
	} else {
		ps(p, "system-wide");
	}
}

static void page_free(struct page *p)
{
	free(p->lanes);
	free(p->lane_of);
	free(p->segs);
	free(p->seg_first);
	sp_tl_index_free(&p->ix);
	free(p);
}

static int put_page(struct page *p)
{
	const struct sp_run *run = p->run;
	const struct sp_timeline *tl = p->tl;
	int height = lane_y(tl->ntasks) + 8;
	struct lane_src cp = { tl->ncp, cp_get, cp_tip, NULL };
	int err;

	for (size_t i = 0; i < tl->nsegs; i++) {
		p->throttled |= tl->segs[i].state == SP_TL_RUNNABLE && tl->segs[i].throttled;
		p->stolen |= tl->segs[i].state == SP_TL_RUNNING && tl->segs[i].stolen_ns;
	}

	ps(p, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
	      "schedprof timeline: ");
	put_title(p, run);
	pf(p, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>schedprof timeline: ",
		page_css);
	put_title(p, run);
	ps(p, "</h1>\n<p class=\"meta\">elapsed ");
	put_dur(p, run->elapsed_ns);
	pf(p, ", %d CPUs, %zu tasks, %zu segments, critical path%s ", run->ncpus, tl->ntasks,
		tl->nsegs, tl->lost ? " (from incomplete data)" : "");
	put_dur(p, tl->cp_total_ns);
	ps(p, ", kernel ");
	put_text(p, run->kernel);
	ps(p, ", host ");
	put_text(p, run->hostname);
	ps(p, ". Hover for details. A pixel column of a lane that holds several states mixes "
	      "their colours by their shares of its time.</p>\n");
	if (tl->lost)
		pf(p, "<p class=\"warn\">%" PRIu64 " events were lost (the ring buffer was full: "
			   "a bigger --timeline-buffer keeps them); the lanes have gaps, and the "
			   "critical path, the parallelism and the serial phases come from "
			   "incomplete data.</p>\n", tl->lost);
	pf(p, "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		   "height=\"%d\" viewBox=\"0 0 %d %d\">\n", SVG_W, height, SVG_W, height);
	put_legend(p);
	put_axis(p, height - 4);
	err = put_use(p);
	if (err)
		return err;
	pf(p, "<text class=\"lbl grp\" x=\"%d\" y=\"%d\">critical path</text>\n", PAD,
		CP_Y + BAR_H - 1);
	put_lane(p, &cp, CP_Y);
	pf(p, "<line x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n",
		LANES_Y - 6, SVG_W, LANES_Y - 6);
	put_lanes(p);
	put_cp_outlines(p);
	ps(p, "</svg>\n");
	put_tables(p);
	ps(p, "</body>\n</html>\n");
	return p->err;
}

int format_timeline(const struct sp_run *run, const struct render_opts *opts, FILE *f)
{
	const struct sp_timeline *tl = &run->timeline;
	struct page *p;
	int err;

	(void)opts;
	if (!tl->present)
		return -EINVAL; /* render_run_missing() says why, before */
	/* the page's columns are big: on the heap */
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->run = run;
	p->tl = tl;
	p->f = f;
	p->span = run->elapsed_ns;
	for (size_t i = 0; i < tl->nsegs; i++)
		if (sp_tl_end(tl->segs[i].start_ns, tl->segs[i].ns) > p->span)
			p->span = sp_tl_end(tl->segs[i].start_ns, tl->segs[i].ns);
	for (size_t i = 0; i < tl->ntasks; i++)
		if (tl->tasks[i].end_ns > p->span)
			p->span = tl->tasks[i].end_ns;
	if (!p->span)
		p->span = 1;
	err = sp_tl_index_init(&p->ix, tl) ?: layout(p);
	if (!err)
		err = put_page(p);
	if (!err) {
		errno = 0;
		if (fflush(f) || ferror(f))
			err = errno ? -errno : -EIO;
	}
	page_free(p);
	return err;
}
