// SPDX-License-Identifier: BSD-2-Clause
/*
 * The light skeleton's way of loading (bpftool gen skeleton -L), for bench/startup_ways.sh:
 * `bpftool gen skeleton -L` cannot write one for our object (it writes an attach call for
 * every raw_tp program, and ours have no tracepoint in their SEC: it crashes), so this makes
 * the same loader program libbpf makes for it (bpf_object__gen_loader) and runs it as the
 * skeleton does (bpf_load_and_run): the kernel relocates CO-RE and finds the attach targets.
 *
 *   lskel_load gen OBJ BLOB   writes the loader program and its data (build time, untimed)
 *   lskel_load run BLOB       loads the object by it: what a light skeleton's start-up does
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include <bpf/skel_internal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int gen(const char *obj_path, const char *blob)
{
	struct gen_loader_opts g = { .sz = sizeof(g) };
	struct bpf_object *obj = bpf_object__open_file(obj_path, NULL);
	FILE *f;
	int err;

	if (!obj)
		return 1;
	/* LSKEL_PROGS="a b c": only those programs (those one trace loads), else every one */
	if (getenv("LSKEL_PROGS")) {
		struct bpf_program *p;
		char want[4096], name[160];

		snprintf(want, sizeof(want), " %s ", getenv("LSKEL_PROGS"));
		bpf_object__for_each_program(p, obj) {
			snprintf(name, sizeof(name), " %s ", bpf_program__name(p));
			bpf_program__set_autoload(p, strstr(want, name) != NULL);
		}
	}
	err = bpf_object__gen_loader(obj, &g) ?: bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "gen: %d\n", err);
		return 1;
	}
	f = fopen(blob, "w");
	if (!f)
		return 1;
	fwrite(&g.data_sz, sizeof(g.data_sz), 1, f);
	fwrite(&g.insns_sz, sizeof(g.insns_sz), 1, f);
	fwrite(g.data, 1, g.data_sz, f);
	fwrite(g.insns, 1, g.insns_sz, f);
	fclose(f);
	bpf_object__close(obj);
	return 0;
}

static const char *atexit_log;

static int run(const char *blob)
{
	struct bpf_load_and_run_opts o = {};
	struct bpf_loader_ctx *ctx;
	struct timespec t0, t1;
	__u32 data_sz, insns_sz;
	char *data, *insns;
	FILE *f = fopen(blob, "r");
	int err;

	if (!f || fread(&data_sz, sizeof(data_sz), 1, f) != 1 ||
	    fread(&insns_sz, sizeof(insns_sz), 1, f) != 1)
		return 1;
	data = malloc(data_sz);
	insns = malloc(insns_sz);
	/* room for the fds of every map and program the loader makes */
	ctx = calloc(1, sizeof(*ctx) + 4096);
	if (!data || !insns || !ctx || fread(data, 1, data_sz, f) != data_sz ||
	    fread(insns, 1, insns_sz, f) != insns_sz)
		return 1;
	fclose(f);
	ctx->sz = sizeof(*ctx) + 4096;
	if (getenv("LSKEL_LOG")) { /* the loader program's verifier log, on stderr */
		static char log[1 << 20];

		ctx->log_level = 1;
		ctx->log_size = sizeof(log);
		ctx->log_buf = (__u64)(unsigned long)log;
		atexit_log = log;
	}
	o.ctx = ctx;
	o.data = data;
	o.insns = insns;
	o.data_sz = data_sz;
	o.insns_sz = insns_sz;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = bpf_load_and_run(&o);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "lskel: loaded (%d%s%s) attached in %.1f ms\n", err, o.errstr ? ": " : "",
		o.errstr ? o.errstr : "",
		(t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	if (atexit_log)
		fputs(atexit_log, stderr);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "gen"))
		return gen(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "run"))
		return run(argv[2]);
	fprintf(stderr, "usage: lskel_load gen OBJ BLOB | run BLOB\n");
	return 2;
}
