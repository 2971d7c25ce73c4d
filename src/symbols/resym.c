/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Re-symbolizing a saved run (see resym.h). A run read from JSON keeps its strings in a pool
 * (sp_run.strings): every string set here goes through it then, and rows dropped by a merge
 * free only their arrays.
 */
#include "symbols/resym.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "symbols/demangle.h"
#include "base/hashmap.h"
#include "model/strpool.h"
#include "symbols/usyms.h"

struct resym {
	struct sp_run *run;
	struct usyms *u;
	bool lines;
	struct hashmap paths; /* object paths offered to usyms already (const char * -> 1) */
	bool objects_offered; /* the run's object list, on the first frame looked up */
	struct sp_resym_stats *st;
};

bool sp_resym_is_unresolved(const char *name, const char *object)
{
	const char *base, *p;
	size_t blen;

	if (!name || !object)
		return false;
	base = strrchr(object, '/');
	base = base ? base + 1 : object;
	blen = strlen(base);
	if (!blen || strncmp(name, base, blen) || strncmp(name + blen, "+0x", 3))
		return false;
	p = name + blen + 3;
	if (!*p)
		return false;
	return strspn(p, "0123456789abcdef") == strlen(p);
}

/* *slot = a copy of s (NULL: NULL), in the run's pool when it has one. 0 or -ENOMEM. */
static int set_str(struct sp_run *run, char **slot, const char *s)
{
	char *d;

	if (!s) {
		if (!run->strings)
			free(*slot);
		*slot = NULL;
		return 0;
	}
	if (*slot && !strcmp(*slot, s))
		return 0;
	d = run->strings ? sp_strpool_intern(run->strings, s) : strdup(s);
	if (!d)
		return -ENOMEM;
	if (!run->strings)
		free(*slot);
	*slot = d;
	return 0;
}

/* The file a frame names, registered once so lookups can use its own headers. */
static int offer_path(struct resym *r, const char *path)
{
	struct stat st;
	int err;

	if (!path || path[0] != '/' || hashmap__find(&r->paths, (long)path, NULL))
		return 0;
	err = hashmap__add(&r->paths, (long)path, 1);
	if (err)
		return err;
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	/* another build-id there (rebuilt, upgraded) is harmless: lookups go by build-id */
	err = usyms__add_file(r->u, path);
	return err == -ENOMEM ? err : 0;
}

/*
 * Looks a frame up again and renames it when it deserves (resym.h). *name and *info are the
 * frame's; object its file. 0, or -ENOMEM. *ret_renamed tells whether the name changed.
 */
static int resym_frame(struct resym *r, char **name, const char *object,
		       struct sp_frame_info *info, bool lines, bool *ret_renamed,
		       struct usym *ret_inl)
{
	struct usym s;
	bool rename;
	int err;

	*ret_renamed = false;
	ret_inl->ninlined = 0;
	if (!info->build_id || !info->addr || info->inlined)
		return 0;
	/* a named frame has nothing to gain but its line: most frames cost one test here */
	if (!sp_resym_is_unresolved(*name, object) && strcmp(*name, "[unknown]") &&
	    !sp_name_is_mangled(*name) && (!lines || info->file))
		return 0;
	r->st->frames++;
	for (size_t i = 0; !r->objects_offered && i < r->run->objects.n; i++) {
		err = offer_path(r, r->run->objects.v[i].path);
		if (err)
			return err;
	}
	r->objects_offered = true;
	err = offer_path(r, object);
	if (err)
		return err;
	err = usyms__resolve_build_id_hex(r->u, info->build_id, info->addr, &s);
	if (err == -ENOMEM)
		return err;
	if (err) {
		r->st->unknown++;
		return 0;
	}
	if (!s.name) {
		r->st->unnamed++;
		return 0;
	}
	rename = strcmp(*name, s.name) &&
		 (sp_resym_is_unresolved(*name, object) || !strcmp(*name, "[unknown]") ||
		  (s.system_name && !strcmp(*name, s.system_name)));
	if (strcmp(*name, s.name) && !rename)
		return 0; /* named otherwise at trace time (another source): keep it */
	if (rename) {
		err = set_str(r->run, name, s.name);
		if (err)
			return err;
		r->st->renamed++;
		*ret_renamed = true;
	}
	if (s.system_name && !info->system_name &&
	    (err = set_str(r->run, &info->system_name, s.system_name)))
		return err;
	if (!lines || info->file)
		return 0;
	/* no line yet: the run was traced without --lines, so no inlined call was inserted */
	ret_inl->inlined = s.inlined;
	ret_inl->ninlined = s.ninlined;
	if (s.file) {
		err = set_str(r->run, &info->file, s.file);
		if (err)
			return err;
		info->line = s.line;
		r->st->lines++;
	}
	return 0;
}

