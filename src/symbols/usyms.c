/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * User-space symbolization (see usyms.h). Three search trees (tsearch): the mapped files by
 * (device, inode) with their build-id, read once per file; the process images (pid, image)
 * with their executable mappings; and, through buildid_cache, the objects by build-id with
 * their lazily loaded symbols.
 */
#include "usyms.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <search.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "buildid_cache.h"
#include "elfsyms.h"
#include "procmaps.h"

/* A mapped file, by identity as /proc/PID/maps prints it. */
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

struct us_image {
	int pid;
	uint64_t image;
	struct us_map *maps; /* executable mappings, sorted by start */
	size_t n;
};

struct usyms {
	struct buildid_cache *bc;
	void *files;  /* tsearch root of struct us_file */
	void *images; /* tsearch root of struct us_image */
	size_t nimages;
	char *debug_dir;
	struct elf_syms *vdso;
	bool vdso_tried;
};

static const char vdso_name[] = "[vdso]";

static int cmp_file(const void *a, const void *b)
{
	const struct us_file *x = a, *y = b;

	if (x->dev_major != y->dev_major)
		return x->dev_major < y->dev_major ? -1 : 1;
	if (x->dev_minor != y->dev_minor)
		return x->dev_minor < y->dev_minor ? -1 : 1;
	if (x->inode != y->inode)
		return x->inode < y->inode ? -1 : 1;
	return 0;
}

static int cmp_image(const void *a, const void *b)
{
	const struct us_image *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->image != y->image)
		return x->image < y->image ? -1 : 1;
	return 0;
}

static void file_free(void *p)
{
	struct us_file *f = p;

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

static void image_free(void *p)
{
	struct us_image *img = p;

	maps_free(img->maps, img->n);
	free(img);
}

struct usyms *usyms__new(const struct usyms_opts *opts)
{
	struct usyms *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
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
	tdestroy(u->images, image_free);
	tdestroy(u->files, file_free);
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
	struct us_file *f, **slot;
	char mf[64];

	slot = tfind(&key, &u->files, cmp_file);
	if (slot)
		return *slot;
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
	slot = tsearch(f, &u->files, cmp_file);
	if (!slot) {
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
	struct us_image *img, **slot;
	struct proc_map *maps;
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
	slot = tsearch(img, &u->images, cmp_image);
	if (!slot) {
		image_free(img);
		err = -ENOMEM;
		goto out;
	}
	if (*slot != img) { /* a newer snapshot of a known image replaces the older */
		struct us_image *old = *slot;

		maps_free(old->maps, old->n);
		old->maps = img->maps;
		old->n = img->n;
		img->maps = NULL;
		img->n = 0;
		image_free(img);
	} else {
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
	struct us_image key = { .pid = pid, .image = image }, **slot;
	const struct us_map *m;
	struct us_file *f;
	uint64_t off, sym_off = 0;

	slot = tfind(&key, &u->images, cmp_image);
	if (!slot)
		return -ESRCH;
	m = image_find(*slot, ip);
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
