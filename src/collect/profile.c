// SPDX-License-Identifier: BSD-2-Clause
/*
 * The profile view's collector: one perf cpu-clock event per online CPU runs prof_sample
 * (bpf/profile.bpf.c); while tracing, the processes that BPF announces (exec, first sample)
 * have their mapped files registered before they exit; after the run, the sample keys are
 * symbolized (kallsyms; build-id + offset through usyms) into rows by (function, object).
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collector.h"
#include "cpulist.h"
#include "elfsyms.h"
#include "ksyms.h"
#include "kstack.h"
#include "log.h"
#include "usyms.h"
#include "util.h"
#include "schedprof/schedprof.h"
#include "schedprof.skel.h"

_Static_assert(sizeof(struct sp_uframe) == sizeof(struct bpf_stack_build_id),
	       "struct sp_uframe must match the kernel's struct bpf_stack_build_id");
_Static_assert(SP_UFRAME_IP == BPF_STACK_BUILD_ID_IP && SP_UFRAME_VALID == BPF_STACK_BUILD_ID_VALID,
	       "frame status values");

#define CPU_ONLINE_PATH "/sys/devices/system/cpu/online"

static const char unknown[] = "[unknown]";

struct prof_state {
	struct schedprof_bpf *skel;
	struct usyms *usyms;
	struct ring_buffer *rb;
	struct bpf_link *exec_link;
	struct bpf_link **links; /* one per CPU; each owns its perf event fd */
	size_t nlinks;
	int *cpus;
	size_t ncpus;
	unsigned int hz;
	bool callchains;
	/* announcements handled, and the processes already gone when we looked */
	uint64_t events, gone;
};

/* ---- while tracing: register what the announced processes map ---- */

static int on_event(void *ctx, void *data, size_t size)
{
	struct prof_state *st = ctx;
	const struct sp_prof_event *ev = data;
	int err;

	if (size < sizeof(*ev))
		return 0;
	st->events++;
	err = usyms__add_pid(st->usyms, (int)ev->tgid, ev->exec_id);
	if (err == -ESRCH)
		st->gone++;
	/* only ENOMEM stops the drain: the next poll retries */
	return err == -ENOMEM ? err : 0;
}

static int prof_poll_fd(void *state)
{
	struct prof_state *st = state;

	return st->rb ? ring_buffer__epoll_fd(st->rb) : -1;
}

static int prof_poll(void *state, struct trace_ctx *ctx)
{
	struct prof_state *st = state;
	int n;

	(void)ctx;
	if (!st->rb)
		return 0;
	n = ring_buffer__consume(st->rb);
	return n < 0 ? n : 0;
}

/* ---- lifecycle ---- */

static void prof_destroy(void *state)
{
	struct prof_state *st = state;

	if (!st)
		return;
	for (size_t i = 0; i < st->nlinks; i++)
		bpf_link__destroy(st->links[i]);
	free(st->links);
	bpf_link__destroy(st->exec_link);
	ring_buffer__free(st->rb);
	usyms__free(st->usyms);
	free(st->cpus);
	free(st);
}

static int prof_configure(struct trace_ctx *ctx, void **ret_state)
{
	const struct trace_opts *o = ctx->opts;
	struct schedprof_bpf *skel = ctx->skel;
	struct prof_state *st;
	int err;

	if (ctx->unavailable)
		return -ENOTSUP;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->skel = skel;
	st->hz = o->hz;
	st->callchains = o->callchains;
	err = cpulist_read(CPU_ONLINE_PATH, &st->cpus, &st->ncpus);
	if (err) {
		elog("cannot read the online CPUs from %s: %s", CPU_ONLINE_PATH, strerror(-err));
		goto fail;
	}
	st->links = calloc(st->ncpus, sizeof(*st->links));
	st->usyms = usyms__new(NULL);
	if (!st->links || !st->usyms) {
		err = -ENOMEM;
		goto fail;
	}
	skel->rodata->prof_callchains = o->callchains;
	bpf_map__set_max_entries(skel->maps.prof_samples, o->max_samples);
	bpf_map__set_max_entries(skel->maps.prof_kstacks, o->callchains ? o->max_stacks : 1);
	bpf_map__set_max_entries(skel->maps.prof_ustacks, o->callchains ? o->max_stacks : 1);
	*ret_state = st;
	return 0;
fail:
	prof_destroy(st);
	return err;
}

