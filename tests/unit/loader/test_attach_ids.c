// SPDX-License-Identifier: BSD-2-Clause
/*
 * The boot's cache of the attach targets' kernel BTF IDs (src/loader/attach_ids.c), without
 * root:
 *  - its data reads back as written; cut short, made longer, any byte changed, an entry of
 *    another kind, a duplicate: not read (never a crash); files of another magic, kernel or
 *    boot, truncated or garbage: no cache;
 *  - the check against a BTF file built here: each target's record must be of its kind and
 *    name at its place, and IDs and places must agree in order;
 *  - standing in for the kernel's BTF in a load of our object (SP_BPF_OBJ) on the running
 *    kernel: a miss parses and caches, a hit hands out the placeholder and answers the same
 *    IDs as libbpf's own search of the whole BTF; a lookup not cached is answered from the
 *    real BTF and counted, a name the kernel lacks is -ESRCH (never -ENOENT); a damaged or
 *    misplaced cache is made again, never used. btf_interpose.c is linked as in schedprof.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/btf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "../unit.h"
#include "loader/attach_ids.h"
#include "loader/vmlinux_btf.h"

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/sp_attach_ids_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* the one file the tests write there (cache.c writes it by a rename) */
static void teardown(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/attach.cache", dir);
	unlink(path);
	ck_assert_int_eq(rmdir(dir), 0);
	attach_ids_done(NULL);
}

static void add(struct attach_ids *ids, const char *name, uint32_t kind, uint32_t id, uint32_t off)
{
	struct attach_target *t;

	ck_assert_int_eq(attach_ids_add(ids, name, kind, true), 0);
	t = attach_ids_find(ids, name, kind);
	ck_assert_ptr_nonnull(t);
	t->id = id;
	t->off = off;
}

static const struct attach_kbtf some_kbtf = { .hdr = { 0x9f, 0xeb, 1, 0, 24 }, .size = 5515646 };

START_TEST(format_round_trip)
{
	struct attach_ids ids = {}, back = {};
	struct attach_kbtf k;
	void *buf;
	size_t len;

	add(&ids, "btf_trace_sched_switch", BTF_KIND_TYPEDEF, 4711, 405000);
	add(&ids, "bpf_iter_task", BTF_KIND_FUNC, 90000, 2025560);
	add(&ids, "btf_trace_not_here", BTF_KIND_TYPEDEF, 0, 0); /* absent: not cached */
	ck_assert_int_eq(attach_ids_add(&ids, "btf_trace_sched_switch", BTF_KIND_TYPEDEF, false), 0);
	ck_assert_uint_eq(ids.n, 3);
	ck_assert_int_eq(attach_ids_encode(&ids, &some_kbtf, &buf, &len), 0);
	ck_assert_int_eq(attach_ids_decode(buf, len, &k, &back), 0);
	ck_assert(!memcmp(&k, &some_kbtf, sizeof(k)));
	ck_assert_uint_eq(back.n, 2);
	ck_assert_uint_eq(attach_ids_find(&back, "btf_trace_sched_switch", BTF_KIND_TYPEDEF)->id, 4711);
	ck_assert_uint_eq(attach_ids_find(&back, "btf_trace_sched_switch", BTF_KIND_TYPEDEF)->off,
			  405000);
	ck_assert_uint_eq(attach_ids_find(&back, "bpf_iter_task", BTF_KIND_FUNC)->id, 90000);
	ck_assert_ptr_null(attach_ids_find(&back, "bpf_iter_task", BTF_KIND_TYPEDEF));
	ck_assert_ptr_null(attach_ids_find(&back, "btf_trace_not_here", BTF_KIND_TYPEDEF));
	attach_ids_free(&back);
	free(buf);
	attach_ids_free(&ids);
}
END_TEST

