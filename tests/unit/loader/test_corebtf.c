// SPDX-License-Identifier: BSD-2-Clause
/*
 * The per-boot CO-RE BTF (src/loader/corebtf.c), without root: what core_btf_build() copies
 * from a kernel BTF built here, and the boot cache's round trip in a scratch directory (made
 * once, read back, and made again whenever the file is stale, foreign, damaged or not ours).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "loader/corebtf.h"

/* The cache's header (src/loader/cache.c), then the CO-RE head: where the fields are. */
#define HDR_RELEASE (16 + 4 + 4 + 16 + 40)
#define HDR_SIZE 208
#define OBJ_HASH HDR_SIZE
#define BTF_START (HDR_SIZE + 16)

/*
 * A kernel: struct foo { int a; struct bar b; struct baz *p; struct foo *self;
 * union { int u1; long u2; }; int arr[4]; } with struct bar { int x:3, y:5; }, a flavoured
 * struct foo___v2, enum color, and struct unrelated, which nothing of ours can reach.
 */
static struct btf *kernel_btf(void)
{
	struct btf *k = btf__new_empty();
	int i32, i64, bar, baz, pbaz, foo, pfoo, anon, arr, v2, color, unrel;

	ck_assert_ptr_nonnull(k);
	i32 = btf__add_int(k, "int", 4, BTF_INT_SIGNED);
	i64 = btf__add_int(k, "long", 8, BTF_INT_SIGNED);
	bar = btf__add_struct(k, "bar", 4);
	ck_assert_int_eq(btf__add_field(k, "x", i32, 0, 3), 0);
	ck_assert_int_eq(btf__add_field(k, "y", i32, 3, 5), 0);
	baz = btf__add_struct(k, "baz", 8);
	ck_assert_int_eq(btf__add_field(k, "z", i64, 0, 0), 0);
	pbaz = btf__add_ptr(k, baz);
	anon = btf__add_union(k, NULL, 8);
	ck_assert_int_eq(btf__add_field(k, "u1", i32, 0, 0), 0);
	ck_assert_int_eq(btf__add_field(k, "u2", i64, 0, 0), 0);
	arr = btf__add_array(k, i32, i32, 4);
	pfoo = btf__add_ptr(k, arr + 2); /* to foo, added next: members follow their struct */
	foo = btf__add_struct(k, "foo", 56);
	ck_assert_int_eq(foo, arr + 2);
	ck_assert_int_eq(btf__add_field(k, "a", i32, 0, 0), 0);
	ck_assert_int_eq(btf__add_field(k, "b", bar, 32, 0), 0);
	ck_assert_int_eq(btf__add_field(k, "p", pbaz, 64, 0), 0);
	ck_assert_int_eq(btf__add_field(k, "self", pfoo, 128, 0), 0);
	ck_assert_int_eq(btf__add_field(k, NULL, anon, 192, 0), 0);
	ck_assert_int_eq(btf__add_field(k, "arr", arr, 256, 0), 0);
	v2 = btf__add_struct(k, "foo___v2", 4);
	ck_assert_int_eq(btf__add_field(k, "a", i32, 0, 0), 0);
	color = btf__add_enum(k, "color", 4);
	ck_assert_int_eq(btf__add_enum_value(k, "RED", 1), 0);
	ck_assert_int_eq(btf__add_enum_value(k, "BLUE", -2), 0);
	unrel = btf__add_struct(k, "unrelated", 4);
	ck_assert_int_eq(btf__add_field(k, "q", i32, 0, 0), 0);
	ck_assert_int_gt(i64 * pbaz * pfoo * v2 * color * unrel, 0);
	return k;
}

/* The object: struct foo___mine { int a; }, enum color, and a type no kernel has. */
static struct btf *object_btf(void)
{
	struct btf *o = btf__new_empty();
	int i32 = btf__add_int(o, "int", 4, BTF_INT_SIGNED);

	ck_assert_int_gt(btf__add_struct(o, "foo___mine", 4), 0);
	ck_assert_int_eq(btf__add_field(o, "a", i32, 0, 0), 0);
	ck_assert_int_gt(btf__add_enum(o, "color", 4), 0);
	ck_assert_int_eq(btf__add_enum_value(o, "RED", 1), 0);
	ck_assert_int_gt(btf__add_struct(o, "not_in_any_kernel", 4), 0);
	return o;
}

static const struct btf_type *find(const struct btf *b, const char *name, int kind, int *ret_id)
{
	int id = btf__find_by_name_kind(b, name, kind);

	ck_assert_msg(id > 0, "%s not found", name);
	if (ret_id)
		*ret_id = id;
	return btf__type_by_id(b, id);
}

