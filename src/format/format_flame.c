// SPDX-License-Identifier: BSD-2-Clause
/*
 * Interactive flame graphs, written whole by schedprof (no fetches, no external files):
 *   -f svg   one view (the first of schedules, profile, locks), a standalone SVG with its
 *            script inline, like flamegraph.pl's: it opens in a browser, and as a plain image
 *            elsewhere;
 *   -f html  every selected view, each one such SVG, in one page with a search box;
 *   diff -f html  differential flame graphs of two runs (flame.h).
 * The layout is computed here, so the frames are in the document before any script runs:
 * root ("all") at the bottom, then the comm, then the frames from the outermost caller up to
 * the leaf; siblings in name order, width = count or (--value time) time. Frames narrower than
 * FL_MIN_PX are left out, as flamegraph.pl does. The height fits what can be seen: the deepest
 * level whose frames together are at least FL_FIT_PX wide sets it (a level is never wider
 * than the one below it), so one deep stack of a few samples, a sliver, does not; the frames
 * above that level are in the document but hidden until a zoom makes them wide enough (the
 * script fits the height again on every zoom) and a note says how many are hidden. Frames are coloured by kind: kernel warm (orange), user green, pseudo frames
 * ([preempted], [unknown], [lost]) grey, processes blue; a legend says so.
 * The script adds: click to zoom (the root or "Reset zoom" zooms out), search by regular
 * expression with the matched share, and tooltips with counts, times and shares.
 * "#search=RE&zoom=NAME" in the URL applies both on load.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/flame.h"
#include "format/render.h"
#include "model/samples.h"
#include "base/util.h"
#include "format/xmltext.h"

#define FL_WIDTH 1200	 /* SVG width, px */
#define FL_PAD 10	 /* left and right margin */
#define FL_FRAME_H 16	 /* one level */
#define FL_TOP 66	 /* title, details, legend */
#define FL_BOTTOM 28	 /* details line */
#define FL_CHAR_W 7.3	 /* advance of the 12 px monospace font, a little generous */
#define FL_MIN_PX 0.1	 /* narrower frames are left out */
#define FL_FIT_PX 12.0	 /* a level narrower in all (1% of the graph) does not make it taller */
#define FL_MAX_DEPTH 1024 /* deeper frames are cut (real stacks have at most ~260) */
#define FL_INNER (FL_WIDTH - 2 * FL_PAD)

enum kind { K_ROOT, K_COMM, K_KERNEL, K_USER, K_PSEUDO };

struct path { /* one sample, root first: the comm, then the outermost frame */
	const char **names;
	const char **objects;
	uint8_t *kinds;
	size_t n;
	uint64_t value, count, time;
};

struct node {
	const char *name, *object;
	uint8_t kind;
	unsigned int depth;
	uint64_t x, value, count, time;
	long peer; /* differential graph: the same frame in the other run's graph, or -1 */
};

struct flame {
	enum sp_value value;
	struct path *paths;
	size_t npaths, pcap;
	struct node *nodes;
	size_t nnodes, ncap;
	/* a differential graph: the other run's graph, and whether this one is the before run */
	const struct flame *peer;
	bool before;
	uint64_t maxdelta; /* the largest change of a frame (not the root), for the colour scale */
};

static void flame_free(struct flame *fl)
{
	for (size_t i = 0; i < fl->npaths; i++)
		free(fl->paths[i].names); /* objects and kinds live in the same block */
	free(fl->paths);
	free(fl->nodes);
}

/* The kind of a sample's frame i: the rule of sp_frame_kind() (model.h). */
static enum kind sample_frame_kind(const struct sp_sample *s, size_t i)
{
	/* a sample carries no frame infos: a stack row of its frames and objects, read only */
	const struct sp_stack_row row = { .frames = (char **)s->frames,
					  .objects = (char **)s->objects,
					  .nframes = s->nframes };

	switch (sp_frame_kind(&row, i)) {
	case SP_FRAME_KERNEL:
		return K_KERNEL;
	case SP_FRAME_USER:
		return K_USER;
	default:
		return K_PSEUDO;
	}
}

static int collect(const struct sp_sample *s, void *arg)
{
	struct flame *fl = arg;
	uint64_t v = sp_sample_value(s, fl->value);
	size_t n = s->nframes + (s->comm ? 1 : 0), k = 0;
	struct path *p;

	if (!v)
		return 0;
	if (n > FL_MAX_DEPTH)
		n = FL_MAX_DEPTH;
	if (grow((void **)&fl->paths, &fl->pcap, fl->npaths + 1, sizeof(*fl->paths)))
		return -ENOMEM;
	p = &fl->paths[fl->npaths++];
	/* one block: names, then objects, then kinds */
	p->names = calloc(n + 1, 2 * sizeof(*p->names) + sizeof(*p->kinds));
	if (!p->names)
		return -ENOMEM;
	p->objects = p->names + n + 1;
	p->kinds = (uint8_t *)(p->objects + n + 1);
	if (s->comm) {
		p->names[k] = s->comm;
		p->kinds[k++] = K_COMM;
	}
	for (size_t i = s->nframes; i-- > 0 && k < n;) {
		p->names[k] = s->frames[i];
		p->kinds[k] = (uint8_t)sample_frame_kind(s, i);
		/* the tooltip's object: none for a pseudo frame of a stack without objects */
		p->objects[k] = s->objects		  ? s->objects[i] :
				p->kinds[k] == K_PSEUDO ? NULL :
							  "[kernel]";
		k++;
	}
	p->n = k;
	p->value = v;
	p->count = s->count;
	p->time = s->time_ns;
	return 0;
}

static int cmp_path(const void *pa, const void *pb)
{
	const struct path *a = pa, *b = pb;

	for (size_t i = 0; i < a->n && i < b->n; i++) {
		int c = strcmp(a->names[i], b->names[i]);

		if (c)
			return c;
	}
	return a->n < b->n ? -1 : a->n > b->n;
}

