/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Function symbols of one ELF file, with libelf for the tables and libdw's dwelf for the
 * build-id note. Everything needed is copied out, so no file descriptor or mapping stays open.
 */
#include "elfsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

struct elf_sym_ent {
	uint64_t addr;
	uint64_t size;
	uint64_t max_end; /* the highest addr + size among this entry and all before it */
	size_t name_off;  /* into elf_syms.strs */
	unsigned char bind;
};

struct elf_seg {
	uint64_t offset, vaddr, filesz, memsz, align;
	uint32_t flags;
};

struct elf_syms {
	char *path;
	char *sym_path; /* NULL: same as path */
	uint16_t e_type;

	struct elf_seg *segs;
	size_t nsegs;

	struct elf_sym_ent *syms;
	size_t nsyms, syms_cap;

	char *strs;
	size_t strs_len, strs_cap;

	uint8_t build_id[ELF_BUILD_ID_MAX];
	size_t build_id_len;
};

/* Opens path as an ELF object: 0, -errno from open(), -EISDIR, -ENOEXEC (not ELF), -ENOMEM. */
static int elf_file_open(const char *path, int *ret_fd, Elf **ret_elf)
{
	struct stat st;
	Elf *elf;
	int fd, err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto err_close;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto err_close;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -ENOEXEC;
		goto err_close;
	}

	/* ELF_C_READ, not _MMAP: pread() of the parts we need, and no SIGBUS if the file is
	 * truncated under us (a binary rebuilt in place while we symbolize) */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		err = -ENOEXEC;
		goto err_close;
	}
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		err = -ENOEXEC;
		goto err_close;
	}
	*ret_fd = fd;
	*ret_elf = elf;
	return 0;

err_close:
	close(fd);
	return err;
}

static void elf_file_close(int fd, Elf *elf)
{
	elf_end(elf);
	close(fd);
}

/* 0 and the build-id (copied into buf), -ENODATA, -ENOBUFS, -ENOEXEC. */
static int elf_get_build_id(Elf *elf, uint8_t *buf, size_t bufsz, size_t *ret_len)
{
	const void *id;
	ssize_t len;

	len = dwelf_elf_gnu_build_id(elf, &id);
	if (len < 0)
		return -ENOEXEC;
	if (len == 0)
		return -ENODATA;
	if ((size_t)len > bufsz)
		return -ENOBUFS;
	memcpy(buf, id, (size_t)len);
	*ret_len = (size_t)len;
	return 0;
}

int elf_read_build_id(const char *path, uint8_t *buf, size_t bufsz, size_t *ret_len)
{
	Elf *elf;
	int fd, err;

	err = elf_file_open(path, &fd, &elf);
	if (err)
		return err;
	err = elf_get_build_id(elf, buf, bufsz, ret_len);
	elf_file_close(fd, elf);
	return err;
}

char *elf_build_id_hex(const uint8_t *id, size_t len, char *buf, size_t bufsz)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (!bufsz)
		return buf;
	for (i = 0; i < len && 2 * i + 2 < bufsz; i++) {
		buf[2 * i] = digits[id[i] >> 4];
		buf[2 * i + 1] = digits[id[i] & 0xf];
	}
	buf[2 * i] = '\0';
	return buf;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct elf_seg *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return 0;
}

/*
 * A separate debug file (objcopy --only-keep-debug) keeps p_vaddr/p_memsz/p_align, but the
 * code is gone: p_filesz shrinks or drops to 0 and p_offset is rewritten, so file offsets
 * cannot be read from it. Linkers lay segments
 * out in vaddr order, each at the lowest file offset past the previous one that is congruent to
 * its p_vaddr modulo p_align (the ELF rule that lets mmap() work); rebuild the offsets that way.
 * This is a best effort, used only when no copy of the original file is known.
 */
static void guess_debug_segments(struct elf_syms *es)
{
	uint64_t end = 0;
	size_t i;

	for (i = 0; i < es->nsegs; i++) {
		struct elf_seg *s = &es->segs[i];
		uint64_t align = s->align;

		if (!align || (align & (align - 1)))
			align = 4096;
		s->offset = end + ((s->vaddr - end) & (align - 1));
		s->filesz = s->memsz;
		end = s->offset + s->memsz;
	}
}

/* Code sections without file contents: a separate debug file, not a runnable object. */
static bool is_debug_only(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) &&
		    (sh.sh_flags & SHF_EXECINSTR) && sh.sh_size)
			return sh.sh_type == SHT_NOBITS;
	}
	return false;
}

static int load_segments(Elf *elf, struct elf_syms *es)
{
	size_t phnum, i, n = 0;

	if (elf_getphdrnum(elf, &phnum) < 0)
		return -ENOEXEC;
	if (!phnum)
		return 0;

	es->segs = calloc(phnum, sizeof(*es->segs));
	if (!es->segs)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		es->segs[n++] = (struct elf_seg){
			.offset = ph.p_offset,
			.vaddr = ph.p_vaddr,
			.filesz = ph.p_filesz,
			.memsz = ph.p_memsz,
			.align = ph.p_align,
			.flags = ph.p_flags,
		};
	}
	es->nsegs = n;
	/* the ELF spec wants PT_LOADs in p_vaddr order; do not rely on it */
	qsort(es->segs, n, sizeof(*es->segs), cmp_seg);
	if (n && is_debug_only(elf))
		guess_debug_segments(es);
	return 0;
}

