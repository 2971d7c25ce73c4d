// SPDX-License-Identifier: BSD-2-Clause
/*
 * What is done with each interval of a trace (trace.h): `trace -i` prints it (each view's
 * table under an interval header, or one JSON line), `schedprof top` draws it on the terminal.
 *
 * top is plain ANSI: the alternate screen, the cursor home, each line cleared to its end;
 * the terminal in non-canonical mode without echo (ISIG stays on: Ctrl-C is SIGINT, which
 * the engine, collect/trace_wait.c, turns into a clean end). Whatever way the process
 * leaves (q, a signal the engine catches, -d, the target's end, a fatal signal, Ctrl-Z), the
 * terminal gets its settings back.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/commands.h"
#include "base/log.h"
#include "format/render.h"
#include "model/run_delta.h"
#include "collect/trace.h"
#include "cli/trace_opts.h"
#include "base/util.h"
#include "model/view.h"

/* ---- trace -i: print each interval ---- */

static int print_interval(void *ctx, const struct sp_run *iv, const struct sp_run *total,
			  bool last, FILE *out)
{
	const struct trace_opts *o = ctx;
	char d[32];
	int err;

	(void)total;
	if (o->render.format == SP_FMT_JSON) {
		err = format_json_line(iv, &o->render, out);
	} else {
		fprintf(out, "=== interval %llu: %.3f s to %.3f s (%s) ===\n",
			(unsigned long long)iv->interval.index, iv->interval.start_ns / 1e9,
			iv->interval.end_ns / 1e9, fmt_duration(iv->elapsed_ns, d, sizeof(d)));
		err = render_run(iv, &o->render, out);
		/* the whole run's report follows the last interval */
		if (!err && fputs(last ? "\n=== the whole run ===\n" : "\n", out) == EOF)
			err = -EIO;
	}
	/* each interval as it ends: a reader of the lines sees it now */
	if (!err && fflush(out))
		err = -EIO;
	/* out keeps its write's errno (output.h): EPIPE is a quiet end, ENOSPC said as such */
	if (err == -EIO && ferror(out) && errno > 0)
		err = -errno;
	if (err && err != -EPIPE)
		elog("cannot write interval %llu: %s", (unsigned long long)iv->interval.index,
		     strerror(-err));
	return err;
}

void trace_interval_printer(const struct trace_opts *o, struct trace_hooks *h)
{
	memset(h, 0, sizeof(*h));
	h->ctx = (void *)o;
	h->interval = print_interval;
	h->fd = -1;
	/* JSON lines are the output; the tables are followed by the whole run's */
	h->no_report = o->render.format == SP_FMT_JSON;
}

/* ---- top: the terminal ---- */

static struct termios saved_tio;
static volatile sig_atomic_t tty_raw, winch;

#define ALT_SCREEN_ON "\033[?1049h\033[?25l"
#define ALT_SCREEN_OFF "\033[?25h\033[?1049l"

/* Async-signal-safe: termios back, the main screen and the cursor back. */
static void tty_restore(void)
{
	if (!tty_raw)
		return;
	tty_raw = 0;
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
	if (write(STDOUT_FILENO, ALT_SCREEN_OFF, sizeof(ALT_SCREEN_OFF) - 1) < 0)
		return;
}

static int tty_raw_on(void)
{
	struct termios t = saved_tio;

	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t))
		return -errno;
	tty_raw = 1;
	if (write(STDOUT_FILENO, ALT_SCREEN_ON, sizeof(ALT_SCREEN_ON) - 1) < 0)
		return -errno;
	return 0;
}

