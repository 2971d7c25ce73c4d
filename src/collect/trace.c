// SPDX-License-Identifier: BSD-2-Clause
/*
 * `schedprof trace`: load and attach the collectors of the selected views (options: trace_cli.c),
 * follow the target until it ends (or -d, SIGINT, SIGTERM, SIGHUP), then detach, read and render.
 * Every exit path after attach still prints the report collected so far.
 *
 * The launched command (-- COMMAND) lives as long as the trace: a stop signal is passed on to
 * it and the trace waits for its end (a second signal sends SIGTERM, a third SIGKILL); it dies
 * with schedprof, even by kill -9 (PR_SET_PDEATHSIG), except after -d without --kill-on-end,
 * where it is left running on purpose.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/exitcode.h"
#include "loader/attach_ids.h"
#include "loader/bootcache.h"
#include "collect/collector.h"
#include "loader/corebtf.h"
#include "loader/foldcfg.h"
#include "loader/featprobe.h"
#include "loader/prog_budget.h"
#include "loader/kfeatures.h"
#include "symbols/ksyms.h"
#include "base/log.h"
#include "loader/maps.h"
#include "collect/preflight.h"
#include "loader/refusal.h"
#include "model/run_delta.h"
#include "model/view.h"
#include "collect/target.h"
#include "collect/trace.h"
#include "base/util.h"
#include "schedprof/schedprof.h"
#include "schedprof.skel.h"

static const struct collector *const collectors[] = {
	&sched_collector,
	&profile_collector,
	&lock_collector,
	&timeline_collector, /* after sched: it turns sp_switch's schedules part on */
};

/* The first stop signal, whether the terminal sent it (to the whole process group), and how many */
static volatile sig_atomic_t stop_signal, stop_by_tty, stop_count;

/* Shown at the default level, without "warning:": what happens to the user's command, and -d's. */
#define notice(...) log_msg(LOG_ERROR, __VA_ARGS__)

/* What the verifier refused at the last load (libbpf says it whatever the log level). */
static struct refusal load_refusal;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (refusal_wants(fmt)) {
		char *msg = NULL;
		va_list aq;

		va_copy(aq, ap);
		if (vasprintf(&msg, fmt, aq) >= 0)
			refusal_feed(&load_refusal, msg);
		va_end(aq);
		free(msg);
	}
	return log_libbpf((int)level, fmt, ap);
}

static void on_signal(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	if (!stop_signal) {
		stop_signal = sig;
		stop_by_tty = si && si->si_code == SI_KERNEL;
	}
	stop_count++;
}

struct tracer {
	struct trace_ctx ctx;
	struct schedprof_bpf *skel;
	void *state[ARRAY_SIZE(collectors)];
	struct bpf_link *fork_link, *exit_link, *exec_link;
	struct bpf_link *switch_link; /* the one sched_switch program, shared by the views */
	struct sp_features features;
	int targ_tgids_fd;
	struct target_launch launch;
	struct target_user user; /* whom the command runs as */
	struct target_cgroup cgroup; /* --cgroup, resolved */
	const struct trace_sink *sink; /* where the run goes */
	FILE *out;	/* its stream, for the intervals (open: out != NULL) */
	bool launched, reaped;
	bool left_running; /* -d ended the trace, not the command */
	uint64_t still_running; /* the command's processes alive when it was reaped */
	bool ended_at_end; /* -d with --kill-on-end ended the command */
	int status;
	struct rusage ru;
	/* kallsyms is read on a thread while libbpf parses BTF and loads (both ~0.1 s) */
	pthread_t ksyms_thread;
	bool ksyms_started;
	bool fold_cached; /* fold configuration from the boot's cache: no need to wait */
	int ksyms_err;
	bool ksyms_warned; /* kallsyms gives no addresses, and the start-up said so */
	/*
	 * Per collector: why its view is left out after the verifier refused one of its
	 * programs ("" while it is not); the object is opened again without it.
	 */
	char refused[ARRAY_SIZE(collectors)][320];
	bool reopened; /* tracer_open() ran before: what it reported once is not repeated */
	struct core_btf core_btf; /* CO-RE relocates against it (corebtf.h), open until loaded */
	/* -i: the hooks, the cumulative run at the last interval's end, and where it ended */
	const struct trace_hooks *hooks;
	struct sp_run iv_prev;
	uint64_t iv_index, iv_end; /* iv_end: ns since the start */
	struct sp_delta_stats iv_stats; /* what did not subtract, over every interval */
	uint64_t t0, wall0;
	int iv_err;
	bool budget; /* the verifier budget's one program loaded (prog_budget.h): done */
};

static int add_target(struct tracer *t, int pid)
{
	struct sp_target v = { .live = 1 };
	__u32 key = pid;

	if (bpf_map_update_elem(t->targ_tgids_fd, &key, &v, BPF_ANY))
		return -errno;
	/* It may have exited before it was added: then nothing would ever remove it. */
	if (!target_pid_alive(pid))
		bpf_map_delete_elem(t->targ_tgids_fd, &key);
	return 0;
}

/*
 * Drops the tgids that the exit hook retired (their pid may be reused already), and with
 * check_proc those that exited without it seeing them; true while any is left.
 */
static bool targets_gc(struct tracer *t, bool check_proc)
{
	struct sp_records tgids;
	bool any = false;

	/* a dump that fails says nothing: the targets are taken as alive */
	if (map_dump(t->targ_tgids_fd, &tgids) || tgids.failed)
		any = true;
	for (size_t i = 0; i < tgids.n; i++) {
		const __u32 *key = sp_records_key(&tgids, i);
		const struct sp_target *v = sp_records_value(&tgids, i);

		if (v->live && (!check_proc || target_pid_alive((pid_t)*key)))
			any = true;
		else
			bpf_map_delete_elem(t->targ_tgids_fd, key);
	}
	sp_records_free(&tgids);
	return any;
}

/* The traced processes but the reaped command that are alive: what its end leaves running. */
static uint64_t targets_left(struct tracer *t)
{
	struct sp_records tgids;
	uint64_t n = 0;

	if (!map_dump(t->targ_tgids_fd, &tgids) && !tgids.failed) {
		for (size_t i = 0; i < tgids.n; i++) {
			const __u32 *key = sp_records_key(&tgids, i);
			const struct sp_target *v = sp_records_value(&tgids, i);

			if (v->live && (pid_t)*key != t->launch.pid && target_pid_alive((pid_t)*key))
				n++;
		}
	}
	sp_records_free(&tgids);
	return n;
}

static bool targets_alive(struct tracer *t)
{
	return targets_gc(t, true);
}

/*
 * -t: is any of the threads alive? A thread the exit hook saw is dead; one found gone in /proc
 * (it exited before the hook was attached) is marked dead in the map too.
 */
static bool tids_alive(struct tracer *t, const struct trace_config *o)
{
	int fd = bpf_map__fd(t->skel->maps.targ_tids);
	bool any = false;

	for (size_t i = 0; i < o->npids; i++) {
		struct sp_target v = {};
		__u32 key = o->pids[i];

		if (bpf_map_lookup_elem(fd, &key, &v) || !v.live)
			continue;
		if (target_tid_alive(o->pids[i])) {
			any = true;
		} else {
			v.live = 0;
			bpf_map_update_elem(fd, &key, &v, BPF_EXIST);
		}
	}
	return any;
}