/* Whether a's type id (in a) and b's (in b) are the same type up to a pointer. */
static void assert_same(const struct btf *a, int aid, const struct btf *b, int bid, int depth)
{
	const struct btf_type *ta = btf__type_by_id(a, aid), *tb = btf__type_by_id(b, bid);

	ck_assert_int_lt(depth, 8);
	ck_assert_int_eq(btf_kind(ta), btf_kind(tb));
	ck_assert_int_eq(ta->info, tb->info);
	ck_assert_str_eq(btf__name_by_offset(a, ta->name_off), btf__name_by_offset(b, tb->name_off));
	if (btf_is_ptr(ta))
		return; /* behind a pointer: checked by the callers */
	if (!btf_is_ptr(ta) && !btf_is_array(ta) && !btf_is_mod(ta) && !btf_is_typedef(ta))
		ck_assert_int_eq(ta->size, tb->size);
	if (btf_is_int(ta))
		ck_assert_int_eq(btf_int_bits(ta), btf_int_bits(tb));
	if (btf_is_array(ta)) {
		ck_assert_int_eq(btf_array(ta)->nelems, btf_array(tb)->nelems);
		assert_same(a, btf_array(ta)->type, b, btf_array(tb)->type, depth + 1);
	}
	if (btf_is_enum(ta))
		for (int i = 0; i < btf_vlen(ta); i++) {
			ck_assert_int_eq(btf_enum(ta)[i].val, btf_enum(tb)[i].val);
			ck_assert_str_eq(btf__name_by_offset(a, btf_enum(ta)[i].name_off),
					 btf__name_by_offset(b, btf_enum(tb)[i].name_off));
		}
	if (btf_is_composite(ta))
		for (int i = 0; i < btf_vlen(ta); i++) {
			const struct btf_member *ma = btf_members(ta) + i, *mb = btf_members(tb) + i;

			ck_assert_int_eq(ma->offset, mb->offset);
			ck_assert_str_eq(btf__name_by_offset(a, ma->name_off),
					 btf__name_by_offset(b, mb->name_off));
			assert_same(a, ma->type, b, mb->type, depth + 1);
		}
}

START_TEST(build_copies_candidates_and_what_they_embed)
{
	struct btf *k = kernel_btf(), *o = object_btf(), *c = NULL;
	const struct btf_type *foo, *m, *stub;
	int kfoo, cfoo, id;

	ck_assert_int_eq(core_btf_build(o, NULL, 0, k, &c), 0);
	ck_assert_ptr_nonnull(c);
	/* the candidates, flavours included, whole */
	find(k, "foo", BTF_KIND_STRUCT, &kfoo);
	foo = find(c, "foo", BTF_KIND_STRUCT, &cfoo);
	assert_same(k, kfoo, c, cfoo, 0);
	find(k, "foo___v2", BTF_KIND_STRUCT, &kfoo);
	find(c, "foo___v2", BTF_KIND_STRUCT, &id);
	assert_same(k, kfoo, c, id, 0);
	find(k, "color", BTF_KIND_ENUM, &kfoo);
	find(c, "color", BTF_KIND_ENUM, &id);
	assert_same(k, kfoo, c, id, 0);
	/* foo.self points at the one whole foo; foo.p at a member-less baz of baz's size */
	m = btf__type_by_id(c, btf_members(foo)[3].type);
	ck_assert(btf_is_ptr(m));
	ck_assert_int_eq(m->type, cfoo);
	m = btf__type_by_id(c, btf_members(foo)[2].type);
	ck_assert(btf_is_ptr(m));
	stub = btf__type_by_id(c, m->type);
	ck_assert(btf_is_struct(stub));
	ck_assert_str_eq(btf__name_by_offset(c, stub->name_off), "baz");
	ck_assert_int_eq(btf_vlen(stub), 0);
	ck_assert_int_eq(stub->size, 8);
	/* nothing else: struct unrelated is no candidate and reached by none */
	ck_assert_int_lt(btf__find_by_name_kind(c, "unrelated", BTF_KIND_STRUCT), 0);
	ck_assert_int_lt(btf__find_by_name_kind(c, "not_in_any_kernel", BTF_KIND_STRUCT), 0);
	ck_assert_int_lt(btf__type_cnt(c), btf__type_cnt(k));
	btf__free(c);
	btf__free(o);
	btf__free(k);
}
END_TEST

