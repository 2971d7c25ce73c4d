/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The profile view's rows from the raw records of its maps (src/views/profile/profile.bpf.c),
 * kallsyms and the user symbols of the processes seen while tracing. No libbpf: the collector
 * (collect.c) dumps the maps, the unit tests build records by hand.
 */
#ifndef SCHEDPROF_PROFILE_ROWS_H
#define SCHEDPROF_PROFILE_ROWS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "model/model.h"
#include "rows/records.h"
#include "schedprof/profile.h"

struct ksyms;
struct usyms;

struct profile_maps {
	struct sp_records samples; /* struct sp_prof_key -> __u64 count */
	struct sp_records kstacks; /* __u64 stack id -> struct sp_prof_kstack */
	struct sp_records ustacks; /* __u64 stack id -> struct sp_prof_ustack */
};

void profile_maps_free(struct profile_maps *m);

/* Why the leaves were not named (in keys, not samples), and keys with raw-IP user frames. */
struct profile_unnamed {
	uint64_t kernel, buildid, nosym, image, nomap, empty;
	uint64_t raw_keys;
	uint64_t astray; /* keys whose user stack was cut at a frame astray (uframes.h) */
};

/*
 * Adds the rows of m to run->profile (whose totals the caller set from .bss), with the
 * stacks when callchains, and the build-ids of the user objects to run->objects; then sorts
 * the view. Entries the dump could not read are counted: samples in lost, stacks (and keys
 * whose stack the dump lacks) in missing_stacks. 0, -EINVAL (records of another size) or
 * -ENOMEM.
 */
int profile_rows_build(struct sp_run *run, const struct profile_maps *m,
		       const struct ksyms *ks, struct usyms *usyms, bool callchains,
		       struct profile_unnamed *ret_unnamed);

#endif