/* Moves the n elements after the first m of base (elements of size sz) before them. */
static void rotate_in(void *base, size_t sz, size_t m, size_t n)
{
	char *p = base, tmp[sizeof(struct sp_frame_info)];

	/* one element at a time, from the last of the n: n is a handful of inlined calls */
	for (size_t j = 0; j < n; j++) {
		memcpy(tmp, p + (m + n - 1) * sz, sz);
		memmove(p + sz, p, (m + n - 1) * sz);
		memcpy(p, tmp, sz);
	}
}

/*
 * Inserts the n calls inlined at frame k of s before it (innermost first, as a trace with
 * --lines has them): each one a frame of k's object, address and build-id, marked inlined.
 * The row stays as it was when memory runs out. 0 or -ENOMEM.
 */
static int insert_inlined(struct sp_run *run, struct sp_stack_row *s, size_t k,
			  const struct usym_inline *inl, size_t n)
{
	size_t want = s->nframes + n + 1, end = s->nframes, j;
	struct sp_frame_info *iv, *in;
	char **v;
	int err = 0;

	/* room first: grown arrays with the same frames are the same row */
	if ((v = realloc(s->frames, want * sizeof(*v))))
		s->frames = v;
	if (v && (v = realloc(s->objects, want * sizeof(*v))))
		s->objects = v;
	if (!v || !(iv = realloc(s->info, want * sizeof(*iv))))
		return -ENOMEM;
	s->info = iv;
	/* the new frames at the end, past the row's frames, then moved before frame k */
	memset(s->frames + end, 0, (n + 1) * sizeof(*s->frames));
	memset(s->objects + end, 0, (n + 1) * sizeof(*s->objects));
	memset(s->info + end, 0, (n + 1) * sizeof(*s->info));
	for (j = 0; !err && j < n; j++) {
		in = &s->info[end + j];
		in->addr = s->info[k].addr;
		in->line = inl[j].line;
		in->inlined = true;
		err = set_str(run, &s->frames[end + j], inl[j].name ? inl[j].name : "[unknown]") ?:
		      set_str(run, &s->objects[end + j], s->objects[k]) ?:
		      set_str(run, &in->build_id, s->info[k].build_id) ?:
		      set_str(run, &in->system_name, inl[j].system_name) ?:
		      set_str(run, &in->file, inl[j].file);
	}
	if (err) {
		for (j = 0; j < n; j++) {
			in = &s->info[end + j];
			set_str(run, &s->frames[end + j], NULL);
			set_str(run, &s->objects[end + j], NULL);
			set_str(run, &in->build_id, NULL);
			set_str(run, &in->system_name, NULL);
			set_str(run, &in->file, NULL);
		}
		return err;
	}
	rotate_in(s->frames + k, sizeof(*s->frames), end - k, n);
	rotate_in(s->objects + k, sizeof(*s->objects), end - k, n);
	rotate_in(s->info + k, sizeof(*s->info), end - k, n);
	s->nframes += n;
	return 0;
}

/* A stack row dropped by a merge: its arrays, and its strings unless the pool owns them. */
static void stack_row_drop(struct sp_run *run, struct sp_stack_row *s)
{
	if (!run->strings) {
		sp_stack_row_free(s);
	} else {
		free(s->frames);
		free(s->objects);
		free(s->info);
	}
	memset(s, 0, sizeof(*s));
}

/*
 * Elements of an array that became alike are merged into the first of their kind, which keeps
 * its place: the array's kind says how to hash, compare and join them.
 */
struct merge_kind {
	size_t size;
	uint64_t (*hash)(const void *e);
	bool (*equal)(const void *a, const void *b);
	/* dup joins keep; 0 (then dup is empty: dropped) or -ENOMEM (both as they were) */
	int (*join)(struct sp_run *run, void *keep, void *dup);
};

struct merge_ctx {
	char *base;
	const struct merge_kind *kind;
};

static uint64_t merge_hash(long key, void *ctx)
{
	const struct merge_ctx *m = ctx;

	return m->kind->hash(m->base + (size_t)key * m->kind->size);
}

