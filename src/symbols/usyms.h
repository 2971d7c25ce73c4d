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
 *
 * Not thread-safe. Returned strings stay valid until usyms__free().
 */
#ifndef SCHEDPROF_USYMS_H
#define SCHEDPROF_USYMS_H

#include <stddef.h>
#include <stdint.h>

struct usyms;

struct usyms_opts {
	/* Root of the separate debug files; NULL means /usr/lib/debug, "" disables. */
	const char *debug_dir;
};

/* A resolved frame. */
struct usym {
	const char *name;   /* the function, or NULL when none covers the address */
	const char *object; /* the file path as mapped, or "[vdso]" */
	uint64_t sym_off;   /* distance from the function's start (0 without a name) */
};

/* NULL + errno (ENOMEM). opts may be NULL. */
struct usyms *usyms__new(const struct usyms_opts *opts);
void usyms__free(struct usyms *u);

/*
 * Registers what process pid maps now: its executable files by build-id, and a snapshot of its
 * executable mappings as image `image`. Calling it again for the same (pid, image) replaces
 * the snapshot (libraries mapped since are added). Returns 0, -ESRCH if the process is gone,
 * -ENOMEM, or -errno.
 */
int usyms__add_pid(struct usyms *u, int pid, uint64_t image);
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
 * mapping covers ip (ret_sym->name may be NULL), -ESRCH when that image was never snapshotted,
 * -ENOENT when no executable file mapping covers ip (anonymous memory, JIT code).
 */
int usyms__resolve_ip(struct usyms *u, int pid, uint64_t image, uint64_t ip, struct usym *ret_sym);

/* Process images snapshotted so far. */
size_t usyms__nr_images(const struct usyms *u);

#endif /* SCHEDPROF_USYMS_H */
