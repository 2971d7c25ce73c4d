/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof writer: a hand-written protobuf encoder for profile.proto, gzip'd with zlib.
 *
 * Field numbers follow the public spec, github.com/google/pprof proto/profile.proto
 * (package perftools.profiles):
 *   Profile:   1 sample_type, 2 sample, 3 mapping, 4 location, 5 function, 6 string_table,
 *              9 time_nanos, 10 duration_nanos, 11 period_type, 12 period, 13 comment
 *   ValueType: 1 type, 2 unit
 *   Sample:    1 location_id (packed), 2 value (packed), 3 label
 *   Label:     1 key, 2 str, 3 num, 4 num_unit
 *   Mapping:   1 id, 2 memory_start, 3 memory_limit, 4 file_offset, 5 filename, 6 build_id,
 *              7 has_functions, 8 has_filenames, 9 has_line_numbers, 10 has_inline_frames
 *   Location:  1 id, 2 mapping_id, 3 address, 4 line
 *   Line:      1 function_id, 2 line
 *   Function:  1 id, 2 name, 3 system_name, 4 filename, 5 start_line
 * All string fields are int64 indexes into string_table, whose entry 0 must be "".
 *
 * Samples only reference ids and string indexes that never change once assigned, so each
 * sample is encoded as soon as it is added; the tables (strings, mappings, functions and
 * locations) are emitted at encode time. Dedup uses the hash table of hashmap.h, so memory
 * and time stay linear in the input. A frame without an address makes one Function and one
 * Location, in step, so a profile of names only numbers them alike.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/hashmap.h"
#include "format/pprof.h"

enum {
	WT_VARINT = 0,
	WT_LEN = 2,
};

enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,

	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,

	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

/*
 * Synthetic addresses: mapping i owns [(i + 1) << 40, (i + 2) << 40) and hands out one
 * ADDR_STEP slot per function, so mappings never overlap and addresses stay below 2^63 (some
 * readers store them signed).
 */
#define ADDR_SHIFT	 40
#define ADDR_STEP	 0x10
#define MAX_MAPPINGS	 ((1u << 22) - 1)
#define MAX_TABLE	 (UINT32_MAX - 1)
#define DEFAULT_OBJECT	 "[kernel]"
/* the kernel's mapping when its frames have their addresses, named as perf names it */
#define KERNEL_MAPPING	 "[kernel.kallsyms]"
#define MAX_INLINE	 64 /* Lines of one Location; deeper chains are cut into several */
#define GZIP_WINDOW_BITS (15 + 16) /* 32 KiB window, gzip header instead of zlib's */

struct pbuf {
	uint8_t *data;
	size_t len, cap;
};

/* string_table: the strings in index order, and string -> index */
struct strtab {
	char **v;
	size_t n, cap;
	struct hashmap idx;
};

struct mapping {
	uint32_t filename, build_id;
	bool real;	      /* real addresses: [0, 2^64) at file offset 0 */
	bool named;	      /* real: some Location is a frame a symbol named */
	bool unresolved;      /* real: some Location is a frame no symbol named */
	uint64_t start, next; /* synthetic: next free address */
};

struct function {
	uint32_t name, system_name, filename;
	uint32_t mapping; /* an index into pprof.maps: one Function per name and mapping */
};

/* A Line of a Location: a function id and a source line (0: none). */
struct line {
	uint32_t func, line;
};

struct location {
	uint32_t mapping;
	uint64_t addr;	      /* the frame's own address (0: none), part of the key */
	uint64_t synthetic;   /* addr 0: the address written, unique in the mapping */
	size_t first, nlines; /* its Lines in pprof.lines */
	bool unresolved;      /* a frame no symbol named: its one Line names the placeholder */
};

struct pprof {
	size_t ntypes;
	uint32_t *types; /* ntypes (type, unit) string pairs */
	int64_t duration_ns, time_ns, period;
	uint32_t period_type, period_unit;
	bool has_period_type;

	struct strtab strs;

	struct mapping *maps;
	size_t nmaps, maps_cap;
	struct hashmap map_idx;	     /* (filename << 32 | build_id) -> synthetic mapping index */
	struct hashmap real_map_idx; /* the same for the mappings of real addresses */

