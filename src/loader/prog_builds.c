// SPDX-License-Identifier: BSD-2-Clause
/* The BPF programs' builds, from include/schedprof/progs.h (prog_builds.h). */
#include <string.h>
#include <bpf/libbpf.h>
#include "loader/prog_builds.h"

#define SP_PROG_BUILD_ROW(prog, bld, prov, opts) \
	{ .program = #prog, .build = #bld, .provides = (prov), .options = (opts) },

const struct sp_prog_build sp_prog_builds[] = { SP_PROG_BUILDS(SP_PROG_BUILD_ROW) };
const size_t sp_nprog_builds = sizeof(sp_prog_builds) / sizeof(sp_prog_builds[0]);

const struct sp_prog_build *sp_prog_build_pick(const char *program, unsigned int needs)
{
	for (size_t i = 0; i < sp_nprog_builds; i++)
		if (!strcmp(sp_prog_builds[i].program, program) &&
		    (sp_prog_builds[i].provides & needs) == needs)
			return &sp_prog_builds[i];
	return NULL;
}

struct bpf_program *sp_prog_build_load(struct bpf_object *obj, const char *program,
				       unsigned int needs, bool on)
{
	const struct sp_prog_build *b = on ? sp_prog_build_pick(program, needs) : NULL;
	struct bpf_program *p, *want = NULL;

	for (size_t i = 0; i < sp_nprog_builds; i++) {
		if (strcmp(sp_prog_builds[i].program, program))
			continue;
		p = bpf_object__find_program_by_name(obj, sp_prog_builds[i].build);
		if (!p)
			continue;
		bpf_program__set_autoload(p, &sp_prog_builds[i] == b);
		if (&sp_prog_builds[i] == b)
			want = p;
	}
	return want;
}

struct bpf_program *sp_prog_build_find(struct bpf_object *obj, const char *program,
				       unsigned int needs)
{
	const struct sp_prog_build *b = sp_prog_build_pick(program, needs);

	return b ? bpf_object__find_program_by_name(obj, b->build) : NULL;
}

bool sp_prog_is_build_of(const char *name, const char *program)
{
	for (size_t i = 0; i < sp_nprog_builds; i++)
		if (!strcmp(sp_prog_builds[i].program, program) &&
		    !strcmp(sp_prog_builds[i].build, name))
			return true;
	return false;
}
