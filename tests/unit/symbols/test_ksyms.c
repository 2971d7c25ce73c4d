/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit tests of the kallsyms table: parsing, sizes, aliases, lookups, restricted files. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/ksyms.h"

#define FIXTURE FIXTURES_DIR "/kallsyms.txt"
#define FIXTURE_RESTRICTED FIXTURES_DIR "/kallsyms_restricted.txt"

/* The fixture's symbol lines minus the absolute one, the 600-char name and 4 malformed lines. */
#define FIXTURE_SYMBOLS 46
#define FIXTURE_SKIPPED 5

static struct ksyms *ks;

static void setup(void)
{
	ks = ksyms__load(FIXTURE);
	ck_assert_msg(ks, "loading %s: %s", FIXTURE, strerror(errno));
}

static void teardown(void)
{
	ksyms__free(ks);
	ks = NULL;
}

/* Asserts that addr maps to the text symbol name at offset off. */
static void check_text(uint64_t addr, const char *name, uint64_t off)
{
	uint64_t got_off = ~0ULL;
	const struct ksym *s = ksyms__map_addr(ks, addr, &got_off);

	ck_assert_msg(s, "0x%llx: no text symbol, expected %s", (unsigned long long)addr, name);
	ck_assert_str_eq(s->name, name);
	ck_assert_uint_eq(got_off, off);
}

static void check_data(uint64_t addr, const char *name, uint64_t off)
{
	uint64_t got_off = ~0ULL;
	const struct ksym *s = ksyms__map_data(ks, addr, &got_off);

	ck_assert_msg(s, "0x%llx: no data symbol, expected %s", (unsigned long long)addr, name);
	ck_assert_str_eq(s->name, name);
	ck_assert_uint_eq(got_off, off);
}

static void check_no_text(uint64_t addr)
{
	const struct ksym *s = ksyms__map_addr(ks, addr, NULL);

	ck_assert_msg(!s, "0x%llx: expected no text symbol, got %s", (unsigned long long)addr,
		      s ? s->name : "");
}

static void check_no_data(uint64_t addr)
{
	const struct ksym *s = ksyms__map_data(ks, addr, NULL);

	ck_assert_msg(!s, "0x%llx: expected no data symbol, got %s", (unsigned long long)addr,
		      s ? s->name : "");
}

START_TEST(test_counts_and_order)
{
	size_t i;

	ck_assert_uint_eq(ksyms__count(ks), FIXTURE_SYMBOLS);
	ck_assert_uint_eq(ksyms__skipped(ks), FIXTURE_SKIPPED);
	ck_assert(!ksyms__restricted(ks));
	for (i = 1; i < ksyms__count(ks); i++)
		ck_assert_uint_le(ksyms__at(ks, i - 1)->addr, ksyms__at(ks, i)->addr);
	ck_assert_ptr_null(ksyms__at(ks, ksyms__count(ks)));
	ck_assert_ptr_null(ksyms__get(ks, "fixed_percpu_data")); /* absolute: ignored */
	ck_assert_ptr_null(ksyms__get(ks, "bad_hex"));
	ck_assert_ptr_null(ksyms__get(ks, "unterminated_module"));
	/* The first symbol by address is the best alias at _stext: the real function. */
	ck_assert_str_eq(ksyms__at(ks, 0)->name, "startup_64");
}
END_TEST

START_TEST(test_function_boundaries)
{
	const struct ksym *s = ksyms__get(ks, "schedule");

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->addr, 0xffffffff81002010ULL);
	ck_assert_uint_eq(s->size, 0x1f0); /* up to __pfx___schedule */
	ck_assert_int_eq(s->type, 'T');
	ck_assert_ptr_null(s->module);

	check_text(0xffffffff81002010ULL, "schedule", 0);      /* first byte */
	check_text(0xffffffff810021ffULL, "schedule", 0x1ef);  /* last byte */
	check_text(0xffffffff81002200ULL, "__pfx___schedule", 0); /* one past the end */
	check_text(0xffffffff81002210ULL, "__schedule", 0);
	check_text(0xffffffff810027ffULL, "__schedule", 0x5ef);
	check_text(0xffffffff81000110ULL, "do_one_initcall", 0);
	check_text(0xffffffff810001ffULL, "do_one_initcall", 0xef);
	check_text(0xffffffff81000300ULL, "weak_fn", 0);
	check_text(0xffffffff81003200ULL, "last_text_fn", 0);
	check_text(0xffffffff81003fffULL, "last_text_fn", 0xdff); /* last byte before _etext */

	/* Before the first symbol, and a NULL ret_offset is allowed. */
	check_no_text(0xffffffff80ffffffULL);
	check_no_text(0);
	ck_assert_ptr_nonnull(ksyms__map_addr(ks, 0xffffffff81000000ULL, NULL));
}
END_TEST