/* -t: the threads into the map (before the attach: none of their switches is missed). */
static int add_tids(struct tracer *t, const struct trace_config *o)
{
	int fd = bpf_map__fd(t->skel->maps.targ_tids);

	for (size_t i = 0; i < o->npids; i++) {
		struct sp_target v = { .live = 1 };
		__u32 key = o->pids[i];

		if (bpf_map_update_elem(fd, &key, &v, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* -t, after the attach: a thread that exited meanwhile is said; none left is an error. */
static int check_tids_attached(struct tracer *t, const struct trace_config *o)
{
	if (!tids_alive(t, o)) {
		if (o->npids == 1)
			elog("thread %d exited before tracing began: nothing was traced", o->pids[0]);
		else
			elog("every target thread exited before tracing began: nothing was traced");
		return -ESRCH;
	}
	for (size_t i = 0; i < o->npids; i++)
		if (!target_tid_alive(o->pids[i]))
			wlog("thread %d exited before tracing began", o->pids[i]);
	return 0;
}

static int attach_pids(struct tracer *t, const struct trace_config *o)
{
	int *all = NULL, err;
	size_t n = 0;

	/* Twice: a child forked by a not-yet-added parent during the first walk is caught. */
	for (int pass = 0; pass < 2; pass++) {
		err = target_descendants(o->pids, o->npids, &all, &n);
		if (err)
			return err;
		for (size_t i = 0; i < n && !err; i++)
			err = add_target(t, all[i]);
		free(all);
		if (err == -E2BIG || err == -ENOSPC) {
			elog("more than %u processes to attach to: raise --max-targets", o->max_targets);
			return err;
		}
		if (err)
			return err;
		dlog("pass %d: %zu processes in the target tree", pass, n);
	}
	return 0;
}

static void *ksyms_loader(void *arg)
{
	struct tracer *t = arg;

	struct sp_fold_cfg cfg;

	t->ctx.ksyms = ksyms__load(NULL);
	t->ksyms_err = t->ctx.ksyms ? 0 : -errno;
	if (t->fold_cached || !t->ctx.ksyms || ksyms__restricted(t->ctx.ksyms))
		return NULL;
	t->ctx.fold_err = fold_cfg_build(t->ctx.ksyms, &cfg);
	if (t->ctx.fold_err)
		return NULL;
	t->ctx.fold_cfg = cfg;
	if (fold_cfg_cache_store(NULL, &cfg))
		dlog("cannot cache the fold configuration in /run/schedprof");
	return NULL;
}

static int ksyms_join(struct tracer *t)
{
	if (!t->ksyms_started)
		return -ESRCH;
	pthread_join(t->ksyms_thread, NULL);
	t->ksyms_started = false;
	/* no kernel symbols: the report shows addresses, it is not lost */
	if (t->ksyms_err || ksyms__restricted(t->ctx.ksyms)) {
		char why[192] = "kernel addresses in /proc/kallsyms are hidden: ";

		if (t->ksyms_warned)
			return 0; /* said before anything started (preflight_kallsyms) */
		preflight_kallsyms_why(why + strlen(why), sizeof(why) - strlen(why));
		if (t->ksyms_err)
			snprintf(why, sizeof(why), "cannot read /proc/kallsyms: %s",
				 strerror(-t->ksyms_err));
		/* without the boot's fold cache, nothing tells where the scheduler's text is */
		wlog("%s: kernel functions are shown as addresses%s", why,
		     t->fold_cached ? "" : ", and the callers of schedule() and locks as [unknown]");
		return 0;
	}
	if (t->ctx.fold_err) {
		elog("kernel symbols __sched_text_start/__sched_text_end not found in /proc/kallsyms");
		return t->ctx.fold_err;
	}
	return 0;
}

static int ksyms_start(struct tracer *t)
{
	int err = pthread_create(&t->ksyms_thread, NULL, ksyms_loader, t);

	if (err) {
		elog("cannot start a thread to read /proc/kallsyms: %s", strerror(err));
		return -err;
	}
	t->ksyms_started = true;
	return 0;
}

static void tracer_destroy(struct tracer *t)
{
	if (t->ksyms_started)
		pthread_join(t->ksyms_thread, NULL);
	bpf_link__destroy(t->fork_link);
	bpf_link__destroy(t->exit_link);
	bpf_link__destroy(t->exec_link);
	bpf_link__destroy(t->switch_link);
	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++)
		if (t->state[i])
			collectors[i]->destroy(t->state[i]);
	schedprof_bpf__destroy(t->skel);
	core_btf_close(&t->core_btf);
	ksyms__free(t->ctx.ksyms);
	target_user_free(&t->user);
}

static double ms_since(uint64_t t0)
{
	return (now_ns(CLOCK_MONOTONIC) - t0) / 1e6;
}

/* For tests: a BTF file to look for the lock tracepoints in, instead of the running kernel's. */
#define LOCK_BTF_ENV "SCHEDPROF_LOCK_BTF"
/* For tests: "0" relocates against the kernel's whole BTF, not the boot's CO-RE BTF. */
#define CORE_BTF_ENV "SCHEDPROF_CORE_BTF"
/* For tests: milliseconds to hold the command before its exec (the lifecycle test kills then). */
#define HOLD_ENV "SCHEDPROF_TEST_HOLD_MS"

/* The kernel features (kfeatures.h) each view's programs need. */
static unsigned int view_needs(unsigned int view, const struct trace_config *o)
{
	switch (view) {
	case SP_VIEW_SCHED:
		return SP_FEAT(SP_FEAT_SWITCH_TP) | SP_FEAT(SP_FEAT_LOOP);
	case SP_VIEW_PROFILE: /* bpf_loop() only hashes the -g stacks */
		return SP_FEAT(SP_FEAT_RINGBUF) | (o->callchains ? SP_FEAT(SP_FEAT_LOOP) : 0);
	case SP_VIEW_LOCKS:
		return SP_FEAT(SP_FEAT_LOCK_TP) | SP_FEAT(SP_FEAT_SWITCH_TP) | SP_FEAT(SP_FEAT_LOOP);
	case SP_VIEW_TIMELINE:
		return SP_FEAT(SP_FEAT_RINGBUF) | SP_FEAT(SP_FEAT_SWITCH_TP) | SP_FEAT(SP_FEAT_LOOP);
	}
	return 0;
}

/*
 * The kernel's features, probed once per boot (featprobe.h); 0, or -ENOTSUP when nothing can
 * run on it.
 */
static int probe_features(struct tracer *t)
{
	const char *lock_btf = getenv(LOCK_BTF_ENV);
	struct sp_features lf;
	char line[160];
	int err, miss;

	err = featprobe_get(&t->features);
	if (err)
		return err;
	if (lock_btf && *lock_btf) {
		err = kfeatures_probe_file(lock_btf, &lf);
		if (err)
			dlog("cannot read %s: %s", lock_btf, strerror(-err));
		t->features.has[SP_FEAT_LOCK_TP] = !err && lf.has[SP_FEAT_LOCK_TP];
	}
	/* the traced-task set and the tracepoints, which every view uses */
	miss = kfeatures_first_missing(&t->features, SP_FEAT(SP_FEAT_TP_BTF) |
						     SP_FEAT(SP_FEAT_TRUSTED_TASK) |
						     SP_FEAT(SP_FEAT_TASK_STORAGE));
	if (miss >= 0) {
		kfeatures_describe(miss, line, sizeof(line));
		elog("%s", line);
		return -ENOTSUP;
	}
	return 0;
}

/*
 * The ways the programs take by the kernel's features (rodata, before load): the faster one
 * where the probe found the feature, else the older one.
 */
static void apply_features(struct schedprof_bpf *skel, const struct sp_features *f)
{
	/* the user stacks read the task's process once through an untrusted pointer */
	skel->rodata->ustack_untrusted = f->has[SP_FEAT_ARG_UNTRUSTED];
	dlog("user stacks: the task's mm and group leader read through %s task pointer",
	     f->has[SP_FEAT_ARG_UNTRUSTED] ? "an untrusted" : "the trusted");
}

/* One line per missing feature, naming the views it stops: "...: no schedules, locks views". */
static void report_unavailable(const char names[SP_FEAT__MAX][64])
{
	char line[160];

	for (int f = 0; f < SP_FEAT__MAX; f++) {
		if (!names[f][0])
			continue;
		kfeatures_describe(f, line, sizeof(line));
		wlog("%s: no %s view%s", line, names[f], strchr(names[f], ',') ? "s" : "");
	}
}

/*
 * Opens the skeleton to relocate against the boot's CO-RE BTF (corebtf.h): libbpf's candidate
 * search over the kernel's whole BTF is most of the load's time. Without it, the whole BTF.
 */
static struct schedprof_bpf *open_object(struct tracer *t)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	const char *env = getenv(CORE_BTF_ENV);
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	const void *elf;
	size_t size;
	int err;

	if (env && !strcmp(env, "0"))
		return schedprof_bpf__open();
	elf = schedprof_bpf__elf_bytes(&size);
	err = core_btf_open(NULL, elf, size, NULL, &t->core_btf);
	if (err) {
		dlog("no CO-RE BTF (%s): relocating against the kernel's whole BTF", strerror(-err));
		core_btf_close(&t->core_btf);
		return schedprof_bpf__open();
	}
	dlog("CO-RE BTF %s in %.1f ms", t->core_btf.made ? "made and cached" : "from the boot's cache",
	     ms_since(t0));
	opts.btf_custom_path = t->core_btf.path;
	return schedprof_bpf__open_opts(&opts);
}

/*
 * The build of the one sched_switch program to load (bpf/sched.bpf.c): with the schedules
 * view's full walks when stacks are kept, else with the timeline's part when it is on.
 */
static struct bpf_program *switch_prog(struct schedprof_bpf *skel)
{
	if (skel->rodata->switch_sched && !skel->rodata->caller_fast)
		return skel->progs.sp_switch_full;
	if (skel->rodata->switch_timeline)
		return skel->progs.sp_switch_tl;
	return skel->progs.sp_switch;
}

/*
 * Opens the BPF object: the selected views' collectors configure it, the others disable theirs.
 * A view the kernel cannot run is reported (by its collector's state, or not at all when it
 * has none) and the others run.
 */
static int tracer_open(struct tracer *t, const struct trace_config *o)
{
	char names[SP_FEAT__MAX][64] = {}; /* the views each missing feature stops */
	struct schedprof_bpf *skel;
	bool any = false, sw_on, no_tgids;
	int err;

	/* reopened without a refused program: the features are the same */
	err = t->reopened ? 0 : probe_features(t);
	if (err)
		return err;
	skel = t->skel = open_object(t);
	if (!skel)
		return -errno;
	t->ctx.skel = skel;
	t->ctx.features = &t->features;
	apply_features(skel, &t->features);
	skel->rodata->targ_all = o->mode == SP_TARGET_ALL || o->all;
	/* -a -- COMMAND: the schedules and locks count every task, the profile's target is the job */
	skel->rodata->targ_all_cmd = o->all && o->mode == SP_TARGET_COMMAND;
	/*
	 * -a, --cgroup and -t add no tgid (nor does any program they load): a preallocated map
	 * of --max-targets entries would only cost its allocation at the start
	 */
	no_tgids = o->mode == SP_TARGET_ALL || o->mode == SP_TARGET_CGROUP ||
		   o->mode == SP_TARGET_TIDS;
	bpf_map__set_max_entries(skel->maps.targ_tgids, no_tgids ? 1 : o->max_targets);
	if (o->mode == SP_TARGET_CGROUP) {
		skel->rodata->targ_cgid = t->cgroup.id;
		skel->rodata->targ_cg_level = t->cgroup.level;
	}
	/* -t: the threads only; their exits end the trace */
	if (o->mode == SP_TARGET_TIDS) {
		skel->rodata->targ_tids_on = 1;
		bpf_map__set_max_entries(skel->maps.targ_tids, o->npids);
		bpf_program__set_autoload(skel->progs.sp_fork, false);
	}
	/* -a and --cgroup follow no fork: the set is every task, or the cgroup's at each event */
	if (o->mode == SP_TARGET_ALL || o->mode == SP_TARGET_CGROUP) {
		bpf_program__set_autoload(skel->progs.sp_fork, false);
		bpf_program__set_autoload(skel->progs.sp_exit, false);
	}
	/* the command joins the traced set at its exec (sp_exec), not at its fork */
	if (o->mode != SP_TARGET_COMMAND)
		bpf_program__set_autoload(skel->progs.sp_exec, false);
	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++) {
		const struct collector *c = collectors[i];
		int miss = kfeatures_first_missing(&t->features, view_needs(c->view->bit, o));
		char why[160];

		if (!(o->views & c->view->bit)) {
			c->disable(skel);
			continue;
		}
		if (miss >= 0) {
			kfeatures_describe(miss, why, sizeof(why));
			snprintf(names[miss] + strlen(names[miss]), sizeof(names[miss]) - strlen(names[miss]),
				 "%s%s", names[miss][0] ? ", " : "", c->view->name);
		}
		/* a view whose program the verifier refused at an earlier load: out, said (leave_out_refused()) */
		t->ctx.unavailable = miss >= 0 ? why : t->refused[i][0] ? t->refused[i] : NULL;
		err = c->configure(&t->ctx, &t->state[i]);
		if (err == -ENOTSUP && t->ctx.unavailable) {
			t->ctx.unavailable = NULL;
			c->destroy(t->state[i]);
			t->state[i] = NULL;
			c->disable(skel);
			continue;
		}
		any |= !err && !t->refused[i][0];
		t->ctx.unavailable = NULL;
		if (err)
			return err;
	}
	if (!t->reopened)
		report_unavailable(names);
	t->reopened = true;
	if (!any) {
		elog("none of the selected views can run on this kernel");
		return -ENOTSUP;
	}
	/* the parts of sp_switch are switched on by the views' configure; one build is loaded */
	sw_on = skel->rodata->switch_sched || skel->rodata->switch_locks;
	bpf_program__set_autoload(skel->progs.sp_switch, false);
	bpf_program__set_autoload(skel->progs.sp_switch_tl, false);
	bpf_program__set_autoload(skel->progs.sp_switch_full, false);
	bpf_program__set_autoload(switch_prog(skel), sw_on);
	/*
	 * each CPU's runqueue, for the preempt count (preempt_count_setup(): some view's), and
	 * its lock, for the locks view's names
	 */
	bpf_program__set_autoload(skel->progs.sp_cpu_probe,
				  skel->rodata->has_preempt_rq_off || skel->rodata->switch_locks);
	return 0;
}

/*
 * Runs sp_cpu_probe on each CPU (bpf/common.bpf.c): its runqueue's address into sp_cpu_rq,
 * so the preempt count is read without a pointer chase (bpf/compat.bpf.h), and its lock's
 * into sp_cpu_rq_lock (lock.c names it). A CPU it cannot run on (offline) is read through
 * current when it comes up, and its runqueue lock is not named.
 */
static void probe_cpu_rqs(struct tracer *t)
{
	int fd = bpf_program__fd(t->skel->progs.sp_cpu_probe), found = 0, locks = 0;

	if (!bpf_program__autoload(t->skel->progs.sp_cpu_probe) || fd < 0)
		return;
	for (int cpu = 0; cpu < t->ctx.ncpus && cpu < SP_MAX_CPUS; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);

		if (bpf_prog_test_run_opts(fd, &opts)) {
			dlog("runqueue of CPU %d not found: %s", cpu, strerror(errno));
			continue;
		}
		found += t->skel->bss->sp_cpu_rq[cpu] != 0;
		locks += t->skel->bss->sp_cpu_rq_lock[cpu] != 0;
	}
	dlog("runqueues found for %d of %d CPUs, their locks for %d", found, t->ctx.ncpus, locks);
}

