// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel features (src/loader/kfeatures.c), without root: from BTF built here with libbpf's
 * writer API, on files, and on the running kernel's /sys/kernel/btf/vmlinux; and the per-boot
 * cache of what the probes found (its text form, its file).
 */
#include <check.h>
#include <fcntl.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>
#include <bpf/btf.h>

#include "../unit.h"
#include "loader/cache.h"
#include "loader/kfeatures.h"

/* A tracepoint's typedef as the kernel emits it: pointer to a prototype of nargs + 1 params. */
static void add_tp(struct btf *btf, int int_id, const char *name, int nargs)
{
	char tn[128];
	int proto = btf__add_func_proto(btf, 0);

	ck_assert_int_gt(proto, 0);
	for (int i = 0; i <= nargs; i++)
		ck_assert_int_eq(btf__add_func_param(btf, NULL, int_id), 0);
	snprintf(tn, sizeof(tn), "btf_trace_%s", name);
	ck_assert_int_gt(btf__add_typedef(btf, tn, btf__add_ptr(btf, proto)), 0);
}

static void add_enum(struct btf *btf, const char *name, const char *const *vals)
{
	ck_assert_int_gt(btf__add_enum(btf, name, 4), 0);
	for (int i = 0; vals[i]; i++)
		ck_assert_int_eq(btf__add_enum_value(btf, vals[i], i), 0);
}

/*
 * What the views need (BTF tells those); the ways (mem_key, arg_untrusted) only a probe tells,
 * storage_nosleep BTF too (true on a kernel that is not PREEMPT_RT: storage_nosleep below),
 * and steal_split only the kernel's config.
 */
#define NEEDS (~0u & ~SP_FEAT(SP_FEAT_MEM_KEY) & ~SP_FEAT(SP_FEAT_ARG_UNTRUSTED) & \
	       ~SP_FEAT(SP_FEAT_STORAGE_NOSLEEP) & ~SP_FEAT(SP_FEAT_STEAL_SPLIT))
#define NEW_KERNEL (NEEDS | SP_FEAT(SP_FEAT_STORAGE_NOSLEEP))

/* A kernel of about 5.17: bpf_loop, no lock tracepoints, the 4-argument sched_switch. */
static struct btf *old_kernel(void)
{
	static const char *const maps[] = { "BPF_MAP_TYPE_HASH", "BPF_MAP_TYPE_RINGBUF",
					     "BPF_MAP_TYPE_TASK_STORAGE", NULL };
	static const char *const funcs[] = { "BPF_FUNC_unspec", "BPF_FUNC_loop", NULL };
	struct btf *btf = btf__new_empty();
	int int_id;

	ck_assert_ptr_nonnull(btf);
	int_id = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	ck_assert_int_gt(int_id, 0);
	add_enum(btf, "bpf_map_type", maps);
	add_enum(btf, "bpf_func_id", funcs);
	add_tp(btf, int_id, "sched_switch", 3);
	return btf;
}

START_TEST(built_btf)
{
	struct sp_features f;
	struct btf *btf = old_kernel();
	char line[160];

	kfeatures_probe(btf, &f);
	ck_assert(f.has[SP_FEAT_TASK_STORAGE]);
	ck_assert(f.has[SP_FEAT_RINGBUF]);
	ck_assert(f.has[SP_FEAT_LOOP]);
	ck_assert(!f.has[SP_FEAT_SWITCH_TP]); /* no prev_state yet */
	ck_assert(!f.has[SP_FEAT_LOCK_TP]);
	ck_assert_int_eq(kfeatures_first_missing(&f, SP_FEAT(SP_FEAT_LOOP) | SP_FEAT(SP_FEAT_RINGBUF)), -1);
	ck_assert_int_eq(kfeatures_first_missing(&f, SP_FEAT(SP_FEAT_LOOP) | SP_FEAT(SP_FEAT_LOCK_TP)),
			 SP_FEAT_LOCK_TP);
	kfeatures_describe(SP_FEAT_SWITCH_TP, line, sizeof(line));
	ck_assert_str_eq(line, "this kernel has no prev_state in the sched_switch tracepoint (Linux 5.18)");
	kfeatures_describe(SP_FEAT_LOOP, line, sizeof(line));
	ck_assert_str_eq(line, "this kernel has no bpf_loop() (Linux 5.17)");

	btf__free(btf);
}
END_TEST

