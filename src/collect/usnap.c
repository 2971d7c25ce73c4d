// SPDX-License-Identifier: BSD-2-Clause
/* Snapshots of copied processes' mappings (usnap.h). */
#include <errno.h>
#include <stdbool.h>
#include <time.h>
#include "base/util.h"
#include "collect/usnap.h"
#include "symbols/usyms.h"

#define USNAP_AGAIN_NS (100 * 1000 * 1000ull)

void usnap_init(struct usnap *s)
{
	*s = (struct usnap){ .again_ns = USNAP_AGAIN_NS };
	hashmap__init(&s->looked, hashmap_long_hash, hashmap_long_equal, NULL);
	hashmap__init(&s->sized, hashmap_long_hash, hashmap_long_equal, NULL);
}

void usnap_free(struct usnap *s)
{
	hashmap__clear(&s->looked);
	hashmap__clear(&s->sized);
}

/* Whether image img's mappings are read again now (a PC in none of them). */
static bool again_due(struct usnap *s, long img)
{
	long last;
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (hashmap__find(&s->looked, img, &last) && now - (uint64_t)last < s->again_ns)
		return false;
	/* not kept on ENOMEM: read again next time, which is what it guards against */
	hashmap__set(&s->looked, img, (long)now, NULL, NULL);
	return true;
}

/*
 * Whether the image's mappings are read again now because the copy saw another code size than
 * the snapshot holds (libraries mapped or unmapped since), which no earlier read was for.
 */
static bool size_due(struct usnap *s, struct usyms *u, uint32_t tgid, uint32_t exec_id,
		     long img, uint64_t exec_vm)
{
	uint64_t pages;
	long last;

	if (!exec_vm || usyms__image_pages(u, (int)tgid, exec_id, &pages) || pages == exec_vm)
		return false;
	if (hashmap__find(&s->sized, img, &last) && (uint64_t)last == exec_vm)
		return false;
	/* not kept on ENOMEM: read again next time */
	hashmap__set(&s->sized, img, (long)exec_vm, NULL, NULL);
	return true;
}

int usnap_for_ip(struct usnap *s, struct usyms *u, uint32_t tgid, uint32_t exec_id,
		 uint64_t exec_vm, uint64_t ip)
{
	long img = (long)(((uint64_t)tgid << 32) | exec_id);
	struct usyms_mapping m;
	int err = usyms__map_ip(u, (int)tgid, exec_id, ip, &m);

	if (err == -ESRCH)
		s->snapshots++;
	else if (err == -ENOENT &&
		 (size_due(s, u, tgid, exec_id, img, exec_vm) || again_due(s, img)))
		s->resnaps++;
	else
		return 0;
	return usyms__add_pid(u, (int)tgid, exec_id) == -ENOMEM ? -ENOMEM : 0;
}
