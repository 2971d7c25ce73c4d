// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwinder (src/symbols/cfi_unwind.c): the stacks that the fixture cfistack.c copies of
 * itself, built -O2 -fomit-frame-pointer, unwound by the rows of the fixture and of libc
 * from cfi_dump up to _start (every frame named), the same across a signal handler; Debian's
 * own python3 and bash, built without frame pointers, stopped by ptrace in a system call and
 * their stacks read through /proc/PID/mem (as an event's copy would be), unwound to _start;
 * and hand-made stacks for each way a walk ends.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../unit.h"
#include "symbols/cfi_unwind.h"
#include "symbols/elfsyms.h"
#include "symbols/procmaps.h"

#define MAX_OBJS 16

/* A process's objects, as the collector would hold them. */
struct objs {
	struct proc_map *maps;
	size_t nmaps;
	struct {
		const char *path;
		struct elf_syms *es;
		struct cfi_table t;
	} o[MAX_OBJS];
	size_t n;
};

static int obj_of(struct objs *os, uint64_t ip, uint64_t *vaddr)
{
	const struct proc_map *m = proc_maps__find(os->maps, os->nmaps, ip);
	size_t i;

	if (!m || m->path[0] != '/')
		return -ENOENT;
	for (i = 0; i < os->n && strcmp(os->o[i].path, m->path); i++)
		;
	if (i == os->n) {
		ck_assert_uint_lt(i, MAX_OBJS);
		os->o[i].path = m->path;
		os->o[i].es = elf_syms__open(m->path);
		ck_assert_ptr_nonnull(os->o[i].es);
		ck_assert_int_eq(cfi_compile(m->path, elf_syms__debug_path(os->o[i].es), 0,
					     &os->o[i].t), 0);
		os->n++;
	}
	if (elf_syms__offset_to_vaddr(os->o[i].es, ip - m->start + m->pgoff, vaddr))
		return -ENOENT;
	return (int)i;
}

static int find(void *ctx, uint64_t ip, const struct cfi_row **row)
{
	struct objs *os = ctx;
	uint64_t va;
	int i = obj_of(os, ip, &va);

	if (i < 0)
		return i;
	*row = cfi_table_find(&os->o[i].t, va);
	return 0;
}

/* The name of frame ip ("?" when none); a return address is looked up at ip - 1. */
static const char *name_of(struct objs *os, uint64_t ip, bool leaf)
{
	uint64_t va;
	const char *name;
	int i = obj_of(os, leaf ? ip : ip - 1, &va);

	if (i < 0)
		return "?";
	name = elf_syms__lookup_vaddr(os->o[i].es, va, NULL);
	return name ? name : "?";
}

static void objs_free(struct objs *os)
{
	size_t i;

	for (i = 0; i < os->n; i++) {
		cfi_table_free(&os->o[i].t);
		elf_syms__free(os->o[i].es);
	}
	proc_maps__free(os->maps, os->nmaps);
}

/* The bytes of the last copy unwind_fixture() read. */
static size_t copied;

/* Runs cfistack (mode "" or "signal"), unwinds its copy, names its frames into names. */
static void unwind_fixture(const char *mode, char names[][64], size_t max,
			   struct unwind_result *res)
{
	char dir[64], out[128], maps[160], cmd[512];
	uint64_t hdr[4], ips[64];
	struct unwind_regs regs;
	struct unwind_stack st;
	struct objs os;
	uint8_t *data;
	FILE *f;
	size_t i;

	ck_assert_uint_le(max, 64);
	unit_tmpdir_make(dir, sizeof(dir), "cfiunw");
	snprintf(out, sizeof(out), "%s/stack", dir);
	snprintf(maps, sizeof(maps), "%s.maps", out);
	snprintf(cmd, sizeof(cmd), "%s %s %s", CFISTACK, out, mode);
	ck_assert_int_eq(system(cmd), 0);
	f = fopen(out, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(hdr, sizeof(hdr), 1, f), 1);
	ck_assert_uint_le(hdr[3], 1 << 20);
	data = malloc(hdr[3] + 1);
	ck_assert_ptr_nonnull(data);
	ck_assert_uint_eq(fread(data, 1, hdr[3], f), hdr[3]);
	fclose(f);
	copied = hdr[3];

	memset(&os, 0, sizeof(os));
	ck_assert_int_eq(proc_maps__parse_file(maps, &os.maps, &os.nmaps), 0);
	regs = (struct unwind_regs){.ip = hdr[0], .sp = hdr[1], .bp = hdr[2]};
	st = (struct unwind_stack){.base = hdr[1], .data = data, .len = hdr[3]};
	cfi_unwind(&regs, &st, find, &os, ips, max, res);
	for (i = 0; i < res->n; i++)
		snprintf(names[i], sizeof(names[i]), "%s", name_of(&os, ips[i], i == 0));
	objs_free(&os);
	free(data);
	unlink(out);
	unlink(maps);
	unit_tmpdir_remove(dir);
}

/* names[at..] are cfi_f8, ..., cfi_f1, main, libc's start and _start. */
static void assert_callers(char names[][64], size_t n, size_t at)
{
	char want[16];
	int k;

	ck_assert_uint_ge(n, at + 11);
	for (k = 8; k >= 1; k--) {
		snprintf(want, sizeof(want), "cfi_f%d", k);
		ck_assert_str_eq(names[at + 8 - k], want);
	}
	ck_assert_str_eq(names[at + 8], "main");
	/* libc's own names when its debug file is installed (libc6-dbg), else none */
	if (strcmp(names[at + 9], "?"))
		ck_assert_str_eq(names[at + 9], "__libc_start_call_main");
	ck_assert_str_eq(names[n - 1], "_start");
}

START_TEST(test_unwind_copied_stack)
{
	char names[64][64];
	struct unwind_result res;

	unwind_fixture("", names, 64, &res);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s after %zu frames",
		      unwind_stop_name(res.stop), res.n);
	ck_assert_str_eq(names[0], "cfi_dump");
	assert_callers(names, res.n, 1);
	ck_assert_uint_eq(res.fp_frames, 0);
	ck_assert_uint_eq(res.signal_frames, 0);
	/* _start's frame is below the environment: not the whole copy */
	ck_assert_uint_gt(res.used, 8 * 10);
	ck_assert_uint_lt(res.used, copied);

	/* a short array: cut, and said */
	unwind_fixture("", names, 4, &res);
	ck_assert_int_eq(res.stop, UNWIND_DEPTH);
	ck_assert_uint_eq(res.n, 4);
	ck_assert_str_eq(names[3], "cfi_f6");
}
END_TEST