/* Not selected: no program, and maps as small as the kernel allows (--no-profile costs nothing). */
static void prof_disable(struct schedprof_bpf *skel)
{
	long page = sysconf(_SC_PAGESIZE);

	bpf_program__set_autoload(skel->progs.prof_sample, false);
	bpf_program__set_autoload(skel->progs.prof_exec, false);
	bpf_map__set_max_entries(skel->maps.prof_samples, 1);
	bpf_map__set_max_entries(skel->maps.prof_kstacks, 1);
	bpf_map__set_max_entries(skel->maps.prof_ustacks, 1);
	bpf_map__set_max_entries(skel->maps.prof_seen, 1);
	if (page > 0)
		bpf_map__set_max_entries(skel->maps.prof_events, (__u32)page);
}

static int prof_setup(void *state, struct trace_ctx *ctx)
{
	struct prof_state *st = state;

	(void)ctx;
	st->rb = ring_buffer__new(bpf_map__fd(st->skel->maps.prof_events), on_event, st, NULL);
	return st->rb ? 0 : -errno;
}

static int open_cpu_clock(int cpu, unsigned int hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = hz,
		.freq = 1,
	};
	int fd;

	fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int prof_attach(void *state, struct trace_ctx *ctx)
{
	struct prof_state *st = state;
	int err;

	(void)ctx;
	st->exec_link = bpf_program__attach(st->skel->progs.prof_exec);
	if (!st->exec_link)
		return -errno;
	for (size_t i = 0; i < st->ncpus; i++) {
		struct bpf_link *link;
		int fd = open_cpu_clock(st->cpus[i], st->hz);

		if (fd < 0) {
			elog("cannot open a %u Hz cpu-clock event on CPU %d: %s%s", st->hz,
			     st->cpus[i], strerror(-fd),
			     fd == -EINVAL ? " (above kernel.perf_event_max_sample_rate?)" : "");
			return fd;
		}
		link = bpf_program__attach_perf_event(st->skel->progs.prof_sample, fd);
		if (!link) {
			err = -errno;
			close(fd); /* the link owns the fd only once it exists */
			return err;
		}
		st->links[st->nlinks++] = link;
	}
	dlog("profile: sampling %zu CPUs at %u Hz%s", st->ncpus, st->hz,
	     st->callchains ? " with call stacks" : "");
	return 0;
}

static void prof_detach(void *state)
{
	struct prof_state *st = state;

	for (size_t i = 0; i < st->nlinks; i++)
		bpf_link__destroy(st->links[i]);
	st->nlinks = 0;
	bpf_link__destroy(st->exec_link);
	st->exec_link = NULL;
}

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

struct row_ref {
	const char *function, *object; /* the row's own strings */
	size_t idx;
};

struct stack_ref {
	size_t row;
	int pid;
	const char *comm;
	const char *const *frames; /* the stack row's own arrays (they never move) */
	const char *const *objects;
	size_t nframes;
	size_t idx;
};

struct builder {
	struct prof_state *st;
	const struct ksyms *ks;
	struct sp_run *run;
	struct sp_profile_view *v;
	void *rows;   /* tsearch of struct row_ref */
	void *stacks; /* tsearch of struct stack_ref */
	struct sp_prof_ustack ubuf;
	struct sp_prof_kstack kbuf;
	struct frames fr; /* of the key being added */
	/* why leaves were not named, for -V */
	uint64_t unk_kernel, unk_buildid, unk_nosym, unk_image, unk_nomap, unk_empty;
	uint64_t raw_keys; /* keys with a raw-IP user frame */
};

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_row_ref(const void *pa, const void *pb)
{
	const struct row_ref *a = pa, *b = pb;
	int c = strcmp(a->function, b->function);

	return c ? c : strcmp(a->object, b->object);
}

static int cmp_stack_ref(const void *pa, const void *pb)
{
	const struct stack_ref *a = pa, *b = pb;
	int c;

	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	if (a->nframes != b->nframes)
		return a->nframes < b->nframes ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	c = strcmp(a->comm, b->comm);
	for (size_t i = 0; !c && i < a->nframes; i++) {
		c = strcmp(a->frames[i], b->frames[i]);
		if (!c)
			c = cmp_str(a->objects[i], b->objects[i]);
	}
	return c;
}

