// SPDX-License-Identifier: BSD-2-Clause
/* Copied user stacks unwound by their objects' CFI (ucfi.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/hashmap.h"
#include "base/util.h"
#include "symbols/cfi.h"
#include "symbols/cfi_pack.h"
#include "symbols/elfsyms.h"
#include "symbols/procmaps.h"
#include "symbols/ucfi.h"
#include "symbols/usyms.h"

#define MAX_LOADS 8 /* PT_LOAD segments kept to turn file offsets into link-time addresses */

struct ucfi_load {
	uint64_t offset, vaddr, filesz;
};

struct ucfi_obj { /* dev and inode are the key (KEY_SIZE) */
	uint64_t dev, inode;
	struct cfi_table t;
	struct ucfi_load loads[MAX_LOADS];
	size_t nloads;
	bool cut;  /* the table was cut at max_rows */
	bool none; /* no rows: unreadable, or over the bound */
	/*
	 * opts->async: a table to compile is compiled on a thread of its own (busy, until
	 * joined), or waits for one (queued); the thread touches only t, cut and the fields
	 * below, the ucfi's state is the caller's thread's.
	 */
	bool busy, queued;
	atomic_bool done;
	pthread_t th;
	int cerr;	     /* cfi_compile()'s answer */
	uint64_t cns;	     /* its time */
	void *pack;	     /* the table packed for the store (NULL: none) */
	size_t pack_size;
	struct cfi_pack_key pk;
	char *path;	     /* the file compiled */
	int vfd;	     /* the vdso's memfd behind path, or -1 */
	char skey[2 * CFI_PACK_ID_MAX + 24];
};

#define KEY_SIZE offsetof(struct ucfi_obj, t)

/*
 * Files larger than this are compiled on a thread with opts->async (default): a smaller one
 * (libc: 2 MiB, 8 ms) costs less than the walk's round trip to the next poll.
 */
#define UCFI_ASYNC_FILE (4u << 20)

/* Tables compiled at once at most (opts->async) */
#define UCFI_THREADS 2

struct ucfi {
	struct hashmap objs; /* struct ucfi_obj * by (dev, inode) -> itself */
	size_t max_bytes, max_rows;
	const struct ucfi_store *store;
	struct ucfi_stats st;
	bool async;
	uint64_t async_file;  /* ... for files larger than this */
	unsigned int running; /* compiles on their threads */
	int err; /* the first -ENOMEM of a walk, or -EAGAIN: a table it needs is compiling */
};

struct ucfi *ucfi__new(const struct ucfi_opts *opts)
{
	struct ucfi *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	hashmap__init(&c->objs, hashmap_mem_hash, hashmap_mem_equal, (void *)KEY_SIZE);
	c->max_bytes = opts && opts->max_bytes ? opts->max_bytes : UCFI_DEF_BYTES;
	c->max_rows = opts && opts->max_rows ? opts->max_rows : UCFI_DEF_ROWS;
	c->store = opts ? opts->store : NULL;
	c->async = opts && opts->async;
	c->async_file = opts && opts->async_file ? opts->async_file : UCFI_ASYNC_FILE;
	return c;
}

static void obj_entry_free(long key, long value)
{
	struct ucfi_obj *o = (struct ucfi_obj *)value;

	(void)key;
	if (o->busy)
		pthread_join(o->th, NULL);
	if (o->vfd >= 0)
		close(o->vfd);
	free(o->path);
	free(o->pack);
	cfi_table_free(&o->t);
	free(o);
}

void ucfi__free(struct ucfi *c)
{
	if (!c)
		return;
	hashmap__clear_with(&c->objs, obj_entry_free);
	free(c);
}

/*
 * The PT_LOAD segments of path into o, and its build-id into *pk when it has one (else
 * pk->id_len stays 0): 0 or -errno (-ENOEXEC: not an ELF file).
 */
static int read_loads(const char *path, struct ucfi_obj *o, struct cfi_pack_key *pk)
{
	size_t n = 0;
	GElf_Phdr ph;
	Elf *e;
	int fd, err = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	if (!elf_get_build_id(e, pk->build_id, sizeof(pk->build_id), &n))
		pk->id_len = (uint32_t)n;
	if (elf_getphdrnum(e, &n)) {
		err = -ENOEXEC;
		goto out;
	}
	for (size_t i = 0; i < n && o->nloads < MAX_LOADS; i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		o->loads[o->nloads++] = (struct ucfi_load){ .offset = ph.p_offset,
							    .vaddr = ph.p_vaddr,
							    .filesz = ph.p_filesz };
	}
out:
	elf_end(e);
	close(fd);
	return err;
}

/*
 * The vdso has no file: it is the tracer's own (the kernel maps one image into every 64-bit
 * process), copied into a memfd that path names. The fd, or -1.
 */
