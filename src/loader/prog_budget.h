/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The verifier budget's side in trace (tests/kernels/verifier_budget.sh), a test build's:
 * with SCHEDPROF_TEST_LOAD_ONLY set, trace configures the BPF object as its options select,
 * then, instead of tracing:
 *  - "list": prints every program of the object, and whether these options load it, then
 *    the builds' table (loader/prog_builds.h): each build's program and the options that
 *    load it;
 *  - a program's name: loads that program alone (with every map, sized by the options) and
 *    prints its verified instructions (bpf_prog_info, Linux 5.16) and the load's time.
 * Nothing is attached. One load per process: a second load in the same process would meet
 * the attach ID placeholder (btf_interpose.c).
 */
#ifndef SCHEDPROF_PROG_BUDGET_H
#define SCHEDPROF_PROG_BUDGET_H

#include <stdbool.h>

struct bpf_object;

/* The mode asked (the environment's value), or NULL: trace as usual (always, in a release build). */
const char *prog_budget_mode(void);
/*
 * Before load: "list" prints the programs (then 1: done, do not load); a name leaves only that
 * program to load (0), or -ENOENT when the object has none of that name or these options do not
 * select it (said in one line).
 */
int prog_budget_select(struct bpf_object *obj, const char *mode);
/* After the load (err: its result, ms: its time): prints the program's line. 0 or -errno. */
int prog_budget_report(struct bpf_object *obj, const char *mode, int err, double ms);

#endif
