/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * User-space symbolization (see usyms.h). Three hash tables (hashmap.h): the mapped files by
 * (device, inode) with their build-id, read once per file; the process images (pid, image)
 * with their executable mappings; and, through buildid_cache, the objects by build-id with
 * their lazily loaded symbols.
 */
#include "symbols/usyms.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/buildid_cache.h"
#include "symbols/elfsyms.h"
#include "base/hashmap.h"
#include "symbols/procmaps.h"
#include "base/util.h"

/* A mapped file, by identity as /proc/PID/maps prints it (the first fields: FILE_KEY_SIZE). */
struct us_file {
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t id_len;		/* 0: no build-id could be read */
	char *path;		/* the path of the first mapping seen */
	struct elf_syms *syms;	/* only for files without a build-id, loaded on first use */
	bool loaded;
};

struct us_map {
	uint64_t start, end, pgoff;
	struct us_file *file; /* NULL for the vdso */
	char *path;	      /* as the kernel printed it; "[vdso]" */
};

struct us_image { /* image and pid are the key (IMAGE_KEY_SIZE): no padding between */
	uint64_t image;
	int pid;
	struct us_map *maps; /* executable mappings, sorted by start */
	size_t n;
	uint64_t exec_pages; /* of every executable mapping read (mm->exec_vm then) */
	uint64_t other_pages; /* a forked process's exec_pages, which reading again missed */
	bool used; /* usyms__trim: a raw IP was looked up in it since the last trim */
	bool gone; /* usyms__trim: its process had exited at the last trim */
};

/* One line of a perf map: [start, start + size) is name (offset into us_perfmap.strs). */
struct us_jit {
	uint64_t start, size;
	uint64_t max_end; /* the highest end among this entry and all before it */
	size_t line;	  /* later lines win where ranges overlap (code regions reused) */
	size_t name_off;
};

/* /tmp/perf-PID.map as last read, with the size it had then. */
struct us_perfmap {
	int pid;
	char *path;
	off_t size; /* -1: no file */
	struct us_jit *v;
	size_t n;
	char *strs;
	struct us_perfmap *next;
};

#define FILE_KEY_SIZE offsetof(struct us_file, id)
#define IMAGE_KEY_SIZE (offsetof(struct us_image, pid) + sizeof(int))

struct usyms {
	struct buildid_cache *bc;
	struct hashmap files;  /* struct us_file * by (device, inode) -> itself */
	struct hashmap images; /* struct us_image * by (image, pid) -> itself */
	size_t nimages;
	char *debug_dir;
	bool lines, debuginfod;
	struct elf_syms *vdso;
	bool vdso_tried;
	char *perf_map_dir;	     /* NULL: /tmp */
	struct hashmap perfmaps;     /* pid -> struct us_perfmap * */
	struct hashmap uids;	     /* pid -> its uid, seen while it lived (perf map owners) */
	struct us_perfmap *old_maps; /* replaced maps: their names may still be referenced */
};

static const char vdso_name[] = "[vdso]";

static void file_free(struct us_file *f)
{
	free(f->path);
	elf_syms__free(f->syms);
	free(f);
}

static void maps_free(struct us_map *maps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}

static void image_free(struct us_image *img)
{
	maps_free(img->maps, img->n);
	free(img);
}

static void image_entry_free(long key, long value)
{
	(void)value;
	image_free((struct us_image *)key);
}

static void file_entry_free(long key, long value)
{
	(void)value;
	file_free((struct us_file *)key);
}

static void perfmap_free(struct us_perfmap *pm)
{
	if (!pm)
		return;
	free(pm->path);
	free(pm->v);
	free(pm->strs);
	free(pm);
}

static void perfmap_list_free(struct us_perfmap *pm)
{
	while (pm) {
		struct us_perfmap *next = pm->next;

		perfmap_free(pm);
		pm = next;
	}
}

static void perfmap_entry_free(long key, long value)
{
	(void)key;
	perfmap_free((struct us_perfmap *)value);
}