static int vdso_file(char *path, size_t len)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct proc_map *maps;
	const struct proc_map *m;
	size_t n, done = 0;
	int fd = -1;

	if (!base || proc_maps__read(getpid(), &maps, &n))
		return -1;
	m = proc_maps__find(maps, n, base);
	if (m)
		fd = memfd_create("schedprof-vdso", MFD_CLOEXEC);
	while (fd >= 0 && done < m->end - base) {
		ssize_t w = write(fd, (const char *)base + done, m->end - base - done);

		if (w <= 0) {
			close(fd);
			fd = -1;
			break;
		}
		done += (size_t)w;
	}
	proc_maps__free(maps, n);
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/*
 * o's table from the store, when it holds one for the build-id in *pk (read_loads()) and this
 * row limit: 0, or -ENOENT (compile it; *key then names it for table_compile(), "" without a
 * store or a build-id), -ENOMEM.
 */
static int table_load(struct ucfi *c, struct ucfi_obj *o, struct cfi_pack_key *pk, char *key,
		      size_t keylen)
{
	char hex[2 * CFI_PACK_ID_MAX + 1];
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	size_t size;
	void *data;
	int err;

	key[0] = 0;
	if (!c->store || !pk->id_len)
		return -ENOENT;
	pk->max_rows = c->max_rows;
	snprintf(key, keylen, "%s-%zx",
		 elf_build_id_hex(pk->build_id, pk->id_len, hex, sizeof(hex)), c->max_rows);
	if (c->store->load(c->store->ctx, key, &data, &size))
		return -ENOENT;
	err = cfi_unpack(pk, data, size, &o->t, &o->cut);
	free(data);
	c->st.store_ns += now_ns(CLOCK_MONOTONIC) - t0;
	if (err == -ENOMEM)
		return err;
	if (err) {
		c->st.store_bad++;
		return -ENOENT;
	}
	c->st.stored++;
	return 0;
}

/*
 * o's table compiled from o->path, and packed for the store when o->skey names it: what the
 * compile's thread does (it touches o only), or the caller's thread without opts->async.
 */
static void obj_compile(struct ucfi_obj *o, size_t max_rows)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);

	o->cerr = cfi_compile(o->path, NULL, max_rows, &o->t);
	o->cns = now_ns(CLOCK_MONOTONIC) - t0;
	if (o->cerr == -E2BIG)
		o->cut = true;
	if ((!o->cerr || o->cerr == -E2BIG) && o->skey[0] &&
	    cfi_pack(&o->pk, &o->t, o->cut, &o->pack, &o->pack_size)) {
		o->pack = NULL;
		o->pack_size = 0;
	}
}

static void *compile_thread(void *arg)
{
	struct ucfi_obj *o = arg;

	obj_compile(o, o->pk.max_rows);
	atomic_store(&o->done, true);
	return NULL;
}

/* After o's compile: the table kept in the store, counted, bounded. */
static void obj_finish(struct ucfi *c, struct ucfi_obj *o)
{
	int err = o->cerr;

	c->st.compile_ns += o->cns;
	if (o->pack) {
		c->store->save(c->store->ctx, o->skey, o->pack, o->pack_size);
		free(o->pack);
		o->pack = NULL;
	}
	if (o->vfd >= 0)
		close(o->vfd);
	o->vfd = -1;
	free(o->path);
	o->path = NULL;
	if (err == -ENOMEM) {
		cfi_table_free(&o->t);
		o->none = true;
		c->err = -ENOMEM;
		return;
	}
	if (o->cut)
		c->st.cut++;
	if (err && err != -E2BIG) {
		cfi_table_free(&o->t);
		c->st.unreadable++;
		o->none = true;
		return;
	}
	if (c->st.bytes + o->t.n * sizeof(*o->t.rows) > c->max_bytes) {
		/* over the bound: frame pointers only, and the rows given back */
		cfi_table_free(&o->t);
		c->st.over++;
		o->none = true;
		o->cut = true;
		return;
	}
	c->st.bytes += o->t.n * sizeof(*o->t.rows);
}

static bool big_file(const struct ucfi *c, const char *path)
{
	struct stat st;

	return stat(path, &st) || (uint64_t)st.st_size > c->async_file;
}

/* Starts o's compile on a thread when one is free (else it stays queued). */
static void obj_start(struct ucfi *c, struct ucfi_obj *o)
{
	if (c->running >= UCFI_THREADS)
		return;
	o->pk.max_rows = c->max_rows;
	atomic_store(&o->done, false);
	if (pthread_create(&o->th, NULL, compile_thread, o)) {
		/* no thread: compiled here */
		o->queued = false;
		obj_compile(o, c->max_rows);
		obj_finish(c, o);
		return;
	}
	o->queued = false;
	o->busy = true;
	c->running++;
}

/* Joins the compiles that are done (all of them with wait), and starts the queued ones. */
static void reap(struct ucfi *c, bool wait)
{
	struct hashmap_entry *e;

	/* an object waits for a thread only while all are taken: none running, none queued */
	if (!c->running)
		return;
	do {
		hashmap__for_each_entry(&c->objs, e) {
			struct ucfi_obj *o = (struct ucfi_obj *)e->value;

			if (o->busy && (wait || atomic_load(&o->done))) {
				pthread_join(o->th, NULL);
				o->busy = false;
				c->running--;
				obj_finish(c, o);
			}
		}
		hashmap__for_each_entry(&c->objs, e) {
			struct ucfi_obj *o = (struct ucfi_obj *)e->value;

			if (o->queued)
				obj_start(c, o);
		}
	} while (wait && c->running);
}

