/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The saved-run JSON schema as a markdown reference (docs/json-schema.md), printed from the
 * same field descriptors that write and read it (schema.h), so that the page cannot describe
 * a key the writer does not write.
 */
#ifndef SCHEDPROF_SCHEMA_DOC_H
#define SCHEDPROF_SCHEMA_DOC_H

#include <stdio.h>

/* Writes the page to f. 0, or -EIO when f reports an error. */
int sp_schema_doc(FILE *f);

#endif
