// SPDX-License-Identifier: BSD-2-Clause
/*
 * bench/cfisample.c -- how far the CFI unwinder (src/symbols/cfi_unwind.c) gets on a running
 * process, without BPF: samples PID N times, 20 ms apart, each time stopping it (ptrace),
 * copying its registers and stack (/proc/PID/mem, up to the end of the stack's mapping, 1 MB
 * at most) as an event's copy would be, and unwinding it by the rows (src/symbols/cfi.c) of
 * every object it maps, with their debug files' .debug_frame. Prints how many samples reached
 * _start, how many had a frame named NAME (default "main"), and why the others stopped, with
 * those samples' frames on stderr. Needs ptrace rights on PID (root, or its parent).
 * Built against a build's core library:
 *   cc -O2 -D_GNU_SOURCE -Isrc/symbols -Isrc/base bench/cfisample.c build/src/libspcore.a \
 *      -lelf -ldw -lz -liberty -ldl -o cfisample && sudo ./cfisample PID 150 toplev::main
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbols/cfi_unwind.h"
#include "symbols/demangle.h"
#include "symbols/elfsyms.h"
#include "symbols/procmaps.h"

#define MAX_OBJS 256
#define MAX_FRAMES 256
#define STACK_MAX (1 << 20)

struct obj {
	char path[512];
	struct elf_syms *es;
	struct cfi_table t;
};

static struct obj objs[MAX_OBJS];
static size_t nobjs;
static struct proc_map *maps;
static size_t nmaps;

/* The object of ip (its index) and ip's link-time address, or -ENOENT. */
static int obj_of(uint64_t ip, uint64_t *vaddr)
{
	const struct proc_map *m = proc_maps__find(maps, nmaps, ip);
	size_t i;

	if (!m || m->path[0] != '/')
		return -ENOENT;
	for (i = 0; i < nobjs && strcmp(objs[i].path, m->path); i++)
		;
	if (i == nobjs) {
		if (nobjs == MAX_OBJS)
			return -ENOENT;
		snprintf(objs[i].path, sizeof(objs[i].path), "%s", m->path);
		objs[i].es = elf_syms__open(m->path);
		if (!objs[i].es)
			return -ENOENT;
		/* a table that cannot be compiled whole keeps the rows it has */
		cfi_compile(m->path, elf_syms__debug_path(objs[i].es), 0, &objs[i].t);
		nobjs++;
	}
	if (elf_syms__offset_to_vaddr(objs[i].es, ip - m->start + m->pgoff, vaddr))
		return -ENOENT;
	return (int)i;
}

static int find(void *ctx, uint64_t ip, const struct cfi_row **row)
{
	uint64_t va;
	int i = obj_of(ip, &va);

	(void)ctx;
	if (i < 0)
		return i;
	*row = cfi_table_find(&objs[i].t, va);
	return 0;
}

/* Frame ip's function, demangled ("?" when no symbol covers it). Valid until the next call. */
static const char *name_of(uint64_t ip, bool leaf)
{
	static char *demangled;
	uint64_t va;
	int i = obj_of(leaf ? ip : ip - 1, &va);
	const char *name = i >= 0 ? elf_syms__lookup_vaddr(objs[i].es, va, NULL) : NULL;

	free(demangled);
	demangled = name && sp_name_is_mangled(name) ? sp_demangle(name) : NULL;
	return demangled ? demangled : name ? name : "?";
}

/* One sample into ips and *res: 0, or -errno when PID could not be stopped or read. */
static int sample(pid_t pid, uint8_t *buf, uint64_t *ips, struct unwind_result *res)
{
	struct user_regs_struct ur;
	const struct proc_map *sm;
	char path[64];
	ssize_t got;
	size_t len;
	int status, fd;

	if (ptrace(PTRACE_SEIZE, pid, 0, 0) || ptrace(PTRACE_INTERRUPT, pid, 0, 0))
		return -errno;
	if (waitpid(pid, &status, __WALL) != pid || ptrace(PTRACE_GETREGS, pid, 0, &ur)) {
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return -ESRCH;
	}
	proc_maps__free(maps, nmaps);
	maps = NULL;
	nmaps = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (proc_maps__parse_file(path, &maps, &nmaps)) {
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return -ESRCH;
	}
	sm = proc_maps__find(maps, nmaps, ur.rsp);
	len = sm ? sm->end - ur.rsp : 0;
	if (len > STACK_MAX)
		len = STACK_MAX;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY);
	got = fd >= 0 && len ? pread(fd, buf, len, (off_t)ur.rsp) : -1;
	if (fd >= 0)
		close(fd);
	ptrace(PTRACE_DETACH, pid, 0, 0);
	if (got <= 0)
		return -EIO;
	cfi_unwind(&(struct unwind_regs){.ip = ur.rip, .sp = ur.rsp, .bp = ur.rbp, .bx = ur.rbx},
		   &(struct unwind_stack){.base = ur.rsp, .data = buf, .len = (size_t)got}, find,
		   NULL, ips, MAX_FRAMES, res);
	return 0;
}

int main(int argc, char **argv)
{
	static uint8_t buf[STACK_MAX];
	unsigned long stops[UNWIND_STOPS] = {0}, total = 0, named = 0;
	const char *want = argc > 3 ? argv[3] : "main";
	uint64_t ips[MAX_FRAMES];
	struct unwind_result res;
	pid_t pid;
	int n, k, rc;
	size_t i;

	if (argc < 3 || (pid = atoi(argv[1])) <= 0 || (n = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: %s PID SAMPLES [NAME]\n", argv[0]);
		return 2;
	}
	for (k = 0; k < n; k++) {
		usleep(20000);
		rc = sample(pid, buf, ips, &res);
		if (rc == -ESRCH || rc == -EPERM) {
			if (!total)
				fprintf(stderr, "cfisample: cannot stop %d: %s\n", (int)pid,
					strerror(-rc));
			break;
		}
		if (rc)
			continue;
		total++;
		stops[res.stop]++;
		for (i = 0; i < res.n && !strstr(name_of(ips[i], i == 0), want); i++)
			;
		named += i < res.n;
		if (res.stop == UNWIND_END)
			continue;
		fprintf(stderr, "sample %d: %zu frames, %s:", k, res.n, unwind_stop_name(res.stop));
		for (i = 0; i < res.n; i++)
			fprintf(stderr, " %s", name_of(ips[i], i == 0));
		fprintf(stderr, "\n");
	}
	printf("%lu samples: %lu reached _start, %lu had a frame named %s;", total,
	       stops[UNWIND_END], named, want);
	for (k = 0; k < UNWIND_STOPS; k++)
		if (stops[k])
			printf(" %s %lu", unwind_stop_name(k), stops[k]);
	printf("\n");
	for (i = 0; i < nobjs; i++) {
		cfi_table_free(&objs[i].t);
		elf_syms__free(objs[i].es);
	}
	proc_maps__free(maps, nmaps);
	return total ? 0 : 1;
}
