/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libdebuginfod through dlopen() (see debuginfod.h). Its header gives the function types, so a
 * change of signature breaks the build rather than the call.
 */
#include "symbols/debuginfod.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>

static struct {
	bool tried;
	void *lib;
	debuginfod_client *client;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
} dinfod;

bool sp_debuginfod_enabled(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && *urls;
}

static void client_end(void)
{
	__typeof__(debuginfod_end) *end;

	if (!dinfod.client)
		return;
	end = (__typeof__(debuginfod_end) *)dlsym(dinfod.lib, "debuginfod_end");
	if (end)
		end(dinfod.client);
	dinfod.client = NULL;
}

/* The client, created once; NULL when libdebuginfod cannot be loaded. */
static debuginfod_client *client_get(void)
{
	__typeof__(debuginfod_begin) *begin;

	if (dinfod.tried)
		return dinfod.client;
	dinfod.tried = true;
	dinfod.lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!dinfod.lib)
		return NULL;
	begin = (__typeof__(debuginfod_begin) *)dlsym(dinfod.lib, "debuginfod_begin");
	dinfod.find_debuginfo = (__typeof__(debuginfod_find_debuginfo) *)dlsym(
		dinfod.lib, "debuginfod_find_debuginfo");
	if (!begin || !dinfod.find_debuginfo)
		return NULL;
	dinfod.client = begin();
	if (dinfod.client)
		atexit(client_end);
	return dinfod.client;
}

int sp_debuginfod_find_debuginfo(const uint8_t *id, size_t id_len, char **ret_path)
{
	debuginfod_client *c;
	char *path = NULL;
	int fd;

	if (!sp_debuginfod_enabled())
		return -ENOSYS;
	c = client_get();
	if (!c)
		return -ENOSYS;
	fd = dinfod.find_debuginfo(c, id, (int)id_len, &path);
	if (fd < 0)
		return fd == -ENOENT || fd == -ENODATA ? -ENOENT : fd;
	close(fd);
	if (!path)
		return -ENOMEM;
	*ret_path = path;
	return 0;
}
