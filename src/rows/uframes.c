// SPDX-License-Identifier: BSD-2-Clause
/* User stacks from BPF into model frames (uframes.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/elfsyms.h"
#include "symbols/kstack.h"
#include "rows/uframes.h"
#include "symbols/usyms.h"
#include "base/util.h"

static const char unknown[] = "[unknown]";

/* The build-id of a BPF frame: 20 bytes, or 16 (md5, uuid) when the kernel's padding is zero. */
static size_t bpf_build_id_len(const uint8_t id[SP_PROF_BUILD_ID_SIZE])
{
	return id[16] || id[17] || id[18] || id[19] ? SP_PROF_BUILD_ID_SIZE : 16;
}

static void note_object(struct uframes *uf, const char *path, const char *hex)
{
	if (!uf->run || path[0] != '/' || !hex[0] || sp_run_build_id(uf->run, path))
		return;
	/* the list is a courtesy for pprof's mappings: ENOMEM here loses no frame */
	sp_object_list_add(&uf->run->objects, path, hex);
}

/* "<basename(object)>+0x<hex>": a frame in a known object that no symbol covers. */
static void name_by_offset(struct uframe *f, uint64_t where)
{
	const char *base = strrchr(f->object, '/');

	base = base ? base + 1 : f->object;
	snprintf(f->buf, sizeof(f->buf), "%s+0x%" PRIx64, base, where);
	f->name = f->buf;
}

void uframes_name(struct uframes *uf, const struct sp_uframe *u, int tgid, uint32_t exec_id,
		  bool leaf, struct uframe *ret)
{
	uint64_t addr = leaf || !u->offset ? u->offset : u->offset - 1;
	struct usym sym = {};
	int err = -ENOENT;

	memset(ret, 0, offsetof(struct uframe, buf));
	ret->buf[0] = 0;
	ret->name = unknown;
	ret->object = unknown;
	switch (u->status) {
	case SP_UFRAME_VALID:
		ret->addr = addr;
		elf_build_id_hex(u->build_id, bpf_build_id_len(u->build_id), ret->build_id,
				 sizeof(ret->build_id));
		err = usyms__resolve_build_id(uf->usyms, u->build_id, SP_PROF_BUILD_ID_SIZE, addr,
					      &sym);
		ret->how = err ? UFRAME_BUILDID : UFRAME_NOSYM;
		break;
	case SP_UFRAME_IP:
		err = usyms__resolve_ip(uf->usyms, tgid, exec_id, addr, &sym);
		ret->how = err == -ESRCH ? UFRAME_IMAGE : err ? UFRAME_NOMAP : UFRAME_NOSYM;
		if (!err) {
			ret->addr = sym.offset;
			if (sym.build_id && sym.build_id_len)
				elf_build_id_hex(sym.build_id, sym.build_id_len, ret->build_id,
						 sizeof(ret->build_id));
		}
		break;
	default:
		ret->how = UFRAME_EMPTY;
		break;
	}
	if (!err && !sym.object) /* defensive: a resolver that names no object named nothing */
		err = -ENOENT;
	if (err && ret->how == UFRAME_NOSYM)
		ret->how = UFRAME_NOMAP;
	uf->how[ret->how]++;
	if (err)
		return;
	ret->object = sym.object;
	note_object(uf, sym.object, ret->build_id);
	if (!sym.name) {
		/* the function's start (when .eh_frame tells it) names its addresses alike */
		ret->func = sym.func_start ? sym.func_start : ret->addr;
		if (ret->func)
			name_by_offset(ret, ret->func);
		return;
	}
	ret->func = ret->addr >= sym.sym_off ? ret->addr - sym.sym_off : ret->addr;
	uf->how[UFRAME_NOSYM]--;
	uf->how[UFRAME_NAMED]++;
	ret->how = UFRAME_NAMED;
	ret->name = sym.name;
	ret->system_name = sym.system_name;
	ret->file = sym.file;
	ret->line = sym.line;
	ret->inlined = sym.inlined;
	ret->ninlined = sym.ninlined;
}

