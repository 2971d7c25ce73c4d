// SPDX-License-Identifier: BSD-2-Clause
/*
 * The row builders' shared indexes (src/rows/rows.c): rows by one to three key strings
 * (NULL as "", no confusion across key boundaries, positions valid while the array grows),
 * stack rows alike within a row (comm, pid, frames; objects when asked) merged into the first
 * one, the position limits, rows_account, and a kernel stack added through the index.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "../unit.h"
#include "loader/foldcfg.h"
#include "symbols/ksyms.h"
#include "symbols/kstack.h"
#include "rows/rows.h"
#include "../kallsyms_fixture.h"

/* ---- rows by key ---- */

struct krow {
	char *a, *b, *c;
};

struct kview {
	struct krow *rows;
	size_t n, cap;
};

static void key_of(void *view, size_t pos, const char *ret[ROW_KEY_MAX])
{
	const struct krow *r = &((struct kview *)view)->rows[pos];

	ret[0] = r->a;
	ret[1] = r->b;
	ret[2] = r->c;
}

static size_t add_krow(struct kview *v, struct row_index *x, const char *a, const char *b,
		       const char *c)
{
	struct krow *r = SP_ARRAY_ADD(v->rows, v->n, v->cap);

	ck_assert_ptr_nonnull(r);
	r->a = a ? strdup(a) : NULL;
	r->b = b ? strdup(b) : NULL;
	r->c = c ? strdup(c) : NULL;
	ck_assert_int_eq(row_index_add(x, v->n - 1), 0);
	return v->n - 1;
}

static void free_kview(struct kview *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free(v->rows[i].a);
		free(v->rows[i].b);
		free(v->rows[i].c);
	}
	free(v->rows);
}

static long find(struct row_index *x, const char *a, const char *b, const char *c)
{
	const char *k[ROW_KEY_MAX] = { a, b, c };

	return row_index_find(x, k);
}

START_TEST(rows_by_key)
{
	struct kview v = { 0 };
	struct row_index x;

	row_index_init(&x, key_of, &v, 2);
	ck_assert_int_eq(find(&x, "a", "b", NULL), -1); /* empty */
	ck_assert_uint_eq(add_krow(&v, &x, "ab", "c", "ignored"), 0);
	ck_assert_uint_eq(add_krow(&v, &x, "a", "bc", NULL), 1);
	ck_assert_uint_eq(add_krow(&v, &x, "pipe_read", NULL, NULL), 2);
	/* keys do not run into each other: ("ab","c") is not ("a","bc") */
	ck_assert_int_eq(find(&x, "ab", "c", NULL), 0);
	ck_assert_int_eq(find(&x, "a", "bc", NULL), 1);
	ck_assert_int_eq(find(&x, "abc", "", NULL), -1);
	/* only nkeys strings count: the third is not part of the key */
	ck_assert_int_eq(find(&x, "ab", "c", "other"), 0);
	/* NULL and "" are the same key */
	ck_assert_int_eq(find(&x, "pipe_read", "", NULL), 2);
	ck_assert_int_eq(find(&x, "pipe_read", NULL, NULL), 2);
	ck_assert_int_eq(find(&x, "pipe_read", "io", NULL), -1);
	/* a position already indexed is refused */
	ck_assert_int_eq(row_index_add(&x, 0), -EEXIST);
	row_index_free(&x);
	free_kview(&v);
}
END_TEST

/* The index holds positions: rows found after the array moved (many reallocations). */
START_TEST(rows_many)
{
	struct kview v = { 0 };
	struct row_index x;
	char a[32], b[32];

	row_index_init(&x, key_of, &v, 3);
	for (int i = 0; i < 20000; i++) {
		snprintf(a, sizeof(a), "caller%d", i % 5000);
		snprintf(b, sizeof(b), "%d", i / 5000);
		add_krow(&v, &x, a, b, i % 2 ? "odd" : NULL);
	}
	for (int i = 0; i < 20000; i++) {
		snprintf(a, sizeof(a), "caller%d", i % 5000);
		snprintf(b, sizeof(b), "%d", i / 5000);
		ck_assert_int_eq(find(&x, a, b, i % 2 ? "odd" : ""), i);
		ck_assert_int_eq(find(&x, a, b, i % 2 ? NULL : "odd"), -1);
	}
	row_index_free(&x);
	free_kview(&v);
}
END_TEST