static int add_node(struct flame *fl, const char *name, const char *object, uint8_t kind,
		    unsigned int depth, uint64_t x)
{
	if (grow((void **)&fl->nodes, &fl->ncap, fl->nnodes + 1, sizeof(*fl->nodes)))
		return -ENOMEM;
	fl->nodes[fl->nnodes++] = (struct node){ name, object, kind, depth, x, 0, 0, 0, -1 };
	return 0;
}

/*
 * Sorted paths make the tree in one pass: a path shares its first k nodes with the one before
 * (same names), and each new node starts where all the paths before it end. A run without
 * the view is a root alone (a differential graph of a view only one run has).
 */
static int build(struct flame *fl, const struct sp_run *run, unsigned int view)
{
	size_t *open = NULL, nopen = 0;
	const struct path *prev = NULL;
	uint64_t cursor = 0;
	int err;

	if (sp_samples_view(run, view) == view) {
		err = sp_samples_for_each(run, view, collect, fl);
		if (err)
			return err;
	}
	if (fl->npaths > 1)
		qsort(fl->paths, fl->npaths, sizeof(*fl->paths), cmp_path);
	open = calloc(FL_MAX_DEPTH + 1, sizeof(*open));
	if (!open)
		return -ENOMEM;
	err = add_node(fl, "all", NULL, K_ROOT, 0, 0);
	for (size_t i = 0; !err && i < fl->npaths; i++) {
		const struct path *p = &fl->paths[i];
		size_t k = 0;

		while (prev && k < nopen && k < p->n && !strcmp(p->names[k], prev->names[k]))
			k++;
		for (nopen = k; !err && nopen < p->n; nopen++) {
			open[nopen] = fl->nnodes;
			err = add_node(fl, p->names[nopen], p->objects[nopen], p->kinds[nopen],
				       (unsigned int)nopen + 1, cursor);
		}
		if (err)
			break;
		for (size_t d = 0; d <= p->n; d++) {
			struct node *nd = &fl->nodes[d ? open[d - 1] : 0];

			nd->value += p->value;
			nd->count += p->count;
			nd->time += p->time;
		}
		cursor += p->value;
		prev = p;
	}
	free(open);
	return err;
}

/*
 * A differential graph: every node of x gets its peer, the node of y reached from the root by
 * the same names (or -1). Both trees list siblings in name order (build() sorts the paths
 * with strcmp), so one merging pass does it: cur[d] is the next candidate among the children
 * of the peer of x's current node at depth d - 1. 0 or -ENOMEM.
 */
static int match(struct flame *x, const struct flame *y)
{
	long *next = malloc((y->nnodes + 1) * sizeof(*next));
	long last[FL_MAX_DEPTH + 2], cur[FL_MAX_DEPTH + 3];
	unsigned int prevd = 0;

	if (!next)
		return -ENOMEM;
	for (size_t d = 0; d < ARRAY_SIZE(last); d++)
		last[d] = -1;
	/* next[i]: the next sibling of y's node i (preorder: the next node of its depth before
	 * any shallower one) */
	for (size_t i = 0; i < y->nnodes; i++) {
		unsigned int d = y->nodes[i].depth;

		for (unsigned int e = d + 1; e <= prevd; e++)
			last[e] = -1;
		next[i] = -1;
		if (last[d] >= 0)
			next[last[d]] = (long)i;
		last[d] = (long)i;
		prevd = d;
	}
	x->nodes[0].peer = 0;
	cur[1] = y->nnodes > 1 ? 1 : -1;
	for (size_t j = 1; j < x->nnodes; j++) {
		struct node *n = &x->nodes[j];
		long c = cur[n->depth];

		while (c >= 0 && strcmp(y->nodes[c].name, n->name) < 0)
			c = next[c];
		if (c >= 0 && !strcmp(y->nodes[c].name, n->name)) {
			n->peer = c;
			cur[n->depth] = next[c];
			cur[n->depth + 1] = (size_t)c + 1 < y->nnodes &&
						    y->nodes[c + 1].depth == n->depth + 1 ?
					    c + 1 : -1;
		} else {
			n->peer = -1;
			cur[n->depth] = c;
			cur[n->depth + 1] = -1;
		}
	}
	free(next);
	return 0;
}

/* ---- output ---- */

/* The flame graph checks its stream's errors once, at the end (ferror). */
static void put_text_max(const char *s, size_t max, FILE *f)
{
	(void)xml_put_text(s, max, f);
}

static void put_text(const char *s, FILE *f)
{
	put_text_max(s ? s : "?", 0, f);
}

static double pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The colour families (the screenshot test checks these ranges): a shade per name. */
static void put_kind_color(enum kind kind, uint32_t h, FILE *f)
{
	unsigned int a = h & 0xff, b = (h >> 8) & 0xff, c = (h >> 16) & 0xff;

	switch (kind) {
	case K_ROOT:
		fputs("rgb(200,200,205)", f);
		break;
	case K_COMM: /* blue */
		fprintf(f, "rgb(%u,%u,%u)", 90 + a % 60, 150 + b % 60, 215 + c % 40);
		break;
	case K_KERNEL: /* warm: orange to amber */
		fprintf(f, "rgb(%u,%u,%u)", 215 + a % 40, 90 + b % 90, c % 50);
		break;
	case K_USER: /* green */
		fprintf(f, "rgb(%u,%u,%u)", 60 + a % 70, 170 + b % 60, 60 + c % 50);
		break;
	default: /* grey */
		fprintf(f, "rgb(%u,%u,%u)", 165 + a % 35, 165 + a % 35, 170 + a % 35);
		break;
	}
}