START_TEST(build_without_named_types_fails)
{
	struct btf *k = kernel_btf(), *o = btf__new_empty(), *c = (struct btf *)1;

	ck_assert_int_gt(btf__add_ptr(o, 0), 0);
	ck_assert_int_eq(core_btf_build(o, NULL, 0, k, &c), -ENOENT);
	ck_assert_ptr_null(c);
	btf__free(o);
	btf__free(k);
}
END_TEST

/* The kernel's own BTF, when readable: every struct of the object found there, whole. */
START_TEST(build_from_running_kernel)
{
	struct btf *k = btf__parse("/sys/kernel/btf/vmlinux", NULL), *o, *c = NULL;
	static const char *const names[] = { "task_struct", "list_head", "rw_semaphore" };

	if (!k) {
		ck_assert_msg(!getenv("CI"), "no /sys/kernel/btf/vmlinux under CI");
		return;
	}
	o = btf__new_empty();
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_int_gt(btf__add_struct(o, names[i], 0), 0);
	ck_assert_int_eq(core_btf_build(o, NULL, 0, k, &c), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int kid, cid;

		find(k, names[i], BTF_KIND_STRUCT, &kid);
		find(c, names[i], BTF_KIND_STRUCT, &cid);
		assert_same(k, kid, c, cid, 0);
	}
	/* a few thousand types at most, of the kernel's ~100k */
	ck_assert_int_lt(btf__type_cnt(c), btf__type_cnt(k) / 10);
	btf__free(c);
	btf__free(o);
	btf__free(k);
}
END_TEST

/* ---- the boot cache ---- */

static char dir[64], kpath[96], cpath[96], fake[96];
static void *elf;
static size_t elf_size;

/*
 * The object's relocations need the real kernel's types: the cache is made from
 * /sys/kernel/btf/vmlinux (readable without root). fake: a kernel BTF without them.
 */
static void cache_setup(void)
{
	const char *obj = getenv("SP_BPF_OBJ");
	struct btf *k = kernel_btf();
	const void *raw;
	uint32_t len;
	FILE *f;

	ck_assert_msg(obj != NULL, "SP_BPF_OBJ must name the BPF object");
	snprintf(dir, sizeof(dir), "/tmp/sp-corebtf.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(kpath, sizeof(kpath), "/sys/kernel/btf/vmlinux");
	snprintf(fake, sizeof(fake), "%s/vmlinux", dir);
	snprintf(cpath, sizeof(cpath), "%s/core.cache", dir);
	raw = btf__raw_data(k, &len);
	f = fopen(fake, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fwrite(raw, 1, len, f), len);
	fclose(f);
	btf__free(k);
	f = fopen(obj, "r");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	elf_size = ftell(f);
	rewind(f);
	elf = malloc(elf_size);
	ck_assert_int_eq(fread(elf, 1, elf_size, f), elf_size);
	fclose(f);
}

/* false when the running kernel has no BTF to make it from (a failure under CI) */
static bool have_kernel_btf(void)
{
	if (!access(kpath, R_OK))
		return true;
	ck_assert_msg(!getenv("CI"), "no /sys/kernel/btf/vmlinux under CI");
	return false;
}

static void cache_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(elf);
}

/* Opens it: whether it was made now; the memfd holds a BTF with foo. */
static bool open_made(void)
{
	struct core_btf c;
	struct btf *b;
	bool made;

	ck_assert_int_eq(core_btf_open(dir, elf, elf_size, kpath, &c), 0);
	ck_assert_int_ge(c.fd, 0);
	b = btf__parse(c.path, NULL);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_gt(btf__type_cnt(b), 1);
	btf__free(b);
	made = c.made;
	core_btf_close(&c);
	ck_assert_int_eq(c.fd, -1);
	return made;
}

static void poke(long off, const void *data, size_t len)
{
	int fd = open(cpath, O_WRONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, data, len, off), (ssize_t)len);
	close(fd);
}

START_TEST(cache_made_once_then_read)
{
	if (!have_kernel_btf())
		return;
	ck_assert(open_made());
	ck_assert(!open_made());
	ck_assert(!open_made());
}
END_TEST

START_TEST(cache_damaged_btf_is_made_again)
{
	struct stat st;
	char b;

	if (!have_kernel_btf())
		return;

	ck_assert(open_made());
	ck_assert_int_eq(stat(cpath, &st), 0);
	/* one byte of the BTF's string section: still a BTF, but not the one hashed */
	ck_assert_int_eq(pread(open(cpath, O_RDONLY), &b, 1, st.st_size - 2), 1);
	b ^= 0x20;
	poke(st.st_size - 2, &b, 1);
	ck_assert(open_made());
	ck_assert(!open_made());
	/* cut short */
	ck_assert_int_eq(truncate(cpath, st.st_size - 1), 0);
	ck_assert(open_made());
	ck_assert(!open_made());
	/* longer */
	poke(st.st_size, "x", 1);
	ck_assert(open_made());
	ck_assert(!open_made());
}
END_TEST

