/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The test hooks and bench knobs read from the environment (SCHEDPROF_TEST_*,
 * SCHEDPROF_LOCK_BTF, SCHEDPROF_CORE_BTF, SCHEDPROF_USTACK_TIMING, SCHEDPROF_USTACK_OFF): a
 * build has them with meson -Dtest_hooks (auto: with the test suite, as scripts/setup.sh
 * --tests and .ci/run build); a plain build reads none of them.
 */
#ifndef SCHEDPROF_TESTHOOK_H
#define SCHEDPROF_TESTHOOK_H

#include <stdlib.h>

/* The hook's value in the environment, or NULL (always, in a build without the hooks). */
static inline const char *test_hook(const char *name)
{
#ifdef SCHEDPROF_TEST_HOOKS
	return getenv(name);
#else
	(void)name;
	return NULL;
#endif
}

#endif
