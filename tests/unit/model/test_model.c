// SPDX-License-Identifier: BSD-2-Clause
/*
 * The run model (src/model/model.c): growable arrays, comm lists, stack rows that symbolize
 * alike merged (in order, the last one, across pids), build-ids of objects, UTF-8 fix-up,
 * and the rankings every format shares (schedules, profile, locks: rows, sleepers, groups,
 * their comms and stacks).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"
#include "model/model.h"

/* ---- stack rows alike ---- */

/* A stack row of l with frames (NULL-terminated), comm, count and time. */
static void add(struct sp_stack_list *l, const char *comm, uint64_t count, uint64_t time_ns,
		const char *const *frames)
{
	struct sp_stack_row *s = sp_stack_list_add(l);
	size_t n = 0;

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->nframes, 0); /* a reused slot is zeroed */
	ck_assert_ptr_null(s->frames);
	while (frames[n])
		n++;
	s->comm = strdup(comm);
	s->frames = calloc(n + 1, sizeof(char *));
	s->objects = calloc(n + 1, sizeof(char *));
	ck_assert(s->comm && s->frames && s->objects);
	for (size_t i = 0; i < n; i++) {
		s->frames[i] = strdup(frames[i]);
		s->objects[i] = strdup("[kernel]");
		s->nframes++;
	}
	s->count = count;
	s->time_ns = time_ns;
}

static const char *const ab[] = { "a", "b", NULL };
static const char *const abc[] = { "a", "b", "c", NULL };
static const char *const ac[] = { "a", "c", NULL };

START_TEST(merge_all)
{
	struct sp_run run;
	struct sp_stack_list *l;

	sp_run_init(&run);
	l = &sp_sched_add_row(&run.sched)->stacks;
	sp_stack_list_merge(l); /* empty: nothing to do */
	ck_assert_uint_eq(l->n, 0);
	add(l, "cc1", 1, 10, ab);
	add(l, "cc1", 2, 20, abc); /* a longer stack */
	add(l, "make", 4, 40, ab); /* another comm */
	add(l, "cc1", 8, 80, ab);  /* alike the first */
	add(l, "cc1", 16, 160, ac);
	add(l, "cc1", 32, 320, abc); /* alike the second */
	sp_stack_list_merge(l);
	ck_assert_uint_eq(l->n, 4);
	/* the first of each kind keeps its place and gets the others' counts and times */
	ck_assert_uint_eq(l->v[0].count, 9);
	ck_assert_uint_eq(l->v[0].time_ns, 90);
	ck_assert_uint_eq(l->v[1].count, 34);
	ck_assert_uint_eq(l->v[1].nframes, 3);
	ck_assert_str_eq(l->v[2].comm, "make");
	ck_assert_uint_eq(l->v[2].count, 4);
	ck_assert_str_eq(l->v[3].frames[1], "c");
	ck_assert_uint_eq(l->v[3].count, 16);
	/* the slots freed are zeroed: adding again reuses them cleanly */
	add(l, "make", 64, 640, ab);
	sp_stack_list_merge_last(l);
	ck_assert_uint_eq(l->n, 4);
	ck_assert_uint_eq(l->v[2].count, 68);
	sp_run_free(&run);
}
END_TEST

START_TEST(merge_last)
{
	struct sp_run run;
	struct sp_stack_list *l;

	sp_run_init(&run);
	l = &sp_sched_add_row(&run.sched)->stacks;
	sp_stack_list_merge_last(l); /* empty */
	add(l, "cc1", 1, 10, ab);
	sp_stack_list_merge_last(l); /* alone: stays */
	ck_assert_uint_eq(l->n, 1);
	add(l, "cc1", 2, 20, ac);
	sp_stack_list_merge_last(l);
	ck_assert_uint_eq(l->n, 2);
	add(l, "cc1", 4, 40, ac);
	sp_stack_list_merge_last(l);
	ck_assert_uint_eq(l->n, 2);
	ck_assert_uint_eq(l->v[1].count, 6);
	ck_assert_uint_eq(l->v[1].time_ns, 60);
	ck_assert_uint_eq(l->v[0].count, 1);
	sp_run_free(&run);
}
END_TEST