	/* Function i has id i + 1, Location i too; both indexed by their own content */
	struct function *funcs;
	size_t nfuncs, funcs_cap;
	struct hashmap func_idx;
	struct location *locs;
	size_t nlocs, locs_cap;
	struct hashmap loc_idx;
	struct line *lines;
	size_t nlines, lines_cap;

	uint32_t *comments;
	size_t ncomments, comments_cap;

	struct pbuf samples; /* encoded Profile.sample fields, tags included */
	struct pbuf scratch, sub;
	uint64_t *ids;
	size_t ids_cap;
};

/* ---- growable storage ---- */

static int grow_array(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

static int pbuf_reserve(struct pbuf *b, size_t extra)
{
	if (extra > SIZE_MAX - b->len)
		return -ENOMEM;
	return grow_array((void **)&b->data, &b->cap, b->len + extra, 1);
}

static int pbuf_raw(struct pbuf *b, const void *data, size_t len)
{
	int err;

	if (!len)
		return 0;
	err = pbuf_reserve(b, len);
	if (err)
		return err;
	memcpy(b->data + b->len, data, len);
	b->len += len;
	return 0;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v > 0x7f) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Base-128, least significant group first; an int64 is cast, so negatives take 10 bytes. */
static int pbuf_varint(struct pbuf *b, uint64_t v)
{
	int err = pbuf_reserve(b, 10);

	if (err)
		return err;
	while (v > 0x7f) {
		b->data[b->len++] = (uint8_t)(v & 0x7f) | 0x80;
		v >>= 7;
	}
	b->data[b->len++] = (uint8_t)v;
	return 0;
}

static int pbuf_tag(struct pbuf *b, unsigned int field, unsigned int wire_type)
{
	return pbuf_varint(b, ((uint64_t)field << 3) | wire_type);
}

static int put_uint(struct pbuf *b, unsigned int field, uint64_t v)
{
	return pbuf_tag(b, field, WT_VARINT) ?: pbuf_varint(b, v);
}

/* proto3 leaves fields at their default (0) off the wire. */
static int put_uint_opt(struct pbuf *b, unsigned int field, uint64_t v)
{
	return v ? put_uint(b, field, v) : 0;
}

static int put_bytes(struct pbuf *b, unsigned int field, const void *data, size_t len)
{
	return pbuf_tag(b, field, WT_LEN) ?: pbuf_varint(b, len) ?: pbuf_raw(b, data, len);
}

static int put_msg(struct pbuf *b, unsigned int field, const struct pbuf *msg)
{
	return put_bytes(b, field, msg->data, msg->len);
}

static int put_packed(struct pbuf *b, unsigned int field, const uint64_t *v, size_t n)
{
	size_t i, len = 0;
	int err;

	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		len += varint_len(v[i]);
	err = pbuf_tag(b, field, WT_LEN) ?: pbuf_varint(b, len) ?: pbuf_reserve(b, len);
	for (i = 0; !err && i < n; i++)
		err = pbuf_varint(b, v[i]);
	return err;
}

/* ---- string table ---- */

static int strtab_intern(struct strtab *t, const char *s, uint32_t *ret_idx)
{
	long idx;
	char *d;
	int err;

	if (hashmap__find(&t->idx, (long)s, &idx)) {
		*ret_idx = (uint32_t)idx;
		return 0;
	}
	if (t->n >= MAX_TABLE)
		return -E2BIG;
	err = grow_array((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v));
	if (err)
		return err;
	d = strdup(s);
	if (!d)
		return -ENOMEM;
	err = hashmap__add(&t->idx, (long)d, (long)t->n);
	if (err) {
		free(d);
		return err;
	}
	t->v[t->n] = d;
	*ret_idx = (uint32_t)t->n++;
	return 0;
}

static void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	hashmap__clear(&t->idx);
}

/*
 * The index of key's entry in the array *arr of n entries (elem bytes each), indexed by m:
 * true when found, else false with room made for entry n, now indexed under key (*err: 0,
 * or -E2BIG past max entries, or -ENOMEM). The caller fills the new entry and counts it.
 */