static void name_kernel(struct builder *b, struct frames *fr, uint64_t ip, bool leaf)
{
	struct frame *f = &fr->f[fr->n];
	const struct ksym *s = ksyms__map_addr(b->ks, leaf ? ip : ip - 1, NULL);

	f->name = s ? s->name : NULL;
	f->object = kstack_sym_object(s, fr->modbuf[fr->nkernel], sizeof(fr->modbuf[0]));
	if (leaf && !s)
		b->unk_kernel++;
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
		err = usyms__resolve_build_id(b->st->usyms, u->build_id, SP_PROF_BUILD_ID_SIZE, addr,
					      &sym);
		if (!err) {
			f->name = sym.name;
			f->object = sym.object;
			note_object(b, u, sym.object);
		}
		if (leaf && err)
			b->unk_buildid++;
		else if (leaf && !sym.name)
			b->unk_nosym++;
		break;
	case SP_UFRAME_IP:
		err = usyms__resolve_ip(b->st->usyms, (int)key->tgid, key->exec_id, addr, &sym);
		if (!err) {
			f->name = sym.name;
			f->object = sym.object;
		}
		if (leaf && err == -ESRCH)
			b->unk_image++;
		else if (leaf && err)
			b->unk_nomap++;
		else if (leaf && !sym.name)
			b->unk_nosym++;
		break;
	default:
		if (leaf)
			b->unk_empty++;
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
	struct row_ref key = { .function = function, .object = object }, *ref, **slot;
	struct sp_profile_row *r;

	slot = tfind(&key, &b->rows, cmp_row_ref);
	if (slot)
		return &b->v->rows[(*slot)->idx];
	ref = malloc(sizeof(*ref));
	if (!ref)
		return NULL;
	r = sp_profile_add_row(b->v);
	if (!r)
		goto fail;
	r->function = strdup(function);
	r->object = strdup(object);
	ref->function = r->function;
	ref->object = r->object;
	ref->idx = b->v->nrows - 1;
	if (r->function && r->object && tsearch(ref, &b->rows, cmp_row_ref))
		return r;
	/* the model holds only complete rows */
	free(r->function);
	free(r->object);
	memset(r, 0, sizeof(*r));
	b->v->nrows--;
fail:
	free(ref);
	return NULL;
}

static int add_stack(struct builder *b, size_t row, const struct frames *fr, const char *comm,
		     int pid, uint64_t count)
{
	struct sp_stack_list *l = &b->v->rows[row].stacks;
	const char *names[ARRAY_SIZE(fr->f)], *objects[ARRAY_SIZE(fr->f)];
	struct stack_ref key = { .row = row, .pid = pid, .comm = comm, .nframes = fr->n }, *ref,
			 **slot;
	struct sp_stack_row *s;

	for (size_t i = 0; i < fr->n; i++) {
		names[i] = fr->f[i].name ? fr->f[i].name : unknown;
		objects[i] = fr->f[i].object;
	}
	key.frames = names;
	key.objects = objects;
	slot = tfind(&key, &b->stacks, cmp_stack_ref);
	if (slot) {
		l->v[(*slot)->idx].count += count;
		return 0;
	}
	ref = malloc(sizeof(*ref));
	if (!ref)
		return -ENOMEM;
	s = sp_stack_list_add(l);
	if (!s)
		goto fail;
	s->count = count;
	s->pid = pid;
	s->comm = strdup(comm);
	s->frames = calloc(fr->n + 1, sizeof(char *));
	s->objects = calloc(fr->n + 1, sizeof(char *));
	if (!s->comm || !s->frames || !s->objects)
		goto fail_row;
	for (size_t i = 0; i < fr->n; i++) {
		s->frames[i] = strdup(names[i]);
		s->objects[i] = strdup(objects[i]);
		if (!s->frames[i] || !s->objects[i])
			goto fail_row;
		s->nframes++;
	}
	*ref = (struct stack_ref){ .row = row, .pid = pid, .comm = s->comm,
				   .frames = (const char *const *)s->frames,
				   .objects = (const char *const *)s->objects, .nframes = s->nframes,
				   .idx = l->n - 1 };
	if (tsearch(ref, &b->stacks, cmp_stack_ref))
		return 0;
fail_row: /* the model holds only complete stacks */
	for (size_t i = 0; i <= s->nframes && s->frames && s->objects; i++) {
		free(s->frames[i]);
		free(s->objects[i]);
	}
	free(s->frames);
	free(s->objects);
	free(s->comm);
	memset(s, 0, sizeof(*s));
	l->n--;
fail:
	free(ref);
	return -ENOMEM;
}

