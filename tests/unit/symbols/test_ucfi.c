// SPDX-License-Identifier: BSD-2-Clause
/*
 * Copied stacks unwound by their objects' CFI through a usyms snapshot (src/symbols/ucfi.c):
 * this process's own stack, copied as BPF would copy it (registers, then the stack from SP
 * to its mapping's end, read through /proc/self/mem), unwound to the outermost frame through
 * ucfi_t1 -> ucfi_t2 -> ucfi_t3; the bound on the bytes held and on the rows of one object
 * (the walk goes on by frame pointers, counted); an image never snapshotted; tables kept in a
 * store and read back by a later run (the same walk), and a damaged one compiled anew.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit.h"
#include "symbols/procmaps.h"
#include "symbols/ucfi.h"
#include "symbols/usyms.h"

static uint8_t copy[1 << 20];
static struct unwind_regs regs;
static struct unwind_stack stk;
volatile unsigned long ucfi_sink;

/* The registers here and the stack above them, as an event's copy. */
__attribute__((noinline)) void ucfi_take(void)
{
	struct proc_map *maps;
	const struct proc_map *m;
	size_t n, len;
	ssize_t got;
	int fd;

	asm volatile("lea (%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
		     : "=r"(regs.ip), "=r"(regs.sp), "=r"(regs.bp));
	ck_assert_int_eq(proc_maps__read(getpid(), &maps, &n), 0);
	m = proc_maps__find(maps, n, regs.sp);
	ck_assert_ptr_nonnull(m);
	len = m->end - regs.sp;
	proc_maps__free(maps, n);
	if (len > sizeof(copy))
		len = sizeof(copy);
	/* through the kernel: the sanitizers' redzones on the stack are not ours to read */
	fd = open("/proc/self/mem", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	got = pread(fd, copy, len, (off_t)regs.sp);
	close(fd);
	ck_assert_int_eq(got, (ssize_t)len);
	stk = (struct unwind_stack){ .base = regs.sp, .data = copy, .len = len };
}

#define LEVEL(f, g)                                  \
	__attribute__((noinline)) void f(void)       \
	{                                            \
		g();                                 \
		ucfi_sink++;                         \
	}
LEVEL(ucfi_t3, ucfi_take)
LEVEL(ucfi_t2, ucfi_t3)
LEVEL(ucfi_t1, ucfi_t2)

/* The function of frame i of ips (its return address - 1 past the leaf), or "?". */
static const char *name_of(struct usyms *u, const uint64_t *ips, size_t i)
{
	struct usym s;

	if (usyms__resolve_ip(u, getpid(), 0, i ? ips[i] - 1 : ips[i], &s) || !s.name)
		return "?";
	return s.name;
}

START_TEST(test_ucfi_own_stack)
{
	struct usyms *u = usyms__new(&(struct usyms_opts){ .debug_dir = "" });
	struct ucfi *c = ucfi__new(NULL);
	uint64_t ips[128];
	struct unwind_result res;
	struct ucfi_stats st;
	size_t i, t3 = 0;

	ck_assert_ptr_nonnull(u);
	ck_assert_ptr_nonnull(c);
	ucfi_t1();
	ck_assert_int_eq(usyms__add_pid(u, getpid(), 0), 0);
	ck_assert_int_eq(ucfi__unwind(c, u, getpid(), 0, &regs, &stk, ips, 128, &res), 0);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s after %zu frames",
		      unwind_stop_name(res.stop), res.n);
	ck_assert_str_eq(name_of(u, ips, 0), "ucfi_take");
	for (i = 1; i < res.n && strcmp(name_of(u, ips, i), "ucfi_t3"); i++)
		;
	t3 = i;
	ck_assert_uint_lt(t3 + 2, res.n);
	ck_assert_str_eq(name_of(u, ips, t3 + 1), "ucfi_t2");
	ck_assert_str_eq(name_of(u, ips, t3 + 2), "ucfi_t1");
	ck_assert_str_eq(name_of(u, ips, res.n - 1), "_start");
	ucfi__stats(c, &st);
	ck_assert_uint_ge(st.objects, 2); /* this program and libc at least */
	ck_assert_uint_gt(st.bytes, 0);
	ck_assert_uint_eq(st.over + st.unreadable, 0);
	ck_assert_uint_eq(st.stacks, 1);
	ck_assert_uint_eq(st.stops[UNWIND_END], 1);
	/* once compiled, the tables are reused */
	ck_assert_int_eq(ucfi__unwind(c, u, getpid(), 0, &regs, &stk, ips, 128, &res), 0);
	ucfi__stats(c, &st);
	ck_assert_uint_eq(st.stacks, 2);
	ck_assert_uint_ge(st.objects, 2);
	/* the caller's depth: the walk stops there */
	ck_assert_int_eq(ucfi__unwind(c, u, getpid(), 0, &regs, &stk, ips, 2, &res), 0);
	ck_assert_int_eq(res.stop, UNWIND_DEPTH);
	ck_assert_uint_eq(res.n, 2);
	ucfi__free(c);
	usyms__free(u);
}
END_TEST