static bool index_find(struct hashmap *m, uint64_t key, void **arr, size_t *cap, size_t n,
		       size_t elem, size_t max, size_t *ret_idx, int *err)
{
	long v;

	*ret_idx = n;
	if (hashmap__find(m, (long)key, &v)) {
		*ret_idx = (size_t)v;
		return true;
	}
	*err = n >= max ? -E2BIG : grow_array(arr, cap, n + 1, elem);
	*err = *err ?: hashmap__add(m, (long)key, (long)n);
	return false;
}

/* ---- profile building ---- */

/*
 * Functions and Locations are indexed by their content, keys being their indexes: a candidate
 * is written in the free slot past the end and looked up under that index before it is kept.
 */
static uint64_t func_hash(long key, void *ctx)
{
	const struct function *f = &((struct pprof *)ctx)->funcs[key];

	return hashmap_hash_bytes(f, sizeof(*f), 0);
}

static bool func_equal(long a, long b, void *ctx)
{
	const struct pprof *p = ctx;

	return !memcmp(&p->funcs[a], &p->funcs[b], sizeof(p->funcs[a]));
}

static uint64_t loc_hash(long key, void *ctx)
{
	const struct pprof *p = ctx;
	const struct location *l = &p->locs[key];
	uint64_t h = hashmap_hash_u64(l->addr ^ ((uint64_t)l->mapping << 1));

	return hashmap_hash_bytes(p->lines + l->first, l->nlines * sizeof(*p->lines), h);
}

static bool loc_equal(long a, long b, void *ctx)
{
	const struct pprof *p = ctx;
	const struct location *x = &p->locs[a], *y = &p->locs[b];

	return x->mapping == y->mapping && x->addr == y->addr && x->nlines == y->nlines &&
	       !memcmp(p->lines + x->first, p->lines + y->first, x->nlines * sizeof(*p->lines));
}

struct pprof *pprof__new(const char *const *sample_types, const char *const *units, size_t ntypes,
			 int64_t duration_ns, int64_t time_unix_ns, const char *period_type,
			 const char *period_unit, int64_t period)
{
	struct pprof *p;
	uint32_t empty;
	size_t i;
	int err;

	if (!sample_types || !units || !ntypes || ntypes > SIZE_MAX / (2 * sizeof(uint32_t)) ||
	    !period_type != !period_unit) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < ntypes; i++) {
		if (!sample_types[i] || !units[i]) {
			errno = EINVAL;
			return NULL;
		}
	}

	p = calloc(1, sizeof(*p));
	if (!p)
		goto err_nomem;
	p->ntypes = ntypes;
	p->duration_ns = duration_ns;
	p->time_ns = time_unix_ns;
	p->period = period;
	hashmap__init(&p->strs.idx, hashmap_str_hash, hashmap_str_equal, NULL);
	hashmap__init(&p->map_idx, hashmap_long_hash, hashmap_long_equal, NULL);
	hashmap__init(&p->real_map_idx, hashmap_long_hash, hashmap_long_equal, NULL);
	hashmap__init(&p->func_idx, func_hash, func_equal, p);
	hashmap__init(&p->loc_idx, loc_hash, loc_equal, p);
	p->types = calloc(2 * ntypes, sizeof(*p->types));
	if (!p->types)
		goto err_nomem;

	err = strtab_intern(&p->strs, "", &empty); /* string_table[0] must be "" */
	for (i = 0; !err && i < ntypes; i++) {
		err = strtab_intern(&p->strs, sample_types[i], &p->types[2 * i]) ?:
		      strtab_intern(&p->strs, units[i], &p->types[2 * i + 1]);
	}
	if (!err && period_type) {
		err = strtab_intern(&p->strs, period_type, &p->period_type) ?:
		      strtab_intern(&p->strs, period_unit, &p->period_unit);
		p->has_period_type = true;
	}
	if (err)
		goto err_nomem;
	return p;

err_nomem:
	pprof__free(p);
	errno = ENOMEM;
	return NULL;
}

void pprof__free(struct pprof *p)
{
	if (!p)
		return;
	free(p->types);
	strtab_free(&p->strs);
	free(p->maps);
	hashmap__clear(&p->map_idx);
	hashmap__clear(&p->real_map_idx);
	free(p->funcs);
	hashmap__clear(&p->func_idx);
	free(p->locs);
	hashmap__clear(&p->loc_idx);
	free(p->lines);
	free(p->comments);
	free(p->samples.data);
	free(p->scratch.data);
	free(p->sub.data);
	free(p->ids);
	free(p);
}

