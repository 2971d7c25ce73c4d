/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * build-id -> file -> symbols cache. Two hash tables (hashmap.h): the files already read, keyed
 * by identity so add_pid() over thousands of short-lived processes stats each file once and
 * reads it once, and the objects, keyed by build-id, each with its candidate paths and its
 * lazily loaded symbols.
 */
#include "symbols/buildid_cache.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbols/debuginfod.h"
#include "symbols/elfsyms.h"
#include "base/hashmap.h"
#include "base/util.h"
#include "symbols/procmaps.h"
#include "symbols/usyms.h"

struct bc_file { /* the identity fields come first: they are the key (FILE_KEY_SIZE) */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int result; /* what add_file returned the first time */
};

#define FILE_KEY_SIZE offsetof(struct bc_file, result)

/* A mapped file as /proc/PID/maps names it (dev, inode): the key comes first. */
struct bc_mapped {
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint64_t checked; /* when its mapping was last registered (CLOCK_MONOTONIC ns) */
};

#define MAPPED_KEY_SIZE offsetof(struct bc_mapped, checked)

/*
 * A file mapped by many processes (a compile job's or a forking server's libraries) is stat'ed
 * and registered at most this often: its identity is the mapped file's, so only a rewrite in
 * place (same inode) could change what it registers.
 */
#define BC_MAPPED_AGAIN_NS (1000 * 1000 * 1000ull)

struct bc_object {
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t id_len;
	char **paths; /* candidates, in registration order */
	size_t npaths;
	struct elf_syms *syms;
	const char *path; /* the path reported for this object */
	bool loaded;	  /* symbol loading was attempted */
	bool pinned;	  /* loaded through /proc/PID/map_files: cannot be loaded again */
	uint64_t used;	  /* the trim generation of its last lookup through its symbols */
};

/*
 * A frame's name kept as strings once buildid_cache__trim() was called (the agent's): the
 * object's symbols can then be released between intervals, and the frames seen again do not
 * load them again. The key comes first (NAME_KEY_SIZE).
 */
struct bc_name {
	const struct bc_object *o;
	uint64_t offset;
	char *name, *system_name;
	uint64_t sym_off, func_start;
	bool used; /* looked up since the last trim */
};

#define NAME_KEY_SIZE offsetof(struct bc_name, name)

struct buildid_cache {
	struct hashmap files;	/* struct bc_file * by identity -> itself */
	struct hashmap mapped;	/* struct bc_mapped * by (dev, inode) -> itself */
	struct hashmap objects; /* struct bc_object * by build-id -> itself */
	struct hashmap names;	/* struct bc_name * by (object, offset) -> itself */
	char *debug_dir;
	bool lines, debuginfod;
	bool keep_names; /* since the first buildid_cache__trim() */
	uint64_t generation; /* trims so far */
};

/*
 * What the symbols of the objects the last interval needed may keep between trims: the
 * frames new in the next interval are likely in the same objects (a compiler, an
 * interpreter), but a desktop's libraries would take tens of MB: 1M keeps libc's.
 */
#define BC_KEEP_BYTES (1u << 20)

static uint64_t object_hash(long key, void *ctx)
{
	const struct bc_object *o = (const struct bc_object *)key;

	(void)ctx;
	return hashmap_hash_bytes(o->id, o->id_len, 0);
}

static bool object_equal(long a, long b, void *ctx)
{
	const struct bc_object *x = (const struct bc_object *)a, *y = (const struct bc_object *)b;

	(void)ctx;
	return x->id_len == y->id_len && !memcmp(x->id, y->id, x->id_len);
}

static void object_free(long key, long value)
{
	struct bc_object *o = (struct bc_object *)key;
	size_t i;

	(void)value;
	for (i = 0; i < o->npaths; i++)
		free(o->paths[i]);
	free(o->paths);
	elf_syms__free(o->syms);
	free(o);
}

