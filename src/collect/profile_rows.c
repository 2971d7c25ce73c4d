// SPDX-License-Identifier: BSD-2-Clause
/*
 * The profile view's rows from its map records (profile_rows.h): each sample key's frames
 * symbolized (kallsyms; build-id + offset or raw IP through usyms) into rows by
 * (function, object), their comms, and with -g the stacks behind them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "elfsyms.h"
#include "ksyms.h"
#include "kstack.h"
#include "profile_rows.h"
#include "rows.h"
#include "usyms.h"
#include "util.h"

static const char unknown[] = "[unknown]";

/* ---- after the run: symbolize the keys into the model ---- */

struct frame {
	const char *name;   /* NULL: not symbolized */
	const char *object; /* never NULL */
};

/* Frames of one sample, kernel then user, leaf first. */
struct frames {
	struct frame f[SP_PROF_KDEPTH + SP_PROF_UDEPTH];
	size_t n, nkernel;
	char modbuf[SP_PROF_KDEPTH][72]; /* "[module]" names */
};

struct builder {
	struct usyms *usyms;
	const struct ksyms *ks;
	struct sp_run *run;
	struct sp_profile_view *v;
	bool callchains;
	struct row_index rows;	   /* by (function, object) */
	struct stack_index stacks; /* by comm, pid, frames and objects */
	struct sp_records_index kstacks, ustacks;
	struct frames fr; /* of the key being added */
	struct profile_unnamed *unk;
};

static void row_key(void *view, size_t pos, const char *ret[ROW_KEY_MAX])
{
	const struct sp_profile_row *r = &((struct sp_profile_view *)view)->rows[pos];

	ret[0] = r->function;
	ret[1] = r->object;
}

static struct sp_stack_list *row_stacks(void *view, size_t i)
{
	return &((struct sp_profile_view *)view)->rows[i].stacks;
}

static void name_kernel(struct builder *b, struct frames *fr, uint64_t ip, bool leaf)
{
	struct frame *f = &fr->f[fr->n];
	const struct ksym *s = ksyms__map_addr(b->ks, leaf ? ip : ip - 1, NULL);

	f->name = s ? s->name : NULL;
	f->object = kstack_sym_object(s, fr->modbuf[fr->nkernel], sizeof(fr->modbuf[0]));
	if (leaf && !s)
		b->unk->kernel++;
	fr->n++;
	fr->nkernel++;
}

static void note_object(struct builder *b, const struct sp_uframe *u, const char *path)
{
	char hex[2 * SP_PROF_BUILD_ID_SIZE + 1];
	size_t len = SP_PROF_BUILD_ID_SIZE;

	if (path[0] != '/' || sp_run_build_id(b->run, path))
		return;
	/* as usyms resolves it: 20 bytes, or 16 (md5, uuid) when the kernel's padding is zero */
	if (!u->build_id[16] && !u->build_id[17] && !u->build_id[18] && !u->build_id[19])
		len = 16;
	elf_build_id_hex(u->build_id, len, hex, sizeof(hex));
	sp_object_list_add(&b->run->objects, path, hex);
}

/* Names a user frame; a non-leaf frame holds a return address, so its call is at addr - 1. */
static void name_user(struct builder *b, struct frames *fr, const struct sp_uframe *u,
		      const struct sp_prof_key *key, bool leaf)
{
	struct frame *f = &fr->f[fr->n++];
	uint64_t addr = leaf || !u->offset ? u->offset : u->offset - 1;
	struct usym sym;
	int err;

	f->name = NULL;
	f->object = unknown;
	switch (u->status) {
	case SP_UFRAME_VALID:
		err = usyms__resolve_build_id(b->usyms, u->build_id, SP_PROF_BUILD_ID_SIZE, addr,
					      &sym);
		if (!err) {
			f->name = sym.name;
			f->object = sym.object;
			note_object(b, u, sym.object);
		}
		if (leaf && err)
			b->unk->buildid++;
		else if (leaf && !sym.name)
			b->unk->nosym++;
		break;
	case SP_UFRAME_IP:
		err = usyms__resolve_ip(b->usyms, (int)key->tgid, key->exec_id, addr, &sym);
		if (!err) {
			f->name = sym.name;
			f->object = sym.object;
		}
		if (leaf && err == -ESRCH)
			b->unk->image++;
		else if (leaf && err)
			b->unk->nomap++;
		else if (leaf && !sym.name)
			b->unk->nosym++;
		break;
	default:
		if (leaf)
			b->unk->empty++;
		break;
	}
}

