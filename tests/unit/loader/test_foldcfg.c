// SPDX-License-Identifier: BSD-2-Clause
/* The caller-folding rule (include/schedprof/fold.h) on a fixture kallsyms, as BPF applies it. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "loader/foldcfg.h"
#include "views/schedules/rows.h"
#include "symbols/ksyms.h"
#include "../unit.h"
#include "../kallsyms_fixture.h"

/* Folds a leaf-first stack as the BPF program does; returns the caller's name. */
static const char *fold(const uint64_t *ips, size_t n, __u32 *ret_wait)
{
	struct sp_fold_state st = { 0 };
	const struct ksym *s;

	for (size_t i = 0; i < n; i++)
		if (sp_fold_step(&st, &cfg, ips[i]))
			break;
	if (ret_wait)
		*ret_wait = st.wait;
	if (st.caller == SP_CALLER_UNKNOWN)
		return "[unknown]";
	s = ksyms__map_addr(ks, st.caller, NULL);
	return s ? s->name : "?";
}

START_TEST(sections)
{
	ck_assert_uint_eq(cfg.text_start[0], 0xffffffff82265800ULL);
	ck_assert_uint_eq(cfg.text_end[0], 0xffffffff8226b500ULL);
	ck_assert_uint_eq(cfg.text_start[1], 0xffffffff8226e530ULL);
	ck_assert_uint_eq(cfg.text_end[1], 0xffffffff8226ffb1ULL);
	ck_assert_uint_eq(cfg.text_start[2], 0xffffffff82261960ULL);
	ck_assert_uint_eq(cfg.text_end[2], 0xffffffff82262705ULL);
	ck_assert_uint_eq(cfg.io_start[0], A("io_schedule", 0));
	ck_assert_uint_eq(cfg.io_start[1], A("io_schedule_timeout", 0));
	ck_assert_uint_gt(cfg.nr_lock_ranges, 4);
}
END_TEST

START_TEST(pipe_reader)
{
	uint64_t st[] = { A("bpf_trace_run4", 0x40), A("__bpf_trace_sched_switch", 0x20),
			  A("__schedule", 0x300), A("schedule", 0x30), A("anon_pipe_read", 0x1a0),
			  A("do_syscall_64", 0x50) };
	__u32 w = 99;

	ck_assert_str_eq(fold(st, 6, &w), "anon_pipe_read");
	ck_assert_uint_eq(w, SP_WAIT_NONE);
}
END_TEST

START_TEST(rwsem_write)
{
	uint64_t st[] = { A("bpf_trace_run4", 1), A("__schedule", 0x300), A("schedule", 0x30),
			  A("schedule_preempt_disabled", 0x10), A("rwsem_down_write_slowpath", 0x400),
			  A("down_write", 0x40), A("open_last_lookups", 0x80), A("path_openat", 1) };
	__u32 w;

	ck_assert_str_eq(fold(st, 8, &w), "open_last_lookups");
	ck_assert_uint_eq(w, SP_WAIT_RWSEM_WRITE);
	ck_assert_str_eq(fold_wait_name(w), "rwsem-write");
}
END_TEST

START_TEST(mutex_and_read)
{
	uint64_t m[] = { A("__schedule", 1), A("schedule", 1), A("schedule_preempt_disabled", 1),
			 A("__mutex_lock.constprop.0", 0x20), A("__mutex_lock_slowpath", 1),
			 A("mutex_lock", 0x30), A("anon_pipe_read", 0x10) };
	uint64_t r[] = { A("__schedule", 1), A("schedule", 1), A("rwsem_down_read_slowpath", 8),
			 A("down_read", 8), A("path_openat", 8) };
	__u32 w;

	ck_assert_str_eq(fold(m, 7, &w), "anon_pipe_read");
	ck_assert_uint_eq(w, SP_WAIT_MUTEX);
	ck_assert_str_eq(fold(r, 5, &w), "path_openat");
	ck_assert_uint_eq(w, SP_WAIT_RWSEM_READ);
}
END_TEST

/* percpu_rwsem_wait lies outside __sched text on 6.x: still folded, the caller is the user. */
START_TEST(percpu_outside_sched_text)
{
	uint64_t st[] = { A("__schedule", 1), A("schedule", 1), A("percpu_rwsem_wait", 0x80),
			  A("__percpu_down_read", 0x20), A("freeze_super", 0x10) };
	__u32 w;

	ck_assert_str_eq(fold(st, 5, &w), "freeze_super");
	ck_assert_uint_eq(w, SP_WAIT_PERCPU_RWSEM);
}
END_TEST

START_TEST(exit_and_io)
{
	uint64_t e[] = { A("__schedule", 1), A("do_task_dead", 0x40), A("do_exit", 0x300) };
	uint64_t io[] = { A("__schedule", 1), A("schedule", 1), A("io_schedule", 0x10),
			  A("ext4_buffered_write_iter", 0x10) };
	__u32 w;

	ck_assert_str_eq(fold(e, 3, &w), "do_exit");
	ck_assert_uint_eq(w, SP_WAIT_NONE); /* do_task_dead is folded but names no wait */
	ck_assert_str_eq(fold(io, 4, &w), "ext4_buffered_write_iter");
	ck_assert_uint_eq(w, SP_WAIT_IO);
	ck_assert_str_eq(ksyms__map_addr(ks, io[3], NULL)->module, "ext4");
}
END_TEST