/* Across pids: one row per comm and frames, pid 0; l's order kept when nothing merged. */
START_TEST(merge_pids)
{
	struct sp_run run;
	struct sp_stack_list *l, m;

	sp_run_init(&run);
	l = &sp_sched_add_row(&run.sched)->stacks;
	ck_assert_int_eq(sp_stack_list_merge_pids(l, &m), 0); /* empty */
	ck_assert_uint_eq(m.n, 0);
	ck_assert_ptr_null(m.v);
	add(l, "cc1", 1, 10, ab);
	add(l, "cc1", 5, 50, ac);
	l->v[0].pid = 10;
	l->v[1].pid = 11;
	/* nothing alike: l's order, even though it is not ranked */
	ck_assert_int_eq(sp_stack_list_merge_pids(l, &m), 0);
	ck_assert_uint_eq(m.n, 2);
	ck_assert_uint_eq(m.v[0].count, 1);
	ck_assert_int_eq(m.v[0].pid, 0);
	ck_assert_ptr_eq(m.v[0].frames, l->v[0].frames); /* borrowed */
	free(m.v);
	/* the same stack in another process of the comm: merged, then ranked again */
	add(l, "cc1", 8, 80, ab);
	l->v[2].pid = 12;
	add(l, "as", 2, 20, ab); /* another comm stays apart */
	ck_assert_int_eq(sp_stack_list_merge_pids(l, &m), 0);
	ck_assert_uint_eq(m.n, 3);
	ck_assert_uint_eq(m.v[0].count, 9);
	ck_assert_uint_eq(m.v[0].time_ns, 90);
	ck_assert_str_eq(m.v[0].frames[1], "b");
	ck_assert_uint_eq(m.v[1].count, 5);
	ck_assert_str_eq(m.v[2].comm, "as");
	free(m.v);
	/* l itself is untouched */
	ck_assert_uint_eq(l->n, 4);
	ck_assert_uint_eq(l->v[0].count, 1);
	ck_assert_int_eq(l->v[2].pid, 12);
	sp_run_free(&run);
}
END_TEST

/* Gives the last stack of l frame infos: addr (and a build-id when bid) per frame. */
static void set_info(struct sp_stack_list *l, uint64_t addr, const char *bid)
{
	struct sp_stack_row *s = &l->v[l->n - 1];

	s->info = calloc(s->nframes, sizeof(*s->info));
	ck_assert_ptr_nonnull(s->info);
	for (size_t i = 0; i < s->nframes; i++) {
		s->info[i].addr = addr + i;
		s->info[i].build_id = bid ? strdup(bid) : NULL;
		s->info[i].file = strdup("x.c");
		s->info[i].line = (unsigned int)i + 1;
	}
}

/*
 * Stacks alike only when their frames' identities (addr, build-id) agree too; a
 * stack with infos and one without never merge; alike stacks hash alike.
 */
START_TEST(merge_frame_info)
{
	struct sp_run run;
	struct sp_stack_list *l, m;

	sp_run_init(&run);
	l = &sp_sched_add_row(&run.sched)->stacks;
	add(l, "cc1", 1, 10, ab);
	set_info(l, 0x100, "aa");
	add(l, "cc1", 2, 20, ab); /* another address */
	set_info(l, 0x200, "aa");
	add(l, "cc1", 4, 40, ab); /* another build-id */
	set_info(l, 0x100, "bb");
	add(l, "cc1", 8, 80, ab); /* no infos */
	add(l, "cc1", 16, 160, ab); /* alike the first (file and line are not identity) */
	set_info(l, 0x100, "aa");
	free(l->v[4].info[0].file);
	l->v[4].info[0].file = NULL;
	add(l, "cc1", 32, 320, ab); /* alike the fourth */
	ck_assert(sp_stack_rows_alike(&l->v[0], &l->v[4], true));
	ck_assert_uint_eq(sp_stack_row_hash(&l->v[0], true, 7), sp_stack_row_hash(&l->v[4], true, 7));
	ck_assert(!sp_stack_rows_alike(&l->v[0], &l->v[1], false));
	ck_assert(!sp_stack_rows_alike(&l->v[0], &l->v[2], false));
	ck_assert(!sp_stack_rows_alike(&l->v[0], &l->v[3], false));
	ck_assert(!sp_stack_rows_alike(&l->v[3], &l->v[0], false));
	l->v[1].pid = 3;
	ck_assert_int_eq(sp_stack_list_merge_pids(l, &m), 0);
	ck_assert_uint_eq(m.n, 4);
	ck_assert_uint_eq(m.v[0].count, 40); /* the fourth and sixth */
	ck_assert_ptr_null(m.v[0].info);
	ck_assert_uint_eq(m.v[1].count, 17);
	ck_assert_uint_eq(m.v[1].info[0].addr, 0x100);
	free(m.v);
	sp_stack_list_merge(l);
	ck_assert_uint_eq(l->n, 4);
	ck_assert_uint_eq(l->v[0].count, 17);
	ck_assert_str_eq(l->v[0].info[0].file, "x.c"); /* the first row's infos stay */
	ck_assert_uint_eq(l->v[3].count, 40);
	sp_run_free(&run);
}
END_TEST

