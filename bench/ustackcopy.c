// SPDX-License-Identifier: BSD-2-Clause
/*
 * bench/ustackcopy.c -- loader of bench/ustackcopy.bpf.c for bench/ustackcopy.sh: loads OBJ
 * with only program PROG, attaches it, waits for SIGINT or SIGTERM and exits 0.
 *
 *   ustackcopy OBJ PROG
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

static volatile sig_atomic_t stop;
static unsigned long long records, bytes;

static int on_record(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	records++;
	bytes += size;
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog, *want = NULL;
	struct ring_buffer *rb = NULL;
	struct bpf_map *ring;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: %s OBJ PROG\n", argv[0]);
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "ustackcopy: open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(prog, obj) {
		if (strcmp(bpf_program__name(prog), argv[2]))
			bpf_program__set_autoload(prog, false);
		else
			want = prog;
	}
	if (!want) {
		fprintf(stderr, "ustackcopy: no program %s in %s\n", argv[2], argv[1]);
		return 2;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "ustackcopy: load: %s\n", strerror(-err));
		return 1;
	}
	if (!bpf_program__attach(want)) {
		fprintf(stderr, "ustackcopy: attach %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	/* the ring buffer's records are consumed (and dropped) as a collector would */
	ring = bpf_object__find_map_by_name(obj, "ring");
	if (ring && !(rb = ring_buffer__new(bpf_map__fd(ring), on_record, NULL, NULL))) {
		fprintf(stderr, "ustackcopy: ring buffer: %s\n", strerror(errno));
		return 1;
	}
	fprintf(stderr, "ustackcopy: %s attached\n", argv[2]);
	while (!stop) {
		if (rb)
			ring_buffer__poll(rb, 100);
		else
			pause();
	}
	if (records)
		fprintf(stderr, "ustackcopy: %llu records, %llu bytes\n", records, bytes);
	ring_buffer__free(rb);
	bpf_object__close(obj);
	return 0;
}