/* A fatal signal: the terminal back, then the signal's own end (core, status). */
static void on_fatal(int sig)
{
	tty_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Ctrl-Z: the shell gets its terminal back; SIGCONT takes it again (and redraws). */
static void on_tstp(int sig)
{
	int was = tty_raw;

	(void)sig;
	tty_restore();
	tty_raw = was ? 2 : 0; /* 2: to be taken again on SIGCONT */
	signal(SIGTSTP, SIG_DFL);
	raise(SIGTSTP);
}

static void on_cont(int sig)
{
	(void)sig;
	signal(SIGTSTP, on_tstp);
	if (tty_raw == 2) {
		tty_raw = 0;
		tty_raw_on();
	}
	winch = 1; /* redraw */
}

static void on_winch(int sig)
{
	(void)sig;
	winch = 1;
}

static void install_tty_signals(void)
{
	static const int fatal[] = { SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	struct sigaction sa = { .sa_handler = on_winch };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, NULL);
	sa.sa_handler = on_cont;
	sigaction(SIGCONT, &sa, NULL);
	sa.sa_handler = on_tstp;
	sigaction(SIGTSTP, &sa, NULL);
	sa.sa_handler = on_fatal;
	for (size_t i = 0; i < ARRAY_SIZE(fatal); i++)
		sigaction(fatal[i], &sa, NULL);
	atexit(tty_restore);
}

/* ---- top: the state and the screen ---- */

enum { TOP_SCHED = 0, TOP_PROFILE, TOP_LOCKS, TOP_NVIEWS };

static const unsigned int view_bits[TOP_NVIEWS] = { SP_VIEW_SCHED, SP_VIEW_PROFILE, SP_VIEW_LOCKS };
static const char *const view_names[TOP_NVIEWS] = { "schedules", "profile", "locks" };
/* The sorts each view cycles through with s. */
static const char *const sched_sorts[] = { "count", "time", "max", "runq", "throttled" };
static const char *const profile_sorts[] = { "samples", "function" };
static const char *const lock_sorts[] = { "wait", "count", "max" };
static const char *const *const sorts[TOP_NVIEWS] = { sched_sorts, profile_sorts, lock_sorts };
static const size_t nsorts[TOP_NVIEWS] = { ARRAY_SIZE(sched_sorts), ARRAY_SIZE(profile_sorts),
					  ARRAY_SIZE(lock_sorts) };

struct top {
	const struct trace_opts *o;
	char target[256];
	struct sp_run last; /* a copy of the last interval */
	bool have_last;
	uint64_t elapsed_ns; /* at the last interval's end */
	uint64_t tot[TOP_NVIEWS]; /* since the start: schedules, samples, contentions */
	int view;
	size_t sort[TOP_NVIEWS];
	bool paused, quit;
	int rows, cols;
	uint64_t draws;
};

static void term_size(struct top *t)
{
	struct winsize ws;

	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		t->rows = ws.ws_row;
		t->cols = ws.ws_col;
	} else {
		t->rows = 24;
		t->cols = 80;
	}
}

static int cmp_desc(uint64_t a, uint64_t b)
{
	return (a < b) - (a > b);
}

static int sched_cmp(const void *pa, const void *pb, void *arg)
{
	const struct sp_sched_row *a = pa, *b = pb;
	size_t key = *(const size_t *)arg;
	uint64_t ka[] = { a->count, a->offcpu_ns, a->max_ns, a->runq_ns, a->throttled_ns };
	uint64_t kb[] = { b->count, b->offcpu_ns, b->max_ns, b->runq_ns, b->throttled_ns };
	int c = cmp_desc(ka[key], kb[key]);

	for (size_t i = 0; !c && i < ARRAY_SIZE(ka); i++)
		c = cmp_desc(ka[i], kb[i]);
	return c ?: strcmp(a->caller ? a->caller : "", b->caller ? b->caller : "");
}

static int profile_by_name(const void *pa, const void *pb)
{
	const struct sp_profile_row *a = pa, *b = pb;

	return strcmp(a->function ? a->function : "", b->function ? b->function : "") ?:
	       cmp_desc(a->samples, b->samples);
}

/* The last interval's rows in the current view's sort (locks: by the table printer). */
static void apply_sort(struct top *t)
{
	struct sp_run *r = &t->last;
	size_t key = t->sort[t->view];

	if (t->view == TOP_SCHED)
		qsort_r(r->sched.rows, r->sched.nrows, sizeof(*r->sched.rows), sched_cmp, &key);
	else if (t->view == TOP_PROFILE && key == 1)
		qsort(r->profile.rows, r->profile.nrows, sizeof(*r->profile.rows), profile_by_name);
	else if (t->view == TOP_PROFILE)
		sp_profile_sort(&r->profile);
}

/* Writes s, at most cols columns of it (a UTF-8 sequence is one column), then clears the line. */
static void put_line(FILE *f, const char *s, size_t len, int cols)
{
	int col = 0;

	for (size_t i = 0; i < len && s[i] != '\n'; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c & 0xc0) != 0x80 && ++col > cols)
			break;
		fputc(c, f);
	}
	fputs("\033[K\r\n", f);
}