void ucfi__wait(struct ucfi *c)
{
	if (c && c->async)
		reap(c, true);
}

/* The object of a mapping, its table compiled (or read) on first sight; NULL only on ENOMEM. */
static struct ucfi_obj *obj_get(struct ucfi *c, const struct usyms_mapping *m)
{
	struct ucfi_obj key = { .dev = m->dev, .inode = m->inode }, *o;
	struct cfi_pack_key pk = { 0 };
	char vpath[64];
	const char *path;
	int vfd = -1;
	long found;
	int err;

	if (hashmap__find(&c->objs, (long)&key, &found))
		return (struct ucfi_obj *)found;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->dev = m->dev;
	o->inode = m->inode;
	o->vfd = -1;
	if (hashmap__add(&c->objs, (long)o, (long)o)) {
		free(o);
		return NULL;
	}
	c->st.objects++;
	path = m->path;
	if (!m->dev && !m->inode && !strcmp(m->path, "[vdso]")) {
		vfd = vdso_file(vpath, sizeof(vpath));
		path = vpath;
	}
	if ((path == vpath && vfd < 0) || read_loads(path, o, &pk)) {
		if (vfd >= 0)
			close(vfd);
		c->st.unreadable++;
		o->none = true;
		return o;
	}
	err = table_load(c, o, &pk, o->skey, sizeof(o->skey));
	if (err == -ENOENT) {
		o->pk = pk;
		o->vfd = vfd;
		vfd = -1;
		o->path = strdup(path);
		if (!o->path) {
			err = -ENOMEM;
		} else if (c->async && big_file(c, path)) {
			o->queued = true;
			obj_start(c, o);
			return o;
		} else {
			obj_compile(o, c->max_rows);
			obj_finish(c, o);
			return o;
		}
	}
	if (vfd >= 0)
		close(vfd);
	o->cerr = err;
	o->cns = 0;
	obj_finish(c, o);
	return o;
}

/* A file offset of o as its link-time address; false when no PT_LOAD holds it. */
static bool obj_vaddr(const struct ucfi_obj *o, uint64_t off, uint64_t *ret)
{
	for (size_t i = 0; i < o->nloads; i++) {
		const struct ucfi_load *l = &o->loads[i];

		if (off >= l->offset && off - l->offset < l->filesz) {
			*ret = l->vaddr + (off - l->offset);
			return true;
		}
	}
	return false;
}

struct walk {
	struct ucfi *c;
	struct usyms *u;
	int pid;
	uint64_t image;
	size_t nofile; /* find() answered "no row" for an address in no file */
};

static int find(void *ctx, uint64_t ip, const struct cfi_row **row)
{
	struct walk *w = ctx;
	struct usyms_mapping m;
	struct ucfi_obj *o;
	uint64_t va;
	int err;

	*row = NULL;
	err = usyms__map_ip(w->u, w->pid, w->image, ip, &m);
	if (err == -ENOENT) {
		/* JIT code: frame pointers, if any */
		w->nofile++;
		return 0;
	}
	if (err)
		return -ENOENT;
	o = obj_get(w->c, &m);
	if (!o)
		return w->c->err = -ENOMEM;
	if (o->busy || o->queued) {
		/* its table is being compiled: the walk is done again later */
		if (!w->c->err)
			w->c->err = -EAGAIN;
		return -EAGAIN;
	}
	if (o->none || !obj_vaddr(o, m.offset, &va))
		return o->cut ? -E2BIG : 0;
	*row = cfi_table_find(&o->t, va);
	if (*row)
		return 0;
	return o->cut ? -E2BIG : o->t.n ? 1 : 0;
}

int ucfi__unwind(struct ucfi *c, struct usyms *u, int pid, uint64_t image,
		 const struct unwind_regs *regs, const struct unwind_stack *stack, uint64_t *ips,
		 size_t max, struct unwind_result *res)
{
	return ucfi__unwind_steps(c, u, pid, image, regs, stack, ips, NULL, max, res);
}

int ucfi__unwind_steps(struct ucfi *c, struct usyms *u, int pid, uint64_t image,
		       const struct unwind_regs *regs, const struct unwind_stack *stack,
		       uint64_t *ips, struct unwind_step *steps, size_t max,
		       struct unwind_result *res)
{
	struct walk w = { .c = c, .u = u, .pid = pid, .image = image };

	c->err = 0;
	if (c->async)
		reap(c, false);
	cfi_unwind_steps(regs, stack, find, &w, ips, steps, max, res);
	if (c->err == -EAGAIN)
		return c->err; /* not counted: it is walked again */
	c->st.stacks++;
	c->st.stops[res->stop]++;
	c->st.fp_frames += res->fp_frames;
	c->st.nofile_frames += w.nofile < res->fp_frames ? w.nofile : res->fp_frames;
	return c->err;
}

void ucfi__stats(const struct ucfi *c, struct ucfi_stats *ret)
{
	*ret = c->st;
}
