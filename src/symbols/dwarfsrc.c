/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DWARF positions with libdw (see dwarfsrc.h): dwarf_addrdie() finds the unit, its line table
 * the address's own line, and dwarf_getscopes() the nest of scopes at the address, innermost
 * first, whose DW_TAG_inlined_subroutine entries are the inlined calls: each one's
 * DW_AT_call_file/DW_AT_call_line is the position in the scope that inlined it.
 */
#include "symbols/dwarfsrc.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdw.h>

#include "symbols/demangle.h"
#include "base/hashmap.h"
#include "base/util.h"

/* An address range of a unit, for files without .debug_aranges. */
struct cu_range {
	uint64_t start, end;
	Dwarf_Off die; /* the unit's DIE */
};

struct dwarf_src {
	int fd;
	Elf *elf;
	Dwarf *dw;
	struct cu_range *ranges; /* built on the first address .debug_aranges does not cover */
	size_t nranges;
	bool ranges_built;
	struct hashmap cache; /* vaddr -> struct dwarf_pos * (NULL: nothing covers it) */
	char **owned;	      /* demangled names */
	size_t nowned, owned_cap;
};

struct dwarf_src *dwarf_src__open(const char *path)
{
	struct dwarf_src *d;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOTSUP;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	hashmap__init(&d->cache, hashmap_long_hash, hashmap_long_equal, NULL);
	d->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0) {
		err = errno;
		goto fail;
	}
	d->elf = elf_begin(d->fd, ELF_C_READ_MMAP, NULL);
	if (!d->elf || elf_kind(d->elf) != ELF_K_ELF) {
		err = ENOEXEC;
		goto fail;
	}
	d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	if (!d->dw) {
		err = ENODATA;
		goto fail;
	}
	return d;
fail:
	dwarf_src__free(d);
	errno = err;
	return NULL;
}

static void pos_free(long key, long value)
{
	struct dwarf_pos *p = (struct dwarf_pos *)value;

	(void)key;
	if (p)
		free((void *)p->inlined);
	free(p);
}

void dwarf_src__free(struct dwarf_src *d)
{
	size_t i;

	if (!d)
		return;
	hashmap__clear_with(&d->cache, pos_free);
	free(d->ranges);
	for (i = 0; i < d->nowned; i++)
		free(d->owned[i]);
	free(d->owned);
	if (d->dw)
		dwarf_end(d->dw);
	if (d->elf)
		elf_end(d->elf);
	if (d->fd >= 0)
		close(d->fd);
	free(d);
}

static int own(struct dwarf_src *d, char *s)
{
	if (d->nowned == d->owned_cap) {
		size_t cap = d->owned_cap ? 2 * d->owned_cap : 64;
		char **p = realloc(d->owned, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		d->owned = p;
		d->owned_cap = cap;
	}
	d->owned[d->nowned++] = s;
	return 0;
}

/* The name of an inlined subroutine: its demangled linkage name, else DW_AT_name. */
static int scope_name(struct dwarf_src *d, Dwarf_Die *die, struct usym_inline *ret)
{
	Dwarf_Attribute attr;
	const char *mangled = NULL;
	char *dem;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		mangled = dwarf_formstring(&attr);
	if (mangled && (dem = sp_demangle(mangled))) {
		if (own(d, dem)) {
			free(dem);
			return -ENOMEM;
		}
		ret->name = dem;
		ret->system_name = mangled;
		return 0;
	}
	ret->name = dwarf_attr_integrate(die, DW_AT_name, &attr) ? dwarf_formstring(&attr) : NULL;
	ret->system_name = NULL;
	return 0;
}

/* The call site of an inlined scope, through the unit's file table. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *die, const char **file, unsigned int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word idx = 0, ln = 0;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (dwarf_attr(die, DW_AT_call_line, &attr) && !dwarf_formudata(&attr, &ln))
		*line = (unsigned int)ln;
	if (dwarf_attr(die, DW_AT_call_file, &attr) && !dwarf_formudata(&attr, &idx) &&
	    !dwarf_getsrcfiles(cu, &files, &nfiles) && idx < nfiles)
		*file = dwarf_filesrc(files, idx, NULL, NULL);
}

static int cmp_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Every unit's address ranges (DW_AT_low_pc/high_pc or DW_AT_ranges), sorted. */
static int build_ranges(struct dwarf_src *d)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	size_t cap = 0;
	uint8_t unit_type;
	Dwarf_Half version;

	d->ranges_built = true;
	while (!dwarf_get_units(d->dw, cu, &cu, &version, &unit_type, &cudie, NULL)) {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;

		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		while ((off = dwarf_ranges(&cudie, off, &base, &start, &end)) > 0) {
			if (end <= start)
				continue;
			if (d->nranges == cap) {
				struct cu_range *r;

				cap = cap ? 2 * cap : 64;
				r = realloc(d->ranges, cap * sizeof(*r));
				if (!r)
					return -ENOMEM;
				d->ranges = r;
			}
			d->ranges[d->nranges++] = (struct cu_range){ start, end,
								     dwarf_dieoffset(&cudie) };
		}
	}
	qsort(d->ranges, d->nranges, sizeof(*d->ranges), cmp_range);
	return 0;
}

