/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Function symbols of one ELF file, with libelf for the headers and libdw's dwelf for the
 * build-id note. The symbol tables, string tables and .eh_frame are read with pread() through
 * small fixed buffers, never whole: a big binary costs its function entries (32 bytes each),
 * not its sections. Names are not copied when the file is opened: an entry keeps the offset of
 * its name in the string table, and the names looked up are read then (and kept), from the
 * file reopened and checked to be the one read (device, inode, size, mtime); a file that
 * changed gives no name rather than a wrong one. /proc paths (map_files, memfds), which may
 * not open again, keep their descriptor; so do the first ELF_KEEP_FDS files whose names are
 * read, so that the lookups of an interval do not reopen them.
 */
#include "symbols/elfsyms.h"

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

#include "symbols/debuginfod.h"
#include "symbols/demangle.h"
#include "symbols/dwarfsrc.h"
#include "base/hashmap.h"
#include "symbols/usyms.h"
#include "base/util.h"

struct elf_sym_ent {
	uint64_t addr;
	uint64_t size;
	uint64_t max_end; /* the highest addr + size among this entry and all before it */
	uint32_t name;	  /* st_name: the offset of the name in string table strtab */
	uint16_t strtab;  /* into elf_syms.strtabs */
	unsigned char bind;
};

/* A string table's place in the file the symbols come from. */
struct elf_strtab {
	uint64_t off, size;
};

/* The symbols of one file (the file itself, or its debug file), sorted by finish_symbols(). */
struct elf_symtab {
	struct elf_sym_ent *syms;
	size_t nsyms;
	struct elf_strtab *strtabs;
	size_t nstrtabs;
};

/* What must not change between reading the tables and reading a name. */
struct elf_file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

/* A name read on demand, kept until elf_syms__free(). */
struct elf_name {
	char *dem; /* the demangled name, not_mangled, or NULL (not tried) */
	char name[];
};

/*
 * A window of a file: reads of small items near each other (names, FDEs) cost one pread()
 * per window. ELF_WIN_SIZE serves the big sections, whose items are read in no particular
 * order (.dynsym is in hash order, .dynstr is not); a string table up to ELF_WIN_WHOLE is read
 * at once while the symbols are loaded; a name looked up later costs ELF_WIN_NAME bytes when
 * it is shorter.
 */
#define ELF_WIN_SIZE 8192
#define ELF_WIN_WHOLE (1024 * 1024)
#define ELF_WIN_NAME 1024

struct elf_win {
	int fd;
	uint64_t base; /* a miss reads from here when the item fits, else from the item */
	uint64_t off;  /* file offset of buf[0] */
	size_t len;   /* bytes valid in buf */
	size_t cap;
	unsigned char *buf;
};

struct elf_seg {
	uint64_t offset, vaddr, filesz, memsz, align;
	uint32_t flags;
};

/*
 * A function of .eh_frame in 8 bytes: .eh_frame_hdr gives starts as 32-bit offsets from
 * itself, so start - elf_syms.fde_base (its address - 2^31) fits 32 bits, and an FDE longer
 * than 1 GiB is not taken.
 */
struct elf_fde {
	uint32_t start; /* link-time vaddr - fde_base (modulo 2^64) */
	uint32_t len;
};

struct elf_syms {
	char *path;
	char *sym_path; /* NULL: same as path */
	char *dbg_path; /* the separate debug file found, or NULL */
	uint16_t e_type;
	bool has_dwarf; /* the file itself has .debug_info */

	struct elf_fde *fdes; /* .eh_frame functions, sorted; only without .symtab */
	size_t nfdes;
	uint64_t fde_base;

	struct dwarf_src *dw;  /* opened on the first lookup with lines */
	bool dw_tried;

	struct elf_seg *segs;
	size_t nsegs;

