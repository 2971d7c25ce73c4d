/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The in-memory model of one run. `trace` fills it from the BPF maps (symbolized), the
 * JSON writer serializes it, the JSON reader rebuilds it, and every output format
 * (table, json, folded, pprof, flame graph) renders from it, so `trace -f X` and
 * `trace -f json | report -f X` print the same thing.
 *
 * All strings are owned (malloc'd) by the model; sp_run_free() releases everything.
 */
#ifndef SCHEDPROF_MODEL_H
#define SCHEDPROF_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SP_SCHEMA "schedprof/1"

/* Per process-name breakdown of a row. */
struct sp_comm_stat {
	char *comm;
	uint64_t count;
	uint64_t time_ns; /* off-CPU time (schedules), wait time (locks), 0 (profile) */
	uint64_t max_ns;
};

struct sp_comm_list {
	struct sp_comm_stat *v;
	size_t n, cap;
};

/*
 * What a frame is beyond its name: enough to symbolize it again later (report,
 * pprof, a debuginfod-backed server). Every member may be unknown (0, NULL, false).
 */
struct sp_frame_info {
	uint64_t addr;	   /* kernel frame: its address; user frame: offset in its object file;
			    * 0 unknown */
	char *build_id;	   /* user frame: its object's GNU build-id, lowercase hex; NULL: unknown
			    * or kernel */
	char *system_name; /* the name as in the object's symbol table when frames[i] is demangled; NULL */
	char *file;	   /* source file from DWARF (--lines); NULL */
	unsigned int line; /* source line; 0 */
	bool inlined;	   /* an inlined call: frames[i] was inlined into frames[i + 1] (same addr) */
};

/* One full stack behind a row. frames[0] is the leaf (innermost) frame. */
struct sp_stack_row {
	char **frames;	/* symbol names ("anon_pipe_read", "main", "[unknown]", "cc1+0x1a2b3c") */
	char **objects; /* per frame: "[kernel]", module "[ext4]", or a file path; NULL = all [kernel] */
	struct sp_frame_info *info; /* NULL, or nframes entries parallel to frames */
	size_t nframes;
	char *comm;
	int pid; /* the process (tgid) of the tasks; 0 = unknown (idle, not recorded) */
	uint64_t count;
	uint64_t time_ns;
};

struct sp_stack_list {
	struct sp_stack_row *v;
	size_t n, cap;
};

/* ---- schedules view ---- */

/* Who ended a row's sleeps: the waker's comm, and its function with --wakers. */
struct sp_waker {
	char *comm;	/* the waking task's comm; "[irq]", "[softirq]" in interrupt context */
	char *function; /* first frame outside the wake-up machinery, "[timer]"; NULL: not walked */
	uint64_t count;
};

struct sp_waker_list {
	struct sp_waker *v;
	size_t n, cap;
};

/*
 * Who took a row's CPU while its tasks waited for one (include/schedprof/sched.h struct
 * sp_taker_key): the task that preempted them, or the one that ran on the CPU just before
 * their switch-ins; by comm and cgroup, inside the traced set or outside it.
 */
struct sp_cpu_taker {
	char *kind;   /* "preempted-by", "ran-before", or "ran-during" (--timeline: exact) */
	char *comm;
	char *cgroup; /* its cgroup v2 path ("/": the root); NULL: unknown */
	uint64_t cgroup_id; /* (not saved: named by the collector) */
	char *where;  /* "inside" the traced set, or "outside" */
	uint64_t count;
	/* preempted-by: the waits after; ran-before, ran-during: its runs' time in the waits */
	uint64_t ns;
};

struct sp_cpu_taker_list {
	struct sp_cpu_taker *v;
	size_t n, cap;
};

struct sp_sched_row {
	char *caller; /* "anon_pipe_read", "[preempted]", "cpu_idle", "[unknown]" */
	char *wait;   /* "rwsem-write", "mutex", "io", "pipe", ... or NULL */
	uint64_t count;
	uint64_t offcpu_ns;  /* = blocked_ns + runq_ns */
	uint64_t max_ns;
	/* OFF-CPU split at the wake-up (all of it RUNQ for [preempted]) */
	uint64_t blocked_ns; /* switch-out to wake-up */
	uint64_t runq_ns;    /* wake-up to switch-in: waiting for a CPU */
	uint64_t runq_p50_ns, runq_p99_ns, runq_max_ns; /* from the in-kernel log2 histogram */
	uint64_t unfinished; /* sleeps still in progress at the end, charged up to it */
	/* the part of runq_ns its CFS group (or an ancestor) was throttled by a CPU quota */
	uint64_t throttled_ns;
	/* its sleeps that ended on another CPU than they began on, and their part of runq_ns */
	uint64_t migrated, migrated_runq_ns;
	/*
	 * --timeline: of runq_ns, the time its CPU ran another task while a CPU its affinity
	 * allowed sat idle (a work-conservation miss); and its wake-ups that found their CPU busy
	 * while an allowed one was idle.
	 */
	uint64_t idle_miss_ns, missed_wakeups;
	/*
	 * blocked_ns .. unfinished were measured: the collector sets it on every row it fills
	 * them in (a run saved by an older version has none). JSON: those keys are written, and
	 * read, as a group when it is true.
	 */
	bool has_runq;
	struct sp_waker_list wakers; /* by count, desc */
	struct sp_cpu_taker_list takers; /* by ns, desc */
	struct sp_comm_list comms;
	struct sp_stack_list stacks;
};

/*
 * The job's time budget: every traced task's time in the window, on a CPU,
 * waiting for one, or blocked (by wait class). For a fixed set of tasks the three add up
 * to tasks x elapsed.
 */
struct sp_budget_blocked {
	uint64_t pipe, io, rwsem_read, rwsem_write, mutex, semaphore, rtmutex, percpu_rwsem;
	uint64_t child;	/* do_wait: waiting for a child */
	uint64_t sleep; /* nanosleep, timers */
	uint64_t other;
};

/*
 * A cgroup whose CFS quota throttled traced tasks: the nearest ancestor with a quota of the
 * throttled tasks' own group (cgroup v1 cpu.cfs_quota_us, v2 cpu.max).
 */
struct sp_throttler {
	char *path;		   /* the cgroup's directory: "/sys/fs/cgroup/cpu/job" */
	unsigned int quota_us, period_us; /* settings (clamped to UINT_MAX) */
	uint64_t throttled_ns;	   /* the traced tasks' time throttled under it */
	uint64_t cg_throttled_ns;  /* its cpu.stat throttled time over the run (per CPU, summed) */
	uint64_t nr_throttled;	   /* its cpu.stat periods throttled over the run */
};

/* One CPU's steal over the run (/proc/stat). */
struct sp_cpu_steal {
	int cpu;
	uint64_t steal_ns;
};

/*
 * Time the hypervisor took: each CPU's steal over the run, and the traced tasks' share of
 * their time on a CPU when the kernel can tell it (split).
 */
struct sp_steal {
	bool present;
	bool split;	    /* the task clock leaves out steal and IRQ time: stolen_ns measured */
	uint64_t stolen_ns; /* of oncpu_ns: the slices' wall time minus their runtime, at most steal_ns */
	uint64_t steal_ns;  /* every CPU's steal over the run */
	struct sp_cpu_steal *cpus;
	size_t ncpus, cpus_cap;
};

struct sp_budget {
	bool present;
	uint64_t oncpu_ns;
	uint64_t runq_ns;
	uint64_t blocked_ns; /* the sum of blocked */
	struct sp_budget_blocked blocked;
	uint64_t tasks;	     /* tasks seen in the window */
	uint64_t throttled_ns; /* of runq_ns: throttled by a CPU quota */
	struct sp_throttler *throttlers; /* by throttled_ns, desc */
	size_t nthrottlers, throttlers_cap;
	struct sp_steal steal;
	/* --timeline: the rows' idle_miss_ns and missed_wakeups summed, new tasks' waits too */
	uint64_t idle_miss_ns, missed_wakeups;
};

/*
 * The caller fast path: voluntary switches (lock contentions) attributed from the
 * raw stack words, how many of those a full walk checked too, and how many it disagreed with.
 */
struct sp_caller_cache {
	bool present; /* the fast path was on (no full stacks kept) */
	uint64_t fast;
	uint64_t verified;
	uint64_t mismatched;
	bool verify_all; /* --verify-callers: every one was checked */
	uint64_t memo;	 /* of fast: from the memo of stacks built (faststack.bpf.h) */
	uint64_t attributed; /* locks: contentions given a caller (the schedules': voluntary) */
	uint64_t forked; /* user-stack walks: of attributed, by the rules of a forked-from parent */
};

/*
 * --stacks in the schedules and locks views: events whose user stack stopped short, by why
 * (the BPF walk by learned rules, or the unwind of its copy)
 */
struct sp_user_cuts {
	uint64_t cfi;	 /* at code whose CFI the walk cannot follow (none, an expression,
			    a table over its limit) */
	uint64_t memory; /* at a stack word not readable, or past the copy */
	uint64_t depth;	 /* at the 64 frames kept */
	uint64_t lost;	 /* where the rules stopped: no copy could be sent or unwound */
};

struct sp_sched_view {
	bool present;
	uint64_t total;
	uint64_t voluntary;
	uint64_t preempted;
	uint64_t idle;
	uint64_t missing_stacks; /* counted, but no stack could be read or kept */
	/* --stacks: schedules whose kept stack has user frames cut short / lacks its user frames */
	uint64_t user_truncated, user_missing;
	struct sp_user_cuts user_cuts; /* --stacks: why user stacks stopped short */
	uint64_t lost_rows;	 /* counted in the totals, but no row (row map full) */
	bool wakers;		 /* --wakers: the wakers' functions were walked */
	struct sp_caller_cache cache;
	/* full stacks: the kept kernel stacks from the raw words; --wakers: the wakers' stacks */
	struct sp_caller_cache stack_cache, waker_cache;
	struct sp_caller_cache ustack_cache; /* --stacks: user-stack walks from the BPF memo */
	struct sp_budget budget;
	struct sp_cpu_taker_list takers; /* the rows' takers summed (sp_sched_sum_takers()) */
	struct sp_sched_row *rows;
	size_t nrows, cap;
};

/* ---- profile view (sampled PCs) ---- */
struct sp_profile_row {
	char *function; /* "do_syscall_64", "main", "[unknown]" */
	char *object;	/* "[kernel]", "[ext4]", "/usr/bin/cc1", "[vdso]", "[unknown]" */
	struct sp_frame_info *info; /* NULL, or the row's function's identity */
	uint64_t samples;
	struct sp_comm_list comms;   /* count = samples, time_ns unused */
	struct sp_stack_list stacks; /* kernel frames then user frames, leaf first */
};

struct sp_profile_view {
	bool present;
	unsigned int hz;
	int cpus;
	bool callchains;	 /* -g */
	uint64_t total;		 /* every sample, in exactly one class: */
	uint64_t idle;		 /*   the idle task */
	uint64_t target;	 /*   a traced task (everything but idle with -a) */
	uint64_t other;		 /*   anything else */
	uint64_t unsymbolized;	 /* target samples whose leaf could not be named */
	uint64_t lost;		 /* counted in the classes, but in no row (map full) */
	uint64_t user_truncated; /* user stacks cut short (no frame pointers, depth) */
	uint64_t missing_stacks; /* -g: counted in rows, but a stack could not be read or kept */
	struct sp_profile_row *rows;
	size_t nrows, cap;
};

/* ---- locks view (contention and sleepers) ---- */
struct sp_lock_row {
	char *caller; /* first frame outside lock and scheduler text */
	char *kind;   /* "spinlock", "rwlock-read", "rwsem-write", "mutex", ... */
	char *lock;   /* "tasklist_lock", "inode.i_rwsem", "0xffff..." */
	char *source; /* how lock was named: "task", "layout", "symbol", "address" (lockname.h) */
	uint64_t count;
	uint64_t wait_ns;
	uint64_t max_ns;
	uint64_t failed; /* contentions that gave up (ret < 0) */
	struct sp_comm_list comms;
	struct sp_stack_list stacks;
	struct sp_comm_list owners; /* comm = the owner's when the wait began; count, wait */
};

/* Time tasks spent off CPU in a sleeping-lock slow path, joined with the schedules view. */
struct sp_sleeper_row {
	char *caller;
	char *kind;
	char *lock;
	uint64_t tasks; /* distinct tasks that slept there */
	uint64_t count;
	uint64_t offcpu_ns;
	uint64_t max_ns;
	struct sp_comm_list comms;
};

/*
 * Sleepers by (comm, kind, lock): "dirlock: 8 tasks slept 1.9s in rwsem-write on
 * inode.i_rwsem, from path_openat / do_unlinkat". tasks counts distinct tasks of the group,
 * which the per-caller rows cannot give (a task sleeps from several callers).
 */
struct sp_sleeper_group {
	char *comm;
	char *kind;
	char *lock;
	uint64_t tasks;
	uint64_t count; /* sleeps */
	uint64_t offcpu_ns;
	uint64_t max_ns;
	struct sp_comm_list callers; /* by caller: .comm holds the caller's name */
};

struct sp_lock_view {
	bool present;
	bool available;	   /* false: the kernel lacks lock:contention_* (reason says why) */
	char *unavailable; /* NULL when available */
	uint64_t total;	   /* contentions of traced tasks */
	uint64_t failed;
	uint64_t lost;	   /* counted, but in no row (map full) */
	uint64_t missing_stacks;
	uint64_t user_truncated, user_missing; /* --stacks: as the schedules view's */
	struct sp_user_cuts user_cuts;
	struct sp_lock_row *rows;
	size_t nrows, cap;
	struct sp_sleeper_row *sleepers;
	size_t nsleepers, sleepers_cap;
	uint64_t missed;   /* events the kernel did not run the programs for (recursion guard) */
	uint64_t unpaired; /* begins whose end never came (lost while attaching, nesting) */
	struct sp_sleeper_group *groups;
	size_t ngroups, groups_cap;
	struct sp_caller_cache cache; /* lock_begin's caller fast path */
	struct sp_caller_cache stack_cache; /* lock_begin_full's kept stacks from the raw words */
	struct sp_caller_cache ustack_cache; /* --stacks: user-stack walks from the BPF memo */
};

/* ---- timeline (--timeline): the traced tasks' states over time ---- */

enum sp_tl_state { SP_TL_RUNNING = 0, SP_TL_RUNNABLE, SP_TL_BLOCKED };
/* "running", "runnable", "blocked" (the JSON's names); "?" out of range */
const char *sp_tl_state_name(enum sp_tl_state s);

/* A task seen in the timeline. Times are ns since the run's start (start_unix_ns). */
struct sp_tl_task {
	int tid;
	int pid;	  /* its process (tgid) */
	int parent_tid;	  /* the task that forked it in the window; 0: it existed before */
	char *comm;	  /* its last comm (after exec) */
	uint64_t start_ns; /* fork, or the start of the trace */
	uint64_t end_ns;   /* exit, or the end of the trace */
	bool exited;
};

/*
 * One interval of one task in one state. Consecutive segments of a task tile its life
 * [start_ns, end_ns) with no gap and no overlap.
 */
struct sp_tl_seg {
	int tid;
	enum sp_tl_state state;
	uint64_t start_ns, ns;
	char *comm;	  /* the task's comm then */
	int cpu;	  /* running: its CPU; else -1 */
	char *caller;	  /* blocked: the caller of schedule(); runnable: "[preempted]",
			   * "[woken]", "[new]"; running: NULL */
	char *wait;	  /* blocked: its class (as struct sp_budget_blocked: "pipe", "child",
			   * "sleep", "other", a lock kind); else NULL */
	int waker_tid;	  /* blocked: the traced task whose wake-up ended it; 0: none */
	char *waker_comm; /* blocked: the waker's comm, "[irq]", "[softirq]"; NULL: not woken */
	char *waker;	  /* blocked: the waker's function (--wakers); NULL */
	bool unfinished;  /* cut by the end of the trace */
	bool throttled;	  /* runnable: preempted while its CPU quota's group was throttled */
	uint64_t stolen_ns; /* running: of ns, not the task's (hypervisor steal, IRQ time) */
};

/* A step of the critical path, in time order. */
struct sp_cp_seg {
	char *comm;
	int tid;
	enum sp_tl_state state;
	char *caller; /* as in struct sp_tl_seg; NULL when running */
	uint64_t start_ns, ns;
	bool alone;   /* running while no other task of the job ran: the job was serial */
	bool throttled; /* runnable while its CPU quota's group was throttled (sp_tl_seg's) */
};

/* The critical path's time by (comm, state, caller), ranked by ns desc. */
struct sp_cp_rank {
	char *comm;
	enum sp_tl_state state;
	char *caller;
	bool alone; /* as in struct sp_cp_seg: "ld running alone" ranks apart from "ld running" */
	bool throttled; /* as in struct sp_cp_seg, and ranked apart as alone is */
	uint64_t ns;
};

struct sp_par_bucket {
	int n;	     /* tasks running (or runnable) */
	uint64_t ns; /* for how long */
};

/* The mean n of a histogram over the time it covers (0 when empty). */
double sp_par_mean(const struct sp_par_bucket *b, size_t nb);

/* Two histograms side by side: for each n in either, its time in each. */
struct sp_par_pair {
	int n;
	uint64_t a, b; /* sums of the buckets of that n (saturating) */
};

/*
 * The n of ha and hb (in any order, repeated or not) by n ascending, each once, with their
 * times: *ret (malloc'd, free() it) of *ret_n pairs. n log n, whatever the values of n.
 * 0 or -ENOMEM.
 */
int sp_par_pairs(const struct sp_par_bucket *ha, size_t na, const struct sp_par_bucket *hb,
		 size_t nb, struct sp_par_pair **ret, size_t *ret_n);

/* At least 100 ms with one running task of the job while CPUs were idle. */
struct sp_serial_phase {
	char *comm;
	int tid;
	uint64_t start_ns, ns;
};

struct sp_timeline {
	bool present;
	uint64_t buffer_bytes; /* the ring buffer's size */
	uint64_t events;       /* events received */
	uint64_t lost;	       /* events the ring buffer had no room for */
	uint64_t dropped;      /* events after the segment limit (the timeline is cut there) */
	uint64_t end_ns;       /* the job's end: where the critical path starts, backwards */
	int end_tid;	       /* the task it starts from (the command's; the last to exit) */
	struct sp_tl_task *tasks;
	size_t ntasks, tasks_cap;
	struct sp_tl_seg *segs; /* by task, then time */
	size_t nsegs, segs_cap;
	/* computed from tasks and segs (critpath.c), saved with them */
	uint64_t cp_total_ns;
	struct sp_cp_seg *cp;
	size_t ncp, cp_cap;
	struct sp_cp_rank *cp_ranks;
	size_t ncp_ranks, cp_ranks_cap;
	struct sp_par_bucket *running; /* by n asc: time with n tasks running */
	size_t nrunning, running_cap;
	struct sp_par_bucket *runnable; /* by n asc: time with n tasks runnable */
	size_t nrunnable, runnable_cap;
	struct sp_serial_phase *serial;
	size_t nserial, serial_cap;
	uint64_t serial_ns; /* the phases' sum */
};

/*
 * A file behind user frames (the `objects` of stack rows) and its GNU build-id, for the
 * pprof mappings. Filled by collectors that know them; empty otherwise.
 */
struct sp_object {
	char *path;
	char *build_id; /* lowercase hex */
};

struct sp_object_list {
	struct sp_object *v;
	size_t n, cap;
};

/* ---- target and run ---- */
enum sp_target_mode {
	SP_TARGET_ALL = 0, /* -a */
	SP_TARGET_PIDS,	   /* -p */
	SP_TARGET_COMMAND, /* -- COMMAND */
	SP_TARGET_CGROUP,  /* --cgroup */
	SP_TARGET_TIDS,	   /* -t */
};

struct sp_target_info {
	enum sp_target_mode mode;
	char *command;	/* argv joined with spaces (COMMAND mode) */
	bool system;	/* COMMAND mode with -a: every task traced, the job is the profile's target */
	char *cgroup;	/* CGROUP mode: the cgroup's directory */
	int *pids;	/* PIDS mode; the thread ids in TIDS mode */
	size_t npids;
	int exit_status;/* COMMAND mode: the job's exit status (128+sig when signalled) */
	bool has_rusage;
	uint64_t user_ns, sys_ns; /* COMMAND mode: the job's CPU time (children included) */
	/* COMMAND mode: its processes still running when it ended (a daemon): untraced after */
	uint64_t still_running;
};

/*
 * One interval of a trace (trace -i, top; run_delta.h): its run holds what happened between
 * start_ns and end_ns, ns since the trace's start. Absent (present false) in a whole run.
 */
struct sp_interval {
	bool present;
	uint64_t index; /* from 1 */
	uint64_t start_ns, end_ns;
};

/*
 * The views a run holds, in the order of the outputs, one line each (every file a new view
 * touches: docs/adding-a-view.md): X(name, BIT, bit, collector, by_default)
 *   name        its descriptor sp_view_<name> (src/views/<name>/model.c), its line in sp_views[]
 *   BIT, bit    its mask SP_VIEW_<BIT> = 1u << bit (view_opts.h); a bit of its own
 *   collector   what fills it: <collector>_collector (src/views/<name>/collect.c), its line in
 *               collectors[]
 *   by_default  1: trace collects it when --views does not say (in SP_VIEW_ALL); 0: only
 *               when asked (in SP_VIEW_EVERY only)
 * Its struct is a member of struct sp_run.
 */
#define SP_VIEW_LIST(X)                                                                         \
	X(schedules, SCHED, 0, sched, 1)                                                        \
	X(profile, PROFILE, 1, profile, 1)                                                      \
	X(locks, LOCKS, 2, lock, 1)                                                             \
	X(timeline, TIMELINE, 3, timeline, 0) /* --timeline */

struct sp_run {
	char *schema;	  /* SP_SCHEMA */
	char *version;	  /* schedprof version that wrote it */
	char *kernel;	  /* uname -r */
	char *hostname;
	int ncpus;
	uint64_t start_unix_ns;
	uint64_t elapsed_ns;
	struct sp_target_info target;
	char *options;	  /* the trace command line, for the record */
	struct sp_sched_view sched;
	struct sp_profile_view profile;
	struct sp_lock_view locks;
	struct sp_timeline timeline;
	struct sp_object_list objects; /* build-ids of the user objects, when known */
	struct sp_interval interval;   /* trace -i: which interval this run is */
	/*
	 * Where the run's strings live when it was read from JSON (strpool.h: each string
	 * once); NULL: each is malloc'd. Replace a string of a pooled run through the pool.
	 */
	struct sp_strpool *strings;
};

void sp_run_init(struct sp_run *run);
void sp_run_free(struct sp_run *run);

/*
 * Append helpers: a pointer to the new zeroed element, or NULL (ENOMEM). One growable-array
 * helper serves every array: *v holds *n elements of size, with room for *cap.
 */
void *sp_array_add(void **v, size_t *n, size_t *cap, size_t size);
#define SP_ARRAY_ADD(v, n, cap) \
	((__typeof__(v))sp_array_add((void **)&(v), &(n), &(cap), sizeof(*(v))))
#define sp_sched_add_row(view) SP_ARRAY_ADD((view)->rows, (view)->nrows, (view)->cap)
#define sp_profile_add_row(view) SP_ARRAY_ADD((view)->rows, (view)->nrows, (view)->cap)
#define sp_lock_add_row(view) SP_ARRAY_ADD((view)->rows, (view)->nrows, (view)->cap)
#define sp_sleeper_add_row(view) SP_ARRAY_ADD((view)->sleepers, (view)->nsleepers, (view)->sleepers_cap)
#define sp_sleeper_add_group(view) SP_ARRAY_ADD((view)->groups, (view)->ngroups, (view)->groups_cap)
#define sp_stack_list_add(l) SP_ARRAY_ADD((l)->v, (l)->n, (l)->cap)
/* Adds count/time to comm's entry (creating it); max_ns is a max. Returns 0 or -ENOMEM. */
int sp_comm_list_add(struct sp_comm_list *l, const char *comm, uint64_t count, uint64_t time_ns,
		     uint64_t max_ns);
/* Frees the entries and empties the list (for lists outside a run, e.g. a format's totals). */
void sp_comm_list_free(struct sp_comm_list *l);
/*
 * Stacks that symbolize alike (same comm, same pid, same frame names) are one row: merge_last
 * merges the last row into the first earlier one alike (adding its count and time), merge does
 * it for every row in order. The first row of each kind keeps its place.
 */
void sp_stack_list_merge_last(struct sp_stack_list *l);
/*
 * What makes two stack rows one: the same comm, pid and frame names (and the frames'
 * objects, when with_objects), and the same frame identities: both rows without
 * info, or both with info whose addr and build_id agree frame by frame (a row with info and
 * one without are never alike). Their hash (seed: whatever else keys them) and their test,
 * for every index of stacks (the merges here, the collectors' row builders).
 */
uint64_t sp_stack_row_hash(const struct sp_stack_row *s, bool with_objects, uint64_t seed);
bool sp_stack_rows_alike(const struct sp_stack_row *a, const struct sp_stack_row *b,
			 bool with_objects);
void sp_stack_list_merge(struct sp_stack_list *l);
/* Frees a stack row's strings and arrays (not the row itself). */
void sp_stack_row_free(struct sp_stack_row *s);
/*
 * d (zeroed) becomes a deep copy of s: comm, pid, frames, objects and info (counts and times
 * are the caller's). 0, or -ENOMEM with d half filled: sp_stack_row_free() it.
 */
int sp_stack_row_copy(struct sp_stack_row *d, const struct sp_stack_row *s);
/* Frees the strings of n infos and the array (malloc'd strings, not a pool's). NULL is fine. */
void sp_frame_info_free(struct sp_frame_info *info, size_t n);
/* *ret = a deep copy of n infos (NULL for NULL). 0 or -ENOMEM (then *ret is NULL). */
int sp_frame_info_dup(const struct sp_frame_info *info, size_t n, struct sp_frame_info **ret);

/*
 * What frame i of a stack is, for the outputs that mark or colour them:
 *   SP_FRAME_KERNEL: no objects (a kernel stack), object "[kernel]" or a module "[ext4]";
 *   SP_FRAME_PSEUDO: a bracketed name that is no frame ("[preempted]", "[unknown]",
 *                    "[lost]") with no object;
 *   SP_FRAME_USER:   everything else, "[vdso]" and unknown user objects "[unknown]" included.
 */
enum sp_frame_kind { SP_FRAME_KERNEL, SP_FRAME_USER, SP_FRAME_PSEUDO };
enum sp_frame_kind sp_frame_kind(const struct sp_stack_row *s, size_t i);
/* The same for a frame by its parts: object NULL when the stack has no objects; info or NULL. */
enum sp_frame_kind sp_frame_kind_of(const char *name, const char *object,
				    const struct sp_frame_info *info);
/*
 * l's stacks merged across pids (each with pid 0): what the outputs without pids show. In l's
 * order when no two stacks merged, else sorted again (sp_stack_list_sort). The rows of *ret borrow l's strings: release it with free(ret->v)
 * only, not sp_run_free. 0 or -ENOMEM (then *ret is empty).
 */
int sp_stack_list_merge_pids(const struct sp_stack_list *l, struct sp_stack_list *ret);

/*
 * Makes every string of the run valid UTF-8 (each invalid byte becomes U+FFFD, as the JSON
 * writer writes it), so that the run renders the same before and after a JSON round trip
 * (trace -f X == report -f X). 0 or -ENOMEM.
 */
int sp_run_fix_utf8(struct sp_run *run);

/*
 * Control characters in the run's strings (comms, symbols, the command: anything a process
 * can choose), which the text formats must not write raw to a terminal (textsafe.h).
 * escape replaces each string that has one by its escaped form. 0 or -ENOMEM.
 */
bool sp_run_has_controls(const struct sp_run *run);
int sp_run_escape_controls(struct sp_run *run);

/* Records path's build-id (a path already known keeps its first one). 0 or -ENOMEM. */
int sp_object_list_add(struct sp_object_list *l, const char *path, const char *build_id);
/* The build-id recorded for path, or NULL. */
const char *sp_run_build_id(const struct sp_run *run, const char *path);

/* Sorting helpers used by every format, so they all rank alike. */
/* count desc, then offcpu desc, then name; each row's wakers by count */
void sp_sched_sort(struct sp_sched_view *v);
/*
 * Adds t's count and time to the taker of l alike (kind, comm, where, and the cgroup: by id
 * where either has one, else by path), or to a copy of t appended. 0 or -ENOMEM.
 */
int sp_cpu_taker_add(struct sp_cpu_taker_list *l, const struct sp_cpu_taker *t);
/*
 * v->takers: each taker of the rows (sp_cpu_taker_add()'s alike) with its counts and times
 * summed over them, by time. 0 or -ENOMEM.
 */
int sp_sched_sum_takers(struct sp_sched_view *v);
void sp_profile_sort(struct sp_profile_view *v); /* samples desc, then function, object */
/* Ranking keys of the locks table (--sort). */
enum sp_lock_sort { SP_LOCK_SORT_WAIT = 0, SP_LOCK_SORT_COUNT, SP_LOCK_SORT_MAX };
/* By key desc, then the other two, then caller, kind, lock: a total order. */
int sp_lock_row_cmp(const struct sp_lock_row *a, const struct sp_lock_row *b,
		    enum sp_lock_sort key);
/* Rows by key; sleepers and groups by off-CPU time; their comms, owners, stacks. */
void sp_lock_sort(struct sp_lock_view *v, enum sp_lock_sort key);
void sp_comm_list_sort(struct sp_comm_list *l);
void sp_stack_list_sort(struct sp_stack_list *l);

#endif