START_TEST(test_gaps)
{
	/* weak_fn ends where the rodata object __func__.12 starts: text lookups stop there. */
	check_text(0xffffffff810003ffULL, "weak_fn", 0xff);
	check_no_text(0xffffffff81000400ULL);
	check_no_text(0xffffffff81000fffULL);
	/* End markers have size 0: the space after them names nothing. */
	check_no_text(0xffffffff81004000ULL); /* _etext */
	check_no_text(0xffffffff81ffffffULL);
	check_no_text(0xffffffffc0000000ULL); /* between vmlinux and the modules */
	check_no_data(0xffffffff82000800ULL); /* __end_rodata */
	check_no_data(0xffffffff827fffffULL);
	check_no_data(0xffffffff82800100ULL); /* _edata */
	check_no_data(0xffffffff82900100ULL); /* __bss_stop, _end */
	check_no_data(0xffffffffffffffffULL);
	ck_assert_uint_eq(ksyms__get(ks, "_etext")->size, 0);
	ck_assert_uint_eq(ksyms__get(ks, "__sched_text_end")->size, 0);
	ck_assert_uint_eq(ksyms__get(ks, "_end")->size, 0);
	/* Start markers are ordinary symbols sized up to the next one. */
	ck_assert_uint_eq(ksyms__get(ks, "__sched_text_start")->size, 0x10);
}
END_TEST

