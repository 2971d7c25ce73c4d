// SPDX-License-Identifier: BSD-2-Clause
/* The per-boot caches in /run/schedprof: one module, one file format (cache.h). */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "loader/cache.h"
#include "base/hashmap.h"
#include "base/testhook.h"

#define MAGIC "schedprof-cache"
#define VERSION 1
#define SHOW_MAX (64u << 20) /* `cache show` reads files up to this size */

static const struct {
	const char *name;  /* of its file: NAME.cache */
	bool shared;	   /* readable by anyone (what the world-readable BTF says) */
	bool addresses;	   /* kernel addresses: only for a process kallsyms shows them to */
	bool entries;	   /* a file per entry: NAME-ENTRY.cache */
	const char *what;
} kinds[CACHE__N] = {
	[CACHE_FOLD] = { "fold", false, true, false,
			 "the scheduler's and locks' text (kernel addresses)" },
	[CACHE_FEATURES] = { "kfeatures", true, false, false, "the kernel's BPF features and config" },
	[CACHE_PREEMPT] = { "preempt", true, false, false, "where the preempt count is" },
	[CACHE_ATTACH] = { "attach", true, false, false, "the attach targets' BTF type IDs" },
	[CACHE_CORE_BTF] = { "core", true, false, false, "the BTF CO-RE relocates against" },
	/* the writer's only: a table says what a file it could read holds */
	[CACHE_CFI] = { "cfi", false, false, true, "user objects' unwind tables, by build-id" },
};

/* Every file: this header, then size bytes of data whose hash is hash. */
struct header {
	char magic[16];
	uint32_t version;
	uint32_t kind;
	char name[16];
	char boot_id[40];
	char release[65];
	char build_id[41]; /* the executable's, lowercase hex */
	char pad[6];
	uint64_t size;
	uint64_t hash;
};
_Static_assert(sizeof(struct header) == 208, "the header's layout is the file format");

static bool disabled;

void cache_disable(void)
{
	disabled = true;
}

bool cache_disabled(void)
{
	return disabled;
}

const char *cache_file_name(enum cache_kind kind)
{
	static char names[CACHE__N][32];

	if (!names[kind][0])
		snprintf(names[kind], sizeof(names[kind]), "%s.cache", kinds[kind].name);
	return names[kind];
}

const char *cache_what(enum cache_kind kind)
{
	return kinds[kind].what;
}

static int read_boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	int err = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		err = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return err ? err : (buf[0] ? 0 : -EIO);
}

/* The main executable's NT_GNU_BUILD_ID note, as hex (dl_iterate_phdr: its first object). */
static int main_build_id(struct dl_phdr_info *info, size_t size, void *ctx)
{
	char *hex = ctx;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const unsigned char *desc = (const unsigned char *)p + sizeof(*n) +
						    ((n->n_namesz + 3) & ~3u);

			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(p + sizeof(*n), "GNU", 4)) {
				for (size_t j = 0; j < n->n_descsz && j < 20; j++)
					snprintf(hex + 2 * j, 3, "%02x", desc[j]);
				return 1;
			}
			p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 1; /* the first object only */
}

/* The header this run writes, and wants to read. */
static int make_header(struct header *h, enum cache_kind kind, size_t size)
{
	static char build_id[41];
	struct utsname u;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, MAGIC, sizeof(MAGIC));
	h->version = VERSION;
	h->kind = kind;
	snprintf(h->name, sizeof(h->name), "%s", kinds[kind].name);
	if (!build_id[0])
		dl_iterate_phdr(main_build_id, build_id);
	/* a build without a build-id cannot tell its caches from another build's */
	if (!build_id[0])
		return -ENOENT;
	memcpy(h->build_id, build_id, sizeof(build_id));
	if (uname(&u))
		return -errno;
	snprintf(h->release, sizeof(h->release), "%s", u.release);
	h->size = size;
	return read_boot_id(h->boot_id, sizeof(h->boot_id));
}

/*
 * Whether the kallsyms text of f shows the kernel's addresses: its first symbol that is not
 * absolute has an address other than 0. The per-CPU symbols of 6.1 and 6.12 (x86-64's
 * fixed_percpu_data, first of all) are absolute at 0 for every reader.
 */
static bool shows_addresses(FILE *f)
{
	char line[512];

	for (int i = 0; i < 4096 && fgets(line, sizeof(line), f); i++) {
		unsigned long long addr;
		char type;

		if (sscanf(line, "%llx %c", &addr, &type) != 2)
			return false;
		if (addr)
			return true;
		if (type != 'A' && type != 'a')
			return false;
	}
	return false;
}