/* A frame with its address is at that address (a user frame unresolved or not). */
static bool has_addr(const struct pprof_frame *fr)
{
	return fr->addr != 0;
}

static int find_mapping(struct pprof *p, const struct pprof_frame *fr, uint32_t *ret_idx)
{
	const char *object = fr->object ? fr->object : DEFAULT_OBJECT;
	bool real = has_addr(fr);
	uint32_t filename, build_id = 0;
	struct mapping *m;
	size_t idx;
	int err;

	if (real && !strcmp(object, DEFAULT_OBJECT))
		object = KERNEL_MAPPING;
	err = strtab_intern(&p->strs, object, &filename);
	if (!err && fr->build_id)
		err = strtab_intern(&p->strs, fr->build_id, &build_id);
	if (err)
		return err;

	if (index_find(real ? &p->real_map_idx : &p->map_idx, (uint64_t)filename << 32 | build_id,
		       (void **)&p->maps, &p->maps_cap, p->nmaps, sizeof(*p->maps), MAX_MAPPINGS,
		       &idx, &err) || err) {
		*ret_idx = (uint32_t)idx;
		return err;
	}
	m = &p->maps[p->nmaps];
	*m = (struct mapping){ .filename = filename, .build_id = build_id, .real = real };
	if (!real) {
		m->start = (uint64_t)(p->nmaps + 1) << ADDR_SHIFT;
		m->next = m->start;
	}
	*ret_idx = (uint32_t)p->nmaps++;
	return 0;
}

/* The id of the Function of a frame in mapping, added on first sight. */
static int find_function(struct pprof *p, const struct pprof_frame *fr, uint32_t mapping,
			 uint32_t *ret_id)
{
	struct function *f;
	long found;
	int err;

	if (p->nfuncs >= MAX_TABLE)
		return -E2BIG;
	err = grow_array((void **)&p->funcs, &p->funcs_cap, p->nfuncs + 1, sizeof(*p->funcs));
	if (err)
		return err;
	f = &p->funcs[p->nfuncs];
	memset(f, 0, sizeof(*f));
	f->mapping = mapping;
	err = strtab_intern(&p->strs, fr->function, &f->name) ?:
	      strtab_intern(&p->strs, fr->system_name ? fr->system_name : fr->function,
			    &f->system_name) ?:
	      (fr->file ? strtab_intern(&p->strs, fr->file, &f->filename) : 0);
	if (err)
		return err;
	if (hashmap__find(&p->func_idx, (long)p->nfuncs, &found)) {
		*ret_id = (uint32_t)found + 1;
		return 0;
	}
	err = hashmap__add(&p->func_idx, (long)p->nfuncs, (long)p->nfuncs);
	if (err)
		return err;
	*ret_id = (uint32_t)++p->nfuncs;
	return 0;
}

/*
 * The Location id of frames[0..n) in mapping (find_mapping() of frames[0]): the frames inlined
 * one into the next and the one they were inlined into, all at frames[0].addr (or one frame
 * without an address), added on first sight.
 */
