/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * User stacks from BPF into model frames: the one place that names
 * a user frame, for the profile, schedules and locks row builders. A frame comes as
 * (build-id, file offset), or as a raw IP of a process image (tgid, exec_id) that usyms
 * snapshotted while it lived (include/schedprof/profile.h struct sp_uframe). Each frame gets
 * its name, its object (path or "[vdso]") and its identity (struct sp_frame_info: the file
 * offset looked up and the object's build-id; with usyms_opts.lines its file:line, and the
 * calls inlined at the address as frames of their own). A frame that no symbol covers is
 * named "<basename(object)>+0x<hex>" (the function's start when known, else the offset),
 * e.g. "cc1+0x1a2b3c"; a frame in no known object stays "[unknown]". A leaf (a sampled PC,
 * different in every sample) is identified by its function's start instead of its offset,
 * so that a function's samples make one stack (stacks are alike when their frames' names and
 * identities are).
 *
 * No libbpf: the row builders and the unit tests call it with records.
 */
#ifndef SCHEDPROF_UFRAMES_H
#define SCHEDPROF_UFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "model/model.h"
#include "rows/records.h"
#include "rows/rows.h"
#include "schedprof/profile.h"

struct usyms;

/* How a user frame was named. */
enum uframe_how {
	UFRAME_NAMED,	/* a symbol covers it */
	UFRAME_NOSYM,	/* the object is known, no symbol covers the address: "obj+0x..." */
	UFRAME_BUILDID, /* no file or debug file with that build-id */
	UFRAME_IMAGE,	/* a raw IP of a process image never snapshotted */
	UFRAME_NOMAP,	/* a raw IP outside the image's file mappings */
	UFRAME_EMPTY,	/* no frame (status EMPTY) */
};

/* A run's user-frame naming: where symbols come from, where build-ids go, what went wrong. */
struct uframes {
	struct usyms *usyms;
	struct sp_run *run; /* its objects list gets each named object's build-id; may be NULL */
	/* user frames by enum uframe_how, every stack of every view */
	uint64_t how[UFRAME_EMPTY + 1];
	/* the schedules and locks views' stacks (--stacks) */
	uint64_t stacks;	   /* stacks with user frames */
	uint64_t stacks_truncated; /* ... cut short (uframes_complete() false) */
	uint64_t stacks_missing;   /* a user task's stack whose user part was lost */
	/* stacks cut at a frame that no file can hold (offset >= UFRAME_MAX_OFFSET), every view */
	uint64_t astray;
};

/*
 * No file offset is this large. The kernel's build-id walk gives such offsets to the garbage
 * a frame-pointer walk finds in a library without frame pointers: an address below a
 * mapping is taken as in it (find_vma()), so 0x10 in a non-PIE at 0x400000 becomes offset
 * -0x3ffff0. uframes_append() ends a stack there (counted in astray).
 */
#define UFRAME_MAX_OFFSET (1ULL << 47)

/* One user frame as uframes_name() gives it. Strings live until usyms__free() or in buf. */
struct uframe {
	const char *name;   /* never NULL: the function, "obj+0x...", or "[unknown]" */
	const char *object; /* the path as mapped, "[vdso]", or "[unknown]" */
	const char *system_name, *file;
	unsigned int line;
	uint64_t addr;		/* the file offset looked up (a caller's: its return address - 1) */
	uint64_t func;		/* its function's start offset (addr when unknown) */
	char build_id[41];	/* lowercase hex, "" unknown */
	enum uframe_how how;
	const struct usym_inline *inlined; /* usyms_opts.lines: the calls inlined at addr */
	size_t ninlined;
	char buf[96];		/* "obj+0x..." */
};

/*
 * Names frame u of a stack; a non-leaf frame holds a return address, so its call is looked up
 * at offset - 1. tgid and exec_id name the process image of a raw IP.
 */
void uframes_name(struct uframes *uf, const struct sp_uframe *u, int tgid, uint32_t exec_id,
		  bool leaf, struct uframe *ret);

/*
 * Appends the nr user frames of frames[] (innermost first) to row, after what it holds:
 * frames, objects and info (row->objects and row->info are created for all frames when
 * missing: the kernel frames' objects "[kernel]"). A call inlined at a frame's address comes
 * as a frame of its own before it (info.inlined). A frame whose offset no file can hold
 * (UFRAME_MAX_OFFSET) ends the stack. 0 or -ENOMEM (row stays freeable).
 */
int uframes_append(struct uframes *uf, struct sp_stack_row *row, const struct sp_uframe *frames,
		   uint32_t nr, int tgid, uint32_t exec_id, bool leaf_first);
/* How frames[0] was named, and its function's start: a profile row's identity. */
struct uframe_first {
	enum uframe_how how;
	uint64_t func;
};

/* uframes_append(), telling about frames[0] (ret_first may be NULL). */
int uframes_append_how(struct uframes *uf, struct sp_stack_row *row,
		       const struct sp_uframe *frames, uint32_t nr, int tgid, uint32_t exec_id,
		       bool leaf_first, struct uframe_first *ret_first);

/*
 * Makes room in row for n more frames (frames, objects, info: NULL entries), creating
 * row->objects ("[kernel]" for the frames it has) and row->info when missing. 0 or -ENOMEM.
 */
int uframes_row_grow(struct sp_stack_row *row, size_t n);

/*
 * Whether the user frames row->frames[first..] look complete: they reach main() or a process
 * or thread start function, or end with a call from the C library (whose local start
 * functions have no exported name) into another object. A heuristic: frame-pointer walks give
 * no reason for stopping, and code without frame pointers ends them early.
 */
bool uframes_complete(const struct sp_stack_row *row, size_t first);

/*
 * row->info for its first n frames (kernel frames, from kernel stack st as kstack_fill() took
 * them: its last n addresses), created when missing. 0 or -ENOMEM.
 */
int uframes_kernel_info(struct sp_stack_row *row, const __u64 *ips, uint32_t nr);

/* The schedules and locks views' stacks: a view's stack id, with --stacks a stack pair. */
struct uframes_pairs {
	struct sp_records_index pairs;	 /* __u64 -> struct sp_stack_pair */
	struct sp_records_index ustacks; /* __u64 -> struct sp_prof_ustack */
	bool on;			 /* the run took user stacks */
};

/* Indexes the dumped records (either may be empty). 0 or -ENOMEM. */
int uframes_pairs_init(struct uframes_pairs *p, const struct sp_records *pairs,
		       const struct sp_records *ustacks, bool on);
void uframes_pairs_free(struct uframes_pairs *p);

/*
 * A view's stack id into its kernel stack id and, when it is a pair, the pair (else NULL:
 * a kernel stack alone, no user stack taken).
 */
uint64_t uframes_pair_kstack(const struct uframes_pairs *p, uint64_t id,
			     const struct sp_stack_pair **ret_pair);

/*
 * Appends to row's list of x a stack row with proto's comm, pid, count and time, src's kernel
 * frames and, with pair, the user frames of its user stack, then merges it into the first
 * one alike (rows.h stack_index_merge_last). Counts stacks, truncated and missing user
 * stacks in uf. 0 or -ENOMEM.
 */
int uframes_add_stack(struct uframes *uf, const struct uframes_pairs *p, struct stack_index *x,
		      size_t row, const struct sp_stack_row *proto, const struct kstack_src *src,
		      const struct sp_stack_pair *pair);

#endif