START_TEST(account)
{
	struct sp_comm_list l = { 0 };
	uint64_t max = 5;

	ck_assert_int_eq(rows_account(&l, &max, "cc1", 1, 100, 3), 0);
	ck_assert_uint_eq(max, 5); /* a max, never lowered */
	ck_assert_int_eq(rows_account(&l, &max, "cc1", 2, 50, 40), 0);
	ck_assert_int_eq(rows_account(&l, &max, "as", 1, 1, 1), 0);
	ck_assert_uint_eq(max, 40);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_uint_eq(l.v[0].count, 3);
	ck_assert_uint_eq(l.v[0].time_ns, 150);
	ck_assert_uint_eq(l.v[0].max_ns, 40);
	sp_comm_list_free(&l);
}
END_TEST

/* ---- stack rows alike ---- */

struct srow {
	struct sp_stack_list stacks;
};

struct sview {
	struct srow rows[3];
};

static struct sp_stack_list *list_of(void *view, size_t i)
{
	return &((struct sview *)view)->rows[i].stacks;
}

/* Appends a stack to row's list, then merges it through the index. */
static void push(struct stack_index *x, struct sview *v, size_t row, const char *comm, int pid,
		 uint64_t count, const char *f0, const char *o0, const char *f1)
{
	struct sp_stack_row *s = sp_stack_list_add(&v->rows[row].stacks);
	size_t n = f1 ? 2 : 1;

	ck_assert_ptr_nonnull(s);
	s->comm = strdup(comm);
	s->pid = pid;
	s->count = count;
	s->time_ns = count * 10;
	s->frames = calloc(n + 1, sizeof(char *));
	s->frames[0] = strdup(f0);
	if (f1)
		s->frames[1] = strdup(f1);
	if (o0) {
		s->objects = calloc(n + 1, sizeof(char *));
		s->objects[0] = strdup(o0);
		if (f1)
			s->objects[1] = strdup("[kernel]");
	}
	s->nframes = n;
	ck_assert_int_eq(stack_index_merge_last(x, row), 0);
}

static void free_sview(struct sview *v)
{
	for (size_t i = 0; i < 3; i++) {
		for (size_t j = 0; j < v->rows[i].stacks.n; j++)
			sp_stack_row_free(&v->rows[i].stacks.v[j]);
		free(v->rows[i].stacks.v);
	}
}

START_TEST(stacks_alike)
{
	struct sview v = { 0 };
	struct stack_index x;
	struct sp_stack_list *l0 = &v.rows[0].stacks, *l1 = &v.rows[1].stacks;

	stack_index_init(&x, list_of, &v, false);
	ck_assert_int_eq(stack_index_merge_last(&x, 2), 0); /* an empty list */
	push(&x, &v, 0, "cc1", 10, 1, "f", NULL, "main");
	push(&x, &v, 0, "cc1", 10, 2, "f", NULL, NULL);	   /* shorter */
	push(&x, &v, 0, "cc1", 11, 4, "f", NULL, "main");  /* another pid */
	push(&x, &v, 0, "as", 10, 8, "f", NULL, "main");   /* another comm */
	push(&x, &v, 0, "cc1", 10, 16, "g", NULL, "main"); /* another frame */
	push(&x, &v, 1, "cc1", 10, 32, "f", NULL, "main"); /* another row */
	ck_assert_uint_eq(l0->n, 5);
	ck_assert_uint_eq(l1->n, 1);
	/* alike: merged into the first, which keeps its place */
	push(&x, &v, 0, "cc1", 10, 64, "f", "/bin/cc1", "main"); /* objects do not count */
	push(&x, &v, 0, "as", 10, 128, "f", NULL, "main");
	push(&x, &v, 1, "cc1", 10, 256, "f", NULL, "main");
	ck_assert_uint_eq(l0->n, 5);
	ck_assert_uint_eq(l1->n, 1);
	ck_assert_uint_eq(l0->v[0].count, 65);
	ck_assert_uint_eq(l0->v[0].time_ns, 650);
	ck_assert_uint_eq(l0->v[3].count, 136);
	ck_assert_uint_eq(l1->v[0].count, 288);
	ck_assert_ptr_null(l0->v[5].comm); /* the merged slot is cleared */
	{
		struct sp_stack_row probe = l0->v[4];

		ck_assert_int_eq(stack_index_find(&x, 0, &probe), 4);
		ck_assert_int_eq(stack_index_find(&x, 2, &probe), -1);
	}
	stack_index_free(&x);
	free_sview(&v);
}
END_TEST