START_TEST(test_aliases_and_pfx)
{
	const struct ksym *s;
	struct ksym copy;
	size_t i;

	/* _stext, _text and the local startup_64 share an address: the function wins. */
	check_text(0xffffffff81000000ULL, "startup_64", 0);
	check_text(0xffffffff8100003fULL, "startup_64", 0x3f);
	/* A global T wins over a local t alias. */
	check_text(0xffffffff81000200ULL, "global_alias_fn", 0);
	check_text(0xffffffff810002ffULL, "global_alias_fn", 0xff);
	ck_assert_uint_eq(ksyms__get(ks, "a_local_alias_fn")->size, 0x100);

	/* Inside __pfx_ padding: any name but the function's; inside the function: the function. */
	s = ksyms__map_addr(ks, 0xffffffff8100200fULL, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_ne(s->name, "schedule");
	check_text(0xffffffff81000100ULL, "__pfx_do_one_initcall", 0);
	check_text(0xffffffff8100010fULL, "__pfx_do_one_initcall", 0xf);
	ck_assert_uint_eq(ksyms__get(ks, "__pfx_schedule")->size, 0x10);
	check_text(0xffffffff81001010ULL, "default_idle", 0);
	check_text(0xffffffff8100107fULL, "default_idle", 0x6f);
	check_no_text(0xffffffff81001080ULL); /* __cpuidle_text_end */

	/*
	 * __sched_text_end, __lock_text_start and __pfx__raw_spin_lock at one address: the end
	 * marker must not hide the others, and the start marker beats the padding name.
	 */
	check_text(0xffffffff81002800ULL, "__lock_text_start", 0);
	check_text(0xffffffff8100280fULL, "__lock_text_start", 0xf);
	check_text(0xffffffff81002810ULL, "_raw_spin_lock", 0);
	check_text(0xffffffff810028ffULL, "_raw_spin_lock", 0xef);
	check_no_text(0xffffffff81002900ULL); /* __lock_text_end */

	/*
	 * Aliases are deterministic in ksyms__at() as well: best first. A symbol is one
	 * pointer whichever lookup found it, and ksyms__sym() copies the same.
	 */
	s = ksyms__get(ks, "global_alias_fn");
	for (i = 0; i < ksyms__count(ks) && ksyms__at(ks, i) != s; i++)
		;
	ck_assert_uint_lt(i, ksyms__count(ks));
	ck_assert_ptr_eq(ksyms__map_addr(ks, s->addr + 1, NULL), s);
	ck_assert_str_eq(ksyms__at(ks, i + 1)->name, "a_local_alias_fn");
	ck_assert(ksyms__sym(ks, i, &copy));
	ck_assert_str_eq(copy.name, s->name);
	ck_assert_uint_eq(copy.addr, s->addr);
	ck_assert_uint_eq(copy.size, s->size);
	ck_assert_int_eq(copy.type, s->type);
	ck_assert(!ksyms__sym(ks, ksyms__count(ks), &copy));
}
END_TEST

START_TEST(test_long_names)
{
	char name[601];
	const struct ksym *s;

	memset(name, 'a', sizeof(name));
	memcpy(name, "long_", 5);
	name[511] = '\0';
	s = ksyms__get(ks, name);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(strlen(s->name), 511);
	/* The 600-char line was skipped, not truncated: the 511 one reaches last_text_fn. */
	ck_assert_uint_eq(s->size, 0x200);
	check_text(0xffffffff81003150ULL, name, 0x150);

	memset(name, 'b', sizeof(name));
	name[600] = '\0';
	ck_assert_ptr_null(ksyms__get(ks, name));
	name[KSYMS_NAME_MAX] = '\0';
	ck_assert_ptr_null(ksyms__get(ks, name));
}
END_TEST

START_TEST(test_modules)
{
	const struct ksym *s;
	uint64_t off;

	s = ksyms__map_addr(ks, 0xffffffffc0a00020ULL, &off);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "ext4_foo");
	ck_assert_ptr_nonnull(s->module);
	ck_assert_str_eq(s->module, "ext4");
	ck_assert_uint_eq(off, 0x10);
	check_text(0xffffffffc0a00000ULL, "__pfx_ext4_foo", 0);
	check_text(0xffffffffc0a000ffULL, "ext4_foo", 0xef);
	check_text(0xffffffffc0a00100ULL, "ext4_bar", 0);

	/* Sizes stay within one object: ext4_lock is ext4's last symbol, xfs_fn does not cut it. */
	s = ksyms__get(ks, "ext4_lock");
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->module, "ext4");
	ck_assert_int_eq(s->type, 'd');
	ck_assert_uint_eq(s->size, KSYMS_LAST_SIZE);
	check_data(0xffffffffc0a02900ULL, "ext4_lock", 0x900);
	check_data(0xffffffffc0a02fffULL, "ext4_lock", 0xfff);
	check_no_data(0xffffffffc0a03000ULL);

	s = ksyms__map_addr(ks, 0xffffffffc0a02810ULL, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "xfs_fn");
	ck_assert_str_eq(s->module, "xfs");
	ck_assert_uint_eq(s->size, 0x100);

	/* The last symbol of a module gets the bounded size. */
	s = ksyms__map_addr(ks, 0xffffffffc0a038ffULL, &off);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "init_once");
	ck_assert_str_eq(s->module, "xfs");
	ck_assert_uint_eq(off, KSYMS_LAST_SIZE - 1);
	check_no_text(0xffffffffc0a02900ULL + KSYMS_LAST_SIZE);

	/* init_once is in both modules (xfs listed first): by name, the lowest address wins. */
	s = ksyms__get(ks, "init_once");
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->module, "ext4");
	ck_assert_uint_eq(s->addr, 0xffffffffc0a00200ULL);
	/* ext4's init_once ends at ext4's next symbol; the data there is no function. */
	ck_assert_uint_eq(s->size, 0x1e00);
	check_no_text(0xffffffffc0a02010ULL);
}
END_TEST