	struct elf_symtab tab;
	struct elf_file_id sym_id; /* the file of the symbols as it was read */
	int sym_fd;		   /* kept open (a /proc path, or one of ELF_KEEP_FDS), else -1 */
	bool fd_counted;	   /* sym_fd is one of ELF_KEEP_FDS */
	bool stale;		   /* that file changed since: no more names from it */
	struct hashmap names;	   /* symbol index -> struct elf_name * */
	size_t names_bytes;
	unsigned long name_errors;

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

int elf_get_build_id(Elf *elf, uint8_t *buf, size_t bufsz, size_t *ret_len)
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

/* A window of cap bytes on fd: 0, -ENOMEM. */
static int win_init(struct elf_win *w, int fd, size_t cap)
{
	*w = (struct elf_win){ .fd = fd, .cap = cap, .buf = malloc(cap) };
	return w->buf ? 0 : -ENOMEM;
}

static void win_fini(struct elf_win *w)
{
	free(w->buf);
	w->buf = NULL;
}

/* len (<= the window's cap) bytes at file offset pos, through the window; NULL when the file
 * is shorter (or on a read error, errno set) */
static const unsigned char *win_get(struct elf_win *w, uint64_t pos, size_t len)
{
	ssize_t n;

	uint64_t at = pos;

	if (pos >= w->off && pos - w->off <= w->len && w->len - (pos - w->off) >= len)
		return w->buf + (pos - w->off);
	if (pos >= w->base && len <= w->cap && pos - w->base <= w->cap - len)
		at = w->base;
	n = pread(w->fd, w->buf, w->cap, (off_t)at);
	if (n < 0) {
		w->len = 0;
		return NULL;
	}
	w->off = at;
	w->len = (size_t)n;
	return (size_t)n >= len + (pos - at) ? w->buf + (pos - at) : NULL;
}

/*
 * The NUL-terminated string at pos that must end before limit (the end of its string table),
 * malloc'd after hdr bytes left for the caller. NULL + errno: ENOMEM, EIO (short file or read
 * error), EINVAL (no NUL before limit).
 */
static char *win_read_str(struct elf_win *w, uint64_t pos, uint64_t limit, size_t hdr)
{
	char *s = NULL, *p;
	size_t len = 0;

	while (pos < limit) {
		const unsigned char *q = win_get(w, pos, 1), *nul;
		size_t avail;

		if (!q) {
			free(s);
			errno = EIO;
			return NULL;
		}
		avail = w->len - (size_t)(q - w->buf);
		if (avail > limit - pos)
			avail = (size_t)(limit - pos);
		nul = memchr(q, '\0', avail);
		if (nul)
			avail = (size_t)(nul - q);
		p = realloc(s, hdr + len + avail + 1);
		if (!p) {
			free(s);
			errno = ENOMEM;
			return NULL;
		}
		s = p;
		memcpy(s + hdr + len, q, avail);
		len += avail;
		pos += avail;
		if (nul) {
			s[hdr + len] = '\0';
			return s;
		}
	}
	free(s);
	errno = EINVAL;
	return NULL;
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

/*
 * Sorted by address, larger first at one address (so the last candidate there is the
 * innermost one), then by binding rank; the name, which decides among the rest, is compared
 * by finish_symbols() where it matters. The string table and offset make the order total.
 */
static int cmp_sym(const void *a, const void *b)
{
	const struct elf_sym_ent *x = a, *y = b;
	int rx, ry;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	rx = bind_rank(x->bind);
	ry = bind_rank(y->bind);
	if (rx != ry)
		return rx - ry;
	if (x->strtab != y->strtab)
		return x->strtab < y->strtab ? -1 : 1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return 0;
}

static char *sym_read_name(struct elf_win *w, const struct elf_symtab *t,
			   const struct elf_sym_ent *e, size_t hdr)
{
	const struct elf_strtab *st = &t->strtabs[e->strtab];

	return win_read_str(w, st->off + e->name, st->off + st->size, hdr);
}

/*
 * Of the aliases syms[0..n) (same address, size and binding rank), moves the one with the
 * smallest name (strcmp) to the front: the one the tables named when they kept every name.
 * A name that cannot be read loses. -ENOMEM.
 */
static int pick_alias(struct elf_win *w, const struct elf_symtab *t, struct elf_sym_ent *syms,
		      size_t n)
{
	char *best = NULL;
	size_t i, at = 0;

	for (i = 0; i < n; i++) {
		char *name = sym_read_name(w, t, &syms[i], 0);

		if (!name) {
			if (errno == ENOMEM) {
				free(best);
				return -ENOMEM;
			}
			continue;
		}
		if (!best || strcmp(name, best) < 0) {
			free(best);
			best = name;
			at = i;
		} else {
			free(name);
		}
	}
	free(best);
	if (at) {
		struct elf_sym_ent tmp = syms[0];

		syms[0] = syms[at];
		syms[at] = tmp;
	}
	return 0;
}

/* Sorts, drops aliases (same address and size: keeps the global one), computes max_end. */
static int finish_symbols(struct elf_win *w, struct elf_symtab *t)
{
	uint64_t max_end = 0;
	size_t i, j, n = 0;
	int err;

	if (!t->nsyms)
		return 0;
	qsort(t->syms, t->nsyms, sizeof(*t->syms), cmp_sym);
	for (i = 0; i < t->nsyms; i = j) {
		const struct elf_sym_ent *e = &t->syms[i];

		for (j = i + 1; j < t->nsyms && t->syms[j].addr == e->addr &&
				t->syms[j].size == e->size &&
				bind_rank(t->syms[j].bind) == bind_rank(e->bind);
		     j++)
			;
		if (j - i > 1) {
			err = pick_alias(w, t, &t->syms[i], j - i);
			if (err)
				return err;
		}
		/* the rest of the aliases (lower ranks included) go */
		for (; j < t->nsyms && t->syms[j].addr == e->addr && t->syms[j].size == e->size; j++)
			;
		t->syms[n++] = t->syms[i];
	}
	if (n < t->nsyms) {
		struct elf_sym_ent *p = realloc(t->syms, n * sizeof(*t->syms));

		if (p)
			t->syms = p;
		t->nsyms = n;
	}
	for (i = 0; i < n; i++) {
		uint64_t end = t->syms[i].addr + t->syms[i].size;

		if (end > max_end)
			max_end = end;
		t->syms[i].max_end = max_end;
	}
	return 0;
}

static void symtab_free(struct elf_symtab *t)
{
	free(t->syms);
	free(t->strtabs);
	*t = (struct elf_symtab){ 0 };
}

/* Symbols are read and converted this many at a time. */
#define ELF_SYM_CHUNK 256

/*
 * One pass over the symbol tables of sh_type: counts the sized function symbols (fill
 * false), or appends them to t (fill true, room made by the counting pass; their names'
 * first byte is read to drop empty names). Returns how many, or -errno.
 */
static long scan_symtab(Elf *elf, struct elf_win *w, GElf_Word sh_type, bool fill,
			struct elf_symtab *t, size_t room)
{
	union {
		Elf32_Sym s32[ELF_SYM_CHUNK];
		Elf64_Sym s64[ELF_SYM_CHUNK];
	} raw;
	GElf_Ehdr eh;
	int cls = gelf_getclass(elf);
	size_t entsize = cls == ELFCLASS64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	bool is_arm;
	Elf_Scn *scn = NULL;
	long added = 0;

	if (!gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	is_arm = eh.e_machine == EM_ARM;
	while ((scn = elf_nextscn(elf, scn))) {
		struct elf_strtab st;
		GElf_Shdr sh, strsh;
		Elf_Scn *strscn;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != sh_type || sh.sh_entsize != entsize)
			continue;
		strscn = elf_getscn(elf, sh.sh_link);
		if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB)
			continue;
		st = (struct elf_strtab){ strsh.sh_offset, strsh.sh_size };
		if (fill) {
			if (t->nstrtabs > UINT16_MAX)
				break;
			t->strtabs[t->nstrtabs++] = st;
			w->base = st.off; /* a table that fits in the window is read at once */
		}
		n = sh.sh_size / entsize;
		for (i = 0; i < n; i += ELF_SYM_CHUNK) {
			size_t k = n - i < ELF_SYM_CHUNK ? n - i : ELF_SYM_CHUNK, bytes = k * entsize;
			Elf_Data data = { .d_buf = &raw, .d_type = ELF_T_SYM, .d_size = bytes,
					  .d_version = EV_CURRENT };
			ssize_t got = pread(w->fd, &raw, bytes, (off_t)(sh.sh_offset + i * entsize));

			if (got != (ssize_t)bytes || !gelf_xlatetom(elf, &data, &data,
								     eh.e_ident[EI_DATA]))
				break; /* what the file has so far */
			for (size_t j = 0; j < k; j++) {
				uint64_t addr, size;
				uint32_t name;
				unsigned char info, type;
				const unsigned char *first;
				uint16_t shndx;

				if (cls == ELFCLASS64) {
					addr = raw.s64[j].st_value;
					size = raw.s64[j].st_size;
					name = raw.s64[j].st_name;
					info = raw.s64[j].st_info;
					shndx = raw.s64[j].st_shndx;
				} else {
					addr = raw.s32[j].st_value;
					size = raw.s32[j].st_size;
					name = raw.s32[j].st_name;
					info = raw.s32[j].st_info;
					shndx = raw.s32[j].st_shndx;
				}
				type = GELF_ST_TYPE(info);
				if (type != STT_FUNC && type != STT_GNU_IFUNC)
					continue;
				if (!size || shndx == SHN_UNDEF || name >= st.size)
					continue;
				if (!fill) {
					added++;
					continue;
				}
				first = win_get(w, st.off + name, 1);
				if (!first || !*first || (size_t)added >= room)
					continue;
				if (is_arm)
					addr &= ~(uint64_t)1; /* the Thumb bit is not part of the address */
				if (size > UINT64_MAX - addr)
					size = UINT64_MAX - addr;
				t->syms[t->nsyms + (size_t)added++] = (struct elf_sym_ent){
					.addr = addr,
					.size = size,
					.name = name,
					.strtab = (uint16_t)(t->nstrtabs - 1),
					.bind = GELF_ST_BIND(info),
				};
			}
		}
	}
	return added;
}

/*
 * The sized function symbols of every section of sh_type into t, sorted and without aliases,
 * in exactly sized arrays: a counting pass, then the reading one. Returns how many, -errno.
 */
static long load_symtab(Elf *elf, int fd, GElf_Word sh_type, struct elf_symtab *t)
{
	struct elf_win win, *w = &win;
	size_t nscn = 0, strs = 0;
	Elf_Scn *scn = NULL;
	long n, got;
	int err;

	*t = (struct elf_symtab){ 0 };
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, strsh;
		Elf_Scn *strscn;

		nscn++;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == sh_type &&
		    (strscn = elf_getscn(elf, sh.sh_link)) && gelf_getshdr(strscn, &strsh) &&
		    strsh.sh_size > strs)
			strs = strsh.sh_size;
	}
	if (!strs)
		return 0;
	err = win_init(w, fd, strs <= ELF_WIN_WHOLE ? strs : ELF_WIN_SIZE);
	if (err)
		return err;
	n = scan_symtab(elf, w, sh_type, false, t, 0);
	if (n <= 0) {
		win_fini(w);
		return n;
	}
	t->syms = malloc((size_t)n * sizeof(*t->syms));
	t->strtabs = malloc(nscn * sizeof(*t->strtabs));
	if (!t->syms || !t->strtabs) {
		err = -ENOMEM;
		goto err;
	}
	got = scan_symtab(elf, w, sh_type, true, t, (size_t)n);
	if (got < 0) {
		err = (int)got;
		goto err;
	}
	t->nsyms = (size_t)got;
	err = finish_symbols(w, t);
	if (err)
		goto err;
	win_fini(w);
	return (long)t->nsyms;