START_TEST(stacks_with_objects)
{
	struct sview v = { 0 };
	struct stack_index x;
	struct sp_stack_list *l = &v.rows[0].stacks;

	stack_index_init(&x, list_of, &v, true);
	push(&x, &v, 0, "cc1", 1, 1, "main", "/bin/cc1", NULL);
	push(&x, &v, 0, "cc1", 1, 2, "main", "/bin/as", NULL); /* another object */
	push(&x, &v, 0, "cc1", 1, 4, "main", NULL, NULL);	/* none: "" */
	ck_assert_uint_eq(l->n, 3);
	push(&x, &v, 0, "cc1", 1, 8, "main", "/bin/as", NULL);
	ck_assert_uint_eq(l->n, 3);
	ck_assert_uint_eq(l->v[1].count, 10);
	stack_index_free(&x);
	free_sview(&v);
}
END_TEST

START_TEST(stack_limits)
{
	struct sview v = { 0 };
	struct stack_index x;

	stack_index_init(&x, list_of, &v, false);
	ck_assert_int_eq(stack_index_add(&x, 0, 0x100000000ULL), -E2BIG);
	ck_assert_int_eq(stack_index_add(&x, 0x80000000ULL, 0), -E2BIG);
	stack_index_free(&x);
}
END_TEST

/* A kernel stack record symbolized into a row's list, merged with the one alike. */
START_TEST(add_kstack)
{
	struct sp_stack st = { .nr = 3 };
	struct sp_stack_row proto = { .comm = "cat", .pid = 7, .count = 2, .time_ns = 20 };
	struct kstack_src src = { .st = &st, .from = KSTACK_FROM_SCHED };
	struct sview v = { 0 };
	struct stack_index x;
	struct sp_stack_list *l = &v.rows[1].stacks;

	fixture_load();
	src.ks = ks;
	src.cfg = &cfg;
	st.ip[0] = A("__schedule", 0x10);
	st.ip[1] = A("schedule", 0x10);
	st.ip[2] = A("anon_pipe_read", 0x10);
	stack_index_init(&x, list_of, &v, false);
	ck_assert_int_eq(stack_index_add_kstack(&x, 1, &proto, &src), 0);
	ck_assert_int_eq(stack_index_add_kstack(&x, 1, &proto, &src), 0);
	ck_assert_uint_eq(l->n, 1);
	ck_assert_uint_eq(l->v[0].count, 4);
	ck_assert_uint_eq(l->v[0].time_ns, 40);
	ck_assert_int_eq(l->v[0].pid, 7);
	ck_assert_str_eq(l->v[0].comm, "cat");
	ck_assert_uint_eq(l->v[0].nframes, 3);
	ck_assert_str_eq(l->v[0].frames[2], "anon_pipe_read");
	/* the same frames from another process: a row of its own */
	proto.pid = 8;
	ck_assert_int_eq(stack_index_add_kstack(&x, 1, &proto, &src), 0);
	ck_assert_uint_eq(l->n, 2);
	stack_index_free(&x);
	free_sview(&v);
	fixture_free();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rows");
	TCase *rows = tcase_create("rows"), *stacks = tcase_create("stacks");

	tcase_add_test(rows, rows_by_key);
	tcase_add_test(rows, rows_many);
	tcase_add_test(rows, account);
	tcase_add_test(stacks, stacks_alike);
	tcase_add_test(stacks, stacks_with_objects);
	tcase_add_test(stacks, stack_limits);
	tcase_add_test(stacks, add_kstack);
	suite_add_tcase(s, rows);
	suite_add_tcase(s, stacks);
	return unit_run(s);
}