START_TEST(format_damage)
{
	struct attach_ids ids = {}, back = {};
	struct attach_kbtf k;
	unsigned char *buf, *big;
	size_t len;
	char name[ATTACH_NAME_MAX + 8];

	add(&ids, "btf_trace_sched_switch", BTF_KIND_TYPEDEF, 4711, 405000);
	add(&ids, "btf_trace_sched_waking", BTF_KIND_TYPEDEF, 4700, 404856);
	ck_assert_int_eq(attach_ids_encode(&ids, &some_kbtf, (void **)&buf, &len), 0);
	/* cut short anywhere, or one byte longer */
	for (size_t n = 0; n < len; n++)
		ck_assert_int_eq(attach_ids_decode(buf, n, &k, &back), -EINVAL);
	big = calloc(1, len + 1);
	memcpy(big, buf, len);
	ck_assert_int_eq(attach_ids_decode(big, len + 1, &k, &back), -EINVAL);
	free(big);
	/* any byte changed, the hash included */
	for (size_t i = 0; i < len; i++) {
		buf[i] ^= 0x20;
		ck_assert_msg(attach_ids_decode(buf, len, &k, &back) == -EINVAL, "byte %zu", i);
		buf[i] ^= 0x20;
	}
	ck_assert_int_eq(attach_ids_decode(buf, len, &k, &back), 0);
	attach_ids_free(&back);
	free(buf);

	/* written whole, but not entries a load could use */
	ids.v[1].kind = BTF_KIND_STRUCT;
	ck_assert_int_eq(attach_ids_encode(&ids, &some_kbtf, (void **)&buf, &len), 0);
	ck_assert_int_eq(attach_ids_decode(buf, len, &k, &back), -EINVAL);
	free(buf);
	ids.v[1] = ids.v[0]; /* a duplicate */
	ids.v[1].id++;
	ck_assert_int_eq(attach_ids_encode(&ids, &some_kbtf, (void **)&buf, &len), 0);
	ck_assert_int_eq(attach_ids_decode(buf, len, &k, &back), -EINVAL);
	free(buf);
	memset(name, 'x', sizeof(name));
	name[sizeof(name) - 1] = 0;
	ck_assert_int_eq(attach_ids_add(&ids, name, BTF_KIND_FUNC, true), -ENAMETOOLONG);
	attach_ids_free(&ids);
}
END_TEST

static void write_cache_file(const char *content, size_t len)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/attach.cache", dir);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, content, len), (ssize_t)len);
	close(fd);
}

static char *read_cache_file(size_t *ret_len)
{
	char path[128];
	struct stat st;
	char *buf;
	int fd;

	snprintf(path, sizeof(path), "%s/attach.cache", dir);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	buf = malloc(st.st_size);
	ck_assert_int_eq(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*ret_len = st.st_size;
	return buf;
}

START_TEST(cache_files)
{
	struct attach_ids ids = {}, back = {};
	struct attach_kbtf k;
	size_t len;
	char *file;

	ck_assert_int_eq(attach_ids_cache_load(dir, &k, &back), -ENOENT);
	add(&ids, "btf_trace_sched_switch", BTF_KIND_TYPEDEF, 4711, 405000);
	ck_assert_int_eq(attach_ids_cache_store(dir, &some_kbtf, &ids), 0);
	ck_assert_int_eq(attach_ids_cache_load(dir, &k, &back), 0);
	ck_assert_uint_eq(back.n, 1);
	ck_assert_uint_eq(back.v[0].id, 4711);
	attach_ids_free(&back);
	file = read_cache_file(&len);
	/* truncated anywhere: header (magic, kind, boot id, release, build) or data */
	for (size_t n = 0; n < len; n += 7) {
		write_cache_file(file, n);
		ck_assert_int_eq(attach_ids_cache_load(dir, &k, &back), -ENOENT);
	}
	/* another boot's: the boot id is in the cache header (after magic, version, kind, name) */
	file[16 + 4 + 4 + 16] ^= 1;
	write_cache_file(file, len);
	ck_assert_int_eq(attach_ids_cache_load(dir, &k, &back), -ENOENT);
	file[16 + 4 + 4 + 16] ^= 1;
	/* another kind's: the kind is in the header */
	file[16 + 4] ^= 1;
	write_cache_file(file, len);
	ck_assert_int_eq(attach_ids_cache_load(dir, &k, &back), -ENOENT);
	/* garbage */
	memset(file, 0xa5, len);
	write_cache_file(file, len);
	ck_assert_int_eq(attach_ids_cache_load(dir, &k, &back), -ENOENT);
	free(file);
	attach_ids_free(&ids);
}
END_TEST

/* A small BTF file: int, a typedef btf_trace_foo, a func bpf_iter_task, a typedef btf_trace_bar. */
static char btf_path[] = "/tmp/sp_attach_btf.XXXXXX";

static struct btf *small_btf(const char *foo)
{
	struct btf *b = btf__new_empty();
	int i, p, fp;

	ck_assert_ptr_nonnull(b);
	i = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	fp = btf__add_func_proto(b, i);
	p = btf__add_ptr(b, fp);
	ck_assert_int_gt(btf__add_typedef(b, foo, p), 0);
	ck_assert_int_gt(btf__add_func(b, "bpf_iter_task", BTF_FUNC_GLOBAL, fp), 0);
	ck_assert_int_gt(btf__add_typedef(b, "btf_trace_bar", p), 0);
	return b;
}

static int write_btf(const struct btf *b)
{
	const void *raw;
	uint32_t len;
	int fd;

	raw = btf__raw_data(b, &len);
	strcpy(btf_path + strlen(btf_path) - 6, "XXXXXX");
	fd = mkstemp(btf_path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, raw, len), (ssize_t)len);
	close(fd);
	return 0;
}