/*
 * The unit of an address: .debug_aranges through dwarf_addrdie(), else (clang emits no
 * .debug_aranges) the units' own ranges. 1 found, 0 not, -ENOMEM.
 */
static int find_cu(struct dwarf_src *d, uint64_t vaddr, Dwarf_Die *cu)
{
	size_t lo;
	int err;

	if (dwarf_addrdie(d->dw, vaddr, cu))
		return 1;
	if (!d->ranges_built && (err = build_ranges(d)))
		return err;
	lo = upper_bound(d->ranges, d->nranges, sizeof(*d->ranges),
			      offsetof(struct cu_range, start), vaddr);
	/* ranges of different units do not overlap in practice; look back a little anyway */
	for (size_t i = lo; i > 0 && lo - i < 8; i--) {
		const struct cu_range *r = &d->ranges[i - 1];

		if (vaddr < r->end)
			return dwarf_offdie(d->dw, r->die, cu) ? 1 : 0;
	}
	return 0;
}

static int resolve(struct dwarf_src *d, uint64_t vaddr, struct dwarf_pos **ret)
{
	struct usym_inline *inl = NULL;
	Dwarf_Die cu, *scopes = NULL;
	struct dwarf_pos *p;
	Dwarf_Line *l;
	const char *file = NULL;
	unsigned int line = 0;
	int n, i, k = 0, err = 0;

	*ret = NULL;
	err = find_cu(d, vaddr, &cu);
	if (err <= 0)
		return err;
	err = 0;
	l = dwarf_getsrc_die(&cu, vaddr);
	if (l) {
		int ln = 0;

		file = dwarf_linesrc(l, NULL, NULL);
		if (!dwarf_lineno(l, &ln) && ln > 0)
			line = (unsigned int)ln;
	}
	n = dwarf_getscopes(&cu, vaddr, &scopes);
	if (n > 0) {
		inl = calloc((size_t)n, sizeof(*inl));
		if (!inl) {
			err = -ENOMEM;
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		err = scope_name(d, &scopes[i], &inl[k]);
		if (err)
			goto out;
		inl[k].file = file;
		inl[k].line = line;
		k++;
		call_site(&cu, &scopes[i], &file, &line);
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		err = -ENOMEM;
		goto out;
	}
	p->file = file;
	p->line = line;
	p->inlined = k ? inl : NULL;
	p->ninlined = (size_t)k;
	if (!k)
		free(inl);
	inl = NULL;
	*ret = p;
out:
	free(inl);
	free(scopes);
	return err;
}

int dwarf_src__lookup(struct dwarf_src *d, uint64_t vaddr, const struct dwarf_pos **ret)
{
	struct dwarf_pos *p;
	long found;
	int err;

	if (hashmap__find(&d->cache, (long)vaddr, &found)) {
		p = (struct dwarf_pos *)found;
	} else {
		err = resolve(d, vaddr, &p);
		if (err)
			return err;
		err = hashmap__add(&d->cache, (long)vaddr, (long)p);
		if (err) {
			pos_free(0, (long)p);
			return err;
		}
	}
	if (!p)
		return -ENOENT;
	*ret = p;
	return 0;
}
