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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <zlib.h>

#include "addrsearch.h"
#include "debuginfod.h"
#include "demangle.h"
#include "dwarfsrc.h"
#include "usyms.h"

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

struct elf_range {
	uint64_t start, end; /* link-time vaddrs */
};

struct elf_syms {
	char *path;
	char *sym_path; /* NULL: same as path */
	char *dbg_path; /* the separate debug file found, or NULL */
	uint16_t e_type;
	bool has_dwarf; /* the file itself has .debug_info */

	struct elf_range *fdes; /* .eh_frame functions, sorted; only without .symtab */
	size_t nfdes;

	char **dem;	       /* per symbol: demangled name, NOT_MANGLED, or NULL (not tried) */
	struct dwarf_src *dw;  /* opened on the first lookup with lines */
	bool dw_tried;

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

static Elf_Scn *find_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* The file has DWARF of its own (a .debug_info with contents). */
static bool elf_has_dwarf(Elf *elf)
{
	Elf_Scn *scn = find_section(elf, ".debug_info");
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && sh.sh_size;
}

/* CRC32 of a whole file, as .gnu_debuglink records it (zlib's CRC); -errno. */
static int file_crc32(const char *path, uint32_t *ret)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)n);
	close(fd);
	if (n < 0)
		return -EIO;
	*ret = (uint32_t)crc;
	return 0;
}

/* .gnu_debuglink: the debug file's name and its CRC32; -ENOENT without one. */
static int read_debuglink(Elf *elf, char *name, size_t namesz, uint32_t *ret_crc)
{
	Elf_Scn *scn = find_section(elf, ".gnu_debuglink");
	Elf_Data *data, crc_data, crc_src;
	size_t len, crc_off;
	uint32_t crc;
	GElf_Ehdr eh;

	if (!scn || !(data = elf_getdata(scn, NULL)) || !data->d_buf || !gelf_getehdr(elf, &eh))
		return -ENOENT;
	len = strnlen(data->d_buf, data->d_size);
	crc_off = (len + 4) & ~(size_t)3;
	if (!len || len >= namesz || crc_off + 4 > data->d_size)
		return -ENOENT;
	memcpy(name, data->d_buf, len + 1);
	/* the CRC is in the file's byte order */
	crc_src = (Elf_Data){ .d_buf = (char *)data->d_buf + crc_off, .d_type = ELF_T_WORD,
			      .d_size = 4, .d_version = EV_CURRENT };
	crc_data = (Elf_Data){ .d_buf = &crc, .d_type = ELF_T_WORD, .d_size = 4,
			       .d_version = EV_CURRENT };
	if (!gelf_xlatetom(elf, &crc_data, &crc_src, eh.e_ident[EI_DATA]))
		return -ENOENT;
	*ret_crc = crc;
	return 0;
}

/* A candidate debug file: open, and (with want_id) carrying our build-id. */
static int debug_open(const struct elf_syms *es, const char *path, bool want_id, int *ret_fd,
		      Elf **ret_elf)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t id_len;
	int err;

	err = elf_file_open(path, ret_fd, ret_elf);
	if (err || !want_id)
		return err;
	err = elf_get_build_id(*ret_elf, id, sizeof(id), &id_len);
	if (!err && (id_len != es->build_id_len || memcmp(id, es->build_id, id_len)))
		err = -ESTALE;
	if (err)
		elf_file_close(*ret_fd, *ret_elf);
	return err;
}

/* The .gnu_debuglink candidates, in gdb's order; the first one with the right CRC. */
static int find_debuglink(Elf *elf, const struct elf_syms *es, const char *debug_dir,
			  char *path, size_t pathsz)
{
	char name[256], dir[PATH_MAX];
	const char *slash = strrchr(es->path, '/');
	uint32_t want, crc;
	int i;

	if (read_debuglink(elf, name, sizeof(name), &want) || !slash ||
	    (size_t)(slash - es->path) >= sizeof(dir))
		return -ENOENT;
	memcpy(dir, es->path, (size_t)(slash - es->path));
	dir[slash - es->path] = '\0';
	for (i = 0; i < 3; i++) {
		int n;

		if (i == 0)
			n = snprintf(path, pathsz, "%s/%s", dir, name);
		else if (i == 1)
			n = snprintf(path, pathsz, "%s/.debug/%s", dir, name);
		else if (*debug_dir && dir[0] == '/')
			n = snprintf(path, pathsz, "%s%s/%s", debug_dir, dir, name);
		else
			break;
		if (n < 0 || (size_t)n >= pathsz || !strcmp(path, es->path))
			continue;
		if (!file_crc32(path, &crc) && crc == want)
			return 0;
	}
	return -ENOENT;
}

