/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writes a known pprof profile to argv[1], for tests/integration/pprof_go.sh to load with the
 * real `go tool pprof`. 1000 schedules / 13 ms off-CPU in total:
 *   main->foo->anon_pipe_read  700 (split over two threads: 400 + 300), 7 ms, comm "cat"
 *   main->bar                  200, 5 ms, comm "bash"
 *   main->foo                  100, 1 ms, comm "cat"
 * anon_pipe_read is a kernel frame; main/foo/bar live in /usr/bin/demo. A second "foo" in
 * libc.so.6 would be a different function, so the stacks reuse the demo one on purpose.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/pprof.h"

#define DEMO  "/usr/bin/demo"
#define DEMO_BUILD_ID "0123456789abcdef0123456789abcdef01234567"

static const struct pprof_frame f_anon_pipe_read = { .function = "anon_pipe_read",
						       .object = "[kernel]" };
#define DEMO_FRAME(f) { .function = f, .object = DEMO, .build_id = DEMO_BUILD_ID }
static const struct pprof_frame f_main = DEMO_FRAME("main");
static const struct pprof_frame f_foo = DEMO_FRAME("foo");
static const struct pprof_frame f_bar = DEMO_FRAME("bar");

static int add(struct pprof *p, const struct pprof_frame *frames, size_t nframes,
	       int64_t count, int64_t offcpu_ns, const char *comm, int64_t pid)
{
	const int64_t values[] = { count, offcpu_ns };
	const struct pprof_label labels[] = {
		{ .key = "comm", .str = comm },
		{ .key = "pid", .num = pid, .is_num = true },
	};

	return pprof__add_sample(p, frames, nframes, values, labels, 2);
}

int main(int argc, char **argv)
{
	static const char *const types[] = { "schedules", "offcpu" };
	static const char *const units[] = { "count", "nanoseconds" };
	const struct pprof_frame pipe_stack[] = { f_anon_pipe_read, f_foo, f_main };
	const struct pprof_frame bar_stack[] = { f_bar, f_main };
	const struct pprof_frame foo_stack[] = { f_foo, f_main };
	struct pprof *p;
	FILE *f;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTPUT.pb.gz\n", argv[0]);
		return EXIT_FAILURE;
	}
	p = pprof__new(types, units, 2, 2000000000, 1700000000000000000, "schedules", "count", 1);
	if (!p) {
		fprintf(stderr, "pprof__new: %s\n", strerror(errno));
		return EXIT_FAILURE;
	}
	err = add(p, pipe_stack, 3, 400, 4000000, "cat", 100) ?:
	      add(p, pipe_stack, 3, 300, 3000000, "cat", 101) ?:
	      add(p, bar_stack, 2, 200, 5000000, "bash", 200) ?:
	      add(p, foo_stack, 2, 100, 1000000, "cat", 100) ?:
	      pprof__add_comment(p, "schedprof pprof golden profile");
	if (err) {
		fprintf(stderr, "building the profile: %s\n", strerror(-err));
		goto out;
	}
	f = fopen(argv[1], "wb");
	if (!f) {
		err = -errno;
		fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
		goto out;
	}
	err = pprof__write(p, f);
	if (fclose(f) && !err)
		err = -errno;
	if (err)
		fprintf(stderr, "%s: %s\n", argv[1], strerror(-err));
out:
	pprof__free(p);
	return err ? EXIT_FAILURE : EXIT_SUCCESS;
}
