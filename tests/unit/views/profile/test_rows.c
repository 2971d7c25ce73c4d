// SPDX-License-Identifier: BSD-2-Clause
/*
 * The profile view's row builder (src/views/profile/rows.c) on hand-made map records: kernel
 * leaves from the fixture kallsyms, user frames as raw IPs of this test's own functions
 * (named through usyms on this process), rows by (function, object), unsymbolized samples,
 * user-stack completeness, stacks that symbolize alike merged, and every sample kept.
 */
#include <errno.h>
#include <unistd.h>
#include "model/model.h"
#include "views/profile/rows.h"
#include "../../rows/rows_fixture.h"
#include "symbols/usyms.h"

static struct usyms *us;
static struct profile_maps m;
static struct sp_run run;
static struct profile_unnamed unk;

static volatile int sink;

/* Bodies longer than the offsets U() takes inside them. */
__attribute__((noinline)) void test_leaf_fn(void)
{
	for (int i = 0; i < 3; i++)
		sink += i;
}

__attribute__((noinline)) void test_mid_fn(void)
{
	test_leaf_fn();
	for (int i = 0; i < 3; i++)
		sink += i;
}

/* A return address inside fn (never its first byte: non-leaf frames look at addr - 1). */
static uint64_t U(void (*fn)(void))
{
	return (uint64_t)(uintptr_t)fn + 4;
}

static uint64_t U_main(void);

static void setup(void)
{
	struct usyms_opts o = { .debug_dir = "" };

	fixture_load();
	us = usyms__new(&o);
	ck_assert_ptr_nonnull(us);
	ck_assert_int_eq(usyms__add_pid(us, getpid(), 1), 0);
	sp_records_init(&m.samples, sizeof(struct sp_prof_key), sizeof(__u64));
	sp_records_init(&m.kstacks, sizeof(__u64), sizeof(struct sp_prof_kstack));
	sp_records_init(&m.ustacks, sizeof(__u64), sizeof(struct sp_prof_ustack));
	sp_run_init(&run);
}

static void teardown(void)
{
	profile_maps_free(&m);
	sp_run_free(&run);
	usyms__free(us);
	fixture_free();
}

static struct sp_prof_key key(uint64_t kip, uint64_t uleaf, const char *comm)
{
	struct sp_prof_key k = { .kip = kip, .tgid = (__u32)getpid(), .exec_id = 1 };

	if (uleaf) {
		k.uleaf.status = SP_UFRAME_IP;
		k.uleaf.offset = uleaf;
		k.flags = SP_PROF_F_RAW_IP;
	}
	SET_COMM(k.comm, comm);
	return k;
}

static void add_sample(const struct sp_prof_key *k, __u64 count)
{
	ck_assert_int_eq(sp_records_add(&m.samples, k, &count), 0);
}

static void add_ustack(__u64 id, const uint64_t *ips, uint32_t nr)
{
	struct sp_prof_ustack *st = calloc(1, sizeof(*st));

	ck_assert_ptr_nonnull(st);
	st->nr = nr;
	for (uint32_t i = 0; i < nr; i++) {
		st->frames[i].status = SP_UFRAME_IP;
		st->frames[i].offset = ips[i];
	}
	ck_assert_int_eq(sp_records_add(&m.ustacks, &id, st), 0);
	free(st);
}

static void add_kstack(__u64 id, const uint64_t *ips, uint32_t nr)
{
	add_kstack_to(&m.kstacks, id, ips, nr);
}

static const struct sp_profile_row *row_of(const char *function, const char *object)
{
	for (size_t i = 0; i < run.profile.nrows; i++) {
		const struct sp_profile_row *r = &run.profile.rows[i];

		if (!strcmp(r->function, function) && (!object || !strcmp(r->object, object)))
			return r;
	}
	ck_abort_msg("no row %s", function);
	return NULL;
}

static const struct sp_profile_row *row(const char *function)
{
	return row_of(function, NULL);
}

static uint64_t row_samples(void)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < run.profile.nrows; i++)
		sum += run.profile.rows[i].samples;
	return sum;
}

START_TEST(leaves_without_stacks)
{
	struct sp_prof_key k;

	k = key(A("anon_pipe_read", 0x10), 0, "cat");
	add_sample(&k, 5);
	k = key(A("anon_pipe_read", 0x20), 0, "sort");
	add_sample(&k, 2);
	k = key(0x10, 0, "cat"); /* a kernel address kallsyms does not name */
	add_sample(&k, 3);
	k = key(0, U(test_leaf_fn), "test");
	add_sample(&k, 4);
	k = key(0, 0, "empty"); /* neither a kernel nor a user frame: counted all the same */
	add_sample(&k, 1);
	m.samples.failed = 2;
	ck_assert_int_eq(profile_rows_build(&run, &m, ks, us, false, &unk), 0);

	ck_assert_uint_eq(row("anon_pipe_read")->samples, 7);
	ck_assert_str_eq(row("anon_pipe_read")->object, "[kernel]");
	ck_assert_uint_eq(row("anon_pipe_read")->comms.n, 2);
	ck_assert_uint_eq(row("test_leaf_fn")->samples, 4);
	ck_assert_ptr_nonnull(strstr(row("test_leaf_fn")->object, "test_profile_rows"));
	ck_assert_uint_eq(row_of("[unknown]", "[kernel]")->samples, 3);
	ck_assert_uint_eq(row_of("[unknown]", "[unknown]")->samples, 1);
	ck_assert_uint_eq(run.profile.unsymbolized, 3 + 1);
	ck_assert_uint_eq(unk.kernel, 1);
	ck_assert_uint_eq(unk.empty, 1);
	ck_assert_uint_eq(unk.raw_keys, 1);
	/* exact: every sample in one row; the entries the dump lost are in lost */
	ck_assert_uint_eq(row_samples(), 5 + 2 + 3 + 4 + 1);
	ck_assert_uint_eq(run.profile.lost, 2);
	ck_assert_uint_eq(run.profile.user_truncated, 0); /* without -g: not judged */
	ck_assert_uint_eq(run.profile.rows[0].stacks.n, 0);
}
END_TEST

