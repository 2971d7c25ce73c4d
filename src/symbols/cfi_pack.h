/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A compiled CFI table (cfi.h) as bytes, to keep it between runs: the rows in a fixed
 * little-endian layout, after a head naming the object (its GNU build-id), the row limit it
 * was compiled under and whether it was cut there, and the compiler's statistics. Bytes read
 * back are checked as if hostile: sizes, kinds, and rows sorted and disjoint, so a table that
 * unpacks is one cfi_table_find() can search.
 */
#ifndef SCHEDPROF_CFI_PACK_H
#define SCHEDPROF_CFI_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/cfi.h"

#define CFI_PACK_ID_MAX 32 /* the longest build-id kept */

/* What a packed table was compiled from. */
struct cfi_pack_key {
	uint8_t build_id[CFI_PACK_ID_MAX];
	uint32_t id_len;
	uint64_t max_rows; /* the compile's row limit (0: none) */
};

/* t as bytes: *ret_data (malloc'd) and *ret_size. 0, -EINVAL (id_len) or -ENOMEM. */
int cfi_pack(const struct cfi_pack_key *key, const struct cfi_table *t, bool cut,
	     void **ret_data, size_t *ret_size);

/*
 * The table packed in data, when it was packed under key: *t (zeroed first; cfi_table_free()
 * it) and *ret_cut. 0, -ESTALE (another object or row limit), -EBADMSG (not a packed table,
 * or one whose rows cfi_table_find() could not search) or -ENOMEM.
 */
int cfi_unpack(const struct cfi_pack_key *key, const void *data, size_t size,
	       struct cfi_table *t, bool *ret_cut);

#endif /* SCHEDPROF_CFI_PACK_H */