static const struct sp_view_ops *view_ops(unsigned int bit)
{
	for (size_t i = 0; i < sp_nviews; i++)
		if (sp_views[i]->bit == bit)
			return sp_views[i];
	return NULL;
}

/* The current view's table of the last interval, at most maxrows rows, into a buffer. */
static char *render_view(struct top *t, int maxrows, size_t *ret_len)
{
	struct render_opts ro = t->o->render;
	const struct sp_view_ops *v = view_ops(view_bits[t->view]);
	char *buf = NULL;
	FILE *m;

	*ret_len = 0;
	m = open_memstream(&buf, ret_len);
	if (!m)
		return NULL;
	ro.format = SP_FMT_TABLE;
	ro.views = view_bits[t->view];
	ro.stacks = false;
	ro.lock_stacks = false;
	ro.nrows = maxrows > 1 ? (unsigned int)maxrows : 1;
	ro.lock_sort = t->view == TOP_LOCKS ? (enum sp_lock_sort)t->sort[TOP_LOCKS] : ro.lock_sort;
	if (!(t->o->trace.views & view_bits[t->view]))
		fprintf(m, "the %s view is not collected (--views)\n", view_names[t->view]);
	else if (!t->have_last)
		fputs("waiting for the first interval...\n", m);
	else if (v && sp_view_present(&t->last, v))
		v->print_table(&t->last, &ro, m);
	else
		fprintf(m, "no %s in this interval\n", view_names[t->view]);
	if (fclose(m))
		return NULL;
	return buf;
}

/* The whole screen, written at once. */
static void draw(struct top *t)
{
	char *screen = NULL, *table, line[512], d1[32], d2[32];
	size_t slen = 0, tlen;
	const int header = 4;
	int n = 0, room;
	FILE *f = open_memstream(&screen, &slen);

	if (!f)
		return;
	term_size(t);
	fputs("\033[H", f);
	snprintf(line, sizeof(line), "schedprof top: %s   elapsed %s   interval %llu (%s)%s",
		 t->target, fmt_duration(t->elapsed_ns, d1, sizeof(d1)),
		 (unsigned long long)(t->have_last ? t->last.interval.index : 0),
		 fmt_duration(t->have_last ? t->last.elapsed_ns : t->o->trace.interval_ns, d2, sizeof(d2)),
		 t->paused ? "   [paused]" : "");
	put_line(f, line, strlen(line), t->cols);
	snprintf(line, sizeof(line), "since the start: %llu schedules, %llu samples, %llu "
		 "contentions", (unsigned long long)t->tot[TOP_SCHED],
		 (unsigned long long)t->tot[TOP_PROFILE], (unsigned long long)t->tot[TOP_LOCKS]);
	put_line(f, line, strlen(line), t->cols);
	n = snprintf(line, sizeof(line), "view:");
	for (int i = 0; i < TOP_NVIEWS; i++)
		n += snprintf(line + n, sizeof(line) - n, i == t->view ? " [%d %s]" : " %d %s", i + 1,
			      view_names[i]);
	snprintf(line + n, sizeof(line) - n, "   sort: %s   keys: 1-3/Tab view, s sort, p pause, "
		 "q quit", sorts[t->view][t->sort[t->view]]);
	put_line(f, line, strlen(line), t->cols);
	put_line(f, "", 0, t->cols);
	room = t->rows - header;
	/* the table's own lines (title, column headers, totals) take about 8 of them */
	table = render_view(t, room - 8, &tlen);
	for (size_t i = 0; table && i < tlen && room > 0; room--) {
		const char *nl = memchr(table + i, '\n', tlen - i);
		size_t len = nl ? (size_t)(nl - (table + i)) : tlen - i;

		/* the last row of the screen without its newline: no scroll */
		if (room == 1) {
			fwrite(table + i, 1, len < (size_t)t->cols ? len : (size_t)t->cols, f);
			fputs("\033[K", f);
			break;
		}
		put_line(f, table + i, len, t->cols);
		i += len + 1;
	}
	free(table);
	fputs("\033[J", f);
	if (!fclose(f) && screen) {
		for (size_t off = 0; off < slen;) {
			ssize_t w = write(STDOUT_FILENO, screen + off, slen - off);

			if (w <= 0 && errno != EINTR)
				break;
			off += w > 0 ? (size_t)w : 0;
		}
	}
	free(screen);
	t->draws++;
}

