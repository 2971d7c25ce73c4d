/* SPDX-License-Identifier: BSD-2-Clause */
/* Differential flame graphs (`schedprof diff -f html`), drawn by format_flame.c. */
#ifndef SCHEDPROF_FLAME_H
#define SCHEDPROF_FLAME_H

#include <stdint.h>
#include <stdio.h>
#include "model/model.h"
#include "format/render.h"

/*
 * One page with, per view of `views` (SP_VIEW_* mask) either run has stacks for, two flame
 * graphs: the after run (b) laid out, each frame coloured by the change of its value (count,
 * or time with SP_VALUE_TIME) from a to b: red grew, blue shrank, deeper for larger changes,
 * new frames red; then the before run (a) laid out and coloured the same way, where the frames
 * gone in b still show (flamegraph.pl's difffolded, drawn once plain and once --negate'd).
 * A frame is the same in both runs when the names from the root (comm, then the outermost
 * frame) agree. Tooltips give before, after and the change. 0 or -errno.
 */
int flame_diff_html(const struct sp_run *a, const struct sp_run *b, unsigned int views,
		    enum sp_value value, const char *name_a, const char *name_b, FILE *f);

/*
 * B - A, each saturated at INT64_MAX: the change the graphs colour by, and the one diff's
 * tables print (diff.h takes it from here: diff.c draws through this file, not the reverse).
 */
int64_t sp_diff_delta(uint64_t a, uint64_t b);

#endif