START_TEST(new_kernel)
{
	static const char *const maps[] = { "BPF_MAP_TYPE_RINGBUF", "BPF_MAP_TYPE_TASK_STORAGE", NULL };
	static const char *const funcs[] = { "BPF_FUNC_loop", "BPF_FUNC_get_current_task_btf",
					      NULL };
	struct btf *btf = btf__new_empty();
	struct sp_features f;
	int int_id = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);

	add_enum(btf, "bpf_map_type", maps);
	add_enum(btf, "bpf_func_id", funcs);
	add_tp(btf, int_id, "sched_switch", 4);
	add_tp(btf, int_id, "sched_process_fork", 2);
	add_tp(btf, int_id, "contention_begin", 2);
	ck_assert_int_gt(btf__add_func(btf, "bpf_iter_task", BTF_FUNC_GLOBAL,
				       btf__add_func_proto(btf, int_id)), 0);
	kfeatures_probe(btf, &f);
	for (int i = 0; i < SP_FEAT__MAX; i++)
		ck_assert_msg(f.has[i] == !!(NEW_KERNEL & SP_FEAT(i)), "feature %d", i);
	ck_assert_int_eq(kfeatures_first_missing(&f, NEEDS), -1);
	btf__free(btf);
}
END_TEST

/*
 * A kernel's struct spinlock and struct bpf_local_storage_map as far as
 * kfeatures_storage_nosleep() looks: PREEMPT_RT's spinlock holds an rt_mutex_base `lock`,
 * the others' an unnamed union with a raw spinlock `rlock`; from Linux 6.4 the map has bpf_ma.
 */
static struct btf *locks_kernel(bool rt, bool bpf_ma)
{
	struct btf *btf = btf__new_empty();
	int int_id = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	int raw = btf__add_struct(btf, rt ? "rt_mutex_base" : "raw_spinlock", 4), u, lock;

	ck_assert_int_gt(raw, 0);
	ck_assert_int_eq(btf__add_field(btf, "x", int_id, 0, 0), 0);
	if (rt) {
		lock = btf__add_struct(btf, "spinlock", 4);
		ck_assert_int_eq(btf__add_field(btf, "lock", raw, 0, 0), 0);
	} else {
		u = btf__add_union(btf, NULL, 4);
		ck_assert_int_eq(btf__add_field(btf, "rlock", raw, 0, 0), 0);
		lock = btf__add_struct(btf, "spinlock", 4);
		ck_assert_int_eq(btf__add_field(btf, NULL, u, 0, 0), 0);
	}
	ck_assert_int_gt(lock, 0);
	ck_assert_int_gt(btf__add_struct(btf, "bpf_local_storage_map", 8), 0);
	ck_assert_int_eq(btf__add_field(btf, "bucket_log", int_id, 0, 0), 0);
	if (bpf_ma)
		ck_assert_int_eq(btf__add_field(btf, "bpf_ma", int_id, 32, 0), 0);
	return btf;
}

/* Task storage made where a program cannot sleep: not on PREEMPT_RT before bpf_ma. */
START_TEST(storage_nosleep)
{
	static const struct {
		bool rt, bpf_ma, nosleep;
	} kernels[] = {
		{ false, false, true }, /* 6.1 */
		{ false, true, true },	/* 6.12 */
		{ true, false, false }, /* 6.1 PREEMPT_RT: kmalloc under a sleeping slab lock */
		{ true, true, true },	/* PREEMPT_RT from 6.4: bpf_mem_alloc's caches */
	};
	struct sp_features f;

	for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++) {
		struct btf *btf = locks_kernel(kernels[i].rt, kernels[i].bpf_ma);

		ck_assert_msg(kfeatures_storage_nosleep(btf) == kernels[i].nosleep, "kernel %zu", i);
		kfeatures_probe(btf, &f);
		ck_assert(f.has[SP_FEAT_STORAGE_NOSLEEP] == kernels[i].nosleep);
		btf__free(btf);
	}
	/* a BTF without struct spinlock at all (built_btf's) is not taken for PREEMPT_RT */
	{
		struct btf *btf = old_kernel();

		ck_assert(kfeatures_storage_nosleep(btf));
		btf__free(btf);
	}
}
END_TEST