static int top_interval(void *ctx, const struct sp_run *iv, const struct sp_run *total,
			bool last, FILE *out)
{
	struct top *t = ctx;
	struct sp_run copy;
	int err;

	(void)out;
	if (last)
		return 0; /* the screen is gone (top_ended) */
	t->tot[TOP_SCHED] = total->sched.total;
	t->tot[TOP_PROFILE] = total->profile.total;
	t->tot[TOP_LOCKS] = total->locks.total;
	t->elapsed_ns = iv->interval.end_ns;
	if (t->paused)
		return 0; /* collection goes on; the screen keeps the interval it shows */
	/* a deep copy: the interval's run is the caller's */
	sp_run_init(&copy);
	err = sp_run_delta(NULL, iv, &copy, NULL);
	if (err) {
		sp_run_free(&copy);
		elog("out of memory");
		return err;
	}
	copy.interval = iv->interval;
	copy.elapsed_ns = iv->elapsed_ns;
	sp_run_free(&t->last);
	t->last = copy;
	t->have_last = true;
	apply_sort(t);
	draw(t);
	return 0;
}

/* A key: true when the screen must be drawn again. */
static bool top_key(struct top *t, int c)
{
	switch (c) {
	case 'q':
	case 'Q':
		t->quit = true;
		return false;
	case '1':
	case '2':
	case '3':
		t->view = c - '1';
		break;
	case '\t':
		t->view = (t->view + 1) % TOP_NVIEWS;
		break;
	case 's':
		t->sort[t->view] = (t->sort[t->view] + 1) % nsorts[t->view];
		break;
	case 'p':
	case ' ':
		t->paused = !t->paused;
		break;
	default:
		return false;
	}
	if (t->have_last)
		apply_sort(t);
	return true;
}

static bool top_tick(void *ctx)
{
	struct top *t = ctx;
	bool redraw = false;
	char buf[64];
	ssize_t n;

	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n && !t->quit; i++)
			redraw |= top_key(t, (unsigned char)buf[i]);
	if (winch) {
		winch = 0;
		redraw = true;
	}
	if (redraw && !t->quit)
		draw(t);
	return t->quit;
}

static void top_ended(void *ctx)
{
	(void)ctx;
	tty_restore(); /* what the end has to say goes to the terminal's own screen */
}

/* Not a terminal: top has nothing to draw on. */
#define TOP_NOT_TTY_MSG "top draws on a terminal, and standard input and output must be one: " \
			"trace -i prints intervals to a file or a pipe"

int cmd_top(int argc, char **argv)
{
	struct trace_hooks h = { .fd = STDIN_FILENO, .tick = top_tick, .interval = top_interval,
				 .ended = top_ended, .no_report = true, .screen = true };
	struct top t = {};
	struct trace_outputs w;
	struct trace_sink sink;
	struct trace_opts o;
	int code, err;

	code = top_parse(argc, argv, &o);
	if (code) {
		trace_opts_free(&o);
		return code < 0 ? EXIT_SUCCESS : code;
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		elog(TOP_NOT_TTY_MSG);
		trace_opts_free(&o);
		return EXIT_FAILURE;
	}
	t.o = &o;
	trace_target_describe(&o.trace, t.target, sizeof(t.target));
	/* the first view collected */
	for (t.view = 0; t.view < TOP_NVIEWS - 1 && !(o.trace.views & view_bits[t.view]); t.view++)
		;
	t.sort[TOP_LOCKS] = o.render.lock_sort;
	sp_run_init(&t.last);
	h.ctx = &t;
	if (tcgetattr(STDIN_FILENO, &saved_tio)) {
		elog("cannot read the terminal's settings: %s", strerror(errno));
		trace_opts_free(&o);
		return EXIT_FAILURE;
	}
	install_tty_signals();
	err = tty_raw_on();
	if (err) {
		tty_restore();
		elog("cannot set up the terminal: %s", strerror(-err));
		trace_opts_free(&o);
		return EXIT_FAILURE;
	}
	draw(&t);
	trace_outputs_sink(&w, &o, &sink);
	code = trace_run(&o.trace, &sink, &h);
	tty_restore();
	dlog("top: %llu screens drawn", (unsigned long long)t.draws);
	sp_run_free(&t.last);
	trace_opts_free(&o);
	return code;
}
