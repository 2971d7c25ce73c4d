// SPDX-License-Identifier: BSD-2-Clause
/*
 * src/base/log.c: the level thresholds (default warnings and errors, -v debug, -vv libbpf's
 * messages), the prefix and the speaker of usage errors, plain hint lines, and where it all
 * goes: stderr, one line per message, never stdout. stderr and stdout are captured into
 * temporary files around each call.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit.h"
#include "base/log.h"

#define ck_assert_logged(expect, ...)                                                            \
	do {                                                                                     \
		struct capture cap_;                                                             \
		char *got_;                                                                      \
                                                                                                 \
		capture_start(&cap_);                                                            \
		__VA_ARGS__;                                                                     \
		got_ = capture_end(&cap_, NULL);                                                 \
		ck_assert_str_eq(got_, expect);                                                  \
		free(got_);                                                                      \
	} while (0)

static void setup(void)
{
	log_set_level(LOG_WARN);
	log_set_prefix("schedprof");
}

START_TEST(default_level)
{
	ck_assert_int_eq(log_get_level(), LOG_WARN);
	ck_assert_logged("schedprof: cannot open x: No such file\n",
			 elog("cannot open %s: %s", "x", "No such file"));
	ck_assert_logged("schedprof: warning: 3 lost\n", wlog("%d lost", 3));
	ck_assert_logged("", ilog("info"));
	ck_assert_logged("", dlog("debug"));
}
END_TEST

START_TEST(levels)
{
	log_set_level(LOG_ERROR);
	ck_assert_logged("", wlog("quiet"));
	ck_assert_logged("schedprof: e\n", elog("e"));
	log_set_level(LOG_INFO);
	ck_assert_logged("schedprof: i\n", ilog("i"));
	ck_assert_logged("", dlog("d"));
	log_set_level(LOG_DEBUG);
	ck_assert_logged("schedprof: d\n", dlog("d"));
	ck_assert_logged("schedprof: i\nschedprof: warning: w\n", ilog("i"); wlog("w"));
}
END_TEST

static int libbpf_says(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = log_libbpf(0, fmt, ap);
	va_end(ap);
	return n;
}

/* -v: debug; -vv: libbpf's messages too, as libbpf writes them (no prefix, its newline). */
START_TEST(verbose)
{
	ck_assert_logged("", ck_assert_int_eq(libbpf_says("libbpf: %s\n", "x"), 0));
	log_more_verbose();
	ck_assert_int_eq(log_get_level(), LOG_DEBUG);
	ck_assert_logged("schedprof: d\n", dlog("d"));
	ck_assert_logged("", ck_assert_int_eq(libbpf_says("libbpf: %s\n", "x"), 0));
	log_more_verbose();
	ck_assert_int_eq(log_get_level(), LOG_LIBBPF);
	ck_assert_logged("libbpf: loading x\n",
			 ck_assert_int_eq(libbpf_says("libbpf: loading %s\n", "x"), 18));
	log_more_verbose(); /* stays */
	ck_assert_int_eq(log_get_level(), LOG_LIBBPF);
}
END_TEST

static void as(const char *who, enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void as(const char *who, enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg_as(who, level, fmt, ap);
	va_end(ap);
}

START_TEST(prefixes)
{
	log_set_prefix("schedprof report");
	ck_assert_logged("schedprof report: run.json: bad\n", elog("%s: bad", "run.json"));
	ck_assert_logged("schedprof report: warning: w\n", wlog("w"));
	/* a usage error names its command whatever the prefix */
	ck_assert_logged("schedprof diff: give two runs\n", as("schedprof diff", LOG_ERROR,
							       "give %s runs", "two"));
	ck_assert_logged("", as("schedprof diff", LOG_DEBUG, "hidden"));
	/* hints: no prefix, the level's threshold */
	ck_assert_logged("Try 'schedprof diff --help'.\n",
			 log_plain(LOG_ERROR, "Try '%s --help'.", "schedprof diff"));
	ck_assert_logged("", log_plain(LOG_INFO, "hidden"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, default_level);
	tcase_add_test(tc, levels);
	tcase_add_test(tc, verbose);
	tcase_add_test(tc, prefixes);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
