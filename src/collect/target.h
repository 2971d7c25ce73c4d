/* SPDX-License-Identifier: BSD-2-Clause */
/* The processes a trace follows: a launched command, or running PIDs and their descendants. */
#ifndef SCHEDPROF_SRC_TARGET_H
#define SCHEDPROF_SRC_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

/* --cgroup: a cgroup v2 directory, as the BPF side tests a task's ancestry against it. */
struct target_cgroup {
	char path[4096];    /* the real path of the directory */
	unsigned long long id; /* its cgroup id (the directory's inode number) */
	unsigned int level; /* its depth below the cgroup2 root (the root is level 0) */
};

/*
 * Resolves PATH (absolute, or relative to the cgroup v2 mount: /sys/fs/cgroup, or
 * /sys/fs/cgroup/unified on a hybrid system) into cg: 0, -ENOENT (no such path),
 * -ENOTDIR, or -EMEDIUMTYPE (not on a cgroup v2 file system).
 */
int target_cgroup_resolve(const char *path, struct target_cgroup *cg);

/* Is thread tid alive (neither gone nor a zombie)? */
bool target_tid_alive(pid_t tid);

/* A command forked but held before exec until target_launch__release(). */
struct target_launch {
	pid_t pid;
	int gate_fd;  /* write end: closing it lets the child exec */
	int error_fd; /* read end: gets the child's errno if exec fails, EOF on success */
};

/* Who a launched command runs as (target_user_resolve). */
struct target_user {
	bool set; /* false: as this process */
	uid_t uid;
	gid_t gid;
	gid_t *groups; /* supplementary groups */
	int ngroups;
	char **envp;   /* this environment with the user's HOME, USER and LOGNAME */
	char name[64];
};

/*
 * Whom to run the command as: user (a name or a numeric uid) when given; else, as root under
 * sudo, the user who ran sudo (SUDO_UID, SUDO_GID, and SUDO_USER's groups), so that `sudo
 * schedprof trace -- make` leaves no root-owned files; else (or as_root) this process's own
 * credentials (ret->set false). 0, -ENOENT (no such user; ret->name says which) or -errno.
 */
int target_user_resolve(const char *user, bool as_root, struct target_user *ret);
void target_user_free(struct target_user *u);

/*
 * Forks argv; the child waits for release, and exits without running argv if this process dies
 * first. die_with_parent: the command also gets SIGKILL when this process dies after its exec
 * (PR_SET_PDEATHSIG). user (may be NULL): the credentials it execs with; it never keeps this
 * process's ambient capabilities. 0 or -errno.
 */
/*
 * Raises the soft RLIMIT_NOFILE to the hard one: the symbolizer keeps a descriptor per object
 * it reads names from through /proc (another mount namespace's files cannot be opened again
 * by path) and perf events take one per CPU; the agent runs for weeks on hosts with many
 * containers. A command launched by target_launch__start() gets the old limit back. Nothing
 * in schedprof uses select(), so high descriptors are fine.
 */
void target_raise_nofile(void);

int target_launch__start(char *const *argv, bool die_with_parent, const struct target_user *user,
			 struct target_launch *l);
/* Lets the child exec. Returns 0 when exec succeeded, or the (negative) errno of the failed exec
 * (the child then exits 127). */
int target_launch__release(struct target_launch *l);
/* Kills and reaps a child that was never released (error paths). */
void target_launch__abort(struct target_launch *l);

/* true if process pid exists and is not a zombie (a zombie leader with live threads is alive). */
bool target_pid_alive(pid_t pid);
/* The process (thread group) that thread tid belongs to. 0 or -errno (-ESRCH: no such thread). */
int target_tgid_of(pid_t tid, pid_t *ret_tgid);
/* pids plus all their live descendants, from /proc. Caller frees *ret. 0 or -errno. */
int target_descendants(const int *pids, size_t n, int **ret, size_t *ret_n);

#endif