START_TEST(test_data)
{
	const struct ksym *s;

	s = ksyms__get(ks, "tasklist_lock");
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(s->type, 'D');
	ck_assert_uint_eq(s->size, 0x40);
	check_data(0xffffffff82800000ULL, "tasklist_lock", 0); /* beats the _sdata marker */
	check_data(0xffffffff8280003fULL, "tasklist_lock", 0x3f);
	check_data(0xffffffff82800040ULL, "static_lock", 0);
	ck_assert_int_eq(ksyms__get(ks, "static_lock")->type, 'd');
	check_data(0xffffffff82800080ULL, "__key.7", 0);
	check_data(0xffffffff828000ffULL, "__key.7", 0x7f);
	check_data(0xffffffff82000000ULL, "sys_call_table", 0); /* R beats __start_rodata */
	check_data(0xffffffff820007ffULL, "sys_call_table", 0x7ff);
	check_data(0xffffffff82900010ULL, "bss_counter", 0x10);
	check_data(0xffffffff81000400ULL, "__func__.12", 0); /* rodata inside the text */

	/* Functions are not data and data is not functions. */
	check_no_data(0xffffffff81002010ULL);
	check_no_data(0xffffffff810003ffULL); /* before the first data symbol */
	check_no_text(0xffffffff82800000ULL);
	check_no_text(0xffffffff82800040ULL);
}
END_TEST

START_TEST(test_range)
{
	uint64_t start = 0, end = 0;
	const struct ksym *s = ksyms__get(ks, "schedule");

	ck_assert_int_eq(ksyms__range(ks, "__sched_text_start", "__sched_text_end", &start, &end),
			 0);
	ck_assert_uint_eq(start, 0xffffffff81002000ULL);
	ck_assert_uint_eq(end, 0xffffffff81002800ULL);
	ck_assert(s->addr >= start && s->addr < end);

	ck_assert_int_eq(ksyms__range(ks, "__lock_text_start", "__lock_text_end", &start, &end), 0);
	ck_assert_uint_eq(start, 0xffffffff81002800ULL);
	ck_assert_uint_eq(end, 0xffffffff81002900ULL);
	ck_assert_int_eq(ksyms__range(ks, "__cpuidle_text_start", "__cpuidle_text_end", &start,
				      &end), 0);
	ck_assert_uint_eq(end - start, 0x80);
	ck_assert_int_eq(ksyms__range(ks, "_stext", "_etext", &start, &end), 0);
	ck_assert_uint_eq(end, 0xffffffff81004000ULL);

	start = end = 7;
	ck_assert_int_eq(ksyms__range(ks, "__irqentry_text_start", "__irqentry_text_end", &start,
				      &end), -ENOENT);
	ck_assert_int_eq(ksyms__range(ks, "__sched_text_start", "nope", &start, &end), -ENOENT);
	ck_assert_uint_eq(start, 7);
	ck_assert_int_eq(ksyms__range(ks, "_etext", "_stext", &start, &end), -EINVAL);
}
END_TEST

START_TEST(test_restricted)
{
	struct ksyms *r = ksyms__load(FIXTURE_RESTRICTED);
	uint64_t start, end;

	ck_assert_ptr_nonnull(r);
	ck_assert(ksyms__restricted(r));
	ck_assert_uint_eq(ksyms__count(r), 6);
	ck_assert_uint_eq(ksyms__skipped(r), 0);
	ck_assert_ptr_nonnull(ksyms__get(r, "schedule"));
	ck_assert_str_eq(ksyms__get(r, "ext4_foo")->module, "ext4");
	ck_assert_ptr_null(ksyms__map_addr(r, 0, NULL));
	ck_assert_ptr_null(ksyms__map_addr(r, 0x10, NULL));
	ck_assert_ptr_null(ksyms__map_data(r, 0, NULL));
	ck_assert_int_eq(ksyms__range(r, "__sched_text_start", "__sched_text_end", &start, &end),
			 -EPERM);
	ksyms__free(r);
}
END_TEST

static char *write_temp(const char *content)
{
	static char path[64];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/test_ksyms.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(content, f);
	fclose(f);
	return path;
}

/* ksyms__file_shows_addresses() of a file with this content */
static int shows(const char *content)
{
	char *path = write_temp(content);
	int r = ksyms__file_shows_addresses(path);

	unlink(path);
	return r;
}

/*
 * Whether addresses are shown is told by the first text symbol, not the first line: x86-64
 * before 6.15 starts with per-CPU symbols at offsets from 0, addresses shown or not.
 */