/*
 * Whether /proc/kallsyms shows this process the kernel's addresses (CAP_SYSLOG, or a
 * kernel.kptr_restrict that allows it). Root without CAP_SYSLOG may open root's 0600 files,
 * but must not learn from them what it cannot learn itself: its results would depend on a
 * privileged run before it. SCHEDPROF_TEST_KALLSYMS names another file to read (tests).
 */
static bool sees_kernel_addresses(void)
{
	static int sees = -1;
	const char *path = test_hook("SCHEDPROF_TEST_KALLSYMS");
	FILE *f;

	if (sees >= 0)
		return sees;
	f = fopen(path ? path : "/proc/kallsyms", "re");
	sees = f && shows_addresses(f);
	if (f)
		fclose(f);
	return sees;
}

static void cache_path(const char *dir, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", dir ? dir : CACHE_DIR, name);
}

/*
 * Opens dir/name for reading when it is a regular file of root's or ours that nobody else
 * may write. The fd, or -ENOENT (no valid cache); why says why not.
 */
static int cache_open(const char *dir, const char *name, const char **why)
{
	char path[4096];
	struct stat st;
	int fd;

	cache_path(dir, name, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		*why = errno == ENOENT ? "absent" : errno == ELOOP ? "a symbolic link" :
		       errno == EACCES ? "not readable by this user" : "cannot be opened";
		return -ENOENT;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
	} else if (st.st_uid && st.st_uid != geteuid()) {
		*why = "another user's";
	} else if (st.st_mode & 022) {
		*why = "writable by others";
	} else {
		return fd;
	}
	close(fd);
	return -ENOENT;
}

static uint64_t data_hash(const void *data, size_t size)
{
	return hashmap_hash_bytes(data, size, 0x5c4edc0de);
}

/*
 * Reads the file of fd: its header checked against this run's for kind, then its data (at
 * most max bytes, exactly as many as the header says, with its hash). why: why not.
 */
static int read_checked(int fd, enum cache_kind kind, size_t max, void **ret_data,
			size_t *ret_size, const char **why)
{
	struct header want, got;
	char extra;
	void *buf;

	if (make_header(&want, kind, 0)) {
		*why = "this build has no build-id";
		return -ENOENT;
	}
	if (kinds[kind].addresses && !sees_kernel_addresses()) {
		*why = "kernel addresses, which kallsyms hides from this process";
		return -ENOENT;
	}
	if (read(fd, &got, sizeof(got)) != (ssize_t)sizeof(got) ||
	    memcmp(got.magic, want.magic, sizeof(got.magic)) || got.version != want.version ||
	    got.kind != want.kind || memcmp(got.name, want.name, sizeof(got.name))) {
		*why = "another format or kind";
		return -ENOENT;
	}
	if (strncmp(got.boot_id, want.boot_id, sizeof(got.boot_id))) {
		*why = "another boot's";
		return -ENOENT;
	}
	if (strncmp(got.release, want.release, sizeof(got.release))) {
		*why = "another kernel's";
		return -ENOENT;
	}
	if (strncmp(got.build_id, want.build_id, sizeof(got.build_id))) {
		*why = "another build's";
		return -ENOENT;
	}
	if (got.size > max) {
		*why = "too large";
		return -ENOENT;
	}
	buf = malloc(got.size ? got.size : 1);
	if (!buf)
		return -ENOMEM;
	/* exactly size bytes: a short or a longer file is not this cache */
	if ((got.size && read(fd, buf, got.size) != (ssize_t)got.size) ||
	    read(fd, &extra, 1) != 0 || data_hash(buf, got.size) != got.hash) {
		free(buf);
		*why = "damaged";
		return -ENOENT;
	}
	*ret_data = buf;
	*ret_size = got.size;
	return 0;
}

/* cache_load() of the file name in dir; touch: a hit is marked used (its mtime). */
static int load_file(const char *dir, enum cache_kind kind, const char *name, bool touch,
		     size_t max, void **ret_data, size_t *ret_size)
{
	const char *why;
	int fd, err;

	if (disabled)
		return -ENOENT;
	fd = cache_open(dir, name, &why);
	if (fd < 0)
		return fd;
	err = read_checked(fd, kind, max, ret_data, ret_size, &why);
	if (!err && touch)
		(void)futimens(fd, NULL); /* another user's file stays as it is */
	close(fd);
	return err;
}

int cache_load(const char *dir, enum cache_kind kind, size_t max, void **ret_data,
	       size_t *ret_size)
{
	return load_file(dir, kind, cache_file_name(kind), false, max, ret_data, ret_size);
}

