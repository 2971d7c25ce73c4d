// SPDX-License-Identifier: BSD-2-Clause
/* Format and view names, and the dispatch to each format's back end. */
#include <errno.h>
#include <string.h>
#include "render.h"
#include "util.h"

static const struct {
	const char *name;
	enum sp_format format;
	int (*render)(const struct sp_run *run, const struct render_opts *opts, FILE *f);
} formats[] = {
	{ "table", SP_FMT_TABLE, format_table },
	{ "json", SP_FMT_JSON, format_json },
};

static const struct {
	const char *name;
	unsigned int view;
} views[] = {
	{ "schedules", SP_VIEW_SCHED },
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

int render_parse_views(const char *s, unsigned int *ret)
{
	unsigned int mask = 0;
	const char *p = s;

	while (*p) {
		size_t len = strcspn(p, ",");
		size_t i;

		for (i = 0; i < ARRAY_SIZE(views); i++)
			if (strlen(views[i].name) == len && !strncmp(p, views[i].name, len))
				break;
		if (i == ARRAY_SIZE(views))
			return -EINVAL;
		mask |= views[i].view;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!mask)
		return -EINVAL;
	*ret = mask;
	return 0;
}

int render_run(const struct sp_run *run, const struct render_opts *opts, FILE *f)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		if (formats[i].format == opts->format) {
			int err = formats[i].render(run, opts, f);

			if (!err && ferror(f))
				err = -EIO;
			return err;
		}
	}
	return -EINVAL;
}
