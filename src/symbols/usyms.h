/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * User-space symbolization for sampled frames, including frames of processes that exited
 * before the report: the profile view's layer over buildid_cache.
 *
 * A user frame comes from BPF either as (build-id, file offset), which names the object
 * whatever happened to the process since, or as a raw IP when the kernel could not read the
 * build-id in that context. While a process lives, usyms__add_pid() registers the files it
 * maps (by build-id) and keeps a snapshot of its executable mappings under (pid, image),
 * where image tells the successive programs of one pid apart (the task's exec count), so raw
 * IPs can be named afterwards. The vdso has no file: it is named "[vdso]" and its functions
 * come from the tracer's own vdso, which is the same image for every 64-bit process.
 * Beyond symbol tables: separate debug files (elfsyms.h: build-id, .gnu_debuglink, debuginfod),
 * .eh_frame function starts for stripped code, demangled names, DWARF lines and inlined calls
 * (usyms_opts.lines), and JIT code named by /tmp/perf-PID.map.
 *
 * Not thread-safe. Returned strings stay valid until usyms__free().
 */
#ifndef SCHEDPROF_USYMS_H
#define SCHEDPROF_USYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct usyms;

struct usyms_opts {
	/*
	 * Root of the separate debug files; NULL means /usr/lib/debug, "" disables. A file without
	 * symbols or DWARF looks there for <debug_dir>/.build-id/xx/rest.debug, then for its
	 * .gnu_debuglink name (next to the file, in .debug/ beside it, under <debug_dir>/<its dir>/).
	 */
	const char *debug_dir;
	/* DWARF source positions and inlined calls of each address (struct usym's file, line,
	 * inlined): costs reading .debug_info/.debug_line of the objects involved */
	bool lines;
	/*
	 * Ask libdebuginfod (when DEBUGINFOD_URLS is set; its cache honours DEBUGINFOD_CACHE_PATH)
	 * for the debug file of build-ids without a local one. Without libdebuginfod at run time,
	 * nothing happens.
	 */
	bool debuginfod;
};

/*
 * An inlined call at an address (usyms_opts.lines). The frames of an address, innermost first,
 * are inlined[0..ninlined-1] and then the symbol's own function (usym.name); each one's
 * file:line is the position IN THAT FUNCTION: for inlined[0] the address's own line, for each
 * later one the line that called the previous one. A model stack gets one frame per entry
 * (sp_frame_info.inlined set on inlined[]'s), then usym.name with usym.file/line.
 */
struct usym_inline {
	const char *name;	 /* the inlined function (demangled); NULL if DWARF has no name */
	const char *system_name; /* its mangled name when name was demangled; NULL */
	const char *file;	 /* source file and line in this function (see above); NULL/0 */
	unsigned int line;
};

/*
 * A resolved frame. Every string lives until usyms__free(). The fields after sym_off
 * are 0/NULL when unknown or not asked for.
 */
struct usym {
	const char *name;   /* the function, or NULL when none covers the address */
	const char *object; /* the file path as mapped, "[vdso]", or /tmp/perf-PID.map (JIT) */
	uint64_t sym_off;   /* distance from the function's start (0 without a name) */

	const char *system_name; /* the mangled name when name was demangled; NULL */
	/* the function's start offset in the file: the symbol's, or with no name the .eh_frame
	 * FDE's (stripped code); 0 unknown */
	uint64_t func_start;
	/* the file offset looked up (usyms__resolve_ip computes it from the mapping; JIT: the ip) */
	uint64_t offset;
	const uint8_t *build_id; /* the object's GNU build-id when known; NULL (vdso, JIT, none) */
	size_t build_id_len;
	/* usyms_opts.lines: source position in the function `name` (see struct usym_inline) */
	const char *file;
	unsigned int line;
	/* usyms_opts.lines: the inlined calls at the address, innermost first; NULL/0 if none */
	const struct usym_inline *inlined;
	size_t ninlined;
};

/* NULL + errno (ENOMEM). opts may be NULL. */
struct usyms *usyms__new(const struct usyms_opts *opts);
void usyms__free(struct usyms *u);

/*
 * Registers what process pid maps now: its executable files by build-id, and a snapshot of its
 * executable mappings as image `image`. Calling it again for the same (pid, image) replaces
 * the snapshot (libraries mapped since are added). Returns 0, -ESRCH if the process is gone
 * or has no mappings left (exiting: the last snapshot stays), -ENOMEM, or -errno.
 */
int usyms__add_pid(struct usyms *u, int pid, uint64_t image);
/*
 * As usyms__add_pid(), with the snapshot of (from_pid, from_image) instead of reading the
 * process's mappings: a process forked from it without exec, whose executable mappings span
 * exec_pages pages (mm->exec_vm). That snapshot is read first when there is none, or again
 * when its size differs (once for each size). -ENOENT: none of that size (code mapped or
 * unmapped since the fork), or its process is gone: read the process itself; -ENOMEM.
 */
int usyms__add_pid_as(struct usyms *u, int pid, uint64_t image, int from_pid, uint64_t from_image,
		      uint64_t exec_pages);
/* Registers one file by its build-id (0, -ENODATA without one, -ENOEXEC, -errno). */
int usyms__add_file(struct usyms *u, const char *path);

/*
 * A (build-id, file offset) frame. id_len may include the zero padding the kernel adds to
 * build-ids shorter than 20 bytes. 0 when the object is known (ret_sym->name may still be NULL),
 * -ENOENT when no registered file or debug file has that build-id, -EINVAL for a bad length.
 */
int usyms__resolve_build_id(struct usyms *u, const uint8_t *id, size_t id_len, uint64_t offset,
			    struct usym *ret_sym);
/*
 * A raw IP of image `image` of pid, through the snapshot taken while it lived. 0 when a
 * mapping covers ip (ret_sym->name may be NULL) or the pid's perf map names it (JIT code, see
 * usyms__resolve_perf_map), -ESRCH when that image was never snapshotted, -ENOENT when no
 * executable file mapping covers ip (anonymous memory) and no perf map names it.
 */
int usyms__resolve_ip(struct usyms *u, int pid, uint64_t image, uint64_t ip, struct usym *ret_sym);

/*
 * Where ip of image `image` of pid is mapped, without naming it (an unwinder's question, once
 * per frame): 0 with the file's path as mapped, ip's file offset and the file's identity
 * (device, inode: what a per-object cache keys by), -ESRCH when that image was never
 * snapshotted, -ENOENT when no file mapping covers ip (anonymous memory: JIT code). The vdso
 * has no file: its path is "[vdso]", device and inode 0, and its image is the tracer's own
 * (the same for every 64-bit process).
 */
struct usyms_mapping {
	const char *path; /* valid until usyms__free() or usyms__trim() */
	uint64_t offset;
	uint64_t dev, inode;
};
int usyms__map_ip(struct usyms *u, int pid, uint64_t image, uint64_t ip,
		  struct usyms_mapping *ret);

/*
 * The size of the code in the snapshot of image `image` of pid: the pages of its executable
 * mappings, as mm->exec_vm counts them. 0, or -ESRCH when that image was never snapshotted.
 */
int usyms__image_pages(struct usyms *u, int pid, uint64_t image, uint64_t *ret_pages);

/*
 * The same with the build-id in hex (as saved runs keep it, struct sp_frame_info): for `report`
 * re-symbolizing with the debug files known now. -EINVAL for a malformed hex string.
 */
int usyms__resolve_build_id_hex(struct usyms *u, const char *hex, uint64_t offset,
				struct usym *ret_sym);

/*
 * JIT code: names ip of pid from /tmp/perf-PID.map ("START SIZE name" lines, hex), read again
 * when the file changed size. 0 with ret_sym->name, sym_off, and ret_sym->object the map file's
 * path; -ENOENT when no map file or no entry covers ip. usyms__resolve_ip() uses it for addresses
 * no file mapping covers (also for a pid that was never snapshotted). usyms__set_perf_map_dir()
 * changes the directory (default "/tmp"; for tests): 0 or -ENOMEM.
 */
int usyms__resolve_perf_map(struct usyms *u, int pid, uint64_t ip, struct usym *ret_sym);
int usyms__set_perf_map_dir(struct usyms *u, const char *dir);

/*
 * Between two symbolizations of a tracer that runs for weeks (the agent's intervals): gives
 * back the memory of symbols that can be loaded again (buildid_cache__trim: frames seen again
 * keep their names as strings) and of replaced perf maps. Every string returned so far is
 * invalid afterwards; what is returned afterwards is the same as without the call.
 */
void usyms__trim(struct usyms *u);

/* Process images snapshotted so far. */
size_t usyms__nr_images(const struct usyms *u);

#endif /* SCHEDPROF_USYMS_H */
