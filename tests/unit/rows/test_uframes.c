// SPDX-License-Identifier: BSD-2-Clause
/*
 * User frames into model frames (src/rows/uframes.c): a frame as build-id +
 * file offset of this test's own binary (named, with its identity), an offset no symbol
 * covers ("<object>+0x<offset>"), an unknown build-id ("[unknown]"), raw IPs through the
 * process snapshot, and the schedules/locks stacks: a (kernel, user) pair appended and
 * merged, missing and cut-short user stacks counted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>
#include "symbols/elfsyms.h"
#include "model/model.h"
#include "rows_fixture.h"
#include "symbols/kstack.h"
#include "rows/rows.h"
#include "rows/uframes.h"
#include "symbols/usyms.h"
#include "base/util.h"

static struct usyms *us;
static struct uframes uf;
static struct sp_run run;
static char self[4096];
static uint8_t self_id[20];
static size_t self_id_len;
static char self_hex[41];

static volatile int sink;

__attribute__((noinline)) void uf_leaf_fn(void)
{
	for (int i = 0; i < 3; i++)
		sink += i;
}

__attribute__((noinline)) void uf_caller_fn(void)
{
	uf_leaf_fn();
	for (int i = 0; i < 3; i++)
		sink += i;
}

/* The file offset of address a in this binary, from /proc/self/maps. */
static uint64_t file_offset(uint64_t a)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	uint64_t lo, hi, off, ret = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64, &lo, &hi, &off) == 3 &&
		    a >= lo && a < hi)
			ret = off + (a - lo);
	fclose(f);
	ck_assert_uint_ne(ret, 0);
	return ret;
}

static struct sp_uframe valid(uint64_t offset)
{
	struct sp_uframe u = { .status = SP_UFRAME_VALID, .offset = offset };

	memcpy(u.build_id, self_id, self_id_len);
	return u;
}

static void setup(void)
{
	struct usyms_opts o = { .debug_dir = "" };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	ck_assert_int_gt(n, 0);
	self[n] = 0;
	ck_assert_int_eq(elf_read_build_id(self, self_id, sizeof(self_id), &self_id_len), 0);
	elf_build_id_hex(self_id, self_id_len, self_hex, sizeof(self_hex));
	fixture_load();
	us = usyms__new(&o);
	ck_assert_ptr_nonnull(us);
	ck_assert_int_eq(usyms__add_pid(us, getpid(), 1), 0);
	sp_run_init(&run);
	uf = (struct uframes){ .usyms = us, .run = &run };
}

static void teardown(void)
{
	sp_run_free(&run);
	usyms__free(us);
	fixture_free();
}

START_TEST(named_with_identity)
{
	uint64_t off = file_offset((uint64_t)(uintptr_t)uf_caller_fn + 4);
	struct sp_uframe u = valid(off);
	struct uframe f;

	uframes_name(&uf, &u, 0, 0, false, &f);
	ck_assert_int_eq(f.how, UFRAME_NAMED);
	ck_assert_str_eq(f.name, "uf_caller_fn");
	ck_assert_str_eq(f.object, self);
	ck_assert_str_eq(f.build_id, self_hex);
	ck_assert_uint_eq(f.addr, off - 1); /* a return address: its call is before it */
	ck_assert_uint_eq(f.func, off - 4);
	/* the object's build-id goes to the run's list, once */
	ck_assert_str_eq(sp_run_build_id(&run, self), self_hex);
	uframes_name(&uf, &u, 0, 0, true, &f);
	ck_assert_uint_eq(f.addr, off);
	ck_assert_uint_eq(run.objects.n, 1);
	ck_assert_uint_eq(uf.how[UFRAME_NAMED], 2);
}
END_TEST

START_TEST(unnamed_and_unknown)
{
	struct sp_uframe u = valid(0x10); /* the ELF header: no function there */
	const char *base = strrchr(self, '/') + 1;
	char want[256];
	struct uframe f;

	uframes_name(&uf, &u, 0, 0, true, &f);
	ck_assert_int_eq(f.how, UFRAME_NOSYM);
	snprintf(want, sizeof(want), "%s+0x10", base);
	ck_assert_str_eq(f.name, want);
	ck_assert_str_eq(f.object, self);
	ck_assert_uint_eq(f.addr, 0x10);
	/* a build-id nobody registered: no object, no name */
	u.build_id[0] ^= 0xff;
	uframes_name(&uf, &u, 0, 0, true, &f);
	ck_assert_int_eq(f.how, UFRAME_BUILDID);
	ck_assert_str_eq(f.name, "[unknown]");
	ck_assert_str_eq(f.object, "[unknown]");
	ck_assert_uint_eq(f.addr, 0x10);
	ck_assert_str_ne(f.build_id, "");
	/* a raw IP of an image never snapshotted, and an empty frame */
	u = (struct sp_uframe){ .status = SP_UFRAME_IP, .offset = 0x1234 };
	uframes_name(&uf, &u, getpid(), 99, true, &f);
	ck_assert_int_eq(f.how, UFRAME_IMAGE);
	ck_assert_str_eq(f.name, "[unknown]");
	u.status = SP_UFRAME_EMPTY;
	uframes_name(&uf, &u, 0, 0, true, &f);
	ck_assert_int_eq(f.how, UFRAME_EMPTY);
}
END_TEST

