// SPDX-License-Identifier: BSD-2-Clause
/*
 * The engine's start-up: kallsyms read on a thread beside the load, the kernel's features,
 * the object opened (CO-RE BTF) and configured by the selected views' collectors, loaded
 * (a view whose program the verifier refuses is left out and the object opened again), set
 * up, attached and, at the end, detached.
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
#include "base/testhook.h"
#include "base/exitcode.h"
#include "loader/attach_ids.h"
#include "loader/btf_interpose.h"
#include "loader/cache.h"
#include "collect/collector.h"
#include "loader/corebtf.h"
#include "loader/foldcfg.h"
#include "loader/featprobe.h"
#include "loader/prog_budget.h"
#include "loader/prog_builds.h"
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
#include "collect/tracer.h"
#include "base/util.h"
#include "schedprof/schedprof.h"
#include "schedprof.skel.h"

/* What the verifier refused at the last load (libbpf says it whatever the log level). */
static struct refusal load_refusal;

int trace_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
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

int ksyms_join(struct tracer *t)
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

int ksyms_start(struct tracer *t)
{
	int err = pthread_create(&t->ksyms_thread, NULL, ksyms_loader, t);

	if (err) {
		elog("cannot start a thread to read /proc/kallsyms: %s", strerror(err));
		return -err;
	}
	t->ksyms_started = true;
	return 0;
}

/* For tests: a BTF file to look for the lock tracepoints in, instead of the running kernel's. */
#define LOCK_BTF_ENV "SCHEDPROF_LOCK_BTF"
/* For tests: "0" relocates against the kernel's whole BTF, not the boot's CO-RE BTF. */
#define CORE_BTF_ENV "SCHEDPROF_CORE_BTF"

/*
 * The kernel's features, probed once per boot (featprobe.h); 0, or -ENOTSUP when nothing can
 * run on it.
 */
static int probe_features(struct tracer *t)
{
	const char *lock_btf = test_hook(LOCK_BTF_ENV);
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

/* For tests: the per-task hashes' size (task_states_max()), to fill them. */
#define TASK_STATES_ENV "SCHEDPROF_TEST_TASK_STATES"

/*
 * Tasks whose state the per-task hashes hold at once: every live task at most
 * (/proc/sys/kernel/pid_max bounds their ids), up to SP_MAX_TASK_STATES.
 */
static uint32_t task_states_max(void)
{
	const char *env = test_hook(TASK_STATES_ENV);
	uint64_t n = SP_MAX_TASK_STATES, pid_max;
	char buf[32];
	FILE *f;

	if (env && !parse_u64(env, 1, SP_MAX_TASK_STATES, &n))
		return (uint32_t)n;
	f = fopen("/proc/sys/kernel/pid_max", "r");
	if (!f)
		return (uint32_t)n;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		if (!parse_u64(buf, 1, UINT32_MAX, &pid_max) && pid_max < n)
			n = pid_max;
	}
	fclose(f);
	return (uint32_t)n;
}

/*
 * The ways the programs take by the kernel's features (rodata, before load): the faster one
 * where the probe found the feature, else the older one.
 */