/* A node's value in the before and the after run (differential graphs). */
static void node_before_after(const struct flame *fl, const struct node *n, uint64_t *ret_a,
			      uint64_t *ret_b)
{
	uint64_t other = n->peer >= 0 ? fl->peer->nodes[n->peer].value : 0;

	*ret_a = fl->before ? n->value : other;
	*ret_b = fl->before ? other : n->value;
}

/*
 * Differential colours: red grew, blue shrank, light grey unchanged; the larger the change
 * (against the largest of the graph), the deeper the colour, and any change shows.
 */
static void put_delta_color(int64_t delta, uint64_t maxdelta, FILE *f)
{
	uint64_t mag = delta < 0 ? (uint64_t)-delta : (uint64_t)delta;
	unsigned int c;

	if (!delta || !maxdelta) {
		fputs("rgb(232,232,232)", f);
		return;
	}
	if (mag > maxdelta)
		mag = maxdelta;
	c = 210 - (unsigned int)(170.0 * (double)mag / (double)maxdelta);
	if (delta > 0)
		fprintf(f, "rgb(255,%u,%u)", c, c);
	else
		fprintf(f, "rgb(%u,%u,255)", c, c);
}

static void put_color(const struct flame *fl, const struct node *n, FILE *f)
{
	uint64_t a, b;

	if (!fl->peer) {
		put_kind_color(n->kind, hash(n->name), f);
		return;
	}
	node_before_after(fl, n, &a, &b);
	put_delta_color(sp_diff_delta(a, b), fl->maxdelta, f);
}

struct fl_view {
	unsigned int view;
	const char *count_name, *time_name;
	uint64_t total;
	const char *name_a, *name_b; /* differential: the runs' names */
};

static void put_stats(const struct fl_view *v, const struct node *n, const struct node *root,
		      FILE *f)
{
	char d[32];

	fprintf(f, "%" PRIu64 " %s (%.2f%%)", n->count, v->count_name, pct(n->count, root->count));
	if (root->time)
		fprintf(f, ", %s %s (%.2f%%)", fmt_duration(n->time, d, sizeof(d)), v->time_name,
			pct(n->time, root->time));
}

static void put_amount(const struct flame *fl, const struct fl_view *v, uint64_t x, FILE *f)
{
	char d[32];

	if (fl->value == SP_VALUE_TIME)
		fprintf(f, "%s %s", fmt_duration(x, d, sizeof(d)), v->time_name);
	else
		fprintf(f, "%" PRIu64 " %s", x, v->count_name);
}

/* The tooltip of a differential graph's frame: before, after, the change. */
static void put_diff_stats(const struct flame *fl, const struct fl_view *v, const struct node *n,
			   FILE *f)
{
	uint64_t a, b;
	int64_t delta;
	char d[32];

	node_before_after(fl, n, &a, &b);
	delta = sp_diff_delta(a, b);
	fputs("before: ", f);
	put_amount(fl, v, a, f);
	fputs("\nafter: ", f);
	put_amount(fl, v, b, f);
	fputs("\nchange: ", f);
	if (!delta) {
		fputs("none", f);
		return;
	}
	if (fl->value == SP_VALUE_TIME)
		fprintf(f, "%s%s", delta < 0 ? "-" : "+",
			fmt_duration(delta < 0 ? (uint64_t)-delta : (uint64_t)delta, d, sizeof(d)));
	else
		fprintf(f, "%+" PRId64, delta);
	if (!a && b)
		fputs(" (new: only in the after run)", f);
	else if (a && !b)
		fputs(" (gone: only in the before run)", f);
	else if (a)
		fprintf(f, " (%+.1f%%)", 100.0 * (double)delta / (double)a);
}

static bool visible(const struct node *n, uint64_t total)
{
	return total && (double)n->value * FL_INNER / (double)total >= FL_MIN_PX;
}

/*
 * The deepest level whose frames together are at least FL_FIT_PX wide: the height is fitted
 * to it. A node's children are never wider than it, so every level below is wider still.
 */
static unsigned int fitted_depth(const struct flame *fl, uint64_t total)
{
	double *width = calloc(FL_MAX_DEPTH + 2, sizeof(*width));
	unsigned int maxdepth = 0;

	if (!width || !total) {
		free(width);
		return 0; /* the root alone: nothing to fit (out of memory: the same, visibly) */
	}
	for (size_t i = 0; i < fl->nnodes; i++)
		width[fl->nodes[i].depth] += (double)fl->nodes[i].value * FL_INNER / (double)total;
	while (maxdepth + 1 <= FL_MAX_DEPTH && width[maxdepth + 1] >= FL_FIT_PX)
		maxdepth++;
	free(width);
	return maxdepth;
}

static void put_node(const struct flame *fl, const struct fl_view *v, const struct node *n,
		     int height, unsigned int maxdepth, FILE *f)
{
	double x = (double)n->x * FL_INNER / (double)v->total;
	double w = (double)n->value * FL_INNER / (double)v->total;
	int y = height - FL_BOTTOM - (int)(n->depth + 1) * FL_FRAME_H;
	long fit = (long)((w - 6) / FL_CHAR_W);

	fprintf(f, "<g class=\"f\" data-x=\"%.4f\" data-w=\"%.4f\" data-d=\"%u\"%s><title>", x, w,
		n->depth, n->depth > maxdepth ? " style=\"display:none\"" : "");
	put_text(n->name, f);
	if (n->kind == K_COMM)
		fputs("\nprocess name", f);
	else if (n->kind == K_ROOT)
		fputs("\nthe whole view", f);
	else if (n->object) {
		putc('\n', f);
		put_text(n->object, f);
	}
	putc('\n', f);
	if (fl->peer)
		put_diff_stats(fl, v, n, f);
	else
		put_stats(v, n, &fl->nodes[0], f);
	fprintf(f, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"",
		FL_PAD + x, y, w, FL_FRAME_H - 1);
	put_color(fl, n, f);
	fprintf(f, "\"/><text x=\"%.2f\" y=\"%d\">", FL_PAD + x + 3, y + FL_FRAME_H - 4);
	if (fit >= 3)
		put_text_max(n->name, (size_t)fit, f);
	fputs("</text></g>\n", f);
}

