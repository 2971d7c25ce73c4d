/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The mappings of a process whose user stack was copied (the profile's copies, ucopy.h;
 * --stacks' copies, urules.h), read as the copy is drained: the process may exit before
 * its copy is unwound.
 */
#ifndef SCHEDPROF_USNAP_H
#define SCHEDPROF_USNAP_H

#include <stdint.h>
#include "base/hashmap.h"

struct usyms;

struct usnap {
	struct hashmap looked; /* (tgid << 32 | exec_id) -> when its PC-in-no-file re-read was */
	struct hashmap sized;  /* ... -> the code size (pages) it was last read again for */
	uint64_t again_ns;     /* a PC in no file reads an image again at most this often */
	uint64_t snapshots;    /* images first read at their copy */
	uint64_t resnaps;      /* ... read again for a PC in no file */
};

void usnap_init(struct usnap *s);
void usnap_free(struct usnap *s);

/*
 * For a copy of image (tgid, exec_id) whose PC is ip, taken when the image had exec_vm pages
 * of code (0: not known): u snapshots the process's mappings when it has none of the image,
 * and again when ip is in none of them. The snapshot an announcement took while the dynamic
 * loader ran is older than the libraries it maps next: it is read again at once when the
 * copy's code size differs from the snapshot's, once for each size. Otherwise (JIT code is
 * in no file whatever the snapshot's age) at most every 100 ms per image. 0 or -ENOMEM.
 */
int usnap_for_ip(struct usnap *s, struct usyms *u, uint32_t tgid, uint32_t exec_id,
		 uint64_t exec_vm, uint64_t ip);

#endif
