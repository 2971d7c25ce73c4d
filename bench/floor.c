// SPDX-License-Identifier: BSD-2-Clause
/*
 * bench/floor.c -- loader of bench/floor.bpf.c for bench/compare.sh: opens OBJ, loads it,
 * attaches every program in it, then waits for SIGINT or SIGTERM and exits 0.
 *
 *   floor OBJ
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	int err, n = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OBJ\n", argv[0]);
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "floor: open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "floor: load: %s\n", strerror(-err));
		return 1;
	}
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__attach(prog)) {
			fprintf(stderr, "floor: attach %s: %s\n", bpf_program__name(prog),
				strerror(errno));
			return 1;
		}
		n++;
	}
	fprintf(stderr, "floor: %d program(s) attached\n", n);
	while (!stop)
		pause();
	bpf_object__close(obj);
	return 0;
}
