/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the row builders (sched_rows, profile_rows, lock_rows) share: indexes that find the
 * row named alike, or the stack row alike, in constant time, so that building a view from
 * the maps is linear in the records. Both index positions in the view's own arrays (which
 * may move as they grow), never pointers into them.
 */
#ifndef SCHEDPROF_ROWS_H
#define SCHEDPROF_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "base/hashmap.h"
#include "model/model.h"
#include "schedprof/fold.h"
#include "schedprof/sched.h"

struct ksyms;

#define ROW_KEY_MAX 3

/* The strings row pos of view is keyed by (NULL reads as ""). */
typedef void (*row_key_fn)(void *view, size_t pos, const char *ret[ROW_KEY_MAX]);

struct row_index {
	struct hashmap map; /* position -> 0; the position -1 is the probed key */
	row_key_fn key_of;
	void *view;
	unsigned int nkeys;
	const char *const *probe;
};

void row_index_init(struct row_index *x, row_key_fn key_of, void *view, unsigned int nkeys);
/* The position of the row keyed key[0..nkeys), or -1. */
long row_index_find(struct row_index *x, const char *const *key);
/* Indexes row pos (its key strings set). 0 or -ENOMEM. */
int row_index_add(struct row_index *x, size_t pos);
void row_index_free(struct row_index *x);

/* The stack list of row i of view. */
typedef struct sp_stack_list *(*stack_list_fn)(void *view, size_t i);

/*
 * Stack rows of every row of a view, by what makes two alike: the same comm, pid and frame
 * names (and objects, when with_objects), as sp_stack_rows_alike() compares them.
 */
struct stack_index {
	struct hashmap map; /* row << 32 | position -> 0; -1 is the probe */
	stack_list_fn list;
	void *view;
	bool with_objects;
	size_t probe_row;
	const struct sp_stack_row *probe;
};

void stack_index_init(struct stack_index *x, stack_list_fn list, void *view, bool with_objects);
/* The position in row's list of the stack alike s, or -1. */
long stack_index_find(struct stack_index *x, size_t row, const struct sp_stack_row *s);
/* Indexes stack pos of row's list. 0 or -ENOMEM. */
int stack_index_add(struct stack_index *x, size_t row, size_t pos);
/*
 * The last stack of row's list merged into the first one alike (count and time added; that
 * one keeps its place), or indexed when it is the first of its kind. 0 or -ENOMEM.
 */
int stack_index_merge_last(struct stack_index *x, size_t row);
void stack_index_free(struct stack_index *x);

/*
 * The keys of the rows the row map holds, as fixed-size byte strings (the caller builds each
 * from a record's fields into a zeroed buffer, so padding never differs). A stack record
 * whose row key is not there belongs to a row the full map lost: it is in the view's lost
 * count already and must not be shown under another row (rows + lost = total, and the
 * stacks under a row never exceed it).
 */
struct key_set {
	struct hashmap map; /* key bytes (owned) -> 0 */
	size_t len;
};

void key_set_init(struct key_set *s, size_t len);
/* Adds len bytes at key (copied). 0 or -ENOMEM; a key already there is fine. */
int key_set_add(struct key_set *s, const void *key);
bool key_set_has(const struct key_set *s, const void *key);
void key_set_free(struct key_set *s);

/*
 * One record's share of a row: raises *max to max_ns and adds (count, time_ns, max_ns) to
 * name's entry of list (a comm, or a caller for the sleeper groups). 0 or -ENOMEM.
 */
int rows_account(struct sp_comm_list *list, uint64_t *max, const char *name, uint64_t count,
		 uint64_t time_ns, uint64_t max_ns);

/* Kernel frames as BPF recorded them, and how to symbolize them (kstack_fill). */
struct kstack_src {
	const struct sp_stack *st;
	const struct ksyms *ks;
	const struct sp_fold_cfg *cfg;
	unsigned int from; /* KSTACK_FROM_* */
};

/*
 * Appends to row's list a stack row with proto's comm, pid, count and time and src's frames
 * (*ret: the new row, to add to before it is merged), without merging it. 0 or -ENOMEM.
 */
int stack_index_push_kstack(struct stack_index *x, size_t row, const struct sp_stack_row *proto,
			    const struct kstack_src *src, struct sp_stack_row **ret);
/*
 * The same, then merged into the first one alike (stack_index_merge_last). 0 or -ENOMEM.
 */
int stack_index_add_kstack(struct stack_index *x, size_t row, const struct sp_stack_row *proto,
			   const struct kstack_src *src);

#endif
