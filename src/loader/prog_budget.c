// SPDX-License-Identifier: BSD-2-Clause
/* One BPF program loaded alone, for the verifier budget (prog_budget.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/testhook.h"
#include "base/log.h"
#include "loader/prog_budget.h"
#include "loader/prog_builds.h"

#define LOAD_ONLY_ENV "SCHEDPROF_TEST_LOAD_ONLY"

const char *prog_budget_mode(void)
{
	const char *m = test_hook(LOAD_ONLY_ENV);

	return m && *m ? m : NULL;
}

int prog_budget_select(struct bpf_object *obj, const char *mode)
{
	struct bpf_program *prog, *want = NULL;

	if (!strcmp(mode, "list")) {
		bpf_object__for_each_program(prog, obj)
			printf("prog\t%s\t%d\n", bpf_program__name(prog),
			       bpf_program__autoload(prog) ? 1 : 0);
		for (size_t i = 0; i < sp_nprog_builds; i++)
			printf("build\t%s\t%s\t%s\n", sp_prog_builds[i].program,
			       sp_prog_builds[i].build, sp_prog_builds[i].options);
		return 1;
	}
	bpf_object__for_each_program(prog, obj)
		if (!strcmp(bpf_program__name(prog), mode))
			want = prog;
	if (!want || !bpf_program__autoload(want)) {
		elog("%s=%s: %s", LOAD_ONLY_ENV, mode,
		     want ? "these options do not load that program" : "no such BPF program");
		return -ENOENT;
	}
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, prog == want);
	return 0;
}

int prog_budget_report(struct bpf_object *obj, const char *mode, int err, double ms)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, mode);
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	if (err) {
		printf("budget\t%s\trefused\t%s\n", mode, strerror(-err));
		return err;
	}
	memset(&info, 0, sizeof(info));
	if (!prog || bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return prog ? -errno : -ENOENT;
	printf("budget\t%s\t%u\t%.2f\n", mode, info.verified_insns, ms);
	return 0;
}