err:
	win_fini(w);
	symtab_free(t);
	return err;
}

Elf_Scn *elf_section_by_name(Elf *elf, const char *name)
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
	Elf_Scn *scn = elf_section_by_name(elf, ".debug_info");
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
	Elf_Scn *scn = elf_section_by_name(elf, ".gnu_debuglink");
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

static int file_id_get(int fd, struct elf_file_id *id)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	*id = (struct elf_file_id){ .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
				    .mtime = st.st_mtim };
	return 0;
}

static bool file_id_equal(const struct elf_file_id *a, const struct elf_file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* The debug file's .symtab, when it has one, replaces what the file itself gave (.dynsym). */
static int load_debug_symbols(Elf *dbg, int dbg_fd, struct elf_syms *es)
{
	struct elf_symtab t;
	struct elf_file_id id;
	long n;
	int err;

	err = file_id_get(dbg_fd, &id);
	if (err)
		return err == -ENOMEM ? err : 0;
	n = load_symtab(dbg, dbg_fd, SHT_SYMTAB, &t);
	if (n < 0)
		return (int)n;
	if (!n)
		return 0;
	es->sym_path = strdup(es->dbg_path);
	if (!es->sym_path) {
		symtab_free(&t);
		return -ENOMEM;
	}
	symtab_free(&es->tab);
	es->tab = t;
	es->sym_id = id;
	return 0;
}

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * The range of the FDE at fde_vaddr (in .eh_frame, eh) that .eh_frame_hdr says starts at
 * start: its pc_begin is read as pcrel|sdata4 (what gcc, clang and the linkers emit for
 * .eh_frame), and the guess is checked against start before pc_range is trusted. 0 when it
 * does not check out.
 */
static uint64_t fde_range(struct elf_win *w, const GElf_Shdr *eh, uint64_t fde_vaddr,
			  uint64_t start)
{
	const unsigned char *q;
	uint64_t at;

	if (fde_vaddr < eh->sh_addr || fde_vaddr - eh->sh_addr > eh->sh_size ||
	    eh->sh_size - (fde_vaddr - eh->sh_addr) < 16)
		return 0;
	q = win_get(w, eh->sh_offset + (fde_vaddr - eh->sh_addr), 16);
	if (!q || get_u32(q) == 0xffffffff || get_u32(q) < 12) /* 64-bit DWARF, or too short */
		return 0;
	at = fde_vaddr + 8 + (uint64_t)(int64_t)(int32_t)get_u32(q + 8);
	return at == start ? get_u32(q + 12) : 0;
}

static uint64_t fde_start(const struct elf_syms *es, size_t i)
{
	return es->fde_base + es->fdes[i].start;
}

static uint64_t fde_end(const struct elf_syms *es, size_t i)
{
	return fde_start(es, i) + es->fdes[i].len;
}

/*
 * The functions .eh_frame describes, for files without .symtab: .eh_frame_hdr's sorted table
 * (version 1, its usual udata4 count and datarel|sdata4 entries) gives each FDE's start and
 * address, the FDE its length. An FDE we cannot read ends where the next one starts. Both
 * sections are read through windows; the array is sized by the table's count.
 */
static int load_fdes(Elf *elf, int fd, struct elf_syms *es)
{
	Elf_Scn *scn = elf_section_by_name(elf, ".eh_frame_hdr"), *eh_scn = elf_section_by_name(elf, ".eh_frame");
	struct elf_win w[2]; /* .eh_frame_hdr, .eh_frame */
	const unsigned char *p;
	GElf_Shdr sh, eh_sh;
	size_t ptr_len, count, i, table;
	bool have_eh;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || sh.sh_size < 4)
		return 0;
	have_eh = eh_scn && gelf_getshdr(eh_scn, &eh_sh) && eh_sh.sh_type == SHT_PROGBITS;
	if (win_init(&w[0], fd, ELF_WIN_SIZE))
		return -ENOMEM;
	if (win_init(&w[1], fd, ELF_WIN_SIZE)) {
		win_fini(&w[0]);
		return -ENOMEM;
	}
	p = win_get(&w[0], sh.sh_offset, 4);
	if (!p || p[0] != 1 || p[2] != 0x03 || p[3] != 0x3b || p[1] == 0xff)
		goto out;
	ptr_len = (p[1] & 0x0f) == 0x04 || (p[1] & 0x0f) == 0x0c ? 8 : 4;
	table = 4 + ptr_len + 4;
	if (sh.sh_size < table || !(p = win_get(&w[0], sh.sh_offset, table)))
		goto out;
	count = get_u32(p + 4 + ptr_len);
	if (!count || count > (sh.sh_size - table) / 8)
		goto out;
	es->fde_base = sh.sh_addr - ((uint64_t)1 << 31);
	es->fdes = calloc(count, sizeof(*es->fdes));
	if (!es->fdes) {
		win_fini(&w[0]);
		win_fini(&w[1]);
		return -ENOMEM;
	}
	for (i = 0; i < count; i++) {
		const unsigned char *q = win_get(&w[0], sh.sh_offset + table + 8 * i,
						 i + 1 < count ? 16 : 8);
		uint64_t start, fde, len;

		if (!q)
			break; /* the file is shorter than its headers say */
		start = sh.sh_addr + (uint64_t)(int64_t)(int32_t)get_u32(q);
		fde = sh.sh_addr + (uint64_t)(int64_t)(int32_t)get_u32(q + 4);
		len = have_eh ? fde_range(&w[1], &eh_sh, fde, start) : 0;
		if (!len && i + 1 < count)
			len = sh.sh_addr + (uint64_t)(int64_t)(int32_t)get_u32(q + 8) - start;
		if (!len || len > (1u << 30) || (es->nfdes && start < fde_end(es, es->nfdes - 1)))
			continue;
		es->fdes[es->nfdes++] = (struct elf_fde){ (uint32_t)(start - es->fde_base),
							  (uint32_t)len };
	}
	if (es->nfdes < count) {
		struct elf_fde *r = es->nfdes ? realloc(es->fdes, es->nfdes * sizeof(*r)) : NULL;

		if (r || !es->nfdes) {
			if (!es->nfdes)
				free(es->fdes);
			es->fdes = r;
		}
	}
out:
	win_fini(&w[0]);
	win_fini(&w[1]);
	return 0;
}