START_TEST(test_unwind_signal_frame)
{
	char names[64][64];
	struct unwind_result res;
	size_t i;

	unwind_fixture("signal", names, 64, &res);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s after %zu frames",
		      unwind_stop_name(res.stop), res.n);
	ck_assert_uint_eq(res.signal_frames, 1);
	ck_assert_str_eq(names[0], "cfi_dump");
	ck_assert_str_eq(names[1], "on_signal");
	/* then the trampoline, the interrupted PC in libc's raise(), raise's callers */
	for (i = 2; i < res.n && strcmp(names[i], "cfi_f8"); i++)
		;
	ck_assert_uint_ge(i, 4);
	assert_callers(names, res.n, i);
}
END_TEST

/* The system call PID is blocked in (/proc/PID/syscall), or -1. */
static long blocked_in(pid_t pid)
{
	char path[64], buf[256];
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	f = fopen(path, "r");
	if (f && fgets(buf, sizeof(buf), f) && sscanf(buf, "%ld", &nr) != 1)
		nr = -1;
	if (f)
		fclose(f);
	return nr;
}

/*
 * Runs argv with stdin a pipe kept open, waits until it blocks in system call nr, stops it
 * (ptrace), copies its registers and stack, and unwinds them: names into names.
 */
static void unwind_live(char *const argv[], long nr, char names[][64], size_t max,
			struct unwind_result *res)
{
	struct user_regs_struct ur;
	struct unwind_regs regs;
	struct unwind_stack st;
	const struct proc_map *sm;
	char path[64];
	uint64_t ips[64];
	struct objs os;
	uint8_t *data;
	int fds[2], status, i, fd;
	size_t k, len;
	pid_t pid;

