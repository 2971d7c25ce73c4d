// SPDX-License-Identifier: BSD-2-Clause
/* Checks before load and launch: capabilities, kallsyms addresses, map memory (preflight.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <bpf/libbpf.h>
#include "loader/foldcfg.h"
#include "symbols/ksyms.h"
#include "base/log.h"
#include "collect/preflight.h"
#include "base/util.h"
#include "schedprof/schedprof.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* The effective capability set; 0 when it cannot be read. */
static uint64_t effective_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return 0;
	return data[0].effective | ((uint64_t)data[1].effective << 32);
}

static bool has_cap(uint64_t eff, int cap)
{
	return eff & (1ULL << cap);
}

int preflight_caps(void)
{
	uint64_t eff = effective_caps();
	bool admin = has_cap(eff, CAP_SYS_ADMIN);
	bool bpf = admin || has_cap(eff, CAP_BPF), perfmon = admin || has_cap(eff, CAP_PERFMON);

	if (bpf && perfmon)
		return 0;
	elog("tracing needs root, or CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), and CAP_SYSLOG to "
	     "name kernel functions: this process lacks %s%s%s: run it with sudo",
	     bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "", perfmon ? "" : "CAP_PERFMON");
	return -EPERM;
}

/* An integer sysctl from /proc/sys, or -1. */
static int read_sysctl(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

void preflight_kallsyms_why(char *buf, size_t len)
{
	int restrict_ = read_sysctl("/proc/sys/kernel/kptr_restrict");
	int paranoid = read_sysctl("/proc/sys/kernel/perf_event_paranoid");

	/* the kernel's kallsyms_show_value() */
	if (restrict_ >= 2)
		snprintf(buf, len, "kernel.kptr_restrict = %d hides them from every process",
			 restrict_);
	else if (!has_cap(effective_caps(), CAP_SYSLOG))
		snprintf(buf, len, "this process lacks CAP_SYSLOG (kernel.kptr_restrict = %d, "
			 "kernel.perf_event_paranoid = %d)", restrict_, paranoid);
	else
		snprintf(buf, len, "kernel.kptr_restrict = %d", restrict_);
}

void preflight_perf_why(int err, char *buf, size_t len)
{
	int paranoid = read_sysctl("/proc/sys/kernel/perf_event_paranoid");

	buf[0] = '\0';
	if ((err != -EACCES && err != -EPERM) || paranoid <= 2 ||
	    has_cap(effective_caps(), CAP_SYS_ADMIN))
		return;
	snprintf(buf, len, " (kernel.perf_event_paranoid = %d: this kernel lets only CAP_SYS_ADMIN "
		 "open perf events: run as root, set kernel.perf_event_paranoid to 2, or trace "
		 "with --no-profile)", paranoid);
}

/* 0: addresses readable; 1: hidden (all zero); -errno: unreadable or empty (-ENODATA). */
static int kallsyms_state(void)
{
	int shown = ksyms__file_shows_addresses("/proc/kallsyms");

	return shown < 0 ? shown : !shown;
}

int preflight_kallsyms(bool strict, bool *ret_warned)
{
	struct sp_fold_cfg cfg;
	char why[256];
	int state = kallsyms_state();

	*ret_warned = false;
	if (state == 0)
		return 0;
	if (state == 1) {
		char reason[160];

		preflight_kallsyms_why(reason, sizeof(reason));
		snprintf(why, sizeof(why), "kernel addresses in /proc/kallsyms are hidden: %s", reason);
	} else {
		snprintf(why, sizeof(why), "cannot read /proc/kallsyms: %s",
			 state == -ENODATA ? "it is empty" : strerror(-state));
	}
	if (strict) {
		elog("%s: --strict refuses to show kernel functions as addresses", why);
		return -EPERM;
	}
	/* without the boot's fold cache, nothing tells where the scheduler's text is */
	wlog("%s: kernel functions are shown as addresses%s", why,
	     fold_cfg_cache_load(NULL, &cfg) ? ", and the callers of schedule() and locks as "
					       "[unknown]" : "");
	*ret_warned = true;
	return 0;
}

/* ---- map memory ---- */

static unsigned long long round8(unsigned long long n)
{
	return (n + 7) & ~7ULL;
}

static unsigned long long pow2_at_least(unsigned long long n)
{
	unsigned long long p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/*
 * The kernel's own sizes (6.x, 64-bit): a hash element is struct htab_elem (48 bytes) + key +
 * value (a pointer to per-CPU values for per-CPU maps), and a bucket 16 bytes per power of
 * two; a stack map element is struct stack_map_bucket (16 bytes) + value, and a pointer per
 * power-of-two bucket. Maps that are not preallocated are counted full: they can get there.
 */
unsigned long long preflight_map_bytes(unsigned int type, unsigned int flags, unsigned int key_size,
				       unsigned int value_size, unsigned long long entries, int ncpus)
{
	unsigned long long val = round8(value_size), cpus = ncpus > 0 ? (unsigned)ncpus : 1;

	(void)flags;
	switch (type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
		return entries * (48 + round8(key_size) + val) + pow2_at_least(entries) * 16;
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return entries * (48 + round8(key_size) + 8 + val * cpus) + pow2_at_least(entries) * 16;
	case BPF_MAP_TYPE_ARRAY:
		return entries * val;
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return entries * val * cpus;
	case BPF_MAP_TYPE_STACK_TRACE:
		return entries * (16 + val) + pow2_at_least(entries) * 8;
	case BPF_MAP_TYPE_RINGBUF:
		return entries; /* the data pages; the kernel maps them twice, once in memory */
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
		return (entries ? entries : cpus) * 8;
	default: /* task storage and the like: per object, on use */
		return 0;
	}
}

struct map_size {
	unsigned int type, flags, key_size, value_size;
	unsigned long long entries;
	bool scales; /* sized by one of the --max-* options being checked */
};

/* The --max-* options and their values. */
struct limit {
	const char *name;
	uint32_t value, def;
};

static unsigned long long total_bytes(const struct map_size *m, size_t n, double k, int ncpus)
{
	unsigned long long sum = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned long long e = m[i].entries;

		if (m[i].scales)
			e = (unsigned long long)(e * k) ? (unsigned long long)(e * k) : 1;
		sum += preflight_map_bytes(m[i].type, m[i].flags, m[i].key_size, m[i].value_size, e,
					   ncpus);
	}
	return sum;
}

/* MemAvailable from /proc/meminfo, in bytes; 0 when unknown. */
static unsigned long long mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long long kb = 0;
	char line[128];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

static double gib(unsigned long long bytes)
{
	return bytes / (1024.0 * 1024 * 1024);
}

/* Whether a map of that many entries is sized by one of the limits that scale. */
static bool sized_by(const struct limit *l, size_t nl, const bool *scale, unsigned long long e)
{
	for (size_t i = 0; i < nl; i++)
		if (scale[i] && e == l[i].value && e > 1)
			return true;
	return false;
}

int preflight_map_memory(const struct bpf_object *obj, const struct trace_config *o)
{
	const struct limit limits[] = {
		{ "--max-targets", o->max_targets, SP_DEF_TARGETS },
		{ "--max-callers", o->max_callers, SP_DEF_CALLERS },
		{ "--max-stacks", o->max_stacks, SP_DEF_STACKS },
		{ "--max-samples", o->max_samples, SP_DEF_PROF_KEYS },
	};
	bool scale[ARRAY_SIZE(limits)], any_raised = false;
	unsigned long long avail = mem_available(), budget = avail / 2, need;
	struct map_size maps[64];
	int ncpus = libbpf_num_possible_cpus();
	char given[256] = "", fits[256] = "";
	size_t n = 0, gl = 0, fl = 0;
	struct bpf_map *map;
	double lo = 0, hi = 1;

	for (size_t i = 0; i < ARRAY_SIZE(limits); i++)
		any_raised |= limits[i].value > limits[i].def;
	/* the options raised above their defaults are the ones to cut (all, if none is) */
	for (size_t i = 0; i < ARRAY_SIZE(limits); i++)
		scale[i] = !any_raised || limits[i].value > limits[i].def;
	bpf_object__for_each_map(map, obj) {
		if (!bpf_map__autocreate(map) || n == ARRAY_SIZE(maps))
			continue;
		maps[n] = (struct map_size){
			.type = bpf_map__type(map), .flags = (unsigned int)bpf_map__map_flags(map),
			.key_size = bpf_map__key_size(map), .value_size = bpf_map__value_size(map),
			.entries = bpf_map__max_entries(map),
		};
		maps[n].scales = sized_by(limits, ARRAY_SIZE(limits), scale, maps[n].entries);
		dlog("map %s: %llu entries, about %.1f MiB when full", bpf_map__name(map),
		     maps[n].entries,
		     preflight_map_bytes(maps[n].type, maps[n].flags, maps[n].key_size,
					 maps[n].value_size, maps[n].entries, ncpus) / 1048576.0);
		n++;
	}
	need = total_bytes(maps, n, 1, ncpus);
	dlog("the maps take about %.2f GiB when full; MemAvailable %.2f GiB", gib(need), gib(avail));
	if (!avail || need <= budget)
		return 0;
	for (int i = 0; i < 50; i++) { /* the largest common factor that fits */
		double k = (lo + hi) / 2;

		if (total_bytes(maps, n, k, ncpus) <= budget)
			lo = k;
		else
			hi = k;
	}
	for (size_t i = 0; i < ARRAY_SIZE(limits); i++) {
		uint64_t v = (uint64_t)(limits[i].value * lo);

		if (!scale[i])
			continue;
		gl += snprintf(given + gl, sizeof(given) - gl, " %s %u", limits[i].name,
			       limits[i].value);
		if (v)
			fl += snprintf(fits + fl, sizeof(fits) - fl, " %s %" PRIu64, limits[i].name, v);
	}
	if (!fl)
		elog("the BPF maps would take about %.1f GiB when full, more than half of the %.1f GiB "
		     "of available memory (MemAvailable): not even the smallest --max-* values fit",
		     gib(need), gib(avail));
	else
		elog("with%s the BPF maps would take about %.1f GiB when full, more than half of the "
		     "%.1f GiB of available memory (MemAvailable): at most%s fit",
		     given, gib(need), gib(avail), fits);
	return -ENOMEM;
}
