// SPDX-License-Identifier: BSD-2-Clause
/* The profile's copied user stacks, unwound while tracing (ucopy.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "base/hashmap.h"
#include "base/log.h"
#include "base/util.h"
#include "collect/cfi_store.h"
#include "collect/ucopy.h"
#include "collect/usnap.h"
#include "rows/records.h"
#include "symbols/ucfi.h"
#include "symbols/usyms.h"
#include "schedprof/profile.h"

/* Not BPF's seed: a copied stack's hash never names one of the frame-pointer path's. */
#define UCOPY_HASH_SEED 0x75636f7079636669ull

struct ucopy_key {
	struct sp_prof_key key;
	uint64_t count;
};

/* A copy kept until it is unwound. */
struct ucopy_pend {
	struct ucopy_pend *next;
	struct sp_prof_ucopy r; /* then r.len bytes */
};

/* Copies kept beyond this are unwound at the next poll, not at the end of the run. */
#define UCOPY_PENDING_BYTES (64u << 20)

struct ucopy {
	struct ring_buffer *rb;
	struct ucopy_pend *pending, **pending_tail;
	size_t pending_bytes;
	struct usyms *usyms;
	struct ucfi *cfi;
	struct cfi_store store; /* the tables kept between runs (CACHE_CFI) */
	struct hashmap keys;   /* struct ucopy_key * (the key's bytes) -> itself */
	struct hashmap stacks; /* stack hash -> struct sp_prof_ustack * */
	struct usnap snap;	/* the copied processes' mappings */
	uint64_t records, cut, part, noend, bad, unwind_ns;
	uint64_t used_max, used_sum;
};

static void key_entry_free(long key, long value)
{
	(void)value;
	free((void *)key);
}

static void stack_entry_free(long key, long value)
{
	(void)key;
	free((void *)value);
}

void ucopy__free(struct ucopy *c)
{
	if (!c)
		return;
	ring_buffer__free(c->rb);
	while (c->pending) {
		struct ucopy_pend *p = c->pending;

		c->pending = p->next;
		free(p);
	}
	ucfi__free(c->cfi);
	hashmap__clear_with(&c->keys, key_entry_free);
	hashmap__clear_with(&c->stacks, stack_entry_free);
	usnap_free(&c->snap);
	free(c);
}

/* Keeps the stack of n frames; its hash, 0 on ENOMEM. */
static uint64_t keep_stack(struct ucopy *c, const struct sp_prof_ustack *s)
{
	uint64_t h = hashmap_hash_bytes(s->frames, s->nr * sizeof(s->frames[0]), UCOPY_HASH_SEED);
	struct sp_prof_ustack *d;

	h = h ? h : 1;
	if (hashmap__find(&c->stacks, (long)h, NULL))
		return h;
	d = malloc(sizeof(*d));
	if (!d)
		return 0;
	*d = *s;
	if (hashmap__add(&c->stacks, (long)h, (long)d)) {
		free(d);
		return 0;
	}
	return h;
}

