/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for the saved-run reader (model_json): the fields of the fixture runs, the
 * pairing with the writer (model -> format_json -> model_json -> format_json is byte-identical,
 * and every format renders the same from the model and from its JSON), and the rejections:
 * malformed, truncated and wrong-schema documents, wrong types, missing keys, each with one
 * line naming the key path.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit.h"
#include "model/model_json.h"
#include "model/schema.h"
#include "format/render.h"

#define FIX(name) FIXTURES_DIR "/" name

static char *slurp(const char *path, size_t *ret_len)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "rb");
	FILE *m = open_memstream(&buf, &len);
	int c;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_ptr_nonnull(m);
	while ((c = getc(f)) != EOF)
		putc(c, m);
	fclose(f);
	ck_assert_int_eq(fclose(m), 0);
	*ret_len = len;
	return buf;
}

static struct render_opts opts_for(enum sp_format format)
{
	struct render_opts o = {
		.format = format,
		.views = SP_VIEW_SCHED | SP_VIEW_PROFILE | SP_VIEW_LOCKS,
		.nrows = 20,
		.nstacks = 3,
	};
	return o;
}

static char *render_mem(const struct sp_run *run, enum sp_format format, size_t *ret_len)
{
	struct render_opts o = opts_for(format);

	return unit_render(run, &o, ret_len);
}

static void load_ok(const char *path, struct sp_run *run)
{
	char err[256];
	int rc = sp_run_load_json(path, run, err, sizeof(err));

	ck_assert_msg(rc == 0, "%s: %d: %s", path, rc, err);
}

static void parse_ok(const char *text, size_t len, struct sp_run *run)
{
	char err[256];
	int rc = sp_run_from_json(text, len, run, err, sizeof(err));

	ck_assert_msg(rc == 0, "%d: %s", rc, err);
}

/* The text with the first occurrence of from replaced by to (which must be there). */
static char *replace(const char *text, const char *from, const char *to)
{
	const char *p = strstr(text, from);
	char *out;

	ck_assert_msg(p != NULL, "'%s' not in the fixture", from);
	out = malloc(strlen(text) - strlen(from) + strlen(to) + 1);
	ck_assert_ptr_nonnull(out);
	memcpy(out, text, (size_t)(p - text));
	strcpy(out + (p - text), to);
	strcat(out, p + strlen(from));
	return out;
}

/* ---- the fixtures' contents ---- */

START_TEST(test_run_a_fields)
{
	struct sp_run run;
	const struct sp_sched_row *r;

	load_ok(FIX("run_a.json"), &run);
	ck_assert_str_eq(run.schema, SP_SCHEMA);
	ck_assert_str_eq(run.version, "0.1.0");
	ck_assert_str_eq(run.kernel, "6.18.44");
	ck_assert_str_eq(run.hostname, "vm");
	ck_assert_int_eq(run.ncpus, 2);
	ck_assert_uint_eq(run.start_unix_ns, 1764480000000000000ULL);
	ck_assert_uint_eq(run.elapsed_ns, 9100000000ULL);
	ck_assert_int_eq(run.target.mode, SP_TARGET_COMMAND);
	ck_assert_str_eq(run.target.command, "make -s -j2 CFLAGS=-O2");
	ck_assert_int_eq(run.target.exit_status, 0);
	ck_assert(run.target.has_rusage);
	ck_assert_uint_eq(run.target.user_ns, 14900000000ULL);
	ck_assert_uint_eq(run.target.sys_ns, 2400000000ULL);
	ck_assert(run.sched.present);
	ck_assert(!run.profile.present);
	ck_assert(!run.locks.present);
	ck_assert_uint_eq(run.sched.total, 40000);
	ck_assert_uint_eq(run.sched.voluntary, 38000);
	ck_assert_uint_eq(run.sched.preempted, 2000);
	ck_assert_uint_eq(run.sched.missing_stacks, 10);
	ck_assert_uint_eq(run.sched.nrows, 4);
	r = &run.sched.rows[0];
	ck_assert_str_eq(r->caller, "anon_pipe_read");
	ck_assert_str_eq(r->wait, "pipe");
	ck_assert_uint_eq(r->count, 36099);
	ck_assert_uint_eq(r->offcpu_ns, 7900000000ULL);
	ck_assert_uint_eq(r->max_ns, 12100000);
	ck_assert_uint_eq(r->comms.n, 2);
	ck_assert_str_eq(r->comms.v[0].comm, "as");
	ck_assert_uint_eq(r->comms.v[0].count, 20000);
	ck_assert_uint_eq(r->comms.v[0].time_ns, 4000000000ULL);
	ck_assert_uint_eq(r->comms.v[0].max_ns, 12100000);
	ck_assert_uint_eq(r->stacks.n, 2);
	ck_assert_str_eq(r->stacks.v[0].comm, "as");
	ck_assert_uint_eq(r->stacks.v[0].count, 19990);
	ck_assert_uint_eq(r->stacks.v[0].time_ns, 3990000000ULL);
	ck_assert_uint_eq(r->stacks.v[0].nframes, 7);
	ck_assert_str_eq(r->stacks.v[0].frames[0], "__schedule");
	ck_assert_str_eq(r->stacks.v[0].frames[6], "entry_SYSCALL_64_after_hwframe");
	ck_assert_ptr_nonnull(r->stacks.v[0].objects);
	ck_assert_str_eq(r->stacks.v[0].objects[2], "[kernel]");
	r = &run.sched.rows[1];
	ck_assert_str_eq(r->caller, "[preempted]");
	ck_assert_ptr_null(r->wait);
	ck_assert_uint_eq(r->stacks.n, 0);
	ck_assert_str_eq(run.sched.rows[3].stacks.v[0].objects[3], "[ext4]");
	sp_run_free(&run);
	ck_assert_ptr_null(run.schema);
	sp_run_free(&run); /* twice is harmless */
}
END_TEST