struct usyms *usyms__new(const struct usyms_opts *opts)
{
	struct usyms *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	hashmap__init(&u->files, hashmap_mem_hash, hashmap_mem_equal, (void *)FILE_KEY_SIZE);
	hashmap__init(&u->images, hashmap_mem_hash, hashmap_mem_equal, (void *)IMAGE_KEY_SIZE);
	hashmap__init(&u->perfmaps, hashmap_long_hash, hashmap_long_equal, NULL);
	hashmap__init(&u->uids, hashmap_long_hash, hashmap_long_equal, NULL);
	u->bc = buildid_cache__new();
	if (!u->bc)
		goto fail;
	if (opts) {
		u->lines = opts->lines;
		u->debuginfod = opts->debuginfod;
		buildid_cache__set_opts(u->bc, opts->lines, opts->debuginfod);
	}
	if (opts && opts->debug_dir) {
		u->debug_dir = strdup(opts->debug_dir);
		if (!u->debug_dir || buildid_cache__set_debug_dir(u->bc, opts->debug_dir))
			goto fail;
	}
	return u;
fail:
	usyms__free(u);
	errno = ENOMEM;
	return NULL;
}

void usyms__free(struct usyms *u)
{
	if (!u)
		return;
	hashmap__clear_with(&u->images, image_entry_free);
	hashmap__clear_with(&u->files, file_entry_free);
	hashmap__clear_with(&u->perfmaps, perfmap_entry_free);
	hashmap__clear(&u->uids);
	perfmap_list_free(u->old_maps);
	free(u->perf_map_dir);
	buildid_cache__free(u->bc);
	elf_syms__free(u->vdso);
	free(u->debug_dir);
	free(u);
}

static bool pid_gone(int pid)
{
	return kill(pid, 0) && errno == ESRCH;
}

/*
 * The images of processes that had exited at the last trim and that no raw IP needed since
 * (a stack taken before the exit is in the read after that trim: it marks its image used),
 * with their processes' uid and perf map when no image of that pid is left.
 */
static void images_trim(struct usyms *u)
{
	struct us_image **drop;
	struct hashmap kept;
	struct hashmap_entry *e;
	size_t n = 0;
	long *pids;
	size_t npids = 0;

	drop = malloc((hashmap__size(&u->images) + 1) * sizeof(*drop));
	if (!drop)
		return;
	hashmap__for_each_entry(&u->images, e) {
		struct us_image *img = (struct us_image *)e->key;

		if (img->gone && !img->used) {
			drop[n++] = img;
			continue;
		}
		if (!img->gone)
			img->gone = pid_gone(img->pid);
		img->used = false;
	}
	for (size_t i = 0; i < n; i++) {
		hashmap__delete(&u->images, (long)drop[i], NULL, NULL);
		image_free(drop[i]);
	}
	free(drop);
	if (!n)
		return;
	/* the pids still imaged keep their uid and perf map */
	hashmap__init(&kept, hashmap_long_hash, hashmap_long_equal, NULL);
	hashmap__for_each_entry(&u->images, e) {
		if (hashmap__set(&kept, (long)((struct us_image *)e->key)->pid, 0, NULL, NULL))
			goto out;
	}
	pids = malloc((hashmap__size(&u->uids) + hashmap__size(&u->perfmaps) + 1) * sizeof(*pids));
	if (!pids)
		goto out;
	hashmap__for_each_entry(&u->uids, e) {
		if (!hashmap__find(&kept, e->key, NULL) && pid_gone((int)e->key))
			pids[npids++] = e->key;
	}
	hashmap__for_each_entry(&u->perfmaps, e) {
		if (!hashmap__find(&kept, e->key, NULL) && pid_gone((int)e->key))
			pids[npids++] = e->key;
	}
	for (size_t i = 0; i < npids; i++) {
		long pm;

		hashmap__delete(&u->uids, pids[i], NULL, NULL);
		if (hashmap__delete(&u->perfmaps, pids[i], NULL, &pm))
			perfmap_free((struct us_perfmap *)pm);
	}
	free(pids);
out:
	hashmap__clear(&kept);
}