/*
 * Finds the separate debug file (see elfsyms.h for the order) and opens it. Returns 0 with
 * *ret_fd, *ret_elf and es->dbg_path set, -ENOENT, -ENOMEM.
 */
static int find_debug_file(Elf *elf, struct elf_syms *es, const struct elf_syms_opts *opts,
			   const char *debug_dir, int *ret_fd, Elf **ret_elf)
{
	char hex[2 * ELF_BUILD_ID_MAX + 1], path[PATH_MAX];
	char *fetched = NULL;
	int err;

	if (es->build_id_len >= 2 && *debug_dir) {
		elf_build_id_hex(es->build_id, es->build_id_len, hex, sizeof(hex));
		if ((size_t)snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", debug_dir,
				     hex, hex + 2) < sizeof(path) &&
		    !debug_open(es, path, true, ret_fd, ret_elf))
			goto found;
	}
	if (!find_debuglink(elf, es, debug_dir, path, sizeof(path)) &&
	    !debug_open(es, path, false, ret_fd, ret_elf))
		goto found;
	if (opts && opts->debuginfod && es->build_id_len) {
		err = sp_debuginfod_find_debuginfo(es->build_id, es->build_id_len, &fetched);
		if (err == -ENOMEM)
			return err;
		if (!err && (size_t)snprintf(path, sizeof(path), "%s", fetched) < sizeof(path) &&
		    !debug_open(es, path, true, ret_fd, ret_elf)) {
			free(fetched);
			goto found;
		}
		free(fetched);
	}
	return -ENOENT;
found:
	es->dbg_path = strdup(path);
	if (!es->dbg_path) {
		elf_file_close(*ret_fd, *ret_elf);
		return -ENOMEM;
	}
	return 0;
}

/* The debug file's .symtab, when it has one, replaces what the file itself gave (.dynsym). */
static int load_debug_symbols(Elf *dbg, struct elf_syms *es, bool is_arm)
{
	size_t nsyms = es->nsyms;
	long n;

	n = load_symtab(dbg, es, SHT_SYMTAB, is_arm);
	if (n < 0)
		return (int)n;
	if (!n)
		return 0;
	/* the debug file's entries were appended: move them over the old ones */
	memmove(es->syms, es->syms + nsyms, (size_t)n * sizeof(*es->syms));
	es->nsyms = (size_t)n; /* the old names stay in the pool, unreferenced */
	es->sym_path = strdup(es->dbg_path);
	return es->sym_path ? 0 : -ENOMEM;
}

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * The range of the FDE at fde_vaddr that .eh_frame_hdr says starts at start: its pc_begin
 * is read as pcrel|sdata4 (what gcc, clang and the linkers emit for .eh_frame), and the
 * guess is checked against start before pc_range is trusted. 0 when it does not check out.
 */
static uint64_t fde_range(const Elf_Data *eh, uint64_t eh_addr, uint64_t fde_vaddr,
			  uint64_t start)
{
	const unsigned char *q;
	uint64_t at;

	if (fde_vaddr < eh_addr || fde_vaddr - eh_addr > eh->d_size ||
	    eh->d_size - (fde_vaddr - eh_addr) < 16)
		return 0;
	q = (const unsigned char *)eh->d_buf + (fde_vaddr - eh_addr);
	if (get_u32(q) == 0xffffffff || get_u32(q) < 12) /* 64-bit DWARF, or too short */
		return 0;
	at = fde_vaddr + 8 + (uint64_t)(int64_t)(int32_t)get_u32(q + 8);
	return at == start ? get_u32(q + 12) : 0;
}

/*
 * The functions .eh_frame describes, for files without .symtab: .eh_frame_hdr's sorted table
 * (version 1, its usual udata4 count and datarel|sdata4 entries) gives each FDE's start and
 * address, the FDE its length. An FDE we cannot read ends where the next one starts.
 */