/* For tests: a program to have the verifier refuse (loaded as a socket filter, it cannot be). */
#define REFUSE_ENV "SCHEDPROF_TEST_REFUSE"

static void test_refuse(struct schedprof_bpf *skel)
{
	const char *name = getenv(REFUSE_ENV);
	struct bpf_program *p = name && *name ? bpf_object__find_program_by_name(skel->obj, name)
					      : NULL;

	if (p)
		bpf_program__set_type(p, BPF_PROG_TYPE_SOCKET_FILTER);
}

/*
 * The collector whose view owns program `name`, or -1 (the programs every view shares). The
 * sched_switch builds hold every view's part: the first selected view that is still in.
 * Told on a fresh copy of the object (after a load, even a failed one, libbpf changes no
 * autoload flag): the program is the view's when its disable() turns the program off.
 */
static int refused_owner(struct tracer *t, const char *name)
{
	struct schedprof_bpf *skel;
	struct bpf_program *p;
	int owner = -1;

	if (!strcmp(name, bpf_program__name(t->skel->progs.sp_switch)) ||
	    !strcmp(name, bpf_program__name(t->skel->progs.sp_switch_tl)) ||
	    !strcmp(name, bpf_program__name(t->skel->progs.sp_switch_full))) {
		for (size_t i = 0; i < ARRAY_SIZE(collectors); i++)
			if (t->state[i] && !t->refused[i][0] && collectors[i] != &profile_collector)
				return (int)i;
		return -1;
	}
	skel = schedprof_bpf__open();
	p = skel ? bpf_object__find_program_by_name(skel->obj, name) : NULL;
	for (size_t i = 0; p && i < ARRAY_SIZE(collectors) && owner < 0; i++) {
		if (!t->state[i] || t->refused[i][0])
			continue;
		bpf_program__set_autoload(p, true);
		collectors[i]->disable(skel);
		if (!bpf_program__autoload(p))
			owner = (int)i;
	}
	schedprof_bpf__destroy(skel);
	return owner;
}

