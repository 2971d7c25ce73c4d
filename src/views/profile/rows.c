// SPDX-License-Identifier: BSD-2-Clause
/*
 * The profile view's rows from its map records (profile_rows.h): each sample key's frames
 * symbolized (kallsyms; build-id + offset or raw IP through usyms) into rows by
 * (function, object), their comms, and with -g the stacks behind them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/ksyms.h"
#include "symbols/kstack.h"
#include "views/profile/rows.h"
#include "rows/rows.h"
#include "rows/uframes.h"
#include "base/util.h"

static const char unknown[] = "[unknown]";

/* ---- after the run: symbolize the keys into the model ---- */

struct builder {
	struct uframes uf;
	const struct ksyms *ks;
	struct sp_run *run;
	struct sp_profile_view *v;
	bool callchains;
	struct row_index rows;	   /* by (function, object) */
	struct stack_index stacks; /* by comm, pid, frames, objects and identities */
	struct sp_records_index kstacks, ustacks;
	struct sp_stack_row fr; /* the frames of the key being added: kernel, then user */
	size_t nkernel;
	bool leaf_named;
	uint64_t leaf_func; /* the leaf's function start: its row's identity */
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

/* Appends a kernel frame (its name, "[kernel]" or "[module]", its address) to b->fr. */
static int name_kernel(struct builder *b, uint64_t ip, bool leaf)
{
	struct sp_stack_row *fr = &b->fr;
	const struct ksym *s = ksyms__map_addr(b->ks, leaf ? ip : ip - 1, NULL);
	char modbuf[72];
	size_t i = fr->nframes;

	if (uframes_row_grow(fr, 1))
		return -ENOMEM;
	if (leaf && !s)
		b->unk->kernel++;
	if (leaf) {
		b->leaf_named = s != NULL;
		b->leaf_func = s ? s->addr : ip;
	}
	fr->frames[i] = strdup(s ? s->name : unknown);
	fr->objects[i] = strdup(kstack_sym_object(s, modbuf, sizeof(modbuf)));
	/* a leaf (the sampled PC) by its function, so that its samples merge (uframes.h) */
	fr->info[i] = (struct sp_frame_info){ .addr = leaf && s ? s->addr : ip };
	fr->nframes++;
	b->nkernel++;
	return fr->frames[i] && fr->objects[i] ? 0 : -ENOMEM;
}

static void count_unnamed_leaf(struct builder *b, enum uframe_how how)
{
	switch (how) {
	case UFRAME_NAMED:
		break;
	case UFRAME_NOSYM:
		b->unk->nosym++;
		break;
	case UFRAME_BUILDID:
		b->unk->buildid++;
		break;
	case UFRAME_IMAGE:
		b->unk->image++;
		break;
	case UFRAME_NOMAP:
		b->unk->nomap++;
		break;
	case UFRAME_EMPTY:
		b->unk->empty++;
		break;
	}
}

static struct sp_profile_row *get_row(struct builder *b, size_t leaf)
{
	const char *key[2] = { b->fr.frames[leaf], b->fr.objects[leaf] };
	struct sp_profile_row *r;
	long pos = row_index_find(&b->rows, key);