	ck_assert_uint_le(max, 64);
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		dup2(fds[0], 0);
		close(fds[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[0]);
	for (i = 0; i < 3000 && blocked_in(pid) != nr; i++) /* 30 s: a loaded machine */
		usleep(10000);
	ck_assert_msg(blocked_in(pid) == nr, "%s never blocked in system call %ld", argv[0], nr);
	ck_assert_int_eq(ptrace(PTRACE_SEIZE, pid, 0, 0), 0);
	ck_assert_int_eq(ptrace(PTRACE_INTERRUPT, pid, 0, 0), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSTOPPED(status));
	ck_assert_int_eq(ptrace(PTRACE_GETREGS, pid, 0, &ur), 0);

	memset(&os, 0, sizeof(os));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	ck_assert_int_eq(proc_maps__parse_file(path, &os.maps, &os.nmaps), 0);
	sm = proc_maps__find(os.maps, os.nmaps, ur.rsp);
	ck_assert_ptr_nonnull(sm);
	len = sm->end - ur.rsp;
	if (len > (1 << 20))
		len = 1 << 20;
	data = malloc(len);
	ck_assert_ptr_nonnull(data);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, data, len, (off_t)ur.rsp), (ssize_t)len);
	close(fd);

	regs = (struct unwind_regs){.ip = ur.rip, .sp = ur.rsp, .bp = ur.rbp};
	st = (struct unwind_stack){.base = ur.rsp, .data = data, .len = len};
	cfi_unwind(&regs, &st, find, &os, ips, max, res);
	for (k = 0; k < res->n; k++)
		snprintf(names[k], sizeof(names[k]), "%s", name_of(&os, ips[k], k == 0));
	objs_free(&os);
	free(data);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(fds[1]);
}

static bool has_frame(char names[][64], size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/*
 * python3 (no frame pointers) in time.sleep(): clock_nanosleep, time_sleep, the eval loop,
 * Py_RunMain, Py_BytesMain (main jumps to it: no frame of its own), libc's start, _start
 */
START_TEST(test_unwind_live_python)
{
	char *const argv[] = {"python3", "-c", "import time\nwhile True: time.sleep(10)", NULL};
	char names[64][64];
	struct unwind_result res;

	unwind_live(argv, 230 /* clock_nanosleep */, names, 64, &res);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s after %zu frames",
		      unwind_stop_name(res.stop), res.n);
	ck_assert(has_frame(names, res.n, "Py_RunMain"));
	ck_assert(has_frame(names, res.n, "Py_BytesMain"));
	ck_assert_str_eq(names[res.n - 1], "_start");
	ck_assert_uint_eq(res.fp_frames, 0);
}
END_TEST

/* bash (no frame pointers) in the read builtin: read(0) ... main, _start */
START_TEST(test_unwind_live_bash)
{
	char *const argv[] = {"bash", "-c", "read x", NULL};
	char names[64][64];
	struct unwind_result res;

	unwind_live(argv, 0 /* read */, names, 64, &res);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s after %zu frames",
		      unwind_stop_name(res.stop), res.n);
	ck_assert_uint_ge(res.n, 6);
	ck_assert(has_frame(names, res.n, "main"));
	ck_assert_str_eq(names[res.n - 1], "_start");
}
END_TEST

/* A stack of words at 0x1000: one object at [0x400000, 0x500000) whose rows come from rows. */
static const struct cfi_row *hand_rows;
static size_t hand_n;

