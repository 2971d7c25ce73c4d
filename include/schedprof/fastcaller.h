/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The caller fast path (bpf/fastcaller.bpf.h), as its loaders see it: the size of
 * the learned frame distances' map, and what one attribution did (sp_fast_post()'s answer,
 * which each program adds to its own counters).
 */
#ifndef SCHEDPROF_FASTCALLER_H
#define SCHEDPROF_FASTCALLER_H

/* frame_dist: return addresses seen in full walks (a few thousand cover a busy kernel) */
#define SP_FRAME_DIST_MAX 8192

#define SP_FC_FAST 1	 /* attributed from the raw stack words */
#define SP_FC_VERIFIED 2 /* and checked by a full walk */
#define SP_FC_MISMATCH 4 /* which disagreed (its answer was kept) */
#define SP_FC_OFF 8	 /* the tracepoint's arguments were not on the task's stack: full walk */

/*
 * Where a program's attributions start (a global of its object, in .bss): learned from its
 * tracepoint's full walks, in BPF only.
 */
struct sp_fast_start {
	__u64 ip; /* the address expected at the first frame's word; 0: not learned yet */
	/*
	 * Words to read: up to the deepest caller a full walk found so far (all SP_RAW_WORDS
	 * until then). An event whose caller lies further misses, reads all the words and
	 * takes the full walk, which raises it: the copy is as short as the deepest caller
	 * needs (on a pipe, a few hundred bytes of the 1 KiB).
	 */
	__u64 need_words;
	__u32 pos; /* the first frame's word from the argument array */
	__u32 pad;
};

/* A kept kernel stack from the raw words (bpf/faststack.bpf.h): frames below its first one */
#define SP_STACK_PREFIX_MAX 8

/*
 * Where a program's whole stacks start (a global of its object, in .bss), learned from its
 * full walks: the walk's frames below the argument array (the program's and the
 * tracepoint's, constant), then the first frame above it, as struct sp_fast_start.
 */
struct sp_stack_start {
	__u64 ip; /* the first frame above the argument array; 0: not learned yet */
	__u32 pos; /* its word from the argument array */
	__u32 nprefix; /* frames below it: the walk's first, in prefix */
	__u64 prefix[SP_STACK_PREFIX_MAX];
	/* their classes for the folds: fold_class() and wake_class() (bpf/common.bpf.h) */
	__u8 pcls[SP_STACK_PREFIX_MAX];
	__u8 pwake[SP_STACK_PREFIX_MAX];
};
#endif