struct buildid_cache *buildid_cache__new(void)
{
	struct buildid_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	hashmap__init(&c->files, hashmap_mem_hash, hashmap_mem_equal, (void *)FILE_KEY_SIZE);
	hashmap__init(&c->mapped, hashmap_mem_hash, hashmap_mem_equal, (void *)MAPPED_KEY_SIZE);
	hashmap__init(&c->objects, object_hash, object_equal, NULL);
	hashmap__init(&c->names, hashmap_mem_hash, hashmap_mem_equal, (void *)NAME_KEY_SIZE);
	return c;
}

static void name_free(struct bc_name *n)
{
	free(n->name);
	free(n->system_name);
	free(n);
}

static void name_entry_free(long key, long value)
{
	(void)value;
	name_free((struct bc_name *)key);
}

void buildid_cache__free(struct buildid_cache *c)
{
	if (!c)
		return;
	hashmap__clear_with(&c->files, hashmap_free_key);
	hashmap__clear_with(&c->mapped, hashmap_free_key);
	hashmap__clear_with(&c->names, name_entry_free);
	hashmap__clear_with(&c->objects, object_free);
	free(c->debug_dir);
	free(c);
}

int buildid_cache__set_debug_dir(struct buildid_cache *c, const char *dir)
{
	char *d = NULL;

	if (dir) {
		d = strdup(dir);
		if (!d)
			return -ENOMEM;
	}
	free(c->debug_dir);
	c->debug_dir = d;
	return 0;
}

static const char *debug_dir(const struct buildid_cache *c)
{
	return c->debug_dir ? c->debug_dir : ELF_DEBUG_DIR_DEFAULT;
}

void buildid_cache__set_opts(struct buildid_cache *c, bool lines, bool debuginfod)
{
	c->lines = lines;
	c->debuginfod = debuginfod;
}

static struct elf_syms_opts elf_opts(const struct buildid_cache *c)
{
	return (struct elf_syms_opts){ .debug_dir = debug_dir(c), .dwarf = c->lines,
				       .debuginfod = c->debuginfod };
}