/*
 * Descriptors kept open between name reads in the whole process (besides /proc paths): a name
 * read then costs an fstat() and a pread(), not an open() as well; an fd limit of 1024 stays
 * far.
 */
#define ELF_KEEP_FDS 16
static int kept_fds;

/* Paths that may not open again once the process behind them is gone (map_files, memfds). */
static bool path_is_transient(const char *path)
{
	return !strncmp(path, "/proc/", 6);
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
	es->sym_fd = -1;
	hashmap__init(&es->names, hashmap_long_hash, hashmap_long_equal, NULL);
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
	err = file_id_get(fd, &es->sym_id);
	if (err)
		goto err_close;

	err = elf_get_build_id(elf, es->build_id, sizeof(es->build_id), &es->build_id_len);
	if (err == -ENODATA || err == -ENOBUFS)
		es->build_id_len = 0;
	else if (err)
		goto err_close;

	err = load_segments(elf, es);
	if (err)
		goto err_close;
	n = load_symtab(elf, fd, SHT_SYMTAB, &es->tab);
	has_symtab = n > 0;
	if (!n)
		n = load_symtab(elf, fd, SHT_DYNSYM, &es->tab);
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
				err = load_debug_symbols(dbg, dbg_fd, es);
				has_symtab = es->sym_path != NULL;
			}
			elf_file_close(dbg_fd, dbg);
			if (err)
				goto err_close;
		}
	}
	if (!has_symtab) {
		err = load_fdes(elf, fd, es);
		if (err)
			goto err_close;
	}
	/* names are read from the file later: keep what cannot be opened again */
	if (es->tab.nsyms && !es->sym_path && path_is_transient(path)) {
		elf_end(elf);
		es->sym_fd = fd;
	} else {
		elf_file_close(fd, elf);
	}
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