void usyms__trim(struct usyms *u)
{
	if (!u)
		return;
	buildid_cache__trim(u->bc);
	images_trim(u);
	perfmap_list_free(u->old_maps);
	u->old_maps = NULL;
}

size_t usyms__nr_images(const struct usyms *u)
{
	return u->nimages;
}

int usyms__add_file(struct usyms *u, const char *path)
{
	return buildid_cache__add_file(u->bc, path);
}

static bool path_deleted(const char *path)
{
	static const char suffix[] = " (deleted)";
	size_t len = strlen(path), slen = sizeof(suffix) - 1;

	return len > slen && !strcmp(path + len - slen, suffix);
}

/*
 * The file behind a mapping, read once per (device, inode). The build-id is read through
 * /proc/PID/map_files/ first, which names the mapped file even when its path was deleted or
 * replaced (it needs privileges), else through the path. NULL only on ENOMEM.
 */
static struct us_file *file_get(struct usyms *u, int pid, const struct proc_map *m)
{
	struct us_file key = { .dev_major = m->dev_major, .dev_minor = m->dev_minor,
			       .inode = m->inode };
	struct us_file *f;
	long found;
	char mf[64];

	if (hashmap__find(&u->files, (long)&key, &found))
		return (struct us_file *)found;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	*f = key;
	f->path = strdup(m->path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end);
	if (elf_read_build_id(mf, f->id, sizeof(f->id), &f->id_len) &&
	    (path_deleted(m->path) || elf_read_build_id(m->path, f->id, sizeof(f->id), &f->id_len)))
		f->id_len = 0;
	if (hashmap__add(&u->files, (long)f, (long)f)) {
		file_free(f);
		return NULL;
	}
	return f;
}

/* The executable mappings of maps[] as an image; NULL + errno (ENOMEM). */
static struct us_image *image_build(struct usyms *u, int pid, uint64_t image,
				    const struct proc_map *maps, size_t n)
{
	struct us_image *img = calloc(1, sizeof(*img));

	if (!img)
		return NULL;
	img->pid = pid;
	img->image = image;
	img->maps = calloc(n ? n : 1, sizeof(*img->maps));
	if (!img->maps)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const struct proc_map *m = &maps[i];
		struct us_map *d = &img->maps[img->n];
		bool vdso = !strcmp(m->path, vdso_name);

		if (m->perms[2] == 'x')
			img->exec_pages += (m->end - m->start) / (uint64_t)getpagesize();
		if (m->perms[2] != 'x' || (!vdso && m->path[0] != '/'))
			continue;
		if (!vdso) {
			d->file = file_get(u, pid, m);
			if (!d->file)
				goto fail;
		}
		d->path = strdup(m->path);
		if (!d->path)
			goto fail;
		d->start = m->start;
		d->end = m->end;
		d->pgoff = m->pgoff;
		img->n++;
	}
	return img;
fail:
	image_free(img);
	errno = ENOMEM;
	return NULL;
}

/* The owner of a live process; false when it is gone. */
static bool pid_uid(int pid, uid_t *ret)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st))
		return false;
	*ret = st.st_uid;
	return true;
}

/*
 * Records who owns pid, for reading its files later as that user (nothing when it is gone).
 * 0 or -ENOMEM.
 */
static int owner_note(struct usyms *u, int pid)
{
	uid_t uid;

	if (!pid_uid(pid, &uid))
		return 0;
	return hashmap__set(&u->uids, (long)pid, (long)uid, NULL, NULL) ? -ENOMEM : 0;
}