START_TEST(test_run_full_fields)
{
	struct sp_run run;
	const struct sp_profile_row *p;
	const struct sp_lock_row *l;

	load_ok(FIX("run_full.json"), &run);
	ck_assert_int_eq(run.target.mode, SP_TARGET_PIDS);
	ck_assert_uint_eq(run.target.npids, 2);
	ck_assert_int_eq(run.target.pids[0], 1234);
	ck_assert_int_eq(run.target.pids[1], 5678);
	ck_assert(!run.target.has_rusage);
	ck_assert_ptr_null(run.target.command);
	ck_assert_uint_eq(run.objects.n, 1);
	ck_assert_str_eq(sp_run_build_id(&run, "/usr/bin/demo"),
			 "0123456789abcdef0123456789abcdef01234567");
	ck_assert_ptr_null(sp_run_build_id(&run, "/usr/bin/other"));
	ck_assert_uint_eq(run.sched.lost_rows, 5);
	/* a stack without "objects" reads as all-kernel */
	ck_assert_ptr_null(run.sched.rows[0].stacks.v[0].objects);
	ck_assert(run.profile.present);
	ck_assert_uint_eq(run.profile.hz, 99);
	ck_assert_int_eq(run.profile.cpus, 2);
	ck_assert(run.profile.callchains);
	ck_assert_uint_eq(run.profile.total, 1000);
	ck_assert_uint_eq(run.profile.idle, 100);
	ck_assert_uint_eq(run.profile.target, 850);
	ck_assert_uint_eq(run.profile.other, 50);
	ck_assert_uint_eq(run.profile.unsymbolized, 5);
	ck_assert_uint_eq(run.profile.user_truncated, 3);
	ck_assert_uint_eq(run.profile.nrows, 2);
	p = &run.profile.rows[0];
	ck_assert_str_eq(p->function, "main_loop");
	ck_assert_str_eq(p->object, "/usr/bin/demo");
	ck_assert_uint_eq(p->samples, 600);
	ck_assert_uint_eq(p->comms.n, 1);
	ck_assert_uint_eq(p->comms.v[0].count, 600);
	ck_assert_str_eq(p->stacks.v[0].objects[2], "/usr/lib/x86_64-linux-gnu/libc.so.6");
	ck_assert(run.locks.present);
	ck_assert(run.locks.available);
	ck_assert_uint_eq(run.locks.total, 31);
	ck_assert_uint_eq(run.locks.failed, 1);
	ck_assert_uint_eq(run.locks.nrows, 1);
	l = &run.locks.rows[0];
	ck_assert_str_eq(l->caller, "pipe_read");
	ck_assert_str_eq(l->kind, "mutex");
	ck_assert_str_eq(l->lock, "pipe.mutex");
	ck_assert_uint_eq(l->wait_ns, 3000000);
	ck_assert_uint_eq(l->comms.v[0].time_ns, 3000000);
	ck_assert_uint_eq(l->stacks.v[0].time_ns, 3000000);
	ck_assert_str_eq(l->source, "layout");
	ck_assert_uint_eq(l->owners.n, 1);
	ck_assert_str_eq(l->owners.v[0].comm, "writer");
	ck_assert_uint_eq(l->owners.v[0].time_ns, 3000000);
	ck_assert_uint_eq(run.locks.unpaired, 2);
	ck_assert_ptr_null(run.locks.unavailable);
	ck_assert_uint_eq(run.locks.nsleepers, 1);
	ck_assert_uint_eq(run.locks.sleepers[0].tasks, 2);
	ck_assert_uint_eq(run.locks.sleepers[0].offcpu_ns, 2500000);
	ck_assert_uint_eq(run.locks.ngroups, 1);
	ck_assert_str_eq(run.locks.groups[0].comm, "demo");
	ck_assert_str_eq(run.locks.groups[0].callers.v[0].comm, "pipe_read");
	ck_assert_uint_eq(run.locks.groups[0].callers.v[0].max_ns, 300000);
	sp_run_free(&run);
}
END_TEST

/* ---- the pairing with the writer ---- */

/* A saved run (written by format_json) reads back and writes out byte for byte. */
START_TEST(test_fixture_byte_identical)
{
	static const char *const files[] = { FIX("run_a.json"), FIX("run_b.json") };
	const char *path = files[_i];
	size_t len, out_len;
	char *text = slurp(path, &len), *out;
	struct sp_run run;

	parse_ok(text, len, &run);
	out = render_mem(&run, SP_FMT_JSON, &out_len);
	ck_assert_uint_eq(out_len, len);
	ck_assert_msg(!memcmp(out, text, len), "%s does not write back as it is", path);
	sp_run_free(&run);
	free(out);
	free(text);
}
END_TEST

/* Hand-written documents: after one read/write they are a fixed point, in every format. */
START_TEST(test_fixed_point)
{
	static const char *const files[] = { FIX("run_full.json"), FIX("run_min.json") };
	static const enum sp_format fmts[] = { SP_FMT_TABLE, SP_FMT_JSON, SP_FMT_FOLDED,
					       SP_FMT_PPROF, SP_FMT_SVG, SP_FMT_HTML };
	struct sp_run a, b;
	size_t l1, l2;
	char *s1, *s2;

	load_ok(files[_i], &a);
	s1 = render_mem(&a, SP_FMT_JSON, &l1);
	parse_ok(s1, l1, &b);
	s2 = render_mem(&b, SP_FMT_JSON, &l2);
	ck_assert_uint_eq(l1, l2);
	ck_assert(!memcmp(s1, s2, l1));
	free(s1);
	free(s2);
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		s1 = render_mem(&a, fmts[i], &l1);
		s2 = render_mem(&b, fmts[i], &l2);
		ck_assert_msg(l1 == l2 && !memcmp(s1, s2, l1), "format %d differs", (int)fmts[i]);
		free(s1);
		free(s2);
	}
	sp_run_free(&a);
	sp_run_free(&b);
}
END_TEST

static char *xs(const char *s)
{
	char *d = strdup(s);

	ck_assert_ptr_nonnull(d);
	return d;
}

static void add_stack(struct sp_stack_list *l, const char *comm, uint64_t count, uint64_t time,
		      const char *const *frames, const char *const *objects, size_t n)
{
	struct sp_stack_row *s = sp_stack_list_add(l);

	ck_assert_ptr_nonnull(s);
	s->comm = xs(comm);
	s->count = count;
	s->time_ns = time;
	s->frames = calloc(n + 1, sizeof(char *));
	if (objects)
		s->objects = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		s->frames[i] = xs(frames[i]);
		if (objects)
			s->objects[i] = xs(objects[i]);
	}
	s->nframes = n;
}