/* Finds the object of a build-id, creating an empty one if create is set; NULL: -ENOENT/ENOMEM */
static struct bc_object *object_get(struct buildid_cache *c, const uint8_t *id, size_t id_len,
				    bool create)
{
	struct bc_object key, *o;
	long found;
	int err;

	key.id_len = id_len;
	memcpy(key.id, id, id_len);
	if (hashmap__find(&c->objects, (long)&key, &found))
		return (struct bc_object *)found;
	if (!create) {
		errno = ENOENT;
		return NULL;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->id_len = id_len;
	memcpy(o->id, id, id_len);
	err = hashmap__add(&c->objects, (long)o, (long)o);
	if (err) {
		free(o);
		errno = -err;
		return NULL;
	}
	return o;
}

static int object_add_path(struct bc_object *o, const char *path)
{
	char **p, *s;
	size_t i;

	for (i = 0; i < o->npaths; i++) {
		if (!strcmp(o->paths[i], path))
			return 0;
	}
	s = strdup(path);
	if (!s)
		return -ENOMEM;
	p = realloc(o->paths, (o->npaths + 1) * sizeof(*p));
	if (!p) {
		free(s);
		return -ENOMEM;
	}
	o->paths = p;
	o->paths[o->npaths++] = s;
	return 0;
}

static bool syms_have_id(const struct elf_syms *es, const struct bc_object *o)
{
	const uint8_t *id;
	size_t len;

	return !elf_syms__build_id(es, &id, &len) && len == o->id_len && !memcmp(id, o->id, len);
}

/*
 * Loads the symbols of the first candidate path that still carries the build-id: a path
 * registered while a process lived may have been rebuilt or removed since.
 */
static void object_load(const struct buildid_cache *c, struct bc_object *o)
{
	struct elf_syms_opts opts = elf_opts(c);
	size_t i;

	if (o->loaded)
		return;
	o->loaded = true;
	for (i = 0; i < o->npaths; i++) {
		struct elf_syms *es = elf_syms__open_opts(o->paths[i], &opts);

		if (es && syms_have_id(es, o)) {
			o->syms = es;
			o->path = o->paths[i];
			return;
		}
		elf_syms__free(es);
	}
}

/*
 * Registers the file at open_path under the name display_path. With eager set (open_path is
 * only valid while a process lives, e.g. /proc/PID/map_files/...), the symbols are loaded now.
 */
static int add_file_st(struct buildid_cache *c, const char *open_path, const char *display_path,
		       bool eager, const struct stat *stp);

static int add_file(struct buildid_cache *c, const char *open_path, const char *display_path,
		    bool eager)
{
	struct stat st;

	if (stat(open_path, &st) < 0)
		return -errno;
	return add_file_st(c, open_path, display_path, eager, &st);
}

/* add_file() with open_path's stat already taken */
static int add_file_st(struct buildid_cache *c, const char *open_path, const char *display_path,
		       bool eager, const struct stat *stp)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	struct bc_file key, *f;
	long found;
	struct bc_object *o;
	struct stat st = *stp;
	size_t id_len;
	int err;

	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;

	memset(&key, 0, sizeof(key));
	key.dev = st.st_dev;
	key.ino = st.st_ino;
	key.size = st.st_size;
	key.mtime = st.st_mtim;
	if (hashmap__find(&c->files, (long)&key, &found))
		return ((struct bc_file *)found)->result;

	err = elf_read_build_id(open_path, id, sizeof(id), &id_len);
	/* out of memory is worth a retry later; everything else is a property of the file */
	if (err == -ENOMEM)
		return err;
	if (!err) {
		o = object_get(c, id, id_len, true);
		if (!o)
			return -ENOMEM;
		err = object_add_path(o, display_path);
		if (err)
			return err;
		if (!o->syms)
			o->loaded = false; /* a new candidate deserves a new attempt */
		if (eager && !o->syms) {
			struct elf_syms_opts opts = elf_opts(c);
			struct elf_syms *es = elf_syms__open_opts(open_path, &opts);

			if (es && syms_have_id(es, o)) {
				o->syms = es;
				o->path = o->paths[o->npaths - 1];
				o->loaded = true;
				o->pinned = true;
			} else {
				elf_syms__free(es);
			}
		}
	}

	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	*f = key;
	f->result = err;
	if (hashmap__add(&c->files, (long)f, (long)f)) { /* -ENOMEM: the lookup above missed */
		free(f);
		return -ENOMEM;
	}
	return err;
}

int buildid_cache__add_file(struct buildid_cache *c, const char *path)
{
	return add_file(c, path, path, false);
}

static const char deleted_suffix[] = " (deleted)";

/* *st: the path's stat when true (a new process's mappings are stat'ed once) */
static bool path_is_current(const struct proc_map *m, struct stat *st)
{
	size_t len = strlen(m->path), slen = sizeof(deleted_suffix) - 1;

	if (len > slen && !strcmp(m->path + len - slen, deleted_suffix))
		return false;
	/* The dev in maps is not always st_dev (overlayfs, btrfs subvolumes): trust the inode. */
	return !stat(m->path, st) && (uint64_t)st->st_ino == m->inode;
}

int buildid_cache__add_pid(struct buildid_cache *c, int pid)
{
	struct proc_map *maps;
	size_t n;
	int err;

	err = proc_maps__read(pid, &maps, &n);
	if (err)
		return err;
	err = buildid_cache__add_maps(c, pid, maps, n);
	proc_maps__free(maps, n);
	return err;
}

