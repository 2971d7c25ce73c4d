// SPDX-License-Identifier: BSD-2-Clause
/* --stacks' user stacks: the copies of the rules' misses unwound and taught (urules.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "base/hashmap.h"
#include "base/log.h"
#include "base/util.h"
#include "collect/cfi_store.h"
#include "collect/urules.h"
#include "collect/usnap.h"
#include "model/model.h"
#include "rows/records.h"
#include "symbols/ucfi.h"
#include "symbols/usyms.h"
#include "schedprof/profile.h"

/* A copy's frames, and why its unwind ended (enum unwind_stop) */
struct urules_stack {
	struct sp_prof_ustack u;
	int stop;
};

/* A copy kept until it is unwound */
struct urules_pend {
	struct urules_pend *next;
	struct sp_ustk_copy c; /* then c.len bytes */
};

struct urules {
	int fd;
	struct urules_pend *pending, **tail;
	struct usyms *usyms;
	struct ucfi *cfi;
	struct cfi_store store;
	struct hashmap stacks; /* seq -> struct urules_stack * (the copy's frames) */
	struct usnap snap;     /* the copied processes' mappings */
	uint64_t copies, bad, unwind_ns;
	uint64_t rules, stops, rule_fail; /* rules written (of them, stops), not written */
	/* placeholders replaced, and without their copy, by the last urules__resolve() */
	uint64_t last_resolved, last_unresolved;
};

static void stack_free(long key, long value)
{
	(void)key;
	free((void *)value);
}

void urules__free(struct urules *r)
{
	if (!r)
		return;
	while (r->pending) {
		struct urules_pend *p = r->pending;

		r->pending = p->next;
		free(p);
	}
	ucfi__free(r->cfi);
	hashmap__clear_with(&r->stacks, stack_free);
	usnap_free(&r->snap);
	free(r);
}

struct urules *urules__new(int rules_fd, struct usyms *u, uint64_t table_bytes)
{
	struct urules *r = calloc(1, sizeof(*r));
	struct ucfi_opts co;