static bool merge_equal(long a, long b, void *ctx)
{
	const struct merge_ctx *m = ctx;

	return m->kind->equal(m->base + (size_t)a * m->kind->size,
			      m->base + (size_t)b * m->kind->size);
}

/* Merges the *n elements at base; *ret_merged counts the ones joined. 0 or -ENOMEM. */
static int merge_alike(struct sp_run *run, void *base, size_t *n, const struct merge_kind *k,
		       size_t *ret_merged)
{
	struct merge_ctx m = { base, k };
	struct hashmap seen;
	size_t kept = 0, i;
	long j;
	int err;

	*ret_merged = 0;
	hashmap__init(&seen, merge_hash, merge_equal, &m);
	err = hashmap__reserve(&seen, *n);
	if (err)
		return err;
	for (i = 0; i < *n; i++) {
		char *e = m.base + i * k->size;

		if (!err && hashmap__find(&seen, (long)i, &j)) {
			err = k->join(run, m.base + (size_t)j * k->size, e);
			if (!err) {
				(*ret_merged)++;
				continue;
			}
		}
		/* after a failure the rest stays as it is */
		if (i != kept) {
			memcpy(m.base + kept * k->size, e, k->size);
			memset(e, 0, k->size);
		}
		if (!err)
			hashmap__add(&seen, (long)kept, (long)kept); /* reserved: cannot fail */
		kept++;
	}
	hashmap__clear(&seen);
	*n = kept;
	return err;
}

static uint64_t stack_hash(const void *e)
{
	return sp_stack_row_hash(e, true, 0);
}

static bool stack_equal(const void *a, const void *b)
{
	return sp_stack_rows_alike(a, b, true);
}

static int stack_join(struct sp_run *run, void *keep, void *dup)
{
	struct sp_stack_row *a = keep, *b = dup;

	a->count += b->count;
	a->time_ns += b->time_ns;
	stack_row_drop(run, b);
	return 0;
}

static const struct merge_kind stack_kind = { sizeof(struct sp_stack_row), stack_hash,
					      stack_equal, stack_join };

/* Merges the stacks of l that renaming made alike, keeping the first of each in place. */
static int stack_list_remerge(struct sp_run *run, struct sp_stack_list *l)
{
	size_t merged;
	int err = merge_alike(run, l->v, &l->n, &stack_kind, &merged);

	if (merged)
		sp_stack_list_sort(l);
	return err;
}

/*
 * profile: the stacks of a profile row, whose first frame, when a user frame, is the sampled
 * PC kept as its function's start (uframes.h): its file:line is the function's entry's, and it
 * gets no inlined calls (the entry's would be none of the samples').
 */
static int resym_stacks(struct resym *r, struct sp_stack_list *l, bool profile)
{
	bool any = false;
	int err;

	for (size_t i = 0; i < l->n; i++) {
		struct sp_stack_row *s = &l->v[i];

		if (!s->info || !s->objects)
			continue;
		for (size_t k = 0; k < s->nframes; k++) {
			bool renamed;
			struct usym inl;

			if (sp_frame_kind(s, k) != SP_FRAME_USER)
				continue;
			err = resym_frame(r, &s->frames[k], s->objects[k], &s->info[k], r->lines,
					  &renamed, &inl);
			if (!err && inl.ninlined && !(profile && k == 0) &&
			    (k == 0 || !s->info[k - 1].inlined)) {
				err = insert_inlined(r->run, s, k, inl.inlined, inl.ninlined);
				if (!err) {
					r->st->inlined += inl.ninlined;
					k += inl.ninlined;
					renamed = true;
				}
			}
			if (err)
				return err;
			any |= renamed;
		}
	}
	return any ? stack_list_remerge(r->run, l) : 0;
}

static void profile_row_drop(struct sp_run *run, struct sp_profile_row *row)
{
	for (size_t i = 0; i < row->stacks.n; i++)
		stack_row_drop(run, &row->stacks.v[i]);
	free(row->stacks.v);
	if (!run->strings) {
		free(row->function);
		free(row->object);
		sp_frame_info_free(row->info, 1);
		sp_comm_list_free(&row->comms);
	} else {
		free(row->info);
		free(row->comms.v);
	}
	memset(row, 0, sizeof(*row));
}