static int hand_find(void *ctx, uint64_t ip, const struct cfi_row **row)
{
	struct cfi_table t = {.rows = (struct cfi_row *)hand_rows, .n = hand_n};

	(void)ctx;
	if (ip < 0x400000 || ip >= 0x500000)
		return -ENOENT;
	*row = cfi_table_find(&t, ip);
	/* as if the object's table had been cut before 0x480000 */
	return ip >= 0x480000 ? -E2BIG : 0;
}

static uint64_t hand_bx; /* RBX at the event */

static void hand_unwind(const uint64_t *words, size_t nwords, uint64_t ip, uint64_t bp,
			uint64_t *ips, size_t max, struct unwind_result *res)
{
	struct unwind_regs regs = {.ip = ip, .sp = 0x1000, .bp = bp, .bx = hand_bx};
	struct unwind_stack st = {.base = 0x1000, .data = (const uint8_t *)words,
				  .len = nwords * 8};

	cfi_unwind(&regs, &st, hand_find, NULL, ips, max, res);
}

START_TEST(test_unwind_stops)
{
	static const struct cfi_row rows[] = {
		{.pc = 0x401000, .len = 0x100, .cfa = CFI_CFA_SP, .cfa_off = 16},
		{.pc = 0x402000, .len = 0x100, .cfa = CFI_CFA_EXPR},
		{.pc = 0x403000, .len = 0x100, .cfa = CFI_CFA_END, .cfa_off = 8},
		{.pc = 0x404000, .len = 0x100, .cfa = CFI_CFA_SP, .cfa_off = 0},
		{.pc = 0x405000, .len = 0x100, .cfa = CFI_CFA_FP, .cfa_off = 16,
		 .fp = CFI_FP_AT, .fp_off = -16},
		{.pc = 0x406000, .len = 0x20, .cfa = CFI_CFA_PLT, .cfa_off = 11},
		{.pc = 0x407000, .len = 0x10, .cfa = CFI_CFA_SP, .cfa_off = 8,
		 .fp = CFI_FP_AT, .fp_off = -16},
	};
	uint64_t w[8] = {0}, ips[8];
	struct unwind_result res;

	hand_rows = rows;
	hand_n = sizeof(rows) / sizeof(rows[0]);
	/* SP + 16: the return address at 0x1008, into an expression row */
	w[1] = 0x402010;
	hand_unwind(w, 8, 0x401000, 0, ips, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_EXPR);
	ck_assert_uint_eq(res.n, 2);
	ck_assert_uint_eq(ips[1], 0x402010);
	/* into the outermost frame */
	w[1] = 0x403010;
	hand_unwind(w, 8, 0x401000, 0, ips, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_END);
	ck_assert_uint_eq(res.n, 2);
	/* into no object */
	w[1] = 0x900000;
	hand_unwind(w, 8, 0x401000, 0, ips, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_NOOBJ);
	/* a return address of 0 ends the stack */
	w[1] = 0;
	hand_unwind(w, 8, 0x401000, 0, ips, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_END);
	ck_assert_uint_eq(res.n, 1);
	/* CFA = SP: it would not move */
	hand_unwind(w, 8, 0x404000, 0, ips, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_LOOP);
	/* the return address beyond the copy */
	hand_unwind(w, 1, 0x401000, 0, ips, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_MEMORY);
	/* FP + 16 with FP = 0x1010: the caller's FP at 0x1010, the return address at 0x1018;
	 * then a PLT entry past its push ((ip & 15) >= 11): CFA = SP + 16 */
	memset(w, 0, sizeof(w));
	w[2] = 0x1020;
	w[3] = 0x40601b;
	w[5] = 0x403010;
	hand_unwind(w, 8, 0x405000, 0x1010, ips, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_END);
	ck_assert_uint_eq(res.n, 3);
	ck_assert_uint_eq(ips[1], 0x40601b);
	ck_assert_uint_eq(ips[2], 0x403010);
	/* an epilogue past its pop of FP, whose CFI still says FP is saved at CFA - 16: below
	 * SP, so FP (0x1010) is the caller's already; then FP + 16 in the caller */
	memset(w, 0, sizeof(w));
	w[0] = 0x405010;
	w[3] = 0x403010;
	hand_unwind(w, 8, 0x407000, 0x1010, ips, 8, &res);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s", unwind_stop_name(res.stop));
	ck_assert_uint_eq(res.n, 3);
	ck_assert_uint_eq(ips[1], 0x405010);
	ck_assert_uint_eq(ips[2], 0x403010);
	/* no row: the frame pointer chain (FP = 0x1000: saved FP 0, return address 0x403010) */
	memset(w, 0, sizeof(w));
	w[1] = 0x403010;
	hand_unwind(w, 8, 0x408000, 0x1000, ips, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_END);
	ck_assert_uint_eq(res.fp_frames, 1);
	ck_assert_uint_eq(ips[1], 0x403010);
	ck_assert_uint_eq(res.fp_cut, 0);
	/* the same past the cut: counted as such */
	hand_unwind(w, 8, 0x488000, 0x1000, ips, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_END);
	ck_assert_uint_eq(res.fp_frames, 1);
	ck_assert_uint_eq(res.fp_cut, 1);
	/* no row and no frame pointer */
	hand_unwind(w, 8, 0x408000, 0, ips, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_NOCFI);
	hand_unwind(w, 8, 0x488000, 0, ips, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_CUT);
	ck_assert_str_eq(unwind_stop_name(UNWIND_CUT), "table-cut");
	ck_assert_str_eq(unwind_stop_name(UNWIND_NOCFI), "no-cfi");
	ck_assert_str_eq(unwind_stop_name(UNWIND_STOPS), "?");
}
END_TEST

