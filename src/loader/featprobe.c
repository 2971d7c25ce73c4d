// SPDX-License-Identifier: BSD-2-Clause
/* The kernel feature probes: load, judge, cache (featprobe.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "loader/featprobe.h"
#include "loader/kfeatures.h"
#include "loader/vmlinux_btf.h"
#include "base/testhook.h"
#include "base/log.h"
#include "base/util.h"
#include "probes.skel.h"

/*
 * Each feature's probe: its programs (probes.bpf.c) and the maps they use; the other maps
 * are not created, so that a missing map type (the ring buffer) fails only its own probe.
 * way: a faster way's probe, which older kernels refuse (the others' features every
 * supported kernel has).
 */
static const struct probe {
	enum sp_feature feat;
	const char *progs[2];
	const char *maps[2];
	bool way;
} probes[] = {
	{ SP_FEAT_TP_BTF, { "fp_tp_btf" }, {}, false },
	{ SP_FEAT_SWITCH_TP, { "fp_switch_tp" }, {}, false },
	{ SP_FEAT_TRUSTED_TASK, { "fp_trusted_task" }, {}, false },
	{ SP_FEAT_TASK_STORAGE, { "fp_task_storage" }, { "fp_task" }, false },
	{ SP_FEAT_LOOP, { "fp_loop" }, {}, false },
	{ SP_FEAT_RINGBUF, { "fp_ringbuf" }, { "fp_ring" }, false },
	{ SP_FEAT_LOCK_TP, { "fp_lock_begin", "fp_lock_end" }, {}, false },
	{ SP_FEAT_ITER_TASK, { "fp_iter_task" }, {}, false },
	{ SP_FEAT_MEM_KEY, { "fp_mem_key" }, { "fp_task", "fp_hash" }, true },
	{ SP_FEAT_ARG_UNTRUSTED, { "fp_arg_untrusted" }, {}, true },
};

/* Which probes a load takes */
enum probe_set { PROBES_ALL, PROBES_NEEDS, PROBES_ONE };

static bool named(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], name))
			return true;
	return false;
}

static bool in_set(const struct probe *p, enum probe_set set, const struct probe *one)
{
	return set == PROBES_ALL || (set == PROBES_NEEDS && !p->way) || p == one;
}

/* Whether a probe of the set names name among its programs (maps: among its maps). */
static bool wanted(enum probe_set set, const struct probe *one, const char *name, bool maps)
{
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++)
		if (in_set(&probes[i], set, one) &&
		    named(maps ? probes[i].maps : probes[i].progs, 2, name))
			return true;
	return false;
}

/*
 * Loads the probes of set (one: PROBES_ONE's) together, their maps only. Each load parses
 * the kernel's BTF again (libbpf's), which is most of its time: the fewer, the cheaper.
 * 0 or -errno.
 */
static int load_probes(enum probe_set set, const struct probe *one)
{
	struct sp_probes *skel = sp_probes__open();
	struct bpf_program *prog;
	struct bpf_map *map;
	int err;

	if (!skel)
		return -errno;
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, wanted(set, one, bpf_program__name(prog), false));
	bpf_object__for_each_map(map, skel->obj)
		bpf_map__set_autocreate(map, wanted(set, one, bpf_map__name(map), true));
	err = sp_probes__load(skel);
	sp_probes__destroy(skel);
	return err;
}

static void set_all(struct sp_features *f, enum probe_set set, bool has)
{
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++)
		if (in_set(&probes[i], set, NULL))
			f->has[probes[i].feat] = has;
}

/* Probe p alone into f: 0, or -EPERM when not even the plainest probe may load. */
static int probe_one(const struct probe *p, struct sp_features *f)
{
	int err = load_probes(PROBES_ONE, p);

	if (err == -EPERM && p->feat == SP_FEAT_TP_BTF)
		return err;
	f->has[p->feat] = !err;
	if (err)
		dlog("kernel feature probe %s refused: %s (-vv shows the verifier's log)",
		     kfeatures_key(p->feat), strerror(-err));
	return 0;
}

/*
 * What the kernel's BTF tells and no probe can (kfeatures_storage_nosleep()). Without BTF,
 * the way that is safe everywhere: the preallocated hashes.
 */
static void btf_ways(struct sp_features *f)
{
	struct btf *btf = vmlinux_btf_load();

	f->has[SP_FEAT_STORAGE_NOSLEEP] = btf && kfeatures_storage_nosleep(btf);
	btf__free(btf);
}

/*
 * All the probes in one load: the kernels with every way. Else the needs' probes together,
 * which every kernel that runs a view takes, and each way's alone; a load refused there is
 * taken apart too. 2 to 4 loads on the kernels we know, the whole list only on one that
 * lacks a need.
 */
static int run_probes(struct sp_features *got)
{
	int err;

	if (!load_probes(PROBES_ALL, NULL)) {
		set_all(got, PROBES_ALL, true);
		return 0;
	}
	err = load_probes(PROBES_NEEDS, NULL);
	set_all(got, PROBES_NEEDS, !err);
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++) {
		if (!err && !probes[i].way)
			continue;
		if (probe_one(&probes[i], got))
			return -EPERM;
	}
	return 0;
}

int featprobe_run(struct sp_features *f)
{
	struct sp_features got = {};
	int err = run_probes(&got);

	if (err)
		return err;
	btf_ways(&got);
	/* the config's answer is no probe's: cached with them, so read once per boot too */
	got.has[SP_FEAT_STEAL_SPLIT] = kfeatures_config_splits_steal(NULL);
	*f = got;
	return 0;
}

/* For the tests: features to take as missing, so that the older ways run on a new kernel. */
#define FEATURES_OFF_ENV "SCHEDPROF_TEST_FEATURES_OFF"

/* Appends " key" (no space first) to buf of size len, filled to *n; what does not fit is cut. */
static void append_key(char *buf, size_t len, size_t *n, const char *key)
{
	int w;

	if (*n + 1 >= len)
		return;
	w = snprintf(buf + *n, len - *n, "%s%s", *n ? " " : "", key);
	if (w > 0)
		*n = *n + (size_t)w < len ? *n + (size_t)w : len - 1;
}

int featprobe_get(struct sp_features *f)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	struct sp_features got;
	char have[512] = "", lack[512] = "";
	size_t nh = 0, nl = 0;
	bool cached = kfeatures_cache_load(NULL, &got) == 0;
	int err;

	if (!cached) {
		err = featprobe_run(&got);
		if (err) {
			elog("cannot probe the kernel's BPF features: %s", strerror(-err));
			return err;
		}
		if (kfeatures_cache_store(NULL, &got))
			dlog("cannot cache the kernel features in /run/schedprof");
	}
	{
		const char *off = test_hook(FEATURES_OFF_ENV);

		if (off && kfeatures_force_off(&got, off)) {
			elog("%s: no such feature in \"%s\"", FEATURES_OFF_ENV, off);
			return -EINVAL;
		}
		if (off && *off)
			dlog("kernel features taken as missing (%s): %s", FEATURES_OFF_ENV, off);
	}
	for (int i = 0; i < SP_FEAT__MAX; i++) {
		if (got.has[i])
			append_key(have, sizeof(have), &nh, kfeatures_key(i));
		else
			append_key(lack, sizeof(lack), &nl, kfeatures_key(i));
	}
	dlog("kernel features from %s in %.1f ms: %s; missing: %s",
	     cached ? "the boot's cache" : "the probes", (now_ns(CLOCK_MONOTONIC) - t0) / 1e6,
	     have[0] ? have : "none", lack[0] ? lack : "none");
	*f = got;
	return 0;
}