	if (pos >= 0)
		return &b->v->rows[pos];
	r = sp_profile_add_row(b->v);
	if (!r)
		return NULL;
	r->function = strdup(key[0]);
	r->object = strdup(key[1]);
	if (r->function && r->object && !sp_frame_info_dup(&b->fr.info[leaf], 1, &r->info) &&
	    !row_index_add(&b->rows, b->v->nrows - 1)) {
		/* the function, not the address of the first sample that named the row */
		r->info->addr = b->leaf_func;
		free(r->info->file);
		r->info->file = NULL;
		r->info->line = 0;
		r->info->inlined = false;
		return r;
	}
	/* the model holds only complete rows */
	free(r->function);
	free(r->object);
	sp_frame_info_free(r->info, 1);
	memset(r, 0, sizeof(*r));
	b->v->nrows--;
	return NULL;
}

static int add_stack(struct builder *b, size_t row, const char *comm, int pid, uint64_t count)
{
	struct sp_stack_list *l = &b->v->rows[row].stacks;
	struct sp_stack_row *s;
	long pos;
	int err;

	b->fr.comm = (char *)comm;
	b->fr.pid = pid;
	pos = stack_index_find(&b->stacks, row, &b->fr);
	b->fr.comm = NULL;
	if (pos >= 0) {
		l->v[pos].count += count;
		return 0;
	}
	s = sp_stack_list_add(l);
	if (!s)
		return -ENOMEM;
	b->fr.comm = (char *)comm;
	err = sp_stack_row_copy(s, &b->fr);
	b->fr.comm = NULL;
	s->count = count;
	if (!err && !stack_index_add(&b->stacks, row, l->n - 1))
		return 0;
	/* the model holds only complete stacks */
	sp_stack_row_free(s);
	memset(s, 0, sizeof(*s));
	l->n--;
	return -ENOMEM;
}

/* Empties b->fr for the next key (its arrays stay, sized for the kernel frames). */
static void frames_reset(struct builder *b)
{
	struct sp_stack_row *fr = &b->fr;

	for (size_t i = 0; i < fr->nframes; i++) {
		free(fr->frames[i]);
		free(fr->objects[i]);
		free(fr->info[i].build_id);
		free(fr->info[i].system_name);
		free(fr->info[i].file);
		fr->frames[i] = fr->objects[i] = NULL;
		fr->info[i] = (struct sp_frame_info){};
	}
	fr->nframes = 0;
	b->nkernel = 0;
}

/*
 * The frames of one key into b->fr: kernel (if the sample was in the kernel), then user. A
 * stack id that the dump did not find (BPF gives 0 for the stacks it did not keep) sets
 * *ret_missing.
 */
static int key_frames(struct builder *b, const struct sp_prof_key *key, bool *ret_has_user,
		      bool *ret_missing)
{
	const struct sp_prof_kstack *ks = NULL;
	const struct sp_prof_ustack *us = NULL;
	struct uframe_first first = { .how = UFRAME_EMPTY };
	bool user_leaf = !key->kip;
	int err = 0;

	frames_reset(b);
	b->leaf_named = false;
	if (key->kstack)
		ks = sp_records_find_u64(&b->kstacks, key->kstack);
	if (key->ustack)
		us = sp_records_find_u64(&b->ustacks, key->ustack);
	*ret_missing = (key->kstack && !ks) || (key->ustack && !us);
	for (uint32_t i = 0; !err && ks && i < ks->nr && i < SP_PROF_KDEPTH; i++)
		err = name_kernel(b, ks->ip[i], i == 0);
	if (!err && !ks && key->kip)
		err = name_kernel(b, key->kip, true); /* no -g, or the stack was not kept */
	*ret_has_user = false;
	if (!err && us && us->nr) {
		*ret_has_user = true;
		err = uframes_append_how(&b->uf, &b->fr, us->frames,
					 us->nr < SP_PROF_UDEPTH ? us->nr : SP_PROF_UDEPTH,
					 (int)key->tgid, key->exec_id, user_leaf, &first);
	} else if (!err && key->uleaf.status != SP_UFRAME_EMPTY) {
		*ret_has_user = true;
		err = uframes_append_how(&b->uf, &b->fr, &key->uleaf, 1, (int)key->tgid,
					 key->exec_id, user_leaf, &first);
	}
	if (user_leaf && *ret_has_user) {
		count_unnamed_leaf(b, first.how);
		b->leaf_named = first.how == UFRAME_NAMED;
		b->leaf_func = first.func;
	}
	return err;
}

static int add_key(struct builder *b, const struct sp_prof_key *key, uint64_t count)
{
	struct sp_stack_row *fr = &b->fr;
	struct sp_profile_row *r;
	char comm[TASK_COMM_LEN + 1];
	bool has_user, missing;
	size_t row;
	int err;

	err = key_frames(b, key, &has_user, &missing);
	if (err)
		return err;
	if (missing && b->callchains)
		b->v->missing_stacks += count;
	if (key->flags & SP_PROF_F_RAW_IP)
		b->unk->raw_keys++;
	kstack_comm(key->comm, comm);
	if (!fr->nframes) { /* neither stack could be read: counted all the same */
		if (uframes_row_grow(fr, 1))
			return -ENOMEM;
		fr->frames[0] = strdup(unknown);
		fr->objects[0] = strdup(unknown);
		fr->nframes = 1;
		if (!fr->frames[0] || !fr->objects[0])
			return -ENOMEM;
		b->unk->empty++;
	}
	r = get_row(b, 0);
	if (!r)
		return -ENOMEM;
	row = (size_t)(r - b->v->rows);
	r->samples += count;
	if (!b->leaf_named)
		b->v->unsymbolized += count;
	if (sp_comm_list_add(&r->comms, comm, count, 0, 0))
		return -ENOMEM;
	if (b->callchains && has_user && !uframes_complete(fr, b->nkernel))
		b->v->user_truncated += count;
	return b->callchains ? add_stack(b, row, comm, (int)key->pid, count) : 0;
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
	*b = (struct builder){ .uf = { .usyms = usyms, .run = run }, .ks = ks, .run = run,
			       .v = &run->profile, .callchains = callchains, .unk = ret_unnamed };
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
	ret_unnamed->astray = b->uf.astray;
	row_index_free(&b->rows);
	stack_index_free(&b->stacks);
	sp_records_index_free(&b->kstacks);
	sp_records_index_free(&b->ustacks);
	sp_stack_row_free(&b->fr);
	free(b);
	if (!err)
		sp_profile_sort(&run->profile);
	return err;
}