/* Keeps img (taken): a newer snapshot of a known image replaces the older. 0 or -ENOMEM. */
static int image_put(struct usyms *u, struct us_image *img)
{
	struct us_image *old;
	long found;

	if (hashmap__find(&u->images, (long)img, &found)) {
		old = (struct us_image *)found;
		maps_free(old->maps, old->n);
		old->maps = img->maps;
		old->n = img->n;
		old->exec_pages = img->exec_pages;
		img->maps = NULL;
		img->n = 0;
		image_free(img);
		return 0;
	}
	if (hashmap__add(&u->images, (long)img, (long)img)) {
		image_free(img);
		return -ENOMEM;
	}
	u->nimages++;
	return 0;
}

int usyms__add_pid(struct usyms *u, int pid, uint64_t image)
{
	struct us_image *img;
	struct proc_map *maps;
	size_t n;
	int err;

	err = proc_maps__read_exec(pid, &maps, &n);
	if (err)
		return err;
	/*
	 * A user process always maps some code: no mappings means its mm is gone (it is
	 * exiting, or a zombie). An empty snapshot would replace the one taken while it lived.
	 */
	if (!n) {
		proc_maps__free(maps, n);
		return -ESRCH;
	}
	err = owner_note(u, pid);
	if (err)
		goto out;
	/* files by build-id, for build-id frames (map_files for deleted ones) */
	err = buildid_cache__add_maps(u->bc, pid, maps, n);
	if (err == -ENOMEM)
		goto out;
	img = image_build(u, pid, image, maps, n);
	err = img ? image_put(u, img) : -ENOMEM;
out:
	proc_maps__free(maps, n);
	return err;
}

/*
 * The snapshot of (from_pid, from_image) for a process of exec_pages pages of code forked from
 * it; read (again) when there is none or one of another size, once for each such size.
 */
static struct us_image *image_forked_from(struct usyms *u, int from_pid, uint64_t from_image,
					  uint64_t exec_pages, int *ret_err)
{
	struct us_image key = { .image = from_image, .pid = from_pid };
	long found;

	for (int read = 0;; read = 1) {
		struct us_image *from;

		if (hashmap__find(&u->images, (long)&key, &found)) {
			from = (struct us_image *)found;
			/* the snapshot's process gone: the new one's outlives it */
			if (from->gone) {
				*ret_err = -ENOENT;
				return NULL;
			}
			if (from->exec_pages == exec_pages)
				return from;
			if (read || from->other_pages == exec_pages) {
				/*
				 * Not the code the process has: code mapped or unmapped since the
				 * fork, by either (a process that maps more before it forks is
				 * read again first)
				 */
				from->other_pages = exec_pages;
				*ret_err = -ENOENT;
				return NULL;
			}
		} else if (read) {
			*ret_err = -ENOENT;
			return NULL;
		}
		*ret_err = usyms__add_pid(u, from_pid, from_image);
		if (*ret_err == -ENOMEM)
			return NULL;
	}
}

int usyms__add_pid_as(struct usyms *u, int pid, uint64_t image, int from_pid, uint64_t from_image,
		      uint64_t exec_pages)
{
	struct us_image *from, *img;
	int err;

	from = image_forked_from(u, from_pid, from_image, exec_pages, &err);
	if (!from)
		return err;
	img = calloc(1, sizeof(*img));
	if (!img)
		return -ENOMEM;
	img->pid = pid;
	img->image = image;
	img->exec_pages = exec_pages;
	img->maps = calloc(from->n ? from->n : 1, sizeof(*img->maps));
	if (!img->maps)
		goto fail;
	for (size_t i = 0; i < from->n; i++) {
		img->maps[i] = from->maps[i];
		img->maps[i].path = strdup(from->maps[i].path);
		if (!img->maps[i].path)
			goto fail;
		img->n++;
	}
	if (owner_note(u, pid))
		goto fail;
	return image_put(u, img);
fail:
	image_free(img);
	return -ENOMEM;
}

int usyms__resolve_build_id(struct usyms *u, const uint8_t *id, size_t id_len, uint64_t offset,
			    struct usym *ret_sym)
{
	int err;

