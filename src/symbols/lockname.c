// SPDX-License-Identifier: BSD-2-Clause
/* Names of contended locks (see lockname.h). */
#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "symbols/ksyms.h"
#include "symbols/lockname.h"
#include "base/util.h"
#include "schedprof/lock.h"

#define T LOCKNAME_TASK
#define L LOCKNAME_LAYOUT
static const struct {
	const char *name;
	enum lockname_source source;
} ids[SP_LNAME__MAX] = {
	[SP_LNAME_MMAP_LOCK] = { "mm_struct.mmap_lock", T },
	[SP_LNAME_PAGE_TABLE_LOCK] = { "mm_struct.page_table_lock", T },
	[SP_LNAME_SIGLOCK] = { "sighand_struct.siglock", T },
	[SP_LNAME_FILE_LOCK] = { "files_struct.file_lock", T },
	[SP_LNAME_CRED_GUARD] = { "signal_struct.cred_guard_mutex", T },
	[SP_LNAME_EXEC_UPDATE] = { "signal_struct.exec_update_lock", T },
	[SP_LNAME_RQ_LOCK] = { "rq.__lock", T },
	[SP_LNAME_INODE_RWSEM] = { "inode.i_rwsem", L },
	[SP_LNAME_INODE_LOCK] = { "inode.i_lock", L },
	[SP_LNAME_MAPPING_RWSEM] = { "address_space.i_mmap_rwsem", L },
	[SP_LNAME_MAPPING_PAGES] = { "address_space.i_pages", L },
	[SP_LNAME_SB_UMOUNT] = { "super_block.s_umount", L },
	[SP_LNAME_PIPE_MUTEX] = { "pipe_inode_info.mutex", L },
	[SP_LNAME_FILE_POS_LOCK] = { "file.f_pos_lock", L },
	[SP_LNAME_TASK_PI_LOCK] = { "task_struct.pi_lock", L },
	[SP_LNAME_INODE_RWSEM_WAIT] = { "inode.i_rwsem.wait_lock", L },
	[SP_LNAME_PIPE_MUTEX_WAIT] = { "pipe_inode_info.mutex.wait_lock", L },
	[SP_LNAME_MMAP_LOCK_WAIT] = { "mm_struct.mmap_lock.wait_lock", T },
	[SP_LNAME_MAPPING_PRIVATE] = { "address_space.i_private_lock", L },
	[SP_LNAME_DENTRY_LOCK] = { "dentry.d_lock", L },
};
#undef T
#undef L

/* A static lock is at most this far into its symbol (a lock inside a static struct). */
#define LOCKNAME_MAX_OFFSET 0x10000

/*
 * Section boundaries are data symbols too, and without CONFIG_KALLSYMS_ALL they are almost
 * the only ones: "__start_init_stack+0xf2960" would name nothing. They never name a lock.
 */
static bool is_boundary(const char *n)
{
	static const char *const prefixes[] = { "__start_", "__stop_", "__end_", "__bss_",
						"__per_cpu_", "__init_", "__brk_", "_brk_" };
	static const char *const names[] = { "_text", "_stext", "_etext", "_sdata", "_edata",
					     "_end", "_sinittext", "_einittext", "__init_begin" };

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(n, prefixes[i], strlen(prefixes[i])))
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(n, names[i]))
			return true;
	return false;
}

const char *lockname_of_id(uint32_t id)
{
	return id < SP_LNAME__MAX ? ids[id].name : NULL;
}

const char *lockname_source_name(enum lockname_source src)
{
	static const char *const names[] = {
		[LOCKNAME_TASK] = "task",
		[LOCKNAME_LAYOUT] = "layout",
		[LOCKNAME_SYMBOL] = "symbol",
		[LOCKNAME_ADDRESS] = "address",
	};

	return (unsigned int)src < ARRAY_SIZE(names) ? names[src] : "address";
}

enum lockname_source lockname_format(const struct lockname_ctx *c, uint64_t addr, uint32_t id,
				     char *buf, size_t len)
{
	const struct ksym *s = NULL;
	const char *n = lockname_of_id(id);
	uint64_t off = 0;

	if (n) {
		snprintf(buf, len, "%s", n);
		return ids[id].source;
	}
	for (size_t i = 0; addr && i < c->nrq; i++) {
		if (c->rq_locks[i] == addr) {
			snprintf(buf, len, "%s", ids[SP_LNAME_RQ_LOCK].name);
			return LOCKNAME_TASK;
		}
	}
	if (c->ks)
		s = ksyms__map_data(c->ks, addr, &off);
	if (s && !is_boundary(s->name) && off < LOCKNAME_MAX_OFFSET) {
		int k = off ? snprintf(buf, len, "%s+0x%llx", s->name, (unsigned long long)off)
			    : snprintf(buf, len, "%s", s->name);

		if (s->module && k >= 0 && (size_t)k < len)
			snprintf(buf + k, len - k, " [%s]", s->module);
		return LOCKNAME_SYMBOL;
	}
	snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	return LOCKNAME_ADDRESS;
}
