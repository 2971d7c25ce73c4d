// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <time.h>
#include <unistd.h>
#include "base/util.h"

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int parse_seconds(const char *s, uint64_t *ret_ns)
{
	double d;
	char *end;

	if (!s || !*s || ((*s < '0' || *s > '9') && *s != '.'))
		return -EINVAL;
	errno = 0;
	d = strtod(s, &end);
	if (errno || *end || !(d > 0) || d > 1e7)
		return -EINVAL;
	*ret_ns = (uint64_t)(d * 1e9);
	return *ret_ns ? 0 : -EINVAL;
}

uint64_t now_ns(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

int xstrdup_to(char **ret, const char *s)
{
	*ret = NULL;
	if (!s)
		return 0;
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

bool name_matches(const char *name, const char *pat)
{
	const char *star = strchr(pat, '*');
	size_t pre, suf, len;

	if (!star)
		return !strcmp(name, pat);
	pre = (size_t)(star - pat);
	suf = strlen(star + 1);
	len = strlen(name);
	return len >= pre + suf && !strncmp(name, pat, pre) && !strcmp(name + len - suf, star + 1);
}

char *join_args(int argc, char *const *argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

int read_small_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	return 0;
}

size_t upper_bound(const void *base, size_t n, size_t elt, size_t off, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v;

		memcpy(&v, (const char *)base + mid * elt + off, sizeof(v));
		if (v <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int grow(void **v, size_t *cap, size_t n, size_t elt)
{
	size_t ncap;
	void *p;

	if (n <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < n)
		ncap *= 2;
	p = realloc(*v, ncap * elt);
	if (!p)
		return -ENOMEM;
	memset((char *)p + *cap * elt, 0, (ncap - *cap) * elt);
	*v = p;
	*cap = ncap;
	return 0;
}

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		lo = s[0] == 0xe0 ? 0xa0 : 0x80; /* overlong below U+0800 */
		hi = s[0] == 0xed ? 0x9f : 0xbf; /* surrogates */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		lo = s[0] == 0xf0 ? 0x90 : 0x80; /* overlong below U+10000 */
		hi = s[0] == 0xf4 ? 0x8f : 0xbf; /* above U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

char *utf8_fix(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), out = 0;
	char *d = malloc(3 * n + 1);

	if (!d)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq_len(s + i, n - i);

		if (len) {
			memcpy(d + out, s + i, len);
			out += len;
			i += len;
		} else {
			memcpy(d + out, "\xef\xbf\xbd", 3);
			out += 3;
			i++;
		}
	}
	d[out] = '\0';
	return d;
}

const char *fmt_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns >= NSEC_PER_SEC)
		snprintf(buf, len, "%.3fs", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, len, "%.1fms", ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	return buf;
}

int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool sudo_caller(uid_t *ret_uid, gid_t *ret_gid)
{
	uint64_t u, g;

	if (geteuid() != 0 || parse_u64(getenv("SUDO_UID") ?: "", 1, UINT32_MAX - 1, &u))
		return false;
	if (parse_u64(getenv("SUDO_GID") ?: "", 0, UINT32_MAX - 1, &g)) {
		const struct passwd *pw = getpwuid((uid_t)u);

		g = pw ? pw->pw_gid : u;
	}
	*ret_uid = (uid_t)u;
	*ret_gid = (gid_t)g;
	return true;
}
