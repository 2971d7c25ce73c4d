/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * build-id -> file -> symbols. BPF_F_USER_BUILD_ID stacks name each user frame by (build-id,
 * file offset), and the processes behind them (cc1, as, ld) have usually exited by the time we
 * symbolize. So while they live we register the files they map (cheap: only the build-id note
 * is read), and symbols are loaded lazily, once per build-id, when a frame needs them.
 * Build-ids nobody registered are looked up under <debug_dir>/.build-id/.
 *
 * Not thread-safe. Returned strings stay valid until buildid_cache__free().
 */
#ifndef SCHEDPROF_BUILDID_CACHE_H
#define SCHEDPROF_BUILDID_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct usym;

struct buildid_cache;

/* NULL + errno (ENOMEM). */
struct buildid_cache *buildid_cache__new(void);
void buildid_cache__free(struct buildid_cache *c);
/* Root of the separate debug files (default ELF_DEBUG_DIR_DEFAULT, "" disables): 0 or -ENOMEM. */
int buildid_cache__set_debug_dir(struct buildid_cache *c, const char *dir);

/*
 * Reads the build-id of path and remembers the file under it. Idempotent (the same file,
 * by device/inode/size/mtime, is read once). Returns 0, -ENODATA (no build-id), -ENOEXEC
 * (not ELF), or -errno.
 */
int buildid_cache__add_file(struct buildid_cache *c, const char *path);
/*
 * Adds every file-backed executable mapping of /proc/PID/maps. A mapping whose path no longer
 * names the mapped file (deleted, replaced, another mount namespace) is read through
 * /proc/PID/map_files/ when permitted, and then its symbols are loaded at once.
 * Returns 0, or -ESRCH if the process is already gone (callers may ignore that).
 */
int buildid_cache__add_pid(struct buildid_cache *c, int pid);
/* The same with /proc/PID/maps already read (procmaps.h): 0 or -ENOMEM. */
struct proc_map;
int buildid_cache__add_maps(struct buildid_cache *c, int pid, const struct proc_map *maps,
			    size_t n);

/*
 * Resolves a (build-id, file offset) frame: registered files first, then the debug directory.
 * Returns 0 with *ret_path (the object's path) and *ret_sym (the function, demangled, or NULL
 * if the object is known but no symbol covers the offset or its symbols could not be loaded);
 * -ENOENT if the build-id is unknown, -EINVAL for an empty or too long build-id.
 * ret_sym_off may be NULL.
 */
int buildid_cache__resolve(struct buildid_cache *c, const uint8_t *build_id, size_t id_len,
			   uint64_t file_offset, const char **ret_sym, uint64_t *ret_sym_off,
			   const char **ret_path);

/*
 * What lookups add: DWARF file:line and inlined calls (lines), and libdebuginfod for
 * build-ids without a local debug file (debuginfod; only when DEBUGINFOD_URLS is set).
 */
void buildid_cache__set_opts(struct buildid_cache *c, bool lines, bool debuginfod);
/*
 * buildid_cache__resolve() with everything known about the frame: fills *ret (usyms.h; every
 * field, object = the object's path). Same return values.
 */
int buildid_cache__lookup(struct buildid_cache *c, const uint8_t *build_id, size_t id_len,
			  uint64_t file_offset, struct usym *ret);

/*
 * For a tracer that runs for weeks (the agent, after each interval): releases the loaded
 * symbols (except those read through /proc/PID/map_files, which cannot be read again) and,
 * from now on without lines, keeps each looked-up frame's name as strings instead, so that
 * frames seen again need no symbols; names not looked up since the previous trim are
 * forgotten. With lines (buildid_cache__set_opts) nothing is released: a frame's file, line
 * and inlined calls are not kept as strings, and loading DWARF each interval costs too much.
 * Strings returned before the call are no longer valid after it.
 */
void buildid_cache__trim(struct buildid_cache *c);

#endif /* SCHEDPROF_BUILDID_CACHE_H */
