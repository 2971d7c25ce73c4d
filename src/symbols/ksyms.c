/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel symbols from /proc/kallsyms in a compact table: one array per field, indexed by the
 * symbol's place in address order (addresses as uint64, sizes as uint32, the type letter and
 * the module's number packed in one uint32, the name as a uint32 offset into one string
 * pool), one index per class (text, data) holding the best alias of each distinct address,
 * and a by-name index built at the first lookup by name. About 20 bytes a symbol plus its
 * name, half of what an array of struct ksym takes. A name that ends the previous line's
 * name (schedule after __pfx_schedule, half of a kernel with call padding) is not stored
 * again but points into it.
 *
 * struct ksym is what lookups return: made on demand, once per symbol asked for, and kept
 * until ksyms__free(), so a pointer stays valid and two lookups of one symbol give the same
 * pointer. ksyms__sym() copies one out instead, for a walk over all of them.
 *
 * Loading appends each parsed line to the field arrays in file order (with the alias rank
 * and marker flags in a side array), sorts a permutation of the line numbers once, applies
 * it in place, then computes the sizes. Few passes and little memory keep it fast: the page
 * faults of fresh memory are a large part of the cost.
 */
#include "symbols/ksyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "base/hashmap.h"
#include "base/util.h"

#define KALLSYMS_PATH "/proc/kallsyms"
/* seq_file hands out as much as the read asks for: big reads mean fewer syscalls. */
#define READ_BUF_SIZE (64 * 1024)
/* The longest start-marker name derived from an end marker ("__stop_X" -> "__start_X"). */
#define MARKER_NAME_MAX (KSYMS_NAME_MAX + 8)
/* info: the type letter in the low byte, the module number (0: vmlinux) above it. */
#define INFO_TYPE(i) ((char)((i) & 0xff))
#define INFO_MOD(i) ((i) >> 8)
#define MOD_MAX ((UINT32_MAX >> 8) - 1)
/* sizes[i] of a symbol whose size does not fit 32 bits: the size is in wide[]. */
#define SIZE_WIDE UINT32_MAX
/* struct ksym made per chunk */
#define MADE_CHUNK 64

/* sym_meta.flags */
enum {
	SF_END_CAND = 1 << 0,	/* named like a section end marker */
	SF_START_CAND = 1 << 1, /* named like a section start marker */
	SF_END = 1 << 2,	/* an end marker whose start exists: size 0 */
	SF_START = 1 << 3,	/* a start marker whose end exists */
};

/*
 * sym_meta.rank: lower is preferred among aliases. Bits 0-1: leading underscores (at most 3),
 * bits 2-3: binding (0 global, 1 weak global, 2 local), then these.
 */
#define RANK_MARKER 0x10 /* section start marker (_stext, __sched_text_start...) */
#define RANK_PAD 0x20	 /* __pfx_/__cfi_ padding in front of a function */
#define RANK_END 0x40	 /* section end marker: never the answer of a lookup */

/* What loading needs beyond the table, per line (in file order, then in address order). */
struct sym_meta {
	uint8_t rank;
	uint8_t flags;
};

/* A size of 4 GiB or more (a symbol far below the next one, e.g. a per-CPU offset). */
struct wide_size {
	uint32_t idx;
	uint64_t size;
};

struct made_chunk {
	struct made_chunk *next;
	size_t used;
	struct ksym syms[MADE_CHUNK];
};

struct ksyms {
	size_t cnt;
	uint64_t *addrs;     /* [cnt], ascending; aliases best first */
	uint32_t *sizes;     /* [cnt]; SIZE_WIDE: see wide */
	uint32_t *info;      /* [cnt]: type letter | module number << 8 */
	uint32_t *name_off;  /* [cnt]: the name's offset in pool */
	char *pool;	     /* NUL-terminated names, and the modules' names */
	size_t pool_len;
	uint32_t *mod_off;   /* [module number]: its name's offset in pool; [0] unused */
	size_t nmods;	     /* including [0] */
	struct wide_size *wide; /* by idx */
	size_t wide_cnt;
	uint32_t *text_idx;
	size_t text_cnt;
	uint32_t *data_idx;
	size_t data_cnt;
	/*
	 * name -> index + 1 (0: empty slot), open addressing, the lowest address of each name:
	 * built at the first lookup by name (1 MiB for 120k symbols; a run that has the boot's
	 * fold cache looks up none).
	 */
	uint32_t *names;
	size_t names_mask;
	/*
	 * The struct ksym handed out, by index. Lookups fill it (and the by-name index): not
	 * thread-safe then, as before; the loader's thread is joined before anyone else asks.
	 */
	struct hashmap made;
	struct made_chunk *chunks;
	size_t skipped;
	bool restricted;
};