static void apply_features(struct schedprof_bpf *skel, const struct sp_features *f)
{
	bool hash = !f->has[SP_FEAT_STORAGE_NOSLEEP];
	uint32_t n = hash ? task_states_max() : 1;

	/* the user stacks read the task's process once through an untrusted pointer */
	skel->rodata->ustack_untrusted = f->has[SP_FEAT_ARG_UNTRUSTED];
	dlog("user stacks: the task's mm and group leader read through %s task pointer",
	     f->has[SP_FEAT_ARG_UNTRUSTED] ? "an untrusted" : "the trusted");
	/*
	 * per-task state: task storage, or where creating it could take a sleeping lock with
	 * interrupts off, preallocated hashes (bpf/common.bpf.h task_hash), emptied as tasks
	 * are freed (sp_task_free); one entry each when not used
	 */
	skel->rodata->task_hash = hash;
	bpf_map__set_max_entries(skel->maps.traced_hash, n);
	bpf_map__set_max_entries(skel->maps.lock_task_hash, n);
	bpf_program__set_autoload(skel->progs.sp_task_free, hash);
	if (hash)
		dlog("per-task state: preallocated hashes of %u tasks (task storage could take a "
		     "sleeping lock on this kernel)", n);
	else
		dlog("per-task state: task storage");
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
	const char *env = test_hook(CORE_BTF_ENV);
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
 * What the one sched_switch program's build must provide (include/schedprof/progs.h): the
 * schedules view's full walks when stacks are kept, the timeline's part when it is on.
 */
static unsigned int switch_needs(struct schedprof_bpf *skel)
{
	return (skel->rodata->switch_sched && !skel->rodata->caller_fast ? SP_BUILD_FULL_WALKS : 0) |
	       (skel->rodata->switch_timeline ? SP_BUILD_TIMELINE : 0);
}

/*
 * The maps the views share (bpf/shared.bpf.c), sized once every view is configured:
 * frame_dist, the learned frame distances, is only used by a fast path (the schedules
 * part's caller_fast, the locks view's lock_caller_fast, or the whole-stack cache of kept
 * stacks and wakers: kstack_cache); without one it takes one entry.
 */
static void shared_maps_size(struct schedprof_bpf *skel)
{
	bool fast = (skel->rodata->switch_sched && skel->rodata->caller_fast) ||
		    (skel->rodata->switch_locks && skel->rodata->lock_caller_fast) ||
		    (skel->rodata->switch_sched && skel->rodata->kstack_cache &&
		     (!skel->rodata->caller_fast || skel->rodata->wake_walk)) ||
		    (skel->rodata->switch_locks && skel->rodata->kstack_cache &&
		     !skel->rodata->lock_caller_fast);

	bpf_map__set_max_entries(skel->maps.frame_dist, fast ? SP_FRAME_DIST_MAX : 1);
	/* the locks view's per-task hash, when the per-task state is in hashes (apply_features()) */
	if (!skel->rodata->switch_locks)
		bpf_map__set_max_entries(skel->maps.lock_task_hash, 1);
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
	/* the views not selected first: a selected one may size a map they shrank */
	for (size_t i = 0; i < ncollectors; i++)
		if (!(o->views & collectors[i]->view->bit))
			collectors[i]->disable(skel);
	for (size_t i = 0; i < ncollectors; i++) {
		const struct collector *c = collectors[i];
		int miss;
		char why[160];

		if (!(o->views & c->view->bit))
			continue;
		miss = kfeatures_first_missing(&t->features, c->needs(o));
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
	shared_maps_size(skel);
	if (!t->reopened)
		report_unavailable(names);
	t->reopened = true;
	if (!any) {
		elog("none of the selected views can run on this kernel");
		return -ENOTSUP;
	}
	/* the parts of sp_switch are switched on by the views' configure; one build is loaded */
	sw_on = skel->rodata->switch_sched || skel->rodata->switch_locks;
	sp_prog_build_load(skel->obj, "sp_switch", switch_needs(skel), sw_on);
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
 * into sp_cpu_rq_lock (src/views/locks/collect.c names it). A CPU it cannot run on (offline) is
 * read through current when it comes up, and its runqueue lock is not named.
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
	const char *name = test_hook(REFUSE_ENV);
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

	if (sp_prog_is_build_of(name, "sp_switch")) {
		for (size_t i = 0; i < ncollectors; i++)
			if (t->state[i] && !t->refused[i][0] && collectors[i]->switch_part)
				return (int)i;
		return -1;
	}
	skel = schedprof_bpf__open();
	p = skel ? bpf_object__find_program_by_name(skel->obj, name) : NULL;
	for (size_t i = 0; p && i < ncollectors && owner < 0; i++) {
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
	for (size_t i = 0; i < ncollectors; i++) {
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
	for (size_t i = 0; i < ncollectors; i++) {
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

int tracer_prepare(struct tracer *t, const struct trace_config *o)
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
	 * kernel time does not compete with the load for the CPUs.
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
		if (btf_interpose_ready(false))
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

int tracer_attach(struct tracer *t)
{
	struct bpf_program *sw;
	int err = 0;

	/* first: every per-task entry that a program below creates is deleted with its task */
	if (bpf_program__autoload(t->skel->progs.sp_task_free)) {
		t->free_link = bpf_program__attach(t->skel->progs.sp_task_free);
		if (!t->free_link)
			err = -errno;
	}
	if (!err && bpf_program__autoload(t->skel->progs.sp_fork)) {
		t->fork_link = bpf_program__attach(t->skel->progs.sp_fork);
		if (!t->fork_link)
			err = -errno;
	}
	/* before the switches walk user stacks: a child forked meanwhile would walk by its own */
	if (!err && bpf_program__autoload(t->skel->progs.sp_ufork)) {
		t->ufork_link = bpf_program__attach(t->skel->progs.sp_ufork);
		if (!t->ufork_link)
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
	sw = sp_prog_build_find(t->skel->obj, "sp_switch", switch_needs(t->skel));
	if (!err && sw && bpf_program__autoload(sw)) {
		t->switch_link = bpf_program__attach(sw);
		if (!t->switch_link)
			err = -errno;
	}
	for (size_t i = 0; !err && i < ncollectors; i++)
		if (t->state[i] && collectors[i]->attach)
			err = collectors[i]->attach(t->state[i], &t->ctx);
	if (err) {
		if (!t->ctx.attach_said)
			elog("cannot attach the BPF programs: %s", strerror(-err));
		return err;
	}
	/* with the fold cache, kallsyms is read only now (see tracer_prepare) */
	return t->fold_cached && !t->ksyms_started && !t->ctx.ksyms ? ksyms_start(t) : 0;
}

void tracer_detach(struct tracer *t)
{
	/* Links go first so the maps stop changing; the maps stay until destroy. */
	bpf_link__destroy(t->fork_link);
	bpf_link__destroy(t->exit_link);
	bpf_link__destroy(t->exec_link);
	bpf_link__destroy(t->ufork_link);
	t->fork_link = t->exit_link = t->exec_link = t->ufork_link = NULL;
	for (size_t i = 0; i < ncollectors; i++)
		if (t->state[i] && collectors[i]->detach)
			collectors[i]->detach(t->state[i]);
	/* last: the locks view's sleeps end with its contentions */
	bpf_link__destroy(t->switch_link);
	t->switch_link = NULL;
	/* after every program that creates per-task entries */
	bpf_link__destroy(t->free_link);
	t->free_link = NULL;
}