/* A deep copy of a stack, infos included; the copy outlives the original. */
START_TEST(copy_stack_row)
{
	struct sp_stack_list l = { 0 };
	struct sp_stack_row d = { 0 }, e = { 0 };

	add(&l, "cc1", 3, 30, abc);
	l.v[0].pid = 42;
	set_info(&l, 0xffffffff81000000ull, "abcd");
	l.v[0].info[1].system_name = strdup("_Z1bv");
	l.v[0].info[2].inlined = true;
	ck_assert_int_eq(sp_stack_row_copy(&d, &l.v[0]), 0);
	ck_assert(sp_stack_rows_alike(&d, &l.v[0], true));
	ck_assert_uint_eq(d.count, 0); /* the caller's */
	sp_stack_row_free(&l.v[0]);
	free(l.v);
	ck_assert_int_eq(d.pid, 42);
	ck_assert_str_eq(d.comm, "cc1");
	ck_assert_str_eq(d.frames[2], "c");
	ck_assert_str_eq(d.objects[0], "[kernel]");
	ck_assert_uint_eq(d.info[2].addr, 0xffffffff81000002ull);
	ck_assert_str_eq(d.info[1].build_id, "abcd");
	ck_assert_str_eq(d.info[1].system_name, "_Z1bv");
	ck_assert_ptr_null(d.info[0].system_name);
	ck_assert_str_eq(d.info[0].file, "x.c");
	ck_assert_uint_eq(d.info[1].line, 2);
	ck_assert(d.info[2].inlined && !d.info[1].inlined);
	/* without infos, objects or frames */
	free(d.comm);
	d.comm = NULL;
	sp_frame_info_free(d.info, d.nframes);
	d.info = NULL;
	ck_assert_int_eq(sp_stack_row_copy(&e, &d), 0);
	ck_assert_ptr_null(e.info);
	ck_assert_ptr_null(e.comm);
	ck_assert(sp_stack_rows_alike(&d, &e, true));
	sp_stack_row_free(&e);
	sp_stack_row_free(&d);
	memset(&d, 0, sizeof(d));
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(sp_stack_row_copy(&e, &d), 0);
	ck_assert_uint_eq(e.nframes, 0);
	sp_stack_row_free(&e);
}
END_TEST