/* A run built the way trace builds it, with awkward strings (all valid UTF-8). */
static void build_live(struct sp_run *run)
{
	static const char *const k1[] = { "__schedule", "schedule", "pipe_read", "vfs_read" };
	static const char *const k2[] = { "__schedule", "schedule", "do_wait" };
	static const char *const o2[] = { "[kernel]", "[kernel]", "[ext4]" };
	static const char *const u1[] = { "hot", "main" };
	static const char *const uo[] = { "/opt/a b/demo", "/opt/a b/demo" };
	static const char *const lk[] = { "__mutex_lock", "pipe_read" };
	struct sp_sched_row *r;
	struct sp_profile_row *p;
	struct sp_lock_row *l;
	struct sp_sleeper_row *sl;
	struct sp_sleeper_group *g;

	sp_run_init(run);
	run->schema = xs(SP_SCHEMA);
	run->version = xs("0.1.0");
	run->kernel = xs("6.18.44");
	run->hostname = NULL; /* gethostname() failed: null */
	run->ncpus = 4;
	run->start_unix_ns = 123456789;
	run->elapsed_ns = 2500000000ULL;
	run->options = xs("trace -f json -- sh -c 'echo \"hi\"\\n'");
	run->target.mode = SP_TARGET_COMMAND;
	run->target.command = xs("sh -c \"echo \xce\xba\xe1\xbd\xb9\"\t\x01");
	run->target.exit_status = 130;
	run->target.has_rusage = true;
	run->target.user_ns = 1000;
	run->target.sys_ns = 0;
	ck_assert_int_eq(sp_object_list_add(&run->objects, "/opt/a b/demo", "abcdef"), 0);

	run->sched.present = true;
	run->sched.total = 12;
	run->sched.voluntary = 10;
	run->sched.preempted = 2;
	run->sched.lost_rows = 1;
	r = sp_sched_add_row(&run->sched);
	r->caller = xs("pipe_read");
	r->wait = xs("pipe");
	r->count = 6;
	r->offcpu_ns = 600;
	r->max_ns = 300;
	sp_comm_list_add(&r->comms, "we;ird \"comm\"\n", 4, 400, 300);
	sp_comm_list_add(&r->comms, "\xe2\x82\xac", 2, 200, 100);
	add_stack(&r->stacks, "we;ird \"comm\"\n", 3, 300, k1, NULL, 4);
	r = sp_sched_add_row(&run->sched);
	r->caller = xs("do_wait");
	r->count = 3;
	r->offcpu_ns = 3000;
	r->max_ns = 2000;
	sp_comm_list_add(&r->comms, "sh", 3, 3000, 2000);
	add_stack(&r->stacks, "sh", 3, 3000, k2, o2, 3);
	r = sp_sched_add_row(&run->sched);
	r->caller = xs("[preempted]");
	r->count = 2;
	r->offcpu_ns = 20;
	r->max_ns = 15;
	sp_comm_list_add(&r->comms, "sh", 2, 20, 15);

	run->profile.present = true;
	run->profile.hz = 97;
	run->profile.cpus = 4;
	run->profile.callchains = true;
	run->profile.total = 20;
	run->profile.idle = 5;
	run->profile.target = 12;
	run->profile.other = 3;
	run->profile.lost = 2;
	p = sp_profile_add_row(&run->profile);
	p->function = xs("hot");
	p->object = xs("/opt/a b/demo");
	p->samples = 10;
	sp_comm_list_add(&p->comms, "demo", 10, 0, 0);
	add_stack(&p->stacks, "demo", 8, 0, u1, uo, 2);

	run->locks.present = true;
	run->locks.available = true;
	run->locks.total = 5;
	l = sp_lock_add_row(&run->locks);
	l->caller = xs("pipe_read");
	l->kind = xs("mutex");
	l->lock = xs("pipe.mutex");
	l->source = xs("layout");
	l->count = 5;
	l->wait_ns = 5000;
	l->max_ns = 2000;
	sp_comm_list_add(&l->comms, "demo", 5, 5000, 2000);
	add_stack(&l->stacks, "demo", 5, 5000, lk, NULL, 2);
	sl = sp_sleeper_add_row(&run->locks);
	sl->caller = xs("pipe_read");
	sl->kind = xs("mutex");
	sl->lock = xs("pipe.mutex");
	sl->tasks = 2;
	sl->count = 4;
	sl->offcpu_ns = 4000;
	sl->max_ns = 1500;
	sp_comm_list_add(&sl->comms, "demo", 4, 4000, 1500);
	sp_comm_list_add(&l->owners, "writer", 5, 5000, 0);
	g = sp_sleeper_add_group(&run->locks);
	g->comm = xs("demo");
	g->kind = xs("mutex");
	g->lock = xs("pipe.mutex");
	g->tasks = 2;
	g->count = 4;
	g->offcpu_ns = 4000;
	g->max_ns = 1500;
	sp_comm_list_add(&g->callers, "pipe_read", 4, 4000, 1500);
	run->locks.unpaired = 1;
	run->locks.missed = 3;
}

/*
 * model -> format_json -> model_json -> format_json is byte-identical, and so is every other
 * format rendered from the model and from its JSON (what trace -f X vs report -f X relies on).
 */
START_TEST(test_live_round_trip)
{
	static const enum sp_format fmts[] = { SP_FMT_TABLE, SP_FMT_FOLDED, SP_FMT_PPROF,
					       SP_FMT_SVG, SP_FMT_HTML };
	struct sp_run live, back;
	size_t l1, l2;
	char *s1, *s2;

	build_live(&live);
	s1 = render_mem(&live, SP_FMT_JSON, &l1);
	parse_ok(s1, l1, &back);
	s2 = render_mem(&back, SP_FMT_JSON, &l2);
	ck_assert_uint_eq(l1, l2);
	ck_assert_msg(!memcmp(s1, s2, l1), "JSON differs:\n%s\n---\n%s", s1, s2);
	free(s1);
	free(s2);
	ck_assert_ptr_null(back.hostname);
	ck_assert_str_eq(back.target.command, live.target.command);
	ck_assert_str_eq(back.sched.rows[0].comms.v[0].comm, "we;ird \"comm\"\n");
	ck_assert_ptr_null(back.sched.rows[1].wait);
	ck_assert_ptr_null(back.sched.rows[0].stacks.v[0].objects);
	ck_assert_str_eq(back.sched.rows[1].stacks.v[0].objects[2], "[ext4]");
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		for (int variant = 0; variant < 3; variant++) {
			struct render_opts o = opts_for(fmts[i]);

			o.stacks = variant == 1;
			o.group = variant == 2 ? SP_GROUP_COMM : SP_GROUP_CALLER;
			o.value = variant == 2 ? SP_VALUE_TIME : SP_VALUE_COUNT;
			s1 = unit_render(&live, &o, &l1);
			s2 = unit_render(&back, &o, &l2);
			ck_assert_msg(l1 == l2 && !memcmp(s1, s2, l1),
				      "format %d variant %d differs", (int)fmts[i], variant);
			free(s1);
			free(s2);
		}
	}
	sp_run_free(&live);
	sp_run_free(&back);
}
END_TEST

/* Invalid UTF-8 in names is made valid as the JSON writer does it, so both render alike. */
START_TEST(test_invalid_utf8)
{
	struct sp_run live, back;
	size_t l1, l2;
	char *s1, *s2;

	build_live(&live);
	free(live.sched.rows[1].comms.v[0].comm);
	live.sched.rows[1].comms.v[0].comm = xs("\xff\xfe" "ab\xe2\x82");
	free(live.sched.rows[1].caller);
	live.sched.rows[1].caller = xs("x\xc0\xafy\xce\xba");
	ck_assert_int_eq(sp_run_fix_utf8(&live), 0);
	ck_assert_str_eq(live.sched.rows[1].comms.v[0].comm,
			 "\xef\xbf\xbd\xef\xbf\xbd" "ab\xef\xbf\xbd\xef\xbf\xbd");
	ck_assert_str_eq(live.sched.rows[1].caller, "x\xef\xbf\xbd\xef\xbf\xbdy\xce\xba");
	ck_assert_str_eq(live.sched.rows[0].caller, "pipe_read"); /* valid names stay */
	s1 = render_mem(&live, SP_FMT_JSON, &l1);
	parse_ok(s1, l1, &back);
	free(s1);
	s1 = render_mem(&live, SP_FMT_TABLE, &l1);
	s2 = render_mem(&back, SP_FMT_TABLE, &l2);
	ck_assert(l1 == l2 && !memcmp(s1, s2, l1));
	free(s1);
	free(s2);
	sp_run_free(&live);
	sp_run_free(&back);
}
END_TEST

