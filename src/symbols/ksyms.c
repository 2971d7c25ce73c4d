/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel symbols from /proc/kallsyms: the names in one arena (a chain of big blocks that never
 * move), the symbols in one array sorted by address, one index per class (text, data) holding
 * the best alias of each distinct address, and a hash table (hashmap.h) by name.
 *
 * Loading appends each parsed line straight to the final symbol array (with its line number
 * parked in .size, and the alias rank and marker flags in a side array indexed by it), sorts
 * that array once, then turns the line numbers into sizes. Few passes and little memory keep it
 * fast: the page faults of fresh memory are a large part of the cost.
 */
#include "ksyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "hashmap.h"
#include "util.h"

#define KALLSYMS_PATH "/proc/kallsyms"
/* seq_file hands out as much as the read asks for: big reads mean fewer syscalls. */
#define READ_BUF_SIZE (64 * 1024)
/* Arena blocks; a name (at most KSYMS_NAME_MAX + 1 bytes) always fits in a fresh one. */
#define ARENA_BLOCK_SIZE (1024 * 1024)
/* The longest start-marker name derived from an end marker ("__stop_X" -> "__start_X"). */
#define MARKER_NAME_MAX (KSYMS_NAME_MAX + 8)

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

/* What loading needs beyond struct ksym, indexed by line number (in file order). */
struct sym_meta {
	uint8_t rank;
	uint8_t flags;
};

struct arena_block {
	struct arena_block *next;
	size_t used;
	char data[];
};

/* Per object (vmlinux, each module) state of the size scan. */
struct object {
	const char *name; /* NULL: vmlinux */
	uint64_t low;	  /* the lowest address seen so far in the backward scan */
	uint64_t next;	  /* the lowest address seen that is above the current one */
	bool has_low, has_next;
};

struct ksyms {
	struct ksym *syms;
	size_t cnt;
	struct arena_block *arena;
	uint32_t *text_idx;
	size_t text_cnt;
	uint32_t *data_idx;
	size_t data_cnt;
	/*
	 * name -> index into syms, the lowest address of that name: built at the first lookup
	 * by name (6 MiB for 120k symbols, and a run that has the boot's fold cache looks up
	 * none). Not thread-safe then: the loader's thread is joined before anyone else asks.
	 */
	struct hashmap names;
	bool names_built;
	size_t skipped;
	bool restricted;
};

struct loader {
	struct ksyms *ks;
	size_t syms_cap;
	struct sym_meta *meta; /* [line number] */
	size_t meta_cap;
	struct object *objs;   /* [0] is vmlinux */
	size_t objs_cnt, objs_cap;
	size_t last_obj;       /* the module of the previous module line: they come in runs */
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

static int grow_array(void **ptr, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t n = *cap ? *cap : first;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*ptr, n * elem);
	if (!p)
		return -ENOMEM;
	*ptr = p;
	*cap = n;
	return 0;
}

/* Copies s[0..len) plus a NUL into the arena; the copy never moves. */
static const char *arena_add(struct ksyms *ks, const char *s, size_t len)
{
	struct arena_block *b = ks->arena;
	char *p;

	if (!b || ARENA_BLOCK_SIZE - b->used < len + 1) {
		b = malloc(sizeof(*b) + ARENA_BLOCK_SIZE);
		if (!b)
			return NULL;
		b->next = ks->arena;
		b->used = 0;
		ks->arena = b;
	}
	p = b->data + b->used;
	memcpy(p, s, len);
	p[len] = '\0';
	b->used += len + 1;
	return p;
}

static bool object_is(const struct object *o, const char *m, size_t len)
{
	return !strncmp(o->name, m, len) && !o->name[len];
}