/* The dem mark of names that are not mangled (or that libiberty could not demangle). */
static char not_mangled[1];

static void name_free(long key, long value)
{
	struct elf_name *nm = (struct elf_name *)value;

	(void)key;
	if (nm->dem != not_mangled)
		free(nm->dem);
	free(nm);
}

static void sym_fd_close(struct elf_syms *es)
{
	if (es->sym_fd < 0)
		return;
	close(es->sym_fd);
	es->sym_fd = -1;
	if (es->fd_counted)
		__atomic_fetch_sub(&kept_fds, 1, __ATOMIC_RELAXED);
	es->fd_counted = false;
}

void elf_syms__free(struct elf_syms *es)
{
	if (!es)
		return;
	hashmap__clear_with(&es->names, name_free);
	sym_fd_close(es);
	dwarf_src__free(es->dw);
	free(es->fdes);
	free(es->path);
	free(es->sym_path);
	free(es->dbg_path);
	free(es->segs);
	symtab_free(&es->tab);
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
	const struct elf_sym_ent *syms = es->tab.syms;
	size_t lo = upper_bound(syms, es->tab.nsyms, sizeof(*syms),
				     offsetof(struct elf_sym_ent, addr), vaddr), i;

	/* walk back over enclosing candidates: nested or overlapping symbols are rare, and
	 * max_end stops the walk as soon as nothing earlier can reach vaddr */
	for (i = lo; i > 0; i--) {
		const struct elf_sym_ent *e = &syms[i - 1];

		if (vaddr - e->addr < e->size)
			return (long)(i - 1);
		if (e->max_end <= vaddr)
			break;
	}
	return -1;
}