struct swatch {
	const char *fill, *label;
};

/* The legend under the details line: a swatch and a label per colour family. */
static void put_legend(const struct flame *fl, FILE *f)
{
	static const struct swatch kinds[] = {
		{ "rgb(235,135,25)", "kernel" },
		{ "rgb(95,200,85)", "user" },
		{ "rgb(180,180,185)", "pseudo ([preempted], [lost], ...)" },
		{ "rgb(120,180,235)", "process" },
	}, changes[] = {
		{ "rgb(255,40,40)", "grew" },
		{ "rgb(255,170,170)", "grew a little" },
		{ "rgb(232,232,232)", "unchanged" },
		{ "rgb(170,170,255)", "shrank a little" },
		{ "rgb(40,40,255)", "shrank" },
	};
	const struct swatch *l = fl->peer ? changes : kinds;
	size_t n = fl->peer ? ARRAY_SIZE(changes) : ARRAY_SIZE(kinds);
	double x = FL_PAD;

	fputs("<g class=\"legend\">", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "<rect x=\"%.1f\" y=\"46\" width=\"12\" height=\"12\" fill=\"%s\" "
			   "stroke=\"#888\" stroke-width=\"0.5\"/><text class=\"details\" x=\"%.1f\" "
			   "y=\"56\">%s</text>",
			x, l[i].fill, x + 16, l[i].label);
		x += 16 + 6.3 * (double)strlen(l[i].label) + 18; /* 12 px sans-serif */
	}
	fputs("</g>\n", f);
}

static const char flame_css[] =
	".f text{font:12px \"DejaVu Sans Mono\",\"Liberation Mono\",monospace;fill:#000;"
	"pointer-events:none}\n"
	".f rect{stroke:#fff;stroke-width:0.5}\n"
	".f:hover rect{stroke:#000;stroke-width:1}\n"
	".f{cursor:pointer}\n"
	".parent rect{opacity:0.55}\n"
	".ttl{font:bold 15px sans-serif;fill:#222}\n"
	".ctl{font:13px sans-serif;fill:#06c;cursor:pointer}\n"
	".details,.matched{font:12px sans-serif;fill:#222}\n";