/* opts->async: the first walk finds the tables compiling, the one after ucfi__wait() not */
START_TEST(test_ucfi_async)
{
	struct usyms *u = usyms__new(&(struct usyms_opts){ .debug_dir = "" });
	/* every file compiled on a thread: this program's too */
	struct ucfi_opts o = { .async = true, .async_file = 1 };
	struct ucfi *c = ucfi__new(&o);
	uint64_t ips[128];
	struct unwind_result res;
	struct ucfi_stats st;
	int err = 0, rounds;

	ck_assert_ptr_nonnull(u);
	ck_assert_ptr_nonnull(c);
	ucfi_t1();
	ck_assert_int_eq(usyms__add_pid(u, getpid(), 0), 0);
	ck_assert_int_eq(ucfi__unwind(c, u, getpid(), 0, &regs, &stk, ips, 128, &res), -EAGAIN);
	ucfi__stats(c, &st);
	ck_assert_uint_eq(st.stacks, 0); /* not counted: walked again */
	/* once per object met: this program, libc */
	for (rounds = 0; rounds < 8; rounds++) {
		ucfi__wait(c);
		err = ucfi__unwind(c, u, getpid(), 0, &regs, &stk, ips, 128, &res);
		if (err != -EAGAIN)
			break;
	}
	ck_assert_int_eq(err, 0);
	ck_assert_uint_le(rounds, 3);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s after %zu frames",
		      unwind_stop_name(res.stop), res.n);
	ck_assert_str_eq(name_of(u, ips, 0), "ucfi_take");
	ck_assert_str_eq(name_of(u, ips, res.n - 1), "_start");
	ucfi__stats(c, &st);
	ck_assert_uint_eq(st.stacks, 1);
	ck_assert_uint_gt(st.compile_ns, 0);
	ck_assert_uint_gt(st.bytes, 0);
	/* a walk still compiling when freed: its threads are joined */
	ucfi__free(c);
	c = ucfi__new(&o);
	ck_assert_int_eq(ucfi__unwind(c, u, getpid(), 0, &regs, &stk, ips, 128, &res), -EAGAIN);
	ucfi__free(c);
	usyms__free(u);
}
END_TEST

START_TEST(test_ucfi_bounds)
{
	struct usyms *u = usyms__new(&(struct usyms_opts){ .debug_dir = "" });
	struct ucfi *c;
	uint64_t ips[128];
	struct unwind_result res;
	struct ucfi_stats st;

	ck_assert_ptr_nonnull(u);
	ucfi_t1();
	ck_assert_int_eq(usyms__add_pid(u, getpid(), 0), 0);
	/* no byte to hold: every object falls back to frame pointers, counted */
	c = ucfi__new(&(struct ucfi_opts){ .max_bytes = 1 });
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(ucfi__unwind(c, u, getpid(), 0, &regs, &stk, ips, 128, &res), 0);
	ucfi__stats(c, &st);
	ck_assert_uint_ge(st.over, 1);
	ck_assert_uint_eq(st.bytes, 0);
	ck_assert_msg(res.stop != UNWIND_END || res.fp_frames > 0, "no row, yet no frame-pointer frame");
	ck_assert_msg(res.stop == UNWIND_END || res.stop == UNWIND_CUT ||
		      res.stop == UNWIND_MEMORY || res.stop == UNWIND_LOOP,
		      "stopped: %s", unwind_stop_name(res.stop));
	ucfi__free(c);
	/* one row per object: the tables are cut, and a walk past the cut says so */
	c = ucfi__new(&(struct ucfi_opts){ .max_rows = 1 });
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(ucfi__unwind(c, u, getpid(), 0, &regs, &stk, ips, 128, &res), 0);
	ucfi__stats(c, &st);
	ck_assert_uint_ge(st.cut, 1);
	ck_assert_uint_le(st.bytes, st.objects * sizeof(struct cfi_row));
	ucfi__free(c);
	usyms__free(u);
}
END_TEST

START_TEST(test_ucfi_no_snapshot)
{
	struct usyms *u = usyms__new(&(struct usyms_opts){ .debug_dir = "" });
	struct ucfi *c = ucfi__new(NULL);
	uint64_t ips[8];
	struct unwind_result res;
	struct ucfi_stats st;

	ck_assert_ptr_nonnull(u);
	ck_assert_ptr_nonnull(c);
	ucfi_t1();
	/* image 7 of this pid was never snapshotted: the PC alone */
	ck_assert_int_eq(ucfi__unwind(c, u, getpid(), 7, &regs, &stk, ips, 8, &res), 0);
	ck_assert_int_eq(res.stop, UNWIND_NOOBJ);
	ck_assert_uint_eq(res.n, 1);
	ck_assert_uint_eq(ips[0], regs.ip);
	ucfi__stats(c, &st);
	ck_assert_uint_eq(st.objects, 0);
	ck_assert_uint_eq(st.stops[UNWIND_NOOBJ], 1);
	ucfi__free(c);
	usyms__free(u);
}
END_TEST