static int count_key(struct ucopy *c, const struct sp_prof_key *key)
{
	struct hashmap_entry *e = hashmap__find_entry(&c->keys, (long)key);
	struct ucopy_key *k;

	if (e) {
		((struct ucopy_key *)e->value)->count++;
		return 0;
	}
	k = malloc(sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->key = *key;
	k->count = 1;
	if (hashmap__add(&c->keys, (long)k, (long)k)) {
		free(k);
		return -ENOMEM;
	}
	return 0;
}

/* Unwinds copy r (its data whole) and counts it under its completed key. 0 or -ENOMEM. */
static int unwind_one(struct ucopy *c, const struct sp_prof_ucopy *r)
{
	struct sp_prof_ustack s = {};
	uint64_t ips[SP_PROF_UDEPTH], t0 = now_ns(CLOCK_MONOTONIC);
	struct sp_prof_key key = r->key;
	struct unwind_result res;
	int err;

	err = ucfi__unwind(c->cfi, c->usyms, (int)key.tgid, key.exec_id,
			   &(struct unwind_regs){
				   .ip = r->ip, .sp = r->sp, .bp = r->bp, .bx = r->bx },
			   &(struct unwind_stack){ .base = r->sp, .data = r->data, .len = r->len },
			   ips, SP_PROF_UDEPTH, &res);
	if (err)
		return err;
	c->used_sum += res.used;
	if (res.used > c->used_max)
		c->used_max = res.used;
	s.nr = (uint32_t)res.n;
	for (size_t i = 0; i < res.n; i++) {
		s.frames[i].status = SP_UFRAME_IP;
		s.frames[i].offset = ips[i];
	}
	key.uleaf = s.frames[0];
	key.ustack = keep_stack(c, &s);
	if (!key.ustack)
		return -ENOMEM;
	err = count_key(c, &key);
	c->unwind_ns += now_ns(CLOCK_MONOTONIC) - t0;
	return err;
}

/* Unwinds the copies kept so far. 0 or -ENOMEM (the rest stay kept). */
static int unwind_pending(struct ucopy *c)
{
	int err = 0;

	while (c->pending) {
		struct ucopy_pend *p = c->pending;

		err = unwind_one(c, &p->r);
		if (err)
			return err;
		c->pending = p->next;
		c->pending_bytes -= sizeof(*p) + p->r.len;
		free(p);
	}
	c->pending_tail = &c->pending;
	return err;
}

/*
 * A copy from the ring buffer: its process's mappings snapshotted now if no announcement did
 * (it may exit soon), and the copy kept, trimmed to its length, to be unwound later: the
 * first sight of a large object (cc1) compiles its CFI for seconds, while the ring buffer
 * fills with copies of processes that are about to exit.
 */
static int on_copy(void *ctx, void *data, size_t size)
{
	const struct sp_prof_ucopy *r = data;
	struct ucopy *c = ctx;
	struct ucopy_pend *p;

	if (size < sizeof(*r) || r->len > size - sizeof(*r)) {
		c->bad++;
		return 0;
	}
	c->records++;
	if (r->flags & SP_UCOPY_F_CUT)
		c->cut++;
	if (r->flags & SP_UCOPY_F_PART)
		c->part++;
	if (r->flags & SP_UCOPY_F_NOEND)
		c->noend++;
	if (usnap_for_ip(&c->snap, c->usyms, r->key.tgid, r->key.exec_id, 0, r->ip))
		return -ENOMEM;
	p = malloc(sizeof(*p) + r->len);
	if (!p)
		return -ENOMEM;
	p->next = NULL;
	memcpy(&p->r, r, sizeof(*r) + r->len);
	*c->pending_tail = p;
	c->pending_tail = &p->next;
	c->pending_bytes += sizeof(*p) + r->len;
	return 0;
}

struct ucopy *ucopy__new(int map_fd, struct usyms *u, uint64_t table_bytes)
{
	struct ucopy *c = calloc(1, sizeof(*c));
	struct ucfi_opts co;
	int err;

	if (!c)
		return NULL;
	c->usyms = u;
	c->pending_tail = &c->pending;
	hashmap__init(&c->keys, hashmap_mem_hash, hashmap_mem_equal,
		      (void *)sizeof(struct sp_prof_key));
	hashmap__init(&c->stacks, hashmap_long_hash, hashmap_long_equal, NULL);
	usnap_init(&c->snap);
	/* --no-cache: no build-id read, nothing packed, and -v says nothing was kept */
	co = (struct ucfi_opts){ .store = cfi_store_init(&c->store, "profile", table_bytes) };
	co.max_bytes = c->store.table_bytes;
	c->cfi = ucfi__new(&co);
	if (!c->cfi)
		goto fail;
	c->rb = ring_buffer__new(map_fd, on_copy, c, NULL);
	if (!c->rb)
		goto fail;
	return c;
fail:
	err = errno;
	ucopy__free(c);
	errno = err;
	return NULL;
}

int ucopy__poll_fd(const struct ucopy *c)
{
	return c ? ring_buffer__epoll_fd(c->rb) : -1;
}

int ucopy__poll(struct ucopy *c)
{
	int n = c ? ring_buffer__consume(c->rb) : 0;

	if (n < 0)
		return n;
	return c && c->pending_bytes > UCOPY_PENDING_BYTES ? unwind_pending(c) : 0;
}

int ucopy__flush(struct ucopy *c, struct sp_records *samples, struct sp_records *ustacks)
{
	struct sp_records_index have;
	struct hashmap_entry *e;
	int err;

	if (!c)
		return 0;
	err = unwind_pending(c);
	if (err)
		return err;
	err = sp_records_reserve(samples, samples->n + hashmap__size(&c->keys));
	if (err)
		return err;
	hashmap__for_each_entry(&c->keys, e) {
		const struct ucopy_key *k = (const struct ucopy_key *)e->value;

		err = sp_records_add(samples, &k->key, &k->count);
		if (err)
			return err;
	}
	err = sp_records_index_u64(&have, ustacks);
	if (err)
		return err;
	hashmap__for_each_entry(&c->stacks, e) {
		uint64_t id = (uint64_t)e->key;

		if (sp_records_find_u64(&have, id))
			continue;
		err = sp_records_add(ustacks, &id, (const void *)e->value);
		if (err)
			break;
	}
	sp_records_index_free(&have);
	return err;
}

void ucopy__report(const struct ucopy *c, uint64_t ring_lost, uint64_t vma_busy,
		   uint64_t copy_failed)
{
	struct ucfi_stats s;
	uint64_t lost;

	if (!c)
		return;
	ucfi__stats(c->cfi, &s);
	dlog("profile: %" PRIu64 " user stack copies unwound in %" PRIu64 " us (%" PRIu64
	     " cut at the copy's size, %" PRIu64 " at a page not readable, %" PRIu64 " without the "
	     "mapping's end (its lock busy), %" PRIu64 " malformed, %" PRIu64 " processes snapshotted "
	     "at their copy, %" PRIu64 " again for a PC in no file; bytes used: max %" PRIu64
	     ", mean %" PRIu64 "); walks ended: end %"
	     PRIu64 ", depth %" PRIu64 ", no-object %" PRIu64 ", no-cfi %" PRIu64 ", table-cut %"
	     PRIu64 ", memory %" PRIu64 ", expression %" PRIu64 ", loop %" PRIu64 "; frames by "
	     "frame pointer %" PRIu64 " (%" PRIu64 " in no file)",
	     c->records, c->unwind_ns / 1000, c->cut, c->part, c->noend, c->bad, c->snap.snapshots,
	     c->snap.resnaps, c->used_max, c->records ? c->used_sum / c->records : 0,
	     s.stops[UNWIND_END], s.stops[UNWIND_DEPTH],
	     s.stops[UNWIND_NOOBJ], s.stops[UNWIND_NOCFI], s.stops[UNWIND_CUT],
	     s.stops[UNWIND_MEMORY], s.stops[UNWIND_EXPR], s.stops[UNWIND_LOOP], s.fp_frames,
	     s.nofile_frames);
	dlog("profile: CFI of %" PRIu64 " objects: %" PRIu64 " read from the cache in %" PRIu64
	     " ms (%" PRIu64 " found there unusable), %" PRIu64 " compiled in %" PRIu64 " ms (%"
	     PRIu64 " not kept in the cache: %s); %" PRIu64 " KiB held (%" PRIu64 " over the "
	     "bound, %" PRIu64 " cut, %" PRIu64 " unreadable)",
	     s.objects, s.stored, s.store_ns / 1000000, s.store_bad,
	     s.objects - s.stored - s.unreadable, s.compile_ns / 1000000, c->store.failed,
	     c->store.err ? strerror(-c->store.err) : "-", s.bytes / 1024, s.over, s.cut,
	     s.unreadable);
	lost = s.stops[UNWIND_NOCFI] + s.stops[UNWIND_CUT] + s.stops[UNWIND_MEMORY] +
	       s.stops[UNWIND_EXPR] + s.stops[UNWIND_NOOBJ] + s.stops[UNWIND_LOOP];
	if (lost)
		dlog("%" PRIu64 " of %" PRIu64 " copied user stacks stopped short of their outermost "
		     "frame: no CFI %" PRIu64 ", table limit %" PRIu64 ", unreadable memory %" PRIu64
		     ", other %" PRIu64, lost, c->records, s.stops[UNWIND_NOCFI],
		     s.stops[UNWIND_CUT], s.stops[UNWIND_MEMORY],
		     s.stops[UNWIND_EXPR] + s.stops[UNWIND_NOOBJ] + s.stops[UNWIND_LOOP]);
	if (ring_lost || vma_busy || copy_failed)
		wlog("%" PRIu64 " user stacks were walked by frame pointers instead of copied (ring "
		     "buffer full %" PRIu64 ", stack pointer in no mapping %" PRIu64 ", stack not "
		     "readable %" PRIu64 ")", ring_lost + vma_busy + copy_failed, ring_lost, vma_busy,
		     copy_failed);
	/* a copy holds its whole --ustack-copy size in the ring buffer until it is read */
	if (ring_lost)
		log_plain(LOG_WARN, "a smaller --ustack-copy or a lower -F keeps more stacks copied");
}