static int load_fdes(Elf *elf, struct elf_syms *es)
{
	Elf_Scn *scn = find_section(elf, ".eh_frame_hdr"), *eh_scn = find_section(elf, ".eh_frame");
	const unsigned char *p;
	Elf_Data *data, *eh = NULL;
	GElf_Shdr sh, eh_sh;
	size_t ptr_len, count, i;

	if (!scn || !gelf_getshdr(scn, &sh) || !(data = elf_getdata(scn, NULL)) || !data->d_buf ||
	    data->d_size < 4)
		return 0;
	if (eh_scn && gelf_getshdr(eh_scn, &eh_sh) && eh_sh.sh_type == SHT_PROGBITS)
		eh = elf_getdata(eh_scn, NULL);
	p = data->d_buf;
	if (p[0] != 1 || p[2] != 0x03 || p[3] != 0x3b || p[1] == 0xff)
		return 0;
	ptr_len = (p[1] & 0x0f) == 0x04 || (p[1] & 0x0f) == 0x0c ? 8 : 4;
	if (data->d_size < 4 + ptr_len + 4)
		return 0;
	count = get_u32(p + 4 + ptr_len);
	p += 4 + ptr_len + 4;
	if (!count || count > (data->d_size - (size_t)(p - (const unsigned char *)data->d_buf)) / 8)
		return 0;
	es->fdes = calloc(count, sizeof(*es->fdes));
	if (!es->fdes)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		uint64_t start = sh.sh_addr + (uint64_t)(int64_t)(int32_t)get_u32(p + 8 * i);
		uint64_t fde = sh.sh_addr + (uint64_t)(int64_t)(int32_t)get_u32(p + 8 * i + 4);
		uint64_t len = eh && eh->d_buf ? fde_range(eh, eh_sh.sh_addr, fde, start) : 0;

		if (!len && i + 1 < count)
			len = sh.sh_addr + (uint64_t)(int64_t)(int32_t)get_u32(p + 8 * (i + 1)) - start;
		if (!len || len > (1u << 30) || (es->nfdes && start < es->fdes[es->nfdes - 1].end))
			continue;
		es->fdes[es->nfdes++] = (struct elf_range){ start, start + len };
	}
	return 0;
}

struct elf_syms *elf_syms__open_opts(const char *path, const struct elf_syms_opts *opts)
{
	const char *debug_dir = ELF_DEBUG_DIR_DEFAULT;
	struct elf_syms *es;
	bool has_symtab;
	GElf_Ehdr eh;
	Elf *elf, *dbg;
	long n;
	int fd, dbg_fd, err;

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
	n = load_symtab(elf, es, SHT_SYMTAB, eh.e_machine == EM_ARM);
	has_symtab = n > 0;
	if (!n)
		n = load_symtab(elf, es, SHT_DYNSYM, eh.e_machine == EM_ARM);
	if (n < 0) {
		err = (int)n;
		goto err_close;
	}
	es->has_dwarf = elf_has_dwarf(elf);