/* Unknown keys (a later version's) are ignored. */
START_TEST(test_unknown_keys)
{
	size_t len;
	char *text = slurp(FIX("run_min.json"), &len), *t2, *t3;
	struct sp_run run;

	t2 = replace(text, "\"ncpus\":2,", "\"ncpus\":2,\"future\":{\"x\":[1,{}]},");
	t3 = replace(t2, "\"caller\":\"pipe_read\",", "\"caller\":\"pipe_read\",\"extra\":null,");
	parse_ok(t3, strlen(t3), &run);
	ck_assert_str_eq(run.sched.rows[0].caller, "pipe_read");
	sp_run_free(&run);
	free(text);
	free(t2);
	free(t3);
}
END_TEST

/* ---- rejections ---- */

static void check_bad(const char *text, size_t len, const char *expect)
{
	struct sp_run run;
	char err[256] = "untouched";
	int rc = sp_run_from_json(text, len, &run, err, sizeof(err));

	ck_assert_msg(rc == -EINVAL, "accepted (rc %d), expected an error with '%s'", rc, expect);
	ck_assert_msg(strstr(err, expect) != NULL, "error '%s' does not say '%s'", err, expect);
	ck_assert_msg(!strchr(err, '\n'), "error '%s' is more than one line", err);
	/* nothing left behind: the model is empty and freeing it is safe */
	sp_run_free(&run);
}

START_TEST(test_bad_fixtures)
{
	static const struct {
		const char *file, *expect;
	} bad[] = {
		{ FIX("bad_truncated.json"), "found end of input" },
		{ FIX("bad_syntax.json"), "line 1, column " },
		{ FIX("bad_schema.json"), "schema: \"schedprof/2\" is not supported" },
		{ FIX("bad_not_run.json"), "not a schedprof run: no \"schema\" key" },
		{ FIX("bad_type.json"),
		  "schedules.callers[1].count: expected an integer, not a string" },
		{ FIX("bad_missing_key.json"), "schedules: missing key \"total\"" },
		{ FIX("bad_objects.json"),
		  "schedules.callers[0].stacks[0].objects: has 1 entries for 3" },
		{ FIX("bad_negative.json"), "elapsed_ns: expected an integer from 0 to" },
	};
	size_t len;
	char *text = slurp(bad[_i].file, &len);
	struct sp_run run;
	char err[256];

	check_bad(text, len, bad[_i].expect);
	/* the file reader says the same */
	ck_assert_int_eq(sp_run_load_json(bad[_i].file, &run, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, bad[_i].expect));
	sp_run_free(&run);
	free(text);
}
END_TEST

/* Wrong values anywhere in the document, each named by its path. */
START_TEST(test_bad_values)
{
	static const struct {
		const char *from, *to, *expect;
	} muts[] = {
		{ "\"schema\":\"schedprof/1\"",
		  "\"schema\":1",
		  "schema: expected a string, not a number" },
		{ "\"version\":\"0.1.0\"", "\"version\":[]", "version: expected a string or null" },
		{ "\"ncpus\":2", "\"ncpus\":2.5", "ncpus: expected an integer from" },
		{ "\"ncpus\":2", "\"ncpus\":1e30", "ncpus: expected an integer from" },
		{ "\"start_unix_ns\":1764480200000000000",
		  "\"start_unix_ns\":9223372036854775808",
		  "start_unix_ns: expected an integer from 0" },
		{ "\"target\":{\"mode\":\"pids\"", "\"target\":{\"mode\":\"container\"",
		  "target.mode: expected \"system\", \"pids\", \"command\", \"cgroup\" or \"tids\"" },
		{ "\"pids\":[1234,5678]",
		  "\"pids\":[1234,0]",
		  "target.pids[1]: expected a process id" },
		{ "\"pids\":[1234,5678]", "\"pidz\":[1234,5678]", "target: missing key \"pids\"" },
		{ "\"target\":{", "\"target\":{\"user_ns\":5,", "target: missing key \"sys_ns\"" },
		{ "\"build_id\":\"0123",
		  "\"build_ie\":\"0123",
		  "objects[0]: missing key \"build_id\"" },
		{ "\"objects\":[{",
		  "\"objects\":[7,{",
		  "objects[0]: expected an object, not a number" },
		{ "\"schedules\":{", "\"schedules\":[],\"x\":{", "schedules: expected an object" },
		{ "\"callers\":[", "\"callers\":7,\"c\":[",
		  "schedules.callers: expected an array, not a number" },
		{ "\"wait\":\"pipe\"",
		  "\"wait\":false",
		  "schedules.callers[0].wait: expected a string or null" },
		{ "\"caller\":\"pipe_read\"",
		  "\"caller\":null",
		  "schedules.callers[0].caller: expected a string" },
		{ "\"comms\":{\"demo\":{\"count\":100", "\"comms\":{\"demo\":{\"cnt\":100",
		  "schedules.callers[0].comms.demo: missing key \"count\"" },
		{ "\"comms\":{\"demo\":{\"count\":100,\"offcpu_ns\":500000000,"
		  "\"max_ns\":20000000}}",
		  "\"comms\":{\"demo\":[]}",
		  "schedules.callers[0].comms.demo: expected an object" },
		{ "\"frames\":[\"__schedule\",\"schedule\"", "\"frames\":[\"__schedule\",7",
		  "schedules.callers[0].stacks[0].frames[1]: expected a string, not a number" },
		{ "\"frames\":[\"__schedule\"", "\"frames\":[\"__schedule\"],\"f\":[\"x\"",
		  "" /* not an error: see below */ },
		{ "\"hz\":99", "\"hz\":-1", "profile.hz: expected an integer from 0" },
		{ "\"callchains\":true",
		  "\"callchains\":1",
		  "profile.callchains: expected a boolean" },
		{ "\"object\":\"/usr/bin/demo\"", "\"object\":3",
		  "profile.functions[0].object: expected a string" },
		{ "\"comms\":{\"demo\":{\"samples\":600}}", "\"comms\":{\"demo\":{\"count\":600}}",
		  "profile.functions[0].comms.demo: missing key \"samples\"" },
		{ "\"available\":true",
		  "\"available\":\"yes\"",
		  "locks.available: expected a boolean" },
		{ "\"wait_ns\":3000000,\"max_ns\":400000,\"failed\":1",
		  "\"wait_ns\":-3,\"max_ns\":400000,\"failed\":1", "locks.contentions[0].wait_ns" },
		{ "\"tasks\":2",
		  "\"tasks\":{}",
		  "locks.sleepers[0].tasks: expected an integer, not an object" },
		{ "\"available\":true",
		  "\"available\":false",
		  "locks: missing key \"unavailable\"" },
		{ "\"lock_source\":\"layout\"", "\"lock_source\":7",
		  "locks.contentions[0].lock_source: expected a string or null" },
		{ "\"owners\":{\"writer\":{\"count\":30,", "\"owners\":{\"writer\":{\"n\":30,",
		  "locks.contentions[0].owners.writer: missing key \"count\"" },
		{ "\"unpaired\":2",
		  "\"unpaired\":true",
		  "locks.unpaired: expected an integer, not a boolean" },
		{ "\"sleeper_groups\":[{\"comm\":\"demo\"", "\"sleeper_groups\":[{\"comm\":[]",
		  "locks.sleeper_groups[0].comm: expected a string" },
		{ "\"callers\":{\"pipe_read\":{\"count\":20,\"offcpu_ns\":2500000,"
		  "\"max_ns\":300000}}",
		  "\"callers\":{\"pipe_read\":{\"count\":20,\"offcpu_ns\":2500000}}",
		  "locks.sleeper_groups[0].callers.pipe_read: missing key \"max_ns\"" },
	};
	size_t len;
	char *text = slurp(FIX("run_full.json"), &len);
	char *bad = replace(text, muts[_i].from, muts[_i].to);

	if (!muts[_i].expect[0]) {
		/* a frames array replaced before an unknown key: still valid */
		struct sp_run run;

		parse_ok(bad, strlen(bad), &run);
		ck_assert_uint_eq(run.sched.rows[0].stacks.v[0].nframes, 1);
		sp_run_free(&run);
		/* ... but objects of another length than frames are not */
	} else {
		check_bad(bad, strlen(bad), muts[_i].expect);
	}
	free(bad);
	free(text);
}
END_TEST