/*
 * 6.6+: the rt-mutex slow paths sleep through rt_mutex_schedule(), outside __sched text (on
 * PREEMPT_RT, mutexes and rwsems too): folded as the scheduler, the slow path names the wait.
 */
START_TEST(rt_mutex_schedule_outside_sched_text)
{
	uint64_t w[] = { A("__schedule", 1), A("rt_mutex_schedule", 0x20),
			 A("rwbase_write_lock", 0x90), A("open_last_lookups", 0x80),
			 A("path_openat", 1) };
	uint64_t m[] = { A("__schedule", 1), A("rt_mutex_schedule", 0x20),
			 A("rt_mutex_slowlock_block.constprop.0", 0x40), A("mutex_lock", 0x30),
			 A("anon_pipe_read", 0x10) };
	uint64_t before[] = { A("__schedule", 1), A("rt_mutex_pre_schedule", 0x8),
			      A("anon_pipe_read", 0x10) };
	uint64_t after[] = { A("__schedule", 1), A("rt_mutex_post_schedule", 0x8),
			     A("anon_pipe_read", 0x10) };
	__u32 wait;

	ck_assert_str_eq(fold(w, 5, &wait), "open_last_lookups");
	ck_assert_uint_eq(wait, SP_WAIT_RTMUTEX);
	ck_assert_str_eq(fold(m, 5, &wait), "anon_pipe_read");
	ck_assert_uint_eq(wait, SP_WAIT_RTMUTEX);
	/* its neighbours are not folded, nor what lies between it and do_task_dead */
	ck_assert_str_eq(fold(before, 3, &wait), "rt_mutex_pre_schedule");
	ck_assert_uint_eq(wait, SP_WAIT_NONE);
	ck_assert_str_eq(fold(after, 3, &wait), "rt_mutex_post_schedule");
	ck_assert_uint_eq(wait, SP_WAIT_NONE);
}
END_TEST

/* The section ends are exclusive: a frame at __sched_text_end is a caller. */
START_TEST(boundaries)
{
	uint64_t end = 0xffffffff8226b500ULL;
	uint64_t at_end[] = { A("__schedule", 0), end };
	uint64_t last_in[] = { A("__schedule", 0), end - 1, A("path_openat", 0) };
	uint64_t lock_text[] = { A("__schedule", 0), A("_raw_spin_unlock_irqrestore", 4),
				 A("do_exit", 4) };
	uint64_t idle[] = { A("__schedule", 0), A("schedule", 0), A("default_idle", 4),
			    A("cpu_idle_poll", 0x700), A("do_syscall_64", 0) };
	__u32 w;

	ck_assert_str_eq(fold(at_end, 2, &w), "after_sched_fn");
	ck_assert_str_eq(fold(last_in, 3, &w), "path_openat");
	ck_assert_str_eq(fold(lock_text, 3, &w), "do_exit");
	ck_assert_str_eq(fold(idle, 5, &w), "do_syscall_64");
}
END_TEST

START_TEST(unknown)
{
	uint64_t only_sched[] = { A("__schedule", 1), A("schedule", 1) };
	uint64_t no_sched[] = { A("bpf_trace_run4", 1), A("anon_pipe_read", 1) };

	ck_assert_str_eq(fold(only_sched, 2, NULL), "[unknown]");
	ck_assert_str_eq(fold(no_sched, 2, NULL), "[unknown]");
	ck_assert_str_eq(fold(NULL, 0, NULL), "[unknown]");
}
END_TEST

/* A kernel without the scheduler's section bounds cannot be folded: say so. */
START_TEST(missing_sections)
{
	struct ksyms *k = ksyms__load(FIXTURES_DIR "/kallsyms_restricted.txt");
	struct sp_fold_cfg c;

	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(fold_cfg_build(k, &c), -ENOENT);
	ksyms__free(k);
}
END_TEST

