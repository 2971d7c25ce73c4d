// SPDX-License-Identifier: BSD-2-Clause
/*
 * The library nofpspin's `read-dlopen-forks` children dlopen(): nofpdl_read -> read_byte ->
 * read(), built without frame pointers, so that only its call frame information unwinds it.
 * Each function does work after its call so that no call becomes a tail call.
 */
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static long read_byte(int fd)
{
	char c;
	long r = read(fd, &c, 1);

	sink += (unsigned long)r;
	return r;
}

__attribute__((visibility("default"), noinline)) long nofpdl_read(int fd)
{
	long r = read_byte(fd);

	sink ^= (unsigned long)r;
	return r;
}