/* Every truncation of a valid run is one clean error, never a crash or a partial success. */
START_TEST(test_every_truncation)
{
	size_t len;
	char *text = slurp(FIX("run_full.json"), &len);

	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	for (size_t n = 0; n < len; n++) {
		struct sp_run run;
		char err[256] = "";
		int rc = sp_run_from_json(text, n, &run, err, sizeof(err));

		if (rc != -EINVAL || !err[0] || strchr(err, '\n'))
			ck_abort_msg("prefix of %zu bytes: rc %d, error '%s'", n, rc, err);
		sp_run_free(&run);
	}
	free(text);
}
END_TEST

START_TEST(test_load_errors)
{
	struct sp_run run;
	char err[256], dir[] = "/tmp/sp_model_json.XXXXXX", path[64];
	FILE *f;

	ck_assert_int_eq(sp_run_load_json(FIX("no_such_run.json"), &run, err, sizeof(err)),
			 -ENOENT);
	ck_assert_str_eq(err, "No such file or directory");
	sp_run_free(&run);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(sp_run_load_json(dir, &run, err, sizeof(err)), -EISDIR);
	sp_run_free(&run);
	snprintf(path, sizeof(path), "%s/empty.json", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(sp_run_load_json(path, &run, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "empty file, not a saved run");
	sp_run_free(&run);
	/* a NULL error buffer is fine */
	ck_assert_int_eq(sp_run_load_json(path, &run, NULL, 0), -EINVAL);
	sp_run_free(&run);
	unlink(path);
	rmdir(dir);
}
END_TEST

/*
 * Stack pids: absent (older files) reads as 0; present, they round-trip byte for byte and keep
 * stacks apart; the outputs without pids (folded, tables) merge them back; bad pids fail.
 */
START_TEST(test_stack_pid)
{
	static const char one[] = "\"stacks\":[{\"comm\":\"demo\",\"count\":100,"
				  "\"offcpu_ns\":500000000,\"frames\":[\"__schedule\",\"schedule\","
				  "\"pipe_read\",\"vfs_read\"]}]";
	static const char two[] = "\"stacks\":[{\"comm\":\"demo\",\"pid\":4243,\"count\":40,"
				  "\"offcpu_ns\":200000000,\"frames\":[\"__schedule\",\"schedule\","
				  "\"pipe_read\",\"vfs_read\"]},"
				  "{\"comm\":\"demo\",\"pid\":4242,\"count\":60,"
				  "\"offcpu_ns\":300000000,\"frames\":[\"__schedule\",\"schedule\","
				  "\"pipe_read\",\"vfs_read\"]}]";
	static const char *const bad[] = { "-1", "1.5", "\"7\"", "null", "2147483648" };
	static const enum sp_format fmts[] = { SP_FMT_TABLE, SP_FMT_FOLDED, SP_FMT_SVG };
	size_t len, l1, l2;
	char *text = slurp(FIX("run_full.json"), &len), *split, *s1, *s2, err[256];
	struct sp_run orig, run, back;
	const struct sp_stack_list *l;

	parse_ok(text, len, &orig);
	ck_assert_int_eq(orig.sched.rows[0].stacks.v[0].pid, 0);
	s1 = render_mem(&orig, SP_FMT_JSON, &l1);
	ck_assert_ptr_nonnull(strstr(s1, "\"pid\": 0,"));
	free(s1);

	split = replace(text, one, two);
	parse_ok(split, strlen(split), &run);
	l = &run.sched.rows[0].stacks;
	ck_assert_uint_eq(l->n, 2);
	sp_stack_list_merge(&run.sched.rows[0].stacks); /* different pids: not merged */
	ck_assert_uint_eq(l->n, 2);
	sp_sched_sort(&run.sched);
	ck_assert_int_eq(l->v[0].pid, 4242);
	ck_assert_uint_eq(l->v[0].count, 60);
	ck_assert_int_eq(l->v[1].pid, 4243);
	ck_assert_uint_eq(l->v[1].time_ns, 200000000);
	/* JSON: written and read back as they are */
	s1 = render_mem(&run, SP_FMT_JSON, &l1);
	ck_assert_ptr_nonnull(strstr(s1, "\"pid\": 4242,"));
	parse_ok(s1, l1, &back);
	s2 = render_mem(&back, SP_FMT_JSON, &l2);
	ck_assert_uint_eq(l1, l2);
	ck_assert_msg(!memcmp(s1, s2, l1), "JSON with pids differs:\n%s\n---\n%s", s1, s2);
	ck_assert_int_eq(back.sched.rows[0].stacks.v[1].pid, 4243);
	free(s1);
	free(s2);
	/* the outputs without pids are those of the one merged stack */
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		struct render_opts o = opts_for(fmts[i]);

		o.stacks = true;
		s1 = unit_render(&orig, &o, &l1);
		s2 = unit_render(&run, &o, &l2);
		ck_assert_msg(l1 == l2 && !memcmp(s1, s2, l1), "format %d differs:\n%s\n---\n%s",
			      (int)fmts[i], s1, s2);
		free(s1);
		free(s2);
	}
	/* pprof: the pid labels make it differ */
	s1 = render_mem(&orig, SP_FMT_PPROF, &l1);
	s2 = render_mem(&run, SP_FMT_PPROF, &l2);
	ck_assert(l1 != l2 || memcmp(s1, s2, l1));
	free(s1);
	free(s2);
	sp_run_free(&back);
	sp_run_free(&run);
	free(split);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char to[64], *t;

		snprintf(to, sizeof(to), "{\"comm\":\"demo\",\"pid\":%s,\"count\":100,", bad[i]);
		t = replace(text, "{\"comm\":\"demo\",\"count\":100,", to);
		sp_run_init(&run);
		ck_assert_int_eq(sp_run_from_json(t, strlen(t), &run, err, sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, "schedules.callers[0].stacks[0].pid: expected an integer"),
			      "pid %s: %s", bad[i], err);
		sp_run_free(&run);
		free(t);
	}
	sp_run_free(&orig);
	free(text);
}
END_TEST

