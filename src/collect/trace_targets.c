// SPDX-License-Identifier: BSD-2-Clause
/*
 * The traced set of processes or threads (the targ_tgids and targ_tids maps): -p's trees
 * added before the command runs, -t's threads, and whether any is left.
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
#include "loader/cache.h"
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
#include "collect/tracer.h"
#include "base/util.h"
#include "schedprof/schedprof.h"
#include "schedprof.skel.h"

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
bool targets_gc(struct tracer *t, bool check_proc)
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
uint64_t targets_left(struct tracer *t)
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

bool targets_alive(struct tracer *t)
{
	return targets_gc(t, true);
}

/*
 * -t: is any of the threads alive? A thread the exit hook saw is dead; one found gone in /proc
 * (it exited before the hook was attached) is marked dead in the map too.
 */
bool tids_alive(struct tracer *t, const struct trace_config *o)
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
int add_tids(struct tracer *t, const struct trace_config *o)
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
int check_tids_attached(struct tracer *t, const struct trace_config *o)
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

int attach_pids(struct tracer *t, const struct trace_config *o)
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

/*
 * -p: each PID as its process, once: a thread's TID names its process, which is traced whole
 * (the BPF side keys processes by tgid). 0, or -ESRCH after saying which is missing.
 */
int resolve_pids(const struct trace_config *o, int **ret, size_t *ret_n)
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
int check_pids_attached(struct tracer *t, const struct trace_config *o)
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