START_TEST(check_against_file)
{
	struct btf *w = small_btf("btf_trace_foo"), *r;
	struct attach_ids ids = {};
	struct attach_target save;
	struct attach_kbtf k;
	int fd;

	write_btf(w);
	r = vmlinux_btf_map(btf_path);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(attach_ids_add(&ids, "btf_trace_foo", BTF_KIND_TYPEDEF, true), 0);
	ck_assert_int_eq(attach_ids_add(&ids, "bpf_iter_task", BTF_KIND_FUNC, true), 0);
	ck_assert_int_eq(attach_ids_add(&ids, "btf_trace_bar", BTF_KIND_TYPEDEF, true), 0);
	ck_assert_int_eq(attach_ids_add(&ids, "btf_trace_none", BTF_KIND_TYPEDEF, true), 0);
	ck_assert_int_eq(attach_ids_resolve(&ids, r), 0);
	ck_assert_uint_eq(ids.v[0].id, btf__find_by_name_kind(r, "btf_trace_foo", BTF_KIND_TYPEDEF));
	ck_assert_uint_eq(ids.v[1].id, btf__find_by_name_kind(r, "bpf_iter_task", BTF_KIND_FUNC));
	ck_assert_uint_eq(ids.v[3].id, 0);
	fd = attach_kbtf_open(btf_path, &k);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(attach_ids_check(fd, &k, &ids), 0);
	/* another record's place, another kind, a place past the types */
	save = ids.v[0];
	ids.v[0].off = ids.v[2].off;
	ids.v[0].id = ids.v[2].id;
	ck_assert_int_eq(attach_ids_check(fd, &k, &ids), -ESTALE);
	ids.v[0] = save;
	ids.v[0].kind = BTF_KIND_FUNC;
	ck_assert_int_eq(attach_ids_check(fd, &k, &ids), -ESTALE);
	ids.v[0] = save;
	ids.v[0].off = 1 << 20;
	ck_assert_int_eq(attach_ids_check(fd, &k, &ids), -ESTALE);
	/* the right place with a wrong ID: the order of IDs and places disagrees */
	ids.v[0] = save;
	ids.v[0].id = ids.v[2].id + 1;
	ck_assert_int_eq(attach_ids_check(fd, &k, &ids), -ESTALE);
	ids.v[0] = save;
	ck_assert_int_eq(attach_ids_check(fd, &k, &ids), 0);
	close(fd);
	unlink(btf_path);
	btf__free(r);
	btf__free(w);

	/* the same places in a BTF where the name there is another: stale */
	w = small_btf("btf_trace_fop");
	write_btf(w);
	fd = attach_kbtf_open(btf_path, &k);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(attach_ids_check(fd, &k, &ids), -ESTALE);
	close(fd);
	unlink(btf_path);
	btf__free(w);
	ck_assert_int_lt(attach_kbtf_open("/nonexistent", &k), 0);
	attach_ids_free(&ids);
}
END_TEST

