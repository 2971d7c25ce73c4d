/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Output files: opened before the work that fills them, so a mistyped -o or --save fails at
 * once instead of after a whole trace; written to a file of their own in the same directory,
 * created exclusively (O_TMPFILE where the file system has it: nothing is left by a crash;
 * else a random hidden name, O_EXCL) and put in place only when complete, so a failed write
 * (a full disk) leaves neither a truncated file nor a clobbered old one.
 *
 * A link is followed only when it belongs to root, to schedprof's user or to the sudo caller
 * (another user's is refused), to the file it leads to, which is replaced. A FIFO or a
 * character device (/dev/null, /dev/stdout to a pipe, a terminal) is written in place when
 * it, and the link to it if any, belong to one of those; anyone else's is refused, as is a
 * block device, so that another user cannot plant a link or a FIFO in a shared directory
 * (/tmp) to have a run written where they choose. A descriptor's link (/dev/stdout,
 * /proc/self/fd/N) to a file is appended to in place, as the shell opened it. A new file's
 * mode is the umask's, or the replaced file's permission bits (no set-id bits) when that
 * file is schedprof's user's and no link led to it; under sudo it belongs to the invoking
 * user. Write errors keep their errno (ENOSPC, EPIPE), not stdio's EIO.
 */
#ifndef SCHEDPROF_OUTPUT_H
#define SCHEDPROF_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

struct cli_output {
	const char *path; /* NULL: standard output */
	FILE *f;	  /* NULL: nothing open */
	int fd;		  /* what f writes (stdout's 1) */
	int dirfd;	  /* path's directory, -1 when written in place */
	char *base;	  /* path's last component */
	char *tmp;	  /* the hidden name of the file in dirfd (no O_TMPFILE), or NULL */
	char *owned;	  /* path, when it was made here (cli_output_open_unique) */
	int werr;	  /* the first write error's errno */
};

/* Opens path (NULL: stdout). Logs "cannot write PATH: why" on failure. 0 or -errno. */
int cli_output_open(struct cli_output *o, const char *path);
/*
 * A new file DIR/PREFIX<random>SUFFIX of mode 0600 (o->path names it), created exclusively
 * without following a link: nobody can guess the name in advance. Logged on failure.
 */
int cli_output_open_unique(struct cli_output *o, const char *dir, const char *prefix,
			   const char *suffix);
/*
 * Flushes and closes f, then puts the file in place. On any error the file is removed. Not
 * logged. 0 or -errno (-EPIPE: stdout's reader has gone).
 */
int cli_output_commit(struct cli_output *o);
/* The errno of what failed to be written (0: none): write_fn's -EIO from ferror() says less. */
int cli_output_error(const struct cli_output *o);
/* Closes and removes what was written (a run that failed). Safe to call twice. */
void cli_output_abort(struct cli_output *o);

#endif