	if (!r)
		return NULL;
	r->fd = rules_fd;
	r->tail = &r->pending;
	r->usyms = u;
	hashmap__init(&r->stacks, hashmap_long_hash, hashmap_long_equal, NULL);
	usnap_init(&r->snap);
	co = (struct ucfi_opts){ .store = cfi_store_init(&r->store, "stacks", table_bytes),
				 .async = true };
	co.max_bytes = r->store.table_bytes;
	r->cfi = ucfi__new(&co);
	if (!r->cfi) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

/*
 * The rule for frame ips[i] as the unwind left it; false when there is none to teach: a
 * walk that stopped for want of memory (the copy's size) or of a mapping (a snapshot
 * older than the code) may go on next time, so only the code's own stops are rules.
 */
static bool rule_of(const struct unwind_step *st, const struct unwind_result *res, size_t i,
		    struct sp_urule *rule)
{
	*rule = (struct sp_urule){ .cfa_off = st->cfa_off, .fp_off = st->fp_off, .fp = st->fp };
	switch (st->how) {
	case UNWIND_HOW_SP:
		rule->how = SP_URULE_SP;
		return true;
	case UNWIND_HOW_FP:
		rule->how = SP_URULE_FP;
		return true;
	case UNWIND_HOW_SIGNAL:
		rule->how = SP_URULE_SIGNAL;
		return true;
	case UNWIND_HOW_END:
		rule->how = SP_URULE_END;
		return true;
	case UNWIND_HOW_RA_DI:
		rule->how = SP_URULE_RA_DI;
		return true;
	default:
		break;
	}
	if (i + 1 != res->n)
		return false;
	switch (res->stop) {
	case UNWIND_NOCFI:
	case UNWIND_CUT:
	case UNWIND_EXPR:
	case UNWIND_LOOP:
		rule->how = SP_URULE_STOP;
		return true;
	default:
		return false;
	}
}

int urules__copy(struct urules *r, const void *data, size_t size)
{
	const struct sp_ustk_copy *c = data;
	struct urules_pend *p;

	if (size < sizeof(*c) || c->len > size - sizeof(*c)) {
		r->bad++;
		return 0;
	}
	r->copies++;
	/*
	 * The code is that of whose rules the walk followed: a forked process's is its
	 * parent's, and the parent's snapshot holds it even when the child has exec'd since
	 * (posix_spawn's, vfork's), whose own snapshot would be the new program's.
	 */
	if (usnap_for_ip(&r->snap, r->usyms, c->rules.tgid, c->rules.exec_id,
			 c->rules.exec_vm, c->ip))
		return -ENOMEM;
	p = malloc(sizeof(*p) + c->len);
	if (!p)
		return -ENOMEM;
	p->next = NULL;
	memcpy(&p->c, c, sizeof(*c) + c->len);
	*r->tail = p;
	r->tail = &p->next;
	return 0;
}

/*
 * Whether a frame of the unwind (ips, steps: n frames) that frame pointers left, or its last,
 * is at an address in no mapping of the snapshot; *ret_ip: that address.
 */
static bool nofile_frame(struct urules *r, const struct sp_ustk_copy *c, const uint64_t *ips,
			 const struct unwind_step *steps, size_t n, uint64_t *ret_ip)
{
	for (size_t i = 1; i < n; i++) {
		struct usyms_mapping m;

		if (steps[i].how != UNWIND_HOW_FP && i + 1 != n)
			continue;
		/* a return address: the call is the byte before it */
		if (usyms__map_ip(r->usyms, (int)c->rules.tgid, c->rules.exec_id, ips[i] - 1,
				  &m) == -ENOENT) {
			*ret_ip = ips[i] - 1;
			return true;
		}
	}
	return false;
}

/* Unwinds copy c, teaches its rules and keeps its frames under its seq. 0 or -ENOMEM. */
static int unwind_one(struct urules *r, const struct sp_ustk_copy *c)
{
	struct unwind_step steps[SP_PROF_UDEPTH];
	uint64_t ips[SP_PROF_UDEPTH], t0 = now_ns(CLOCK_MONOTONIC);
	struct sp_urule_key key = {};
	struct unwind_result res;
	struct urules_stack *s;
	int err;

	for (int pass = 0;; pass++) {
		uint64_t read = r->snap.snapshots + r->snap.resnaps, ip;

		err = ucfi__unwind_steps(r->cfi, r->usyms, (int)c->rules.tgid, c->rules.exec_id,
					 &(struct unwind_regs){ .ip = c->ip, .sp = c->sp,
								.bp = c->bp, .bx = c->bx,
								.di = c->di },
					 &(struct unwind_stack){ .base = c->sp, .data = c->data,
								 .len = c->len },
					 ips, steps, SP_PROF_UDEPTH, &res);
		if (err)
			return err;
		/*
		 * A frame left by frame pointers, or the last, at an address in no mapping of the
		 * snapshot: JIT code, or code mapped since the snapshot was read (a dlopen()
		 * after the process's first stack), whose stop would be taught as a rule. The
		 * mappings are read again (at most every 100 ms an image), and the copy unwound
		 * again, once.
		 */
		if (pass || !nofile_frame(r, c, ips, steps, res.n, &ip))
			break;
		err = usnap_for_ip(&r->snap, r->usyms, c->rules.tgid, c->rules.exec_id,
				   c->rules.exec_vm, ip);
		if (err)
			return err;
		if (r->snap.snapshots + r->snap.resnaps == read)
			break;
	}
	key.img = c->rules;
	for (size_t i = 0; i < res.n; i++) {
		struct sp_urule rule;

		if (!rule_of(&steps[i], &res, i, &rule))
			continue;
		key.pc = ips[i] | (steps[i].exact ? SP_URULE_EXACT : 0);
		if (bpf_map_update_elem(r->fd, &key, &rule, BPF_ANY)) {
			r->rule_fail++;
			continue;
		}
		r->rules++;
		r->stops += rule.how == SP_URULE_STOP;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->stop = res.stop;
	s->u.nr = (uint32_t)res.n;
	for (size_t i = 0; i < res.n; i++) {
		s->u.frames[i].status = SP_UFRAME_IP;
		s->u.frames[i].offset = ips[i];
	}
	err = hashmap__set(&r->stacks, (long)c->seq, (long)s, NULL, NULL);
	if (err) {
		free(s);
		return err;
	}
	r->unwind_ns += now_ns(CLOCK_MONOTONIC) - t0;
	return 0;
}

int urules__unwind_pending(struct urules *r)
{
	struct urules_pend *p, *keep = NULL, **kt = &keep;
	int err = 0;

	if (!r)
		return 0;
	/* one pass: a copy whose tables are compiling waits for the next */
	while ((p = r->pending)) {
		err = unwind_one(r, &p->c);
		if (err && err != -EAGAIN)
			break;
		r->pending = p->next;
		if (err == -EAGAIN) {
			p->next = NULL;
			*kt = p;
			kt = &p->next;
			err = 0;
		} else {
			free(p);
		}
	}
	/* what is left of the pass, then what waits for its tables */
	if (!r->pending)
		r->tail = &r->pending;
	*r->tail = keep;
	if (keep)
		r->tail = kt;
	return err;
}

/* Counts in *cuts a placeholder's stack that stopped short: its copy's stop, c NULL: none */
static void count_cut(const struct urules_stack *c, struct sp_user_cuts *cuts)
{
	if (!c) {
		cuts->lost++;
		return;
	}
	switch (c->stop) {
	case UNWIND_END:
		break;
	case UNWIND_DEPTH:
		cuts->depth++;
		break;
	case UNWIND_MEMORY:
		cuts->memory++;
		break;
	default:
		cuts->cfi++;
		break;
	}
}

void urules__resolve(struct urules *r, struct sp_records *ustacks, unsigned int nest,
		     struct sp_user_cuts *cuts)
{
	if (!r)
		return;
	r->last_resolved = r->last_unresolved = 0;
	/*
	 * Until no copy waits: each round compiles the tables the last one met (an object
	 * is compiled once, so this ends). ENOMEM: the placeholders left are counted as
	 * without their copy.
	 */
	for (int round = 0; r->pending && round < 64; round++) {
		ucfi__wait(r->cfi);
		if (urules__unwind_pending(r))
			break;
	}
	if (!sp_records_are(ustacks, sizeof(uint64_t), sizeof(struct sp_prof_ustack)))
		return;
	for (size_t i = 0; i < ustacks->n; i++) {
		struct sp_prof_ustack *u = (struct sp_prof_ustack *)sp_records_value(ustacks, i);
		const struct urules_stack *c = NULL;
		uint64_t seq;
		long v;

		if (!u->nr || u->nr > SP_PROF_UDEPTH ||
		    u->frames[u->nr - 1].status != SP_UFRAME_PENDING)
			continue;
		seq = u->frames[u->nr - 1].offset;
		if (hashmap__find(&r->stacks, (long)seq, &v))
			c = (const struct urules_stack *)v;
		/* each placeholder is one event, of the view whose slots took its copy */
		if (((seq >> 40) & 1) == nest)
			count_cut(c, cuts);
		if (!c) {
			r->last_unresolved++;
			u->nr--;
			continue;
		}
		r->last_resolved++;
		*u = c->u;
	}
}

void urules__report(const struct urules *r, const char *prefix)
{
	struct ucfi_stats s;

	if (!r)
		return;
	ucfi__stats(r->cfi, &s);
	dlog("%s: %" PRIu64 " user stack copies (rules' misses) unwound in %" PRIu64 " us (%"
	     PRIu64 " malformed, %" PRIu64 " processes snapshotted at their copy, %" PRIu64
	     " again for a PC in no file); %" PRIu64
	     " rules taught (%" PRIu64 " of them stops), %" PRIu64 " not (map update failed); "
	     "placeholders replaced %" PRIu64 ", without their copy %" PRIu64, prefix, r->copies,
	     r->unwind_ns / 1000, r->bad, r->snap.snapshots, r->snap.resnaps, r->rules, r->stops, r->rule_fail,
	     r->last_resolved, r->last_unresolved);
	dlog("%s: CFI of %" PRIu64 " objects: %" PRIu64 " read from the cache, %" PRIu64
	     " compiled in %" PRIu64 " ms (%" PRIu64 " not kept: %s); %" PRIu64 " KiB held (%"
	     PRIu64 " over the bound, %" PRIu64 " unreadable); copies' walks ended: end %" PRIu64
	     ", no-object %" PRIu64 ", no-cfi %" PRIu64 ", memory %" PRIu64 ", expression %" PRIu64,
	     prefix, s.objects, s.stored, s.objects - s.stored - s.unreadable, s.compile_ns / 1000000,
	     r->store.failed, r->store.err ? strerror(-r->store.err) : "-", s.bytes / 1024, s.over,
	     s.unreadable, s.stops[UNWIND_END], s.stops[UNWIND_NOOBJ], s.stops[UNWIND_NOCFI],
	     s.stops[UNWIND_MEMORY], s.stops[UNWIND_EXPR]);
	if (r->last_unresolved || r->rule_fail)
		wlog("%s: %" PRIu64 " user stacks end where the rules did (their copy was not "
		     "unwound), %" PRIu64 " rules could not be written", prefix, r->last_unresolved,
		     r->rule_fail);
}