/* Processes start and threads begin in these. */
static bool is_user_root(const char *name)
{
	static const char *const roots[] = {
		"main", "_start", "__libc_start_main", "__libc_start_main_impl",
		"__libc_start_call_main", "start_thread", "clone", "clone3", "__clone", "__clone3",
		"__clone_internal", "_dl_start", "_dl_start_user", "_dl_start_final",
	};

	for (size_t i = 0; name && i < ARRAY_SIZE(roots); i++)
		if (!strcmp(name, roots[i]))
			return true;
	return false;
}

static bool is_libc(const char *object)
{
	const char *base = strrchr(object, '/');

	base = base ? base + 1 : object;
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5);
}

/*
 * Whether a user stack (frames[first..n)) looks complete: it reaches main() or a process or
 * thread start function, or it ends with a call from the C library (whose local start
 * functions have no exported name) into another object. A heuristic: frame-pointer walks give
 * no reason for stopping, and code without frame pointers ends them early.
 */
static bool user_stack_complete(const struct frames *fr, size_t first)
{
	if (fr->n - first >= SP_PROF_UDEPTH)
		return false;
	for (size_t i = first; i < fr->n; i++)
		if (is_user_root(fr->f[i].name))
			return true;
	return fr->n - first >= 2 && is_libc(fr->f[fr->n - 1].object) &&
	       strcmp(fr->f[fr->n - 2].object, fr->f[fr->n - 1].object);
}

static struct sp_profile_row *get_row(struct builder *b, const char *function, const char *object)
{
	const char *key[2] = { function, object };
	struct sp_profile_row *r;
	long pos = row_index_find(&b->rows, key);

	if (pos >= 0)
		return &b->v->rows[pos];
	r = sp_profile_add_row(b->v);
	if (!r)
		return NULL;
	r->function = strdup(function);
	r->object = strdup(object);
	if (r->function && r->object && !row_index_add(&b->rows, b->v->nrows - 1))
		return r;
	/* the model holds only complete rows */
	free(r->function);
	free(r->object);
	memset(r, 0, sizeof(*r));
	b->v->nrows--;
	return NULL;
}

static int add_stack(struct builder *b, size_t row, const struct frames *fr, const char *comm,
		     int pid, uint64_t count)
{
	struct sp_stack_list *l = &b->v->rows[row].stacks;
	const char *names[ARRAY_SIZE(fr->f)], *objects[ARRAY_SIZE(fr->f)];
	struct sp_stack_row probe = { .frames = (char **)names, .objects = (char **)objects,
				      .nframes = fr->n, .comm = (char *)comm, .pid = pid };
	struct sp_stack_row *s;
	long pos;

	for (size_t i = 0; i < fr->n; i++) {
		names[i] = fr->f[i].name ? fr->f[i].name : unknown;
		objects[i] = fr->f[i].object;
	}
	pos = stack_index_find(&b->stacks, row, &probe);
	if (pos >= 0) {
		l->v[pos].count += count;
		return 0;
	}
	s = sp_stack_list_add(l);
	if (!s)
		return -ENOMEM;
	s->count = count;
	s->pid = pid;
	s->comm = strdup(comm);
	s->frames = calloc(fr->n + 1, sizeof(char *));
	s->objects = calloc(fr->n + 1, sizeof(char *));
	if (!s->comm || !s->frames || !s->objects)
		goto fail;
	for (size_t i = 0; i < fr->n; i++) {
		s->frames[i] = strdup(names[i]);
		s->objects[i] = strdup(objects[i]);
		s->nframes++;
		if (!s->frames[i] || !s->objects[i])
			goto fail;
	}
	if (!stack_index_add(&b->stacks, row, l->n - 1))
		return 0;
fail: /* the model holds only complete stacks */
	sp_stack_row_free(s);
	memset(s, 0, sizeof(*s));
	l->n--;
	return -ENOMEM;
}

/*
 * The frames of one key: kernel (if the sample was in the kernel), then user. A stack id that
 * the dump did not find (BPF gives 0 for the stacks it did not keep) sets *ret_missing.
 */