/* A key twice in any object or map the reader reads is refused, naming it and its place. */
START_TEST(test_duplicate_keys)
{
	static const struct {
		const char *from, *to, *expect;
	} cases[] = {
		{ "{\"schema\":\"schedprof/1\",", "{\"schema\":\"schedprof/1\",\"schema\":\"x\",",
		  "duplicate key \"schema\"" },
		{ "\"total\":3,", "\"total\":3,\"total\":3,", "schedules: duplicate key \"total\"" },
		{ "\"count\":2,\"offcpu_ns\":50,\"max_ns\":30,\"comms\"",
		  "\"count\":2,\"count\":2,\"offcpu_ns\":50,\"max_ns\":30,\"comms\"",
		  "schedules.callers[0]: duplicate key \"count\"" },
		{ "\"comms\":{\"cat\":{\"count\":2,\"offcpu_ns\":50,\"max_ns\":30}}",
		  "\"comms\":{\"cat\":{\"count\":1,\"offcpu_ns\":50,\"max_ns\":30},"
		  "\"cat\":{\"count\":1,\"offcpu_ns\":0,\"max_ns\":0}}",
		  "schedules.callers[0].comms: duplicate key \"cat\"" },
	};
	size_t len;
	char *text = slurp(FIX("run_min.json"), &len);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *bad = replace(text, cases[i].from, cases[i].to);

		check_bad(bad, strlen(bad), cases[i].expect);
		free(bad);
	}
	free(text);
}
END_TEST

/* sp_run_check(): each fixture holds; each invariant broken is named, with its place. */
static void check_fails(const struct sp_run *run, const char *expect)
{
	char err[256] = "";

	ck_assert_int_eq(sp_run_check(run, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, expect) != NULL, "error '%s' does not say '%s'", err, expect);
}

START_TEST(test_invariants)
{
	static const char *const files[] = { FIX("run_a.json"), FIX("run_b.json"),
					     FIX("run_full.json"), FIX("run_min.json") };
	struct sp_run run;
	char err[256] = "";

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		load_ok(files[i], &run);
		ck_assert_msg(!sp_run_check(&run, err, sizeof(err)), "%s: %s", files[i], err);
		sp_run_free(&run);
	}
	load_ok(FIX("run_full.json"), &run);
	run.sched.voluntary--;
	check_fails(&run, "schedules: total 120 is not voluntary 104 + preempted 15 + idle 0");
	run.sched.voluntary++;
	run.sched.lost_rows++;
	run.sched.total++;
	run.sched.voluntary++;
	ck_assert(!sp_run_check(&run, err, sizeof(err))); /* a lost row in every total */
	run.sched.lost_rows++;
	check_fails(&run, "schedules: the callers' counts + lost_rows (122) are not the total 121");
	run.sched.lost_rows--;
	run.sched.lost_rows--;
	run.sched.total--;
	run.sched.voluntary--;
	ck_assert(!sp_run_check(&run, err, sizeof(err)));
	run.sched.rows[0].stacks.v[0].count = UINT64_MAX; /* and no overflow when summed */
	check_fails(&run, "schedules.callers[0]: its stacks count");
	sp_run_free(&run);

	load_ok(FIX("run_full.json"), &run);
	run.profile.other++;
	check_fails(&run, "profile: total 1000 is not idle 100 + target 850 + other 51");
	run.profile.other--;
	run.profile.lost++;
	check_fails(&run, "profile: the functions' samples + lost (851) are not the target 850");
	run.profile.lost--;
	run.profile.rows[0].stacks.v[0].count += run.profile.rows[0].samples;
	check_fails(&run, "profile.functions[0]: its stacks count");
	sp_run_free(&run);

	load_ok(FIX("run_full.json"), &run);
	run.locks.total--;
	check_fails(&run, "locks: the contentions' count + failed + lost (31) are not the total 30");
	run.locks.total++;
	run.locks.rows[0].stacks.v[0].count = 1000;
	check_fails(&run, "locks.contentions[0]: its stacks count 10");
	run.locks.available = false; /* an unavailable view has nothing to check */
	ck_assert(!sp_run_check(&run, err, sizeof(err)));
	sp_run_free(&run);
}
END_TEST

/* The run-queue split's and the budget's invariants, on the fixtures that have them. */
START_TEST(test_invariants_issue10)
{
	static const char *const files[] = { FIX("run_tl.json"), FIX("run_tl_b.json") };
	struct sp_run run;
	struct sp_sched_row *r;
	char err[256] = "";

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		load_ok(files[i], &run);
		ck_assert_msg(!sp_run_check(&run, err, sizeof(err)), "%s: %s", files[i], err);
		ck_assert(run.sched.budget.present && run.sched.wakers && run.timeline.present);
		sp_run_free(&run);
	}
	load_ok(FIX("run_tl.json"), &run);
	r = &run.sched.rows[0];
	ck_assert(r->has_runq);
	r->runq_ns++;
	check_fails(&run, "schedules.callers[0]: blocked_ns 2380000000 + runq_ns 15000001 is not "
			  "offcpu_ns 2395000000");
	r->has_runq = false; /* a row without the split: nothing to check */
	ck_assert(!sp_run_check(&run, err, sizeof(err)));
	r->has_runq = true;
	r->runq_ns--;
	r->unfinished = r->count + 1;
	check_fails(&run, "schedules.callers[0]: unfinished 3 is more than its count 2");
	r->unfinished = 0;
	r->blocked_ns = UINT64_MAX; /* no overflow in the sum */
	check_fails(&run, "schedules.callers[0]: blocked_ns");
	r->blocked_ns = 2380000000;
	ck_assert(!sp_run_check(&run, err, sizeof(err)));
	run.sched.budget.blocked.sleep = 1;
	check_fails(&run, "schedules.budget: blocked_ns 2500000000 is not the sum of blocked "
			  "(2500000001)");
	run.sched.budget.present = false;
	ck_assert(!sp_run_check(&run, err, sizeof(err)));
	/* a gap in a task's segments; a new task may start anywhere */
	ck_assert_int_eq(run.timeline.segs[1].tid, run.timeline.segs[0].tid);
	run.timeline.segs[1].start_ns++;
	check_fails(&run, "timeline.segments[1]: starts at 30000001, not where the task's segment "
			  "before it ends (30000000)");
	run.timeline.segs[1].ns--; /* the same end: only the gap before it */
	run.timeline.lost = 1; /* with lost events, a gap is allowed */
	ck_assert(!sp_run_check(&run, err, sizeof(err)));
	run.timeline.segs[1].start_ns -= 2; /* an overlap never */
	run.timeline.segs[1].ns += 2;
	check_fails(&run, "timeline.segments[1]: starts at 29999999, not where");
	run.timeline.lost = 0;
	run.timeline.segs[1].start_ns++;
	run.timeline.segs[1].ns--;
	ck_assert(!sp_run_check(&run, err, sizeof(err)));
	run.timeline.segs[0].ns = UINT64_MAX;
	check_fails(&run, "timeline.segments[1]: starts at");
	run.timeline.present = false;
	ck_assert(!sp_run_check(&run, err, sizeof(err)));
	sp_run_free(&run);
}
END_TEST

