/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `report --what-if`: the job's wall time predicted on other CPU counts, and
 * without given sleeps, from its timeline: the dependency graph (depgraph.h) replayed
 * (replay.h) once per CPU count and case.
 */
#ifndef SCHEDPROF_WHATIF_H
#define SCHEDPROF_WHATIF_H

#include <stddef.h>
#include <stdint.h>
#include "model/depgraph.h"
#include "model/model.h"

/* The CPU counts predicted when --what-if gives none. */
#define SP_WHATIF_DEFAULT_CPUS "1,2,4,8,16"
#define SP_WHATIF_MAX_CPUS 4096
/* At most this many CPU counts and without cases: each costs a replay of the whole run. */
#define SP_WHATIF_MAX_COUNTS 64
#define SP_WHATIF_MAX_WITHOUT 32

struct sp_whatif_opts {
	int *cpus; /* ascending, each once */
	size_t ncpus;
	char **without; /* the sleeps to shorten to zero: a class, a caller or KIND:LOCK */
	size_t nwithout;
	uint64_t slice_ns; /* the replay's slice; 0: SP_REPLAY_SLICE_NS (replay.h) */
};

/*
 * Adds one --what-if argument to o: "cpus=1,2,4" (1 to SP_WHATIF_MAX_CPUS, at most
 * SP_WHATIF_MAX_COUNTS of them) or "without=SPEC" (at most SP_WHATIF_MAX_WITHOUT). 0, -EINVAL with the reason in why, or -ENOMEM.
 */
int sp_whatif_parse(struct sp_whatif_opts *o, const char *arg, char *why, size_t whylen);
void sp_whatif_opts_free(struct sp_whatif_opts *o);

struct sp_whatif_pred {
	int cpus;
	uint64_t wall_ns;
	double parallelism; /* work / wall */
	double cp_share;    /* the critical path (P = infinity) / wall: 1 when it is the bound */
	uint64_t bound_ns;  /* max(work / P, the critical path): no replay can beat it */
	uint64_t saving_ns; /* a without case: the wall time it saves against the traced case */
	uint64_t forced;    /* bursts released with their edge unfired (replay.h) */
};

/* The traced job ([0] of the cases), or the job without some sleeps. */
struct sp_whatif_case {
	char *spec;	   /* NULL for the traced job */
	uint64_t sleeps;   /* the sleeps shortened to zero */
	uint64_t sleep_ns; /* their measured time */
	uint64_t work_ns;
	uint64_t cp_ns;	   /* the wall time on unlimited CPUs: the graph's critical path */
	struct sp_whatif_pred *preds; /* one per opts.cpus */
};

struct sp_whatif {
	int traced_cpus;      /* the CPUs the job ran on in the trace */
	uint64_t measured_ns; /* the traced wall time: the first task's start to the last run's end */
	uint64_t replayed_ns; /* the model's replay on traced_cpus (its error on its own trace) */
	uint64_t tasks, bursts;
	struct sp_dg_counts counts; /* the graph's */
	size_t npreds;
	struct sp_whatif_case *cases;
	size_t ncases;
};

/*
 * Computes w (zeroed first) from run's timeline for o (cpus empty: the defaults). A without
 * spec is a wait class ("pipe", "io", "mutex", "sleep", ...), a caller of schedule() (a
 * name, "prefix*" as waitclass.h matches them) or KIND:LOCK, the callers that slept on that
 * lock in the locks view. A spec that matches no sleep, or that would drop a wait for a
 * child (the parent needs its work), is refused: -EINVAL with the reason in why. -ENODATA:
 * the run has no timeline. -ENOMEM.
 */
int sp_whatif_compute(const struct sp_run *run, const struct sp_whatif_opts *o,
		      struct sp_whatif *w, char *why, size_t whylen);
void sp_whatif_free(struct sp_whatif *w);

#endif
