// SPDX-License-Identifier: BSD-2-Clause
/*
 * The self-check of the libbpf interposition (src/loader/btf_interpose.c), without root, in
 * two builds of this test: with the replacements exported as in schedprof (the check passes,
 * unless the kill switch is set), and with them hidden (-fvisibility=hidden, libbpf.h's LIBBPF_API empty: libbpf cannot
 * see them, as with a static libbpf or -Bsymbolic), where the check must fail quietly and
 * libbpf's own functions answer. Either way libbpf_find_vmlinux_btf_id() afterwards gives the
 * kernel's real ID: the plain path is whole, never half replaced. A third build hides only
 * the lookup (the half-applied case: libbpf would take our placeholder BTF and search it
 * itself): the check fails there too, nothing is armed, and a load as trace.c makes it finds
 * its target. SP_EXPECT says the build: "interposed", "defeated" or "half".
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "../unit.h"
#include "loader/attach_ids.h"
#include "loader/btf_interpose.h"

static bool interposed(void)
{
	const char *e = getenv("SP_EXPECT");

	return e && !strcmp(e, "interposed");
}

/* The kernel's ID of btf_trace_sched_switch, by libbpf's own parse. */
static int real_id(void)
{
	struct btf *k = btf__parse("/sys/kernel/btf/vmlinux", NULL);
	int id;

	ck_assert_ptr_nonnull(k);
	id = btf__find_by_name_kind(k, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	btf__free(k);
	ck_assert_int_gt(id, 0);
	return id;
}

START_TEST(check_says_whether_libbpf_calls_us)
{
	int id = real_id();

	unsetenv(BTF_INTERPOSE_ENV);
	ck_assert_int_eq(btf_interpose_ready(true), interposed());
	/* asked again: the first answer, not a second check */
	ck_assert_int_eq(btf_interpose_ready(true), interposed());
	/* and the lookups that follow are the kernel's, through whichever functions */
	ck_assert_int_eq(libbpf_find_vmlinux_btf_id("sched_switch", BPF_TRACE_RAW_TP), id);
}
END_TEST

/*
 * As trace.c loads: armed only when the check passed, from a cache made by an earlier run;
 * then libbpf's lookup of a tp_btf target (find_attach_btf_id(), as bpf_object__load()
 * does it) on what btf__load_vmlinux_btf() gave it.
 */
START_TEST(load_after_the_check)
{
	const char *path = getenv("SP_BPF_OBJ");
	struct attach_ids_stats st;
	struct bpf_object *obj;
	int id = real_id();
	char dir[64];

	ck_assert_msg(path, "SP_BPF_OBJ is not set (meson sets it)");
	obj = bpf_object__open_file(path, NULL);
	ck_assert_ptr_nonnull(obj);
	unit_tmpdir_make(dir, sizeof(dir), "interpose");
	unsetenv(BTF_INTERPOSE_ENV);
	if (btf_interpose_ready(true)) {
		attach_ids_arm(dir, NULL, obj, true); /* an earlier run: the cache made */
		attach_ids_done(NULL);
		attach_ids_arm(dir, NULL, obj, true);
	}
	ck_assert_int_eq(libbpf_find_vmlinux_btf_id("sched_switch", BPF_TRACE_RAW_TP), id);
	attach_ids_done(&st);
	ck_assert_int_eq(st.hit, interposed());
	bpf_object__close(obj);
	unit_tmpdir_remove(dir);
}
END_TEST

START_TEST(kill_switch)
{
	int id = real_id();

	setenv(BTF_INTERPOSE_ENV, "0", 1);
	ck_assert(!btf_interpose_ready(true));
	ck_assert_int_eq(libbpf_find_vmlinux_btf_id("sched_switch", BPF_TRACE_RAW_TP), id);
	unsetenv(BTF_INTERPOSE_ENV);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("btf_interpose");
	TCase *tc = tcase_create("self_check");

	tcase_add_test(tc, check_says_whether_libbpf_calls_us);
	tcase_add_test(tc, kill_switch);
	tcase_add_test(tc, load_after_the_check);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
