/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Interned strings of a run read from JSON. A saved run names the same functions, objects
 * and comms over and over (2.4 million frames, 35 thousand names in a 100,000-stack run):
 * reading it with one malloc'd copy per string spent most of `report`'s time in malloc and
 * free. A run whose strings come from a pool (sp_run.strings) keeps one copy of each, and
 * sp_run_free releases the pool at once instead of each string.
 */
#ifndef SCHEDPROF_STRPOOL_H
#define SCHEDPROF_STRPOOL_H

#include <stdbool.h>
#include <stddef.h>

struct sp_strpool;

/* An empty pool, or NULL (ENOMEM). */
struct sp_strpool *sp_strpool_new(void);
/* The pool's copy of s (the same pointer for equal strings), or NULL (ENOMEM). */
char *sp_strpool_intern(struct sp_strpool *p, const char *s);
/* true when pred holds for a string of the pool (each distinct string is tried once). */
bool sp_strpool_any(const struct sp_strpool *p, bool (*pred)(const char *s));
/* Frees every string of the pool. NULL is fine. */
void sp_strpool_free(struct sp_strpool *p);

#endif
