// SPDX-License-Identifier: BSD-2-Clause
/*
 * The locks view's table (src/views/locks/model.c) on a run built by hand: the three --sort
 * keys (the run itself is not reordered), -n, contentions that gave up, the notes, an
 * unavailable view, --lock-stacks with the lock's source and its owners, and the sleepers
 * by group (singular and plural) or, in a run without groups, by caller; lock_begin's caller
 * cache in the header and the JSON.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../unit.h"
#include "model/model.h"

#define ck_assert_before(a, b) ck_assert(((a) != NULL) && ((b) != NULL) && ((a) < (b)))

static void add_row(struct sp_run *run, const char *caller, uint64_t count, uint64_t wait,
		    uint64_t max, uint64_t failed)
{
	struct sp_lock_row *r = sp_lock_add_row(&run->locks);

	ck_assert_ptr_nonnull(r);
	r->caller = strdup(caller);
	r->kind = strdup("mutex");
	r->lock = strdup(caller[0] == 'a' ? "tasklist_lock" : "pipe.mutex");
	r->source = strdup(caller[0] == 'a' ? "symbol" : "layout");
	r->count = count;
	r->wait_ns = wait;
	r->max_ns = max;
	r->failed = failed;
	run->locks.total += count;
	run->locks.failed += failed;
}

static void make_run(struct sp_run *run)
{
	sp_run_init(run);
	run->ncpus = 2; /* a saved run's machine has CPUs (read back in caller_cache) */
	run->locks.present = true;
	run->locks.available = true;
	add_row(run, "a_caller", 10, 500000, 100000, 0);
	add_row(run, "b_caller", 50, 200000, 20000, 0);
	add_row(run, "c_caller", 5, 300000, 290000, 2);
}

static char *table(const struct sp_run *run, enum sp_lock_sort sort, unsigned int nrows)
{
	struct render_opts o = { .format = SP_FMT_TABLE, .views = SP_VIEW_LOCKS, .nrows = nrows,
				 .nstacks = 3, .lock_sort = sort };

	return unit_render(run, &o, NULL);
}

START_TEST(sort_keys)
{
	struct sp_run run;
	char *out;

	make_run(&run);
	out = table(&run, SP_LOCK_SORT_WAIT, 20);
	ck_assert_ptr_nonnull(strstr(out, "\nlocks: 65 contentions, 2 gave up (3.1%), ranked by wait\n"));
	ck_assert_ptr_nonnull(strstr(out, "     COUNT       WAIT        AVG        MAX  KIND          "
					  "LOCK                            CALLER\n"));
	ck_assert_ptr_nonnull(strstr(out, "        10    500.0us     50.0us    100.0us  mutex         "
					  "tasklist_lock                   a_caller\n"));
	ck_assert_ptr_nonnull(strstr(out, "         5    300.0us     60.0us    290.0us  mutex         "
					  "pipe.mutex                      c_caller  (2 gave up)\n"));
	ck_assert_before(strstr(out, "a_caller"), strstr(out, "c_caller"));
	ck_assert_before(strstr(out, "c_caller"), strstr(out, "b_caller"));
	ck_assert_ptr_null(strstr(out, "note:"));
	ck_assert_ptr_null(strstr(out, "sleepers"));
	free(out);
	out = table(&run, SP_LOCK_SORT_COUNT, 20);
	ck_assert_ptr_nonnull(strstr(out, ", ranked by count\n"));
	ck_assert_before(strstr(out, "b_caller"), strstr(out, "a_caller"));
	ck_assert_before(strstr(out, "a_caller"), strstr(out, "c_caller"));
	free(out);
	out = table(&run, SP_LOCK_SORT_MAX, 1);
	ck_assert_ptr_nonnull(strstr(out, ", ranked by max\n"));
	ck_assert_ptr_nonnull(strstr(out, "c_caller  (2 gave up)\n  (2 more rows: -n 0 shows all)\n"));
	ck_assert_ptr_null(strstr(out, "a_caller"));
	free(out);
	/* the table ranks a copy: the run keeps its order */
	ck_assert_str_eq(run.locks.rows[0].caller, "a_caller");
	ck_assert_str_eq(run.locks.rows[1].caller, "b_caller");
	sp_run_free(&run);
}
END_TEST

