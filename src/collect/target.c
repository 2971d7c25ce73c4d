// SPDX-License-Identifier: BSD-2-Clause
/* Launching a held command, and walking /proc for a process tree. */
#include <dirent.h>
#include <grp.h>
#include <pwd.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include "collect/cgroup_names.h"
#include "collect/target.h"
#include "base/util.h"

/*
 * The child's side: held until the parent writes the go byte. EOF instead means the parent
 * died before releasing it, and then the command must not run. With die_with_parent the
 * kernel also kills it (after exec too) when the parent dies; the getppid() check closes the
 * window in which the parent died before prctl().
 */
extern char **environ;

/* RLIMIT_NOFILE as schedprof found it, given back to the command it launches */
static struct rlimit nofile_saved;
static bool nofile_raised;

void target_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	nofile_saved = rl;
	rl.rlim_cur = rl.rlim_max;
	nofile_raised = setrlimit(RLIMIT_NOFILE, &rl) == 0; /* else the old limit still works */
}

/* As user (async-signal-safe calls only: the parent has threads). 0 or an errno. */
static int become(const struct target_user *user)
{
	if (!user || !user->set)
		return 0;
	if (setgroups((size_t)user->ngroups, user->groups) || setgid(user->gid) ||
	    setuid(user->uid))
		return errno;
	return 0;
}

static void __attribute__((noreturn)) launch_child(char *const *argv, int gate, int errfd,
						   pid_t parent, bool die_with_parent,
						   const struct target_user *user)
{
	ssize_t n;
	char c;
	int e;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	if (die_with_parent && prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		_exit(127);
	if (getppid() != parent)
		_exit(127);
	do {
		n = read(gate, &c, 1);
	} while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127);
	e = become(user);
	/* a credential change clears the parent-death signal: set it again, then check */
	if (!e && user && user->set && die_with_parent &&
	    (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || getppid() != parent))
		_exit(127);
	/* schedprof's ambient capabilities (a capability-granted binary) stay with schedprof */
	if (!e)
		prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	/* the command runs with the limit it would have had without schedprof */
	if (!e && nofile_raised)
		setrlimit(RLIMIT_NOFILE, &nofile_saved);
	if (!e)
		execvpe(argv[0], argv, user && user->set && user->envp ? user->envp : environ);
	e = e ? e : errno;
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int target_launch__start(char *const *argv, bool die_with_parent, const struct target_user *user,
			 struct target_launch *l)
{
	pid_t parent = getpid(), pid;
	int gate[2], errp[2];

	if (pipe2(gate, O_CLOEXEC))
		return -errno;
	if (pipe2(errp, O_CLOEXEC)) {
		int err = -errno;

		close(gate[0]);
		close(gate[1]);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(gate[0]);
		close(gate[1]);
		close(errp[0]);
		close(errp[1]);
		return err;
	}
	if (pid == 0) {
		close(gate[1]);
		close(errp[0]);
		launch_child(argv, gate[0], errp[1], parent, die_with_parent, user);
	}
	close(gate[0]);
	close(errp[1]);
	l->pid = pid;
	l->gate_fd = gate[1];
	l->error_fd = errp[0];
	return 0;
}

int target_launch__release(struct target_launch *l)
{
	ssize_t n;
	int e = 0;
	char go = 1;

	do {
		n = write(l->gate_fd, &go, 1);
	} while (n < 0 && errno == EINTR);
	e = n == 1 ? 0 : -errno;
	close(l->gate_fd);
	l->gate_fd = -1;
	if (e) /* the child has gone: it exits 127 on EOF */
		return e == -EPIPE ? -ECHILD : e;
	do {
		n = read(l->error_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(l->error_fd);
	l->error_fd = -1;
	if (n == sizeof(e))
		return -(e ? e : ENOEXEC);
	return 0;
}

void target_launch__abort(struct target_launch *l)
{
	if (l->pid <= 0)
		return;
	kill(l->pid, SIGKILL);
	if (l->gate_fd >= 0)
		close(l->gate_fd);
	if (l->error_fd >= 0)
		close(l->error_fd);
	while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
		;
	l->pid = -1;
}

/* Reads state and ppid from /proc/PID/stat; comm may hold spaces and parentheses. */
static int read_stat(pid_t pid, char *ret_state, pid_t *ret_ppid)
{
	char path[64], buf[1024], *p;
	int err, ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	err = read_small_file(path, buf, sizeof(buf));
	if (err)
		return err;
	if (!buf[0])
		return -ESRCH;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %d", ret_state, &ppid) != 2)
		return -EINVAL;
	*ret_ppid = ppid;
	return 0;
}

/* A field "Name:\tvalue" of /proc/PID/status, as a number. 0 or -errno. */
static int read_status_field(pid_t pid, const char *name, long *ret)
{
	char path[64], line[256];
	size_t len = strlen(name);
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, name, len) || line[len] != ':')
			continue;
		err = sscanf(line + len + 1, "%ld", ret) == 1 ? 0 : -EINVAL;
		break;
	}
	fclose(f);
	return err;
}