/* The script, shared by both formats: ES5, no libraries. */
static const char flame_js[] =
	"(function () {\n"
	"\"use strict\";\n"
	"var flames = [];\n"
	"function num(e, a) { return parseFloat(e.getAttribute(a)); }\n"
	"function fit(name, w, cw) {\n"
	"\tvar n = Math.floor((w - 6) / cw);\n"
	"\tif (n < 3) return \"\";\n"
	"\treturn name.length <= n ? name : name.substring(0, n - 2) + \"..\";\n"
	"}\n"
	"function cutNote(n) {\n"
	"\treturn n + \" frames of thin, deeper stacks hidden: click a frame to zoom in\";\n"
	"}\n"
	"function Flame(svg) {\n"
	"\tvar self = this, gs = svg.querySelectorAll(\"g.f\"), i;\n"
	"\tthis.svg = svg;\n"
	"\tthis.inner = num(svg, \"data-inner\");\n"
	"\tthis.pad = num(svg, \"data-pad\");\n"
	"\tthis.cw = num(svg, \"data-cw\");\n"
	"\tthis.fh = num(svg, \"data-fh\");\n"
	"\tthis.top = num(svg, \"data-top\");\n"
	"\tthis.bottom = num(svg, \"data-bottom\");\n"
	"\tthis.fitpx = num(svg, \"data-fit\");\n"
	"\tthis.bg = svg.querySelector(\".bg\");\n"
	"\tthis.cut = svg.querySelector(\".cut\");\n"
	"\tthis.hover = svg.querySelector(\".hover\");\n"
	"\tthis.matched = svg.querySelector(\".matched\");\n"
	"\tthis.reset = svg.querySelector(\".reset\");\n"
	"\tthis.nodes = [];\n"
	"\tfor (i = 0; i < gs.length; i++) {\n"
	"\t\tvar g = gs[i], t = g.querySelector(\"title\").textContent;\n"
	"\t\tvar n = { g: g, rect: g.querySelector(\"rect\"), text: g.querySelector(\"text\"),\n"
	"\t\t\tx: num(g, \"data-x\"), w: num(g, \"data-w\"), d: num(g, \"data-d\"),\n"
	"\t\t\tname: t.split(\"\\n\")[0], info: t };\n"
	"\t\tn.fill = n.rect.getAttribute(\"fill\");\n"
	"\t\tthis.nodes.push(n);\n"
	"\t\tg.addEventListener(\"click\", this.zoom.bind(this, n));\n"
	"\t\tg.addEventListener(\"mouseover\", this.over.bind(this, n));\n"
	"\t\tg.addEventListener(\"mouseout\", this.out.bind(this));\n"
	"\t}\n"
	"\tthis.root = this.nodes[0];\n"
	"\tif (this.reset)\n"
	"\t\tthis.reset.addEventListener(\"click\", function () { self.zoom(self.root); });\n"
	"\tvar s = svg.querySelector(\".search\");\n"
	"\tif (s)\n"
	"\t\ts.addEventListener(\"click\", function () {\n"
	"\t\t\tvar re = window.prompt(\"Search frames (regular expression)\", \"\");\n"
	"\t\t\tif (re !== null) self.search(re);\n"
	"\t\t});\n"
	"}\n"
	"Flame.prototype.place = function (n, x, w) {\n"
	"\tn.g.style.display = \"\";\n"
	"\tn.rect.setAttribute(\"x\", (this.pad + x).toFixed(2));\n"
	"\tn.rect.setAttribute(\"width\", w.toFixed(2));\n"
	"\tn.text.setAttribute(\"x\", (this.pad + x + 3).toFixed(2));\n"
	"\tn.text.textContent = fit(n.name, w, this.cw);\n"
	"};\n"
	"/* the height fits the deepest level at least fitpx wide in all once zoomed; deeper\n"
	" * frames hide */\n"
	"Flame.prototype.zoom = function (t) {\n"
	"\tvar k = this.inner / t.w, eps = 1e-3, maxd = t.d, level = [], hidden = 0, i, n;\n"
	"\tfor (i = 0; i < this.nodes.length; i++) {\n"
	"\t\tn = this.nodes[i];\n"
	"\t\tif (n.d < t.d && n.x <= t.x + eps && n.x + n.w >= t.x + t.w - eps)\n"
	"\t\t\tn.pos = 1;\n"
	"\t\telse if (n.d >= t.d && n.x >= t.x - eps && n.x + n.w <= t.x + t.w + eps)\n"
	"\t\t\tn.pos = 2;\n"
	"\t\telse\n"
	"\t\t\tn.pos = 0;\n"
	"\t\tif (n.pos === 2) level[n.d] = (level[n.d] || 0) + n.w * k;\n"
	"\t}\n"
	"\twhile (level[maxd + 1] >= this.fitpx) maxd++;\n"
	"\tthis.fit(maxd);\n"
	"\tfor (i = 0; i < this.nodes.length; i++) {\n"
	"\t\tn = this.nodes[i];\n"
	"\t\tif (n.pos === 1) {\n"
	"\t\t\tthis.place(n, 0, this.inner);\n"
	"\t\t\tn.g.setAttribute(\"class\", \"f parent\");\n"
	"\t\t} else if (n.pos === 2 && n.d <= maxd) {\n"
	"\t\t\tthis.place(n, (n.x - t.x) * k, n.w * k);\n"
	"\t\t\tn.g.setAttribute(\"class\", \"f\");\n"
	"\t\t} else {\n"
	"\t\t\tif (n.pos === 2) hidden++;\n"
	"\t\t\tn.g.style.display = \"none\";\n"
	"\t\t}\n"
	"\t}\n"
	"\tif (this.cut) this.cut.textContent = hidden ? cutNote(hidden) : \"\";\n"
	"\tif (this.reset) this.reset.style.display = t.d > 0 ? \"\" : \"none\";\n"
	"\tthis.zoomed = t;\n"
	"};\n"
	"Flame.prototype.fit = function (maxd) {\n"
	"\tvar h = this.top + (maxd + 1) * this.fh + this.bottom, svg = this.svg, i, n, y;\n"
	"\tsvg.setAttribute(\"height\", h);\n"
	"\tsvg.setAttribute(\"viewBox\", \"0 0 \" + num(svg, \"width\") + \" \" + h);\n"
	"\tif (this.bg) this.bg.setAttribute(\"height\", h);\n"
	"\tif (this.hover) this.hover.setAttribute(\"y\", h - 10);\n"
	"\tif (this.matched) this.matched.setAttribute(\"y\", h - 10);\n"

	"\tfor (i = 0; i < this.nodes.length; i++) {\n"
	"\t\tn = this.nodes[i];\n"
	"\t\ty = h - this.bottom - (n.d + 1) * this.fh;\n"
	"\t\tn.rect.setAttribute(\"y\", y);\n"
	"\t\tn.text.setAttribute(\"y\", y + this.fh - 4);\n"
	"\t}\n"
	"};\n"
	"Flame.prototype.search = function (term) {\n"
	"\tvar re = null, ranges = [], sum = 0, end = -1, i, n;\n"
	"\tif (term) {\n"
	"\t\ttry { re = new RegExp(term); }\n"
	"\t\tcatch (e) { re = new RegExp(term.replace(/[.*+?^${}()|[\\]\\\\]/g, \"\\\\$&\")); }\n"
	"\t}\n"
	"\tfor (i = 0; i < this.nodes.length; i++) {\n"
	"\t\tn = this.nodes[i];\n"
	"\t\tif (re && n.d > 0 && re.test(n.name)) {\n"
	"\t\t\tn.rect.setAttribute(\"fill\", \"rgb(230,0,230)\");\n"
	"\t\t\tranges.push([n.x, n.x + n.w]);\n"
	"\t\t} else {\n"
	"\t\t\tn.rect.setAttribute(\"fill\", n.fill);\n"
	"\t\t}\n"
	"\t}\n"
	"\t/* the share of all: matched frames nested in matched frames count once */\n"
	"\tranges.sort(function (a, b) { return a[0] - b[0]; });\n"
	"\tfor (i = 0; i < ranges.length; i++) {\n"
	"\t\tif (ranges[i][0] >= end) { sum += ranges[i][1] - ranges[i][0]; end = ranges[i][1]; }\n"
	"\t\telse if (ranges[i][1] > end) { sum += ranges[i][1] - end; end = ranges[i][1]; }\n"
	"\t}\n"
	"\tvar pct = this.inner ? 100 * sum / this.inner : 0;\n"
	"\tif (this.matched)\n"
	"\t\tthis.matched.textContent = re ? \"Matched: \" + pct.toFixed(1) + \"%\" : \"\";\n"
	"\treturn pct;\n"
	"};\n"
	"var tip = document.getElementById(\"tip\");\n"
	"Flame.prototype.over = function (n) {\n"
	"\tif (this.hover) this.hover.textContent = n.info.replace(/\\n/g, \" | \");\n"
	"\tif (tip) { tip.textContent = n.info; tip.style.display = \"block\"; }\n"
	"};\n"
	"Flame.prototype.out = function () {\n"
	"\tif (this.hover) this.hover.textContent = \" \";\n"
	"\tif (tip) tip.style.display = \"none\";\n"
	"};\n"
	"if (tip)\n"
	"\tdocument.addEventListener(\"mousemove\", function (e) {\n"
	"\t\tvar x = e.clientX + 14, y = e.clientY + 14;\n"
	"\t\tvar w = tip.offsetWidth, h = tip.offsetHeight;\n"
	"\t\tif (x + w > window.innerWidth) x = Math.max(0, e.clientX - w - 8);\n"
	"\t\tif (y + h > window.innerHeight) y = Math.max(0, e.clientY - h - 8);\n"
	"\t\ttip.style.left = x + \"px\";\n"
	"\t\ttip.style.top = y + \"px\";\n"
	"\t});\n"
	"var svgs = document.querySelectorAll(\"svg.flame\"), i;\n"
	"for (i = 0; i < svgs.length; i++)\n"
	"\tif (svgs[i].querySelector(\"g.f\")) flames.push(new Flame(svgs[i]));\n"
	"function searchAll(term) {\n"
	"\tfor (var i = 0; i < flames.length; i++) flames[i].search(term);\n"
	"}\n"
	"var box = document.getElementById(\"search\");\n"
	"var reset = document.getElementById(\"reset\");\n"
	"if (box) box.addEventListener(\"input\", function () { searchAll(box.value); });\n"
	"if (reset)\n"
	"\treset.addEventListener(\"click\", function () {\n"
	"\t\tif (box) box.value = \"\";\n"
	"\t\tsearchAll(\"\");\n"
	"\t\tfor (var i = 0; i < flames.length; i++) flames[i].zoom(flames[i].root);\n"
	"\t});\n"
	"/* #search=RE&zoom=NAME: the widest frame called NAME, in every graph that has one */\n"
	"var args = {};\n"
	"(window.location.hash || \"\").replace(/^#/, \"\").split(\"&\").forEach(function (kv) {\n"
	"\tvar p = kv.indexOf(\"=\");\n"
	"\tif (p <= 0) return;\n"
	"\ttry { args[kv.substring(0, p)] = decodeURIComponent(kv.substring(p + 1)); }\n"
	"\tcatch (e) { /* a malformed escape: ignore that argument */ }\n"
	"});\n"
	"if (args.search) {\n"
	"\tif (box) box.value = args.search;\n"
	"\tsearchAll(args.search);\n"
	"}\n"
	"if (args.zoom)\n"
	"\tflames.forEach(function (fl) {\n"
	"\t\tvar best = null;\n"
	"\t\tfl.nodes.forEach(function (n) {\n"
	"\t\t\tif (n.name === args.zoom && (!best || n.w > best.w)) best = n;\n"
	"\t\t});\n"
	"\t\tif (best) fl.zoom(best);\n"
	"\t});\n"
	"})();\n";

