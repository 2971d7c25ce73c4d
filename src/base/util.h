/* SPDX-License-Identifier: BSD-2-Clause */
/* Strict number and list parsing, time, and small string helpers. */
#ifndef SCHEDPROF_UTIL_H
#define SCHEDPROF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NSEC_PER_SEC 1000000000ULL

/* Whole decimal number in [min, max], nothing else in the string. 0 or -EINVAL/-ERANGE. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret);
/* Seconds, possibly fractional ("2", "0.5"), > 0. */
int parse_seconds(const char *s, uint64_t *ret_ns);

uint64_t now_ns(int clock);
char *xstrdup(const char *s); /* NULL on NULL or ENOMEM */
/* *ret = a copy of s (NULL for NULL). 0 or -ENOMEM. */
int xstrdup_to(char **ret, const char *s);
/*
 * A function name against a pattern of kernel or library names: "name" exactly, "prefix*",
 * or "prefix*suffix" (one '*' inside).
 */
bool name_matches(const char *name, const char *pat);
/* argv[0..argc) joined with single spaces (malloc'd), or NULL (ENOMEM). */
char *join_args(int argc, char *const *argv);
/*
 * Reads a small file (a /proc or cgroup file: one read) into buf of len > 0 bytes,
 * NUL-terminated; what does not fit is cut. 0 or -errno.
 */
int read_small_file(const char *path, char *buf, size_t len);
/*
 * The index of the first of the n elements (each elt bytes, at base, sorted by the uint64_t
 * at byte off of each) whose key is greater than key; n when none is: how many are at most
 * key. (The symbol tables search an address's candidates with it: the ones before.)
 */
size_t upper_bound(const void *base, size_t n, size_t elt, size_t off, uint64_t key);
/* Grow *v (element size elt) so that it holds at least n elements. 0 or -ENOMEM. */
int grow(void **v, size_t *cap, size_t n, size_t elt);
/*
 * Length of the valid UTF-8 sequence at s (n > 0 bytes left): 1 to 4, or 0 when s starts no
 * valid sequence (overlong forms, surrogates, > U+10FFFF, truncated, stray continuation).
 */
size_t utf8_seq_len(const unsigned char *s, size_t n);
/* s with each byte of invalid UTF-8 as U+FFFD (malloc'd), or NULL (ENOMEM) */
char *utf8_fix(const char *s);
/* The value of a hex digit (0-9, a-f, A-F), or -1 for any other character. */
int hex_digit(int c);
/* "1.234s", "12.3ms", "456us", "78ns" into buf. */
const char *fmt_duration(uint64_t ns, char *buf, size_t len);

/*
 * The user who ran sudo, when this process is root under sudo (SUDO_UID, a user other than
 * root): its uid, and SUDO_GID (or, without it, that user's primary group). false otherwise.
 */
bool sudo_caller(uid_t *ret_uid, gid_t *ret_gid);

#endif