static int strs_add(struct elf_syms *es, const char *s, size_t *ret_off)
{
	size_t len = strlen(s) + 1;

	if (es->strs_len + len > es->strs_cap) {
		size_t cap = es->strs_cap ? es->strs_cap : 4096;
		char *p;

		while (cap < es->strs_len + len)
			cap *= 2;
		p = realloc(es->strs, cap);
		if (!p)
			return -ENOMEM;
		es->strs = p;
		es->strs_cap = cap;
	}
	memcpy(es->strs + es->strs_len, s, len);
	*ret_off = es->strs_len;
	es->strs_len += len;
	return 0;
}

static int syms_add(struct elf_syms *es, uint64_t addr, uint64_t size, unsigned char bind,
		    const char *name)
{
	struct elf_sym_ent *e;
	int err;

	if (es->nsyms == es->syms_cap) {
		size_t cap = es->syms_cap ? es->syms_cap * 2 : 256;

		e = realloc(es->syms, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		es->syms = e;
		es->syms_cap = cap;
	}
	e = &es->syms[es->nsyms];
	err = strs_add(es, name, &e->name_off);
	if (err)
		return err;
	if (size > UINT64_MAX - addr)
		size = UINT64_MAX - addr;
	e->addr = addr;
	e->size = size;
	e->bind = bind;
	es->nsyms++;
	return 0;
}

/* Adds the sized function symbols of every section of sh_type; returns how many, or -errno. */
static long load_symtab(Elf *elf, struct elf_syms *es, GElf_Word sh_type, bool is_arm)
{
	Elf_Scn *scn = NULL;
	long added = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != sh_type || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			unsigned char type;
			const char *name;
			uint64_t addr;
			GElf_Sym sym;
			int err;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			type = GELF_ST_TYPE(sym.st_info);
			if (type != STT_FUNC && type != STT_GNU_IFUNC)
				continue;
			if (!sym.st_size || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			addr = sym.st_value;
			if (is_arm)
				addr &= ~(uint64_t)1; /* the Thumb bit is not part of the address */
			err = syms_add(es, addr, sym.st_size, GELF_ST_BIND(sym.st_info), name);
			if (err)
				return err;
			added++;
		}
	}
	return added;
}

/* .symtab, else .dynsym; returns the number of symbols or -errno. */
static long load_symbols(Elf *elf, struct elf_syms *es)
{
	GElf_Ehdr eh;
	bool is_arm;
	long n;

	if (!gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	is_arm = eh.e_machine == EM_ARM;
	n = load_symtab(elf, es, SHT_SYMTAB, is_arm);
	if (n)
		return n;
	return load_symtab(elf, es, SHT_DYNSYM, is_arm);
}

static int bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

/* Entries refer to names by offset into the pool, which qsort_r() passes along. */
static int cmp_sym(const void *a, const void *b, void *strs)
{
	const struct elf_sym_ent *x = a, *y = b;
	const char *pool = strs;
	int rx, ry;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* larger first, so the last candidate at an address is the innermost one */
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	rx = bind_rank(x->bind);
	ry = bind_rank(y->bind);
	if (rx != ry)
		return rx - ry;
	return strcmp(pool + x->name_off, pool + y->name_off);
}

/* Sorts, drops aliases (same address and size: keeps the global one), computes max_end. */
static void finish_symbols(struct elf_syms *es)
{
	uint64_t max_end = 0;
	size_t i, n = 0;

	if (!es->nsyms)
		return;
	qsort_r(es->syms, es->nsyms, sizeof(*es->syms), cmp_sym, es->strs);
	for (i = 0; i < es->nsyms; i++) {
		if (n && es->syms[n - 1].addr == es->syms[i].addr &&
		    es->syms[n - 1].size == es->syms[i].size)
			continue;
		es->syms[n++] = es->syms[i];
	}
	es->nsyms = n;
	for (i = 0; i < n; i++) {
		uint64_t end = es->syms[i].addr + es->syms[i].size;

		if (end > max_end)
			max_end = end;
		es->syms[i].max_end = max_end;
	}
}

/* Loads the symbols of <debug_dir>/.build-id/xx/rest.debug if it carries our build-id. */
static int load_debug_file(struct elf_syms *es, const char *debug_dir)
{
	char hex[2 * ELF_BUILD_ID_MAX + 1], path[PATH_MAX];
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t id_len;
	Elf *elf;
	long n;
	int fd, err;

	if (es->build_id_len < 2 || !*debug_dir)
		return -ENOENT;
	elf_build_id_hex(es->build_id, es->build_id_len, hex, sizeof(hex));
	if ((size_t)snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", debug_dir, hex,
			     hex + 2) >= sizeof(path))
		return -ENAMETOOLONG;

	err = elf_file_open(path, &fd, &elf);
	if (err)
		return err;
	err = elf_get_build_id(elf, id, sizeof(id), &id_len);
	if (err)
		goto out;
	if (id_len != es->build_id_len || memcmp(id, es->build_id, id_len)) {
		err = -ESTALE;
		goto out;
	}
	n = load_symbols(elf, es);
	if (n < 0) {
		err = (int)n;
		goto out;
	}
	if (n > 0) {
		es->sym_path = strdup(path);
		if (!es->sym_path)
			err = -ENOMEM;
	}
out:
	elf_file_close(fd, elf);
	return err;
}