int buildid_cache__add_maps(struct buildid_cache *c, int pid, const struct proc_map *maps,
			    size_t n)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	size_t i;
	int err = 0;

	for (i = 0; i < n; i++) {
		const struct proc_map *m = &maps[i];
		struct bc_mapped key = { .inode = m->inode, .dev_major = m->dev_major,
					 .dev_minor = m->dev_minor }, *mp;
		struct stat st;
		long found;
		char mf[64];

		if (m->perms[2] != 'x' || m->path[0] != '/')
			continue;
		mp = hashmap__find(&c->mapped, (long)&key, &found) ? (struct bc_mapped *)found : NULL;
		if (mp && now - mp->checked < BC_MAPPED_AGAIN_NS)
			continue;
		if (!mp) {
			mp = malloc(sizeof(*mp));
			if (!mp)
				return -ENOMEM;
			*mp = key;
			if (hashmap__add(&c->mapped, (long)mp, (long)mp)) {
				free(mp);
				return -ENOMEM;
			}
		}
		mp->checked = now;
		if (path_is_current(m, &st)) {
			err = add_file_st(c, m->path, m->path, false, &st);
		} else {
			snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid,
				 m->start, m->end);
			err = add_file(c, mf, m->path, true);
		}
		/* files without build-id, unreadable or vanished files are skipped */
		if (err == -ENOMEM) {
			mp->checked = 0; /* worth a retry */
			break;
		}
		err = 0;
	}
	return err;
}

/* Registers the build-id's entry under the debug directory: the original file, as Fedora
 * links .build-id/xx/rest to it, else the .debug file; else, with debuginfod, the debug file a
 * server has. */
static int object_from_debug_dir(const struct buildid_cache *c, struct bc_object *o)
{
	static const char *const suffixes[] = { "", ".debug" };
	char hex[2 * ELF_BUILD_ID_MAX + 1], path[PATH_MAX];
	const char *dir = debug_dir(c);
	size_t i;

	if (!*dir || o->id_len < 2)
		return -ENOENT;
	elf_build_id_hex(o->id, o->id_len, hex, sizeof(hex));
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		struct stat st;

		if ((size_t)snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s%s", dir, hex, hex + 2,
				     suffixes[i]) >= sizeof(path))
			return -ENAMETOOLONG;
		if (!stat(path, &st) && S_ISREG(st.st_mode))
			return object_add_path(o, path);
	}
	return -ENOENT;
}

static int object_from_debuginfod(const struct buildid_cache *c, struct bc_object *o)
{
	char *path;
	int err;

	if (!c->debuginfod)
		return -ENOENT;
	err = sp_debuginfod_find_debuginfo(o->id, o->id_len, &path);
	if (err)
		return err;
	err = object_add_path(o, path);
	free(path);
	return err;
}

/* Keeps the frame's name as strings (buildid_cache__trim); out of memory: not kept. */
static void name_keep(struct buildid_cache *c, const struct bc_object *o, const struct usym *s)
{
	struct bc_name *n = calloc(1, sizeof(*n));

	if (!n)
		return;
	n->o = o;
	n->offset = s->offset;
	n->sym_off = s->sym_off;
	n->func_start = s->func_start;
	n->used = true;
	if ((s->name && !(n->name = strdup(s->name))) ||
	    (s->system_name && !(n->system_name = strdup(s->system_name))) ||
	    hashmap__add(&c->names, (long)n, (long)n)) {
		name_free(n);
		return;
	}
}