/* The frames of one key: kernel (if the sample was in the kernel), then user. */
static void key_frames(struct builder *b, const struct sp_prof_key *key, struct frames *fr,
		       bool *ret_has_user)
{
	struct schedprof_bpf *skel = b->st->skel;
	bool have_k = false, have_u = false;

	fr->n = fr->nkernel = 0;
	if (key->kstack &&
	    !bpf_map_lookup_elem(bpf_map__fd(skel->maps.prof_kstacks), &key->kstack, &b->kbuf)) {
		have_k = true;
		for (uint32_t i = 0; i < b->kbuf.nr && i < SP_PROF_KDEPTH; i++)
			name_kernel(b, fr, b->kbuf.ip[i], i == 0);
	}
	if (!have_k && key->kip)
		name_kernel(b, fr, key->kip, true); /* no -g, or the stack was not kept */
	if (key->ustack &&
	    !bpf_map_lookup_elem(bpf_map__fd(skel->maps.prof_ustacks), &key->ustack, &b->ubuf)) {
		have_u = b->ubuf.nr > 0;
		for (uint32_t i = 0; i < b->ubuf.nr && i < SP_PROF_UDEPTH; i++)
			name_user(b, fr, &b->ubuf.frames[i], key, i == 0 && !key->kip);
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
	bool has_user;
	size_t row;

	key_frames(b, key, fr, &has_user);
	if (key->flags & SP_PROF_F_RAW_IP)
		b->raw_keys++;
	kstack_comm(key->comm, comm);
	if (!fr->n) { /* neither stack could be read: counted all the same */
		fr->f[0] = (struct frame){ .name = NULL, .object = unknown };
		fr->n = 1;
		b->unk_empty++;
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
	if (b->st->callchains && has_user && !user_stack_complete(fr, fr->nkernel))
		b->v->user_truncated += count;
	return b->st->callchains ? add_stack(b, row, fr, comm, (int)key->pid, count) : 0;
}

static int read_samples(struct builder *b)
{
	int fd = bpf_map__fd(b->st->skel->maps.prof_samples);
	struct sp_prof_key key, *prev = NULL;
	uint64_t count;
	int err;

	while (bpf_map_get_next_key(fd, prev, &key) == 0) {
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &count))
			continue; /* cannot happen: the programs never delete */
		err = add_key(b, &key, count);
		if (err)
			return err;
	}
	return 0;
}

static int prof_read(void *state, struct trace_ctx *ctx, struct sp_run *run)
{
	struct prof_state *st = state;
	struct schedprof_bpf *skel = st->skel;
	const struct sp_prof_drops *d = &skel->bss->prof_drops;
	struct sp_profile_view *v = &run->profile;
	struct builder *b;
	int err;

	/* announcements still queued: their processes are likely gone, but not all */
	if (st->rb)
		ring_buffer__consume(st->rb);
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->st = st;
	b->ks = ctx->ksyms;
	b->run = run;
	b->v = v;
	v->present = true;
	v->hz = st->hz;
	v->cpus = (int)st->ncpus;
	v->callchains = st->callchains;
	v->total = skel->bss->prof_counts.total;
	v->idle = skel->bss->prof_counts.idle;
	v->target = skel->bss->prof_counts.target;
	v->other = skel->bss->prof_counts.other;
	v->lost = d->key_map_full;
	if (st->callchains)
		v->missing_stacks = d->kstack_map_full + d->ustack_map_full;
	err = read_samples(b);
	tdestroy(b->rows, free);
	tdestroy(b->stacks, free);
	if (!err)
		sp_profile_sort(v);
	dlog("profile: %" PRIu64 " samples, %" PRIu64 " target in %zu rows; %" PRIu64
	     " process announcements (%" PRIu64 " lost, %" PRIu64 " gone before we looked), %zu "
	     "images; unnamed leaves: kernel %" PRIu64 ", unknown build-id %" PRIu64
	     ", no symbol %" PRIu64 ", raw IP without image %" PRIu64 ", raw IP outside the image's "
	     "files %" PRIu64 ", no frame %" PRIu64
	     "; keys with raw-IP user frames %" PRIu64 "; stack reads failed: kernel %" PRIu64
	     ", user %" PRIu64,
	     v->total, v->target, v->nrows, st->events, (uint64_t)d->event_lost, st->gone,
	     usyms__nr_images(st->usyms), b->unk_kernel, b->unk_buildid, b->unk_nosym, b->unk_image,
	     b->unk_nomap, b->unk_empty, b->raw_keys, (uint64_t)d->kstack_fail,
	     (uint64_t)d->ustack_fail);
	if (d->event_lost)
		wlog("%llu process announcements were lost (ring buffer full): some user frames may "
		     "stay unnamed", (unsigned long long)d->event_lost);
	free(b);
	return err;
}

const struct collector profile_collector = {
	.name = "profile",
	.view = SP_VIEW_PROFILE,
	.configure = prof_configure,
	.disable = prof_disable,
	.setup = prof_setup,
	.attach = prof_attach,
	.detach = prof_detach,
	.read = prof_read,
	.destroy = prof_destroy,
	.poll_fd = prof_poll_fd,
	.poll = prof_poll,
};