struct elf_syms *elf_syms__open_opts(const char *path, const struct elf_syms_opts *opts)
{
	const char *debug_dir = ELF_DEBUG_DIR_DEFAULT;
	struct elf_syms *es;
	GElf_Ehdr eh;
	Elf *elf;
	long n;
	int fd, err;

	if (opts && opts->debug_dir)
		debug_dir = opts->debug_dir;

	es = calloc(1, sizeof(*es));
	if (!es)
		return NULL;
	es->path = strdup(path);
	if (!es->path) {
		free(es);
		errno = ENOMEM;
		return NULL;
	}

	err = elf_file_open(path, &fd, &elf);
	if (err) {
		elf_syms__free(es);
		errno = -err;
		return NULL;
	}
	if (!gelf_getehdr(elf, &eh)) {
		err = -ENOEXEC;
		goto err_close;
	}
	es->e_type = eh.e_type;

	err = elf_get_build_id(elf, es->build_id, sizeof(es->build_id), &es->build_id_len);
	if (err == -ENODATA || err == -ENOBUFS)
		es->build_id_len = 0;
	else if (err)
		goto err_close;

	err = load_segments(elf, es);
	if (err)
		goto err_close;
	n = load_symbols(elf, es);
	if (n < 0) {
		err = (int)n;
		goto err_close;
	}
	elf_file_close(fd, elf);

	/* A missing or unreadable debug file is not an error: the file just has no symbols. */
	if (!n && load_debug_file(es, debug_dir) == -ENOMEM) {
		elf_syms__free(es);
		errno = ENOMEM;
		return NULL;
	}
	finish_symbols(es);
	return es;

err_close:
	elf_file_close(fd, elf);
	elf_syms__free(es);
	errno = -err;
	return NULL;
}

struct elf_syms *elf_syms__open(const char *path)
{
	return elf_syms__open_opts(path, NULL);
}

void elf_syms__free(struct elf_syms *es)
{
	if (!es)
		return;
	free(es->path);
	free(es->sym_path);
	free(es->segs);
	free(es->syms);
	free(es->strs);
	free(es);
}

int elf_syms__build_id(const struct elf_syms *es, const uint8_t **ret_id, size_t *ret_len)
{
	if (!es->build_id_len)
		return -ENODATA;
	*ret_id = es->build_id;
	*ret_len = es->build_id_len;
	return 0;
}

const char *elf_syms__lookup_vaddr(const struct elf_syms *es, uint64_t vaddr,
				   uint64_t *ret_sym_off)
{
	size_t lo = 0, hi = es->nsyms, i;

	/* first entry with addr > vaddr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (es->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* walk back over enclosing candidates: nested or overlapping symbols are rare, and
	 * max_end stops the walk as soon as nothing earlier can reach vaddr */
	for (i = lo; i > 0; i--) {
		const struct elf_sym_ent *e = &es->syms[i - 1];

		if (vaddr - e->addr < e->size) {
			if (ret_sym_off)
				*ret_sym_off = vaddr - e->addr;
			return es->strs + e->name_off;
		}
		if (e->max_end <= vaddr)
			break;
	}
	return NULL;
}

int elf_syms__offset_to_vaddr(const struct elf_syms *es, uint64_t file_offset, uint64_t *ret_vaddr)
{
	int pass;
	size_t i;

	/* code lives in executable segments: look there first in case file ranges overlap */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < es->nsegs; i++) {
			const struct elf_seg *s = &es->segs[i];

			if (pass == 0 && !(s->flags & PF_X))
				continue;
			if (file_offset >= s->offset && file_offset - s->offset < s->filesz) {
				*ret_vaddr = s->vaddr + (file_offset - s->offset);
				return 0;
			}
		}
	}
	return -ERANGE;
}

const char *elf_syms__lookup_offset(const struct elf_syms *es, uint64_t file_offset,
				    uint64_t *ret_sym_off)
{
	uint64_t vaddr;

	if (elf_syms__offset_to_vaddr(es, file_offset, &vaddr))
		return NULL;
	return elf_syms__lookup_vaddr(es, vaddr, ret_sym_off);
}

bool elf_syms__is_pie(const struct elf_syms *es)
{
	return es->e_type == ET_DYN;
}

size_t elf_syms__count(const struct elf_syms *es)
{
	return es->nsyms;
}

const char *elf_syms__path(const struct elf_syms *es)
{
	return es->path;
}

const char *elf_syms__symbols_path(const struct elf_syms *es)
{
	return es->sym_path ? es->sym_path : es->path;
}