/* Writes raw BTF (from btf, or a header and a string section only) to a temporary file. */
static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	if (len)
		ck_assert_uint_eq(fwrite(data, len, 1, f), 1);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(files)
{
	/* what tests/integration/test_locks.sh uses for a kernel without the lock tracepoints */
	static const char strs[] = "\0int\0btf_trace_sched_switch";
	struct {
		uint16_t magic;
		uint8_t version, flags;
		uint32_t hdr_len, type_off, type_len, str_off, str_len;
		char s[sizeof(strs)];
	} __attribute__((packed)) strings_only = { 0xeB9F, 1, 0, 24, 0, 0, 0, sizeof(strs), {} };
	char path[] = "/tmp/sp_kfeat_XXXXXX";
	struct sp_features f;
	struct btf *btf = old_kernel();
	const void *raw;
	__u32 len;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	raw = btf__raw_data(btf, &len);
	ck_assert_ptr_nonnull(raw);
	write_file(path, raw, len);
	ck_assert_int_eq(kfeatures_probe_file(path, &f), 0);
	ck_assert(f.has[SP_FEAT_LOOP] && !f.has[SP_FEAT_LOCK_TP] && !f.has[SP_FEAT_SWITCH_TP]);
	btf__free(btf);

	memcpy(strings_only.s, strs, sizeof(strs));
	write_file(path, &strings_only, sizeof(strings_only));
	ck_assert_int_eq(kfeatures_probe_file(path, &f), 0);
	ck_assert_int_eq(kfeatures_first_missing(&f, SP_FEAT(SP_FEAT_LOCK_TP)), SP_FEAT_LOCK_TP);

	/* not BTF: an error, f untouched */
	f.has[SP_FEAT_LOOP] = true;
	write_file(path, "not btf at all, not btf at all", 30);
	ck_assert_int_lt(kfeatures_probe_file(path, &f), 0);
	ck_assert(f.has[SP_FEAT_LOOP]);
	unlink(path);
	ck_assert_int_eq(kfeatures_probe_file(path, &f), -ENOENT);
}
END_TEST

/* The running kernel's: readable by anyone; from 5.19 on, everything is there. */
START_TEST(running_kernel)
{
	struct sp_features f;
	struct utsname u;
	int major = 0, minor = 0;

	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return;
	ck_assert_int_eq(kfeatures_probe_file(NULL, &f), 0);
	ck_assert_int_eq(uname(&u), 0);
	sscanf(u.release, "%d.%d", &major, &minor);
	if (major > 5 || (major == 5 && minor >= 19))
		ck_assert_int_eq(kfeatures_first_missing(&f, NEEDS), -1);
}
END_TEST

/* Features set by the bits of mask. */
static struct sp_features of_mask(unsigned int mask)
{
	struct sp_features f = {};

	for (int i = 0; i < SP_FEAT__MAX; i++)
		f.has[i] = mask & SP_FEAT(i);
	return f;
}

START_TEST(keys)
{
	for (int i = 0; i < SP_FEAT__MAX; i++) {
		ck_assert_ptr_nonnull(kfeatures_key(i));
		ck_assert(!strchr(kfeatures_key(i), ' ') && !strchr(kfeatures_key(i), ','));
		for (int j = 0; j < i; j++)
			ck_assert_str_ne(kfeatures_key(i), kfeatures_key(j));
	}
	ck_assert_ptr_null(kfeatures_key(SP_FEAT__MAX));
	ck_assert_ptr_null(kfeatures_key(-1));
}
END_TEST

