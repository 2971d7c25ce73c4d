/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the tests of elfsyms and buildid_cache share about the symtarget ELF files that
 * tests/meson.build builds from symtarget.c: the functions they export, an independent
 * symbol reference (a libelf walk written here), a live target process that reports the
 * addresses of its functions, and temporary build-id trees.
 */
#ifndef SCHEDPROF_TEST_SYMTARGET_FIXTURE_H
#define SCHEDPROF_TEST_SYMTARGET_FIXTURE_H

#include <check.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "symbols/elfsyms.h"

#define NFUNCS 3
static const char *const func_names[NFUNCS] = { "sp_target_alpha", "sp_target_beta",
						"sp_target_big" };

/* ---- independent reference: symbol value/size straight from the symbol table ---- */

static inline bool ref_sym(const char *path, GElf_Word sh_type, const char *name, uint64_t *ret_addr,
		    uint64_t *ret_size)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	Elf *elf;
	int fd;

	ck_assert_int_ne(elf_version(EV_CURRENT), EV_NONE);
	fd = open(path, O_RDONLY);
	ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	while (!found && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != sh_type)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *s;
			GElf_Sym sym;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name) && sym.st_shndx != SHN_UNDEF) {
				*ret_addr = sym.st_value;
				*ret_size = sym.st_size;
				found = true;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

static inline void ref_func(const char *path, const char *name, uint64_t *ret_addr, uint64_t *ret_size)
{
	ck_assert_msg(ref_sym(path, SHT_SYMTAB, name, ret_addr, ret_size), "%s not in %s", name,
		      path);
	ck_assert_uint_gt(*ret_size, 0);
}

/* ---- a live target process ---- */

struct child {
	pid_t pid;
	int in_fd;
	FILE *out;
	uint64_t addr[NFUNCS];
};

static inline void child_start(const char *bin, struct child *ch)
{
	int in[2], out[2];
	char line[256];
	size_t i;

	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(out), 0);
	ch->pid = fork();
	ck_assert_int_ge(ch->pid, 0);
	if (!ch->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	ch->in_fd = in[1];
	ch->out = fdopen(out[0], "r");
	ck_assert_ptr_nonnull(ch->out);
	for (i = 0; i < NFUNCS; i++) {
		char name[64];
		void *p;

		ck_assert_ptr_nonnull(fgets(line, sizeof(line), ch->out));
		ck_assert_int_eq(sscanf(line, "%63s %p", name, &p), 2);
		ck_assert_str_eq(name, func_names[i]);
		ch->addr[i] = (uint64_t)(uintptr_t)p;
	}
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), ch->out));
	ck_assert_str_eq(line, "ready\n");
}

static inline void child_finish(struct child *ch)
{
	int status;

	close(ch->in_fd);
	fclose(ch->out);
	ck_assert_int_eq(waitpid(ch->pid, &status, 0), ch->pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The file offsets of the target's functions, from its own maps (pgoff + ip - start). */
static inline void runtime_offsets(const char *bin, uint64_t *offs)
{
	char want[PATH_MAX], got[PATH_MAX];
	struct proc_map *maps;
	struct child ch;
	size_t n, i;

	ck_assert_ptr_nonnull(realpath(bin, want));
	child_start(bin, &ch);
	ck_assert_int_eq(proc_maps__read(ch.pid, &maps, &n), 0);
	for (i = 0; i < NFUNCS; i++) {
		const struct proc_map *m = proc_maps__find(maps, n, ch.addr[i]);

		ck_assert_ptr_nonnull(m);
		ck_assert_int_eq(m->perms[2], 'x');
		ck_assert_ptr_nonnull(realpath(m->path, got));
		ck_assert_str_eq(got, want);
		offs[i] = m->pgoff + ch.addr[i] - m->start;
	}
	proc_maps__free(maps, n);
	child_finish(&ch);
}

/* ---- temporary files ---- */

static inline void copy_file(const char *src, const char *dst)
{
	char buf[65536];
	ssize_t r;
	int in, out;

	in = open(src, O_RDONLY);
	ck_assert_int_ge(in, 0);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ck_assert_int_ge(out, 0);
	while ((r = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)r), r);
	ck_assert_int_eq(r, 0);
	close(in);
	close(out);
}

static inline void make_tmpdir(char *buf, size_t len)
{
	const char *t = getenv("TMPDIR");

	snprintf(buf, len, "%s/test_symtarget.XXXXXX", t && *t ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(buf));
}

static inline void rm_rf(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Installs file as <root>/.build-id/xx/rest.debug for the build-id of id_of. */
static inline void install_debug_file(const char *root, const char *id_of, const char *file)
{
	char hex[2 * ELF_BUILD_ID_MAX + 1], path[PATH_MAX + 2 * ELF_BUILD_ID_MAX + 32];
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t len;

	ck_assert_int_eq(elf_read_build_id(id_of, id, sizeof(id), &len), 0);
	elf_build_id_hex(id, len, hex, sizeof(hex));
	snprintf(path, sizeof(path), "%s/.build-id", root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s", root, hex);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", root, hex, hex + 2);
	copy_file(file, path);
}

#endif
