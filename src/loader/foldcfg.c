// SPDX-License-Identifier: BSD-2-Clause
/*
 * The folding configuration: the scheduler, locking and cpuidle text sections, the
 * sleeping-lock slow paths (by name, so the row can say which kind of lock it slept on)
 * and io_schedule*(). Used by every view that folds kernel stacks to a caller.
 */
#include <errno.h>
#include <string.h>
#include "loader/cache.h"
#include "loader/foldcfg.h"
#include "symbols/ksyms.h"
#include "base/util.h"

/* Innermost sleeping-lock slow paths by name; a prefix ends with '*'. */
static const struct {
	const char *name;
	enum sp_wait wait;
} lock_funcs[] = {
	{ "rwsem_down_read_slowpath", SP_WAIT_RWSEM_READ },
	{ "rwsem_down_write_slowpath", SP_WAIT_RWSEM_WRITE },
	{ "__mutex_lock*", SP_WAIT_MUTEX },
	{ "__ww_mutex_lock*", SP_WAIT_MUTEX },
	{ "mutex_lock_io*", SP_WAIT_MUTEX },
	{ "__down_common*", SP_WAIT_SEMAPHORE },
	{ "rt_mutex_slowlock*", SP_WAIT_RTMUTEX },
	{ "__rt_mutex_slowlock*", SP_WAIT_RTMUTEX },
	/* PREEMPT_RT: spinlock_t and rwlock_t (rtlock), a writer waiting for an rwsem's readers */
	{ "rtlock_slowlock*", SP_WAIT_RTMUTEX },
	{ "rwbase_write_lock*", SP_WAIT_RTMUTEX },
	{ "__rwbase_read_lock*", SP_WAIT_RTMUTEX },
	{ "percpu_rwsem_wait*", SP_WAIT_PERCPU_RWSEM },
	{ "__percpu_down_read*", SP_WAIT_PERCPU_RWSEM },
	{ "percpu_down_write*", SP_WAIT_PERCPU_RWSEM },
	/*
	 * Call __schedule() themselves from outside __sched text: do_task_dead (the caller is
	 * do_exit), and rt_mutex_schedule (6.6+: the rt-mutex slow paths' schedule(), and on
	 * PREEMPT_RT every mutex's and rwsem's; its caller is the slow path)
	 */
	{ "do_task_dead", SP_WAIT__FOLD },
	{ "rt_mutex_schedule", SP_WAIT__FOLD },
};

static int lock_func_wait(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(lock_funcs); i++)
		if (name_matches(name, lock_funcs[i].name))
			return lock_funcs[i].wait;
	return -1;
}

/* Collects the slow-path ranges, merging near neighbours of one kind (few slots in BPF). */
static int find_lock_ranges(const struct ksyms *ks, struct sp_lock_range *r, unsigned int max)
{
	unsigned int n = 0;

	for (size_t i = 0; i < ksyms__count(ks); i++) {
		struct ksym sym, *s = &sym;
		int w;

		ksyms__sym(ks, i, s);
		if (s->module || !strchr("tTwW", s->type))
			continue;
		w = lock_func_wait(s->name);
		if (w < 0)
			continue;
		/* a folded helper is that function alone: its neighbours are callers */
		if (n && r[n - 1].wait == (unsigned int)w && w != SP_WAIT__FOLD &&
		    s->addr <= r[n - 1].end + 0x200) {
			if (s->addr + s->size > r[n - 1].end)
				r[n - 1].end = s->addr + s->size;
			continue;
		}
		if (n == max) {
			continue; /* more slow paths than slots: the rest are not classified */
		}
		r[n].start = s->addr;
		r[n].end = s->addr + s->size;
		r[n].wait = w;
		n++;
	}
	return n;
}

/*
 * The wake-up machinery: what lies between the code that decided to wake a task and
 * try_to_wake_up(), folded away to name the waker's function (a prefix ends with '*').
 * Wait-queue walks and their wake functions, completions, wake_q (futex, rwsem, mutex
 * unlocks), bit and var waits, signal delivery (SIGCHLD from exit_notify), poll and epoll
 * callbacks (a wake through epoll is named by the code that woke the file), and the queueing
 * of work items (a kworker is woken by the code that queued the work).
 */
static const char *const wake_funcs[] = {
	"try_to_wake_up", "wake_up_process", "wake_up_state", "wake_up_q", "wake_q_add*",
	"default_wake_function", "autoremove_wake_function", "woken_wake_function",
	"__wake_up*", "wake_up_bit", "wake_up_var", "wake_bit_function", "var_wake_function",
	"wake_page_function", "child_wait_callback", "pollwake", "ep_poll_callback",
	"ep_autoremove_wake_function", "kick_pool", "insert_work", "__queue_work",
	"queue_work_on", "mod_delayed_work_on", "queue_delayed_work_on",
	"complete", "complete_all", "complete_on_current_cpu", "swake_up*",
	"signal_wake_up_state", "complete_signal", "__send_signal_locked", "send_signal_locked",
	"rwsem_wake*", "rwsem_mark_wake*", "folio_wake_bit", "__mutex_unlock_slowpath*", "__up", "up",
	"rt_mutex_slowunlock", "rt_mutex_postunlock",
};

