/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Saved run -> run model: reads the "schedprof/1" document that format_json.c writes back
 * into a struct sp_run, so `report` and `diff` render a saved run exactly as `trace` did.
 *
 * Strict: the document must be valid JSON (json_reader.h), "schema" must be SP_SCHEMA, every
 * key the writer always writes must be there with its type, counts and times are integers
 * from 0 to INT64_MAX. Keys the writer writes only sometimes (target.pids, target.command,
 * stacks[].objects, the views, ...) are optional. Unknown keys are ignored, so later
 * versions may add keys without a new schema. Rows keep their order in the document.
 */
#ifndef SCHEDPROF_MODEL_JSON_H
#define SCHEDPROF_MODEL_JSON_H

#include <stddef.h>
#include "model/model.h"

/* Largest file sp_run_load_json() reads (the parsed tree takes about 10 times as much). */
#define SP_RUN_JSON_MAX_SIZE (512u << 20)

/*
 * Parses len bytes at buf into *ret_run (initialized here; the caller frees it with
 * sp_run_free(), also after a failure). Returns 0, -EINVAL for a malformed document or one
 * that is not a schedprof run, or -ENOMEM. On -EINVAL, errbuf (if not NULL) gets one line
 * naming the place: "line 3, column 7: ..." for JSON syntax, or the key path for the
 * content ("schedules.callers[2].count: expected an integer from 0 to ...").
 */
int sp_run_from_json(const char *buf, size_t len, struct sp_run *ret_run, char *errbuf,
		     size_t errlen);

/*
 * Reads the file at path ("-" is standard input) and parses it as above. Also returns -errno
 * when it cannot be read and -EFBIG beyond SP_RUN_JSON_MAX_SIZE; errbuf says which.
 */
int sp_run_load_json(const char *path, struct sp_run *ret_run, char *errbuf, size_t errlen);

#endif