/*
 * The name of symbol i, read from the file on its first lookup. NULL + errno: ENOMEM,
 * ESTALE (the file changed since its tables were read), or what reading it gave; those
 * other than ENOMEM are counted in name_errors.
 */
static struct elf_name *sym_name(struct elf_syms *es, size_t i)
{
	struct elf_file_id now = { 0 };
	struct elf_name *nm = NULL;
	struct elf_win w;
	long found;
	int fd, err = 0;

	if (hashmap__find(&es->names, (long)i, &found))
		return (struct elf_name *)found;
	if (es->stale) {
		err = -ESTALE;
		goto fail;
	}
	fd = es->sym_fd >= 0 ? es->sym_fd
			     : open(elf_syms__symbols_path(es), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto fail;
	}
	err = file_id_get(fd, &now);
	if (!err && !file_id_equal(&now, &es->sym_id)) {
		es->stale = true;
		err = -ESTALE;
	}
	if (!err && es->sym_fd < 0) {
		if (__atomic_add_fetch(&kept_fds, 1, __ATOMIC_RELAXED) <= ELF_KEEP_FDS) {
			es->sym_fd = fd;
			es->fd_counted = true;
		} else {
			__atomic_fetch_sub(&kept_fds, 1, __ATOMIC_RELAXED);
		}
	}
	if (!err)
		err = win_init(&w, fd, ELF_WIN_NAME);
	if (!err) {
		nm = (struct elf_name *)sym_read_name(&w, &es->tab, &es->tab.syms[i],
						      offsetof(struct elf_name, name));
		if (!nm)
			err = -errno;
		win_fini(&w);
	}
	if (fd != es->sym_fd)
		close(fd);
	else if (es->stale)
		sym_fd_close(es);
	if (err)
		goto fail;
	nm->dem = NULL;
	if (hashmap__add(&es->names, (long)i, (long)nm)) {
		free(nm);
		errno = ENOMEM;
		return NULL;
	}
	es->names_bytes += sizeof(*nm) + strlen(nm->name) + 1;
	return nm;
fail:
	if (err != -ENOMEM)
		es->name_errors++;
	errno = -err;
	return NULL;
}

