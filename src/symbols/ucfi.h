/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A process's copied user stack unwound by the call frame information of the objects it
 * maps: the mappings from the usyms snapshot of the process image, each object's rows
 * (cfi.h) compiled on first use and held for the run, keyed by the file's identity (device,
 * inode), within a bound on the bytes held. An object over the bound, or whose file cannot
 * be read, has no rows: its frames follow frame pointers (cfi_unwind.h), as do addresses in
 * no file (JIT code). The vdso's rows are those of the tracer's own vdso. Not thread-safe.
 */
#ifndef SCHEDPROF_UCFI_H
#define SCHEDPROF_UCFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/cfi_unwind.h"

struct usyms;
struct ucfi;

#define UCFI_DEF_BYTES (64u << 20) /* rows held, all objects together */
#define UCFI_DEF_ROWS (1u << 20)   /* rows of one object: more are cut (-E2BIG) */

/*
 * Where compiled tables are kept between runs, by a key naming the object's build-id and
 * the row limit: load gives the bytes stored under key (malloc'd, checked by cfi_unpack()
 * as untrusted) or a negative errno; save stores them, and its failure costs only a later
 * run's compile. Objects without a build-id are compiled every run.
 */
struct ucfi_store {
	int (*load)(void *ctx, const char *key, void **ret_data, size_t *ret_size);
	void (*save)(void *ctx, const char *key, const void *data, size_t size);
	void *ctx;
};

struct ucfi_opts {
	size_t max_bytes; /* 0: UCFI_DEF_BYTES */
	size_t max_rows;  /* 0: UCFI_DEF_ROWS */
	const struct ucfi_store *store; /* NULL: every table compiled */
	/*
	 * A table to compile from a file over async_file bytes (0: 4 MiB) is compiled on a
	 * thread of its own: a walk that needs it returns -EAGAIN until it is done
	 * (ucfi__wait() waits for all)
	 */
	bool async;
	uint64_t async_file;
};

struct ucfi_stats {
	uint64_t objects;	  /* objects met (empty tables too) */
	uint64_t over;		  /* objects whose table did not fit max_bytes: frame pointers */
	uint64_t cut;		  /* tables cut at max_rows */
	uint64_t unreadable;	  /* objects whose file could not be read (gone, not ELF) */
	uint64_t bytes;		  /* rows held */
	uint64_t compile_ns;	  /* time spent compiling, all objects */
	uint64_t stored;	  /* tables read from the store instead of compiled */
	uint64_t store_bad;	  /* ... found there but unusable (damaged, another limit) */
	uint64_t store_ns;	  /* time spent reading and unpacking them */
	uint64_t stacks;	  /* stacks unwound */
	uint64_t stops[UNWIND_STOPS]; /* ... by why their walk ended */
	uint64_t fp_frames;	  /* frames found by frame pointer where no row was */
	uint64_t nofile_frames;	  /* ... of which in no file (JIT code) */
};

/* NULL + errno (ENOMEM). opts may be NULL. */
struct ucfi *ucfi__new(const struct ucfi_opts *opts);
void ucfi__free(struct ucfi *c);

/*
 * Unwinds the copy of image `image` of pid into ips (max > 0 entries) and *res, through u's
 * snapshot of its mappings (usyms__map_ip). 0, or -ENOMEM (res holds what was unwound), or
 * with opts->async -EAGAIN (a table it needs is compiling: unwind it again later).
 */
int ucfi__unwind(struct ucfi *c, struct usyms *u, int pid, uint64_t image,
		 const struct unwind_regs *regs, const struct unwind_stack *stack, uint64_t *ips,
		 size_t max, struct unwind_result *res);

/* ucfi__unwind(), and how each frame was left (cfi_unwind_steps()). */
int ucfi__unwind_steps(struct ucfi *c, struct usyms *u, int pid, uint64_t image,
		       const struct unwind_regs *regs, const struct unwind_stack *stack,
		       uint64_t *ips, struct unwind_step *steps, size_t max,
		       struct unwind_result *res);
/* With opts->async: waits for the tables compiling (and queued) */
void ucfi__wait(struct ucfi *c);
void ucfi__stats(const struct ucfi *c, struct ucfi_stats *ret);

#endif /* SCHEDPROF_UCFI_H */