int uframes_row_grow(struct sp_stack_row *row, size_t n)
{
	size_t have = row->nframes, want = have + n + 1;
	char **frames, **objects;
	struct sp_frame_info *info;

	frames = realloc(row->frames, want * sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	row->frames = frames;
	objects = realloc(row->objects, want * sizeof(*objects));
	if (!objects)
		return -ENOMEM;
	if (!row->objects) { /* a kernel stack: every frame's object is "[kernel]" */
		for (size_t i = 0; i < have; i++) {
			objects[i] = strdup("[kernel]");
			if (!objects[i]) {
				memset(objects + i, 0, (want - i) * sizeof(*objects));
				row->objects = objects;
				return -ENOMEM;
			}
		}
	}
	row->objects = objects;
	memset(objects + have, 0, (want - have) * sizeof(*objects));
	memset(frames + have, 0, (want - have) * sizeof(*frames));
	info = realloc(row->info, want * sizeof(*info));
	if (!info)
		return -ENOMEM;
	if (!row->info)
		memset(info, 0, have * sizeof(*info));
	memset(info + have, 0, (want - have) * sizeof(*info));
	row->info = info;
	return 0;
}

/* Appends one frame to row (room made by row_grow). */
static int row_push(struct sp_stack_row *row, const char *name, const char *object,
		    const char *system_name, const char *file, unsigned int line, bool inlined,
		    const struct uframe *f, uint64_t addr)
{
	size_t i = row->nframes;
	struct sp_frame_info *in = &row->info[i];

	row->frames[i] = strdup(name ? name : unknown);
	row->objects[i] = strdup(object);
	row->nframes++; /* freeable as it is, whatever fails next */
	if (!row->frames[i] || !row->objects[i])
		return -ENOMEM;
	in->addr = addr;
	in->line = line;
	in->inlined = inlined;
	if ((f->build_id[0] && !(in->build_id = strdup(f->build_id))) ||
	    (system_name && !(in->system_name = strdup(system_name))) ||
	    (file && !(in->file = strdup(file))))
		return -ENOMEM;
	return 0;
}

int uframes_append_how(struct uframes *uf, struct sp_stack_row *row,
		       const struct sp_uframe *frames, uint32_t nr, int tgid, uint32_t exec_id,
		       bool leaf_first, struct uframe_first *ret_first)
{
	struct uframe f;
	uint64_t addr;
	int err;

	for (uint32_t i = 0; i < nr; i++) {
		/* the walk went astray (uframes.h): this frame and the ones after are garbage */
		if (frames[i].status == SP_UFRAME_VALID && frames[i].offset >= UFRAME_MAX_OFFSET) {
			uf->astray++;
			break;
		}
		uframes_name(uf, &frames[i], tgid, exec_id, leaf_first && i == 0, &f);
		if (i == 0 && ret_first)
			*ret_first = (struct uframe_first){ .how = f.how, .func = f.func };
		/*
		 * A leaf (a sampled PC, which differs from sample to sample) is identified by its
		 * function's start, so that the samples of a function merge into one stack.
		 */
		addr = leaf_first && i == 0 ? f.func : f.addr;
		err = uframes_row_grow(row, f.ninlined + 1);
		for (size_t j = 0; !err && j < f.ninlined; j++) {
			const struct usym_inline *in = &f.inlined[j];

			err = row_push(row, in->name, f.object, in->system_name, in->file, in->line,
				       true, &f, addr);
		}
		if (!err)
			err = row_push(row, f.name, f.object, f.system_name, f.file, f.line, false,
				       &f, addr);
		if (err)
			return err;
	}
	return 0;
}

int uframes_append(struct uframes *uf, struct sp_stack_row *row, const struct sp_uframe *frames,
		   uint32_t nr, int tgid, uint32_t exec_id, bool leaf_first)
{
	return uframes_append_how(uf, row, frames, nr, tgid, exec_id, leaf_first, NULL);
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

bool uframes_complete(const struct sp_stack_row *row, size_t first)
{
	size_t n = row->nframes, real = 0;

	if (n <= first)
		return true;
	for (size_t i = first; i < n; i++)
		real += !(row->info && row->info[i].inlined);
	if (real >= SP_PROF_UDEPTH) /* as deep as kept: cut, whatever it reached */
		return false;
	for (size_t i = first; i < n; i++)
		if (is_user_root(row->frames[i]) ||
		    (row->info && is_user_root(row->info[i].system_name)))
			return true;
	return n - first >= 2 && row->objects && is_libc(row->objects[n - 1]) &&
	       strcmp(row->objects[n - 2], row->objects[n - 1]);
}

int uframes_kernel_info(struct sp_stack_row *row, const __u64 *ips, uint32_t nr)
{
	size_t n = row->nframes;

	if (!row->info) {
		row->info = calloc(n + 1, sizeof(*row->info));
		if (!row->info)
			return -ENOMEM;
	}
	/* kstack_fill took the last n of the nr addresses */
	for (size_t i = 0; i < n && i < nr; i++)
		row->info[i].addr = ips[nr - n + i];
	return 0;
}

int uframes_pairs_init(struct uframes_pairs *p, const struct sp_records *pairs,
		       const struct sp_records *ustacks, bool on)
{
	memset(p, 0, sizeof(*p));
	p->on = on;
	if (!sp_records_are(pairs, sizeof(__u64), sizeof(struct sp_stack_pair)) ||
	    !sp_records_are(ustacks, sizeof(__u64), sizeof(struct sp_prof_ustack)))
		return -EINVAL;
	return sp_records_index_u64(&p->pairs, pairs) ?:
	       sp_records_index_u64(&p->ustacks, ustacks);
}

void uframes_pairs_free(struct uframes_pairs *p)
{
	sp_records_index_free(&p->pairs);
	sp_records_index_free(&p->ustacks);
}

uint64_t uframes_pair_kstack(const struct uframes_pairs *p, uint64_t id,
			     const struct sp_stack_pair **ret_pair)
{
	const struct sp_stack_pair *pair = p->on && id ? sp_records_find_u64(&p->pairs, id) : NULL;

	*ret_pair = pair;
	return pair ? pair->kstack : id;
}

int uframes_add_stack(struct uframes *uf, const struct uframes_pairs *p, struct stack_index *x,
		      size_t row, const struct sp_stack_row *proto, const struct kstack_src *src,
		      const struct sp_stack_pair *pair)
{
	struct sp_stack_row *s;
	const struct sp_prof_ustack *us = NULL;
	uint32_t nr = src->st->nr < SP_MAX_STACK_DEPTH ? src->st->nr : SP_MAX_STACK_DEPTH;
	size_t first;
	int err;

	err = stack_index_push_kstack(x, row, proto, src, &s);
	if (!err) /* with or without a pair: the frames' identities are compared when merging */
		err = uframes_kernel_info(s, src->st->ip, nr);
	if (err)
		return err;
	if (pair && pair->ustack)
		us = sp_records_find_u64(&p->ustacks, pair->ustack);
	/* a user task's stack whose user part BPF could not keep, or the dump lost */
	if (pair && pair->tgid && (!us || (pair->flags & SP_PAIR_F_USTACK_LOST)))
		uf->stacks_missing += proto->count;
	if (us && us->nr) {
		first = s->nframes;
		err = uframes_append(uf, s, us->frames,
				     us->nr < SP_PROF_UDEPTH ? us->nr : SP_PROF_UDEPTH,
				     (int)pair->tgid, pair->exec_id, false);
		if (err)
			return err;
		uf->stacks += proto->count;
		if (!uframes_complete(s, first))
			uf->stacks_truncated += proto->count;
	}
	return stack_index_merge_last(x, row);
}