/*
 * After the verifier refused a program (load_refusal): its view is left out, in one line
 * naming the program and the verifier's error, and the object is closed for tracer_open()
 * to open again without it. -err when the program is one every view needs.
 */
static int leave_out_refused(struct tracer *t, int err)
{
	/* without a log the load failed before the verifier ran (its attach target, its type) */
	bool verifier = load_refusal.line[0];
	const char *vv = log_get_level() < LOG_LIBBPF ? " (-vv shows its log)" : "";
	int owner = refused_owner(t, load_refusal.prog);
	char why[sizeof(t->refused[0])];

	snprintf(why, sizeof(why), "the kernel%s refused program %s: %s",
		 verifier ? "'s verifier" : "", load_refusal.prog,
		 verifier ? load_refusal.line : strerror(-err));
	if (owner < 0) {
		elog("%s%s", why, vv);
		return err;
	}
	snprintf(t->refused[owner], sizeof(t->refused[owner]), "%s", why);
	wlog("%s: no %s view%s", why, collectors[owner]->view->name, vv);
	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++) {
		if (t->state[i])
			collectors[i]->destroy(t->state[i]);
		t->state[i] = NULL;
	}
	schedprof_bpf__destroy(t->skel);
	t->skel = t->ctx.skel = NULL;
	return 0;
}

/* After load: each selected collector's configuration that needs kallsyms. */
static int tracer_setup(struct tracer *t, uint64_t t0)
{
	/* .bss, so written after load: the same configuration for every view that folds */
	t->skel->bss->fold_cfg = t->ctx.fold_cfg;
	probe_cpu_rqs(t);
	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++) {
		int err;

		if (!t->state[i] || !collectors[i]->setup)
			continue;
		err = collectors[i]->setup(t->state[i], &t->ctx);
		dlog("%s view set up at %.1f ms", collectors[i]->view->name, ms_since(t0));
		if (err) {
			elog("cannot set up the %s view: %s", collectors[i]->view->name, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int tracer_prepare(struct tracer *t, const struct trace_config *o)
{
	/* and this thread's CPU time: what a loaded machine does not stretch */
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID), load0;
	struct attach_ids_stats ids;
	const char *budget;
	char line[200];
	int err;

	t->ctx.opts = o;
	t->ctx.ncpus = libbpf_num_possible_cpus();
	/* before anything is loaded or launched: kernel names missing is said now, not at the end */
	err = preflight_kallsyms(o->strict, &t->ksyms_warned);
	if (err)
		return err;
	/*
	 * Without the boot's fold cache, start-up needs kallsyms: read it beside the load.
	 * With it, kallsyms is needed only for the report: read it once attached, so its
	 * ~0.1 s of kernel time does not compete with the load for the CPUs.
	 */
	t->fold_cached = fold_cfg_cache_load(NULL, &t->ctx.fold_cfg) == 0;
	if (!t->fold_cached && (err = ksyms_start(t)))
		return err;
	for (;;) {
		err = tracer_open(t, o) ?: preflight_map_memory(t->skel->obj, o);
		if (err)
			return err;
		dlog("opened and configured in %.1f ms", ms_since(t0));
		budget = prog_budget_mode();
		if (budget) {
			t->budget = true;
			err = prog_budget_select(t->skel->obj, budget);
			if (err)
				return err > 0 ? -ECANCELED : err;
		}
		/* the tp_btf/iter targets' IDs from the boot's cache, not libbpf's parse (attach_ids.h) */
		attach_ids_arm(NULL, NULL, t->skel->obj, t->core_btf.fd >= 0);
		refusal_reset(&load_refusal);
		test_refuse(t->skel);
		load0 = now_ns(CLOCK_MONOTONIC);
		err = schedprof_bpf__load(t->skel);
		/* the budget's one program: said, refused or not, and never loaded again */
		if (budget)
			err = prog_budget_report(t->skel->obj, budget, err, ms_since(load0)) ?:
			      -ECANCELED;
		attach_ids_done(&ids);
		attach_ids_describe(&ids, line, sizeof(line));
		dlog("%s", line);
		dlog("loaded at %.1f ms (%.1f ms of CPU)", ms_since(t0),
		     (now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0) / 1e6);
		core_btf_close(&t->core_btf);
		if (!err)
			break;
		if (budget)
			return err;
		if (!load_refusal.prog[0]) {
			elog("cannot load the BPF programs: %s%s", strerror(-err),
			     log_get_level() < LOG_LIBBPF ? " (-vv shows the verifier's log)" : "");
			return err;
		}
		err = leave_out_refused(t, err);
		if (err)
			return err;
	}
	t->targ_tgids_fd = bpf_map__fd(t->skel->maps.targ_tgids);
	/* kallsyms itself is needed only to symbolize the report: join later if we can */
	if (!t->fold_cached) {
		err = ksyms_join(t);
		if (err)
			return err;
		dlog("kallsyms in at %.1f ms", ms_since(t0));
	}
	return tracer_setup(t, t0);
}

static int tracer_attach(struct tracer *t)
{
	struct bpf_program *sw;
	int err = 0;

	if (bpf_program__autoload(t->skel->progs.sp_fork)) {
		t->fork_link = bpf_program__attach(t->skel->progs.sp_fork);
		if (!t->fork_link)
			err = -errno;
	}
	if (!err && bpf_program__autoload(t->skel->progs.sp_exit)) {
		t->exit_link = bpf_program__attach(t->skel->progs.sp_exit);
		if (!t->exit_link)
			err = -errno;
	}
	/*
	 * sp_exec before the views' own exec programs (prof_exec asks task_is_traced): probes on
	 * one tracepoint run in the order they were attached.
	 */
	if (!err && bpf_program__autoload(t->skel->progs.sp_exec)) {
		t->exec_link = bpf_program__attach(t->skel->progs.sp_exec);
		if (!t->exec_link)
			err = -errno;
	}
	/* before the views' own programs: a lock contention never starts without it */
	sw = switch_prog(t->skel);
	if (!err && bpf_program__autoload(sw)) {
		t->switch_link = bpf_program__attach(sw);
		if (!t->switch_link)
			err = -errno;
	}
	for (size_t i = 0; !err && i < ARRAY_SIZE(collectors); i++)
		if (t->state[i] && collectors[i]->attach)
			err = collectors[i]->attach(t->state[i], &t->ctx);
	if (err) {
		elog("cannot attach the BPF programs: %s", strerror(-err));
		return err;
	}
	/* with the fold cache, kallsyms is read only now (see tracer_prepare) */
	return t->fold_cached && !t->ksyms_started && !t->ctx.ksyms ? ksyms_start(t) : 0;
}

static void tracer_detach(struct tracer *t)
{
	/* Links go first so the maps stop changing; the maps stay until destroy. */
	bpf_link__destroy(t->fork_link);
	bpf_link__destroy(t->exit_link);
	bpf_link__destroy(t->exec_link);
	t->fork_link = t->exit_link = t->exec_link = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++)
		if (t->state[i] && collectors[i]->detach)
			collectors[i]->detach(t->state[i]);
	/* last: the locks view's sleeps end with its contentions */
	bpf_link__destroy(t->switch_link);
	t->switch_link = NULL;
}

static void reap(struct tracer *t, int options)
{
	pid_t r;

	if (!t->launched || t->reaped)
		return;
	do {
		r = wait4(t->launch.pid, &t->status, options, &t->ru);
	} while (r < 0 && errno == EINTR);
	if (r == t->launch.pid)
		t->reaped = true;
}

/*
 * Sleeps up to ms, or less when a collector's poll fd becomes readable, and lets those
 * collectors do their work (it is time-critical: the processes they look at may be short-lived).
 */
static void poll_collectors(struct tracer *t, int ms)
{
	struct pollfd fds[ARRAY_SIZE(collectors) + 1];
	size_t idx[ARRAY_SIZE(collectors) + 1];
	nfds_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++) {
		int fd;

		if (!t->state[i] || !collectors[i]->poll_fd)
			continue;
		fd = collectors[i]->poll_fd(t->state[i]);
		if (fd < 0)
			continue;
		fds[n].fd = fd;
		fds[n].events = POLLIN;
		fds[n].revents = 0;
		idx[n++] = i;
	}
	/* the hooks' fd (top's terminal) ends the sleep too: its tick reads it */
	if (t->hooks && t->hooks->fd >= 0) {
		fds[n].fd = t->hooks->fd;
		fds[n].events = POLLIN;
		fds[n].revents = 0;
		idx[n++] = SIZE_MAX;
	}
	if (poll(fds, n, ms) <= 0)
		return;
	for (nfds_t k = 0; k < n; k++) {
		size_t i = idx[k];
		int err;

		if (!fds[k].revents || i == SIZE_MAX)
			continue;
		err = collectors[i]->poll(t->state[i], &t->ctx);
		if (err)
			dlog("%s: %s", collectors[i]->view->name, strerror(-err));
	}
}