static struct bpf_object *open_obj(void)
{
	const char *path = getenv("SP_BPF_OBJ");
	struct bpf_object *obj;

	ck_assert_msg(path, "SP_BPF_OBJ is not set (meson sets it)");
	obj = bpf_object__open_file(path, NULL);
	ck_assert_msg(obj, "opening %s: %s", path, strerror(errno));
	return obj;
}

START_TEST(object_targets)
{
	struct bpf_object *obj = open_obj();
	struct attach_ids ids = {};
	struct bpf_program *p;
	size_t needed = 0;

	ck_assert_int_eq(attach_ids_of_object(obj, &ids), 0);
	ck_assert_ptr_nonnull(attach_ids_find(&ids, "btf_trace_sched_switch", BTF_KIND_TYPEDEF));
	ck_assert_ptr_nonnull(attach_ids_find(&ids, "bpf_iter_task", BTF_KIND_FUNC));
	ck_assert_ptr_null(attach_ids_find(&ids, "btf_trace_sched_switch", BTF_KIND_FUNC));
	for (size_t i = 0; i < ids.n; i++)
		needed += ids.v[i].needed;
	ck_assert_uint_eq(needed, ids.n);
	attach_ids_free(&ids);
	/* not autoloaded: still a target (cached for a run that loads it), not needed */
	bpf_object__for_each_program(p, obj)
		if (!strcmp(bpf_program__section_name(p), "tp_btf/sched_switch"))
			bpf_program__set_autoload(p, false);
	ck_assert_int_eq(attach_ids_of_object(obj, &ids), 0);
	ck_assert(!attach_ids_find(&ids, "btf_trace_sched_switch", BTF_KIND_TYPEDEF)->needed);
	attach_ids_free(&ids);
	bpf_object__close(obj);
}
END_TEST

/* One load's worth: arm, what libbpf's btf__load_vmlinux_btf() would get, done. */
static struct btf *arm(struct bpf_object *obj, bool core_btf)
{
	struct btf *b;

	attach_ids_arm(dir, NULL, obj, core_btf);
	b = btf__load_vmlinux_btf();
	ck_assert_ptr_nonnull(b);
	return b;
}