/*
 * A frame whose CFA is RBX + 16 (a realigned stack: ld.so's _dl_runtime_resolve), the
 * caller's RBX saved at CFA - 16, called into a frame that saved RBX itself
 */
START_TEST(test_unwind_bx)
{
	static const struct cfi_row rows[] = {
		/* the callee: CFA = SP + 16, RBX saved at CFA - 16 */
		{.pc = 0x401000, .len = 0x100, .cfa = CFI_CFA_SP, .cfa_off = 16,
		 .bx = CFI_FP_AT, .bx_off = -16},
		/* the realigned frame */
		{.pc = 0x402000, .len = 0x100, .cfa = CFI_CFA_BX, .cfa_off = 16,
		 .bx = CFI_FP_AT, .bx_off = -16},
		{.pc = 0x403000, .len = 0x100, .cfa = CFI_CFA_END, .cfa_off = 8},
		/* a frame that loses RBX (call-clobbered in its rules) */
		{.pc = 0x404000, .len = 0x100, .cfa = CFI_CFA_SP, .cfa_off = 8,
		 .bx = CFI_FP_UNDEF},
		/* the same callee, past its epilogue's pop of RBX */
		{.pc = 0x405000, .len = 0x100, .cfa = CFI_CFA_SP, .cfa_off = 8,
		 .bx = CFI_FP_AT, .bx_off = -16},
	};
	uint64_t w[16] = {0}, ips[8];
	struct unwind_result res;

	hand_rows = rows;
	hand_n = sizeof(rows) / sizeof(rows[0]);
	/*
	 * The callee at SP 0x1000: the realigned frame's RBX (0x1030) at 0x1000, the return
	 * address into it at 0x1008. That frame's SP is realigned to 0x1010 (below its RBX);
	 * CFA = RBX + 16 = 0x1040: its caller's RBX at 0x1030, the return address at 0x1038.
	 */
	w[0] = 0x1030;
	w[1] = 0x402010;
	w[6] = 0x7777;
	w[7] = 0x403010;
	hand_bx = 0x5555; /* the callee's own RBX: not the realigned frame's */
	hand_unwind(w, 16, 0x401000, 0, ips, 8, &res);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s after %zu frames",
		      unwind_stop_name(res.stop), res.n);
	ck_assert_uint_eq(res.n, 3);
	ck_assert_uint_eq(ips[1], 0x402010);
	ck_assert_uint_eq(ips[2], 0x403010);
	/* the realigned frame at the event: RBX is the event's */
	hand_bx = 0x1020; /* CFA 0x1030: the return address at 0x1028 */
	w[5] = 0x403010;
	hand_unwind(w, 16, 0x402000, 0, ips, 8, &res);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s", unwind_stop_name(res.stop));
	ck_assert_uint_eq(ips[1], 0x403010);
	/* past the callee's pop of RBX (its slot below SP): RBX is the caller's already */
	memset(w, 0, sizeof(w));
	w[0] = 0x402010;
	w[4] = 0x403010; /* RBX 0x1018 + 16: the return address at 0x1020 */
	hand_bx = 0x1018;
	hand_unwind(w, 16, 0x405000, 0, ips, 8, &res);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s", unwind_stop_name(res.stop));
	ck_assert_uint_eq(res.n, 3);
	ck_assert_uint_eq(ips[2], 0x403010);
	/* RBX lost by the callee's rules: the realigned frame cannot be followed */
	w[0] = 0x402010;
	hand_unwind(w, 16, 0x404000, 0, ips, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_EXPR);
	ck_assert_uint_eq(res.n, 2);
	/* nor through a frame found by the frame pointer (FP 0x1000: return address at 0x1008) */
	memset(w, 0, sizeof(w));
	w[1] = 0x402010;
	hand_unwind(w, 16, 0x408000, 0x1000, ips, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_EXPR);
	ck_assert_uint_eq(res.fp_frames, 1);
	hand_bx = 0;
}
END_TEST