START_TEST(frame_kinds)
{
	static const char *const frames[] = { "do_wait", "[preempted]", "ext4_sync", "main",
					      "[unknown]", "__vdso_clock_gettime", "[unknown]",
					      "cc1+0x1a2b3c", "[jit]", "f" };
	static const char *const objects[] = { "[kernel]", "", "[ext4]", "/usr/bin/x", "",
					       "[vdso]", "[unknown]", "/usr/lib/cc1", "[anon:v8]",
					       "[weird]" };
	static const enum sp_frame_kind want[] = { SP_FRAME_KERNEL, SP_FRAME_PSEUDO,
						   SP_FRAME_KERNEL, SP_FRAME_USER, SP_FRAME_PSEUDO,
						   SP_FRAME_USER, SP_FRAME_USER, SP_FRAME_USER,
						   SP_FRAME_USER, SP_FRAME_USER };
	struct sp_frame_info info[10] = { [9] = { .build_id = (char *)"ab" } };
	struct sp_stack_row s = { .frames = (char **)frames, .objects = (char **)objects,
				  .info = info, .nframes = 10 };

	for (size_t i = 0; i < s.nframes; i++)
		ck_assert_msg(sp_frame_kind(&s, i) == want[i], "frame %zu: %d", i,
			      (int)sp_frame_kind(&s, i));
	s.info = NULL; /* a bracketed object without a build-id: a module */
	ck_assert_int_eq(sp_frame_kind(&s, 9), SP_FRAME_KERNEL);
	/* a kernel stack: no objects */
	s.objects = NULL;
	ck_assert_int_eq(sp_frame_kind(&s, 0), SP_FRAME_KERNEL);
	ck_assert_int_eq(sp_frame_kind(&s, 1), SP_FRAME_PSEUDO);
	ck_assert_int_eq(sp_frame_kind(&s, 4), SP_FRAME_PSEUDO);
	ck_assert_int_eq(sp_frame_kind(&s, 7), SP_FRAME_KERNEL);
}
END_TEST

/* ---- arrays, comm lists, objects ---- */

START_TEST(array_add_zeroed)
{
	struct sp_sched_view v = { 0 };

	for (int i = 0; i < 100; i++) {
		struct sp_sched_row *r = sp_sched_add_row(&v);

		ck_assert_ptr_nonnull(r);
		ck_assert_ptr_null(r->caller);
		ck_assert_uint_eq(r->count, 0);
		r->count = (uint64_t)i + 1;
	}
	ck_assert_uint_eq(v.nrows, 100);
	ck_assert_uint_ge(v.cap, 100);
	for (int i = 0; i < 100; i++)
		ck_assert_uint_eq(v.rows[i].count, (uint64_t)i + 1);
	free(v.rows);
}
END_TEST

START_TEST(comm_list)
{
	struct sp_comm_list l = { 0 };

	ck_assert_int_eq(sp_comm_list_add(&l, "cc1", 1, 10, 7), 0);
	ck_assert_int_eq(sp_comm_list_add(&l, "as", 4, 5, 5), 0);
	ck_assert_int_eq(sp_comm_list_add(&l, "cc1", 2, 20, 3), 0);
	ck_assert_uint_eq(l.n, 2);
	/* counts and times add up, max_ns is a max */
	ck_assert_str_eq(l.v[0].comm, "cc1");
	ck_assert_uint_eq(l.v[0].count, 3);
	ck_assert_uint_eq(l.v[0].time_ns, 30);
	ck_assert_uint_eq(l.v[0].max_ns, 7);
	/* ranked by count, then time, then name */
	ck_assert_int_eq(sp_comm_list_add(&l, "ld", 4, 5, 0), 0);
	ck_assert_int_eq(sp_comm_list_add(&l, "make", 4, 6, 0), 0);
	sp_comm_list_sort(&l);
	ck_assert_str_eq(l.v[0].comm, "make");
	ck_assert_str_eq(l.v[1].comm, "as");
	ck_assert_str_eq(l.v[2].comm, "ld");
	ck_assert_str_eq(l.v[3].comm, "cc1");
	sp_comm_list_free(&l);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_ptr_null(l.v);
	sp_comm_list_free(&l); /* twice is fine */
}
END_TEST

START_TEST(objects_build_ids)
{
	struct sp_run run;

	sp_run_init(&run);
	ck_assert_ptr_null(sp_run_build_id(&run, "/usr/bin/cc1"));
	ck_assert_int_eq(sp_object_list_add(&run.objects, "/usr/bin/cc1", "aa"), 0);
	ck_assert_int_eq(sp_object_list_add(&run.objects, "/lib/libc.so.6", "bb"), 0);
	/* a path already known keeps its first build-id */
	ck_assert_int_eq(sp_object_list_add(&run.objects, "/usr/bin/cc1", "cc"), 0);
	ck_assert_uint_eq(run.objects.n, 2);
	ck_assert_str_eq(sp_run_build_id(&run, "/usr/bin/cc1"), "aa");
	ck_assert_str_eq(sp_run_build_id(&run, "/lib/libc.so.6"), "bb");
	ck_assert_ptr_null(sp_run_build_id(&run, "/usr/bin/as"));
	ck_assert_ptr_null(sp_run_build_id(&run, NULL));
	sp_run_free(&run);
}
END_TEST