/* Row b joins row a (the same function now): comms, stacks and samples; b is dropped. */
static int profile_join(struct sp_run *run, void *keep, void *dup)
{
	struct sp_profile_row *a = keep, *b = dup;
	struct sp_stack_row *v;
	size_t i;
	int err;

	v = realloc(a->stacks.v, (a->stacks.n + b->stacks.n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	a->stacks.v = v;
	a->stacks.cap = a->stacks.n + b->stacks.n + 1;
	for (i = 0; i < b->comms.n; i++) {
		const struct sp_comm_stat *c = &b->comms.v[i];
		size_t before = a->comms.n;

		err = sp_comm_list_add(&a->comms, c->comm, c->count, c->time_ns, c->max_ns);
		if (err)
			return err;
		if (run->strings && a->comms.n > before) { /* the copy goes into the pool */
			char *own = a->comms.v[before].comm;

			a->comms.v[before].comm = NULL;
			err = set_str(run, &a->comms.v[before].comm, own);
			free(own);
			if (err)
				return err;
		}
	}
	sp_comm_list_sort(&a->comms);
	memcpy(a->stacks.v + a->stacks.n, b->stacks.v, b->stacks.n * sizeof(*v));
	a->stacks.n += b->stacks.n;
	b->stacks.n = 0;
	a->samples += b->samples;
	profile_row_drop(run, b);
	/* stacks of the two rows may be alike; out of memory, they stay apart */
	(void)stack_list_remerge(run, &a->stacks);
	return 0;
}

static uint64_t profile_hash(const void *e)
{
	const struct sp_profile_row *row = e;

	return hashmap_hash_bytes(row->object, strlen(row->object),
				  hashmap_hash_bytes(row->function, strlen(row->function), 0));
}

static bool profile_equal(const void *a, const void *b)
{
	const struct sp_profile_row *x = a, *y = b;

	return !strcmp(x->function, y->function) && !strcmp(x->object, y->object);
}

static const struct merge_kind profile_kind = { sizeof(struct sp_profile_row), profile_hash,
						profile_equal, profile_join };

/* Profile rows that now name the same function in the same object become one. */
static int profile_remerge(struct resym *r)
{
	struct sp_profile_view *v = &r->run->profile;
	size_t merged;
	int err = merge_alike(r->run, v->rows, &v->nrows, &profile_kind, &merged);

	r->st->rows_merged += merged;
	sp_profile_sort(v);
	return err;
}

static int resym_profile(struct resym *r)
{
	struct sp_profile_view *v = &r->run->profile;
	bool any = false;
	int err;

	for (size_t i = 0; i < v->nrows; i++) {
		struct sp_profile_row *row = &v->rows[i];
		bool renamed, was_unknown;
		struct usym inl;

		err = resym_stacks(r, &row->stacks, true);
		if (err)
			return err;
		if (!row->info || !row->object || !row->function)
			continue;
		was_unknown = sp_resym_is_unresolved(row->function, row->object) ||
			      !strcmp(row->function, "[unknown]");
		err = resym_frame(r, &row->function, row->object, row->info, false, &renamed,
				  &inl);
		if (err)
			return err;
		if (renamed && was_unknown)
			v->unsymbolized -= row->samples < v->unsymbolized ? row->samples :
									    v->unsymbolized;
		any |= renamed;
	}
	return any ? profile_remerge(r) : 0;
}

int sp_resym_run(struct sp_run *run, const struct sp_resym_opts *opts,
		 struct sp_resym_stats *ret_stats)
{
	struct usyms_opts uo = { .debug_dir = opts ? opts->debug_dir : NULL,
				 .lines = opts && opts->lines,
				 .debuginfod = opts && opts->debuginfod };
	struct resym r = { .run = run, .lines = uo.lines, .st = ret_stats };
	size_t i;
	int err = 0;

	memset(ret_stats, 0, sizeof(*ret_stats));
	hashmap__init(&r.paths, hashmap_str_hash, hashmap_str_equal, NULL);
	r.u = usyms__new(&uo);
	if (!r.u)
		return -ENOMEM;
	for (i = 0; !err && run->sched.present && i < run->sched.nrows; i++)
		err = resym_stacks(&r, &run->sched.rows[i].stacks, false);
	for (i = 0; !err && run->locks.present && i < run->locks.nrows; i++)
		err = resym_stacks(&r, &run->locks.rows[i].stacks, false);
	if (!err && run->profile.present)
		err = resym_profile(&r);
	hashmap__clear(&r.paths);
	usyms__free(r.u);
	return err;
}