	/* A missing or unreadable debug file is not an error: the file just has fewer names. */
	if (!has_symtab || (opts && opts->dwarf && !es->has_dwarf)) {
		err = find_debug_file(elf, es, opts, debug_dir, &dbg_fd, &dbg);
		if (err == -ENOMEM)
			goto err_close;
		if (!err) {
			if (!has_symtab) {
				err = load_debug_symbols(dbg, es, eh.e_machine == EM_ARM);
				has_symtab = es->sym_path != NULL;
			}
			elf_file_close(dbg_fd, dbg);
			if (err)
				goto err_close;
		}
	}
	if (!has_symtab) {
		err = load_fdes(elf, es);
		if (err)
			goto err_close;
	}
	elf_file_close(fd, elf);
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

/* The dem[] mark of names that are not mangled (or that libiberty could not demangle). */
static char not_mangled[1];

void elf_syms__free(struct elf_syms *es)
{
	if (!es)
		return;
	if (es->dem) {
		for (size_t i = 0; i < es->nsyms; i++) {
			if (es->dem[i] != not_mangled)
				free(es->dem[i]);
		}
		free(es->dem);
	}
	dwarf_src__free(es->dw);
	free(es->fdes);
	free(es->path);
	free(es->sym_path);
	free(es->dbg_path);
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

/* The index of the innermost symbol containing vaddr, or -1. */
static long find_sym(const struct elf_syms *es, uint64_t vaddr)
{
	size_t lo = addr_upper_bound(es->syms, es->nsyms, sizeof(*es->syms),
				     offsetof(struct elf_sym_ent, addr), vaddr), i;

	/* walk back over enclosing candidates: nested or overlapping symbols are rare, and
	 * max_end stops the walk as soon as nothing earlier can reach vaddr */
	for (i = lo; i > 0; i--) {
		const struct elf_sym_ent *e = &es->syms[i - 1];

		if (vaddr - e->addr < e->size)
			return (long)(i - 1);
		if (e->max_end <= vaddr)
			break;
	}
	return -1;
}

const char *elf_syms__lookup_vaddr(const struct elf_syms *es, uint64_t vaddr,
				   uint64_t *ret_sym_off)
{
	long i = find_sym(es, vaddr);

	if (i < 0)
		return NULL;
	if (ret_sym_off)
		*ret_sym_off = vaddr - es->syms[i].addr;
	return es->strs + es->syms[i].name_off;
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

int elf_syms__vaddr_to_offset(const struct elf_syms *es, uint64_t vaddr, uint64_t *ret_offset)
{
	size_t i;

	for (i = 0; i < es->nsegs; i++) {
		const struct elf_seg *s = &es->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*ret_offset = s->offset + (vaddr - s->vaddr);
			return 0;
		}
	}
	return -ERANGE;
}

/* The demangled name of symbol i, or NULL when it is not mangled; -ENOMEM as NULL + errno. */
static const char *sym_demangled(struct elf_syms *es, size_t i)
{
	const char *name = es->strs + es->syms[i].name_off;
	char *d;

	if (!sp_name_is_mangled(name))
		return NULL;
	if (!es->dem) {
		es->dem = calloc(es->nsyms, sizeof(*es->dem));
		if (!es->dem)
			return NULL;
	}
	if (!es->dem[i]) {
		d = sp_demangle(name);
		if (!d && errno == ENOMEM)
			return NULL;
		es->dem[i] = d ? d : not_mangled;
	}
	return es->dem[i] == not_mangled ? NULL : es->dem[i];
}

/* The .eh_frame function containing vaddr, or NULL (the ranges do not overlap). */
static const struct elf_range *find_fde(const struct elf_syms *es, uint64_t vaddr)
{
	size_t i = addr_upper_bound(es->fdes, es->nfdes, sizeof(*es->fdes),
				    offsetof(struct elf_range, start), vaddr);

	return i && vaddr < es->fdes[i - 1].end ? &es->fdes[i - 1] : NULL;
}

/* DWARF of the address, from the file itself or its debug file (opened once). */
static int lookup_lines(struct elf_syms *es, uint64_t vaddr, struct usym *ret)
{
	const struct dwarf_pos *pos;
	const char *path = es->dbg_path ? es->dbg_path : es->has_dwarf ? es->path : NULL;
	int err;

	if (!es->dw_tried) {
		es->dw_tried = true;
		if (path)
			es->dw = dwarf_src__open(path);
		if (!es->dw && errno == ENOMEM)
			return -ENOMEM;
	}
	if (!es->dw)
		return 0;
	err = dwarf_src__lookup(es->dw, vaddr, &pos);
	if (err)
		return err == -ENOENT ? 0 : err;
	ret->file = pos->file;
	ret->line = pos->line;
	ret->inlined = pos->inlined;
	ret->ninlined = pos->ninlined;
	return 0;
}

int elf_syms__lookup_sym(struct elf_syms *es, uint64_t file_offset, bool lines, struct usym *ret)
{
	const struct elf_range *fde;
	const char *dem;
	uint64_t vaddr, start;
	long i;
	int err;

	ret->name = ret->system_name = NULL;
	ret->sym_off = ret->func_start = 0;
	ret->file = NULL;
	ret->line = 0;
	ret->inlined = NULL;
	ret->ninlined = 0;
	if (elf_syms__offset_to_vaddr(es, file_offset, &vaddr))
		return -ENOENT;
	i = find_sym(es, vaddr);
	if (i >= 0) {
		ret->name = es->strs + es->syms[i].name_off;
		ret->sym_off = vaddr - es->syms[i].addr;
		start = es->syms[i].addr;
		errno = 0;
		dem = sym_demangled(es, (size_t)i);
		if (!dem && errno == ENOMEM)
			return -ENOMEM;
		if (dem) {
			ret->system_name = ret->name;
			ret->name = dem;
		}
	} else if ((fde = find_fde(es, vaddr))) {
		start = fde->start;
	} else {
		return -ENOENT;
	}
	if (elf_syms__vaddr_to_offset(es, start, &ret->func_start))
		ret->func_start = 0;
	if (lines) {
		err = lookup_lines(es, vaddr, ret);
		if (err)
			return err;
	}
	return 0;
}

bool elf_syms__is_pie(const struct elf_syms *es)
{
	return es->e_type == ET_DYN;
}

size_t elf_syms__mem(const struct elf_syms *es)
{
	return sizeof(*es) + es->syms_cap * sizeof(*es->syms) + es->strs_cap +
	       es->nfdes * sizeof(*es->fdes) + (es->dem ? es->nsyms * sizeof(*es->dem) : 0);
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

const char *elf_syms__debug_path(const struct elf_syms *es)
{
	return es->dbg_path;
}

size_t elf_syms__nr_fdes(const struct elf_syms *es)
{
	return es->nfdes;
}