/* Every string of every view, and the run's own, made valid UTF-8. */
START_TEST(fix_utf8)
{
	struct sp_run run;
	struct sp_sched_row *r;
	struct sp_lock_row *lr;
	struct sp_stack_row *s;

	sp_run_init(&run);
	run.hostname = strdup("h\xff");
	r = sp_sched_add_row(&run.sched);
	r->caller = strdup("ok\xc3\xa9");
	r->wait = strdup("\xc0\xaf");
	ck_assert_int_eq(sp_comm_list_add(&r->comms, "c\x80", 1, 0, 0), 0);
	s = sp_stack_list_add(&r->stacks);
	s->comm = strdup("x");
	s->frames = calloc(2, sizeof(char *));
	s->frames[0] = strdup("f\xed\xa0\x80");
	s->nframes = 1;
	lr = sp_lock_add_row(&run.locks);
	lr->caller = strdup("a");
	lr->kind = strdup("mutex");
	lr->lock = strdup("l\xfe");
	ck_assert_int_eq(sp_run_fix_utf8(&run), 0);
	ck_assert_str_eq(run.hostname, "h\xef\xbf\xbd");
	ck_assert_str_eq(r->caller, "ok\xc3\xa9"); /* valid: unchanged */
	ck_assert_str_eq(r->wait, "\xef\xbf\xbd\xef\xbf\xbd");
	ck_assert_str_eq(r->comms.v[0].comm, "c\xef\xbf\xbd");
	ck_assert_str_eq(r->stacks.v[0].frames[0], "f\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	ck_assert_str_eq(run.locks.rows[0].lock, "l\xef\xbf\xbd");
	ck_assert_ptr_null(run.locks.rows[0].source); /* NULL stays NULL */
	sp_run_free(&run);
	ck_assert_ptr_null(run.hostname); /* freed and zeroed */
}
END_TEST

/* ---- ranking ---- */

START_TEST(sort_keys)
{
	struct sp_lock_view v = { 0 };
	static const struct {
		const char *caller;
		uint64_t count, wait, max;
	} rows[] = {
		{ "a", 10, 500, 100 }, { "b", 50, 200, 20 }, { "c", 5, 300, 290 }, { "d", 50, 200, 20 },
	};

	for (size_t i = 0; i < 4; i++) {
		struct sp_lock_row *r = sp_lock_add_row(&v);

		ck_assert_ptr_nonnull(r);
		r->caller = strdup(rows[i].caller);
		r->kind = strdup("mutex");
		r->lock = strdup("x");
		r->count = rows[i].count;
		r->wait_ns = rows[i].wait;
		r->max_ns = rows[i].max;
	}
	sp_lock_sort(&v, SP_LOCK_SORT_WAIT);
	ck_assert_str_eq(v.rows[0].caller, "a");
	ck_assert_str_eq(v.rows[1].caller, "c");
	ck_assert_str_eq(v.rows[2].caller, "b"); /* tie with d on every key: by name */
	ck_assert_str_eq(v.rows[3].caller, "d");
	sp_lock_sort(&v, SP_LOCK_SORT_COUNT);
	ck_assert_str_eq(v.rows[0].caller, "b");
	ck_assert_str_eq(v.rows[1].caller, "d");
	ck_assert_str_eq(v.rows[2].caller, "a");
	sp_lock_sort(&v, SP_LOCK_SORT_MAX);
	ck_assert_str_eq(v.rows[0].caller, "c");
	ck_assert_str_eq(v.rows[1].caller, "a");
	ck_assert_int_lt(sp_lock_row_cmp(&v.rows[0], &v.rows[1], SP_LOCK_SORT_MAX), 0);
	ck_assert_int_eq(sp_lock_row_cmp(&v.rows[0], &v.rows[0], SP_LOCK_SORT_WAIT), 0);
	for (size_t i = 0; i < v.nrows; i++) {
		free(v.rows[i].caller);
		free(v.rows[i].kind);
		free(v.rows[i].lock);
	}
	free(v.rows);
}
END_TEST

/* Sleepers and groups by off-CPU time, then count, then names; a group's callers by time. */
START_TEST(sleeper_sort_keys)
{
	struct sp_run run;
	struct sp_lock_view *v = &run.locks;
	static const struct {
		const char *name, *kind;
		uint64_t count, offcpu;
	} rows[] = {
		{ "a", "mutex", 1, 100 }, { "b", "mutex", 5, 300 }, { "c", "rwsem", 9, 300 },
		{ "c", "mutex", 9, 300 }, { NULL, "mutex", 2, 50 },
	};
	struct sp_sleeper_group *g;

	sp_run_init(&run);
	for (size_t i = 0; i < 5; i++) {
		struct sp_sleeper_row *r = sp_sleeper_add_row(v);

		g = sp_sleeper_add_group(v);
		ck_assert_ptr_nonnull(r);
		ck_assert_ptr_nonnull(g);
		r->caller = rows[i].name ? strdup(rows[i].name) : NULL; /* NULL ranks as "" */
		g->comm = rows[i].name ? strdup(rows[i].name) : NULL;
		r->kind = strdup(rows[i].kind);
		g->kind = strdup(rows[i].kind);
		r->count = g->count = rows[i].count;
		r->offcpu_ns = g->offcpu_ns = rows[i].offcpu;
	}
	ck_assert_int_eq(sp_comm_list_add(&g->callers, "few", 9, 10, 0), 0);
	ck_assert_int_eq(sp_comm_list_add(&g->callers, "long", 1, 90, 0), 0);
	sp_lock_sort(v, SP_LOCK_SORT_WAIT);
	ck_assert_str_eq(v->sleepers[0].caller, "c");
	ck_assert_str_eq(v->sleepers[0].kind, "mutex");
	ck_assert_str_eq(v->sleepers[1].kind, "rwsem");
	ck_assert_str_eq(v->sleepers[2].caller, "b");
	ck_assert_str_eq(v->sleepers[3].caller, "a");
	ck_assert_ptr_null(v->sleepers[4].caller);
	ck_assert_str_eq(v->groups[0].comm, "c");
	ck_assert_str_eq(v->groups[1].kind, "rwsem");
	ck_assert_ptr_null(v->groups[4].comm);
	ck_assert_str_eq(v->groups[4].callers.v[0].comm, "long");
	sp_run_free(&run);
}
END_TEST

/* Schedules by count, then off-CPU time, then caller and wait (NULL as ""). */
START_TEST(sched_sort_keys)
{
	struct sp_run run;
	static const struct {
		const char *caller, *wait;
		uint64_t count, offcpu;
	} rows[] = {
		{ "x", "io", 3, 10 }, { "y", NULL, 7, 1 }, { "x", NULL, 3, 10 }, { "z", "io", 3, 20 },
	};

	sp_run_init(&run);
	for (size_t i = 0; i < 4; i++) {
		struct sp_sched_row *r = sp_sched_add_row(&run.sched);

		ck_assert_ptr_nonnull(r);
		r->caller = strdup(rows[i].caller);
		r->wait = rows[i].wait ? strdup(rows[i].wait) : NULL;
		r->count = rows[i].count;
		r->offcpu_ns = rows[i].offcpu;
	}
	{ /* y's wakers: by count desc, then comm, then function (NULL first) */
		static const struct {
			const char *comm, *fn;
			uint64_t count;
		} wk[] = { { "b", "f", 1 }, { "a", NULL, 5 }, { "b", NULL, 1 }, { "a", "g", 1 } };
		struct sp_sched_row *r = &run.sched.rows[1];

		for (size_t i = 0; i < 4; i++) {
			struct sp_waker *w = SP_ARRAY_ADD(r->wakers.v, r->wakers.n, r->wakers.cap);

			ck_assert_ptr_nonnull(w);
			w->comm = strdup(wk[i].comm);
			w->function = wk[i].fn ? strdup(wk[i].fn) : NULL;
			w->count = wk[i].count;
		}
	}
	sp_sched_sort(&run.sched);
	ck_assert_str_eq(run.sched.rows[0].caller, "y");
	ck_assert_uint_eq(run.sched.rows[0].wakers.v[0].count, 5);
	ck_assert_str_eq(run.sched.rows[0].wakers.v[1].comm, "a");
	ck_assert_str_eq(run.sched.rows[0].wakers.v[1].function, "g");
	ck_assert_ptr_null(run.sched.rows[0].wakers.v[2].function);
	ck_assert_str_eq(run.sched.rows[0].wakers.v[2].comm, "b");
	ck_assert_str_eq(run.sched.rows[0].wakers.v[3].function, "f");
	ck_assert_str_eq(run.sched.rows[1].caller, "z");
	ck_assert_str_eq(run.sched.rows[2].caller, "x");
	ck_assert_ptr_null(run.sched.rows[2].wait);
	ck_assert_str_eq(run.sched.rows[3].wait, "io");
	sp_run_free(&run);
}
END_TEST

/* Profile rows by samples, then function, then object; stacks by count, time, comm, frames. */
START_TEST(profile_and_stack_sort_keys)
{
	struct sp_run run;
	struct sp_profile_row *r;
	static const struct {
		const char *fn, *obj;
		uint64_t samples;
	} rows[] = {
		{ "b", "[kernel]", 5 }, { "a", "/bin/x", 5 }, { "a", "[kernel]", 5 }, { "z", "[kernel]", 9 },
	};

	sp_run_init(&run);
	for (size_t i = 0; i < 4; i++) {
		r = sp_profile_add_row(&run.profile);
		ck_assert_ptr_nonnull(r);
		r->function = strdup(rows[i].fn);
		r->object = strdup(rows[i].obj);
		r->samples = rows[i].samples;
	}
	r = &run.profile.rows[0];
	add(&r->stacks, "cc1", 2, 0, abc);
	add(&r->stacks, "cc1", 2, 0, ab);  /* a prefix ranks first */
	add(&r->stacks, "as", 2, 0, ac);   /* comm before frames */
	add(&r->stacks, "cc1", 2, 5, ac);  /* time before comm */
	add(&r->stacks, "cc1", 3, 0, abc); /* count first */
	sp_profile_sort(&run.profile);
	ck_assert_str_eq(run.profile.rows[0].function, "z");
	ck_assert_str_eq(run.profile.rows[1].object, "/bin/x");
	ck_assert_str_eq(run.profile.rows[2].object, "[kernel]");
	ck_assert_str_eq(run.profile.rows[3].function, "b");
	r = &run.profile.rows[3];
	ck_assert_uint_eq(r->stacks.v[0].count, 3);
	ck_assert_uint_eq(r->stacks.v[1].time_ns, 5);
	ck_assert_str_eq(r->stacks.v[2].comm, "as");
	ck_assert_uint_eq(r->stacks.v[3].nframes, 2);
	ck_assert_uint_eq(r->stacks.v[4].nframes, 3);
	sp_run_free(&run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("model");
	TCase *stacks = tcase_create("stacks"), *lists = tcase_create("lists");
	TCase *sort = tcase_create("sort");

	tcase_add_test(stacks, merge_all);
	tcase_add_test(stacks, merge_last);
	tcase_add_test(stacks, merge_pids);
	tcase_add_test(stacks, merge_frame_info);
	tcase_add_test(stacks, copy_stack_row);
	tcase_add_test(stacks, frame_kinds);
	tcase_add_test(lists, array_add_zeroed);
	tcase_add_test(lists, comm_list);
	tcase_add_test(lists, objects_build_ids);
	tcase_add_test(lists, fix_utf8);
	tcase_add_test(sort, sort_keys);
	tcase_add_test(sort, sleeper_sort_keys);
	tcase_add_test(sort, sched_sort_keys);
	tcase_add_test(sort, profile_and_stack_sort_keys);
	suite_add_tcase(s, stacks);
	suite_add_tcase(s, lists);
	suite_add_tcase(s, sort);
	return unit_run(s);
}
