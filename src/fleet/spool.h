/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The agent's bounded on-disk queue (--spool DIR, --spool-limit): one file per interval,
 * DIR/SEQ.batch (agent_rows.h's text, gzip'd; the limit counts the files' sizes), written to a temporary file and renamed, sent oldest
 * first and removed once the sink has it. The agent's next sequence number lives in DIR/seq,
 * so a restarted agent goes on from there and sends what the last one left. When a new
 * interval would pass the limit, the oldest intervals not being sent are dropped (counted).
 * Thread-safe: the tracing thread puts, the sender takes.
 */
#ifndef SCHEDPROF_SPOOL_H
#define SCHEDPROF_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct spool;

/* Opens (creates, mode 0700) dir: its sequence number and the intervals left in it. */
int spool_open(const char *dir, uint64_t limit, struct spool **ret);
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
 * A file that cannot be read (gone, not gzip) is removed from the queue, its seq in *ret_seq,
 * and the error returned (-EIO for a file gone).
 */
int spool_take(struct spool *s, uint64_t *ret_seq, char **ret_text, size_t *ret_len);
/* The interval taken is delivered (removed) or not (left queued). */
void spool_done(struct spool *s, uint64_t seq, bool delivered);

/*
 * Losses not yet written into a batch when the agent stops (intervals dropped or not
 * spooled), kept in DIR/carry for the next start's first batch. load: read and removed.
 */
int spool_carry_save(struct spool *s, uint64_t dropped, uint64_t unwritten);
void spool_carry_load(struct spool *s, uint64_t *ret_dropped, uint64_t *ret_unwritten);

/* Intervals queued and their bytes. */
size_t spool_count(struct spool *s, uint64_t *ret_bytes);

#endif