enum trace_end { END_TARGET, END_DURATION, END_SIGNAL, END_QUIT };

static int tracer_read(struct tracer *t, struct sp_run *run);
static void fill_run_info(struct sp_run *run, const struct trace_config *o, const struct tracer *t);

/*
 * The interval that ends at now (ns since the start) from the cumulative run cur: cur minus
 * the run at the last interval's end (run_delta.h), handed to the hooks; cur becomes the
 * start of the next. 0 or -errno.
 */
static int tracer_interval_of(struct tracer *t, const struct trace_config *o, struct sp_run *cur,
			      uint64_t now, bool last)
{
	struct sp_delta_stats st;
	struct sp_run iv;
	int err;

	sp_run_init(&iv);
	err = sp_run_delta(t->iv_index ? &t->iv_prev : NULL, cur, &iv, &st);
	if (err) {
		elog("cannot compute interval %llu: %s", (unsigned long long)t->iv_index + 1,
		     strerror(-err));
		sp_run_free(&iv);
		return err;
	}
	t->iv_stats.negative += st.negative;
	t->iv_stats.vanished += st.vanished;
	if (st.negative || st.vanished)
		dlog("interval %llu: %llu values smaller than at its start, %llu rows renamed",
		     (unsigned long long)t->iv_index + 1, (unsigned long long)st.negative,
		     (unsigned long long)st.vanished);
	sp_lock_sort(&iv.locks, o->lock_sort);
	iv.interval.present = true;
	iv.interval.index = ++t->iv_index;
	iv.interval.start_ns = t->iv_end;
	iv.interval.end_ns = now;
	iv.start_unix_ns = t->wall0 + t->iv_end;
	iv.elapsed_ns = now - t->iv_end;
	iv.target.has_rusage = false; /* the command's CPU time is the whole run's */
	t->iv_end = now;
	err = t->hooks->interval(t->hooks->ctx, &iv, cur, last, t->out);
	sp_run_free(&iv);
	if (last)
		return err;
	sp_run_free(&t->iv_prev);
	t->iv_prev = *cur; /* moved: the caller's cur is the next interval's start */
	sp_run_init(cur);
	return err;
}

/* -i: reads every view into a fresh cumulative run while attached, and hands its interval on. */
static int tracer_interval(struct tracer *t, const struct trace_config *o)
{
	int level = log_get_level(), err;
	struct sp_run cur;
	uint64_t now;

	/* symbols are needed now, not only for the report */
	if (t->ksyms_started && (err = ksyms_join(t)))
		return err;
	sp_run_init(&cur);
	now = now_ns(CLOCK_MONOTONIC) - t->t0;
	cur.elapsed_ns = now;
	cur.start_unix_ns = t->wall0;
	fill_run_info(&cur, o, t);
	/* the reads' warnings (losses so far) are said once, by the final read */
	if (level < LOG_DEBUG)
		log_set_level(LOG_ERROR);
	t->ctx.interval = true;
	err = tracer_read(t, &cur);
	t->ctx.interval = false;
	log_set_level(level);
	if (!err && sp_run_fix_utf8(&cur))
		err = -ENOMEM;
	dlog("interval %llu: read in %.1f ms", (unsigned long long)t->iv_index + 1,
	     ms_since(t->t0 + now));
	err = err ?: tracer_interval_of(t, o, &cur, now, false);
	sp_run_free(&cur);
	return err;
}

/* Waits, 50 ms at a time, for the end: target gone, -d, a signal, or the hooks' quit. */
static enum trace_end wait_for_end(struct tracer *t, const struct trace_config *o, uint64_t t0)
{
	uint64_t last_gc = t0, next_iv = t0 + o->interval_ns;