static void put_title(const struct sp_run *run, FILE *f)
{
	const struct sp_target_info *t = &run->target;

	if (t->mode == SP_TARGET_COMMAND) {
		fputs("command: ", f);
		put_text(t->command, f);
	} else if (t->mode == SP_TARGET_PIDS) {
		fputs("pids:", f);
		for (size_t i = 0; i < t->npids; i++)
			fprintf(f, "%s%d", i ? "," : " ", t->pids[i]);
	} else if (t->mode == SP_TARGET_TIDS) {
		fputs("tids:", f);
		for (size_t i = 0; i < t->npids; i++)
			fprintf(f, "%s%d", i ? "," : " ", t->pids[i]);
	} else if (t->mode == SP_TARGET_CGROUP) {
		fputs("cgroup: ", f);
		put_text(t->cgroup, f);
	} else {
		fputs("system-wide", f);
	}
}

static const char *view_heading(unsigned int view)
{
	switch (view) {
	case SP_VIEW_SCHED:
		return "Schedules: off-CPU";
	case SP_VIEW_PROFILE:
		return "Profile: on-CPU";
	default:
		return "Locks: lock contention";
	}
}

/* The line under the title: the run and its totals, or both runs' totals for a diff. */
static void put_details(const struct sp_run *run, const struct fl_view *v,
			const struct flame *fl, FILE *f)
{
	const struct node *root = &fl->nodes[0];
	char d[32];
	uint64_t a, b;

	if (fl->peer) {
		node_before_after(fl, root, &a, &b);
		fputs("before: ", f);
		put_text(v->name_a, f);
		fputs(", ", f);
		put_amount(fl, v, a, f);
		fputs("; after: ", f);
		put_text(v->name_b, f);
		fputs(", ", f);
		put_amount(fl, v, b, f);
		fputs(fl->before ? " (the before run's stacks: where the shrunk and gone frames were)" :
				   " (the after run's stacks; the frames gone since: the before graph)",
		      f);
		return;
	}
	put_title(run, f);
	fprintf(f, ", %" PRIu64 " %s", root->count, v->count_name);
	if (root->time)
		fprintf(f, ", %s %s", fmt_duration(root->time, d, sizeof(d)), v->time_name);
}

