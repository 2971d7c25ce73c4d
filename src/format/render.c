// SPDX-License-Identifier: BSD-2-Clause
/* Format and view names, and the dispatch to each format's back end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/model_json.h"
#include "format/render.h"
#include "base/util.h"
#include "model/view.h"

static const struct {
	const char *name;
	enum sp_format format;
	int (*render)(const struct sp_run *run, const struct render_opts *opts, FILE *f);
	bool binary; /* refused on a terminal */
	bool timeline; /* renders the timeline (--timeline), nothing else */
} formats[] = {
	{ "table", SP_FMT_TABLE, format_table, false, false },
	{ "json", SP_FMT_JSON, format_json, false, false },
	{ "folded", SP_FMT_FOLDED, format_folded, false, false },
	{ "pprof", SP_FMT_PPROF, format_pprof, true, false },
	{ "svg", SP_FMT_SVG, format_svg, true, false },
	{ "html", SP_FMT_HTML, format_html, true, false },
	{ "trace-event", SP_FMT_TRACE_EVENT, format_trace_event, false, true },
	{ "timeline", SP_FMT_TIMELINE, format_timeline, true, true },
};

int render_parse_format(const char *s, enum sp_format *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		if (!strcmp(s, formats[i].name)) {
			*ret = formats[i].format;
			return 0;
		}
	}
	return -EINVAL;
}

const char *render_format_names(void)
{
	static char buf[128];

	if (!buf[0]) {
		for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
			if (i)
				strcat(buf, ", ");
			strcat(buf, formats[i].name);
		}
	}
	return buf;
}

int render_parse_value(const char *s, enum sp_value *ret)
{
	if (!strcmp(s, "count"))
		*ret = SP_VALUE_COUNT;
	else if (!strcmp(s, "time"))
		*ret = SP_VALUE_TIME;
	else
		return -EINVAL;
	return 0;
}

bool render_format_is_binary(enum sp_format format)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (formats[i].format == format)
			return formats[i].binary;
	return false;
}

bool render_format_is_timeline(enum sp_format format)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (formats[i].format == format)
			return formats[i].timeline;
	return false;
}

const char *render_run_missing(const struct sp_run *run, enum sp_format format)
{
	if (render_format_is_timeline(format) && !run->timeline.present)
		return "no timeline in this run: trace with --timeline";
	return NULL;
}

int render_parse_views(const char *s, unsigned int *ret)
{
	unsigned int mask = 0;
	const char *p = s;

	while (*p) {
		size_t len = strcspn(p, ",");
		const struct sp_view_ops *v = sp_view_by_name(p, len);

		if (!v)
			return -EINVAL;
		mask |= v->bit;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!mask)
		return -EINVAL;
	*ret = mask;
	return 0;
}

/*
 * The table of a run whose strings hold control characters, from an escaped copy (a JSON
 * round trip: the run stays as it is for the other formats and --save).
 */
static int render_escaped(const struct sp_run *run, const struct render_opts *opts, FILE *f,
			  int (*render)(const struct sp_run *, const struct render_opts *, FILE *))
{
	struct render_opts jopts = *opts;
	struct sp_run copy;
	char *buf = NULL, err_msg[128];
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int err;

	if (!m)
		return -ENOMEM;
	jopts.format = SP_FMT_JSON;
	err = format_json(run, &jopts, m);
	if (fclose(m) && !err)
		err = -ENOMEM;
	if (!err)
		err = sp_run_from_json(buf, len, &copy, err_msg, sizeof(err_msg));
	free(buf);
	if (err)
		return err;
	err = sp_run_escape_controls(&copy) ?: render(&copy, opts, f);
	sp_run_free(&copy);
	return err;
}

int render_run(const struct sp_run *run, const struct render_opts *opts, FILE *f)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		if (formats[i].format == opts->format) {
			int err;

			if (formats[i].format == SP_FMT_TABLE && sp_run_has_controls(run))
				err = render_escaped(run, opts, f, formats[i].render);
			else
				err = formats[i].render(run, opts, f);

			if (!err && ferror(f))
				err = -EIO;
			return err;
		}
	}
	return -EINVAL;
}