/* A zombie thread-group leader whose other threads still run: its process is alive. */
static bool state_alive(pid_t pid, char st)
{
	long threads;

	if (st == 'X')
		return false;
	if (st != 'Z')
		return true;
	return read_status_field(pid, "Threads", &threads) == 0 && threads > 1;
}

bool target_pid_alive(pid_t pid)
{
	pid_t ppid;
	char st;

	return read_stat(pid, &st, &ppid) == 0 && state_alive(pid, st);
}

#define CGROUP2_MAGIC 0x63677270 /* CGROUP2_SUPER_MAGIC */

/* Is dir a directory on a cgroup v2 file system? Its st_dev into *ret_dev. */
static bool on_cgroup2(const char *dir, dev_t *ret_dev)
{
	struct statfs fs;
	struct stat st;

	if (statfs(dir, &fs) || fs.f_type != CGROUP2_MAGIC || stat(dir, &st))
		return false;
	*ret_dev = st.st_dev;
	return true;
}

int target_cgroup_resolve(const char *path, struct target_cgroup *cg)
{
	char given[4096], root[4096], *slash;
	struct stat st;
	dev_t dev, up_dev;

	cgroup2_mount(root, sizeof(root));
	if (snprintf(given, sizeof(given), "%s%s%s", path[0] == '/' ? "" : root,
		     path[0] == '/' ? "" : "/", path) >= (int)sizeof(given))
		return -ENAMETOOLONG;
	if (!realpath(given, cg->path))
		return -errno;
	if (stat(cg->path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (!on_cgroup2(cg->path, &dev))
		return -EMEDIUMTYPE;
	cg->id = st.st_ino; /* cgroup v2: the kernfs node id, as cgroup ids are */
	cg->level = 0;
	/* up to the mount's root: each parent still on the same cgroup2 mount is one level */
	strcpy(given, cg->path);
	while ((slash = strrchr(given, '/')) && slash != given) {
		*slash = '\0';
		if (!on_cgroup2(given, &up_dev) || up_dev != dev)
			break;
		cg->level++;
	}
	if (slash == given && on_cgroup2("/", &up_dev) && up_dev == dev)
		cg->level++; /* cgroup2 mounted on / itself: unlikely, but then "/" is the root */
	return 0;
}

bool target_tid_alive(pid_t tid)
{
	pid_t ppid;
	char st;

	return read_stat(tid, &st, &ppid) == 0 && st != 'Z' && st != 'X' && st != 'x';
}

int target_tgid_of(pid_t tid, pid_t *ret_tgid)
{
	long tgid;
	int err = read_status_field(tid, "Tgid", &tgid);

	if (err)
		return err == -ENOENT ? -ESRCH : err;
	*ret_tgid = (pid_t)tgid;
	return 0;
}

int target_descendants(const int *pids, size_t n, int **ret, size_t *ret_n)
{
	struct proc { int pid, ppid; } *procs = NULL;
	size_t np = 0, pcap = 0, out_n = 0, out_cap = 0;
	int *out = NULL, err = 0;
	struct dirent *de;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		uint64_t v;
		pid_t ppid;
		char st;

		if (parse_u64(de->d_name, 1, 0x3fffffff, &v))
			continue;
		if (read_stat((pid_t)v, &st, &ppid) || !state_alive((pid_t)v, st))
			continue;
		err = grow((void **)&procs, &pcap, np + 1, sizeof(*procs));
		if (err)
			goto out;
		procs[np].pid = (int)v;
		procs[np].ppid = ppid;
		np++;
	}
	for (size_t i = 0; i < n; i++) {
		err = grow((void **)&out, &out_cap, out_n + 1, sizeof(*out));
		if (err)
			goto out;
		out[out_n++] = pids[i];
	}
	/* Breadth first: out grows while it is scanned. */
	for (size_t i = 0; i < out_n; i++) {
		for (size_t j = 0; j < np; j++) {
			if (procs[j].ppid != out[i] || procs[j].pid == out[i])
				continue;
			err = grow((void **)&out, &out_cap, out_n + 1, sizeof(*out));
			if (err)
				goto out;
			out[out_n++] = procs[j].pid;
			procs[j].ppid = -1; /* never twice */
		}
	}
out:
	closedir(d);
	free(procs);
	if (err) {
		free(out);
		return err;
	}
	*ret = out;
	*ret_n = out_n;
	return 0;
}

/* environ with HOME, USER and LOGNAME of pw (built here: the child may not allocate). */
static char **user_environ(const struct passwd *pw)
{
	static const char *const keys[] = { "HOME=", "USER=", "LOGNAME=" };
	const char *vals[] = { pw->pw_dir, pw->pw_name, pw->pw_name };
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 4, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		bool replaced = false;

		for (size_t j = 0; j < 3; j++)
			replaced |= !strncmp(environ[i], keys[j], strlen(keys[j]));
		if (!replaced)
			env[k++] = environ[i]; /* borrowed */
	}
	for (size_t j = 0; j < 3; j++, k++) {
		if (asprintf(&env[k], "%s%s", keys[j], vals[j]) < 0) {
			while (j--)
				free(env[--k]);
			free(env);
			return NULL;
		}
	}
	return env;
}