/* One flame graph as an <svg> element; standalone adds the XML namespace and the script. */
static void put_svg(const struct sp_run *run, const struct fl_view *v, const struct flame *fl,
		    bool standalone, FILE *f)
{
	unsigned int maxdepth = fitted_depth(fl, v->total);
	int height = FL_TOP + (int)(maxdepth + 1) * FL_FRAME_H + FL_BOTTOM;
	size_t nhidden = 0;

	fprintf(f, "<svg class=\"flame\" %sversion=\"1.1\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" data-inner=\"%d\" data-pad=\"%d\" data-cw=\"%.2f\" "
		   "data-fh=\"%d\" data-top=\"%d\" data-bottom=\"%d\" data-fit=\"%.1f\" "
		   "data-view=\"%s\"%s>\n",
		standalone ? "xmlns=\"http://www.w3.org/2000/svg\" " : "", FL_WIDTH, height,
		FL_WIDTH, height, FL_INNER, FL_PAD, FL_CHAR_W, FL_FRAME_H, FL_TOP, FL_BOTTOM,
		FL_FIT_PX, sp_view_name(v->view),
		!fl->peer ? "" : fl->before ? " data-diff=\"before\"" : " data-diff=\"after\"");
	fprintf(f, "<style>\n%s</style>\n", flame_css);
	fprintf(f, "<rect class=\"bg\" x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
		   "fill=\"#f8f8f4\"/>\n", FL_WIDTH, height);
	fprintf(f, "<text class=\"ttl\" x=\"%d\" y=\"20\" text-anchor=\"middle\">%s ",
		FL_WIDTH / 2, view_heading(v->view));
	if (fl->peer)
		fprintf(f, "differential flame graph, %s (width: %s %s)", fl->before ? "before" : "after",
			fl->value == SP_VALUE_TIME ? v->time_name : v->count_name,
			fl->before ? "before" : "after");
	else
		fprintf(f, "flame graph (width: %s)",
			fl->value == SP_VALUE_TIME ? v->time_name : v->count_name);
	fputs("</text>\n", f);
	fprintf(f, "<text class=\"details\" x=\"%d\" y=\"38\" text-anchor=\"middle\">",
		FL_WIDTH / 2);
	put_details(run, v, fl, f);
	fputs("</text>\n", f);
	put_legend(fl, f);
	fprintf(f, "<text class=\"ctl reset\" x=\"%d\" y=\"20\" style=\"display:none\">Reset zoom"
		   "</text>\n", FL_PAD);
	fprintf(f, "<text class=\"ctl search\" x=\"%d\" y=\"20\" text-anchor=\"end\">Search"
		   "</text>\n", FL_WIDTH - FL_PAD);
	fprintf(f, "<text class=\"hover details\" x=\"%d\" y=\"%d\"> </text>\n", FL_PAD,
		height - 10);
	fprintf(f, "<text class=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n",
		FL_WIDTH - FL_PAD, height - 10);
	fprintf(f, "<text class=\"details cut\" x=\"%d\" y=\"56\" text-anchor=\"end\">",
		FL_WIDTH - FL_PAD);
	for (size_t i = 0; i < fl->nnodes; i++)
		nhidden += fl->nodes[i].depth > maxdepth && visible(&fl->nodes[i], v->total);
	if (nhidden) /* the same words as the script's cutNote() */
		fprintf(f, "%zu frames of thin, deeper stacks hidden: click a frame to zoom in",
			nhidden);
	fputs("</text>\n", f);
	if (!v->total)
		fprintf(f, "<text class=\"details\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">"
			   "no samples</text>\n", FL_WIDTH / 2, height - FL_BOTTOM - 4);
	for (size_t i = 0; i < fl->nnodes; i++)
		if (visible(&fl->nodes[i], v->total))
			put_node(fl, v, &fl->nodes[i], height, maxdepth, f);
	if (standalone)
		fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n",
			flame_js);
	fputs("</svg>\n", f);
}

/* One view's graph, laid out: built whole before anything is written. */
struct fl_graph {
	struct flame fl;
	struct fl_view v;
};

static int graph_build(struct fl_graph *g, const struct sp_run *run, unsigned int view,
		       enum sp_value value)
{
	int err;

	memset(g, 0, sizeof(*g));
	g->fl.value = value;
	g->v = (struct fl_view){ view, sp_view_count_name(view), sp_view_time_name(view), 0,
				 NULL, NULL };
	err = build(&g->fl, run, view);
	if (!err)
		g->v.total = g->fl.nodes[0].value;
	return err;
}

