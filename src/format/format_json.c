// SPDX-License-Identifier: BSD-2-Clause
/*
 * The saved-run document ("schema": "schedprof/1"), documented in docs/json.md. It holds
 * everything `schedprof report` needs to render any format again: counts, times, symbolized
 * stacks, target, kernel release, CPU count and options. Row and stack limits (-n) do not
 * apply: a saved run is complete. The keys come from the schema (schema.h, view.h), which
 * the reader (model_json.c) shares.
 */
#include <errno.h>
#include <stdlib.h>
#include "base/json_writer.h"
#include "format/render.h"
#include "model/schema.h"
#include "model/view.h"

static int write_json(const struct sp_run *run, const struct render_opts *opts, FILE *f,
		      bool pretty)
{
	struct json_writer *w = jw_new(f, pretty);
	int err, jerr;

	if (!w)
		return -errno;
	jw_start_object(w);
	err = sp_schema_write(w, &sp_run_fields, run);
	for (size_t i = 0; !err && i < sp_nviews; i++) {
		const struct sp_view_ops *v = sp_views[i];

		if (!sp_view_present(run, v) || !(opts->views & v->bit))
			continue;
		jw_name(w, v->name);
		jw_start_object(w);
		err = sp_schema_write(w, v->schema, sp_view_cdata(run, v));
		jw_end_object(w);
	}
	jw_end_object(w);
	jerr = jw_finish(w);
	jw_free(w);
	err = err ?: jerr;
	if (!err && fputc('\n', f) == EOF)
		err = -EIO;
	return err;
}

int format_json(const struct sp_run *run, const struct render_opts *opts, FILE *f)
{
	return write_json(run, opts, f, true);
}

int format_json_line(const struct sp_run *run, const struct render_opts *opts, FILE *f)
{
	return write_json(run, opts, f, false);
}
