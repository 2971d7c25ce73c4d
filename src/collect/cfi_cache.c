// SPDX-License-Identifier: BSD-2-Clause
/* Unwind rows in the per-boot cache, by build id (cfi_cache.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootcache.h"
#include "cfi_cache.h"
#include "elfsyms.h"

/* bumped whenever struct cfi_row, struct cfi_stats or the compiler's rules change */
#define CFI_CACHE_MAGIC "spcfi2"

/* The file's data: this header, then n rows of struct disk_row. */
struct disk_header {
	uint64_t n;
	struct cfi_stats stats;
};

/* struct cfi_row without its padding, so that the file holds no uninitialised bytes */
struct disk_row {
	uint64_t pc;
	uint32_t len;
	int32_t cfa_off;
	int16_t fp_off;
	uint8_t cfa, fp;
	uint8_t zero[4];
};

/* "cfi-<build id>", "-d" when a debug file was read: 0, or -ENODATA without a build id. */
static int cache_name(const char *path, const char *debug_path, char *buf, size_t len)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	char hex[2 * ELF_BUILD_ID_MAX + 1];
	size_t n;
	int rc = elf_read_build_id(path, id, sizeof(id), &n);

	if (rc)
		return rc;
	if (!n)
		return -ENODATA;
	elf_build_id_hex(id, n, hex, sizeof(hex));
	snprintf(buf, len, "cfi-%s%s", hex, debug_path ? "-d" : "");
	return 0;
}

/* data (size bytes) into t when it is a well-formed table: 0, else -EINVAL or -ENOMEM. */
static int decode(const void *data, size_t size, struct cfi_table *t)
{
	const struct disk_header *h = data;
	const struct disk_row *d;
	size_t i;

	if (size < sizeof(*h) || (size - sizeof(*h)) % sizeof(*d) ||
	    h->n != (size - sizeof(*h)) / sizeof(*d))
		return -EINVAL;
	d = (const struct disk_row *)(h + 1);
	for (i = 0; i < h->n; i++)
		if (d[i].cfa >= CFI_CFA_KINDS || d[i].fp >= CFI_FP_KINDS || !d[i].len ||
		    d[i].pc + d[i].len < d[i].pc ||
		    (i && d[i].pc < d[i - 1].pc + d[i - 1].len))
			return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->rows = calloc(h->n ? h->n : 1, sizeof(*t->rows));
	if (!t->rows)
		return -ENOMEM;
	for (i = 0; i < h->n; i++)
		t->rows[i] = (struct cfi_row){.pc = d[i].pc, .len = d[i].len,
					      .cfa_off = d[i].cfa_off, .fp_off = d[i].fp_off,
					      .cfa = d[i].cfa, .fp = d[i].fp};
	t->n = t->cap = h->n;
	t->stats = h->stats;
	return 0;
}

static void store(const char *dir, const char *name, const struct cfi_table *t)
{
	size_t size = sizeof(struct disk_header) + t->n * sizeof(struct disk_row), i;
	struct disk_header *h = calloc(1, size);
	struct disk_row *d;

	if (!h)
		return;
	h->n = t->n;
	h->stats = t->stats;
	d = (struct disk_row *)(h + 1);
	for (i = 0; i < t->n; i++)
		d[i] = (struct disk_row){.pc = t->rows[i].pc, .len = t->rows[i].len,
					 .cfa_off = t->rows[i].cfa_off,
					 .fp_off = t->rows[i].fp_off, .cfa = t->rows[i].cfa,
					 .fp = t->rows[i].fp};
	/* what an object's CFI says is no secret: readable by all, like the BTF caches */
	boot_cache_store_shared(dir, name, CFI_CACHE_MAGIC, h, size);
	free(h);
}

int cfi_cache_get(const char *dir, const char *path, const char *debug_path, size_t max_rows,
		  struct cfi_table *t, bool *cached)
{
	char name[2 * ELF_BUILD_ID_MAX + 16];
	void *data = NULL;
	size_t size = 0;
	int rc;

	if (cached)
		*cached = false;
	memset(t, 0, sizeof(*t));
	if (cache_name(path, debug_path, name, sizeof(name)))
		return cfi_compile(path, debug_path, max_rows, t);
	if (!boot_cache_load_alloc(dir, name, CFI_CACHE_MAGIC, UINT32_MAX, &data, &size)) {
		rc = decode(data, size, t);
		free(data);
		if (!rc) {
			if (cached)
				*cached = true;
			if (max_rows && t->n > max_rows) {
				t->n = max_rows;
				return -E2BIG;
			}
			return 0;
		}
		if (rc == -ENOMEM)
			return rc;
	}
	rc = cfi_compile(path, debug_path, max_rows, t);
	if (!rc)
		store(dir, name, t);
	return rc;
}