/* KIND-ENTRY.cache into buf, or -EINVAL for an entry name not of [0-9a-z-]{1,96}. */
static int entry_name(enum cache_kind kind, const char *entry, char *buf, size_t len)
{
	size_t n = strlen(entry);

	if (!kinds[kind].entries || !n || n > 96 ||
	    strspn(entry, "0123456789abcdefghijklmnopqrstuvwxyz-") != n)
		return -EINVAL;
	snprintf(buf, len, "%s-%s.cache", kinds[kind].name, entry);
	return 0;
}

int cache_load_entry(const char *dir, enum cache_kind kind, const char *entry, size_t max,
		     void **ret_data, size_t *ret_size)
{
	char name[160];
	int err = entry_name(kind, entry, name, sizeof(name));

	return err ? err : load_file(dir, kind, name, true, max, ret_data, ret_size);
}

int cache_load_fixed(const char *dir, enum cache_kind kind, void *data, size_t size)
{
	void *buf;
	size_t n;
	int err = cache_load(dir, kind, size, &buf, &n);

	if (err)
		return err;
	if (n == size)
		memcpy(data, buf, size);
	else
		err = -ENOENT;
	free(buf);
	return err;
}

/*
 * CACHE_DIR, root's and 0755: anyone may read the shared caches in it, nobody else write.
 * An older 0700 one of ours is opened up when a shared cache goes in.
 */
static int make_dir(bool shared)
{
	struct stat st;

	if (mkdir(CACHE_DIR, 0755) && errno != EEXIST)
		return -errno;
	if (!shared || lstat(CACHE_DIR, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 07777) == 0755)
		return 0;
	return chmod(CACHE_DIR, 0755) ? -errno : 0;
}