/* An older file, without the run-queue split, reads as before: no wakers, budget or timeline. */
START_TEST(test_issue10_old_files)
{
	struct sp_run run;

	load_ok(FIX("run_a.json"), &run);
	ck_assert(!run.sched.wakers && !run.sched.budget.present && !run.timeline.present);
	for (size_t i = 0; i < run.sched.nrows; i++) {
		ck_assert(!run.sched.rows[i].has_runq);
		ck_assert_uint_eq(run.sched.rows[i].wakers.n, 0);
		ck_assert_uint_eq(run.sched.rows[i].blocked_ns + run.sched.rows[i].runq_ns, 0);
	}
	sp_run_free(&run);
	load_ok(FIX("run_tl.json"), &run);
	ck_assert_str_eq(run.sched.rows[0].caller, "do_wait");
	ck_assert_uint_eq(run.sched.rows[0].blocked_ns, 2380000000ULL);
	ck_assert_uint_eq(run.sched.rows[0].runq_p99_ns, 10000000ULL);
	ck_assert_uint_eq(run.sched.rows[0].wakers.n, 2);
	ck_assert_str_eq(run.sched.rows[0].wakers.v[0].function, "exit_notify");
	ck_assert_uint_eq(run.sched.budget.blocked.child, 2380000000ULL);
	ck_assert_uint_eq(run.sched.budget.tasks, 4);
	ck_assert_uint_eq(run.timeline.ntasks, 4);
	ck_assert_uint_eq(run.timeline.nsegs, 21);
	ck_assert_int_eq(run.timeline.segs[1].state, SP_TL_BLOCKED);
	ck_assert_str_eq(run.timeline.segs[1].wait, "child");
	ck_assert_int_eq(run.timeline.segs[1].waker_tid, 501);
	ck_assert_int_eq(run.timeline.segs[0].cpu, 0);
	ck_assert_uint_eq(run.timeline.cp_total_ns, 2490000000ULL);
	ck_assert_uint_eq(run.timeline.ncp_ranks, 9);
	ck_assert_ptr_null(run.timeline.cp_ranks[0].caller);
	ck_assert_uint_eq(run.timeline.nserial, 3);
	ck_assert_uint_eq(run.timeline.serial_ns, 1400000000ULL);
	sp_run_free(&run);
}
END_TEST

/* A frame info with the strings malloc'd (NULL stays NULL). */
static struct sp_frame_info finfo(uint64_t addr, const char *build_id, const char *system_name,
				  const char *file, unsigned int line, bool inlined)
{
	return (struct sp_frame_info){ .addr = addr, .build_id = build_id ? xs(build_id) : NULL,
				       .system_name = system_name ? xs(system_name) : NULL,
				       .file = file ? xs(file) : NULL, .line = line,
				       .inlined = inlined };
}

/* The live run with frame infos on a kernel stack, a user stack and a profile row. */
static void build_live_info(struct sp_run *run)
{
	struct sp_stack_row *k, *u;

	build_live(run);
	k = &run->sched.rows[1].stacks.v[0]; /* __schedule, schedule, do_wait [ext4] */
	k->info = calloc(3, sizeof(*k->info));
	ck_assert_ptr_nonnull(k->info);
	k->info[0] = finfo(0xffffffff81e0a1b2ull, NULL, NULL, NULL, 0, false);
	k->info[2] = finfo(0xffffffffc0123456ull, NULL, NULL, NULL, 0, false);
	u = &run->profile.rows[0].stacks.v[0]; /* hot, main in /opt/a b/demo */
	u->info = calloc(2, sizeof(*u->info));
	ck_assert_ptr_nonnull(u->info);
	u->info[0] = finfo(0x1a2b, "abcdef", "_Z3hotv", "demo.c", 12, true);
	u->info[1] = finfo(0x1a2b, "abcdef", NULL, "demo.c", 40, false);
	run->profile.rows[0].info = calloc(1, sizeof(struct sp_frame_info));
	ck_assert_ptr_nonnull(run->profile.rows[0].info);
	*run->profile.rows[0].info = finfo(0x1a00, "abcdef", "_Z3hotv", NULL, 0, false);
}

/*
 * Frame infos are written sparsely (a kernel address as a hex string, beyond
 * 2^53), read back strictly and written again byte for byte; a file without them reads with
 * info NULL; wrong lengths and types are one error naming the place.
 */