	err = buildid_cache__lookup(u->bc, id, id_len, offset, ret_sym);
	/*
	 * BPF frames carry 20 bytes whatever the build-id's length: a 16-byte one (md5, uuid)
	 * arrives zero-padded.
	 */
	if (err == -ENOENT && id_len > 16) {
		size_t i;

		for (i = 16; i < id_len && !id[i]; i++)
			;
		if (i == id_len)
			err = buildid_cache__lookup(u->bc, id, 16, offset, ret_sym);
	}
	if (err)
		memset(ret_sym, 0, sizeof(*ret_sym));
	return err;
}

int usyms__resolve_build_id_hex(struct usyms *u, const char *hex, uint64_t offset,
				struct usym *ret_sym)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t len = strlen(hex), i;

	memset(ret_sym, 0, sizeof(*ret_sym));
	if (!len || len % 2 || len / 2 > sizeof(id))
		return -EINVAL;
	for (i = 0; i < len; i++) {
		char c = hex[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (v < 0)
			return -EINVAL;
		if (i % 2)
			id[i / 2] |= (uint8_t)v;
		else
			id[i / 2] = (uint8_t)(v << 4);
	}
	return usyms__resolve_build_id(u, id, len / 2, offset, ret_sym);
}

int usyms__set_perf_map_dir(struct usyms *u, const char *dir)
{
	char *d = strdup(dir);

	if (!d)
		return -ENOMEM;
	free(u->perf_map_dir);
	u->perf_map_dir = d;
	return 0;
}

static int cmp_jit(const void *a, const void *b)
{
	const struct us_jit *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Parses "START SIZE name" lines (hex, 0x optional); malformed lines are skipped. */
static int perfmap_parse(struct us_perfmap *pm, FILE *f)
{
	size_t cap = 0, strs_len = 0, strs_cap = 0, line_no = 0, i;
	char *line = NULL;
	uint64_t max_end = 0;
	size_t linecap = 0;
	ssize_t len;
	int err = 0;

	while ((len = getline(&line, &linecap, f)) > 0) {
		unsigned long long start, size;
		int name_at = 0;
		size_t nlen;

		line_no++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (sscanf(line, "%llx %llx %n", &start, &size, &name_at) < 2 || !name_at ||
		    !line[name_at] || !size)
			continue;
		nlen = (size_t)len - (size_t)name_at + 1;
		if (pm->n == cap) {
			struct us_jit *v;

			cap = cap ? 2 * cap : 256;
			v = realloc(pm->v, cap * sizeof(*v));
			if (!v)
				goto nomem;
			pm->v = v;
		}
		if (strs_len + nlen > strs_cap) {
			char *p;

			strs_cap = strs_cap ? 2 * strs_cap : 4096;
			while (strs_cap < strs_len + nlen)
				strs_cap *= 2;
			p = realloc(pm->strs, strs_cap);
			if (!p)
				goto nomem;
			pm->strs = p;
		}
		memcpy(pm->strs + strs_len, line + name_at, nlen);
		pm->v[pm->n++] = (struct us_jit){ .start = start, .size = size, .line = line_no,
						  .name_off = strs_len };
		strs_len += nlen;
	}
	qsort(pm->v, pm->n, sizeof(*pm->v), cmp_jit);
	for (i = 0; i < pm->n; i++) {
		uint64_t end = pm->v[i].start + pm->v[i].size;

		if (end < pm->v[i].start)
			end = UINT64_MAX;
		if (end > max_end)
			max_end = end;
		pm->v[i].max_end = max_end;
	}
	goto out;
nomem:
	err = -ENOMEM;
out:
	free(line);
	return err;
}

/*
 * A perf map is trusted when it is a regular file (not a symlink: /tmp is everyone's) owned by
 * root, by us, or by the process it describes (as seen now, or while it lived).
 */
static bool perfmap_owner_ok(struct usyms *u, int pid, const struct stat *st)
{
	long uid;
	uid_t live;

	if (!S_ISREG(st->st_mode))
		return false;
	if (st->st_uid == 0 || st->st_uid == geteuid())
		return true;
	if (pid_uid(pid, &live))
		return st->st_uid == live;
	return hashmap__find(&u->uids, (long)pid, &uid) && (uid_t)uid == st->st_uid;
}

/* The perf map of pid, read again when its size changed; NULL + errno (ENOENT, ENOMEM). */
static struct us_perfmap *perfmap_get(struct usyms *u, int pid)
{
	struct us_perfmap *pm = NULL, *fresh;
	struct stat st;
	char path[4096];
	long found;
	FILE *f;
	int fd, err;

	snprintf(path, sizeof(path), "%s/perf-%d.map", u->perf_map_dir ? u->perf_map_dir : "/tmp",
		 pid);
	if (hashmap__find(&u->perfmaps, (long)pid, &found))
		pm = (struct us_perfmap *)found;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !perfmap_owner_ok(u, pid, &st) ||
	    (pm && pm->size == st.st_size)) {
		if (fd >= 0)
			close(fd);
		errno = ENOENT;
		return pm && pm->n ? pm : NULL; /* unchanged, or gone since: keep what was read */
	}
	fresh = calloc(1, sizeof(*fresh));
	f = fdopen(fd, "re");
	if (!fresh || !f) {
		if (f)
			fclose(f);
		else
			close(fd);
		free(fresh);
		errno = ENOMEM;
		return NULL;
	}
	fresh->pid = pid;
	fresh->size = st.st_size;
	fresh->path = strdup(path);
	err = fresh->path ? perfmap_parse(fresh, f) : -ENOMEM;
	fclose(f);
	if (err) {
		perfmap_free(fresh);
		errno = -err;
		return NULL;
	}
	if (hashmap__set(&u->perfmaps, (long)pid, (long)fresh, NULL, NULL)) {
		perfmap_free(fresh);
		errno = ENOMEM;
		return NULL;
	}
	if (pm) { /* names handed out earlier stay valid */
		pm->next = u->old_maps;
		u->old_maps = pm;
	}
	return fresh;
}