	for (;;) {
		uint64_t now;

		if (stop_count)
			return END_SIGNAL;
		if (t->hooks && t->hooks->tick && t->hooks->tick(t->hooks->ctx))
			return END_QUIT;
		if (t->iv_err)
			return END_QUIT;
		if (o->argv) {
			reap(t, WNOHANG);
			if (t->reaped)
				return END_TARGET;
		}
		now = now_ns(CLOCK_MONOTONIC);
		if (o->duration_ns && now - t0 >= o->duration_ns)
			return END_DURATION;
		/* -- COMMAND: only the retired tgids go (the end is the command's) */
		if (now - last_gc >= 200 * 1000 * 1000ULL && o->mode == SP_TARGET_TIDS) {
			last_gc = now;
			if (!tids_alive(t, o))
				return END_TARGET;
		}
		if (now - last_gc >= 200 * 1000 * 1000ULL &&
		    (o->mode == SP_TARGET_PIDS || o->mode == SP_TARGET_COMMAND)) {
			last_gc = now;
			/* -p -- COMMAND: the command's end is the trace's, not the PIDs' */
			if (!targets_gc(t, o->mode == SP_TARGET_PIDS) && o->mode == SP_TARGET_PIDS &&
			    !o->argv)
				return END_TARGET;
		}
		/*
		 * -i: the next interval is due (after the end's checks: -d's end is no interval
		 * of its own; a late one does not shift the ones after it)
		 */
		if (o->interval_ns && now >= next_iv) {
			t->iv_err = tracer_interval(t, o);
			while (next_iv <= now_ns(CLOCK_MONOTONIC))
				next_iv += o->interval_ns;
			continue;
		}
		/* woken up for the next interval, not up to 50 ms after it */
		poll_collectors(t, o->interval_ns && next_iv - now < 50 * 1000000ULL ?
				   (int)((next_iv - now) / 1000000) + 1 : 50);
	}
}

/* Polls the collectors for up to ms, or until the command is reaped or another signal comes. */
static void wait_command(struct tracer *t, int ms, int count)
{
	for (int i = 0; i < ms / 50 && !t->reaped && stop_count == count; i++) {
		poll_collectors(t, 50);
		reap(t, WNOHANG);
	}
}

static const char *again_hint(void)
{
	switch (stop_signal) {
	case SIGINT:
		return "Ctrl-C";
	case SIGHUP:
		return "SIGHUP";
	default:
		return "SIGTERM";
	}
}

/* The terminal's Ctrl-C went to its whole foreground process group: the command has it too. */
static bool command_got_it(pid_t pid)
{
	return stop_signal == SIGINT && stop_by_tty && getpgid(pid) == getpgrp();
}

/*
 * A stop signal with -- COMMAND: pass it on (not a second time) and keep tracing until the
 * command exits; each further signal escalates (SIGTERM, then SIGKILL).
 */
static void stop_command(struct tracer *t, const struct trace_config *o)
{
	const char *cmd = o->argv[0];
	pid_t pid = t->launch.pid;
	int level = 0;

	while (!t->reaped) {
		int count = stop_count;

		if (level < count && level < 3) {
			level++;
			if (level == 1 && !command_got_it(pid))
				kill(pid, stop_signal);
			else if (level == 2)
				kill(pid, SIGTERM);
			else if (level == 3)
				kill(pid, SIGKILL);
			wait_command(t, 300, count);
			if (t->reaped || stop_count != count)
				continue;
			if (level == 1)
				notice("waiting for %s (pid %d) to exit; %s again to terminate it", cmd,
				       (int)pid, again_hint());
			else if (level == 2)
				notice("sent SIGTERM to %s (pid %d); %s again to kill it", cmd, (int)pid,
				       again_hint());
		}
		wait_command(t, 1000, count);
	}
}

/* -d with --kill-on-end: SIGTERM, then SIGKILL after 2 s (or at once on a stop signal). */
static void end_command(struct tracer *t, const struct trace_config *o)
{
	int count = stop_count;

	kill(t->launch.pid, SIGTERM);
	for (int i = 0; i < 40 && !t->reaped && stop_count == count; i++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		reap(t, WNOHANG);
		if (!t->reaped)
			nanosleep(&ts, NULL);
	}
	if (t->reaped)
		return;
	notice("%s (pid %d) did not end on SIGTERM: killing it", o->argv[0], (int)t->launch.pid);
	kill(t->launch.pid, SIGKILL);
	reap(t, 0);
}

/* After the end, the command's fate: waited for (signal), left running or ended (-d). */
static void settle_command(struct tracer *t, const struct trace_config *o, enum trace_end end)
{
	if (!o->argv || t->reaped)
		return;
	if (end == END_SIGNAL) {
		stop_command(t, o);
	} else if ((end == END_DURATION && o->kill_on_end) || end == END_QUIT) {
		tracer_detach(t); /* -d is the trace's length: the command's end is not in it */
		end_command(t, o);
		t->ended_at_end = true;
	} else if (end == END_DURATION) {
		t->left_running = true;
		notice("%s (pid %d) is still running: -d ended the trace, not the command "
		       "(--kill-on-end ends it)", o->argv[0], (int)t->launch.pid);
	}
}

static uint64_t timeval_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * NSEC_PER_SEC + (uint64_t)tv->tv_usec * 1000;
}

/* The reaped command's exit status, as a shell gives it (128 + signal when killed). */
static int command_status(const struct tracer *t)
{
	return WIFEXITED(t->status) ? WEXITSTATUS(t->status) : 128 + WTERMSIG(t->status);
}

/* With --: the command line, and its exit status and CPU time once reaped. */
static void fill_command_info(struct sp_target_info *ti, const struct trace_config *o,
			      const struct tracer *t)
{
	int argc = 0;

	while (o->argv[argc])
		argc++;
	ti->command = join_args(argc, o->argv);
	ti->exit_status = -1;
	if (!t->reaped)
		return;
	ti->has_rusage = true;
	ti->still_running = t->still_running;
	ti->user_ns = timeval_ns(&t->ru.ru_utime);
	ti->sys_ns = timeval_ns(&t->ru.ru_stime);
	ti->exit_status = command_status(t);
}

static void fill_run_info(struct sp_run *run, const struct trace_config *o, const struct tracer *t)
{
	struct utsname u;
	char host[256] = "";

	run->schema = xstrdup(SP_SCHEMA);
	run->version = xstrdup(SCHEDPROF_VERSION);
	if (uname(&u) == 0)
		run->kernel = xstrdup(u.release);
	gethostname(host, sizeof(host) - 1);
	run->hostname = xstrdup(host);
	run->ncpus = t->ctx.ncpus;
	run->options = xstrdup(o->cmdline);
	run->target.mode = o->mode;
	if (o->mode == SP_TARGET_COMMAND) {
		run->target.system = o->all;
		fill_command_info(&run->target, o, t);
	} else if (o->mode == SP_TARGET_CGROUP) {
		run->target.cgroup = xstrdup(t->cgroup.path);
	} else if (o->mode == SP_TARGET_PIDS || o->mode == SP_TARGET_TIDS) {
		run->target.pids = calloc(o->npids, sizeof(int));
		if (run->target.pids) {
			memcpy(run->target.pids, o->pids, o->npids * sizeof(int));
			run->target.npids = o->npids;
		}
	}
}

