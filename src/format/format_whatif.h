/* SPDX-License-Identifier: BSD-2-Clause */
/* `report --what-if` (whatif.h) as a table or as JSON: {"what_if": {...}}. 0 or -errno. */
#ifndef SCHEDPROF_FORMAT_WHATIF_H
#define SCHEDPROF_FORMAT_WHATIF_H

#include <stdio.h>
#include "model/whatif.h"

int format_whatif_table(const struct sp_whatif *w, FILE *f);
int format_whatif_json(const struct sp_whatif *w, FILE *f);
/*
 * Two runs' predictions side by side (diff --what-if): per case and CPU count A, B and the
 * change; JSON {"what_if": {"a": ..., "b": ...}}.
 */
int format_whatif_diff_table(const struct sp_whatif *a, const struct sp_whatif *b,
			     const char *name_a, const char *name_b, FILE *f);
int format_whatif_diff_json(const struct sp_whatif *a, const struct sp_whatif *b, FILE *f);

#endif