/* Timer callbacks that wake, and the timer dispatchers: a wake-up under one is "[timer]". */
static const char *const timer_funcs[] = {
	"hrtimer_wakeup", "process_timeout", "timerfd_tmrproc", "posix_timer_fn", "it_real_fn",
	"call_timer_fn*", "__run_hrtimer",
};

static bool name_in(const char *name, const char *const *pats, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (name_matches(name, pats[i]))
			return true;
	return false;
}

/*
 * The ranges of the symbols named in pats, a run of neighbours (no other function between
 * them in kallsyms: the __pfx_ padding symbols of CONFIG_CALL_PADDING do not count) as one
 * range. Returns how many, at most max; *ret_over counts those left out.
 */
static unsigned int find_ranges(const struct ksyms *ks, const char *const *pats, size_t npats,
				struct sp_range *r, unsigned int max, unsigned int *ret_over)
{
	unsigned int n = 0;
	bool open = false;

	*ret_over = 0;
	for (size_t i = 0; i < ksyms__count(ks); i++) {
		struct ksym sym, *s = &sym;

		ksyms__sym(ks, i, s);
		if (s->module || !strchr("tTwW", s->type) || !strncmp(s->name, "__pfx_", 6))
			continue;
		if (!name_in(s->name, pats, npats)) {
			/* an alias inside the range does not end the run */
			if (!n || s->addr >= r[n - 1].end)
				open = false;
			continue;
		}
		if (open) {
			if (s->addr + s->size > r[n - 1].end)
				r[n - 1].end = s->addr + s->size;
			continue;
		}
		if (n == max) {
			(*ret_over)++;
			open = false;
			continue;
		}
		r[n].start = s->addr;
		r[n].end = s->addr + s->size;
		n++;
		open = true;
	}
	return n;
}

/* The waker-folding part of cfg (wake and timer ranges). */
static void build_wake_ranges(const struct ksyms *ks, struct sp_fold_cfg *cfg)
{
	unsigned int over;

	cfg->nr_wake_ranges = find_ranges(ks, wake_funcs, ARRAY_SIZE(wake_funcs),
					  cfg->wake_ranges, SP_MAX_WAKE_RANGES, &over);
	cfg->nr_timer_ranges = find_ranges(ks, timer_funcs, ARRAY_SIZE(timer_funcs),
					   cfg->timer_ranges, SP_MAX_TIMER_RANGES, &over);
}

int fold_cfg_build(const struct ksyms *ks, struct sp_fold_cfg *cfg)
{
	static const char *const sect[3][2] = {
		{ "__sched_text_start", "__sched_text_end" },
		{ "__lock_text_start", "__lock_text_end" },
		{ "__cpuidle_text_start", "__cpuidle_text_end" },
	};
	const struct ksym *s;

	memset(cfg, 0, sizeof(*cfg));
	for (int i = 0; i < 3; i++) {
		uint64_t a = 0, b = 0;

		/* only the scheduler's section is required; older kernels lack the others */
		if (ksyms__range(ks, sect[i][0], sect[i][1], &a, &b) && i == 0)
			return -ENOENT;
		cfg->text_start[i] = a;
		cfg->text_end[i] = b;
	}
	cfg->nr_lock_ranges = find_lock_ranges(ks, cfg->lock_ranges, SP_MAX_LOCK_RANGES);
	for (int i = 0; i < 2; i++) {
		s = ksyms__get(ks, i ? "io_schedule_timeout" : "io_schedule");
		if (s) {
			cfg->io_start[i] = s->addr;
			cfg->io_end[i] = s->addr + s->size;
		}
	}
	build_wake_ranges(ks, cfg);
	return 0;
}


int fold_cfg_cache_load(const char *dir, struct sp_fold_cfg *cfg)
{
	struct sp_fold_cfg got;
	int err = cache_load_fixed(dir, CACHE_FOLD, &got, sizeof(got));

	if (err)
		return err;
	if (!got.text_start[0] || got.nr_lock_ranges > SP_MAX_LOCK_RANGES ||
	    got.nr_wake_ranges > SP_MAX_WAKE_RANGES || got.nr_timer_ranges > SP_MAX_TIMER_RANGES)
		return -ENOENT;
	*cfg = got;
	return 0;
}

int fold_cfg_cache_store(const char *dir, const struct sp_fold_cfg *cfg)
{
	return cache_store(dir, CACHE_FOLD, cfg, sizeof(*cfg));
}