/* What writing to f came to: a write error shows at the flush at the latest. */
static int put_done(FILE *f)
{
	errno = 0;
	if (fflush(f) || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

int format_svg(const struct sp_run *run, const struct render_opts *opts, FILE *f)
{
	unsigned int view = sp_samples_view(run, opts->views);
	struct fl_graph g;
	int err;

	err = graph_build(&g, run, view ? view : SP_VIEW_SCHED, opts->value);
	if (!err) {
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", f);
		put_svg(run, &g.v, &g.fl, true, f);
		err = put_done(f);
	}
	flame_free(&g.fl);
	return err;
}

static const char page_css[] =
	"body{font:14px sans-serif;margin:12px;background:#fff;color:#222}\n"
	"h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:18px 0 4px}\n"
	".meta{color:#555;margin:0 0 8px}\n"
	".controls{margin:8px 0}#search{width:24em}\n"
	"#tip{position:fixed;display:none;pointer-events:none;background:#ffffe8;"
	"border:1px solid #888;padding:4px 6px;font:12px sans-serif;white-space:pre;"
	"box-shadow:2px 2px 4px rgba(0,0,0,.2);z-index:10}\n";

static const char page_controls[] =
	"<div class=\"controls\"><input id=\"search\" type=\"search\" "
	"placeholder=\"search frames (regular expression)\"> "
	"<button id=\"reset\" type=\"button\">Reset zoom and search</button></div>\n";

static void put_page_meta(const struct sp_run *run, FILE *f)
{
	char d[32];

	fprintf(f, "elapsed %s, kernel ", fmt_duration(run->elapsed_ns, d, sizeof(d)));
	put_text(run->kernel, f);
	fprintf(f, ", %d CPUs, host ", run->ncpus);
	put_text(run->hostname, f);
}

static void put_page_end(FILE *f)
{
	fprintf(f, "<div id=\"tip\"></div>\n<script>\n%s</script>\n</body>\n</html>\n", flame_js);
}

static const unsigned int page_order[] = { SP_VIEW_SCHED, SP_VIEW_PROFILE, SP_VIEW_LOCKS };

int format_html(const struct sp_run *run, const struct render_opts *opts, FILE *f)
{
	struct fl_graph g[ARRAY_SIZE(page_order)];
	size_t shown = 0;
	int err = 0;

	/* every graph first: out of memory writes nothing, rather than half a page */
	for (size_t i = 0; !err && i < ARRAY_SIZE(page_order); i++) {
		unsigned int view = page_order[i];

		if (!(opts->views & view) || sp_samples_view(run, view) != view)
			continue;
		err = graph_build(&g[shown++], run, view, opts->value);
	}
	if (err)
		goto out;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
	      "schedprof: ", f);
	put_title(run, f);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>schedprof: ", page_css);
	put_title(run, f);
	fputs("</h1>\n<p class=\"meta\">", f);
	put_page_meta(run, f);
	fputs(". Click a frame to zoom in, the bottom frame to zoom out; hover for counts.</p>\n",
	      f);
	fputs(page_controls, f);
	for (size_t i = 0; i < shown; i++)
		put_svg(run, &g[i].v, &g[i].fl, false, f);
	if (!shown)
		fputs("<p>This run has no view with stacks to draw.</p>\n", f);
	put_page_end(f);
	err = put_done(f);
out:
	for (size_t i = 0; i < shown; i++)
		flame_free(&g[i].fl);
	return err;
}

/* ---- differential flame graphs ---- */

int64_t sp_diff_delta(uint64_t a, uint64_t b)
{
	if (a > INT64_MAX)
		a = INT64_MAX;
	if (b > INT64_MAX)
		b = INT64_MAX;
	return (int64_t)b - (int64_t)a;
}


/* The largest change of a frame below the root: what the deepest colour means. */
static uint64_t max_delta(const struct flame *fl)
{
	uint64_t m = 0, a, b;

	for (size_t i = 1; i < fl->nnodes; i++) {
		int64_t d;

		node_before_after(fl, &fl->nodes[i], &a, &b);
		d = sp_diff_delta(a, b);
		if ((uint64_t)(d < 0 ? -d : d) > m)
			m = (uint64_t)(d < 0 ? -d : d);
	}
	return m;
}

/* One view of both runs: the after graph and the before graph, each matched to the other. */
struct fl_pair {
	struct fl_graph after, before;
};

static int pair_build(struct fl_pair *p, const struct sp_run *a, const struct sp_run *b,
		      unsigned int view, enum sp_value value, const char *name_a,
		      const char *name_b)
{
	int err;

	err = graph_build(&p->after, b, view, value);
	if (!err)
		err = graph_build(&p->before, a, view, value);
	if (!err)
		err = match(&p->after.fl, &p->before.fl);
	if (!err)
		err = match(&p->before.fl, &p->after.fl);
	if (err)
		return err;
	p->after.fl.peer = &p->before.fl;
	p->before.fl.peer = &p->after.fl;
	p->before.fl.before = true;
	/* one colour scale for both graphs of the view */
	p->after.fl.maxdelta = max_delta(&p->after.fl);
	p->before.fl.maxdelta = max_delta(&p->before.fl);
	if (p->after.fl.maxdelta < p->before.fl.maxdelta)
		p->after.fl.maxdelta = p->before.fl.maxdelta;
	p->before.fl.maxdelta = p->after.fl.maxdelta;
	p->after.v.name_a = p->before.v.name_a = name_a;
	p->after.v.name_b = p->before.v.name_b = name_b;
	return 0;
}

int flame_diff_html(const struct sp_run *a, const struct sp_run *b, unsigned int views,
		    enum sp_value value, const char *name_a, const char *name_b, FILE *f)
{
	struct fl_pair p[ARRAY_SIZE(page_order)];
	size_t shown = 0;
	int err = 0;

	memset(p, 0, sizeof(p));
	for (size_t i = 0; !err && i < ARRAY_SIZE(page_order); i++) {
		unsigned int view = page_order[i];

		if (!(views & view) ||
		    (sp_samples_view(a, view) != view && sp_samples_view(b, view) != view))
			continue;
		err = pair_build(&p[shown++], a, b, view, value, name_a, name_b);
	}
	if (err)
		goto out;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
	      "schedprof diff: ", f);
	put_text(name_a, f);
	fputs(" → ", f);
	put_text(name_b, f);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>schedprof diff: ", page_css);
	put_text(name_a, f);
	fputs(" → ", f);
	put_text(name_b, f);
	fputs("</h1>\n<p class=\"meta\">before: ", f);
	put_title(a, f);
	fputs(", ", f);
	put_page_meta(a, f);
	fputs("<br>after: ", f);
	put_title(b, f);
	fputs(", ", f);
	put_page_meta(b, f);
	fputs(".<br>Per view, the after run's stacks with each frame red where its own value grew "
	      "and blue where it shrank (the deeper, the larger the change), then the before run's "
	      "stacks coloured the same way, which still show the frames that are gone. Hover for "
	      "before, after and the change; click to zoom.</p>\n", f);
	fputs(page_controls, f);
	for (size_t i = 0; i < shown; i++) {
		put_svg(b, &p[i].after.v, &p[i].after.fl, false, f);
		put_svg(a, &p[i].before.v, &p[i].before.fl, false, f);
	}
	if (!shown)
		fputs("<p>Neither run has a view with stacks to draw.</p>\n", f);
	put_page_end(f);
	err = put_done(f);
out:
	for (size_t i = 0; i < shown; i++) {
		flame_free(&p[i].after.fl);
		flame_free(&p[i].before.fl);
	}
	return err;
}
