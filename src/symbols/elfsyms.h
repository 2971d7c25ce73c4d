/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The function symbols of one ELF file (executable, PIE or shared library), read with libelf,
 * and the file offset -> virtual address conversion from its PT_LOAD program headers, so a
 * user frame given as (file, offset) can be named after the process that mapped it is gone.
 *
 * Symbols come from .symtab. A file without one (stripped: only .dynsym, or nothing), or
 * without DWARF when DWARF is asked for, looks for its separate debug file: by build-id,
 * <debug_dir>/.build-id/xx/rest.debug with the same build-id; by .gnu_debuglink, NAME next to
 * the file, in .debug/ beside it, then <debug_dir>/<the file's dir>/NAME, each checked against
 * the link's CRC32; then, with opts.debuginfod, from a debuginfod server (debuginfod.h). The
 * debug file's .symtab replaces .dynsym. Only STT_FUNC/STT_GNU_IFUNC symbols with a nonzero
 * size are kept, and lookups honour the size: an address in a gap between functions resolves
 * to nothing. When no .symtab was found at all, the .eh_frame FDEs (through .eh_frame_hdr) still
 * give the start of the function at an address (struct usym.func_start).
 *
 * Mangled C++/Rust names are demangled on lookup (demangle.h); elf_syms__lookup_*() return the
 * names as in the table, elf_syms__lookup_sym() both.
 *
 * Memory: 32 bytes per sized function and 8 per .eh_frame function, plus the names looked up;
 * the sections are read through fixed buffers. Names are read from the file on their first
 * lookup, so a file changed since elf_syms__open() gives no name (elf_syms__name_errors()).
 *
 * A separate debug file opened on its own has no usable p_offset; its segment offsets are then
 * rebuilt from p_vaddr/p_align the way linkers lay files out (bfd, gold and lld checked).
 *
 * Offsets are what the kernel reports: the pgoff of the mapping + (ip - mapping start), as in
 * /proc/PID/maps or BPF_F_USER_BUILD_ID frames. For return addresses of non-leaf frames,
 * callers usually look up (offset - 1) so a call at the very end of a function stays inside it.
 */
#ifndef SCHEDPROF_ELFSYMS_H
#define SCHEDPROF_ELFSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

/* The longest build-id we keep (GNU uses 20 bytes for sha1, 16 for md5/uuid). */
#define ELF_BUILD_ID_MAX 64
/* Where distributions install separate debug files (.build-id/xx/rest.debug below it). */
#define ELF_DEBUG_DIR_DEFAULT "/usr/lib/debug"

struct elf_syms;

/* The section of elf called name (by the section header string table), or NULL. */
Elf_Scn *elf_section_by_name(Elf *elf, const char *name);

struct usym;

struct elf_syms_opts {
	/* Root of the separate debug files; NULL means ELF_DEBUG_DIR_DEFAULT, "" disables. */
	const char *debug_dir;
	bool dwarf;	 /* DWARF will be used (elf_syms__lookup_sym's lines): find a debug file */
	bool debuginfod; /* ask debuginfod (DEBUGINFOD_URLS) when no local debug file is found */
};

/* NULL + errno: ENOENT (and other open() errors), ENOEXEC (not an ELF file), ENOMEM. */
struct elf_syms *elf_syms__open(const char *path);
struct elf_syms *elf_syms__open_opts(const char *path, const struct elf_syms_opts *opts);
void elf_syms__free(struct elf_syms *es);

/* The GNU build-id of the file (not of the debug file); -ENODATA if it has none. */
int elf_syms__build_id(const struct elf_syms *es, const uint8_t **ret_id, size_t *ret_len);
/* Reads only the build-id note: 0, -ENODATA (none), -ENOEXEC, -ENOBUFS (bufsz too small),
 * -errno. */
int elf_read_build_id(const char *path, uint8_t *buf, size_t bufsz, size_t *ret_len);
/* The same from an ELF already open (libelf's Elf): 0, -ENODATA, -ENOEXEC, -ENOBUFS. */
int elf_get_build_id(Elf *elf, uint8_t *buf, size_t bufsz, size_t *ret_len);
/* Formats a build-id as lowercase hex into buf (2 * len + 1 bytes); returns buf. */
char *elf_build_id_hex(const uint8_t *id, size_t len, char *buf, size_t bufsz);

/*
 * Returns the name of the function containing the address, or NULL (gap, out of range, no
 * symbols, or its name could not be read: see elf_syms__name_errors()). *ret_sym_off (may be
 * NULL) gets the distance from the function's start. The string lives until elf_syms__free().
 */
const char *elf_syms__lookup_vaddr(struct elf_syms *es, uint64_t vaddr, uint64_t *ret_sym_off);
const char *elf_syms__lookup_offset(struct elf_syms *es, uint64_t file_offset,
				    uint64_t *ret_sym_off);
/* File offset -> link-time virtual address through the PT_LOAD headers; -ERANGE if unmapped. */
int elf_syms__offset_to_vaddr(const struct elf_syms *es, uint64_t file_offset, uint64_t *ret_vaddr);
/* The reverse, for addresses in a PT_LOAD's file part; -ERANGE otherwise. */
int elf_syms__vaddr_to_offset(const struct elf_syms *es, uint64_t vaddr, uint64_t *ret_offset);

/*
 * Everything known of a file offset, into ret's name, system_name (mangled, when name was
 * demangled), sym_off, func_start (the function's start as a file offset, from the symbol or
 * else from .eh_frame) and, with lines, file, line, inlined, ninlined (DWARF; the file or its
 * debug file is kept open from then on). The other fields of ret are left alone. Returns 0 when
 * anything was found (a name or a func_start), -ENOENT when nothing covers the offset, -ENOMEM.
 * Strings live until elf_syms__free().
 */
int elf_syms__lookup_sym(struct elf_syms *es, uint64_t file_offset, bool lines, struct usym *ret);

/* ET_DYN: PIE executable or shared library, loaded at a random base. */
bool elf_syms__is_pie(const struct elf_syms *es);
size_t elf_syms__count(const struct elf_syms *es);
/* About the bytes it takes: its tables (symbols, functions of .eh_frame) and the names read
 * so far, demangled ones included */
size_t elf_syms__mem(const struct elf_syms *es);
/* Names that could not be read on demand (the file changed or vanished, a read error). */
unsigned long elf_syms__name_errors(const struct elf_syms *es);
const char *elf_syms__path(const struct elf_syms *es);
/* The file the symbols were read from: the path itself, or its separate debug file. */
const char *elf_syms__symbols_path(const struct elf_syms *es);
/* The separate debug file found for it, or NULL. */
const char *elf_syms__debug_path(const struct elf_syms *es);
/* Functions known from .eh_frame FDEs (0 when .symtab named them). */
size_t elf_syms__nr_fdes(const struct elf_syms *es);

#endif /* SCHEDPROF_ELFSYMS_H */