START_TEST(raw_ip_through_snapshot)
{
	struct sp_uframe u = { .status = SP_UFRAME_IP,
			       .offset = (uint64_t)(uintptr_t)uf_caller_fn + 4 };
	struct uframe f;

	uframes_name(&uf, &u, getpid(), 1, false, &f);
	ck_assert_int_eq(f.how, UFRAME_NAMED);
	ck_assert_str_eq(f.name, "uf_caller_fn");
	ck_assert_str_eq(f.object, self);
}
END_TEST

/* A kernel stack with user frames after it: objects and identities for every frame. */
START_TEST(append_to_kernel_row)
{
	uint64_t off = file_offset((uint64_t)(uintptr_t)uf_caller_fn + 4);
	struct sp_uframe fr[2] = { valid(off), valid(0x10) };
	struct sp_stack_row row = {};
	uint64_t kips[] = { A("schedule", 0x10), A("do_syscall_64", 0x20) };

	row.frames = calloc(3, sizeof(char *));
	ck_assert_ptr_nonnull(row.frames);
	row.frames[0] = strdup("schedule");
	row.frames[1] = strdup("do_syscall_64");
	row.nframes = 2;
	ck_assert_int_eq(uframes_kernel_info(&row, (const __u64 *)kips, 2), 0);
	ck_assert_int_eq(uframes_append(&uf, &row, fr, 2, 0, 0, false), 0);
	ck_assert_uint_eq(row.nframes, 4);
	ck_assert_str_eq(row.objects[0], "[kernel]");
	ck_assert_str_eq(row.objects[1], "[kernel]");
	ck_assert_uint_eq(row.info[1].addr, kips[1]);
	ck_assert_ptr_null(row.info[1].build_id);
	ck_assert_str_eq(row.frames[2], "uf_caller_fn");
	ck_assert_str_eq(row.objects[2], self);
	ck_assert_str_eq(row.info[2].build_id, self_hex);
	ck_assert_uint_eq(row.info[2].addr, off - 1);
	ck_assert_ptr_nonnull(strstr(row.frames[3], "+0xf"));
	ck_assert_int_eq(sp_frame_kind(&row, 1), SP_FRAME_KERNEL);
	ck_assert_int_eq(sp_frame_kind(&row, 2), SP_FRAME_USER);
	ck_assert_ptr_null(row.frames[4]);
	/* neither main nor a thread start: cut short */
	ck_assert(!uframes_complete(&row, 2));
	sp_stack_row_free(&row);
}
END_TEST

/*
 * A frame whose offset no file can hold (the kernel's walk through a library without frame
 * pointers) ends the stack, counted: it and the frames after it are garbage.
 */
START_TEST(astray_frame_ends_stack)
{
	uint64_t off = file_offset((uint64_t)(uintptr_t)uf_caller_fn + 4);
	struct sp_uframe fr[3] = { valid(off), valid(0xffffa9ff2092b000ULL), valid(off) };
	struct sp_stack_row row = {};

	ck_assert_int_eq(uframes_append(&uf, &row, fr, 3, 0, 0, true), 0);
	ck_assert_uint_eq(row.nframes, 1);
	ck_assert_str_eq(row.frames[0], "uf_caller_fn");
	ck_assert_uint_eq(uf.astray, 1);
	/* the largest offset a file may have is kept */
	fr[1] = valid(UFRAME_MAX_OFFSET - 1);
	ck_assert_int_eq(uframes_append(&uf, &row, fr, 2, 0, 0, true), 0);
	ck_assert_uint_eq(row.nframes, 3);
	ck_assert_uint_eq(uf.astray, 1);
	sp_stack_row_free(&row);
}
END_TEST

static struct sp_stack_list lists[1];

static struct sp_stack_list *list_of(void *view, size_t i)
{
	(void)view;
	return &lists[i];
}

/*
 * The schedules/locks path: a view's stack ids are pairs (kernel stack, user stack); stacks
 * alike merge; a kernel stack alone (no pair) keeps its kernel frames only; a user task's
 * lost user stack is counted missing.
 */