struct loader {
	struct ksyms *ks;
	size_t cap;	       /* of addrs, info, name_off, meta */
	size_t pool_cap;
	size_t mods_cap;
	struct sym_meta *meta; /* [line number], then [index] once sorted */
	uint32_t last_mod;     /* the module of the previous module line: they come in runs */
	uint32_t prev_off;     /* the previous line's name in the pool */
	size_t prev_len;
	bool any_addr;
};

struct parsed {
	uint64_t addr;
	const char *name;
	size_t name_len;
	const char *mod; /* NULL: vmlinux */
	size_t mod_len;
	char type;
};

static bool is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/* nm's g/G (small initialized data), s/S (small bss) and v/V (weak object) are data too. */
static bool is_data_type(char t)
{
	switch (t) {
	case 'd': case 'D': case 'b': case 'B': case 'r': case 'R':
	case 'g': case 'G': case 's': case 'S': case 'v': case 'V':
		return true;
	default:
		return false;
	}
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool has_prefix(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

static bool has_suffix(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

static bool name_is(const char *s, size_t len, const char *what)
{
	return len == strlen(what) && !memcmp(s, what, len);
}

/*
 * Splits "ADDR TYPE NAME[\t[MODULE]]"; the line must be NUL-terminated at or after end, as
 * getline() leaves it. Returns 1 for a symbol, 0 for a line to ignore (blank, absolute or
 * undefined), -EINVAL when malformed, -ENAMETOOLONG when the name is too long.
 */
static int parse_line(const char *p, const char *end, struct parsed *ret)
{
	uint64_t addr = 0;
	int digits = 0, v;

	while (end > p && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	if (p == end)
		return 0;

	for (; p < end && (v = hex_digit(*p)) >= 0; p++) {
		if (++digits > 16)
			return -EINVAL;
		addr = addr << 4 | (uint64_t)v;
	}
	if (!digits || p == end || !is_blank(*p))
		return -EINVAL;
	while (p < end && is_blank(*p))
		p++;

	if (p == end || !is_letter(*p))
		return -EINVAL;
	ret->type = *p++;
	if (p == end || !is_blank(*p))
		return -EINVAL;
	while (p < end && is_blank(*p))
		p++;

	ret->name = p;
	p += strcspn(p, " \t\r\n");
	if (p > end)
		p = end;
	ret->name_len = (size_t)(p - ret->name);
	if (!ret->name_len)
		return -EINVAL;
	while (p < end && is_blank(*p))
		p++;

	ret->mod = NULL;
	ret->mod_len = 0;
	if (p < end) {
		if (*p != '[')
			return -EINVAL;
		ret->mod = ++p;
		while (p < end && *p && *p != ']' && !is_blank(*p))
			p++;
		if (p == end || *p != ']' || p == ret->mod)
			return -EINVAL;
		ret->mod_len = (size_t)(p - ret->mod);
		for (p++; p < end && is_blank(*p); p++)
			;
		if (p != end || ret->mod_len > KSYMS_NAME_MAX)
			return -EINVAL;
	}

	if (ret->name_len > KSYMS_NAME_MAX)
		return -ENAMETOOLONG;
	if (ret->type == 'a' || ret->type == 'A' || ret->type == 'U')
		return 0;
	ret->addr = addr;
	return 1;
}


static int grow_to(void **ptr, size_t need, size_t cap, size_t elem)
{
	void *p;

	if (need <= cap)
		return 0;
	p = realloc(*ptr, need * elem);
	if (!p)
		return -ENOMEM;
	*ptr = p;
	return 0;
}

/* Room for one more line in every per-line array. */
static int grow_lines(struct loader *l)
{
	struct ksyms *ks = l->ks;
	size_t n;

	if (ks->cnt < l->cap)
		return 0;
	if (ks->cnt >= UINT32_MAX - 1)
		return -ENOMEM;
	n = l->cap ? l->cap * 2 : 16384;
	if (grow_to((void **)&ks->addrs, n, l->cap, sizeof(*ks->addrs)) ||
	    grow_to((void **)&ks->info, n, l->cap, sizeof(*ks->info)) ||
	    grow_to((void **)&ks->name_off, n, l->cap, sizeof(*ks->name_off)) ||
	    grow_to((void **)&l->meta, n, l->cap, sizeof(*l->meta)))
		return -ENOMEM;
	l->cap = n;
	return 0;
}

/* Copies s[0..len) plus a NUL into the pool; its offset goes to *ret_off. */
static int pool_add(struct loader *l, const char *s, size_t len, uint32_t *ret_off)
{
	struct ksyms *ks = l->ks;

	if (ks->pool_len + len + 1 > l->pool_cap) {
		size_t n = l->pool_cap ? l->pool_cap : 1 << 20;

		while (n < ks->pool_len + len + 1)
			n *= 2;
		if (n > UINT32_MAX || grow_to((void **)&ks->pool, n, l->pool_cap, 1))
			return -ENOMEM;
		l->pool_cap = n;
	}
	memcpy(ks->pool + ks->pool_len, s, len);
	ks->pool[ks->pool_len + len] = '\0';
	*ret_off = (uint32_t)ks->pool_len;
	ks->pool_len += len + 1;
	return 0;
}

static bool module_is(const struct ksyms *ks, uint32_t m, const char *name, size_t len)
{
	const char *s = ks->pool + ks->mod_off[m];

	return !strncmp(s, name, len) && !s[len];
}

static int intern_module(struct loader *l, const char *m, size_t len, uint32_t *ret_mod)
{
	struct ksyms *ks = l->ks;
	uint32_t off;
	int err;

	if (l->last_mod && module_is(ks, l->last_mod, m, len)) {
		*ret_mod = l->last_mod;
		return 0;
	}
	for (size_t i = 1; i < ks->nmods; i++) {
		if (module_is(ks, (uint32_t)i, m, len)) {
			*ret_mod = l->last_mod = (uint32_t)i;
			return 0;
		}
	}
	if (ks->nmods > MOD_MAX)
		return -ENOMEM;
	if (ks->nmods == l->mods_cap) {
		size_t n = l->mods_cap ? l->mods_cap * 2 : 64;

		if (grow_to((void **)&ks->mod_off, n, l->mods_cap, sizeof(*ks->mod_off)))
			return -ENOMEM;
		l->mods_cap = n;
	}
	err = pool_add(l, m, len, &off);
	if (err)
		return err;
	ks->mod_off[ks->nmods] = off;
	*ret_mod = l->last_mod = (uint32_t)ks->nmods++;
	return 0;
}

/* The alias rank bits known from the line alone; marker bits are added once all names are in. */
static uint8_t base_rank(const char *name, size_t len, char type)
{
	uint8_t rank = 0;
	size_t us = 0;

	while (us < len && us < 3 && name[us] == '_')
		us++;
	rank |= (uint8_t)us;
	if (type == 'W' || type == 'V')
		rank |= 1 << 2;
	else if (type >= 'a' && type <= 'z')
		rank |= 2 << 2;
	if (has_prefix(name, len, "__pfx_") || has_prefix(name, len, "__cfi_"))
		rank |= RANK_PAD;
	return rank;
}

/* Which names may be section markers; the pair check in confirm_markers() decides. */
static uint8_t marker_flags(const char *n, size_t len)
{
	if (len < 2 || n[0] != '_')
		return 0;
	if (n[1] != '_') {
		if (name_is(n, len, "_end") || (n[1] == 'e' && len > 2))
			return SF_END_CAND;
		if (n[1] == 's' && len > 2)
			return SF_START_CAND;
		return 0;
	}
	if (has_prefix(n, len, "__pfx_") || has_prefix(n, len, "__cfi_"))
		return 0;
	if (has_prefix(n, len, "__stop_") || has_prefix(n, len, "__end_") ||
	    has_suffix(n, len, "_text_end") || name_is(n, len, "__bss_stop") ||
	    name_is(n, len, "__per_cpu_end") || name_is(n, len, "__init_end"))
		return SF_END_CAND;
	if (has_prefix(n, len, "__start_") || has_suffix(n, len, "_text_start") ||
	    name_is(n, len, "__bss_start") || name_is(n, len, "__per_cpu_start") ||
	    name_is(n, len, "__init_begin"))
		return SF_START_CAND;
	return 0;
}


static int add_symbol(struct loader *l, const struct parsed *ps)
{
	struct ksyms *ks = l->ks;
	size_t i = ks->cnt;
	uint32_t mod = 0, off;
	int err;

	if (ps->mod) {
		err = intern_module(l, ps->mod, ps->mod_len, &mod);
		if (err)
			return err;
	}
	err = grow_lines(l);
	if (err)
		return err;
	/* the end of the previous name (schedule after __pfx_schedule): no second copy */
	if (l->prev_len >= ps->name_len &&
	    !memcmp(ks->pool + l->prev_off + l->prev_len - ps->name_len, ps->name, ps->name_len)) {
		off = l->prev_off + (uint32_t)(l->prev_len - ps->name_len);
	} else {
		err = pool_add(l, ps->name, ps->name_len, &off);
		if (err)
			return err;
		l->prev_off = off;
		l->prev_len = ps->name_len;
	}
	ks->addrs[i] = ps->addr;
	ks->info[i] = (uint32_t)(unsigned char)ps->type | mod << 8;
	ks->name_off[i] = off;
	l->meta[i].rank = base_rank(ps->name, ps->name_len, ps->type);
	l->meta[i].flags = marker_flags(ps->name, ps->name_len);
	ks->cnt++;
	if (ps->addr)
		l->any_addr = true;
	return 0;
}

static int read_file(struct loader *l, const char *path)
{
	char *line = NULL, *iobuf;
	size_t line_cap = 0;
	struct parsed ps;
	ssize_t len;
	FILE *f;
	int err = 0, r;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	iobuf = malloc(READ_BUF_SIZE);
	if (iobuf)
		setvbuf(f, iobuf, _IOFBF, READ_BUF_SIZE);

	for (;;) {
		errno = 0;
		len = getline(&line, &line_cap, f);
		if (len < 0) {
			if (ferror(f) || errno == ENOMEM)
				err = errno ? -errno : -EIO;
			break;
		}
		r = parse_line(line, line + len, &ps);
		if (r < 0) {
			l->ks->skipped++;
			continue;
		}
		if (r == 0)
			continue;
		err = add_symbol(l, &ps);
		if (err)
			break;
	}

	free(line);
	fclose(f);
	free(iobuf);
	return err;
}

static const char *name_of(const struct ksyms *ks, size_t i)
{
	return ks->pool + ks->name_off[i];
}

static int cmp_lines_by_name(const void *a, const void *b, void *ks_arg)
{
	return strcmp(name_of(ks_arg, *(const uint32_t *)a), name_of(ks_arg, *(const uint32_t *)b));
}

/* The start marker an end marker pairs with, into buf; false if the name is not an end marker. */
static bool start_of_end(const char *n, char *buf, size_t bufsz)
{
	size_t len = strlen(n);
	int w;

	if (n[0] == '_' && n[1] == 'e')
		w = snprintf(buf, bufsz, "_s%s", n + 2);
	else if (has_prefix(n, len, "__stop_"))
		w = snprintf(buf, bufsz, "__start_%s", n + 7);
	else if (has_prefix(n, len, "__end_"))
		w = snprintf(buf, bufsz, "__start_%s", n + 6);
	else if (has_suffix(n, len, "_text_end"))
		w = snprintf(buf, bufsz, "%.*s_start", (int)(len - 4), n);
	else if (!strcmp(n, "__bss_stop"))
		w = snprintf(buf, bufsz, "__bss_start");
	else if (!strcmp(n, "__per_cpu_end"))
		w = snprintf(buf, bufsz, "__per_cpu_start");
	else if (!strcmp(n, "__init_end"))
		w = snprintf(buf, bufsz, "__init_begin");
	else
		return false;
	return w > 0 && (size_t)w < bufsz;
}

/*
 * An end-looking name is an end marker only if its start exists too: this keeps functions
 * such as _erofs_printk or __end_swap_bio_write.cold (no "_srofs_printk"...) sized normally.
 * "_end" has no start and is always one. Runs before sorting, on line numbers.
 */
static int confirm_markers(struct loader *l)
{
	struct ksyms *ks = l->ks;
	char want[MARKER_NAME_MAX + 1];
	uint32_t *starts;
	size_t n = 0, i;

	for (i = 0; i < ks->cnt; i++)
		if (l->meta[i].flags & SF_START_CAND)
			n++;
	starts = malloc(sizeof(*starts) * (n ? n : 1));
	if (!starts)
		return -ENOMEM;
	for (i = 0, n = 0; i < ks->cnt; i++)
		if (l->meta[i].flags & SF_START_CAND)
			starts[n++] = (uint32_t)i;
	qsort_r(starts, n, sizeof(*starts), cmp_lines_by_name, ks);

	for (i = 0; i < ks->cnt; i++) {
		struct sym_meta *m = &l->meta[i];
		const char *name = name_of(ks, i);
		size_t lo = 0, hi = n;

		if (!(m->flags & SF_END_CAND))
			continue;
		if (!strcmp(name, "_end")) {
			m->flags |= SF_END;
			continue;
		}
		if (!start_of_end(name, want, sizeof(want)))
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (strcmp(name_of(ks, starts[mid]), want) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == n || strcmp(name_of(ks, starts[lo]), want))
			continue;
		m->flags |= SF_END;
		/* Mark every start of that name (the same marker may be listed twice). */
		for (; lo < n && !strcmp(name_of(ks, starts[lo]), want); lo++)
			l->meta[starts[lo]].flags |= SF_START;
	}
	free(starts);

	for (i = 0; i < ks->cnt; i++) {
		struct sym_meta *m = &l->meta[i];

		if (m->flags & SF_END)
			m->rank |= RANK_END;
		if ((m->flags & SF_START) || !strcmp(name_of(ks, i), "_text"))
			m->rank |= RANK_MARKER;
	}
	return 0;
}

/* Lines a and b: address, then alias rank, then name, then line number. */
static int cmp_lines(const struct loader *l, uint32_t a, uint32_t b)
{
	const struct ksyms *ks = l->ks;
	uint8_t ra, rb;
	int c;

	if (ks->addrs[a] != ks->addrs[b])
		return ks->addrs[a] < ks->addrs[b] ? -1 : 1;
	ra = l->meta[a].rank;
	rb = l->meta[b].rank;
	if (ra != rb)
		return ra < rb ? -1 : 1;
	c = strcmp(name_of(ks, a), name_of(ks, b));
	if (c)
		return c;
	return a < b ? -1 : a > b;
}

static int cmp_lines_qsort(const void *a, const void *b, void *l)
{
	return cmp_lines(l, *(const uint32_t *)a, *(const uint32_t *)b);
}

static void sort_range(const struct loader *l, uint32_t *a, size_t n)
{
	size_t i, j;

	if (n > 16) {
		qsort_r(a, n, sizeof(*a), cmp_lines_qsort, (void *)l);
		return;
	}
	for (i = 1; i < n; i++) {
		uint32_t x = a[i];

		for (j = i; j > 0 && cmp_lines(l, a[j - 1], x) > 0; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

/*
 * The line numbers in address order, into perm. vmlinux comes out of kallsyms already sorted
 * by address (only its aliases need ordering); module symbols follow in symtab order. So:
 * order the aliases of the sorted prefix, sort the rest, and merge the rest in from the back.
 */
static int sort_lines(const struct loader *l, uint32_t *perm)
{
	const uint64_t *addrs = l->ks->addrs;
	size_t n = l->ks->cnt, run = 1, i, j, k;
	uint32_t *rest;

	for (i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	if (n < 2)
		return 0;
	while (run < n && addrs[run - 1] <= addrs[run])
		run++;
	for (i = 0; i < run; i = j) {
		for (j = i + 1; j < run && addrs[j] == addrs[i]; j++)
			;
		if (j - i > 1)
			sort_range(l, perm + i, j - i);
	}
	if (run == n)
		return 0;

	rest = malloc((n - run) * sizeof(*rest));
	if (!rest)
		return -ENOMEM;
	memcpy(rest, perm + run, (n - run) * sizeof(*rest));
	sort_range(l, rest, n - run);
	/* i: left elements not placed yet, j: rest elements not placed yet, k: free slots. */
	for (i = run, j = n - run, k = n; j > 0; k--) {
		if (i > 0 && cmp_lines(l, perm[i - 1], rest[j - 1]) > 0)
			perm[k - 1] = perm[--i];
		else
			perm[k - 1] = rest[--j];
	}
	free(rest);
	return 0;
}

/*
 * Moves line perm[i] to place i in every per-line array, following each cycle of the
 * permutation once (perm is consumed: each place done is marked perm[i] = i).
 */
static void apply_perm(struct loader *l, uint32_t *perm)
{
	struct ksyms *ks = l->ks;

	for (size_t i = 0; i < ks->cnt; i++) {
		uint64_t addr = ks->addrs[i];
		uint32_t info = ks->info[i], off = ks->name_off[i];
		struct sym_meta meta = l->meta[i];
		size_t j = i;

		if (perm[i] == i)
			continue;
		for (;;) {
			size_t from = perm[j];

			perm[j] = (uint32_t)j;
			if (from == i)
				break;
			ks->addrs[j] = ks->addrs[from];
			ks->info[j] = ks->info[from];
			ks->name_off[j] = ks->name_off[from];
			l->meta[j] = l->meta[from];
			j = from;
		}
		ks->addrs[j] = addr;
		ks->info[j] = info;
		ks->name_off[j] = off;
		l->meta[j] = meta;
	}
}

/* Room for one more entry in ks->wide (*cap: its capacity). */
static int grow_array_wide(struct ksyms *ks, size_t *cap)
{
	size_t n = *cap ? *cap * 2 : 16;

	if (ks->wide_cnt < *cap)
		return 0;
	if (grow_to((void **)&ks->wide, n, *cap, sizeof(*ks->wide)))
		return -ENOMEM;
	*cap = n;
	return 0;
}

/* Per object (vmlinux, each module) state of the size scan. */
struct object {
	uint64_t low;  /* the lowest address seen so far in the backward scan */
	uint64_t next; /* the lowest address seen that is above the current one */
	bool has_low, has_next;
};

/*
 * The sizes: the distance to the next higher address of the same object, hence the scan from
 * the top down. Sizes of 4 GiB or more go to wide[] (in ascending index order).
 */
static int fill_sizes(struct loader *l)
{
	struct ksyms *ks = l->ks;
	struct object *objs;
	size_t nwide = 0, i;

	ks->sizes = malloc(sizeof(*ks->sizes) * ks->cnt);
	objs = calloc(ks->nmods ? ks->nmods : 1, sizeof(*objs));
	if (!ks->sizes || !objs) {
		free(objs);
		return -ENOMEM;
	}
	for (i = ks->cnt; i-- > 0;) {
		struct object *o = &objs[INFO_MOD(ks->info[i])];
		uint64_t addr = ks->addrs[i], size;

		if (!o->has_low || addr < o->low) {
			if (o->has_low) {
				o->next = o->low;
				o->has_next = true;
			}
			o->low = addr;
			o->has_low = true;
		}
		if (ks->restricted || (l->meta[i].flags & SF_END))
			size = 0;
		else
			size = o->has_next ? o->next - addr : KSYMS_LAST_SIZE;
		if (size >= SIZE_WIDE) {
			if (grow_array_wide(ks, &nwide)) {
				free(objs);
				return -ENOMEM;
			}
			ks->wide[ks->wide_cnt++] = (struct wide_size){ .idx = (uint32_t)i, .size = size };
			size = SIZE_WIDE;
		}
		ks->sizes[i] = (uint32_t)size;
	}
	free(objs);
	/* found from the top down: ascending for the binary search */
	for (i = 0; i < ks->wide_cnt / 2; i++) {
		struct wide_size t = ks->wide[i];

		ks->wide[i] = ks->wide[ks->wide_cnt - 1 - i];
		ks->wide[ks->wide_cnt - 1 - i] = t;
	}
	return 0;
}

static uint64_t size_of(const struct ksyms *ks, size_t i)
{
	size_t lo = 0, hi = ks->wide_cnt;

	if (ks->sizes[i] != SIZE_WIDE)
		return ks->sizes[i];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->wide[mid].idx < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return ks->wide[lo].size; /* always there: fill_sizes() put it */
}

/* Appends i unless the index already ends with a better alias at the same address. */
static void index_add(const struct ksyms *ks, uint32_t *idx, size_t *cnt, size_t i)
{
	if (!*cnt || ks->addrs[idx[*cnt - 1]] != ks->addrs[i])
		idx[(*cnt)++] = (uint32_t)i;
}

static void shrink(void **p, size_t n, size_t elem)
{
	void *q = realloc(*p, (n ? n : 1) * elem);

	if (q)
		*p = q;
}

/* One entry per distinct address of the class: the first, i.e. the best ranked, alias. */
static int build_class_indexes(struct ksyms *ks)
{
	size_t i;

	ks->text_idx = malloc(sizeof(*ks->text_idx) * ks->cnt);
	ks->data_idx = malloc(sizeof(*ks->data_idx) * ks->cnt);
	if (!ks->text_idx || !ks->data_idx)
		return -ENOMEM;
	if (ks->restricted)
		return 0;
	for (i = 0; i < ks->cnt; i++) {
		char t = INFO_TYPE(ks->info[i]);

		if (is_text_type(t))
			index_add(ks, ks->text_idx, &ks->text_cnt, i);
		else if (is_data_type(t))
			index_add(ks, ks->data_idx, &ks->data_cnt, i);
	}
	/* each class has fewer entries than symbols: give the rest back */
	shrink((void **)&ks->text_idx, ks->text_cnt, sizeof(*ks->text_idx));
	shrink((void **)&ks->data_idx, ks->data_cnt, sizeof(*ks->data_idx));
	return 0;
}

static uint64_t name_hash(const char *name)
{
	return hashmap_hash_bytes(name, strlen(name), 0);
}

/* The by-name index, in address order so that the first of several same-named symbols wins. */
static int build_name_index(struct ksyms *ks)
{
	size_t cap = 16;

	while (cap < ks->cnt + ks->cnt / 2)
		cap *= 2;
	ks->names = calloc(cap, sizeof(*ks->names));
	if (!ks->names)
		return -ENOMEM;
	ks->names_mask = cap - 1;
	for (size_t i = 0; i < ks->cnt; i++) {
		const char *name = name_of(ks, i);
		size_t slot = name_hash(name) & ks->names_mask;

		for (; ks->names[slot]; slot = (slot + 1) & ks->names_mask)
			if (!strcmp(name_of(ks, ks->names[slot] - 1), name))
				break;
		if (!ks->names[slot])
			ks->names[slot] = (uint32_t)i + 1;
	}
	return 0;
}

static int load(struct loader *l, const char *path)
{
	struct ksyms *ks = l->ks;
	uint32_t *perm;
	int err;

	err = grow_to((void **)&ks->mod_off, 64, 0, sizeof(*ks->mod_off)); /* [0]: vmlinux */
	if (err)
		return err;
	l->mods_cap = 64;
	ks->nmods = 1;

	err = read_file(l, path);
	if (err)
		return err;
	if (!ks->cnt)
		return -EINVAL;
	ks->restricted = !l->any_addr;

	err = confirm_markers(l);
	if (err)
		return err;
	perm = malloc(sizeof(*perm) * ks->cnt);
	if (!perm)
		return -ENOMEM;
	err = sort_lines(l, perm);
	if (!err)
		apply_perm(l, perm);
	free(perm);
	if (err)
		return err;
	/* the lines are all in: give back what the doubling left unused */
	shrink((void **)&ks->addrs, ks->cnt, sizeof(*ks->addrs));
	shrink((void **)&ks->info, ks->cnt, sizeof(*ks->info));
	shrink((void **)&ks->name_off, ks->cnt, sizeof(*ks->name_off));
	shrink((void **)&ks->pool, ks->pool_len, 1);
	err = fill_sizes(l);
	if (err)
		return err;
	return build_class_indexes(ks);
}

struct ksyms *ksyms__load(const char *path)
{
	struct loader l = {};
	int err;

	l.ks = calloc(1, sizeof(*l.ks));
	if (!l.ks)
		return NULL;
	hashmap__init(&l.ks->made, hashmap_long_hash, hashmap_long_equal, NULL);
	err = load(&l, path ? path : KALLSYMS_PATH);
	free(l.meta);
	if (err) {
		ksyms__free(l.ks);
		errno = -err;
		return NULL;
	}
	return l.ks;
}

void ksyms__free(struct ksyms *ks)
{
	struct made_chunk *c, *next;

	if (!ks)
		return;
	for (c = ks->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	hashmap__clear(&ks->made);
	free(ks->names);
	free(ks->text_idx);
	free(ks->data_idx);
	free(ks->wide);
	free(ks->mod_off);
	free(ks->pool);
	free(ks->name_off);
	free(ks->info);
	free(ks->sizes);
	free(ks->addrs);
	free(ks);
}

size_t ksyms__count(const struct ksyms *ks)
{
	return ks ? ks->cnt : 0;
}

bool ksyms__sym(const struct ksyms *ks, size_t i, struct ksym *ret)
{
	uint32_t info;

	if (!ks || i >= ks->cnt)
		return false;
	info = ks->info[i];
	ret->addr = ks->addrs[i];
	ret->size = size_of(ks, i);
	ret->name = name_of(ks, i);
	ret->module = INFO_MOD(info) ? ks->pool + ks->mod_off[INFO_MOD(info)] : NULL;
	ret->type = INFO_TYPE(info);
	return true;
}

/* The struct ksym of symbol i, made at the first ask and kept; NULL when out of memory. */
static const struct ksym *made(const struct ksyms *cks, size_t i)
{
	struct ksyms *ks = (struct ksyms *)cks; /* the table of made symbols is a cache */
	struct made_chunk *c = ks->chunks;
	struct ksym *s;
	long v;

	if (hashmap__find(&ks->made, (long)i, &v))
		return (const struct ksym *)v;
	if (!c || c->used == MADE_CHUNK) {
		c = malloc(sizeof(*c));
		if (!c)
			return NULL;
		c->next = ks->chunks;
		c->used = 0;
		ks->chunks = c;
	}
	s = &c->syms[c->used];
	ksyms__sym(ks, i, s);
	if (hashmap__add(&ks->made, (long)i, (long)s))
		return NULL;
	c->used++;
	return s;
}

const struct ksym *ksyms__at(const struct ksyms *ks, size_t i)
{
	if (!ks || i >= ks->cnt)
		return NULL;
	return made(ks, i);
}

const struct ksym *ksyms__get(const struct ksyms *ks, const char *name)
{
	size_t slot;

	if (!ks || !name)
		return NULL;
	/* lazily: cast away const, the index is a cache; out of memory: tried again next time */
	if (!ks->names && build_name_index((struct ksyms *)ks))
		return NULL;
	for (slot = name_hash(name) & ks->names_mask; ks->names[slot];
	     slot = (slot + 1) & ks->names_mask)
		if (!strcmp(name_of(ks, ks->names[slot] - 1), name))
			return made(ks, ks->names[slot] - 1);
	return NULL;
}

static const struct ksym *map_class(const struct ksyms *ks, const uint32_t *idx, size_t cnt,
				    uint64_t addr, uint64_t *ret_offset)
{
	size_t lo = 0, hi = cnt, i;

	/* The last entry at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->addrs[idx[mid]] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	i = idx[lo - 1];
	if (addr - ks->addrs[i] >= size_of(ks, i))
		return NULL;
	if (ret_offset)
		*ret_offset = addr - ks->addrs[i];
	return made(ks, i);
}

const struct ksym *ksyms__map_addr(const struct ksyms *ks, uint64_t addr, uint64_t *ret_offset)
{
	if (!ks)
		return NULL;
	return map_class(ks, ks->text_idx, ks->text_cnt, addr, ret_offset);
}

const struct ksym *ksyms__map_data(const struct ksyms *ks, uint64_t addr, uint64_t *ret_offset)
{
	if (!ks)
		return NULL;
	return map_class(ks, ks->data_idx, ks->data_cnt, addr, ret_offset);
}

bool ksyms__restricted(const struct ksyms *ks)
{
	return ks && ks->restricted;
}

int ksyms__file_shows_addresses(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long addr;
	char line[512], type;
	int ret = -ENODATA;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c", &addr, &type) == 2 && type && strchr("tTwW", type)) {
			ret = addr != 0;
			break;
		}
		/* the rest of an overlong line is not a line of its own */
		while (!strchr(line, '\n') && fgets(line, sizeof(line), f))
			;
	}
	if (ret == -ENODATA && ferror(f))
		ret = -EIO;
	fclose(f);
	return ret;
}

size_t ksyms__skipped(const struct ksyms *ks)
{
	return ks ? ks->skipped : 0;
}

int ksyms__range(const struct ksyms *ks, const char *start_sym, const char *end_sym,
		 uint64_t *ret_start, uint64_t *ret_end)
{
	const struct ksym *s, *e;

	s = ksyms__get(ks, start_sym);
	e = ksyms__get(ks, end_sym);
	if (!s || !e)
		return -ENOENT;
	if (ks->restricted)
		return -EPERM;
	if (e->addr < s->addr)
		return -EINVAL;
	if (ret_start)
		*ret_start = s->addr;
	if (ret_end)
		*ret_end = e->addr;
	return 0;
}