int usyms__resolve_perf_map(struct usyms *u, int pid, uint64_t ip, struct usym *ret_sym)
{
	const struct us_jit *best = NULL;
	struct us_perfmap *pm;
	size_t lo, i;

	memset(ret_sym, 0, sizeof(*ret_sym));
	pm = perfmap_get(u, pid);
	if (!pm)
		return errno == ENOMEM ? -ENOMEM : -ENOENT;
	lo = upper_bound(pm->v, pm->n, sizeof(*pm->v), offsetof(struct us_jit, start), ip);
	for (i = lo; i > 0; i--) {
		const struct us_jit *e = &pm->v[i - 1];

		if (ip - e->start < e->size && (!best || e->line > best->line))
			best = e;
		if (e->max_end <= ip)
			break;
	}
	if (!best)
		return -ENOENT;
	ret_sym->name = pm->strs + best->name_off;
	ret_sym->sym_off = ip - best->start;
	ret_sym->object = pm->path;
	ret_sym->offset = ip;
	return 0;
}

/* The tracer's own vdso, copied into a memory file so libelf can read it like any file. */
static struct elf_syms *vdso_syms(struct usyms *u)
{
	struct elf_syms_opts opts = { .debug_dir = "" };
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	const struct proc_map *m;
	struct proc_map *maps;
	char path[64];
	size_t n, done = 0;
	int fd;