void buildid_cache__trim(struct buildid_cache *c)
{
	struct hashmap_entry *e;
	struct bc_name **unused;
	size_t n = 0;

	c->keep_names = true;
	/* the names not looked up since the last trim go (their frames left the maps) */
	unused = malloc((hashmap__size(&c->names) + 1) * sizeof(*unused));
	hashmap__for_each_entry(&c->names, e) {
		struct bc_name *nm = (struct bc_name *)e->key;

		if (!nm->used && unused)
			unused[n++] = nm;
		nm->used = false;
	}
	for (size_t i = 0; i < n; i++) {
		hashmap__delete(&c->names, (long)unused[i], NULL, NULL);
		name_free(unused[i]);
	}
	free(unused);
	/* with lines a frame is more than a name: nothing is kept instead, the symbols stay */
	if (c->lines)
		return;
	/*
	 * The symbols that can be loaded again go (the next lookup that needs them loads them),
	 * but those the last interval needed, up to BC_KEEP_BYTES, smallest first
	 */
	for (size_t kept = 0;;) {
		struct bc_object *best = NULL;

		hashmap__for_each_entry(&c->objects, e) {
			struct bc_object *o = (struct bc_object *)e->key;

			if (o->syms && !o->pinned && o->used == c->generation && o->used + 1 &&
			    (!best || elf_syms__mem(o->syms) < elf_syms__mem(best->syms)))
				best = o;
		}
		if (!best || kept + elf_syms__mem(best->syms) > BC_KEEP_BYTES)
			break;
		kept += elf_syms__mem(best->syms);
		best->used = UINT64_MAX; /* kept this time */
	}
	hashmap__for_each_entry(&c->objects, e) {
		struct bc_object *o = (struct bc_object *)e->key;

		if (!o->syms || o->pinned)
			continue;
		if (o->used == UINT64_MAX) {
			o->used = c->generation;
			continue;
		}
		elf_syms__free(o->syms);
		o->syms = NULL;
		o->loaded = false;
	}
	c->generation++;
}

int buildid_cache__lookup(struct buildid_cache *c, const uint8_t *build_id, size_t id_len,
			  uint64_t file_offset, struct usym *ret)
{
	struct bc_object *o;
	int err;

	memset(ret, 0, sizeof(*ret));
	if (!id_len || id_len > ELF_BUILD_ID_MAX)
		return -EINVAL;
	o = object_get(c, build_id, id_len, false);
	if (!o) {
		/* remember misses too (an object without paths): one lookup per build-id */
		o = object_get(c, build_id, id_len, true);
		if (!o)
			return -ENOMEM;
		err = object_from_debug_dir(c, o);
		if (err == -ENOENT)
			err = object_from_debuginfod(c, o);
		if (err == -ENOMEM)
			return err;
	}
	if (!o->npaths)
		return -ENOENT;

	if (c->keep_names && !c->lines) {
		struct bc_name key = { .o = o, .offset = file_offset };
		long found;

		if (hashmap__find(&c->names, (long)&key, &found)) {
			const struct bc_name *n = (const struct bc_name *)found;

			((struct bc_name *)found)->used = true;
			ret->object = o->path ? o->path : o->paths[0];
			ret->build_id = o->id;
			ret->build_id_len = o->id_len;
			ret->offset = file_offset;
			ret->name = n->name;
			ret->system_name = n->system_name;
			ret->sym_off = n->sym_off;
			ret->func_start = n->func_start;
			return 0;
		}
	}
	object_load(c, o);
	ret->object = o->path ? o->path : o->paths[0];
	ret->build_id = o->id;
	ret->build_id_len = o->id_len;
	ret->offset = file_offset;
	if (o->syms) {
		err = elf_syms__lookup_sym(o->syms, file_offset, c->lines, ret);
		if (err == -ENOMEM)
			return err;
		o->used = c->generation;
		if (c->keep_names && !c->lines)
			name_keep(c, o, ret);
	}
	return 0;
}

int buildid_cache__resolve(struct buildid_cache *c, const uint8_t *build_id, size_t id_len,
			   uint64_t file_offset, const char **ret_sym, uint64_t *ret_sym_off,
			   const char **ret_path)
{
	struct usym sym;
	int err;

	err = buildid_cache__lookup(c, build_id, id_len, file_offset, &sym);
	if (err)
		return err;
	*ret_path = sym.object;
	*ret_sym = sym.name;
	if (ret_sym_off)
		*ret_sym_off = sym.sym_off;
	return 0;
}
