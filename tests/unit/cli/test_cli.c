// SPDX-License-Identifier: BSD-2-Clause
/*
 * What the sub-commands share (src/cli/cli.c, compiled into this test with render_opts.c):
 * report/diff's option loop (operands, stray view lists, unknown and incomplete options, -v,
 * -V, -h), and writing and loading runs, with the messages each failure prints on stderr and
 * nothing else. The render options themselves: test_render_opts.c.
 */
#include <check.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "base/log.h"
#include "cli/render_opts.h"

static int helps;

static void test_help(void)
{
	helps++;
	printf("usage: schedprof report [OPTIONS] RUN.json\n");
}

static const struct cli_cmd cmd = { "report", test_help };

static const struct option longopts[] = { RENDER_LONG_OPTS, RUNS_LONG_OPTS };

static void setup(void)
{
	log_set_level(LOG_WARN);
	log_set_prefix("schedprof");
	helps = 0;
}

/* ---- report and diff's option loop ---- */

struct parsed {
	int ret;
	struct runs_opts o;
	char *err, *out;
};

/* runs_parse over argv (NULL-terminated), with stderr and stdout captured. */
static struct parsed parse(int nfiles, char **argv)
{
	struct parsed p;
	struct capture cap;
	int argc = 0;

	while (argv[argc])
		argc++;
	capture_start(&cap);
	p.ret = runs_parse(&cmd, argc, argv, longopts, nfiles, "one saved run", &p.o);
	p.err = capture_end(&cap, &p.out);
	return p;
}

static void parsed_free(struct parsed *p)
{
	free(p->err);
	free(p->out);
}

START_TEST(runs_ok)
{
	char *argv[] = { "report", "--views", "profile", "-n", "5", "--stacks", "-f", "folded",
			 "-o", "/tmp/out.folded", "run.json", NULL };
	struct parsed p = parse(1, argv);

	ck_assert_int_eq(p.ret, 0);
	ck_assert_str_eq(p.err, "");
	ck_assert_str_eq(p.out, "");
	ck_assert_uint_eq(p.o.render.views, SP_VIEW_PROFILE);
	ck_assert_uint_eq(p.o.render.nrows, 5);
	ck_assert(p.o.render.stacks);
	ck_assert_int_eq(p.o.render.format, SP_FMT_FOLDED);
	ck_assert_str_eq(p.o.output, "/tmp/out.folded");
	ck_assert_str_eq(p.o.files[0], "run.json");
	parsed_free(&p);
	/* long options with '=', and diff's two operands */
	{
		char *argv2[] = { "diff", "--rows=3", "--value=time", "a.json", "b.json", NULL };

		p = parse(2, argv2);
		ck_assert_int_eq(p.ret, 0);
		ck_assert_uint_eq(p.o.render.nrows, 3);
		ck_assert_int_eq(p.o.render.value, SP_VALUE_TIME);
		ck_assert_str_eq(p.o.files[1], "b.json");
		ck_assert_ptr_null(p.o.output);
		parsed_free(&p);
	}
}
END_TEST