/* A store in memory: its entries by key, how often each was read and saved. */
#define MEM_MAX 64
struct mem_store {
	char *keys[MEM_MAX];
	void *data[MEM_MAX];
	size_t size[MEM_MAX];
	size_t n, loads, hits, saves;
};

static int mem_find(struct mem_store *m, const char *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->keys[i], key))
			return (int)i;
	return -1;
}

static int mem_load(void *ctx, const char *key, void **ret_data, size_t *ret_size)
{
	struct mem_store *m = ctx;
	int i = mem_find(m, key);

	m->loads++;
	if (i < 0)
		return -ENOENT;
	m->hits++;
	*ret_data = malloc(m->size[i]);
	ck_assert_ptr_nonnull(*ret_data);
	memcpy(*ret_data, m->data[i], m->size[i]);
	*ret_size = m->size[i];
	return 0;
}

static void mem_save(void *ctx, const char *key, const void *data, size_t size)
{
	struct mem_store *m = ctx;
	int i = mem_find(m, key);

	m->saves++;
	if (i < 0) {
		ck_assert_uint_lt(m->n, MEM_MAX);
		i = (int)m->n++;
		m->keys[i] = strdup(key);
	} else {
		free(m->data[i]);
	}
	m->data[i] = malloc(size);
	ck_assert_ptr_nonnull(m->data[i]);
	memcpy(m->data[i], data, size);
	m->size[i] = size;
}

/* One run of the walk through store m: its frames into ips, its stats into st. */
static size_t walk_with(struct usyms *u, struct mem_store *m, size_t max_rows, uint64_t *ips,
			struct ucfi_stats *st)
{
	struct ucfi_store store = { .load = mem_load, .save = mem_save, .ctx = m };
	struct ucfi *c = ucfi__new(&(struct ucfi_opts){ .store = &store, .max_rows = max_rows });
	struct unwind_result res;

	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(ucfi__unwind(c, u, getpid(), 0, &regs, &stk, ips, 128, &res), 0);
	ck_assert_msg(res.stop == UNWIND_END, "stopped: %s", unwind_stop_name(res.stop));
	ucfi__stats(c, st);
	ucfi__free(c);
	return res.n;
}

START_TEST(test_ucfi_store)
{
	struct usyms *u = usyms__new(&(struct usyms_opts){ .debug_dir = "" });
	struct mem_store m = { 0 };
	uint64_t ips[128], again[128];
	struct ucfi_stats st;
	size_t n, saves;

	ck_assert_ptr_nonnull(u);
	ucfi_t1();
	ck_assert_int_eq(usyms__add_pid(u, getpid(), 0), 0);
	/* the first run compiles every table and keeps those with a build-id */
	n = walk_with(u, &m, 0, ips, &st);
	ck_assert_uint_eq(st.stored, 0);
	ck_assert_uint_ge(m.saves, 2); /* this program and libc at least */
	ck_assert_uint_eq(m.n, m.saves);
	saves = m.saves;
	/* the next reads them: the same frames, nothing compiled or saved */
	ck_assert_uint_eq(walk_with(u, &m, 0, again, &st), n);
	ck_assert_mem_eq(again, ips, n * sizeof(ips[0]));
	ck_assert_uint_eq(st.stored, saves);
	ck_assert_uint_eq(st.store_bad, 0);
	ck_assert_uint_eq(m.saves, saves);
	ck_assert_uint_gt(st.bytes, 0);
	/* another row limit is another key: compiled and kept beside */
	walk_with(u, &m, 1u << 19, again, &st);
	ck_assert_uint_eq(st.stored, 0);
	ck_assert_uint_eq(m.n, 2 * saves);
	/* damaged entries: counted, compiled anew, and replaced */
	for (size_t i = 0; i < m.n; i++)
		memset(m.data[i], 0x5a, m.size[i] / 2);
	ck_assert_uint_eq(walk_with(u, &m, 0, again, &st), n);
	ck_assert_mem_eq(again, ips, n * sizeof(ips[0]));
	ck_assert_uint_eq(st.stored, 0);
	ck_assert_uint_eq(st.store_bad, saves);
	ck_assert_uint_eq(m.saves, 3 * saves);
	walk_with(u, &m, 0, again, &st);
	ck_assert_uint_eq(st.stored, saves);
	for (size_t i = 0; i < m.n; i++) {
		free(m.keys[i]);
		free(m.data[i]);
	}
	usyms__free(u);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ucfi");
	TCase *tc = tcase_create("ucfi");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_ucfi_own_stack);
	tcase_add_test(tc, test_ucfi_bounds);
	tcase_add_test(tc, test_ucfi_async);
	tcase_add_test(tc, test_ucfi_no_snapshot);
	tcase_add_test(tc, test_ucfi_store);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
