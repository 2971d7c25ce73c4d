// SPDX-License-Identifier: BSD-2-Clause
/* Unwind tables kept in the per-boot cache (cfi_store.h). */
#include <string.h>
#include "base/log.h"
#include "collect/cfi_store.h"
#include "loader/cache.h"

static int store_load(void *ctx, const char *key, void **ret_data, size_t *ret_size)
{
	const struct cfi_store *s = ctx;
	int err = cache_load_entry(NULL, CACHE_CFI, key, s->table_bytes, ret_data, ret_size);

	if (!err)
		dlog("%s: unwind table %s: read from the cache", s->who, key);
	return err;
}

static void store_save(void *ctx, const char *key, const void *data, size_t size)
{
	struct cfi_store *s = ctx;
	int err = cache_store_entry(NULL, CACHE_CFI, key, data, size, s->table_bytes);

	dlog("%s: unwind table %s: compiled, %s%s", s->who, key, err ? "not kept: " : "kept",
	     err ? strerror(-err) : "");
	if (err) {
		s->failed++;
		s->err = err;
	}
}

const struct ucfi_store *cfi_store_init(struct cfi_store *s, const char *who,
					uint64_t table_bytes)
{
	*s = (struct cfi_store){ .store = { .load = store_load, .save = store_save, .ctx = s },
				 .who = who,
				 .table_bytes = table_bytes ? table_bytes : UCFI_DEF_BYTES };
	return cache_disabled() ? NULL : &s->store;
}