static int find_location(struct pprof *p, const struct pprof_frame *frames, size_t n,
			 uint32_t mapping, uint64_t *ret_id)
{
	bool unresolved = n == 1 && has_addr(&frames[0]) && frames[0].unresolved;
	size_t lines = n;
	struct location *l;
	long found;
	int err;

	if (p->nlocs >= MAX_TABLE)
		return -E2BIG;
	err = grow_array((void **)&p->locs, &p->locs_cap, p->nlocs + 1, sizeof(*p->locs)) ?:
	      grow_array((void **)&p->lines, &p->lines_cap, p->nlines + lines, sizeof(*p->lines));
	for (size_t i = 0; !err && i < lines; i++) {
		p->lines[p->nlines + i].line = frames[i].line;
		err = find_function(p, &frames[i], mapping, &p->lines[p->nlines + i].func);
	}
	if (err)
		return err;
	l = &p->locs[p->nlocs];
	*l = (struct location){ .mapping = mapping, .addr = frames[0].addr, .first = p->nlines,
				.nlines = lines, .unresolved = unresolved };
	if (hashmap__find(&p->loc_idx, (long)p->nlocs, &found)) {
		*ret_id = (uint64_t)found + 1;
		return 0;
	}
	err = hashmap__add(&p->loc_idx, (long)p->nlocs, (long)p->nlocs);
	if (err)
		return err;
	if (!p->maps[mapping].real) {
		/* < 2^32 locations of ADDR_STEP each never leave the mapping's 2^40 range */
		l->synthetic = p->maps[mapping].next;
		p->maps[mapping].next += ADDR_STEP;
	}
	p->maps[mapping].unresolved |= unresolved;
	p->maps[mapping].named |= !unresolved;
	p->nlines += lines;
	*ret_id = ++p->nlocs;
	return 0;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* How many frames from frames[0] make one Location: an inline chain at one address. */
static size_t location_frames(const struct pprof_frame *frames, size_t n)
{
	size_t k = 1;

	if (!has_addr(&frames[0]) || frames[0].unresolved)
		return 1;
	while (k < n && k < MAX_INLINE && frames[k - 1].inlined && frames[k].addr == frames[0].addr &&
	       same_str(frames[k].object, frames[0].object) &&
	       same_str(frames[k].build_id, frames[0].build_id) && !frames[k].unresolved)
		k++;
	return k;
}

static bool sample_args_valid(const struct pprof *p, const struct pprof_frame *frames,
			      size_t nframes, const int64_t *values,
			      const struct pprof_label *labels, size_t nlabels)
{
	size_t i;

	if (!p || !values || (nframes && !frames) || (nlabels && !labels))
		return false;
	for (i = 0; i < nframes; i++) {
		if (!frames[i].function)
			return false;
	}
	for (i = 0; i < nlabels; i++) {
		if (!labels[i].key || (!labels[i].is_num && !labels[i].str))
			return false;
	}
	return true;
}

static int encode_label(struct pprof *p, const struct pprof_label *l)
{
	uint32_t key, str;
	int err;

	err = strtab_intern(&p->strs, l->key, &key);
	if (err)
		return err;
	p->sub.len = 0;
	err = put_uint(&p->sub, LABEL_KEY, key);
	if (err)
		return err;
	if (l->is_num) {
		/* written even when 0: "at most one of str/num", and it documents intent */
		err = put_uint(&p->sub, LABEL_NUM, (uint64_t)l->num);
	} else {
		err = strtab_intern(&p->strs, l->str, &str) ?:
		      put_uint_opt(&p->sub, LABEL_STR, str);
	}
	return err ?: put_msg(&p->scratch, SAMPLE_LABEL, &p->sub);
}

int pprof__add_sample(struct pprof *p, const struct pprof_frame *frames, size_t nframes,
		      const int64_t *values, const struct pprof_label *labels, size_t nlabels)
{
	uint32_t mapping = 0;
	size_t i, k, nids = 0;
	int err;

	if (!sample_args_valid(p, frames, nframes, values, labels, nlabels))
		return -EINVAL;
	/* p->ids holds the location ids, then the values */
	err = grow_array((void **)&p->ids, &p->ids_cap, nframes > p->ntypes ? nframes : p->ntypes,
			 sizeof(*p->ids));
	for (i = 0; !err && i < nframes; i += k) {
		const struct pprof_frame *fr = &frames[i];

		k = location_frames(fr, nframes - i);
		/* runs of frames share their object: its mapping is looked up once a run */
		if (!i || fr->object != fr[-1].object || fr->build_id != fr[-1].build_id ||
		    has_addr(fr) != has_addr(&fr[-1]))
			err = find_mapping(p, fr, &mapping);
		err = err ?: find_location(p, fr, k, mapping, &p->ids[nids++]);
	}
	if (err)
		return err;

	p->scratch.len = 0;
	err = put_packed(&p->scratch, SAMPLE_LOCATION_ID, p->ids, nids);
	for (i = 0; i < p->ntypes; i++)
		p->ids[i] = (uint64_t)values[i];
	err = err ?: put_packed(&p->scratch, SAMPLE_VALUE, p->ids, p->ntypes);
	for (i = 0; !err && i < nlabels; i++)
		err = encode_label(p, &labels[i]);
	/* appended last and in one piece, so a failure never leaves half a sample */
	return err ?: put_msg(&p->samples, PROFILE_SAMPLE, &p->scratch);
}

int pprof__add_comment(struct pprof *p, const char *comment)
{
	uint32_t idx;
	int err;

	if (!p || !comment)
		return -EINVAL;
	err = grow_array((void **)&p->comments, &p->comments_cap, p->ncomments + 1,
			 sizeof(*p->comments)) ?:
	      strtab_intern(&p->strs, comment, &idx);
	if (err)
		return err;
	p->comments[p->ncomments++] = idx;
	return 0;
}

/* ---- encoding ---- */

static int encode_value_type(struct pprof *p, struct pbuf *b, unsigned int field, uint32_t type,
			     uint32_t unit)
{
	p->sub.len = 0;
	return put_uint_opt(&p->sub, VALUE_TYPE_TYPE, type) ?:
	       put_uint_opt(&p->sub, VALUE_TYPE_UNIT, unit) ?: put_msg(b, field, &p->sub);
}

/*
 * has_functions is one flag per Mapping, and a client that finds it false symbolizes every
 * Location of the mapping again, with its own symbolizer, replacing the names we gave (go
 * tool pprof's DWARF reader gives a gcc clone, "f [clone .isra.0]", no name at all). So only
 * an object no symbol named any frame of (a stripped binary) is left to the tools; in one
 * that has named frames, a frame no symbol covered (a PLT stub, _start's padding) keeps its
 * placeholder name ("condwait+0x12ef") as its Line.
 */
static bool mapping_to_symbolize(const struct mapping *m)
{
	return m->unresolved && !m->named;
}

static int encode_mapping(struct pprof *p, struct pbuf *b, size_t i)
{
	const struct mapping *m = &p->maps[i];
	uint64_t limit = m->next > m->start ? m->next : m->start + ADDR_STEP;

	if (m->real) /* the whole address space from 0, at file offset 0 */
		limit = UINT64_MAX;
	p->sub.len = 0;
	return put_uint(&p->sub, MAPPING_ID, i + 1) ?:
	       put_uint(&p->sub, MAPPING_MEMORY_START, m->start) ?:
	       put_uint(&p->sub, MAPPING_MEMORY_LIMIT, limit) ?:
	       (m->real ? put_uint(&p->sub, MAPPING_FILE_OFFSET, 0) : 0) ?:
	       put_uint_opt(&p->sub, MAPPING_FILENAME, m->filename) ?:
	       put_uint_opt(&p->sub, MAPPING_BUILD_ID, m->build_id) ?:
	       put_uint_opt(&p->sub, MAPPING_HAS_FUNCTIONS, !mapping_to_symbolize(m)) ?:
	       put_msg(b, PROFILE_MAPPING, &p->sub);
}

static int encode_location(struct pprof *p, struct pbuf *b, size_t i)
{
	const struct location *l = &p->locs[i];
	/* no Line tells the tools to symbolize it (mapping_to_symbolize()) */
	size_t nlines = l->unresolved && mapping_to_symbolize(&p->maps[l->mapping]) ? 0 :
			l->nlines;
	int err;

	p->scratch.len = 0;
	err = put_uint(&p->scratch, LOCATION_ID, i + 1) ?:
	      put_uint(&p->scratch, LOCATION_MAPPING_ID, (uint64_t)l->mapping + 1) ?:
	      put_uint(&p->scratch, LOCATION_ADDRESS, l->addr ? l->addr : l->synthetic);
	for (size_t j = 0; !err && j < nlines; j++) {
		const struct line *ln = &p->lines[l->first + j];

		p->sub.len = 0;
		err = put_uint(&p->sub, LINE_FUNCTION_ID, ln->func) ?:
		      put_uint_opt(&p->sub, LINE_LINE, ln->line) ?:
		      put_msg(&p->scratch, LOCATION_LINE, &p->sub);
	}
	return err ?: put_msg(b, PROFILE_LOCATION, &p->scratch);
}

static int encode_function(struct pprof *p, struct pbuf *b, size_t i)
{
	const struct function *f = &p->funcs[i];

	p->sub.len = 0;
	return put_uint(&p->sub, FUNCTION_ID, i + 1) ?:
	       put_uint_opt(&p->sub, FUNCTION_NAME, f->name) ?:
	       put_uint_opt(&p->sub, FUNCTION_SYSTEM_NAME, f->system_name) ?:
	       put_uint_opt(&p->sub, FUNCTION_FILENAME, f->filename) ?:
	       put_msg(b, PROFILE_FUNCTION, &p->sub);
}

static int encode_profile(struct pprof *p, struct pbuf *b)
{
	const struct strtab *t = &p->strs;
	size_t i;
	int err = 0;

	for (i = 0; !err && i < p->ntypes; i++)
		err = encode_value_type(p, b, PROFILE_SAMPLE_TYPE, p->types[2 * i],
					p->types[2 * i + 1]);
	err = err ?: pbuf_raw(b, p->samples.data, p->samples.len);
	for (i = 0; !err && i < p->nmaps; i++)
		err = encode_mapping(p, b, i);
	for (i = 0; !err && i < p->nlocs; i++)
		err = encode_location(p, b, i);
	for (i = 0; !err && i < p->nfuncs; i++)
		err = encode_function(p, b, i);
	for (i = 0; !err && i < t->n; i++)
		err = put_bytes(b, PROFILE_STRING_TABLE, t->v[i], strlen(t->v[i]));
	err = err ?: put_uint_opt(b, PROFILE_TIME_NANOS, (uint64_t)p->time_ns);
	err = err ?: put_uint_opt(b, PROFILE_DURATION_NANOS, (uint64_t)p->duration_ns);
	if (!err && p->has_period_type)
		err = encode_value_type(p, b, PROFILE_PERIOD_TYPE, p->period_type,
					p->period_unit);
	err = err ?: put_uint_opt(b, PROFILE_PERIOD, (uint64_t)p->period);
	if (!err && p->ncomments) {
		err = grow_array((void **)&p->ids, &p->ids_cap, p->ncomments, sizeof(*p->ids));
		for (i = 0; !err && i < p->ncomments; i++)
			p->ids[i] = p->comments[i];
		err = err ?: put_packed(b, PROFILE_COMMENT, p->ids, p->ncomments);
	}
	return err;
}

int pprof__encode(struct pprof *p, uint8_t **ret_buf, size_t *ret_len)
{
	struct pbuf b = { 0 };
	int err;

	if (!p || !ret_buf || !ret_len)
		return -EINVAL;
	err = encode_profile(p, &b);
	if (err) {
		free(b.data);
		return err;
	}
	*ret_buf = b.data;
	*ret_len = b.len;
	return 0;
}

static int write_all(FILE *f, const void *data, size_t len)
{
	errno = 0;
	if (fwrite(data, 1, len, f) != len)
		return errno ? -errno : -EIO;
	return 0;
}

static int gzip_to(const uint8_t *buf, size_t len, FILE *f)
{
	uint8_t out[16384];
	z_stream zs;
	size_t chunk, have;
	int flush, ret, err = 0;

	memset(&zs, 0, sizeof(zs));
	ret = deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WINDOW_BITS, 8,
			   Z_DEFAULT_STRATEGY);
	if (ret != Z_OK)
		return ret == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	do {
		/* avail_in is a uInt: feed huge profiles in pieces */
		chunk = len > (1u << 30) ? (1u << 30) : len;
		zs.next_in = (Bytef *)buf;
		zs.avail_in = (uInt)chunk;
		buf += chunk;
		len -= chunk;
		flush = len ? Z_NO_FLUSH : Z_FINISH;
		do {
			zs.next_out = out;
			zs.avail_out = sizeof(out);
			ret = deflate(&zs, flush);
			if (ret == Z_STREAM_ERROR) {
				err = -EINVAL;
				goto out;
			}
			have = sizeof(out) - zs.avail_out;
			err = write_all(f, out, have);
			if (err)
				goto out;
		} while (zs.avail_out == 0);
	} while (flush != Z_FINISH);
	if (ret != Z_STREAM_END)
		err = -EIO;
out:
	deflateEnd(&zs);
	return err;
}

int pprof__write(struct pprof *p, FILE *f)
{
	uint8_t *buf;
	size_t len;
	int err;

	if (!p || !f)
		return -EINVAL;
	err = pprof__encode(p, &buf, &len);
	if (err)
		return err;
	err = gzip_to(buf, len, f);
	free(buf);
	if (err)
		return err;
	errno = 0;
	if (fflush(f))
		return errno ? -errno : -EIO;
	return 0;
}
