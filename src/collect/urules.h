/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --stacks' user stacks by learned rules (include/schedprof/profile.h, struct sp_urule): the
 * copies BPF sends when its walk meets an address without a rule are unwound at once by
 * the objects' CFI (symbols/ucfi.h), a rule is written into the BPF map for every frame of
 * each, so that the next walk down the same path needs no copy, and each copy's frames are
 * kept under its seq. At the dump they take the place of the placeholders that ended the
 * walks' frames (SP_UFRAME_PENDING), so each event is counted under its whole stack.
 */
#ifndef SCHEDPROF_URULES_H
#define SCHEDPROF_URULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sp_records;
struct sp_user_cuts;
struct usyms;
struct urules;

/*
 * Rules into the map rules_fd (struct sp_urule_key -> struct sp_urule), unwinding through
 * u's snapshots with at most table_bytes of tables (0: UCFI_DEF_BYTES). NULL + errno.
 */
struct urules *urules__new(int rules_fd, struct usyms *u, uint64_t table_bytes);
void urules__free(struct urules *r);

/*
 * A record of the copies' ring buffer (struct sp_ustk_copy): its process's mappings are
 * snapshotted now if nothing did (it may exit soon), and the copy is kept to be unwound by
 * urules__unwind_pending(). 0 or -ENOMEM.
 */
int urules__copy(struct urules *r, const void *data, size_t size);

/*
 * Unwinds the copies waiting and teaches their rules, but those that need a table still
 * compiling (on its own thread): 0 or -ENOMEM.
 */
int urules__unwind_pending(struct urules *r);

/*
 * Unwinds the copies still waiting, then replaces the placeholder ending each stack of
 * ustacks (__u64 -> struct sp_prof_ustack, from the dump) with its copy's frames; a
 * placeholder whose copy never came is dropped (the stack as far as the rules went), and
 * counted (urules__report()). The placeholders of copy slots nest (a view's: seq >> 40 & 1)
 * whose stack stopped short are counted in *cuts by why (their copy's unwind, or none).
 */
void urules__resolve(struct urules *r, struct sp_records *ustacks, unsigned int nest,
		     struct sp_user_cuts *cuts);

/* Logs what the copies cost and taught (the trace's, shared by its views), under prefix. */
void urules__report(const struct urules *r, const char *prefix);

#endif
