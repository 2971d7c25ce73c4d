/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The agent's bounded on-disk queue (--spool DIR, --spool-limit): one file per interval,
 * DIR/SEQ.batch (agent_rows.h's text, gzip'd; the limit counts the files' sizes), written to a
 * temporary file created exclusively (never through a link) and renamed, sent oldest first and
 * removed once the sink has it. The agent's next sequence number lives in DIR/seq, so a
 * restarted agent goes on from there and sends what the last one left. When a new interval
 * would pass the limit, the oldest intervals not being sent are dropped (counted).
 * Only a directory of the agent's own user that its group and others cannot write is used,
 * by one agent at a time (flock() on DIR/lock). Every file is opened relative to the
 * directory opened once, none through a link.
 * Thread-safe: the tracing thread puts, the sender takes.
 */
#ifndef SCHEDPROF_SPOOL_H
#define SCHEDPROF_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct spool;

/* The largest sequence number: DIR/seq holding more (or anything else) is refused. */
#define SPOOL_SEQ_MAX ((uint64_t)INT64_MAX)

/*
 * Opens dir (created with its missing parents, mode 0700), locks it, and reads its sequence
 * number and the intervals left in it. On failure, why (when not NULL) says why in a phrase
 * for "cannot use the spool directory DIR: WHY" when the errno alone does not: -EPERM (another
 * user's, or writable by its group or others), -ELOOP (a symbolic link), -EBUSY (another agent holds it), -EBADMSG (its
 * seq file), or a directory that cannot be written (-EROFS, -EACCES). A full disk is no error.
 */
int spool_open(const char *dir, uint64_t limit, struct spool **ret, char *why, size_t whylen);
void spool_close(struct spool *s);

/* The next interval's sequence number (from 1), persisted before it is returned. */
int spool_next_seq(struct spool *s, uint64_t *ret_seq);

/*
 * Queues interval seq (text, len bytes). Room is made first by dropping the oldest intervals
 * (never the one being sent); an interval larger than the limit alone is dropped itself.
 * *ret_dropped: how many intervals were dropped (the first and last in *ret_first/ret_last).
 * 0 or -errno (the disk: the interval is not queued, and not counted as dropped).
 */
int spool_put(struct spool *s, uint64_t seq, const char *text, size_t len, uint64_t *ret_dropped,
	      uint64_t *ret_first, uint64_t *ret_last);

/*
 * Called with the text of each interval spool_put() drops to make room, before it goes (so
 * the losses it carried can be carried on); from the thread that puts.
 */
typedef void (*spool_drop_fn)(void *ctx, const char *text, size_t len);
void spool_on_drop(struct spool *s, spool_drop_fn fn, void *ctx);

/*
 * The oldest interval, read into *ret_text (malloc'ed), marked as being sent; -ENOENT: none.
 * A file that cannot be read is removed from the queue, its seq in *ret_seq, and the error
 * returned: -EIO (gone, or gzip cut short), -ENODATA (empty), -EBADMSG (not gzip, not a file).
 */
int spool_take(struct spool *s, uint64_t *ret_seq, char **ret_text, size_t *ret_len);
/* The interval taken is delivered (removed) or not (left queued). */
void spool_done(struct spool *s, uint64_t seq, bool delivered);

/*
 * Losses no batch in the spool carries yet (intervals dropped or not spooled), kept in
 * DIR/carry for the next start's first batch: a record of fixed length made at open and
 * rewritten in place, so that a full disk still takes the count. save: whenever the count
 * changes (0 once a batch carries it); load: what the last save left.
 */
int spool_carry_save(struct spool *s, uint64_t dropped, uint64_t unwritten);
void spool_carry_load(struct spool *s, uint64_t *ret_dropped, uint64_t *ret_unwritten);

/* Intervals queued and their bytes. */
size_t spool_count(struct spool *s, uint64_t *ret_bytes);

#endif
