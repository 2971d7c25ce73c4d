// SPDX-License-Identifier: BSD-2-Clause
/*
 * libbpf's btf__load_vmlinux_btf(), btf__find_by_name_kind() and btf__free(), replaced for
 * the executable this is linked into (btf_interpose.h says when that holds and how it is
 * checked).
 *
 * libbpf calls all three through its PLT (readelf -rW libbpf.so.1: JUMP_SLOT), so an
 * executable that defines them is called instead (ELF symbol interposition, as malloc
 * replacements are; the linker exports them because libbpf references them):
 *  - btf__load_vmlinux_btf(): the placeholder or the BTF attach_ids_arm() prepared for this
 *    load (attach_ids.h), else the kernel's BTF from a mapping (vmlinux_btf.h);
 *  - btf__find_by_name_kind(): on the placeholder, answered from the boot's attach ID cache;
 *    on any other BTF, libbpf's own;
 *  - btf__free(): of the placeholder, also ends the answers for it.
 * Until the self-check has passed (and after it failed, or with the kill switch) all three
 * are libbpf's own.
 */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "loader/attach_ids.h"
#include "loader/btf_interpose.h"
#include "base/log.h"
#include "loader/vmlinux_btf.h"

/*
 * What the replacements do: ours (unarmed until the check passed: then only the BTF from a
 * mapping, a real one), the self-check's answers, or libbpf's own (the check failed, or the
 * kill switch).
 */
enum mode { MODE_ON, MODE_CHECK, MODE_PLAIN };

static enum mode mode;
static bool checked, passed;

/* The self-check's placeholder, the one ID it answers, and what libbpf called. */
#define CHECK_ID 0x5ca1
static struct btf *check_btf;
static unsigned int check_loaded, check_found, check_freed;

static struct {
	__typeof__(btf__load_vmlinux_btf) *load;
	__typeof__(btf__find_by_name_kind) *find;
	__typeof__(btf__free) *free;
} own;

/* libbpf's own definitions, past this executable's: false when there is no such library. */
static bool find_own(void)
{
	static bool looked;

	if (!looked) {
		looked = true;
		own.load = (__typeof__(own.load))dlsym(RTLD_NEXT, "btf__load_vmlinux_btf");
		own.find = (__typeof__(own.find))dlsym(RTLD_NEXT, "btf__find_by_name_kind");
		own.free = (__typeof__(own.free))dlsym(RTLD_NEXT, "btf__free");
	}
	return own.load && own.find && own.free;
}

struct btf *btf__load_vmlinux_btf(void)
{
	struct btf *btf;

	if (mode == MODE_CHECK) {
		check_loaded++;
		return check_btf;
	}
	if (mode == MODE_PLAIN) {
		if (find_own() || own.load)
			return own.load();
		errno = ENOSYS;
		return NULL;
	}
	btf = attach_ids_take_vmlinux();
	return btf ? btf : vmlinux_btf_load();
}

__s32 btf__find_by_name_kind(const struct btf *btf, const char *type_name, __u32 kind)
{
	int id;

	if (mode == MODE_CHECK && btf && btf == check_btf) {
		check_found++;
		return CHECK_ID;
	}
	if (mode == MODE_ON && attach_ids_answer(btf, type_name, kind, &id)) {
		if (id < 0)
			errno = -id;
		return id;
	}
	if (!find_own() && !own.find) {
		errno = ENOSYS;
		return -ENOSYS;
	}
	return own.find(btf, type_name, kind);
}

void btf__free(struct btf *btf)
{
	if (mode == MODE_CHECK && btf && btf == check_btf) {
		check_freed++;
		return; /* the check's own, freed by it */
	}
	if (mode == MODE_ON)
		attach_ids_forget(btf);
	if (find_own() || own.free)
		own.free(btf);
}

/*
 * libbpf_find_vmlinux_btf_id() loads the kernel's BTF, looks the target up in it by
 * find_attach_btf_id() (bpf_object__load()'s lookup for tp_btf programs) and frees it: with
 * the replacements in force, it gets the placeholder and the check's ID, and frees the
 * placeholder, each exactly once.
 */
static bool self_check(const char **why)
{
	int id;

	if (!find_own()) {
		*why = "libbpf is not a shared library of its own (linked in statically?)";
		return false;
	}
	check_btf = btf__new_empty();
	if (!check_btf) {
		*why = "no memory";
		return false;
	}
	check_loaded = check_found = check_freed = 0;
	mode = MODE_CHECK;
	id = libbpf_find_vmlinux_btf_id("sched_switch", BPF_TRACE_RAW_TP);
	mode = MODE_PLAIN;
	own.free(check_btf);
	dlog("attach IDs: the check's lookup gave %d (load %u, lookup %u, free %u)", id,
	     check_loaded, check_found, check_freed);
	check_btf = NULL;
	if (check_loaded == 1 && check_found == 1 && check_freed == 1 && id == CHECK_ID)
		return true;
	*why = !check_loaded ? "libbpf loads the kernel's BTF without btf__load_vmlinux_btf()" :
	       !check_found ? "libbpf looks BTF up without btf__find_by_name_kind()" :
	       !check_freed ? "libbpf frees BTF without btf__free()" :
			      "libbpf's lookup did not give our answer";
	return false;
}

bool btf_interpose_ready(bool quiet)
{
	const char *env = getenv(BTF_INTERPOSE_ENV), *why = NULL;

	if (checked)
		return passed;
	checked = true;
	if (env && !strcmp(env, "0")) {
		mode = MODE_PLAIN;
		dlog("attach IDs: %s=0, libbpf's own BTF functions", BTF_INTERPOSE_ENV);
		return false;
	}
	passed = self_check(&why);
	mode = passed ? MODE_ON : MODE_PLAIN;
	if (!passed && !quiet)
		wlog("libbpf does not call schedprof's replacements of its BTF functions (%s): "
		     "it reads the kernel's BTF itself at every start (%s=0 says this is meant)",
		     why, BTF_INTERPOSE_ENV);
	return passed;
}