static int check_environment(void)
{
	if (preflight_caps())
		return -EPERM;
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		elog("this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): schedprof needs a "
		     "kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return -ENOTSUP;
	}
	return 0;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/*
 * -p: each PID as its process, once: a thread's TID names its process, which is traced whole
 * (the BPF side keys processes by tgid). 0, or -ESRCH after saying which is missing.
 */
static int resolve_pids(const struct trace_config *o, int **ret, size_t *ret_n)
{
	int *out = calloc(o->npids ? o->npids : 1, sizeof(*out));
	size_t n = 0;

	if (!out) {
		elog("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < o->npids; i++) {
		pid_t tgid;
		size_t j;

		if (target_tgid_of(o->pids[i], &tgid) || !target_pid_alive(tgid)) {
			elog("no such process: %d", o->pids[i]);
			free(out);
			return -ESRCH;
		}
		if (tgid != o->pids[i])
			wlog("%d is a thread of process %d: tracing process %d, all its threads",
			     o->pids[i], (int)tgid, (int)tgid);
		for (j = 0; j < n && out[j] != tgid; j++)
			;
		if (j == n)
			out[n++] = tgid;
	}
	*ret = out;
	*ret_n = n;
	return 0;
}

/* -p, once the tree is added: the named processes that are gone, and none left is an error. */
static int check_pids_attached(struct tracer *t, const struct trace_config *o)
{
	size_t gone = 0;

	for (size_t i = 0; i < o->npids; i++)
		gone += !target_pid_alive(o->pids[i]);
	if (!targets_alive(t)) {
		if (o->npids == 1)
			elog("process %d exited before tracing began: nothing was traced", o->pids[0]);
		else
			elog("every target process exited before tracing began: nothing was traced");
		return -ESRCH;
	}
	for (size_t i = 0; gone && i < o->npids; i++)
		if (!target_pid_alive(o->pids[i]))
			wlog("process %d exited before tracing began", o->pids[i]);
	return 0;
}

/* Starts the command (held before exec), adds the PIDs or threads, and attaches. 0 or -errno. */
static int tracer_start(struct tracer *t, const struct trace_config *o)
{
	int err = 0;

	if (o->argv) {
		err = target_user_resolve(o->user, o->as_root, &t->user);
		if (err == -ENOENT) {
			elog("no such user: %s", t->user.name);
			return err;
		} else if (err) {
			elog("cannot find whom to run %s as: %s", o->argv[0], strerror(-err));
			return err;
		}
		if (t->user.set)
			dlog("running %s as %s (uid %u, gid %u)", o->argv[0], t->user.name,
			     (unsigned int)t->user.uid, (unsigned int)t->user.gid);
		/* after -d without --kill-on-end the command outlives us: no PDEATHSIG then */
		err = target_launch__start(o->argv, !o->duration_ns || o->kill_on_end, &t->user,
					   &t->launch);
		if (err) {
			elog("cannot start %s: %s", o->argv[0], strerror(-err));
			return err;
		}
		t->launched = true;
		/* traced from its exec on: its wait at the gate is ours (sp_exec) */
		if (o->mode == SP_TARGET_COMMAND) {
			t->skel->bss->targ_exec_pid = t->launch.pid;
			t->ctx.job_tid = t->launch.pid; /* its end is the job's (timeline) */
		}
	}
	/* -p -- COMMAND: the command is held until the PIDs are attached, and not traced */
	if (o->mode == SP_TARGET_PIDS) {
		err = tracer_attach(t);
		if (!err)
			err = attach_pids(t, o);
		if (!err)
			err = check_pids_attached(t, o);
	} else if (o->mode == SP_TARGET_TIDS) {
		err = add_tids(t, o);
		if (!err)
			err = tracer_attach(t);
		if (!err)
			err = check_tids_attached(t, o);
	}
	if (err)
		return err;
	return o->mode != SP_TARGET_PIDS && o->mode != SP_TARGET_TIDS ? tracer_attach(t) : 0;
}

/* With --, lets the command exec now that everything is attached. 0 or -errno. */
static int tracer_release(struct tracer *t, const struct trace_config *o)
{
	int err;

	if (!o->argv)
		return 0;
	err = target_launch__release(&t->launch);
	if (err) {
		elog("cannot execute %s: %s", o->argv[0], strerror(-err));
		reap(t, 0);
	}
	return err;
}

static int tracer_read(struct tracer *t, struct sp_run *run)
{
	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++) {
		int err;

		if (!t->state[i])
			continue;
		err = collectors[i]->read(t->state[i], &t->ctx, run);
		if (err) {
			elog("cannot read the %s view: %s", collectors[i]->view->name, strerror(-err));
			return err;
		}
	}
	return 0;
}

/*
 * --strict: the losses of the run (sp_run_losses()) and those only the tracer sees, in
 * .bss: process announcements lost by the ring buffer, untimed sleeps and contentions,
 * sleepers and owners not counted. True (after one line naming them) if there are any.
 */
static bool strict_losses(const struct tracer *t, const struct sp_run *run)
{
	const struct schedprof_bpf__bss *b = t->skel->bss;
	char extra[256] = "";
	size_t len = 0;
	struct {
		uint64_t n;
		const char *what;
	} more[] = {
		{ b->prof_drops.event_lost, "process announcements lost (ring buffer full)" },
		{ b->sched_drops.task_storage_fail, "sleeps without off-CPU time" },
		{ b->sched_drops.waker_map_full, "wake-ups under no waker (--max-callers)" },
		{ b->lock_drops.task_storage_fail + b->lock_drops.nest_overflow,
		  "contentions not timed" },
		{ b->lock_drops.sleeper_map_full, "lock sleeps not counted (--max-callers)" },
		{ b->lock_drops.owner_map_full, "lock owners not counted (--max-callers)" },
		{ run->timeline.lost, "timeline events lost (--timeline-buffer)" },
		{ run->timeline.dropped, "timeline events after its segment limit" },
	};

	char all[512];

	for (size_t i = 0; i < ARRAY_SIZE(more); i++)
		if (more[i].n && len < sizeof(extra))
			len += snprintf(extra + len, sizeof(extra) - len, "%s%llu %s", len ? ", " : "",
					(unsigned long long)more[i].n, more[i].what);
	if (!sp_run_losses(run, extra, all, sizeof(all)))
		return false;
	elog("--strict: the run lost data: %s", all);
	return true;
}

/* The exit code once the report is out (ok: written, every view read). */
static int exit_code_of(const struct tracer *t, const struct trace_config *o, bool ok)
{
	if (!ok)
		return EXIT_FAILURE;
	if (!o->argv)
		return EXIT_SUCCESS;
	/* -d ended the trace: the command was left running, or ended as --kill-on-end asked */
	if (t->left_running || t->ended_at_end)
		return EXIT_SUCCESS;
	if (t->reaped)
		return command_status(t);
	return 128 + (stop_signal ? stop_signal : SIGTERM);
}

/*
 * After the end: detach, read every view and write the report, whatever was read even after
 * a read error. *ret_code gets the exit code once the report is out. 0 or -errno.
 */
static int tracer_report(struct tracer *t, const struct trace_config *o, struct sp_run *run,
			 uint64_t t0, uint64_t wall0, int *ret_code)
{
	int err, werr;

	tracer_detach(t);
	if (t->ksyms_started && (err = ksyms_join(t)))
		return err;
	run->elapsed_ns = now_ns(CLOCK_MONOTONIC) - t0;
	run->start_unix_ns = wall0;
	fill_run_info(run, o, t);
	err = tracer_read(t, run);
	/* Names as the saved JSON holds them, so that trace -f X and report -f X agree. */
	if (sp_run_fix_utf8(run))
		wlog("out of memory: some names keep their invalid UTF-8");
	/* -i: the last interval, from the final read: the intervals add up to the run */
	if (!err && o->interval_ns && t->hooks && !t->iv_err)
		t->iv_err = tracer_interval_of(t, o, run, run->elapsed_ns, true);
	if (!err && t->iv_err)
		err = t->iv_err;
	if (t->iv_stats.negative || t->iv_stats.vanished)
		wlog("-i: %llu rows changed names between intervals (symbols found later) and %llu "
		     "values went down: those events show under both names, so the intervals' rows "
		     "add up to more than the run's (their totals add up exactly)",
		     (unsigned long long)t->iv_stats.vanished,
		     (unsigned long long)t->iv_stats.negative);
	werr = t->sink->write(t->sink->ctx, run, !(t->hooks && t->hooks->no_report));
	if (t->iv_err == -EPIPE)
		werr = -EPIPE; /* the reader of the intervals has gone */
	*ret_code = werr == -EPIPE ? EXIT_PIPE : exit_code_of(t, o, !werr && !err);
	if (o->strict && !err && !werr && strict_losses(t, run) && *ret_code == EXIT_SUCCESS)
		*ret_code = EXIT_LOSS;
	return err;
}

static void hold_for_tests(const struct tracer *t)
{
	const char *env = getenv(HOLD_ENV);
	uint64_t ms;

	if (!t->launched || !env || parse_u64(env, 0, 60000, &ms))
		return;
	for (uint64_t i = 0; i < ms / 10 && !stop_count; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
}

/* The line that says what is traced: one stderr line on a terminal when only Ctrl-C ends it. */
static void say_attached(const struct tracer *t, const struct trace_config *o, uint64_t ns)
{
	char what[256];

	trace_target_describe(o, what, sizeof(what));
	if (!o->duration_ns && isatty(STDERR_FILENO) && !(t->hooks && t->hooks->screen)) {
		if (o->argv)
			notice("tracing %s (pid %d) until it exits; Ctrl-C to stop", what,
			       (int)t->launch.pid);
		else
			notice("tracing %s; Ctrl-C to stop", what);
	}
	ilog("tracing %s: attached in %.1f ms", what, ns / 1e6);
}

const char *trace_target_describe(const struct trace_config *o, char *buf, size_t len)
{
	size_t n = 0;

	switch (o->mode) {
	case SP_TARGET_COMMAND:
		snprintf(buf, len, "%scommand %s", o->all ? "the whole system while " : "", o->argv[0]);
		break;
	case SP_TARGET_PIDS:
		n = snprintf(buf, len, "%s", o->npids > 1 ? "PIDs" : "PID");
		for (size_t i = 0; i < o->npids && n < len; i++)
			n += snprintf(buf + n, len - n, "%s%d", i ? "," : " ", o->pids[i]);
		if (n < len)
			snprintf(buf + n, len - n, " and descendants%s%s%s", o->argv ? " while " : "",
				 o->argv ? o->argv[0] : "", o->argv ? " runs" : "");
		break;
	case SP_TARGET_CGROUP:
		snprintf(buf, len, "cgroup %s and its descendants%s%s%s", o->cgroup,
			 o->argv ? " while " : "", o->argv ? o->argv[0] : "", o->argv ? " runs" : "");
		break;
	case SP_TARGET_TIDS:
		n = snprintf(buf, len, "%s", o->npids > 1 ? "threads" : "thread");
		for (size_t i = 0; i < o->npids && n < len; i++)
			n += snprintf(buf + n, len - n, "%s%d", i ? "," : " ", o->pids[i]);
		break;
	default:
		snprintf(buf, len, "the whole system");
		break;
	}
	return buf;
}

/* --cgroup PATH into cg, or one line that says why not: 0 or -errno. */
static int resolve_cgroup(const char *path, struct target_cgroup *cg)
{
	int err = target_cgroup_resolve(path, cg);

	if (err == -EMEDIUMTYPE)
		elog("--cgroup %s: not a cgroup v2 directory (a path in the cgroup2 mount, or "
		     "relative to it)", path);
	else if (err == -ENOENT)
		elog("--cgroup %s: no such cgroup (a path in the cgroup2 mount, or relative to it)",
		     path);
	else if (err)
		elog("--cgroup %s: %s", path, strerror(-err));
	else
		dlog("cgroup %s: id %llu, level %u", cg->path, cg->id, cg->level);
	return err;
}

int trace_run(const struct trace_config *opts, const struct trace_sink *out,
	      const struct trace_hooks *h)
{
	struct tracer t = { .launch = { .pid = -1, .gate_fd = -1, .error_fd = -1 }, .hooks = h,
			    .sink = out, .core_btf = { .fd = -1 } };
	struct trace_config ro = *opts, *o = &ro; /* with -p resolved to processes */
	struct sp_run run;
	uint64_t t0, wall0, begin = now_ns(CLOCK_MONOTONIC);
	int err, exit_code = EXIT_FAILURE;

	sp_run_init(&run);
	ro.pids = NULL;
	if (check_environment() || (opts->mode == SP_TARGET_PIDS &&
				    resolve_pids(opts, &ro.pids, &ro.npids)))
		return EXIT_FAILURE;
	if (opts->mode == SP_TARGET_TIDS) { /* ro.pids is ours, freed below: a copy */
		ro.pids = calloc(opts->npids, sizeof(*ro.pids));
		if (!ro.pids) {
			elog("out of memory");
			return EXIT_FAILURE;
		}
		memcpy(ro.pids, opts->pids, opts->npids * sizeof(*ro.pids));
	}
	if (o->mode == SP_TARGET_CGROUP && resolve_cgroup(o->cgroup, &t.cgroup))
		return EXIT_FAILURE;
	for (size_t i = 0; o->mode == SP_TARGET_TIDS && i < o->npids; i++) {
		if (!target_tid_alive(o->pids[i])) {
			elog("no such thread: %d", o->pids[i]);
			free(ro.pids);
			return EXIT_FAILURE;
		}
	}
	/* a mistyped -o or --save fails now, not after the trace */
	if (out->open(out->ctx, &t.out)) {
		out->close(out->ctx);
		free(ro.pids);
		return EXIT_FAILURE;
	}
	libbpf_set_print(libbpf_print);
	install_signals();
	err = tracer_prepare(&t, o) ?: tracer_start(&t, o);
	if (err)
		goto out;
	hold_for_tests(&t);
	if (stop_count && t.launched) {
		/* a signal during start-up: the command was never released, so it never ran */
		elog("interrupted before %s started: nothing was traced", o->argv[0]);
		exit_code = 128 + stop_signal;
		goto out;
	}
	t0 = now_ns(CLOCK_MONOTONIC);
	t.skel->bss->trace_t0 = t0; /* the schedules view's budget counts from here */
	wall0 = now_ns(CLOCK_REALTIME);
	t.ctx.start_ns = t0; /* the timeline's times count from here */
	err = tracer_release(&t, o);
	if (err) {
		exit_code = EXIT_NOEXEC;
		goto out;
	}
	t.t0 = t0; /* the intervals' times count from here */
	t.wall0 = wall0;
	say_attached(&t, o, t0 - begin);
	settle_command(&t, o, wait_for_end(&t, o, t0));
	if (t.reaped)
		t.still_running = targets_left(&t);
	if (h && h->ended)
		h->ended(h->ctx);
	err = tracer_report(&t, o, &run, t0, wall0, &exit_code);
out:
	if (t.budget)
		exit_code = err == -ECANCELED ? EXIT_SUCCESS : EXIT_FAILURE;
	if (t.launched && !t.reaped && exit_code != EXIT_NOEXEC && (err || stop_count) &&
	    !t.left_running)
		target_launch__abort(&t.launch);
	tracer_destroy(&t);
	out->close(out->ctx); /* nothing once written; a partial file otherwise */
	sp_run_free(&run);
	sp_run_free(&t.iv_prev);
	free(ro.pids);
	return exit_code;
}