START_TEST(runs_usage_errors)
{
	static const struct {
		int nfiles;
		const char *argv[6];
		const char *msg;
	} t[] = {
		{ 1, { "report" }, "give one saved run" },
		{ 1, { "report", "a.json", "b.json" }, "give one saved run" },
		{ 1, { "report", "--bogus", "a.json" }, "unknown or incomplete option '--bogus'" },
		{ 1, { "report", "--bogus=1", "a.json" }, "unknown or incomplete option '--bogus'" },
		{ 1, { "report", "-x", "a.json" }, "unknown or incomplete option '-x'" },
		{ 1, { "report", "a.json", "-n" }, "unknown or incomplete option '-n'" },
		{ 1, { "report", "a.json", "--rows" }, "unknown or incomplete option '--rows'" },
		{ 1, { "report", "-n", "x", "a.json" }, "-n: 'x' is not a number (0..1000000)" },
		/* the old `-v VIEWS`: -v is --verbose now, and the list is an operand */
		{ 1, { "report", "-v", "schedules,locks", "a.json" },
		  "'schedules,locks' is a view list: choose views with --views schedules,locks "
		  "(-v means --verbose)" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *argv[7] = { 0 };
		char want[256];
		struct parsed p;

		for (size_t k = 0; k < 6 && t[i].argv[k]; k++)
			argv[k] = (char *)t[i].argv[k];
		p = parse(t[i].nfiles, argv);
		ck_assert_msg(p.ret == EXIT_USAGE, "case %zu: %d", i, p.ret);
		snprintf(want, sizeof(want),
			 "schedprof report: %s\nTry 'schedprof report --help'.\n", t[i].msg);
		ck_assert_str_eq(p.err, want);
		ck_assert_str_eq(p.out, "");
		parsed_free(&p);
	}
}
END_TEST

START_TEST(runs_common_options)
{
	char *version[] = { "report", "-V", "a.json", NULL };
	char *help[] = { "report", "--help", NULL };
	char *verbose[] = { "report", "-vv", "a.json", NULL };
	struct parsed p;
	char want[64];

	p = parse(1, version);
	ck_assert_int_eq(p.ret, CLI_DONE);
	snprintf(want, sizeof(want), "schedprof %s\n", SCHEDPROF_VERSION);
	ck_assert_str_eq(p.out, want);
	ck_assert_str_eq(p.err, "");
	parsed_free(&p);
	p = parse(1, help);
	ck_assert_int_eq(p.ret, CLI_DONE);
	ck_assert_int_eq(helps, 1);
	ck_assert_str_eq(p.out, "usage: schedprof report [OPTIONS] RUN.json\n");
	parsed_free(&p);
	ck_assert_int_eq(log_get_level(), LOG_WARN);
	p = parse(1, verbose);
	ck_assert_int_eq(p.ret, 0);
	ck_assert_int_eq(log_get_level(), LOG_LIBBPF);
	parsed_free(&p);
	/* from here on, messages name the command */
	{
		struct capture cap;
		char *err;

		capture_start(&cap);
		elog("x");
		err = capture_end(&cap, NULL);
		ck_assert_str_eq(err, "schedprof report: x\n");
		free(err);
	}
}
END_TEST

/* Sizes: bytes or K/M/G/T, within the range, which every refusal names. */
START_TEST(sizes)
{
	static const struct {
		const char *arg;
		uint64_t want; /* 0: refused with msg */
		const char *msg;
	} cases[] = {
		{ "4096", 4096, NULL },
		{ "4K", 4096, NULL },
		{ "64m", 64ULL << 20, NULL },
		{ "2G", 2ULL << 30, NULL },
		{ "4095", 0, "schedprof report: --size: 4095 is out of range (4K to 2G)\n" },
		{ "3G", 0, "schedprof report: --size: 3G is out of range (4K to 2G)\n" },
		{ "99999999999999999999", 0,
		  "schedprof report: --size: 99999999999999999999 is out of range (4K to 2G)\n" },
		{ "", 0, "schedprof report: --size: '' is not a size (4K to 2G: a number of bytes, "
			 "or with K, M, G or T)\n" },
		{ "K", 0, "schedprof report: --size: 'K' is not a size (4K to 2G: a number of bytes, "
			  "or with K, M, G or T)\n" },
		{ "-1", 0, "schedprof report: --size: '-1' is not a size (4K to 2G: a number of "
			   "bytes, or with K, M, G or T)\n" },
		{ "1.5M", 0, "schedprof report: --size: '1.5M' is not a size (4K to 2G: a number of "
			     "bytes, or with K, M, G or T)\n" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct capture cap;
		uint64_t v = 0;
		char *err;
		int ret;

		capture_start(&cap);
		ret = cli_parse_size(&cmd, "--size", cases[i].arg, 4ULL << 10, 2ULL << 30, &v);
		err = capture_end(&cap, NULL);
		if (cases[i].want) {
			ck_assert_msg(ret == 0 && v == cases[i].want, "%s: ret %d, %llu", cases[i].arg,
				      ret, (unsigned long long)v);
			ck_assert_str_eq(err, "");
		} else {
			ck_assert_int_ne(ret, 0);
			/* then "Try 'schedprof report --help'." */
			ck_assert_msg(!strncmp(err, cases[i].msg, strlen(cases[i].msg)), "%s", err);
		}
		free(err);
	}
}
END_TEST

/* ---- outputs and saved runs ---- */

static int write_hello(const void *ctx, FILE *f)
{
	fputs(ctx, f);
	return 0;
}

static int write_fails(const void *ctx, FILE *f)
{
	(void)ctx;
	(void)f;
	return -ENOSPC;
}

START_TEST(outputs)
{
	char path[] = "/tmp/sp_cli_XXXXXX", buf[64] = "", *err;
	struct capture cap;
	FILE *f;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	capture_start(&cap);
	ck_assert_int_eq(cli_write_output(path, "report", write_hello, "hello\n"), 0);
	err = capture_end(&cap, NULL);
	ck_assert_str_eq(err, "");
	free(err);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_str_eq(buf, "hello\n");
	/* the writer's error, logged once with what and where */
	capture_start(&cap);
	ck_assert_int_eq(cli_write_output(path, "flame graph", write_fails, NULL), -ENOSPC);
	err = capture_end(&cap, NULL);
	snprintf(buf, sizeof(buf), "schedprof: cannot write the flame graph to %s: ", path);
	ck_assert_msg(!strncmp(err, buf, strlen(buf)), "%s", err);
	ck_assert_ptr_nonnull(strstr(err, strerror(ENOSPC)));
	free(err);
	unlink(path);
	/* a file that cannot be opened */
	capture_start(&cap);
	ck_assert_int_eq(cli_write_output("/nonexistent/x", "report", write_hello, "x"), -ENOENT);
	err = capture_end(&cap, NULL);
	ck_assert_str_eq(err, "schedprof: cannot write /nonexistent/x: No such file or directory\n");
	free(err);
	/* text formats go to a terminal, binary ones only with -o (stdout is no terminal here) */
	ck_assert_int_eq(cli_check_output(&cmd, SP_FMT_TABLE, NULL), 0);
	ck_assert_int_eq(cli_check_output(&cmd, SP_FMT_PPROF, "out.pb.gz"), 0);
	if (!isatty(STDOUT_FILENO))
		ck_assert_int_eq(cli_check_output(&cmd, SP_FMT_SVG, NULL), 0);
}
END_TEST

START_TEST(load_runs)
{
	struct sp_run run;
	struct capture cap;
	char *err;

	capture_start(&cap);
	ck_assert_int_eq(cli_load_run(FIX("run_a.json"), &run), 0);
	err = capture_end(&cap, NULL);
	ck_assert_str_eq(err, "");
	free(err);
	ck_assert(run.sched.present);
	sp_run_free(&run);
	capture_start(&cap);
	ck_assert_int_eq(cli_load_run(FIX("bad_syntax.json"), &run), -EINVAL);
	err = capture_end(&cap, NULL);
	ck_assert_msg(!strncmp(err, "schedprof: " FIX("bad_syntax.json") ": ",
			       strlen("schedprof: " FIX("bad_syntax.json") ": ")), "%s", err);
	ck_assert_ptr_eq(strchr(err, '\n'), err + strlen(err) - 1); /* one line */
	free(err);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, runs_ok);
	tcase_add_test(tc, runs_usage_errors);
	tcase_add_test(tc, runs_common_options);
	tcase_add_test(tc, sizes);
	tcase_add_test(tc, outputs);
	tcase_add_test(tc, load_runs);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