/* The boot cache gives back exactly what was stored, and nothing when it is damaged. */
START_TEST(cache_round_trip)
{
	char dir[] = "/tmp/sp-fold-XXXXXX", path[64];
	struct sp_fold_cfg got;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(fold_cfg_cache_load(dir, &got), -ENOENT);
	ck_assert_int_eq(fold_cfg_cache_store(dir, &cfg), 0);
	memset(&got, 0, sizeof(got));
	ck_assert_int_eq(fold_cfg_cache_load(dir, &got), 0);
	ck_assert_mem_eq(&got, &cfg, sizeof(cfg));
	snprintf(path, sizeof(path), "%s/fold.cache", dir);
	f = fopen(path, "r+");
	ck_assert_ptr_nonnull(f);
	fseek(f, 16, SEEK_SET); /* the kernel release */
	fputc('!', f);
	fclose(f);
	ck_assert_int_eq(fold_cfg_cache_load(dir, &got), -ENOENT);
	ck_assert_int_eq(truncate(path, 10), 0);
	ck_assert_int_eq(fold_cfg_cache_load(dir, &got), -ENOENT);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* The waker's function (fold.h sp_wake_fold_step) on a fixture with the wake-up machinery. */
static const char *wake_fold(const struct ksyms *wks, const struct sp_fold_cfg *wcfg,
			     const uint64_t *ips, size_t n)
{
	struct sp_wake_fold_state st = { .function = SP_WAKER_UNKNOWN };
	const struct ksym *s;

	for (size_t i = 0; i < n; i++)
		if (sp_wake_fold_step(&st, wcfg, ips[i]))
			break;
	if (st.function == SP_WAKER_UNKNOWN)
		return "[unknown]";
	if (st.function == SP_WAKER_TIMER)
		return "[timer]";
	s = ksyms__map_addr(wks, st.function, NULL);
	return s ? s->name : "?";
}

START_TEST(wakers)
{
	struct ksyms *wks = ksyms__load(FIXTURES_DIR "/kallsyms_wake.txt");
	struct sp_fold_cfg wcfg;
#define W(n, o) (ksyms__get(wks, n)->addr + (o))

	ck_assert_ptr_nonnull(wks);
	ck_assert_int_eq(fold_cfg_build(wks, &wcfg), 0);
	/* try_to_wake_up .. default_wake_function: one range over the __pfx_ padding; then
	 * __wake_up_common .. autoremove_wake_function; __wake_up_parent .. child_wait_callback */
	ck_assert_uint_eq(wcfg.nr_wake_ranges, 3);
	ck_assert_uint_eq(wcfg.wake_ranges[0].start, W("try_to_wake_up", 0));
	ck_assert_uint_eq(wcfg.wake_ranges[0].end, W("push_cpu_stop", 0));
	ck_assert_uint_eq(wcfg.nr_timer_ranges, 1); /* hrtimer_wakeup and __run_hrtimer */
	{
		/* a pipe write */
		uint64_t st[] = { W("bpf_trace_run1", 0x40), W("__bpf_trace_sched_waking", 8),
				  W("try_to_wake_up", 0x100), W("default_wake_function", 4),
				  W("autoremove_wake_function", 8), W("__wake_up_common", 0x40),
				  W("__wake_up_sync_key", 0x20), W("anon_pipe_write", 0x200),
				  W("ksys_write", 0x40) };
		/* a child's exit */
		uint64_t ex[] = { W("bpf_trace_run1", 0x40), W("try_to_wake_up", 0x100),
				  W("default_wake_function", 4), W("child_wait_callback", 8),
				  W("__wake_up_common", 0x40), W("__wake_up_sync_key", 0x20),
				  W("__wake_up_parent", 0x10), W("do_notify_parent", 0x100),
				  W("do_exit", 0x300) };
		/* a nanosleep's hrtimer, in hardirq */
		uint64_t tm[] = { W("bpf_trace_run1", 0x40), W("try_to_wake_up", 0x100),
				  W("hrtimer_wakeup", 0x10), W("__run_hrtimer", 0x80),
				  W("hrtimer_interrupt", 0x100) };
		/* a timer dispatcher further up: a timer's wake-up through other code */
		uint64_t tq[] = { W("try_to_wake_up", 0x100), W("do_notify_parent", 0x10),
				  W("__run_hrtimer", 0x80) };
		/* never left the machinery, or never entered it */
		uint64_t in[] = { W("bpf_trace_run1", 0x40), W("try_to_wake_up", 0x100) };
		uint64_t out[] = { W("anon_pipe_write", 0x10), W("ksys_write", 0x40) };

		ck_assert_str_eq(wake_fold(wks, &wcfg, st, 9), "anon_pipe_write");
		ck_assert_str_eq(wake_fold(wks, &wcfg, ex, 9), "do_notify_parent");
		ck_assert_str_eq(wake_fold(wks, &wcfg, tm, 5), "[timer]");
		ck_assert_str_eq(wake_fold(wks, &wcfg, tq, 3), "[timer]");
		ck_assert_str_eq(wake_fold(wks, &wcfg, in, 2), "[unknown]");
		ck_assert_str_eq(wake_fold(wks, &wcfg, out, 2), "[unknown]");
	}
#undef W
	ksyms__free(wks);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fold");
	TCase *tc = tcase_create("fold");

	tcase_add_checked_fixture(tc, fixture_load, fixture_free);
	tcase_add_test(tc, sections);
	tcase_add_test(tc, pipe_reader);
	tcase_add_test(tc, rwsem_write);
	tcase_add_test(tc, mutex_and_read);
	tcase_add_test(tc, percpu_outside_sched_text);
	tcase_add_test(tc, exit_and_io);
	tcase_add_test(tc, rt_mutex_schedule_outside_sched_text);
	tcase_add_test(tc, boundaries);
	tcase_add_test(tc, unknown);
	tcase_add_test(tc, missing_sections);
	tcase_add_test(tc, cache_round_trip);
	tcase_add_test(tc, wakers);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
