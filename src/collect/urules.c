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
#include "collect/cfi_store.h"
#include "collect/urules.h"
#include "rows/records.h"
#include "symbols/ucfi.h"
#include "symbols/usyms.h"
#include "schedprof/profile.h"

struct urules {
	int fd;
	struct usyms *usyms;
	struct ucfi *cfi;
	struct cfi_store store;
	struct hashmap stacks; /* seq -> struct sp_prof_ustack * (the copy's frames) */
	uint64_t copies, bad, snapshots, unwind_ns;
	uint64_t rules, stops, rule_fail; /* rules written (of them, stops), not written */
	uint64_t resolved, unresolved;	   /* placeholders replaced; without their copy */
	uint64_t enomem;
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
	ucfi__free(r->cfi);
	hashmap__clear_with(&r->stacks, stack_free);
	free(r);
}

struct urules *urules__new(int rules_fd, struct usyms *u, uint64_t table_bytes)
{
	struct urules *r = calloc(1, sizeof(*r));
	struct ucfi_opts co;

	if (!r)
		return NULL;
	r->fd = rules_fd;
	r->usyms = u;
	hashmap__init(&r->stacks, hashmap_long_hash, hashmap_long_equal, NULL);
	co = (struct ucfi_opts){ .store = cfi_store_init(&r->store, "stacks", table_bytes) };
	co.max_bytes = r->store.table_bytes;
	r->cfi = ucfi__new(&co);
	if (!r->cfi) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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
	struct unwind_step steps[SP_PROF_UDEPTH];
	uint64_t ips[SP_PROF_UDEPTH], t0 = mono_ns();
	struct sp_urule_key key = {};
	struct unwind_result res;
	struct sp_prof_ustack *s;
	struct usyms_mapping m;
	int err;

	if (size < sizeof(*c) || c->len > size - sizeof(*c)) {
		r->bad++;
		return 0;
	}
	r->copies++;
	/* a process seen first at its copy: its mappings now, while it lives */
	err = usyms__map_ip(r->usyms, (int)c->tgid, c->exec_id, c->ip, &m);
	if (err == -ESRCH) {
		r->snapshots++;
		if (usyms__add_pid(r->usyms, (int)c->tgid, c->exec_id) == -ENOMEM)
			return -ENOMEM;
	}
	err = ucfi__unwind_steps(r->cfi, r->usyms, (int)c->tgid, c->exec_id,
				 &(struct unwind_regs){ .ip = c->ip, .sp = c->sp, .bp = c->bp,
							.bx = c->bx },
				 &(struct unwind_stack){ .base = c->sp, .data = c->data,
							 .len = c->len },
				 ips, steps, SP_PROF_UDEPTH, &res);
	if (err)
		return err;
	key.leader_start = c->leader_start;
	key.tgid = c->tgid;
	key.exec_id = c->exec_id;
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
	s->nr = (uint32_t)res.n;
	for (size_t i = 0; i < res.n; i++) {
		s->frames[i].status = SP_UFRAME_IP;
		s->frames[i].offset = ips[i];
	}
	err = hashmap__set(&r->stacks, (long)c->seq, (long)s, NULL, NULL);
	if (err) {
		free(s);
		return err;
	}
	r->unwind_ns += mono_ns() - t0;
	return 0;
}

void urules__resolve(struct urules *r, struct sp_records *ustacks)
{
	if (!r || !sp_records_are(ustacks, sizeof(uint64_t), sizeof(struct sp_prof_ustack)))
		return;
	for (size_t i = 0; i < ustacks->n; i++) {
		struct sp_prof_ustack *u = (struct sp_prof_ustack *)sp_records_value(ustacks, i);
		const struct sp_prof_ustack *c;
		long v;

		if (!u->nr || u->nr > SP_PROF_UDEPTH ||
		    u->frames[u->nr - 1].status != SP_UFRAME_PENDING)
			continue;
		if (!hashmap__find(&r->stacks, (long)u->frames[u->nr - 1].offset, &v)) {
			r->unresolved++;
			u->nr--;
			continue;
		}
		c = (const struct sp_prof_ustack *)v;
		r->resolved++;
		*u = *c;
	}
}

void urules__report(const struct urules *r, const char *view)
{
	struct ucfi_stats s;

	if (!r)
		return;
	ucfi__stats(r->cfi, &s);
	dlog("%s: %" PRIu64 " user stack copies (rules' misses) unwound in %" PRIu64 " us (%"
	     PRIu64 " malformed, %" PRIu64 " processes snapshotted at their copy); %" PRIu64
	     " rules taught (%" PRIu64 " of them stops), %" PRIu64 " not (map update failed); "
	     "placeholders replaced %" PRIu64 ", without their copy %" PRIu64, view, r->copies,
	     r->unwind_ns / 1000, r->bad, r->snapshots, r->rules, r->stops, r->rule_fail,
	     r->resolved, r->unresolved);
	dlog("%s: CFI of %" PRIu64 " objects: %" PRIu64 " read from the cache, %" PRIu64
	     " compiled in %" PRIu64 " ms (%" PRIu64 " not kept: %s); %" PRIu64 " KiB held (%"
	     PRIu64 " over the bound, %" PRIu64 " unreadable); copies' walks ended: end %" PRIu64
	     ", no-object %" PRIu64 ", no-cfi %" PRIu64 ", memory %" PRIu64 ", expression %" PRIu64,
	     view, s.objects, s.stored, s.objects - s.stored - s.unreadable, s.compile_ns / 1000000,
	     r->store.failed, r->store.err ? strerror(-r->store.err) : "-", s.bytes / 1024, s.over,
	     s.unreadable, s.stops[UNWIND_END], s.stops[UNWIND_NOOBJ], s.stops[UNWIND_NOCFI],
	     s.stops[UNWIND_MEMORY], s.stops[UNWIND_EXPR]);
	if (r->unresolved || r->rule_fail)
		wlog("%s: %" PRIu64 " user stacks end where the rules did (their copy was not "
		     "unwound), %" PRIu64 " rules could not be written", view, r->unresolved,
		     r->rule_fail);
}
