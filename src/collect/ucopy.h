/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The profile's -g user stacks as copies (struct sp_prof_ucopy, the prof_ucopies ring
 * buffer): while tracing, each copy is drained at once, and its process's mappings are
 * snapshotted if no announcement did (the live usyms); the copies are unwound by those
 * snapshots (ucfi.h) at the end of the run, or whenever more than 64 MiB wait, and counted
 * under their keys completed with the user leaf and stack. The counts and stacks then join
 * the dumped maps' records, so the rows see one kind of sample.
 */
#ifndef SCHEDPROF_UCOPY_H
#define SCHEDPROF_UCOPY_H

#include <stdint.h>

struct sp_records;
struct usyms;
struct ucopy;

/*
 * On the ring buffer map_fd, unwinding through u's snapshots, with at most table_bytes of
 * unwind tables held (0: UCFI_DEF_BYTES), and as many kept between runs in the per-boot
 * cache (CACHE_CFI). NULL + errno.
 */
struct ucopy *ucopy__new(int map_fd, struct usyms *u, uint64_t table_bytes);
void ucopy__free(struct ucopy *c);

/* An fd readable when copies wait, and their drain: 0 or -ENOMEM. */
int ucopy__poll_fd(const struct ucopy *c);
int ucopy__poll(struct ucopy *c);

/*
 * Unwinds the copies still waiting, then appends the counted keys to samples (struct sp_prof_key -> __u64) and their stacks to
 * ustacks (__u64 -> struct sp_prof_ustack) not there yet. 0 or -ENOMEM.
 */
int ucopy__flush(struct ucopy *c, struct sp_records *samples, struct sp_records *ustacks);

/* Logs how the copies were unwound and what they cost; warns about frames lost. */
void ucopy__report(const struct ucopy *c, uint64_t ring_lost, uint64_t vma_busy,
		   uint64_t copy_failed);

#endif