/* Every feature, each on and off, comes back as it went: each bit alone, all, none. */
START_TEST(text_round_trip)
{
	unsigned int masks[SP_FEAT__MAX + 3];
	char buf[1024];
	int n;

	for (int i = 0; i < SP_FEAT__MAX; i++)
		masks[i] = SP_FEAT(i);
	masks[SP_FEAT__MAX] = 0;
	masks[SP_FEAT__MAX + 1] = ~0u;
	masks[SP_FEAT__MAX + 2] = 0x2a5;
	for (size_t k = 0; k < sizeof(masks) / sizeof(masks[0]); k++) {
		struct sp_features f = of_mask(masks[k]), got;

		n = kfeatures_encode(&f, buf, sizeof(buf));
		ck_assert_int_gt(n, 0);
		ck_assert_uint_eq(strlen(buf), (size_t)n);
		memset(&got, 0xff, sizeof(got));
		ck_assert_int_eq(kfeatures_decode(buf, (size_t)n, &got), 0);
		for (int i = 0; i < SP_FEAT__MAX; i++)
			ck_assert_msg(got.has[i] == f.has[i], "mask %#x feature %s", masks[k],
				      kfeatures_key(i));
	}
	/* a line per feature, "KEY 0|1", in any order */
	n = kfeatures_encode(&(struct sp_features){ .has[SP_FEAT_MEM_KEY] = true }, buf,
			     sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "mem_key 1\n"));
	ck_assert_ptr_nonnull(strstr(buf, "arg_untrusted 0\n"));
	ck_assert_int_eq(kfeatures_encode(&(struct sp_features){}, buf, 8), -ENOSPC);
}
END_TEST

/* The text of of_mask(~0u), with line `drop` (0-based) left out, or NULL. */
static int text_without(char *buf, size_t len, int drop)
{
	struct sp_features f = of_mask(~0u);
	char full[1024], *p = full, *out = buf;
	int line = 0;

	ck_assert_int_gt(kfeatures_encode(&f, full, sizeof(full)), 0);
	while (*p) {
		char *nl = strchr(p, '\n');
		size_t n = (size_t)(nl - p) + 1;

		if (line++ != drop) {
			ck_assert_uint_lt((size_t)(out - buf) + n, len);
			memcpy(out, p, n);
			out += n;
		}
		p += n;
	}
	*out = 0;
	return (int)(out - buf);
}

/* A text that is not this version's cache is refused whole, and f is left as it was. */
START_TEST(text_refused)
{
	static const char *const bad[] = {
		"",				  /* no feature */
		"mem_key 1\n",			  /* one feature only */
		"task_storage 2\n",		  /* not 0 or 1 */
		"task_storage  1\n",		  /* two spaces */
		"task_storage 1",		  /* no newline */
	};
	struct sp_features f = of_mask(0x15), before = f;
	char buf[1024], extra[1100];
	int n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(kfeatures_decode(bad[i], strlen(bad[i]), &f), -EINVAL);
		ck_assert(!memcmp(&f, &before, sizeof(f)));
	}
	/* each feature's line missing */
	for (int drop = 0; drop < SP_FEAT__MAX; drop++) {
		n = text_without(buf, sizeof(buf), drop);
		ck_assert_int_eq(kfeatures_decode(buf, (size_t)n, &f), -EINVAL);
	}
	n = text_without(buf, sizeof(buf), -1);
	ck_assert_int_eq(kfeatures_decode(buf, (size_t)n, &f), 0);
	/* one twice, one unknown (a newer version's), a cut last line */
	snprintf(extra, sizeof(extra), "%smem_key 0\n", buf);
	ck_assert_int_eq(kfeatures_decode(extra, strlen(extra), &f), -EINVAL);
	snprintf(extra, sizeof(extra), "%sfuture_thing 1\n", buf);
	ck_assert_int_eq(kfeatures_decode(extra, strlen(extra), &f), -EINVAL);
	ck_assert_int_eq(kfeatures_decode(buf, (size_t)n - 1, &f), -EINVAL);
	/* a NUL inside */
	memcpy(extra, buf, (size_t)n);
	extra[3] = 0;
	ck_assert_int_eq(kfeatures_decode(extra, (size_t)n, &f), -EINVAL);
}
END_TEST

