// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel features from BTF (src/collect/kfeatures.c), without root: on BTF built here with
 * libbpf's writer API, on files, and on the running kernel's /sys/kernel/btf/vmlinux.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "kfeatures.h"

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
	static const char *const funcs[] = { "BPF_FUNC_loop", NULL };
	struct btf *btf = btf__new_empty();
	struct sp_features f;
	int int_id = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);

	add_enum(btf, "bpf_map_type", maps);
	add_enum(btf, "bpf_func_id", funcs);
	add_tp(btf, int_id, "sched_switch", 4);
	add_tp(btf, int_id, "contention_begin", 2);
	kfeatures_probe(btf, &f);
	for (int i = 0; i < SP_FEAT__MAX; i++)
		ck_assert_msg(f.has[i], "feature %d", i);
	ck_assert_int_eq(kfeatures_first_missing(&f, ~0u), -1);
	btf__free(btf);
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
		ck_assert_int_eq(kfeatures_first_missing(&f, ~0u), -1);
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
	tcase_add_test(tc, files);
	tcase_add_test(tc, running_kernel);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