void target_user_free(struct target_user *u)
{
	if (!u)
		return;
	if (u->envp) {
		size_t n = 0;

		while (u->envp[n])
			n++;
		/* the last three are ours, the others environ's */
		for (size_t i = n >= 3 ? n - 3 : 0; i < n; i++)
			free(u->envp[i]);
		free(u->envp);
	}
	free(u->groups);
	memset(u, 0, sizeof(*u));
}

/* A uid from a decimal string, or -1. */
static long parse_uid(const char *s)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end || v < 0 || v > (long)INT32_MAX ? -1 : v;
}

int target_user_resolve(const char *user, bool as_root, struct target_user *ret)
{
	struct passwd *pw = NULL;
	long uid = -1, gid = -1;
	uid_t su;
	gid_t sg;
	int n = 0;

	memset(ret, 0, sizeof(*ret));
	if (as_root)
		return 0;
	if (user) {
		snprintf(ret->name, sizeof(ret->name), "%s", user);
		errno = 0;
		pw = getpwnam(user);
		if (!pw && (uid = parse_uid(user)) >= 0)
			pw = getpwuid((uid_t)uid);
		if (!pw)
			return errno && errno != ENOENT && errno != ESRCH ? -errno : -ENOENT;
	} else {
		if (!sudo_caller(&su, &sg))
			return 0; /* not root under sudo: as this process */
		uid = su;
		gid = sg;
		pw = getpwuid(su);
	}
	ret->uid = pw ? pw->pw_uid : (uid_t)uid;
	ret->gid = gid >= 0 ? (gid_t)gid : pw ? pw->pw_gid : (gid_t)ret->uid;
	if (pw) {
		snprintf(ret->name, sizeof(ret->name), "%s", pw->pw_name);
		getgrouplist(pw->pw_name, ret->gid, NULL, &n);
		ret->groups = calloc(n > 0 ? (size_t)n : 1, sizeof(gid_t));
		if (!ret->groups)
			return -ENOMEM;
		if (getgrouplist(pw->pw_name, ret->gid, ret->groups, &n) < 0)
			n = 0;
		ret->ngroups = n;
		ret->envp = user_environ(pw);
		if (!ret->envp) {
			target_user_free(ret);
			return -ENOMEM;
		}
	} else { /* a SUDO_UID without a passwd entry: that uid and gid, no other groups */
		snprintf(ret->name, sizeof(ret->name), "uid %ld", uid);
		ret->groups = calloc(1, sizeof(gid_t));
		if (!ret->groups)
			return -ENOMEM;
		ret->groups[0] = ret->gid;
		ret->ngroups = 1;
	}
	ret->set = ret->uid != 0 || ret->gid != 0;
	return 0;
}