static char dir[64];

static void cache_setup(void)
{
	unit_tmpdir_make(dir, sizeof(dir), "kfeat");
}

static void cache_teardown(void)
{
	unit_tmpdir_remove(dir);
}

/* The file: what was stored comes back, for this boot; a damaged file is not used. */
START_TEST(cache_file)
{
	struct sp_features f = of_mask(SP_FEAT(SP_FEAT_LOOP) | SP_FEAT(SP_FEAT_ARG_UNTRUSTED)), got;
	char path[128];
	struct stat st;
	int fd;

	ck_assert_int_eq(kfeatures_cache_load(dir, &got), -ENOENT);
	ck_assert_int_eq(kfeatures_cache_store(dir, &f), 0);
	memset(&got, 0, sizeof(got));
	ck_assert_int_eq(kfeatures_cache_load(dir, &got), 0);
	ck_assert(!memcmp(&got, &f, sizeof(f)));
	/* a byte of the data changed: the line no longer parses, no cache */
	snprintf(path, sizeof(path), "%s/kfeatures.cache", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "X", 1, st.st_size - 2), 1);
	close(fd);
	ck_assert_int_eq(kfeatures_cache_load(dir, &got), -ENOENT);
	/* cut short */
	ck_assert_int_eq(kfeatures_cache_store(dir, &f), 0);
	ck_assert_int_eq(truncate(path, st.st_size - 3), 0);
	ck_assert_int_eq(kfeatures_cache_load(dir, &got), -ENOENT);
}
END_TEST

/*
 * What is not this kind's data in this kind's file is not read: the older binary form
 * (struct sp_features' five bools), and another kind's file renamed to this one's.
 */
START_TEST(cache_other_format)
{
	static const bool old[5] = { true, true, true, true, true };
	struct sp_features f = of_mask(~0u), got;
	char buf[1024], from[128], to[128];
	int n = kfeatures_encode(&f, buf, sizeof(buf));

	ck_assert_int_eq(cache_store(dir, CACHE_FEATURES, old, sizeof(old)), 0);
	ck_assert_int_eq(kfeatures_cache_load(dir, &got), -ENOENT);
	ck_assert_int_eq(cache_store(dir, CACHE_ATTACH, buf, (size_t)n), 0);
	snprintf(from, sizeof(from), "%s/%s", dir, cache_file_name(CACHE_ATTACH));
	snprintf(to, sizeof(to), "%s/%s", dir, cache_file_name(CACHE_FEATURES));
	ck_assert_int_eq(rename(from, to), 0);
	ck_assert_int_eq(kfeatures_cache_load(dir, &got), -ENOENT);
}
END_TEST

/* Writes text to dir/name, gzip'd when gz; its path in path. */
static void write_config(const char *name, const char *text, bool gz, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", dir, name);
	if (gz) {
		gzFile g = gzopen(path, "wb");

		ck_assert_ptr_nonnull(g);
		ck_assert_int_eq(gzputs(g, text), (int)strlen(text));
		ck_assert_int_eq(gzclose(g), Z_OK);
	} else {
		FILE *f = fopen(path, "w");

		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(fputs(text, f) >= 0, 1);
		ck_assert_int_eq(fclose(f), 0);
	}
}

/*
 * The config's answer: either option set to y, in a plain or gzip'd file; not set, set to m
 * or n, a longer option with the same start, or no file at all: no. It is not in BTF, so the
 * BTF probe leaves it off, and the cache carries it like any feature.
 */
