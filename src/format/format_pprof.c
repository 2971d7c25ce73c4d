// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof (profile.proto, gzip-compressed) for `go tool pprof`, Pyroscope and Parca: the
 * samples of one view (samples.h) with two sample types each, a count and a time:
 *   schedules  schedules/count    offcpu/nanoseconds  (period type schedules/count)
 *   profile    samples/count      cpu/nanoseconds     (period type cpu/nanoseconds, 1/hz)
 *   locks      contentions/count  delay/nanoseconds   (period type contentions/count)
 * Frames keep their object as the mapping (with the build-id when the run knows it), and
 * every sample has a "comm" label, and a "pid" one when the stack's process is known.
 * Frames with their identity (struct sp_frame_info) are Locations at their
 * address (a user frame's file offset, a kernel frame's address) in a mapping of their object
 * with its build-id (the kernel's is "[kernel.kallsyms]"); the demangled name is the
 * Function's name and the symbol table's its system_name; file and line go on the Function
 * and the Line; inlined frames are Lines of one Location; a frame no symbol named
 * ("cc1+0x1a2b3c") is marked unresolved: in an object none of whose frames was named it has no
 * Line, so pprof, Parca or a debuginfod-backed server symbolize it (pprof.h).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include "base/hashmap.h"
#include "format/pprof.h"
#include "format/render.h"
#include "model/samples.h"
#include "model/view.h"
#include "base/util.h"

struct pp {
	struct pprof *p;
	struct hashmap build_ids; /* object path -> build-id, as sp_run_build_id() finds it */
	struct pprof_frame *frames;
	size_t cap;
};

static int index_build_ids(struct pp *pp, const struct sp_run *run)
{
	int err;

	hashmap__init(&pp->build_ids, hashmap_str_hash, hashmap_str_equal, NULL);
	err = hashmap__reserve(&pp->build_ids, run->objects.n);
	for (size_t i = 0; !err && i < run->objects.n; i++) {
		const struct sp_object *o = &run->objects.v[i];

		err = hashmap__add(&pp->build_ids, (long)o->path, (long)o->build_id);
		if (err == -EEXIST) /* the first entry of a path is the one */
			err = 0;
	}
	return err;
}

static const char *build_id(const struct pp *pp, const char *object)
{
	long id;

	/* only files have build-ids: "[kernel]", "[ext4]", "[vdso]" never do */
	if (!object || object[0] == '[' || !hashmap__find(&pp->build_ids, (long)object, &id))
		return NULL;
	return (const char *)id;
}

/*
 * A user frame no symbol named: the collectors call it "<basename(object)>+0x<hex>"
 * (docs/json.md), which is only a placeholder for the address.
 */
static bool unresolved(const char *name, const char *object)
{
	const char *base = object ? strrchr(object, '/') : NULL;
	size_t len;

	if (!base)
		return false;
	len = strlen(++base);
	return !strncmp(name, base, len) && !strncmp(name + len, "+0x", 3) && name[len + 3] &&
	       strspn(name + len + 3, "0123456789abcdef") == strlen(name + len + 3);
}

static int64_t i64(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static void set_identity(struct pprof_frame *fr, const struct sp_frame_info *in)
{
	fr->addr = in->addr;
	if (in->build_id)
		fr->build_id = in->build_id;
	fr->system_name = in->system_name;
	fr->file = in->file;
	fr->line = in->line;
	fr->inlined = in->inlined;
	fr->unresolved = in->addr && unresolved(fr->function, fr->object);
}

static int add_sample(const struct sp_sample *s, void *arg)
{
	struct pp *pp = arg;
	const char *prev_obj = NULL, *prev_id = NULL;
	int64_t values[2] = { i64(s->count), i64(s->time_ns) };
	struct pprof_label labels[2];
	size_t nlabels = 0;

	if (!s->count && !s->time_ns)
		return 0;
	if (grow((void **)&pp->frames, &pp->cap, s->nframes, sizeof(*pp->frames)))
		return -ENOMEM;
	for (size_t i = 0; i < s->nframes; i++) {
		const char *obj = s->objects ? s->objects[i] : "[kernel]";

		if (obj != prev_obj) { /* runs of frames share their object */
			prev_obj = obj;
			prev_id = build_id(pp, obj);
		}
		pp->frames[i] = (struct pprof_frame){ .function = s->frames[i], .object = obj,
						      .build_id = prev_id };
		if (s->info)
			set_identity(&pp->frames[i], &s->info[i]);
	}
	if (s->comm)
		labels[nlabels++] = (struct pprof_label){ .key = "comm", .str = s->comm };
	/* no label for an unknown pid: Go's reader drops numeric labels whose value is 0 */
	if (s->pid > 0)
		labels[nlabels++] = (struct pprof_label){ .key = "pid", .num = s->pid,
							  .is_num = true };
	return pprof__add_sample(pp->p, pp->frames, s->nframes, values, labels, nlabels);
}

static int add_comments(struct pprof *p, const struct sp_run *run, unsigned int view)
{
	char buf[512];
	int err;

	snprintf(buf, sizeof(buf), "schedprof %s, %s view", run->version ? run->version : "?",
		 sp_view_name(view));
	err = pprof__add_comment(p, buf);
	if (!err && run->target.mode == SP_TARGET_COMMAND && run->target.command) {
		snprintf(buf, sizeof(buf), "command: %s", run->target.command);
		err = pprof__add_comment(p, buf);
	}
	if (!err) {
		snprintf(buf, sizeof(buf), "kernel %s, %d CPUs, host %s",
			 run->kernel ? run->kernel : "?", run->ncpus,
			 run->hostname ? run->hostname : "?");
		err = pprof__add_comment(p, buf);
	}
	if (!err && run->options) {
		snprintf(buf, sizeof(buf), "options: %s", run->options);
		err = pprof__add_comment(p, buf);
	}
	return err;
}

int format_pprof(const struct sp_run *run, const struct render_opts *opts, FILE *f)
{
	static const char *const units[] = { "count", "nanoseconds" };
	unsigned int view = sp_samples_view(run, opts->views);
	/* no view: an empty profile of the schedules types, still a valid file */
	const struct sp_view_ops *v = sp_view_find(view ? view : SP_VIEW_SCHED);
	struct pp pp = { 0 };
	int err;

	/* the sample types and period are the view's (view_*.c) */
	pp.p = pprof__new(v->pprof.types, units, 2, i64(run->elapsed_ns), i64(run->start_unix_ns),
			  v->pprof.period_type, v->pprof.period_unit,
			  v->period_ns ? (int64_t)v->period_ns(run) : 1);
	if (!pp.p)
		return -errno;
	err = index_build_ids(&pp, run) ?: add_comments(pp.p, run, view ? view : SP_VIEW_SCHED);
	if (!err && view)
		err = sp_samples_for_each_pid(run, view, add_sample, &pp);
	if (!err)
		err = pprof__write(pp.p, f);
	pprof__free(pp.p);
	hashmap__clear(&pp.build_ids);
	free(pp.frames);
	return err;
}