START_TEST(test_frame_info)
{
	static const struct {
		const char *from, *to, *expect;
	} bad[] = {
		{ "\"frame_info\": [\n              {\"addr\": \"0xffffffff81e0a1b2\"},",
		  "\"frame_info\": [\n              {\"addr\": \"0xffffffff81e0a1b2\"},{},",
		  "schedules.callers[1].stacks[0].frame_info: has 4 entries for 3 frames" },
		{ "\"frame_info\": [\n              {\"addr\": \"0xffffffff81e0a1b2\"},",
		  "\"frame_info\": [\n",
		  "schedules.callers[1].stacks[0].frame_info: has 2 entries for 3 frames" },
		{ "{\"addr\": \"0xffffffff81e0a1b2\"}", "{\"addr\": 18446744071593812402}",
		  "schedules.callers[1].stacks[0].frame_info[0].addr: expected an address string "
		  "\"0x...\", not a number" },
		{ "\"0xffffffff81e0a1b2\"", "\"0xFFFF\"",
		  "frame_info[0].addr: expected \"0x\" and 1 to 16 lowercase hex digits, not "
		  "\"0xFFFF\"" },
		{ "\"0xffffffff81e0a1b2\"", "\"0x1ffffffff81e0a1b2\"", "frame_info[0].addr: expected" },
		{ "\"0xffffffff81e0a1b2\"", "\"0x\"", "frame_info[0].addr: expected" },
		{ "{\"addr\": \"0xffffffff81e0a1b2\"}", "7",
		  "stacks[0].frame_info[0]: expected an object, not a number" },
		{ "\"frame_info\": [\n              {\"addr\": \"0xffffffff81e0a1b2\"},\n              {},\n"
		  "              {\"addr\": \"0xffffffffc0123456\"}\n            ]",
		  "\"frame_info\": {}",
		  "schedules.callers[1].stacks[0].frame_info: expected an array, not an object" },
		{ "\"line\": 12", "\"line\": -1",
		  "profile.functions[0].stacks[0].frame_info[0].line: expected an integer from 0" },
		{ "\"line\": 12", "\"line\": \"12\"", "frame_info[0].line: expected an integer" },
		{ "\"inlined\": true", "\"inlined\": 1",
		  "frame_info[0].inlined: expected a boolean, not a number" },
		{ "\"build_id\": \"abcdef\", \"system_name\"", "\"build_id\": null, \"system_name\"",
		  "frame_info[0].build_id: expected a string" },
		{ "\"info\": {\n          \"addr\": \"0x1a00\",\n          \"build_id\": \"abcdef\",\n"
		  "          \"system_name\": \"_Z3hotv\"\n        }",
		  "\"info\": []", "profile.functions[0].info: expected an object, not an array" },
		{ "\"system_name\": \"_Z3hotv\"\n", "\"system_name\": 3\n",
		  "profile.functions[0].info.system_name: expected a string" },
	};
	struct sp_run live, back, old;
	size_t l1, l2;
	char *s1, *s2;

	build_live_info(&live);
	s1 = render_mem(&live, SP_FMT_JSON, &l1);
	/* sparse, one frame a line, the address as a string */
	ck_assert_msg(strstr(s1, "\"frame_info\": [\n              {\"addr\": \"0xffffffff81e0a1b2\"},\n"
				 "              {},\n              {\"addr\": \"0xffffffffc0123456\"}\n"),
		      "frame_info not as expected");
	ck_assert_msg(strstr(s1, "{\"addr\": \"0x1a2b\", \"build_id\": \"abcdef\", \"system_name\": "
				 "\"_Z3hotv\", \"file\": \"demo.c\", \"line\": 12, \"inlined\": true}"),
		      "frame_info not as expected");
	ck_assert_msg(strstr(s1, "\"object\": \"/opt/a b/demo\",\n        \"info\": {\n"
				 "          \"addr\": \"0x1a00\",\n          \"build_id\": \"abcdef\",\n"
				 "          \"system_name\": \"_Z3hotv\"\n        },\n"), "frame_info not as expected");
	parse_ok(s1, l1, &back);
	s2 = render_mem(&back, SP_FMT_JSON, &l2);
	ck_assert_msg(l1 == l2 && !memcmp(s1, s2, l1), "JSON differs:\n%s\n---\n%s", s1, s2);
	free(s2);
	ck_assert_ptr_null(back.sched.rows[0].stacks.v[0].info);
	ck_assert_uint_eq(back.sched.rows[1].stacks.v[0].info[0].addr, 0xffffffff81e0a1b2ull);
	ck_assert_uint_eq(back.sched.rows[1].stacks.v[0].info[1].addr, 0);
	ck_assert_ptr_null(back.sched.rows[1].stacks.v[0].info[1].build_id);
	ck_assert_str_eq(back.profile.rows[0].stacks.v[0].info[0].system_name, "_Z3hotv");
	ck_assert_str_eq(back.profile.rows[0].stacks.v[0].info[1].file, "demo.c");
	ck_assert_uint_eq(back.profile.rows[0].stacks.v[0].info[1].line, 40);
	ck_assert(back.profile.rows[0].stacks.v[0].info[0].inlined);
	ck_assert(!back.profile.rows[0].stacks.v[0].info[1].inlined);
	ck_assert_ptr_null(back.profile.rows[0].stacks.v[0].info[1].system_name);
	ck_assert_uint_eq(back.profile.rows[0].info->addr, 0x1a00);
	ck_assert_ptr_null(back.profile.rows[0].info->file);
	sp_run_free(&back);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *t = replace(s1, bad[i].from, bad[i].to);

		check_bad(t, strlen(t), bad[i].expect);
		free(t);
	}
	free(s1);
	sp_run_free(&live);

	/* runs from before frame identities: no info anywhere */
	load_ok(FIX("run_full.json"), &old);
	for (size_t i = 0; i < old.sched.nrows; i++)
		for (size_t j = 0; j < old.sched.rows[i].stacks.n; j++)
			ck_assert_ptr_null(old.sched.rows[i].stacks.v[j].info);
	for (size_t i = 0; i < old.profile.nrows; i++) {
		ck_assert_ptr_null(old.profile.rows[i].info);
		for (size_t j = 0; j < old.profile.rows[i].stacks.n; j++)
			ck_assert_ptr_null(old.profile.rows[i].stacks.v[j].info);
	}
	ck_assert_uint_gt(old.profile.nrows, 0);
	s1 = render_mem(&old, SP_FMT_JSON, &l1);
	ck_assert_ptr_null(strstr(s1, "frame_info"));
	ck_assert_ptr_null(strstr(s1, "\"info\""));
	free(s1);
	sp_run_free(&old);
}
END_TEST

/*
 * The caller cache's counts are written when the fast path was on, read back, and
 * told in the table's header; a file without them (older, or full stacks) reads as absent.
 */
START_TEST(test_caller_cache)
{
	struct sp_run live, back;
	size_t l1, l2;
	char *s1, *s2;

	build_live(&live);
	live.sched.cache = (struct sp_caller_cache){ .present = true, .fast = 7, .verified = 5,
						     .mismatched = 1, .verify_all = true };
	s1 = render_mem(&live, SP_FMT_JSON, &l1);
	ck_assert_msg(strstr(s1, "\"caller_cache\": {\n      \"fast\": 7,\n      \"verified\": 5,\n"
				 "      \"mismatched\": 1,\n      \"verify_all\": true\n    }"), "%s", s1);
	parse_ok(s1, l1, &back);
	ck_assert(back.sched.cache.present && back.sched.cache.verify_all);
	ck_assert_uint_eq(back.sched.cache.fast, 7);
	ck_assert_uint_eq(back.sched.cache.verified, 5);
	ck_assert_uint_eq(back.sched.cache.mismatched, 1);
	s2 = render_mem(&back, SP_FMT_TABLE, &l2);
	ck_assert_msg(strstr(s2, "  callers: 7 of ") && strstr(s2, " checked by one (--verify-callers), "
								"1 mismatched\n"), "%s", s2);
	free(s1);
	free(s2);
	sp_run_free(&back);
	live.sched.cache.present = false;
	s1 = render_mem(&live, SP_FMT_JSON, &l1);
	ck_assert_ptr_null(strstr(s1, "caller_cache"));
	free(s1);
	s1 = render_mem(&live, SP_FMT_TABLE, &l1);
	ck_assert_ptr_null(strstr(s1, "callers: "));
	free(s1);
	sp_run_free(&live);
	load_ok(FIX("run_a.json"), &back);
	ck_assert(!back.sched.cache.present);
	sp_run_free(&back);
}
END_TEST

static Suite *model_json_suite(void)
{
	Suite *s = suite_create("model_json");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_run_a_fields);
	tcase_add_test(tc, test_run_full_fields);
	tcase_add_loop_test(tc, test_fixture_byte_identical, 0, 2);
	tcase_add_loop_test(tc, test_fixed_point, 0, 2);
	tcase_add_test(tc, test_live_round_trip);
	tcase_add_test(tc, test_stack_pid);
	tcase_add_test(tc, test_invalid_utf8);
	tcase_add_test(tc, test_unknown_keys);
	tcase_add_loop_test(tc, test_bad_fixtures, 0, 8);
	tcase_add_loop_test(tc, test_bad_values, 0, 32);
	tcase_add_test(tc, test_every_truncation);
	tcase_add_test(tc, test_load_errors);
	tcase_add_test(tc, test_duplicate_keys);
	tcase_add_test(tc, test_invariants);
	tcase_add_test(tc, test_invariants_issue10);
	tcase_add_test(tc, test_issue10_old_files);
	tcase_add_test(tc, test_caller_cache);
	tcase_add_test(tc, test_frame_info);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(model_json_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