START_TEST(config_steal_split)
{
	static const struct {
		const char *text;
		bool yes;
	} cases[] = {
		{ "CONFIG_X=y\nCONFIG_IRQ_TIME_ACCOUNTING=y\nCONFIG_Z=y\n", true },
		{ "# CONFIG_IRQ_TIME_ACCOUNTING is not set\nCONFIG_PARAVIRT_TIME_ACCOUNTING=y\n", true },
		{ "# CONFIG_IRQ_TIME_ACCOUNTING is not set\n"
		  "# CONFIG_PARAVIRT_TIME_ACCOUNTING is not set\n", false },
		{ "CONFIG_IRQ_TIME_ACCOUNTING_X=y\nCONFIG_PARAVIRT_TIME_ACCOUNTING=n\n", false },
		{ "", false },
	};
	struct sp_features f = of_mask(~0u), got;
	struct btf *btf = old_kernel();
	char path[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_config("config", cases[i].text, false, path, sizeof(path));
		ck_assert_msg(kfeatures_config_splits_steal(path) == cases[i].yes, "plain %zu", i);
		write_config("config.gz", cases[i].text, true, path, sizeof(path));
		ck_assert_msg(kfeatures_config_splits_steal(path) == cases[i].yes, "gzip'd %zu", i);
	}
	snprintf(path, sizeof(path), "%s/nosuch", dir);
	ck_assert(!kfeatures_config_splits_steal(path));
	kfeatures_probe(btf, &got);
	ck_assert(!got.has[SP_FEAT_STEAL_SPLIT]);
	btf__free(btf);
	ck_assert_int_eq(kfeatures_cache_store(dir, &f), 0);
	ck_assert_int_eq(kfeatures_cache_load(dir, &got), 0);
	ck_assert(got.has[SP_FEAT_STEAL_SPLIT]);
	f.has[SP_FEAT_STEAL_SPLIT] = false;
	ck_assert_int_eq(kfeatures_cache_store(dir, &f), 0);
	ck_assert_int_eq(kfeatures_cache_load(dir, &got), 0);
	ck_assert(!got.has[SP_FEAT_STEAL_SPLIT] && got.has[SP_FEAT_LOOP]);
}
END_TEST

/* The running kernel's config: /proc/config.gz when there is one, else /boot's for its release. */
START_TEST(config_running_kernel)
{
	struct utsname u;
	char path[sizeof("/boot/config-") + sizeof(u.release)];

	ck_assert_int_eq(uname(&u), 0);
	snprintf(path, sizeof(path), "/boot/config-%s", u.release);
	ck_assert(kfeatures_config_splits_steal(NULL) ==
		  kfeatures_config_splits_steal(access("/proc/config.gz", R_OK) ? path :
						"/proc/config.gz"));
}
END_TEST

/* The tests' override turns features off by name, never on; a name it does not know fails. */
START_TEST(force_off)
{
	struct sp_features f = of_mask(~0u), before;

	ck_assert_int_eq(kfeatures_force_off(&f, ""), 0);
	ck_assert_int_eq(kfeatures_first_missing(&f, ~0u), -1);
	ck_assert_int_eq(kfeatures_force_off(&f, "arg_untrusted,mem_key"), 0);
	for (int i = 0; i < SP_FEAT__MAX; i++)
		ck_assert(f.has[i] == (i != SP_FEAT_ARG_UNTRUSTED && i != SP_FEAT_MEM_KEY));
	before = f;
	ck_assert_int_eq(kfeatures_force_off(&f, "bpf_loop,nosuch"), -EINVAL);
	ck_assert_int_eq(kfeatures_force_off(&f, "mem"), -EINVAL);
	ck_assert(!memcmp(&f, &before, sizeof(f)));
	f = of_mask(0);
	ck_assert_int_eq(kfeatures_force_off(&f, "tp_btf"), 0);
	ck_assert_int_eq(kfeatures_first_missing(&f, ~0u), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kfeatures");
	TCase *tc = tcase_create("btf");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, built_btf);
	tcase_add_test(tc, new_kernel);
	tcase_add_test(tc, storage_nosleep);
	tcase_add_test(tc, files);
	tcase_add_test(tc, running_kernel);
	suite_add_tcase(s, tc);
	tc = tcase_create("cache");
	tcase_add_checked_fixture(tc, cache_setup, cache_teardown);
	tcase_add_test(tc, keys);
	tcase_add_test(tc, text_round_trip);
	tcase_add_test(tc, text_refused);
	tcase_add_test(tc, cache_file);
	tcase_add_test(tc, cache_other_format);
	tcase_add_test(tc, force_off);
	tcase_add_test(tc, config_steal_split);
	tcase_add_test(tc, config_running_kernel);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