/* How each frame was left, as the BPF walk of --stacks learns it */
START_TEST(test_unwind_steps)
{
	static const struct cfi_row rows[] = {
		{.pc = 0x401000, .len = 0x100, .cfa = CFI_CFA_SP, .cfa_off = 16},
		{.pc = 0x403000, .len = 0x100, .cfa = CFI_CFA_END, .cfa_off = 8},
		{.pc = 0x405000, .len = 0x100, .cfa = CFI_CFA_FP, .cfa_off = 16,
		 .fp = CFI_FP_AT, .fp_off = -16},
		{.pc = 0x406000, .len = 0x20, .cfa = CFI_CFA_PLT, .cfa_off = 11},
		{.pc = 0x409000, .len = 0x100, .cfa = CFI_CFA_SIGNAL},
		{.pc = 0x40a000, .len = 0x100, .cfa = CFI_CFA_BX, .cfa_off = 16},
	};
	struct unwind_regs regs = {.ip = 0x405000, .sp = 0x1000, .bp = 0x1010};
	struct unwind_stack st;
	struct unwind_step steps[8];
	uint64_t w[64] = {0}, ips[8];
	struct unwind_result res;

	hand_rows = rows;
	hand_n = sizeof(rows) / sizeof(rows[0]);
	/* FP + 16, then the PLT past its push (CFA = SP + 16), then the outermost frame */
	w[2] = 0x1020;
	w[3] = 0x40601b;
	w[5] = 0x403010;
	st = (struct unwind_stack){.base = 0x1000, .data = (const uint8_t *)w, .len = sizeof(w)};
	memset(steps, 0xff, sizeof(steps));
	cfi_unwind_steps(&regs, &st, hand_find, NULL, ips, steps, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_END);
	ck_assert_uint_eq(res.n, 3);
	ck_assert_uint_eq(steps[0].how, UNWIND_HOW_FP);
	ck_assert_int_eq(steps[0].cfa_off, 16);
	ck_assert_uint_eq(steps[0].fp, CFI_FP_AT);
	ck_assert_int_eq(steps[0].fp_off, -16);
	ck_assert_uint_eq(steps[0].exact, 1);
	ck_assert_uint_eq(steps[1].how, UNWIND_HOW_SP);
	ck_assert_int_eq(steps[1].cfa_off, 16);
	ck_assert_uint_eq(steps[1].fp, CFI_FP_SAME);
	ck_assert_uint_eq(steps[1].exact, 0);
	ck_assert_uint_eq(steps[2].how, UNWIND_HOW_END);
	/* a signal frame: the interrupted PC (0x401000) is exact, then SP + 16 past it */
	memset(w, 0, sizeof(w));
	w[(40 + 16 * 8) / 8] = 0x401000;	/* REG_RIP */
	w[(40 + 15 * 8) / 8] = 0x1100;		/* REG_RSP */
	w[(0x1100 - 0x1000) / 8 + 1] = 0x403010;
	regs = (struct unwind_regs){.ip = 0x409000, .sp = 0x1000};
	cfi_unwind_steps(&regs, &st, hand_find, NULL, ips, steps, 8, &res);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s", unwind_stop_name(res.stop));
	ck_assert_uint_eq(res.n, 3);
	ck_assert_uint_eq(steps[0].how, UNWIND_HOW_SIGNAL);
	ck_assert_uint_eq(ips[1], 0x401000);
	ck_assert_uint_eq(steps[1].how, UNWIND_HOW_SP);
	ck_assert_uint_eq(steps[1].exact, 1);
	ck_assert_uint_eq(steps[2].how, UNWIND_HOW_END);
	ck_assert_uint_eq(steps[2].exact, 0);
	/* no row: a frame-pointer step (CFA = FP + 16, FP saved at CFA - 16) */
	memset(w, 0, sizeof(w));
	w[1] = 0x403010;
	regs = (struct unwind_regs){.ip = 0x408000, .sp = 0x1000, .bp = 0x1000};
	cfi_unwind_steps(&regs, &st, hand_find, NULL, ips, steps, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_END);
	ck_assert_uint_eq(steps[0].how, UNWIND_HOW_FP);
	ck_assert_int_eq(steps[0].cfa_off, 16);
	ck_assert_int_eq(steps[0].fp_off, -16);
	/* RBX-based, and a stop: not left */
	regs = (struct unwind_regs){.ip = 0x40a000, .sp = 0x1000, .bx = 0x1000};
	cfi_unwind_steps(&regs, &st, hand_find, NULL, ips, steps, 8, &res);
	ck_assert_uint_eq(steps[0].how, UNWIND_HOW_NONE);
	regs = (struct unwind_regs){.ip = 0x900000, .sp = 0x1000};
	cfi_unwind_steps(&regs, &st, hand_find, NULL, ips, steps, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_NOOBJ);
	ck_assert_uint_eq(steps[0].how, UNWIND_HOW_NONE);
}
END_TEST

