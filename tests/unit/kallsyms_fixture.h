/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fixture kallsyms (tests/fixtures/kallsyms_fold.txt) and its fold configuration, for the
 * tests that symbolize or fold kernel frames: fixture_load() and fixture_free() as a Check
 * fixture around each test, A() for an address in it. Included as "../kallsyms_fixture.h".
 */
#ifndef SCHEDPROF_TEST_KALLSYMS_FIXTURE_H
#define SCHEDPROF_TEST_KALLSYMS_FIXTURE_H

#include <check.h>
#include <stdint.h>
#include "loader/foldcfg.h"
#include "symbols/ksyms.h"

static struct ksyms *ks;
static struct sp_fold_cfg cfg;

static inline void fixture_load(void)
{
	ks = ksyms__load(FIXTURES_DIR "/kallsyms_fold.txt");
	ck_assert_ptr_nonnull(ks);
	ck_assert_int_eq(fold_cfg_build(ks, &cfg), 0);
}

static inline void fixture_free(void)
{
	ksyms__free(ks);
	ks = NULL;
}

/* The address of name + off in the fixture. */
static inline uint64_t A(const char *name, uint64_t off)
{
	const struct ksym *s = ksyms__get(ks, name);

	ck_assert_msg(s, "fixture lacks %s", name);
	return s->addr + off;
}

#endif