START_TEST(test_file_shows_addresses)
{
	char long_line[1024];

	ck_assert_int_eq(ksyms__file_shows_addresses(FIXTURE), 1);
	ck_assert_int_eq(ksyms__file_shows_addresses(FIXTURE_RESTRICTED), 0);
	/* 6.1's shape, as root with kernel.kptr_restrict = 0 */
	ck_assert_int_eq(shows("0000000000000000 A fixed_percpu_data\n"
			       "0000000000000000 A __per_cpu_start\n"
			       "0000000000001000 A cpu_debug_store\n"
			       "0000000000002000 A irq_stack_backing_store\n"
			       "ffffffffa5e00000 T startup_64\n"
			       "ffffffffa5e00000 T _stext\n"), 1);
	/* hidden on such a kernel: everything reads 0 */
	ck_assert_int_eq(shows("0000000000000000 A fixed_percpu_data\n"
			       "0000000000000000 A cpu_debug_store\n"
			       "0000000000000000 T startup_64\n"), 0);
	ck_assert_int_eq(shows("0000000000000000 A fixed_percpu_data\n"
			       "ffffffff81000000 W weak_fn\n"), 1);
	/* the rest of an overlong line is not read as a line: here it would say "shown" */
	snprintf(long_line, sizeof(long_line), "0000000000000000 A %0700d T tail\n"
		 "0000000000000000 T startup_64\n", 0);
	memset(long_line + 19, 'a', 700);
	ck_assert_int_eq(shows(long_line), 0);
	ck_assert_int_eq(shows("0000000000000000 A fixed_percpu_data\n"
			       "ffffffff82000000 D some_data\n"), -ENODATA);
	ck_assert_int_eq(shows(""), -ENODATA);
	ck_assert_int_eq(ksyms__file_shows_addresses(FIXTURES_DIR "/no_such_kallsyms.txt"),
			 -ENOENT);
}
END_TEST

START_TEST(test_errors)
{
	const char *path;
	struct ksyms *k;

	errno = 0;
	ck_assert_ptr_null(ksyms__load(FIXTURES_DIR "/no_such_kallsyms.txt"));
	ck_assert_int_eq(errno, ENOENT);

	path = write_temp("");
	errno = 0;
	ck_assert_ptr_null(ksyms__load(path));
	ck_assert_int_eq(errno, EINVAL);
	unlink(path);

	path = write_temp("garbage\nffffffff81000000 T\n0000000000000000 A only_absolute\n"
			  "ffffffff810000001 T seventeen_digits\n"
			  "ffffffff81000000 TT two_letters\n");
	errno = 0;
	ck_assert_ptr_null(ksyms__load(path));
	ck_assert_int_eq(errno, EINVAL);
	unlink(path);

	/*
	 * CRLF, extra blanks, a blank line, no trailing newline: still parsed. Module m's lines
	 * are not contiguous (n's are between), yet b's size reaches d, m's next symbol.
	 */
	path = write_temp("ffffffff81000000 T a\r\n\nffffffff81000010  t  b \t[m] \n"
			  "ffffffff81000020 T c\nffffffff81000028 t e\t[n]\n"
			  "ffffffff81000030 t d\t[m]");
	k = ksyms__load(path);
	unlink(path);
	ck_assert_ptr_nonnull(k);
	ck_assert_uint_eq(ksyms__count(k), 5);
	ck_assert_uint_eq(ksyms__skipped(k), 0);
	ck_assert_str_eq(ksyms__get(k, "b")->module, "m");
	ck_assert_uint_eq(ksyms__get(k, "b")->size, 0x20);
	ck_assert_ptr_eq(ksyms__get(k, "b")->module, ksyms__get(k, "d")->module);
	ck_assert_uint_eq(ksyms__get(k, "a")->size, 0x20); /* b is another object */
	ck_assert_str_eq(ksyms__get(k, "c")->name, "c");
	ck_assert_uint_eq(ksyms__get(k, "c")->size, KSYMS_LAST_SIZE);
	ksyms__free(k);

	ksyms__free(NULL);
	ck_assert_uint_eq(ksyms__count(NULL), 0);
	ck_assert_ptr_null(ksyms__get(NULL, "x"));
	ck_assert_ptr_null(ksyms__map_addr(NULL, 1, NULL));
}
END_TEST

