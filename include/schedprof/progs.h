/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The BPF programs built more than once: each build is one SEC() program compiled from the
 * same body with what it provides as constants, so the verifier walks only that build's code
 * (one body with run-time flags was verified whole at every load). One build of a program is
 * loaded per run: the first, in this order, that provides all the run needs
 * (src/loader/prog_builds.c).
 *
 * The rows are the only place the builds are named: the BPF objects emit one program per row
 * (src/views/schedules/schedules.bpf.c, src/views/locks/locks.bpf.c,
 * src/views/profile/profile.bpf.c), the loader and the collectors pick from them, trace's test
 * build lists them (SCHEDPROF_TEST_LOAD_ONLY=list: one line "build PROGRAM BUILD OPTIONS" a row,
 * read by tests/kernels/verifier_budget.sh), and the bench scripts read this file
 * (bench/builds.sh).
 *
 * X(program, build, provides, options): the SP_BUILD_* bits the build provides, and the
 * options of `schedprof trace` that load it (for the tests and bench scripts). One row a
 * line, in that form: the scripts read it.
 */
#ifndef SCHEDPROF_PROGS_H
#define SCHEDPROF_PROGS_H

#define SP_BUILD_TIMELINE (1u << 0)	/* sp_switch: the timeline view's part */
#define SP_BUILD_FULL_WALKS (1u << 1)	/* every caller by a full stack walk, no fast path */
#define SP_BUILD_CALLCHAINS (1u << 2)	/* prof_sample: the kernel and user stacks (-g) */

#define SP_SWITCH_BUILDS(X)                                                                     \
	X(sp_switch, sp_switch, 0, "-a --wakers")                                               \
	X(sp_switch, sp_switch_tl, SP_BUILD_TIMELINE, "-a --timeline")                          \
	X(sp_switch, sp_switch_full, SP_BUILD_TIMELINE | SP_BUILD_FULL_WALKS, "-a --stacks")

#define SP_LOCK_BEGIN_BUILDS(X)                                                                 \
	X(lock_begin, lock_begin, 0, "-a --wakers")                                             \
	X(lock_begin, lock_begin_full, SP_BUILD_FULL_WALKS, "-a --stacks")

#define SP_PROF_SAMPLE_BUILDS(X)                                                                \
	X(prof_sample, prof_sample, 0, "-a --wakers")                                           \
	X(prof_sample, prof_sample_g, SP_BUILD_CALLCHAINS, "-a --stacks")

#define SP_PROG_BUILDS(X) SP_SWITCH_BUILDS(X) SP_LOCK_BEGIN_BUILDS(X) SP_PROF_SAMPLE_BUILDS(X)

/* A build's body: has it `bit`? (a constant, folded by the compiler) */
#define SP_BUILD_HAS(provides, bit) (((provides) & (bit)) != 0)

#endif