const char *elf_syms__lookup_vaddr(struct elf_syms *es, uint64_t vaddr, uint64_t *ret_sym_off)
{
	const struct elf_name *nm;
	long i = find_sym(es, vaddr);

	if (i < 0)
		return NULL;
	nm = sym_name(es, (size_t)i);
	if (!nm)
		return NULL;
	if (ret_sym_off)
		*ret_sym_off = vaddr - es->tab.syms[i].addr;
	return nm->name;
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

const char *elf_syms__lookup_offset(struct elf_syms *es, uint64_t file_offset,
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

/* The demangled name of nm, or NULL when it is not mangled; -ENOMEM as NULL + errno. */
static const char *sym_demangled(struct elf_syms *es, struct elf_name *nm)
{
	char *d;

	if (!nm->dem) {
		if (!sp_name_is_mangled(nm->name)) {
			nm->dem = not_mangled;
			return NULL;
		}
		d = sp_demangle(nm->name);
		if (!d && errno == ENOMEM)
			return NULL;
		nm->dem = d ? d : not_mangled;
		if (d)
			es->names_bytes += strlen(d) + 1;
	}
	return nm->dem == not_mangled ? NULL : nm->dem;
}

/* The start of the .eh_frame function containing vaddr (the ranges do not overlap). */
static bool find_fde(const struct elf_syms *es, uint64_t vaddr, uint64_t *ret_start)
{
	size_t lo = 0, hi = es->nfdes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fde_start(es, mid) <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || vaddr >= fde_end(es, lo - 1))
		return false;
	*ret_start = fde_start(es, lo - 1);
	return true;
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
	struct elf_name *nm;
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
		/* a name that cannot be read (the file changed) still gives the function start */
		nm = sym_name(es, (size_t)i);
		if (!nm && errno == ENOMEM)
			return -ENOMEM;
		start = es->tab.syms[i].addr;
		if (nm) {
			ret->name = nm->name;
			ret->sym_off = vaddr - start;
			errno = 0;
			dem = sym_demangled(es, nm);
			if (!dem && errno == ENOMEM)
				return -ENOMEM;
			if (dem) {
				ret->system_name = ret->name;
				ret->name = dem;
			}
		}
	} else if (!find_fde(es, vaddr, &start)) {
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
	return sizeof(*es) + es->tab.nsyms * sizeof(*es->tab.syms) +
	       es->tab.nstrtabs * sizeof(*es->tab.strtabs) + es->nfdes * sizeof(*es->fdes) +
	       es->names.cap * sizeof(*es->names.slots) + es->names_bytes;
}

size_t elf_syms__count(const struct elf_syms *es)
{
	return es->tab.nsyms;
}

unsigned long elf_syms__name_errors(const struct elf_syms *es)
{
	return es->name_errors;
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
