/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * User-space symbolization (see usyms.h). Three hash tables (hashmap.h): the mapped files by
 * (device, inode) with their build-id, read once per file; the process images (pid, image)
 * with their executable mappings; and, through buildid_cache, the objects by build-id with
 * their lazily loaded symbols.
 */
#include "usyms.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "buildid_cache.h"
#include "elfsyms.h"
#include "hashmap.h"
#include "procmaps.h"

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
};

#define FILE_KEY_SIZE offsetof(struct us_file, id)
#define IMAGE_KEY_SIZE (offsetof(struct us_image, pid) + sizeof(int))

struct usyms {
	struct buildid_cache *bc;
	struct hashmap files;  /* struct us_file * by (device, inode) -> itself */
	struct hashmap images; /* struct us_image * by (image, pid) -> itself */
	size_t nimages;
	char *debug_dir;
	struct elf_syms *vdso;
	bool vdso_tried;
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

struct usyms *usyms__new(const struct usyms_opts *opts)
{
	struct usyms *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	hashmap__init(&u->files, hashmap_mem_hash, hashmap_mem_equal, (void *)FILE_KEY_SIZE);
	hashmap__init(&u->images, hashmap_mem_hash, hashmap_mem_equal, (void *)IMAGE_KEY_SIZE);
	u->bc = buildid_cache__new();
	if (!u->bc)
		goto fail;
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
	buildid_cache__free(u->bc);
	elf_syms__free(u->vdso);
	free(u->debug_dir);
	free(u);
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

int usyms__add_pid(struct usyms *u, int pid, uint64_t image)
{
	struct us_image *img, *old;
	struct proc_map *maps;
	long found;
	size_t n;
	int err;

	err = proc_maps__read(pid, &maps, &n);
	if (err)
		return err;
	/* files by build-id, for build-id frames (map_files for deleted ones) */
	err = buildid_cache__add_pid(u->bc, pid);
	if (err == -ENOMEM)
		goto out;
	img = image_build(u, pid, image, maps, n);
	if (!img) {
		err = -ENOMEM;
		goto out;
	}
	if (hashmap__find(&u->images, (long)img, &found)) {
		/* a newer snapshot of a known image replaces the older */
		old = (struct us_image *)found;
		maps_free(old->maps, old->n);
		old->maps = img->maps;
		old->n = img->n;
		img->maps = NULL;
		img->n = 0;
		image_free(img);
	} else {
		err = hashmap__add(&u->images, (long)img, (long)img);
		if (err) {
			image_free(img);
			goto out;
		}
		u->nimages++;
	}
	err = 0;
out:
	proc_maps__free(maps, n);
	return err;
}

int usyms__resolve_build_id(struct usyms *u, const uint8_t *id, size_t id_len, uint64_t offset,
			    struct usym *ret_sym)
{
	const char *name, *path;
	uint64_t off = 0;
	int err;

	memset(ret_sym, 0, sizeof(*ret_sym));
	err = buildid_cache__resolve(u->bc, id, id_len, offset, &name, &off, &path);
	/*
	 * BPF frames carry 20 bytes whatever the build-id's length: a 16-byte one (md5, uuid)
	 * arrives zero-padded.
	 */
	if (err == -ENOENT && id_len > 16) {
		size_t i;

		for (i = 16; i < id_len && !id[i]; i++)
			;
		if (i == id_len)
			err = buildid_cache__resolve(u->bc, id, 16, offset, &name, &off, &path);
	}
	if (err)
		return err;
	ret_sym->name = name;
	ret_sym->object = path;
	ret_sym->sym_off = name ? off : 0;
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

static const struct us_map *image_find(const struct us_image *img, uint64_t ip)
{
	size_t lo = 0, hi = img->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ip < img->maps[mid].start)
			hi = mid;
		else if (ip >= img->maps[mid].end)
			lo = mid + 1;
		else
			return &img->maps[mid];
	}
	return NULL;
}

int usyms__resolve_ip(struct usyms *u, int pid, uint64_t image, uint64_t ip, struct usym *ret_sym)
{
	struct us_image key = { .image = image, .pid = pid };
	const struct us_map *m;
	struct us_file *f;
	uint64_t off, sym_off = 0;
	long found;

	memset(ret_sym, 0, sizeof(*ret_sym));
	if (!hashmap__find(&u->images, (long)&key, &found))
		return -ESRCH;
	m = image_find((const struct us_image *)found, ip);
	if (!m)
		return -ENOENT;
	off = m->pgoff + (ip - m->start);
	ret_sym->object = m->path;
	ret_sym->sym_off = 0;
	if (!m->file) {
		struct elf_syms *es = vdso_syms(u);

		ret_sym->name = es ? elf_syms__lookup_offset(es, off, &sym_off) : NULL;
		ret_sym->sym_off = ret_sym->name ? sym_off : 0;
		return 0;
	}
	f = m->file;
	if (f->id_len && !usyms__resolve_build_id(u, f->id, f->id_len, off, ret_sym)) {
		ret_sym->object = m->path; /* the path this process mapped */
		return 0;
	}
	if (!f->loaded) {
		struct elf_syms_opts opts = { .debug_dir = u->debug_dir };

		f->loaded = true;
		if (!path_deleted(f->path))
			f->syms = elf_syms__open_opts(f->path, &opts);
	}
	ret_sym->name = f->syms ? elf_syms__lookup_offset(f->syms, off, &sym_off) : NULL;
	ret_sym->sym_off = ret_sym->name ? sym_off : 0;
	return 0;
}