/* find() of the leaf tests: 1 (CFI elsewhere, not here) from 0x40b000 on */
static int leaf_find(void *ctx, uint64_t ip, const struct cfi_row **row)
{
	int rc = hand_find(ctx, ip, row);

	return !rc && !*row && ip >= 0x40b000 && ip < 0x40c000 ? 1 : rc;
}

/*
 * glibc's __vfork (the return address in RDI: the first frame only) and clone3 (no CFI around
 * its system call: a leaf with its return address at SP)
 */
START_TEST(test_unwind_leaf_rules)
{
	static const struct cfi_row rows[] = {
		{.pc = 0x401000, .len = 0x100, .cfa = CFI_CFA_SP, .cfa_off = 16},
		{.pc = 0x403000, .len = 0x100, .cfa = CFI_CFA_END, .cfa_off = 8},
		{.pc = 0x40a000, .len = 0x100, .cfa = CFI_CFA_RA_DI, .cfa_off = 0},
		{.pc = 0x40b800, .len = 0x100, .cfa = CFI_CFA_SP, .cfa_off = 8},
	};
	struct unwind_regs regs = {.ip = 0x40a010, .sp = 0x1000, .di = 0x401010};
	struct unwind_stack st;
	struct unwind_step steps[8];
	uint64_t w[8] = {0}, ips[8];
	struct unwind_result res;

	hand_rows = rows;
	hand_n = sizeof(rows) / sizeof(rows[0]);
	st = (struct unwind_stack){.base = 0x1000, .data = (const uint8_t *)w, .len = sizeof(w)};
	/* RDI into 0x401010, whose CFA = SP + 16 (SP unchanged: 0x1000) */
	w[1] = 0x403010;
	cfi_unwind_steps(&regs, &st, leaf_find, NULL, ips, steps, 8, &res);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s", unwind_stop_name(res.stop));
	ck_assert_uint_eq(res.n, 3);
	ck_assert_uint_eq(ips[1], 0x401010);
	ck_assert_uint_eq(steps[0].how, UNWIND_HOW_RA_DI);
	ck_assert_int_eq(steps[0].cfa_off, 0);
	/* RDI not known, or the row met past the first frame: a stop */
	regs.di = 0;
	cfi_unwind(&regs, &st, leaf_find, NULL, ips, 8, &res);
	ck_assert_int_eq(res.stop, UNWIND_EXPR);
	ck_assert_uint_eq(res.n, 1);
	/* no row at an exact PC where the object has rows elsewhere: a leaf, RA at SP */
	memset(w, 0, sizeof(w));
	w[0] = 0x403010;
	regs = (struct unwind_regs){.ip = 0x40b010, .sp = 0x1000, .bp = 0x5000};
	cfi_unwind_steps(&regs, &st, leaf_find, NULL, ips, steps, 8, &res);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s", unwind_stop_name(res.stop));
	ck_assert_uint_eq(res.n, 2);
	ck_assert_uint_eq(ips[1], 0x403010);
	ck_assert_uint_eq(steps[0].how, UNWIND_HOW_SP);
	ck_assert_int_eq(steps[0].cfa_off, 8);
	ck_assert_uint_eq(res.fp_frames, 0);
	/*
	 * ... unless the word at SP is below any mapping: a program's entry point as execve
	 * returns (the loader's _start has no CFI), SP at argc. The stack ends there, and the
	 * step says so (a rule of its own)
	 */
	w[0] = 3;
	cfi_unwind_steps(&regs, &st, leaf_find, NULL, ips, steps, 8, &res);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s", unwind_stop_name(res.stop));
	ck_assert_uint_eq(res.n, 1);
	ck_assert_uint_eq(steps[0].how, UNWIND_HOW_END);
	ck_assert_uint_eq(res.used, 8);
	/* ... but a return address there is not: the frame pointer, as where no CFI is */
	memset(w, 0, sizeof(w));
	w[1] = 0x40b010;  /* 0x401000's return address, into the code without rows */
	w[3] = 0x403010; /* FP 0x1010: saved FP 0 at FP, the return address at FP + 8 */
	regs = (struct unwind_regs){.ip = 0x401000, .sp = 0x1000, .bp = 0x1010};
	cfi_unwind(&regs, &st, leaf_find, NULL, ips, 8, &res);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s", unwind_stop_name(res.stop));
	ck_assert_uint_eq(res.fp_frames, 1);
	ck_assert_uint_eq(ips[2], 0x403010);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cfi_unwind");
	TCase *tc = tcase_create("cfi_unwind");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_unwind_copied_stack);
	tcase_add_test(tc, test_unwind_signal_frame);
	tcase_add_test(tc, test_unwind_live_python);
	tcase_add_test(tc, test_unwind_live_bash);
	tcase_add_test(tc, test_unwind_stops);
	tcase_add_test(tc, test_unwind_bx);
	tcase_add_test(tc, test_unwind_steps);
	tcase_add_test(tc, test_unwind_leaf_rules);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
