/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Symbolizing a saved run again (`report`), with the debug information known now: a debug
 * package installed since the trace, a debuginfod server, or DWARF for --lines.
 *
 * Every user frame that kept its identity (sp_frame_info: build_id and addr, the file offset
 * the collector looked up) is looked up again by build-id: through the files of that build-id
 * under the debug directory (<debug_dir>/.build-id/), or the path the run recorded for it
 * (when that file still has the build-id), or debuginfod. A frame is renamed when its name is
 * the unresolved form "<basename(object)>+0x<hex>" or the mangled form of the name found now;
 * renamed frames get their system_name (the mangled name) and, with lines, their file:line.
 * Stacks, and profile rows whose functions became the same, are merged again.
 *
 * Library module: it never prints; counts say what happened.
 */
#ifndef SCHEDPROF_RESYM_H
#define SCHEDPROF_RESYM_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

struct sp_resym_opts {
	const char *debug_dir; /* NULL: /usr/lib/debug; "" disables */
	bool lines;	       /* add file:line to the frames (DWARF) */
	bool debuginfod;       /* ask debuginfod (DEBUGINFOD_URLS) */
};

struct sp_resym_stats {
	uint64_t frames;    /* candidates: user frames with a build-id and an address that are
			     * unresolved, "[unknown]", mangled, or (lines) without a line */
	uint64_t renamed;   /* frames and profile rows that got a (better) name */
	uint64_t lines;     /* frames that got a file:line */
	uint64_t inlined;   /* (lines) frames inserted for the calls inlined at a frame */
	uint64_t unknown;   /* candidates whose build-id no file or server has */
	uint64_t unnamed;   /* candidates still without a name (object known, no symbol) */
	uint64_t rows_merged; /* profile rows that became one with another */
};

/* 0, or -ENOMEM (the run stays consistent, part of it renamed). */
int sp_resym_run(struct sp_run *run, const struct sp_resym_opts *opts,
		 struct sp_resym_stats *ret_stats);

/* name is "<basename(object)>+0x<hex>", the name a collector gives an unresolved frame. */
bool sp_resym_is_unresolved(const char *name, const char *object);

#endif /* SCHEDPROF_RESYM_H */