START_TEST(notes_and_unavailable)
{
	struct sp_run run;
	char *out;

	make_run(&run);
	run.locks.missing_stacks = 4;
	run.locks.lost = 3;
	run.locks.unpaired = 2;
	out = table(&run, SP_LOCK_SORT_WAIT, 20);
	ck_assert_ptr_nonnull(strstr(out, "  note: 4 contentions have no kernel stack"));
	ck_assert_ptr_nonnull(strstr(out, "  note: 3 contentions are in the totals but in no row"));
	ck_assert_ptr_nonnull(strstr(out, " and 2 begins had no end\n"));
	free(out);
	sp_run_free(&run);

	sp_run_init(&run);
	run.locks.present = true;
	run.locks.unavailable = strdup("the kernel has no lock:contention_begin (5.19)");
	out = table(&run, SP_LOCK_SORT_WAIT, 20);
	ck_assert_ptr_nonnull(strstr(out, "\nlocks: unavailable: the kernel has no "
					  "lock:contention_begin (5.19)\n"));
	ck_assert_ptr_null(strstr(out, "COUNT"));
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(lock_stacks)
{
	static const char *const frames[] = { "mutex_lock", "pipe_read", "vfs_read" };
	struct render_opts o = { .format = SP_FMT_TABLE, .views = SP_VIEW_LOCKS, .nrows = 20,
				 .nstacks = 1, .lock_stacks = true };
	struct sp_run run;
	struct sp_lock_row *r;
	struct sp_stack_row *s;
	char *out;

	make_run(&run);
	r = &run.locks.rows[1]; /* b_caller */
	ck_assert_int_eq(sp_comm_list_add(&r->owners, "make", 3, 1000, 0), 0);
	ck_assert_int_eq(sp_comm_list_add(&r->owners, "cc1", 1, 10, 0), 0);
	s = sp_stack_list_add(&r->stacks);
	s->comm = strdup("cat");
	s->count = 25;
	s->time_ns = 100000;
	s->frames = calloc(3, sizeof(char *));
	for (int i = 0; i < 3; i++)
		s->frames[i] = strdup(frames[i]);
	s->nframes = 3;
	out = unit_render(&run, &o, NULL);
	ck_assert_ptr_nonnull(strstr(out, "b_caller\n"
					  "        lock pipe.mutex named by layout\n"
					  "        held by: make (3, 1.0us), 1 more\n"
					  "        stack #1: 25 (50.0%), wait 100.0us, comm cat\n"
					  "          mutex_lock\n"
					  "          pipe_read\n"
					  "          vfs_read\n"));
	/* a row without owners or stacks: its name's source only */
	ck_assert_ptr_nonnull(strstr(out, "a_caller\n        lock tasklist_lock named by symbol\n"));
	free(out);
	sp_run_free(&run);
}
END_TEST

START_TEST(sleepers)
{
	struct sp_run run;
	struct sp_sleeper_group *g;
	struct sp_sleeper_row *r;
	char *out;

	make_run(&run);
	g = sp_sleeper_add_group(&run.locks);
	g->comm = strdup("dirlock");
	g->kind = strdup("rwsem-write");
	g->lock = strdup("inode.i_rwsem");
	g->tasks = 8;
	g->count = 20;
	g->offcpu_ns = 1900000000;
	g->max_ns = 300000;
	for (int i = 0; i < 6; i++) {
		char name[16];

		snprintf(name, sizeof(name), "caller%d", i);
		ck_assert_int_eq(sp_comm_list_add(&g->callers, name, 1, 10, 0), 0);
	}
	g = sp_sleeper_add_group(&run.locks);
	g->comm = strdup("cat");
	g->kind = strdup("mutex");
	g->lock = strdup("pipe.mutex");
	g->tasks = 1;
	g->count = 1;
	ck_assert_int_eq(sp_comm_list_add(&g->callers, "pipe_read", 1, 0, 0), 0);
	out = table(&run, SP_LOCK_SORT_WAIT, 20);
	ck_assert_ptr_nonnull(strstr(out, "\nsleepers: time asleep in sleeping-lock slow paths, by "
					  "process, kind and lock\n"
					  "  dirlock: 8 tasks slept 1.900s in rwsem-write on inode.i_rwsem, "
					  "from caller0 / caller1 / caller2 / caller3 / 2 more  "
					  "(20 sleeps, max 300.0us)\n"
					  "  cat: 1 task slept 0ns in mutex on pipe.mutex, from pipe_read  "
					  "(1 sleep, max 0ns)\n"));
	free(out);
	out = table(&run, SP_LOCK_SORT_WAIT, 1);
	ck_assert_ptr_nonnull(strstr(out, "(20 sleeps, max 300.0us)\n  (1 more: -n 0 shows all)\n"));
	free(out);
	sp_run_free(&run);

	/* a saved run with sleeper rows but no groups: the rows */
	make_run(&run);
	r = sp_sleeper_add_row(&run.locks);
	r->caller = strdup("path_openat");
	r->kind = strdup("rwsem-write");
	r->lock = strdup("inode.i_rwsem");
	r->tasks = 2;
	r->count = 4;
	r->offcpu_ns = 2000;
	r->max_ns = 1000;
	out = table(&run, SP_LOCK_SORT_WAIT, 20);
	ck_assert_ptr_nonnull(strstr(out, "\n  2 tasks slept 2.0us in rwsem-write on inode.i_rwsem, "
					  "from path_openat  (4 sleeps, max 1.0us)\n"));
	free(out);
	sp_run_free(&run);
}
END_TEST

/*
 * lock_begin's caller cache is told in the header and written to the JSON only
 * when the fast path was on, and read back; a run without it has neither.
 */
START_TEST(caller_cache)
{
	char path[] = "/tmp/test_view_locks.XXXXXX";
	struct sp_run run, back;
	char *out, *json;
	size_t len;
	int fd;

	make_run(&run);
	out = table(&run, SP_LOCK_SORT_WAIT, 20);
	ck_assert_ptr_null(strstr(out, "from the cache"));
	free(out);
	json = unit_render_fmt(&run, SP_FMT_JSON, SP_VIEW_LOCKS, SP_VALUE_COUNT, &len);
	ck_assert_ptr_null(strstr(json, "caller_cache"));
	free(json);

	run.locks.cache = (struct sp_caller_cache){ .present = true, .attributed = 80, .fast = 60,
						    .verified = 60, .mismatched = 1,
						    .verify_all = true };
	out = table(&run, SP_LOCK_SORT_WAIT, 20);
	ck_assert_msg(strstr(out, "\n  callers: 60 of 80 contentions from the cache (75.0%), the "
				  "rest by a full stack walk; 60 checked by one (--verify-callers), 1 "
				  "mismatched\n"), "%s", out);
	free(out);
	json = unit_render_fmt(&run, SP_FMT_JSON, SP_VIEW_LOCKS, SP_VALUE_COUNT, &len);
	ck_assert_msg(strstr(json, "\"caller_cache\": {\n      \"attributed\": 80,\n      "
				   "\"fast\": 60,\n      \"verified\": 60,\n      \"mismatched\": 1,"
				   "\n      \"verify_all\": true\n    }"), "%s", json);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, json, len), (ssize_t)len);
	close(fd);
	free(json);
	unit_load(path, &back);
	unlink(path);
	ck_assert(back.locks.cache.present && back.locks.cache.verify_all);
	ck_assert_uint_eq(back.locks.cache.attributed, 80);
	ck_assert_uint_eq(back.locks.cache.fast, 60);
	ck_assert_uint_eq(back.locks.cache.verified, 60);
	ck_assert_uint_eq(back.locks.cache.mismatched, 1);
	sp_run_free(&back);
	sp_run_free(&run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("view_locks");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, sort_keys);
	tcase_add_test(tc, notes_and_unavailable);
	tcase_add_test(tc, lock_stacks);
	tcase_add_test(tc, sleepers);
	tcase_add_test(tc, caller_cache);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