START_TEST(cache_of_another_object_or_kernel_is_made_again)
{
	uint64_t other = 42;

	if (!have_kernel_btf())
		return;

	ck_assert(open_made());
	poke(OBJ_HASH, &other, sizeof(other)); /* a rebuilt schedprof's */
	ck_assert(open_made());
	ck_assert(!open_made());
	poke(HDR_RELEASE, "0.0.1-other", 12); /* another kernel's */
	ck_assert(open_made());
	ck_assert(!open_made());
	/* another object: made for it, then the first one's is made again */
	((char *)elf)[elf_size - 1] ^= 1;
	ck_assert(open_made());
	ck_assert(!open_made());
	((char *)elf)[elf_size - 1] ^= 1;
	ck_assert(open_made());
}
END_TEST

START_TEST(cache_not_ours_alone_is_made_again)
{
	char target[128];

	if (!have_kernel_btf())
		return;

	ck_assert(open_made());
	/* writable by others: not trusted */
	ck_assert_int_eq(chmod(cpath, 0666), 0);
	ck_assert(open_made());
	ck_assert(!open_made());
	/* another user's (root can make one): not trusted */
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(cpath, 12345, 12345), 0);
		ck_assert(open_made());
		ck_assert(!open_made());
	}
	/* a symlink to a valid cache: not followed, replaced */
	snprintf(target, sizeof(target), "%s/elsewhere", dir);
	ck_assert_int_eq(rename(cpath, target), 0);
	ck_assert_int_eq(symlink(target, cpath), 0);
	ck_assert(open_made());
	ck_assert(!open_made());
}
END_TEST

START_TEST(cache_unwritable_dir_still_opens)
{
	struct core_btf c;
	char sub[96];

	if (!have_kernel_btf())
		return;

	snprintf(sub, sizeof(sub), "%s/missing", dir);
	ck_assert_int_eq(core_btf_open(sub, elf, elf_size, kpath, &c), 0);
	ck_assert(c.made);
	core_btf_close(&c);
	/* no kernel BTF: an error, and nothing open */
	snprintf(sub, sizeof(sub), "%s/none", dir);
	ck_assert_int_lt(core_btf_open(dir, elf, elf_size, sub, &c), 0);
	ck_assert_int_eq(c.fd, -1);
}
END_TEST

/* A kernel without the object's types: none is used, and the boot's cache says so. */
START_TEST(cache_says_when_none_serves)
{
	struct core_btf c;
	struct stat st;

	ck_assert_int_eq(core_btf_open(dir, elf, elf_size, fake, &c), -ENOTSUP);
	ck_assert_int_eq(c.fd, -1);
	ck_assert_int_eq(stat(cpath, &st), 0);
	ck_assert_int_eq(st.st_size, BTF_START);
	/* read back, not made again: from the fake kernel's absence of BTF there is nothing */
	ck_assert_int_eq(unlink(fake), 0);
	ck_assert_int_eq(core_btf_open(dir, elf, elf_size, fake, &c), -ENOTSUP);
	/* another object's answer is not this one's */
	((char *)elf)[elf_size - 1] ^= 1;
	ck_assert_int_lt(core_btf_open(dir, elf, elf_size, fake, &c), 0);
	ck_assert_int_ne(core_btf_open(dir, elf, elf_size, fake, &c), -ENOTSUP);
	((char *)elf)[elf_size - 1] ^= 1;
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("corebtf");
	TCase *b = tcase_create("build"), *c = tcase_create("cache");

	tcase_add_test(b, build_copies_candidates_and_what_they_embed);
	tcase_add_test(b, build_without_named_types_fails);
	tcase_add_test(b, build_from_running_kernel);
	tcase_set_timeout(b, 30);
	suite_add_tcase(s, b);
	tcase_add_checked_fixture(c, cache_setup, cache_teardown);
	tcase_add_test(c, cache_made_once_then_read);
	tcase_add_test(c, cache_damaged_btf_is_made_again);
	tcase_add_test(c, cache_of_another_object_or_kernel_is_made_again);
	tcase_add_test(c, cache_not_ours_alone_is_made_again);
	tcase_add_test(c, cache_unwritable_dir_still_opens);
	tcase_add_test(c, cache_says_when_none_serves);
	tcase_set_timeout(c, 60);
	suite_add_tcase(s, c);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