START_TEST(pairs_into_stacks)
{
	uint64_t kips[] = { A("schedule", 0x10), A("do_syscall_64", 0x20) };
	uint64_t off = file_offset((uint64_t)(uintptr_t)uf_caller_fn + 4);
	struct sp_records kst, pairs, ust;
	struct sp_prof_ustack *u = calloc(1, sizeof(*u));
	struct sp_stack_pair p1 = { .kstack = 5, .ustack = 7, .tgid = 10, .exec_id = 1 };
	struct sp_stack_pair p2 = { .kstack = 5, .ustack = 0, .tgid = 10, .exec_id = 1,
				    .flags = SP_PAIR_F_USTACK_LOST };
	struct kstack_src src = { .ks = ks, .cfg = &cfg, .from = KSTACK_FROM_SCHED };
	struct sp_stack_row proto = { .comm = "w", .pid = 10, .count = 3, .time_ns = 30 };
	struct sp_records_index kidx;
	const struct sp_stack_pair *pair;
	struct uframes_pairs up;
	struct stack_index x;
	__u64 id;

	ck_assert_ptr_nonnull(u);
	sp_records_init(&kst, sizeof(__u64), sizeof(struct sp_stack));
	sp_records_init(&pairs, sizeof(__u64), sizeof(struct sp_stack_pair));
	sp_records_init(&ust, sizeof(__u64), sizeof(struct sp_prof_ustack));
	add_kstack_to(&kst, 5, kips, 2);
	u->nr = 1;
	u->frames[0] = valid(off);
	id = 7;
	ck_assert_int_eq(sp_records_add(&ust, &id, u), 0);
	id = 100;
	ck_assert_int_eq(sp_records_add(&pairs, &id, &p1), 0);
	id = 101;
	ck_assert_int_eq(sp_records_add(&pairs, &id, &p2), 0);
	ck_assert_int_eq(uframes_pairs_init(&up, &pairs, &ust, true), 0);
	ck_assert_int_eq(sp_records_index_u64(&kidx, &kst), 0);
	stack_index_init(&x, list_of, NULL, false);

	/* pair 100 twice (merged), pair 101 (its user stack lost), kernel stack 5 alone */
	ck_assert_uint_eq(uframes_pair_kstack(&up, 100, &pair), 5);
	ck_assert_ptr_nonnull(pair);
	src.st = sp_records_find_u64(&kidx, 5);
	ck_assert_ptr_nonnull(src.st);
	ck_assert_int_eq(uframes_add_stack(&uf, &up, &x, 0, &proto, &src, pair), 0);
	ck_assert_int_eq(uframes_add_stack(&uf, &up, &x, 0, &proto, &src, pair), 0);
	ck_assert_uint_eq(uframes_pair_kstack(&up, 101, &pair), 5);
	ck_assert_int_eq(uframes_add_stack(&uf, &up, &x, 0, &proto, &src, pair), 0);
	ck_assert_uint_eq(uframes_pair_kstack(&up, 5, &pair), 5);
	ck_assert_ptr_null(pair);
	ck_assert_int_eq(uframes_add_stack(&uf, &up, &x, 0, &proto, &src, pair), 0);

	/* the kernel frames alone (user stack lost, or none taken) are one stack */
	ck_assert_uint_eq(lists[0].n, 2);
	ck_assert_uint_eq(lists[0].v[0].count, 6);
	ck_assert_uint_eq(lists[0].v[0].time_ns, 60);
	ck_assert_uint_eq(lists[0].v[0].nframes, 3);
	ck_assert_str_eq(lists[0].v[0].frames[2], "uf_caller_fn");
	ck_assert_uint_eq(lists[0].v[0].info[1].addr, kips[1]);
	ck_assert_uint_eq(lists[0].v[1].nframes, 2);
	ck_assert_uint_eq(lists[0].v[1].count, 6);
	ck_assert_uint_eq(lists[0].v[1].info[0].addr, kips[0]);
	ck_assert_uint_eq(uf.stacks, 6);
	ck_assert_uint_eq(uf.stacks_truncated, 6);
	ck_assert_uint_eq(uf.stacks_missing, 3);

	stack_index_free(&x);
	uframes_pairs_free(&up);
	sp_records_index_free(&kidx);
	for (size_t i = 0; i < lists[0].n; i++)
		sp_stack_row_free(&lists[0].v[i]);
	free(lists[0].v);
	sp_records_free(&kst);
	sp_records_free(&pairs);
	sp_records_free(&ust);
	free(u);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
		named_with_identity, unnamed_and_unknown, raw_ip_through_snapshot,
		append_to_kernel_row, pairs_into_stacks, astray_frame_ends_stack,
	};

	return run_tests("uframes", tests, ARRAY_SIZE(tests), setup, teardown);
}
