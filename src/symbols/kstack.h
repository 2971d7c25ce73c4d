/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel stack frames into model strings, the same way for every collector: the name of a
 * kernel address (pseudo callers included, a raw 0x... when kallsyms has none), its object
 * ("[kernel]" or "[module]"), a task's comm as a string, and a stack row filled from the
 * frames that BPF recorded, starting at the first scheduler (or lock) frame.
 */
#ifndef SCHEDPROF_KSTACK_H
#define SCHEDPROF_KSTACK_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "model/model.h"
#include "schedprof/fold.h"
#include "schedprof/limits.h"
#include "schedprof/sched.h"

struct ksym;
struct ksyms;

/*
 * Which text sections of struct sp_fold_cfg start the frames kept (bit i: text_start[i]);
 * the frames before the first one are the tracepoint's and the BPF program's.
 */
#define KSTACK_FROM_SCHED 0x1u /* __sched_text */
#define KSTACK_FROM_FOLD 0x7u  /* __sched_text, __lock_text, __cpuidle_text (sp_fold_in_text) */

/*
 * "[unknown]", "[preempted]" and "cpu_idle" for the pseudo callers (fold.h), else the function
 * containing ip, else "0x<hex>". malloc'd; NULL on ENOMEM.
 */
char *kstack_name(const struct ksyms *ks, uint64_t ip);
/* "[kernel]" for s NULL or a vmlinux symbol, else "[module]" written into buf. */
const char *kstack_sym_object(const struct ksym *s, char *buf, size_t len);
/* The object of the function containing ip (kstack_sym_object), malloc'd; NULL on ENOMEM. */
char *kstack_object(const struct ksyms *ks, uint64_t ip);
/* A TASK_COMM_LEN comm (not always NUL-terminated) as a string in buf; returns buf. */
const char *kstack_comm(const char comm[TASK_COMM_LEN], char buf[TASK_COMM_LEN + 1]);
/*
 * Fills row->frames and row->objects (leaf first, from the first frame in one of the `from`
 * text sections of cfg, or from the leaf when no frame is) with st's frames, at most
 * SP_MAX_STACK_DEPTH. 0 or -ENOMEM; on failure row holds what was filled (sp_run_free frees it).
 */
int kstack_fill(struct sp_stack_row *row, const struct ksyms *ks, const struct sp_stack *st,
		const struct sp_fold_cfg *cfg, unsigned int from);

#endif
