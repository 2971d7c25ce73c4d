/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The trace engine's own state, shared by its files and by nothing else: trace.c (the run,
 * start to report), trace_load.c (open, load, attach), trace_wait.c (signals, intervals, the
 * wait for the end, the command's fate), trace_targets.c (the traced set), collectors.c (the
 * views' collectors).
 */
#ifndef SCHEDPROF_TRACER_H
#define SCHEDPROF_TRACER_H

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "base/log.h"
#include "base/util.h"
#include "collect/collector.h"
#include "collect/target.h"
#include "collect/trace.h"
#include "loader/corebtf.h"
#include "loader/kfeatures.h"
#include "model/model.h"
#include "model/run_delta.h"

/* The collectors, one per view (collectors.c): ncollectors, at most TRACE_MAX_COLLECTORS */
#define TRACE_MAX_COLLECTORS 16
extern const struct collector *const collectors[];
extern const size_t ncollectors;

/* The first stop signal, whether the terminal sent it (to the whole process group), and how
 * many (trace_wait.c) */
extern volatile sig_atomic_t stop_signal, stop_by_tty, stop_count;

/* Shown at the default level, without "warning:": what happens to the user's command, and -d's. */
#define notice(...) log_msg(LOG_ERROR, __VA_ARGS__)

struct tracer {
	struct trace_ctx ctx;
	struct schedprof_bpf *skel;
	void *state[TRACE_MAX_COLLECTORS];
	struct bpf_link *fork_link, *exit_link, *exec_link;
	struct bpf_link *ufork_link; /* sp_ufork, with --stacks' learned rules */
	struct bpf_link *switch_link; /* the one sched_switch program, shared by the views */
	struct bpf_link *free_link;   /* sp_task_free, with the per-task hashes only */
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
	/* kallsyms is read on a thread while libbpf parses BTF and loads (neither waits) */
	pthread_t ksyms_thread;
	bool ksyms_started;
	bool fold_cached; /* fold configuration from the boot's cache: no need to wait */
	int ksyms_err;
	bool ksyms_warned; /* kallsyms gives no addresses, and the start-up said so */
	/*
	 * Per collector: why its view is left out after the verifier refused one of its
	 * programs ("" while it is not); the object is opened again without it.
	 */
	char refused[TRACE_MAX_COLLECTORS][320];
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

enum trace_end { END_TARGET, END_DURATION, END_SIGNAL, END_QUIT };

static inline double ms_since(uint64_t t0)
{
	return (now_ns(CLOCK_MONOTONIC) - t0) / 1e6;
}

/* trace.c */
void tracer_destroy(struct tracer *t);
int tracer_read(struct tracer *t, struct sp_run *run);
void fill_run_info(struct sp_run *run, const struct trace_config *o, const struct tracer *t);

/* trace_load.c */
int trace_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap);
int ksyms_start(struct tracer *t);
int ksyms_join(struct tracer *t);
int tracer_prepare(struct tracer *t, const struct trace_config *o);
int tracer_attach(struct tracer *t);
void tracer_detach(struct tracer *t);

/* trace_wait.c */
void install_signals(void);
void tracer_reap(struct tracer *t, int options);
int tracer_interval_of(struct tracer *t, const struct trace_config *o, struct sp_run *cur,
		       uint64_t now, bool last);
enum trace_end wait_for_end(struct tracer *t, const struct trace_config *o, uint64_t t0);
void settle_command(struct tracer *t, const struct trace_config *o, enum trace_end end);
int command_status(const struct tracer *t);

/* trace_targets.c */
bool targets_gc(struct tracer *t, bool check_proc);
uint64_t targets_left(struct tracer *t);
bool targets_alive(struct tracer *t);
bool tids_alive(struct tracer *t, const struct trace_config *o);
int add_tids(struct tracer *t, const struct trace_config *o);
int check_tids_attached(struct tracer *t, const struct trace_config *o);
int attach_pids(struct tracer *t, const struct trace_config *o);
int resolve_pids(const struct trace_config *o, int **ret, size_t *ret_n);
int check_pids_attached(struct tracer *t, const struct trace_config *o);

#endif
