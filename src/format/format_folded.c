// SPDX-License-Identifier: BSD-2-Clause
/*
 * Folded stacks, one line per stack: "comm;root;...;leaf VALUE", the input of FlameGraph's
 * flamegraph.pl, inferno and speedscope. One view (samples.h picks it), values are counts or,
 * with --value time, nanoseconds. Lines come in the order of the tables (rows by rank).
 *
 * The format has no escapes, so names are made safe: ';' (the frame separator) becomes ':',
 * control characters (C0, DEL, C1) become '?', and an empty name "[unknown]". A comm may hold spaces: the
 * tools split the value off at the last one.
 *
 * Kernel frames are marked "_[k]" (flamegraph.pl's convention, which its --color=java and
 * speedscope's search use) when the output mixes kernel and user frames, that is when one of
 * its stacks has both: then every kernel frame of every line is marked, so a function keeps
 * one name across the file. An output of kernel stacks only (the schedules and locks views
 * before user stacks) is left as it was. Pseudo frames ("[preempted]", "[lost]") and comms
 * are never marked.
 */
#include <errno.h>
#include <inttypes.h>
#include "format/render.h"
#include "model/samples.h"

static void put_name(const char *s, FILE *f)
{
	if (!*s) {
		fputs("[unknown]", f);
		return;
	}
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == ';')
			c = ':';
		else if (c < 0x20 || c == 0x7f)
			c = '?';
		else if (c == 0xc2 && (unsigned char)s[1] >= 0x80 && (unsigned char)s[1] <= 0x9f)
			c = '?', s++; /* a C1 control (U+0080..U+009F): some terminals obey it */
		putc(c, f);
	}
}

struct folded {
	FILE *f;
	enum sp_value value;
	bool mark_kernel; /* "_[k]" on kernel frames */
};

static enum sp_frame_kind kind_at(const struct sp_sample *s, size_t i)
{
	return sp_frame_kind_of(s->frames[i], s->objects ? s->objects[i] : NULL,
				s->info ? &s->info[i] : NULL);
}

/* Stops the walk (1) at the first stack with kernel and user frames. */
static int mixes(const struct sp_sample *s, void *arg)
{
	bool kernel = false, user = false;

	(void)arg;
	for (size_t i = 0; i < s->nframes; i++) {
		enum sp_frame_kind k = kind_at(s, i);

		kernel |= k == SP_FRAME_KERNEL;
		user |= k == SP_FRAME_USER;
	}
	return kernel && user;
}

static int put_line(const struct sp_sample *s, void *arg)
{
	const struct folded *fo = arg;
	uint64_t v = sp_sample_value(s, fo->value);
	bool first = true;

	if (!v)
		return 0;
	if (s->comm) {
		put_name(s->comm, fo->f);
		first = false;
	}
	for (size_t i = s->nframes; i-- > 0;) {
		if (!first)
			putc(';', fo->f);
		put_name(s->frames[i], fo->f);
		if (fo->mark_kernel && kind_at(s, i) == SP_FRAME_KERNEL)
			fputs("_[k]", fo->f);
		first = false;
	}
	if (first)
		fputs("[unknown]", fo->f); /* a stack without frames or comm */
	fprintf(fo->f, " %" PRIu64 "\n", v);
	return ferror(fo->f) ? -EIO : 0;
}

int format_folded(const struct sp_run *run, const struct render_opts *opts, FILE *f)
{
	struct folded fo = { f, opts->value, false };
	unsigned int view = sp_samples_view(run, opts->views);
	int err;

	if (!view)
		return 0; /* nothing to draw: an empty file is valid folded input */
	err = sp_samples_for_each(run, view, mixes, NULL);
	if (err < 0)
		return err;
	fo.mark_kernel = err == 1;
	return sp_samples_for_each(run, view, put_line, &fo);
}