	if (u->vdso_tried)
		return u->vdso;
	u->vdso_tried = true;
	if (!base || proc_maps__read(getpid(), &maps, &n))
		return NULL;
	m = proc_maps__find(maps, n, base);
	fd = m ? memfd_create("schedprof-vdso", MFD_CLOEXEC) : -1;
	if (fd >= 0) {
		while (done < m->end - base) {
			ssize_t w = write(fd, (const char *)base + done, m->end - base - done);

			if (w <= 0)
				break;
			done += (size_t)w;
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (done == m->end - base)
			u->vdso = elf_syms__open_opts(path, &opts);
		close(fd);
	}
	proc_maps__free(maps, n);
	return u->vdso;
}

/* The mapping containing ip (the mappings do not overlap), or NULL. */
static const struct us_map *image_find(const struct us_image *img, uint64_t ip)
{
	size_t i = upper_bound(img->maps, img->n, sizeof(*img->maps),
				    offsetof(struct us_map, start), ip);

	return i && ip < img->maps[i - 1].end ? &img->maps[i - 1] : NULL;
}

/* A file without build-id (or whose build-id lookup failed), by its path while it is there. */
static int resolve_file(struct usyms *u, struct us_file *f, uint64_t off, struct usym *ret_sym)
{
	if (!f->loaded) {
		struct elf_syms_opts opts = { .debug_dir = u->debug_dir, .dwarf = u->lines,
					      .debuginfod = u->debuginfod };

		f->loaded = true;
		if (!path_deleted(f->path))
			f->syms = elf_syms__open_opts(f->path, &opts);
	}
	if (f->syms && elf_syms__lookup_sym(f->syms, off, u->lines, ret_sym) == -ENOMEM)
		return -ENOMEM;
	return 0;
}

int usyms__map_ip(struct usyms *u, int pid, uint64_t image, uint64_t ip,
		  struct usyms_mapping *ret)
{
	struct us_image key = { .image = image, .pid = pid };
	const struct us_map *m;
	long found;

	if (!hashmap__find(&u->images, (long)&key, &found))
		return -ESRCH;
	((struct us_image *)found)->used = true;
	m = image_find((const struct us_image *)found, ip);
	if (!m)
		return -ENOENT;
	ret->offset = m->pgoff + (ip - m->start);
	if (!m->file) { /* the vdso */
		ret->path = vdso_name;
		ret->dev = 0;
		ret->inode = 0;
		return 0;
	}
	ret->path = m->file->path;
	ret->dev = ((uint64_t)m->file->dev_major << 32) | m->file->dev_minor;
	ret->inode = m->file->inode;
	return 0;
}

int usyms__image_pages(struct usyms *u, int pid, uint64_t image, uint64_t *ret_pages)
{
	struct us_image key = { .image = image, .pid = pid };
	long found;

	if (!hashmap__find(&u->images, (long)&key, &found))
		return -ESRCH;
	*ret_pages = ((const struct us_image *)found)->exec_pages;
	return 0;
}

int usyms__resolve_ip(struct usyms *u, int pid, uint64_t image, uint64_t ip, struct usym *ret_sym)
{
	struct us_image key = { .image = image, .pid = pid };
	const struct us_map *m;
	struct us_file *f;
	uint64_t off;
	long found;
	int err;

	memset(ret_sym, 0, sizeof(*ret_sym));
	if (!hashmap__find(&u->images, (long)&key, &found)) {
		err = usyms__resolve_perf_map(u, pid, ip, ret_sym);
		return err == -ENOENT ? -ESRCH : err;
	}
	((struct us_image *)found)->used = true;
	m = image_find((const struct us_image *)found, ip);
	if (!m)
		return usyms__resolve_perf_map(u, pid, ip, ret_sym);
	off = m->pgoff + (ip - m->start);
	if (!m->file) {
		struct elf_syms *es = vdso_syms(u);

		if (es && elf_syms__lookup_sym(es, off, false, ret_sym) == -ENOMEM)
			return -ENOMEM;
		err = 0;
	} else if (m->file->id_len &&
		   !(err = usyms__resolve_build_id(u, m->file->id, m->file->id_len, off, ret_sym))) {
		err = 0;
	} else {
		f = m->file;
		if (f->id_len) {
			ret_sym->build_id = f->id;
			ret_sym->build_id_len = f->id_len;
		}
		err = resolve_file(u, f, off, ret_sym);
	}
	ret_sym->object = m->path; /* the path this process mapped */
	ret_sym->offset = off;
	return err;
}