START_TEST(standing_in)
{
	struct bpf_object *obj;
	struct attach_ids_stats s;
	struct btf *own, *b;
	char line[200];
	int id, want;
	char *file;
	size_t len;

	if (access(VMLINUX_BTF_PATH, R_OK))
		return; /* a kernel without BTF: schedprof refuses to run there */
	own = btf__parse_raw(VMLINUX_BTF_PATH);
	ck_assert_ptr_nonnull(own);
	want = btf__find_by_name_kind(own, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	ck_assert_int_gt(want, 0);
	obj = open_obj();

	/* no btf_custom_path: not armed, the whole BTF as always */
	b = arm(obj, false);
	ck_assert_uint_eq(btf__type_cnt(b), btf__type_cnt(own));
	btf__free(b);
	attach_ids_done(&s);
	ck_assert(!s.armed);

	/* no cache: parsed, cached; libbpf gets the real BTF */
	b = arm(obj, true);
	ck_assert_uint_eq(btf__type_cnt(b), btf__type_cnt(own));
	ck_assert_int_eq(btf__find_by_name_kind(b, "btf_trace_sched_switch", BTF_KIND_TYPEDEF), want);
	btf__free(b);
	attach_ids_done(&s);
	ck_assert(s.armed && !s.hit && s.stored);
	ck_assert_str_eq(s.why, "no cache");
	attach_ids_describe(&s, line, sizeof(line));
	ck_assert_msg(strstr(line, "parsed (no cache)"), "%s", line);

	/* cached: the placeholder, answered as the whole BTF answers */
	b = arm(obj, true);
	ck_assert_uint_eq(btf__type_cnt(b), 1);
	ck_assert_ptr_null(btf__type_by_id(b, want));
	for (size_t i = 0; i < 4; i++) {
		static const char *const names[] = { "btf_trace_sched_switch",
			"btf_trace_sched_waking", "btf_trace_contention_begin", "bpf_iter_task" };
		uint32_t kind = i == 3 ? BTF_KIND_FUNC : BTF_KIND_TYPEDEF;

		ck_assert_int_eq(btf__find_by_name_kind(b, names[i], kind),
				 btf__find_by_name_kind(own, names[i], kind));
	}
	/* not asked by libbpf for our object: from the real BTF, counted; absent: -ESRCH */
	id = btf__find_by_name_kind(b, "task_struct", BTF_KIND_STRUCT);
	ck_assert_int_eq(id, btf__find_by_name_kind(own, "task_struct", BTF_KIND_STRUCT));
	ck_assert_int_eq(btf__find_by_name_kind(b, "btf_trace_no_such_tp", BTF_KIND_TYPEDEF), -ESRCH);
	btf__free(b);
	/* freed: another BTF at its address is not answered for */
	attach_ids_done(&s);
	ck_assert(s.armed && s.hit);
	ck_assert_uint_eq(s.unexpected, 2);
	attach_ids_describe(&s, line, sizeof(line));
	ck_assert_msg(strstr(line, "from the boot's cache"), "%s", line);

	/* damaged: not used, made again, then used */
	file = read_cache_file(&len);
	file[len - 1] ^= 1;
	write_cache_file(file, len);
	b = arm(obj, true);
	ck_assert_uint_eq(btf__type_cnt(b), btf__type_cnt(own));
	btf__free(b);
	attach_ids_done(&s);
	ck_assert(!s.hit && s.stored);
	b = arm(obj, true);
	ck_assert_uint_eq(btf__type_cnt(b), 1);
	btf__free(b);
	attach_ids_done(&s);
	ck_assert(s.hit);
	free(file);

	/* whole but wrong: sched_switch's entry moved to sched_waking's record */
	{
		struct attach_ids ids = {};
		struct attach_kbtf k;
		struct attach_target *sw, *wk;

		ck_assert_int_eq(attach_ids_cache_load(dir, &k, &ids), 0);
		sw = attach_ids_find(&ids, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
		wk = attach_ids_find(&ids, "btf_trace_sched_waking", BTF_KIND_TYPEDEF);
		ck_assert(sw && wk);
		sw->id = wk->id;
		sw->off = wk->off;
		ck_assert_int_eq(attach_ids_cache_store(dir, &k, &ids), 0);
		attach_ids_free(&ids);
	}
	b = arm(obj, true);
	ck_assert_uint_eq(btf__type_cnt(b), btf__type_cnt(own));
	btf__free(b);
	attach_ids_done(&s);
	ck_assert(!s.hit && s.stored);
	ck_assert_str_eq(s.why, "the cache does not match the kernel's BTF");
	b = arm(obj, true);
	ck_assert_int_eq(btf__find_by_name_kind(b, "btf_trace_sched_switch", BTF_KIND_TYPEDEF), want);
	btf__free(b);
	attach_ids_done(&s);
	ck_assert(s.hit);

	/* taken by no load: freed by done(), and nothing answers for it after */
	attach_ids_arm(dir, NULL, obj, true);
	attach_ids_done(&s);
	ck_assert(s.hit);
	ck_assert_ptr_null(attach_ids_take_vmlinux());
	bpf_object__close(obj);
	btf__free(own);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attach_ids");
	TCase *tc = tcase_create("cache");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, format_round_trip);
	tcase_add_test(tc, format_damage);
	tcase_add_test(tc, cache_files);
	tcase_add_test(tc, check_against_file);
	tcase_add_test(tc, object_targets);
	tcase_add_test(tc, standing_in);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