START_TEST(user_stack_completeness)
{
	uint64_t full[] = { U(test_leaf_fn), U(test_mid_fn), U_main() };
	uint64_t cut[] = { U(test_leaf_fn), U(test_mid_fn) };
	uint64_t deep[SP_PROF_UDEPTH];
	struct sp_prof_key k;

	for (size_t i = 0; i < SP_PROF_UDEPTH; i++)
		deep[i] = !i ? U(test_leaf_fn) : i + 1 < SP_PROF_UDEPTH ? U(test_mid_fn) : U_main();
	add_ustack(1, full, 3);
	add_ustack(2, cut, 2);
	add_ustack(3, deep, SP_PROF_UDEPTH);
	k = key(0, U(test_leaf_fn), "t");
	k.ustack = 1;
	add_sample(&k, 4);
	k.ustack = 2;
	add_sample(&k, 3);
	k.ustack = 3;
	add_sample(&k, 2);
	k.ustack = 99; /* the dump lost it: the leaf is kept, the stack counted missing */
	add_sample(&k, 1);
	ck_assert_int_eq(profile_rows_build(&run, &m, ks, us, true, &unk), 0);

	ck_assert_uint_eq(run.profile.nrows, 1);
	ck_assert_uint_eq(row("test_leaf_fn")->samples, 10);
	/* reaches main: complete; two frames of this binary: cut; as deep as kept: cut */
	ck_assert_uint_eq(run.profile.user_truncated, 3 + 2 + 1);
	ck_assert_uint_eq(run.profile.missing_stacks, 1);
	ck_assert_uint_eq(row("test_leaf_fn")->stacks.n, 4);
	ck_assert_uint_eq(row("test_leaf_fn")->stacks.v[0].count, 4);
	ck_assert_uint_eq(row("test_leaf_fn")->stacks.v[0].nframes, 3);
	ck_assert_str_eq(row("test_leaf_fn")->stacks.v[0].frames[1], "test_mid_fn");
	ck_assert_str_eq(row("test_leaf_fn")->stacks.v[0].frames[2], "main");
}
END_TEST

START_TEST(stacks_merge)
{
	uint64_t k1[] = { A("anon_pipe_read", 0x10), A("do_syscall_64", 0x20) };
	/* another sampled PC in the same function, from the same call site: the same stack */
	uint64_t k2[] = { A("anon_pipe_read", 0x18), A("do_syscall_64", 0x20) };
	struct sp_prof_key k;

	add_kstack(10, k1, 2);
	add_kstack(11, k2, 2);
	k = key(A("anon_pipe_read", 0x10), 0, "cat");
	k.kstack = 10;
	k.pid = 7;
	add_sample(&k, 5);
	k.kstack = 11;
	k.kip = A("anon_pipe_read", 0x18);
	add_sample(&k, 6);
	k.pid = 8; /* another process: another stack */
	add_sample(&k, 1);
	m.kstacks.failed = 1;
	ck_assert_int_eq(profile_rows_build(&run, &m, ks, us, true, &unk), 0);

	ck_assert_uint_eq(run.profile.nrows, 1);
	ck_assert_uint_eq(row("anon_pipe_read")->samples, 12);
	ck_assert_uint_eq(row("anon_pipe_read")->stacks.n, 2);
	ck_assert_uint_eq(row("anon_pipe_read")->stacks.v[0].count, 11);
	ck_assert_int_eq(row("anon_pipe_read")->stacks.v[0].pid, 7);
	ck_assert_str_eq(row("anon_pipe_read")->stacks.v[0].frames[1], "do_syscall_64");
	ck_assert_str_eq(row("anon_pipe_read")->stacks.v[0].objects[1], "[kernel]");
	ck_assert_uint_eq(run.profile.missing_stacks, 1);
}
END_TEST

START_TEST(wrong_record_size)
{
	__u64 id = 1, v = 1;

	sp_records_free(&m.samples);
	sp_records_init(&m.samples, sizeof(id), sizeof(v));
	ck_assert_int_eq(sp_records_add(&m.samples, &id, &v), 0);
	ck_assert_int_eq(profile_rows_build(&run, &m, ks, us, false, &unk), -EINVAL);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
		leaves_without_stacks,
		user_stack_completeness,
		stacks_merge,
		wrong_record_size,
	};

	return run_tests("profile_rows", tests, sizeof(tests) / sizeof(tests[0]), setup, teardown);
}

static uint64_t U_main(void)
{
	return (uint64_t)(uintptr_t)main + 4;
}