/* cache_store() into the file name of dir. */
static int store_file(const char *dir, enum cache_kind kind, const char *name, const void *data,
		      size_t size)
{
	bool shared = kinds[kind].shared;
	char path[4096], tmp[4200];
	struct header h;
	int fd, err;

	if (disabled)
		return 0;
	err = make_header(&h, kind, size);
	if (err)
		return err;
	h.hash = data_hash(data, size);
	if (!dir && (err = make_dir(shared)))
		return err;
	cache_path(dir, name, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (shared && fchmod(fd, 0644)) /* the umask aside */
		err = -errno;
	else if (write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) ||
		 (size && write(fd, data, size) != (ssize_t)size))
		err = -EIO;
	else if (fsync(fd))
		err = -errno;
	close(fd);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int cache_store(const char *dir, enum cache_kind kind, const void *data, size_t size)
{
	return store_file(dir, kind, cache_file_name(kind), data, size);
}

/* A file of kind's entries: NAME-*.cache. */
static bool entry_file(enum cache_kind kind, const char *name)
{
	size_t n = strlen(name), k = strlen(kinds[kind].name);

	return kinds[kind].entries && n > k + 7 && !strncmp(name, kinds[kind].name, k) &&
	       name[k] == '-' && !strcmp(name + n - 6, ".cache");
}

struct entry_file {
	char name[160];
	struct timespec used;
	uint64_t size;
};

static int by_use(const void *a, const void *b)
{
	const struct timespec *x = &((const struct entry_file *)a)->used;
	const struct timespec *y = &((const struct entry_file *)b)->used;

	if (x->tv_sec != y->tv_sec)
		return x->tv_sec < y->tv_sec ? -1 : 1;
	return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/*
 * Removes kind's least recently used files of dir (but keep, which is being replaced) until
 * theirs and add more bytes fit max_total. 0 or -errno (-ENOMEM).
 */
static int evict(const char *dir, enum cache_kind kind, const char *keep, uint64_t add,
		 uint64_t max_total)
{
	DIR *dp = opendir(dir ? dir : CACHE_DIR);
	struct entry_file *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = add;
	struct dirent *e;
	struct stat st;
	int err = 0;

	if (!dp)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(dp))) {
		if (!entry_file(kind, e->d_name) || !strcmp(e->d_name, keep) ||
		    strlen(e->d_name) >= sizeof(v->name) ||
		    fstatat(dirfd(dp), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (n == cap) {
			struct entry_file *nv = reallocarray(v, cap ? 2 * cap : 16, sizeof(*v));

			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
			cap = cap ? 2 * cap : 16;
		}
		snprintf(v[n].name, sizeof(v[n].name), "%s", e->d_name);
		v[n].used = st.st_mtim;
		v[n].size = (uint64_t)st.st_size;
		total += v[n++].size;
	}
	if (!err && n)
		qsort(v, n, sizeof(*v), by_use);
	for (size_t i = 0; !err && i < n && total > max_total; i++) {
		if (unlinkat(dirfd(dp), v[i].name, 0) == 0 || errno == ENOENT)
			total -= v[i].size;
	}
	free(v);
	closedir(dp);
	return err;
}

int cache_store_entry(const char *dir, enum cache_kind kind, const char *entry,
		      const void *data, size_t size, uint64_t max_total)
{
	char name[160];
	int err = entry_name(kind, entry, name, sizeof(name));

	if (err)
		return err;
	if (disabled)
		return 0;
	if (size + sizeof(struct header) > max_total)
		return -EFBIG;
	err = evict(dir, kind, name, size + sizeof(struct header), max_total);
	return err ? err : store_file(dir, kind, name, data, size);
}

/* The kind whose file is name, or CACHE__N. */
static enum cache_kind kind_of(const char *name)
{
	for (int k = 0; k < CACHE__N; k++)
		if (!strcmp(name, cache_file_name((enum cache_kind)k)))
			return (enum cache_kind)k;
	return CACHE__N;
}

/* A file of ours: a cache, one being written (NAME.cache.PID), or an older build's. */
static bool ours(const char *name)
{
	size_t n = strlen(name);

	return strstr(name, ".cache") || (n > 4 && !strcmp(name + n - 4, ".btf"));
}

/*
 * `cache show`'s line for a kind of a file per entry: NAME-*.cache, how many files and bytes,
 * and how many of them this run would use.
 */
static void show_entries(const char *dir, enum cache_kind kind, FILE *f)
{
	DIR *dp = opendir(dir ? dir : CACHE_DIR);
	unsigned int files = 0, used = 0;
	uint64_t bytes = 0;
	struct dirent *e;
	char label[32];

	while (dp && (e = readdir(dp))) {
		const char *why;
		struct stat st;
		size_t n;
		void *data;
		int fd;

		if (!entry_file(kind, e->d_name))
			continue;
		files++;
		if (!fstatat(dirfd(dp), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			bytes += (uint64_t)st.st_size;
		fd = cache_open(dir, e->d_name, &why);
		if (fd < 0)
			continue;
		if (!read_checked(fd, kind, SHOW_MAX, &data, &n, &why)) {
			used++;
			free(data);
		}
		close(fd);
	}
	if (dp)
		closedir(dp);
	snprintf(label, sizeof(label), "%s-*.cache", kinds[kind].name);
	if (!files)
		fprintf(f, "%-16s %9s  %-8s %s\n", label, "-", "absent", kinds[kind].what);
	else
		fprintf(f, "%-16s %9" PRIu64 "  %u/%-6u %s (%u files)\n", label, bytes, used, files,
			kinds[kind].what, files);
}

int cache_show(const char *dir, FILE *f)
{
	const char *d = dir ? dir : CACHE_DIR;

	fprintf(f, "%-16s %9s  %-8s %s\n", "FILE", "BYTES", "USED", "HOLDS");
	for (int k = 0; k < CACHE__N; k++) {
		const char *why = NULL, *name = cache_file_name((enum cache_kind)k);
		size_t size = 0, n;
		void *data = NULL;
		char path[4096];
		struct stat st;
		int fd;

		if (kinds[k].entries) {
			show_entries(dir, (enum cache_kind)k, f);
			continue;
		}
		fd = cache_open(dir, name, &why);

		if (fd >= 0) {
			int err = read_checked(fd, (enum cache_kind)k, SHOW_MAX, &data, &n, &why);

			if (!err)
				why = NULL;
			else if (err == -ENOMEM)
				why = "no memory to read it";
			close(fd);
			free(data);
		}
		cache_path(dir, name, path, sizeof(path));
		if (!lstat(path, &st))
			size = (size_t)st.st_size;
		if (why && !strcmp(why, "absent"))
			fprintf(f, "%-16s %9s  %-8s %s\n", name, "-", "absent", kinds[k].what);
		else
			fprintf(f, "%-16s %9zu  %-8s %s%s%s%s\n", name, size, why ? "no" : "yes",
				kinds[k].what, why ? " (" : "", why ? why : "", why ? ")" : "");
	}
	if (disabled)
		fprintf(f, "(--no-cache: none is read or written)\n");
	fprintf(f, "in %s\n", d);
	return fflush(f) || ferror(f) ? -EIO : 0;
}

int cache_clear(const char *dir, unsigned int *ret_n)
{
	const char *d = dir ? dir : CACHE_DIR;
	DIR *dp = opendir(d);
	struct dirent *e;
	int err = 0;

	*ret_n = 0;
	if (!dp)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(dp))) {
		if (!ours(e->d_name) && kind_of(e->d_name) == CACHE__N)
			continue;
		if (unlinkat(dirfd(dp), e->d_name, 0) == 0)
			++*ret_n;
		else if (errno != ENOENT)
			err = -errno;
	}
	closedir(dp);
	return err;
}