static void key_frames(struct builder *b, const struct sp_prof_key *key, struct frames *fr,
		       bool *ret_has_user, bool *ret_missing)
{
	const struct sp_prof_kstack *ks = NULL;
	const struct sp_prof_ustack *us = NULL;
	bool have_u = false;

	fr->n = fr->nkernel = 0;
	if (key->kstack)
		ks = sp_records_find_u64(&b->kstacks, key->kstack);
	if (key->ustack)
		us = sp_records_find_u64(&b->ustacks, key->ustack);
	*ret_missing = (key->kstack && !ks) || (key->ustack && !us);
	for (uint32_t i = 0; ks && i < ks->nr && i < SP_PROF_KDEPTH; i++)
		name_kernel(b, fr, ks->ip[i], i == 0);
	if (!ks && key->kip)
		name_kernel(b, fr, key->kip, true); /* no -g, or the stack was not kept */
	if (us) {
		have_u = us->nr > 0;
		for (uint32_t i = 0; i < us->nr && i < SP_PROF_UDEPTH; i++)
			name_user(b, fr, &us->frames[i], key, i == 0 && !key->kip);
	}
	if (!have_u && key->uleaf.status != SP_UFRAME_EMPTY) {
		have_u = true;
		name_user(b, fr, &key->uleaf, key, !key->kip);
	}
	*ret_has_user = have_u;
}

static int add_key(struct builder *b, const struct sp_prof_key *key, uint64_t count)
{
	struct frames *fr = &b->fr;
	struct sp_profile_row *r;
	const struct frame *leaf;
	char comm[TASK_COMM_LEN + 1];
	bool has_user, missing;
	size_t row;

	key_frames(b, key, fr, &has_user, &missing);
	if (missing && b->callchains)
		b->v->missing_stacks += count;
	if (key->flags & SP_PROF_F_RAW_IP)
		b->unk->raw_keys++;
	kstack_comm(key->comm, comm);
	if (!fr->n) { /* neither stack could be read: counted all the same */
		fr->f[0] = (struct frame){ .name = NULL, .object = unknown };
		fr->n = 1;
		b->unk->empty++;
	}
	leaf = &fr->f[0];
	r = get_row(b, leaf->name ? leaf->name : unknown, leaf->object);
	if (!r)
		return -ENOMEM;
	row = (size_t)(r - b->v->rows);
	r->samples += count;
	if (!leaf->name)
		b->v->unsymbolized += count;
	if (sp_comm_list_add(&r->comms, comm, count, 0, 0))
		return -ENOMEM;
	if (b->callchains && has_user && !user_stack_complete(fr, fr->nkernel))
		b->v->user_truncated += count;
	return b->callchains ? add_stack(b, row, fr, comm, (int)key->pid, count) : 0;
}

void profile_maps_free(struct profile_maps *m)
{
	sp_records_free(&m->samples);
	sp_records_free(&m->kstacks);
	sp_records_free(&m->ustacks);
}

int profile_rows_build(struct sp_run *run, const struct profile_maps *m,
		       const struct ksyms *ks, struct usyms *usyms, bool callchains,
		       struct profile_unnamed *ret_unnamed)
{
	const struct sp_records *rec = &m->samples;
	struct builder *b;
	int err;

	memset(ret_unnamed, 0, sizeof(*ret_unnamed));
	if (!sp_records_are(rec, sizeof(struct sp_prof_key), sizeof(__u64)) ||
	    !sp_records_are(&m->kstacks, sizeof(__u64), sizeof(struct sp_prof_kstack)) ||
	    !sp_records_are(&m->ustacks, sizeof(__u64), sizeof(struct sp_prof_ustack)))
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	*b = (struct builder){ .usyms = usyms, .ks = ks, .run = run, .v = &run->profile,
			       .callchains = callchains, .unk = ret_unnamed };
	b->v->lost += rec->failed;
	if (callchains)
		b->v->missing_stacks += m->kstacks.failed + m->ustacks.failed;
	row_index_init(&b->rows, row_key, b->v, 2);
	stack_index_init(&b->stacks, row_stacks, b->v, true);
	err = sp_records_index_u64(&b->kstacks, &m->kstacks) ?:
	      sp_records_index_u64(&b->ustacks, &m->ustacks);
	for (size_t i = 0; i < rec->n && !err; i++) {
		const __u64 *count = sp_records_value(rec, i);

		err = add_key(b, sp_records_key(rec, i), *count);
	}
	row_index_free(&b->rows);
	stack_index_free(&b->stacks);
	sp_records_index_free(&b->kstacks);
	sp_records_index_free(&b->ustacks);
	free(b);
	if (!err)
		sp_profile_sort(&run->profile);
	return err;
}
