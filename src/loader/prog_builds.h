/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The builds of the BPF programs built more than once (include/schedprof/progs.h), as a
 * table: the loader and the collectors turn a program's builds on and off through it, never
 * by a build's name.
 */
#ifndef SCHEDPROF_PROG_BUILDS_H
#define SCHEDPROF_PROG_BUILDS_H

#include <stdbool.h>
#include <stddef.h>
#include "schedprof/progs.h"

struct bpf_object;
struct bpf_program;

struct sp_prog_build {
	const char *program;	/* what the views ask for: sp_switch, lock_begin, prof_sample */
	const char *build;	/* the SEC() program's name in the object */
	unsigned int provides;	/* SP_BUILD_* */
	const char *options;	/* trace options that load it (tests, bench scripts) */
};

extern const struct sp_prog_build sp_prog_builds[];
extern const size_t sp_nprog_builds;

/* The build of program to load for needs (SP_BUILD_*): the first that provides them all. */
const struct sp_prog_build *sp_prog_build_pick(const char *program, unsigned int needs);

/*
 * Every build of program off in obj, then, when on, the one for needs: the build's program,
 * or NULL (off, or not in obj).
 */
struct bpf_program *sp_prog_build_load(struct bpf_object *obj, const char *program,
				       unsigned int needs, bool on);

/* The build of program for needs in obj, loaded or not, or NULL. */
struct bpf_program *sp_prog_build_find(struct bpf_object *obj, const char *program,
				       unsigned int needs);

/* Is name one of program's builds? */
bool sp_prog_is_build_of(const char *name, const char *program);

#endif