/* Big enough for the general sort: a module in scrambled order and a large alias group. */
START_TEST(test_shuffled)
{
	enum { NMOD = 200, NALIAS = 40 };
	size_t len = 0, cap = (NMOD + NALIAS + 2) * 64, i;
	char *text = malloc(cap);
	const struct ksym *s;
	const char *path;
	uint64_t off;
	struct ksyms *k;

	ck_assert_ptr_nonnull(text);
	for (i = 0; i < NALIAS; i++) /* local aliases that sort before the global one by name */
		len += (size_t)snprintf(text + len, cap - len,
					"ffffffff81000000 t alias_%02zu\n", i);
	len += (size_t)snprintf(text + len, cap - len, "ffffffff81000000 T zz_global\n");
	len += (size_t)snprintf(text + len, cap - len, "ffffffff81000100 T vmlinux_next\n");
	for (i = 0; i < NMOD; i++) { /* 7 is coprime with 200: a permutation */
		size_t j = i * 7 % NMOD;

		len += (size_t)snprintf(text + len, cap - len, "%016llx t mfn_%03zu\t[big]\n",
					0xffffffffc0000000ULL + j * 0x10, j);
	}
	path = write_temp(text);
	free(text);
	k = ksyms__load(path);
	unlink(path);
	ck_assert_ptr_nonnull(k);
	ck_assert_uint_eq(ksyms__count(k), NMOD + NALIAS + 2);

	for (i = 1; i < ksyms__count(k); i++)
		ck_assert_uint_le(ksyms__at(k, i - 1)->addr, ksyms__at(k, i)->addr);
	ck_assert_str_eq(ksyms__at(k, 0)->name, "zz_global");
	ck_assert_str_eq(ksyms__at(k, 1)->name, "alias_00");
	s = ksyms__map_addr(k, 0xffffffff810000ffULL, &off);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "zz_global");
	ck_assert_uint_eq(off, 0xff);

	for (i = 0; i < NMOD; i++) {
		char name[16];

		snprintf(name, sizeof(name), "mfn_%03zu", i);
		s = ksyms__get(k, name);
		ck_assert_ptr_nonnull(s);
		ck_assert_uint_eq(s->addr, 0xffffffffc0000000ULL + i * 0x10);
		ck_assert_uint_eq(s->size, i == NMOD - 1 ? KSYMS_LAST_SIZE : 0x10);
		ck_assert_ptr_eq(ksyms__map_addr(k, s->addr + 0xf, NULL), s);
		ck_assert_str_eq(s->module, "big");
	}
	ksyms__free(k);
}
END_TEST

START_TEST(test_real_kallsyms)
{
	struct ksyms *k;
	const struct ksym *s, *m;
	uint64_t off = 0;

	k = ksyms__load(NULL);
	if (!k) {
		/* Only an unreadable /proc/kallsyms excuses a failure. */
		ck_assert_msg(errno == ENOENT || errno == EACCES || errno == EPERM,
			      "loading /proc/kallsyms: %s", strerror(errno));
		return;
	}
	ck_assert_uint_gt(ksyms__count(k), 1000);
	if (ksyms__restricted(k)) {
		ck_assert_ptr_null(ksyms__map_addr(k, 0, NULL));
		ksyms__free(k);
		return;
	}
	s = ksyms__get(k, "schedule");
	ck_assert_ptr_nonnull(s);
	ck_assert(s->type == 'T' || s->type == 't');
	ck_assert_ptr_null(s->module);
	ck_assert_uint_gt(s->size, 0);
	m = ksyms__map_addr(k, s->addr + 1, &off);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(m->name, "schedule");
	ck_assert_uint_eq(off, 1);
	ksyms__free(k);
}
END_TEST

static Suite *ksyms_suite(void)
{
	Suite *s = suite_create("ksyms");
	TCase *tc = tcase_create("fixture");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_counts_and_order);
	tcase_add_test(tc, test_function_boundaries);
	tcase_add_test(tc, test_gaps);
	tcase_add_test(tc, test_aliases_and_pfx);
	tcase_add_test(tc, test_long_names);
	tcase_add_test(tc, test_modules);
	tcase_add_test(tc, test_data);
	tcase_add_test(tc, test_range);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_add_test(tc, test_restricted);
	tcase_add_test(tc, test_file_shows_addresses);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_shuffled);
	tcase_add_test(tc, test_real_kallsyms);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ksyms_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