static int intern_module(struct loader *l, const char *m, size_t len, const char **ret_name)
{
	struct object *o;
	size_t i;

	if (l->last_obj && object_is(&l->objs[l->last_obj], m, len)) {
		*ret_name = l->objs[l->last_obj].name;
		return 0;
	}
	for (i = 1; i < l->objs_cnt; i++) {
		if (object_is(&l->objs[i], m, len)) {
			l->last_obj = i;
			*ret_name = l->objs[i].name;
			return 0;
		}
	}
	if (grow_array((void **)&l->objs, &l->objs_cap, l->objs_cnt + 1, sizeof(*l->objs), 64))
		return -ENOMEM;
	o = &l->objs[l->objs_cnt];
	memset(o, 0, sizeof(*o));
	o->name = arena_add(l->ks, m, len);
	if (!o->name)
		return -ENOMEM;
	l->last_obj = l->objs_cnt++;
	*ret_name = o->name;
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
	const char *mod = NULL;
	struct ksym *s;
	size_t seq = ks->cnt;
	int err;

	if (seq >= UINT32_MAX - 1)
		return -ENOMEM;
	if (ps->mod) {
		err = intern_module(l, ps->mod, ps->mod_len, &mod);
		if (err)
			return err;
	}
	if (grow_array((void **)&ks->syms, &l->syms_cap, seq + 1, sizeof(*ks->syms), 16384) ||
	    grow_array((void **)&l->meta, &l->meta_cap, seq + 1, sizeof(*l->meta), 16384))
		return -ENOMEM;
	s = &ks->syms[seq];
	s->name = arena_add(ks, ps->name, ps->name_len);
	if (!s->name)
		return -ENOMEM;
	s->addr = ps->addr;
	s->size = seq; /* until fill_sizes() */
	s->module = mod;
	s->type = ps->type;
	l->meta[seq].rank = base_rank(ps->name, ps->name_len, ps->type);
	l->meta[seq].flags = marker_flags(ps->name, ps->name_len);
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

static int cmp_sym_names(const void *a, const void *b)
{
	const struct ksym *x = *(const struct ksym *const *)a;
	const struct ksym *y = *(const struct ksym *const *)b;

	return strcmp(x->name, y->name);
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
 * "_end" has no start and is always one. Runs before sorting: .size is still the line number.
 */
static int confirm_markers(struct loader *l)
{
	struct ksyms *ks = l->ks;
	struct ksym **starts;
	char want[MARKER_NAME_MAX + 1];
	size_t n = 0, i;

	for (i = 0; i < ks->cnt; i++)
		if (l->meta[i].flags & SF_START_CAND)
			n++;
	starts = malloc(sizeof(*starts) * (n ? n : 1));
	if (!starts)
		return -ENOMEM;
	for (i = 0, n = 0; i < ks->cnt; i++)
		if (l->meta[i].flags & SF_START_CAND)
			starts[n++] = &ks->syms[i];
	qsort(starts, n, sizeof(*starts), cmp_sym_names);

	for (i = 0; i < ks->cnt; i++) {
		struct sym_meta *m = &l->meta[i];
		const char *name = ks->syms[i].name;
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

			if (strcmp(starts[mid]->name, want) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == n || strcmp(starts[lo]->name, want))
			continue;
		m->flags |= SF_END;
		/* Mark every start of that name (the same marker may be listed twice). */
		for (; lo < n && !strcmp(starts[lo]->name, want); lo++)
			l->meta[starts[lo]->size].flags |= SF_START;
	}
	free(starts);

	for (i = 0; i < ks->cnt; i++) {
		struct sym_meta *m = &l->meta[i];

		if (m->flags & SF_END)
			m->rank |= RANK_END;
		if ((m->flags & SF_START) || !strcmp(ks->syms[i].name, "_text"))
			m->rank |= RANK_MARKER;
	}
	return 0;
}

/* Address, then alias rank, then name, then line number (.size while loading). */
static int cmp_syms(const void *a, const void *b, void *meta_arg)
{
	const struct sym_meta *meta = meta_arg;
	const struct ksym *x = a, *y = b;
	uint8_t rx, ry;
	int c;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	rx = meta[x->size].rank;
	ry = meta[y->size].rank;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->size < y->size ? -1 : x->size > y->size;
}

static void sort_range(struct ksym *a, size_t n, struct sym_meta *meta)
{
	size_t i, j;

	if (n > 16) {
		qsort_r(a, n, sizeof(*a), cmp_syms, meta);
		return;
	}
	for (i = 1; i < n; i++) {
		struct ksym x = a[i];

		for (j = i; j > 0 && cmp_syms(&a[j - 1], &x, meta) > 0; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

/*
 * vmlinux comes out of kallsyms already sorted by address (only its aliases need ordering);
 * module symbols follow in symtab order. So: order the aliases of the sorted prefix, sort the
 * rest, and merge the rest in from the back.
 */
static int sort_syms(struct ksym *syms, size_t n, struct sym_meta *meta)
{
	struct ksym *rest;
	size_t run = 1, i, j, k;

	if (n < 2)
		return 0;
	while (run < n && syms[run - 1].addr <= syms[run].addr)
		run++;
	for (i = 0; i < run; i = j) {
		for (j = i + 1; j < run && syms[j].addr == syms[i].addr; j++)
			;
		if (j - i > 1)
			sort_range(syms + i, j - i, meta);
	}
	if (run == n)
		return 0;

	rest = malloc((n - run) * sizeof(*rest));
	if (!rest)
		return -ENOMEM;
	memcpy(rest, syms + run, (n - run) * sizeof(*rest));
	sort_range(rest, n - run, meta);
	/* i: left elements not placed yet, j: rest elements not placed yet, k: free slots. */
	for (i = run, j = n - run, k = n; j > 0; k--) {
		if (i > 0 && cmp_syms(&syms[i - 1], &rest[j - 1], meta) > 0)
			syms[k - 1] = syms[--i];
		else
			syms[k - 1] = rest[--j];
	}
	free(rest);
	return 0;
}

static int cmp_objects(const void *a, const void *b)
{
	const struct object *x = a, *y = b;

	uintptr_t px = (uintptr_t)x->name, py = (uintptr_t)y->name;

	return px < py ? -1 : px > py;
}

/*
 * Turns the line numbers parked in .size into sizes: the distance to the next higher address
 * of the same object, hence the scan from the top down. Objects are found by their interned
 * name pointer, in the object table sorted by that pointer (vmlinux, NULL, first).
 */
static void fill_sizes(struct loader *l)
{
	struct ksyms *ks = l->ks;
	size_t i;

	qsort(l->objs, l->objs_cnt, sizeof(*l->objs), cmp_objects);
	for (i = ks->cnt; i-- > 0;) {
		struct ksym *s = &ks->syms[i];
		const struct sym_meta *m = &l->meta[s->size];
		struct object key = { .name = s->module }, *o = &l->objs[0];

		if (s->module)
			o = bsearch(&key, l->objs + 1, l->objs_cnt - 1, sizeof(*o), cmp_objects);
		if (!o->has_low || s->addr < o->low) {
			if (o->has_low) {
				o->next = o->low;
				o->has_next = true;
			}
			o->low = s->addr;
			o->has_low = true;
		}
		if (ks->restricted || (m->flags & SF_END))
			s->size = 0;
		else
			s->size = o->has_next ? o->next - s->addr : KSYMS_LAST_SIZE;
	}
}

/* Appends syms[i] unless the index already ends with a better alias at the same address. */
static void index_add(const struct ksyms *ks, uint32_t *idx, size_t *cnt, size_t i)
{
	if (!*cnt || ks->syms[idx[*cnt - 1]].addr != ks->syms[i].addr)
		idx[(*cnt)++] = (uint32_t)i;
}

static void shrink_u32(uint32_t **p, size_t n)
{
	uint32_t *q = realloc(*p, (n ? n : 1) * sizeof(**p));

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
		if (is_text_type(ks->syms[i].type))
			index_add(ks, ks->text_idx, &ks->text_cnt, i);
		else if (is_data_type(ks->syms[i].type))
			index_add(ks, ks->data_idx, &ks->data_cnt, i);
	}
	/* each class has fewer entries than symbols: give the rest back */
	shrink_u32(&ks->text_idx, ks->text_cnt);
	shrink_u32(&ks->data_idx, ks->data_cnt);
	return 0;
}

static int build_name_hash(struct ksyms *ks)
{
	int err;

	ks->names_built = true;
	err = hashmap__reserve(&ks->names, ks->cnt);
	/* In address order, so the first of several same-named symbols wins. */
	for (size_t i = 0; !err && i < ks->cnt; i++) {
		err = hashmap__add(&ks->names, (long)ks->syms[i].name, (long)i);
		if (err == -EEXIST)
			err = 0;
	}
	return err;
}

static int load(struct loader *l, const char *path)
{
	struct ksyms *ks = l->ks;
	struct ksym *shrunk;
	int err;

	l->objs = calloc(64, sizeof(*l->objs)); /* [0]: vmlinux */
	if (!l->objs)
		return -ENOMEM;
	l->objs_cap = 64;
	l->objs_cnt = 1;

	err = read_file(l, path);
	if (err)
		return err;
	if (!ks->cnt)
		return -EINVAL;
	ks->restricted = !l->any_addr;

	err = confirm_markers(l);
	if (err)
		return err;
	err = sort_syms(ks->syms, ks->cnt, l->meta);
	if (err)
		return err;
	fill_sizes(l);
	shrunk = realloc(ks->syms, ks->cnt * sizeof(*ks->syms));
	if (shrunk)
		ks->syms = shrunk;
	return build_class_indexes(ks);
}

struct ksyms *ksyms__load(const char *path)
{
	struct loader l = {};
	int err;

	l.ks = calloc(1, sizeof(*l.ks));
	if (!l.ks)
		return NULL;
	hashmap__init(&l.ks->names, hashmap_str_hash, hashmap_str_equal, NULL);
	err = load(&l, path ? path : KALLSYMS_PATH);
	free(l.meta);
	free(l.objs);
	if (err) {
		ksyms__free(l.ks);
		errno = -err;
		return NULL;
	}
	return l.ks;
}

void ksyms__free(struct ksyms *ks)
{
	struct arena_block *b, *next;

	if (!ks)
		return;
	for (b = ks->arena; b; b = next) {
		next = b->next;
		free(b);
	}
	hashmap__clear(&ks->names);
	free(ks->text_idx);
	free(ks->data_idx);
	free(ks->syms);
	free(ks);
}

size_t ksyms__count(const struct ksyms *ks)
{
	return ks ? ks->cnt : 0;
}

const struct ksym *ksyms__at(const struct ksyms *ks, size_t i)
{
	if (!ks || i >= ks->cnt)
		return NULL;
	return &ks->syms[i];
}

const struct ksym *ksyms__get(const struct ksyms *ks, const char *name)
{
	long i;

	if (!ks || !name)
		return NULL;
	/* lazily: cast away const, the index is a cache */
	if (!ks->names_built && build_name_hash((struct ksyms *)ks)) {
		/* out of memory: not found this time, tried again at the next lookup */
		hashmap__clear((struct hashmap *)&ks->names);
		((struct ksyms *)ks)->names_built = false;
		return NULL;
	}
	if (!hashmap__find(&ks->names, (long)name, &i))
		return NULL;
	return &ks->syms[i];
}

static const struct ksym *map_class(const struct ksyms *ks, const uint32_t *idx, size_t cnt,
				    uint64_t addr, uint64_t *ret_offset)
{
	const struct ksym *s;
	size_t lo = 0, hi = cnt;

	/* The last entry at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[idx[mid]].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &ks->syms[idx[lo - 1]];
	if (addr - s->addr >= s->size)
		return NULL;
	if (ret_offset)
		*ret_offset = addr - s->addr;
	return s;
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
