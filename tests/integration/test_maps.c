// SPDX-License-Identifier: BSD-2-Clause
/*
 * The map walker (src/loader/maps.c) on real BPF maps (root): batch and one-by-one dumps
 * give every entry exactly once with its value, empty maps give none, per-CPU maps give one
 * value per possible CPU. Exit 77 (skipped) without root, a failure under CI=true.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader/maps.h"

struct key {
	__u32 a;
	__u32 b;
	__u32 c; /* 12 bytes: not a multiple of 8 */
};

struct val {
	__u64 x, y, z;
};

static int failures;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
			failures++;                                          \
		}                                                            \
	} while (0)

static int make_map(enum bpf_map_type type, __u32 key_size, __u32 value_size, __u32 max)
{
	int fd = bpf_map_create(type, "sp_test", key_size, value_size, max, NULL);

	if (fd < 0) {
		fprintf(stderr, "bpf_map_create: %s\n", strerror(-fd));
		exit(1);
	}
	return fd;
}

static void check_dump(int fd, enum map_dump_how how, size_t n, const char *what)
{
	struct sp_records r;
	char *seen = calloc(n ? n : 1, 1);
	int err = map_dump_how(fd, how, &r);

	CHECK(!err, "%s: map_dump_how: %s", what, strerror(-err));
	CHECK(r.n == n, "%s: %zu records, expected %zu", what, r.n, n);
	CHECK(r.failed == 0, "%s: %llu failed", what, (unsigned long long)r.failed);
	CHECK(r.key_size == sizeof(struct key) && r.value_size == sizeof(struct val),
	      "%s: sizes %zu %zu", what, r.key_size, r.value_size);
	for (size_t i = 0; i < r.n && !err; i++) {
		const struct key *k = sp_records_key(&r, i);
		const struct val *v = sp_records_value(&r, i);

		CHECK(k->a < n && !seen[k->a], "%s: key %u twice or out of range", what, k->a);
		if (k->a < n)
			seen[k->a] = 1;
		CHECK(k->b == k->a * 3 && k->c == ~k->a, "%s: key %u corrupt", what, k->a);
		CHECK(v->x == k->a && v->y == 2ULL * k->a && v->z == 0xabcd, "%s: value of %u",
		      what, k->a);
	}
	sp_records_free(&r);
	free(seen);
}

static void test_hash(size_t max, size_t n)
{
	int fd = make_map(BPF_MAP_TYPE_HASH, sizeof(struct key), sizeof(struct val), (__u32)max);
	char what[64];

	for (__u32 i = 0; i < n; i++) {
		struct key k = { .a = i, .b = i * 3, .c = ~i };
		struct val v = { .x = i, .y = 2ULL * i, .z = 0xabcd };

		if (bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST)) {
			fprintf(stderr, "update: %s\n", strerror(errno));
			exit(1);
		}
	}
	snprintf(what, sizeof(what), "hash %zu/%zu auto", n, max);
	check_dump(fd, MAP_DUMP_AUTO, n, what);
	snprintf(what, sizeof(what), "hash %zu/%zu batch", n, max);
	check_dump(fd, MAP_DUMP_BATCH, n, what);
	snprintf(what, sizeof(what), "hash %zu/%zu one by one", n, max);
	check_dump(fd, MAP_DUMP_ONE_BY_ONE, n, what);
	close(fd);
}

static void test_percpu(void)
{
	int ncpus = libbpf_num_possible_cpus();
	int fd = make_map(BPF_MAP_TYPE_PERCPU_HASH, sizeof(__u64), sizeof(__u32), 16);
	__u64 key = 42;
	__u64 *vals = calloc((size_t)ncpus, sizeof(__u64)); /* each CPU's __u32, rounded to 8 */
	struct sp_records r;

	for (int i = 0; i < ncpus; i++)
		vals[i] = 100 + (__u64)i;
	CHECK(!bpf_map_update_elem(fd, &key, vals, BPF_ANY), "percpu update: %s", strerror(errno));
	for (int how = MAP_DUMP_AUTO; how <= MAP_DUMP_ONE_BY_ONE; how++) {
		int err = map_dump_how(fd, how, &r);

		CHECK(!err && r.n == 1, "percpu %d: err %d, %zu records", how, err, r.n);
		CHECK(r.value_size == 8 * (size_t)ncpus, "percpu %d: value size %zu", how,
		      r.value_size);
		for (int i = 0; !err && r.n == 1 && i < ncpus; i++)
			CHECK(*(const __u32 *)((const char *)sp_records_value(&r, 0) + 8 * i) ==
				      100 + (__u32)i, "percpu %d: CPU %d", how, i);
		sp_records_free(&r);
	}
	free(vals);
	close(fd);
}

int main(void)
{
	if (geteuid() != 0) {
		const char *ci = getenv("CI");

		fprintf(stderr, "%s: needs root for BPF maps\n", ci && !strcmp(ci, "true") ?
			"FAIL (CI=true, so no skipping)" : "SKIP");
		return ci && !strcmp(ci, "true") ? 1 : 77;
	}
	test_hash(16, 0);
	test_hash(16, 16);	/* full */
	test_hash(20000, 7000); /* more than one batch buffer */
	test_hash(4096, 1);
	test_percpu();
	if (failures)
		return 1;
	printf("ok: map dumps\n");
	return 0;
}
