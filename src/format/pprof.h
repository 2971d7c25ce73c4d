/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A minimal pprof (profile.proto) writer: samples of symbolized stacks in, a gzip-compressed
 * protobuf out, loadable by `go tool pprof`, Pyroscope and Parca. It knows nothing about
 * schedprof's views; format_pprof maps the run model onto it.
 *
 * A frame with its address (a user frame's offset in its file, a kernel frame's
 * address) is a Location at that address in a Mapping of its object that spans the whole
 * address space from 0 with file offset 0 (pprof's convention for "already adjusted", so the
 * address is symbolized as it is), with the object's build-id: pprof, Parca or a
 * debuginfod-backed server can symbolize it later. Frames inlined into the next one are
 * extra Lines of that Location (innermost first). A frame that no symbol named (`unresolved`)
 * has no Line at all, which tells those tools to symbolize it, when no frame of its object was
 * named (a stripped binary): has_functions is per Mapping, and a client symbolizes all of a
 * mapping that has it false, replacing the names given; in an object with named frames it
 * keeps its placeholder name ("cc1+0x1a2b3c") as its Line.
 * A frame without an address gets, per distinct (function, object), one Function and one
 * Location with a synthetic address inside another Mapping of the object, so tools that key
 * on addresses still see stable, unique ones.
 */
#ifndef SCHEDPROF_PPROF_H
#define SCHEDPROF_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pprof;

struct pprof_frame {
	const char *function; /* symbol name, e.g. "anon_pipe_read" or "[unknown]"; not NULL */
	const char *object;   /* mapping file: "[kernel]", "/usr/bin/cc1", NULL = "[kernel]" */
	const char *build_id; /* hex build-id of object, or NULL */
	/* what else is known of the frame; 0, NULL, false: unknown */
	uint64_t addr;		 /* its address in the mapping (file offset, kernel address) */
	const char *system_name; /* the symbol table's name when function is demangled */
	const char *file;	 /* source file */
	unsigned int line;	 /* source line */
	bool inlined;		 /* inlined into the next frame: a Line of the same Location */
	bool unresolved;	 /* with addr: no symbol named it (no Line if none of its object's
				    frames was named: pprof.c, mapping_to_symbolize()) */
};

/*
 * A sample label: a string label (is_num false, str not NULL) or a numeric one (is_num true).
 * Format limitation: readers (Go's profile package) drop a numeric label whose value is 0 and
 * a string label whose value is "", because both encode as "absent" in proto3.
 */
struct pprof_label {
	const char *key;
	const char *str;
	int64_t num;
	bool is_num;
};

/*
 * sample_types[i]/units[i] describe values[i] of every sample, e.g. {"offcpu", "nanoseconds"}.
 * period_type/period_unit may be NULL to leave period_type unset. Returns NULL with errno set
 * (EINVAL on bad arguments, ENOMEM).
 */
struct pprof *pprof__new(const char *const *sample_types, const char *const *units, size_t ntypes,
			 int64_t duration_ns, int64_t time_unix_ns, const char *period_type,
			 const char *period_unit, int64_t period);
void pprof__free(struct pprof *p);

/*
 * frames[0] is the leaf. values has ntypes entries. Identical frames, functions, mappings and
 * strings are deduplicated; samples are kept as added (readers sum equal stacks). A failed call
 * leaves the profile valid, without the sample. Returns 0, -EINVAL, -E2BIG or -ENOMEM.
 */
int pprof__add_sample(struct pprof *p, const struct pprof_frame *frames, size_t nframes,
		      const int64_t *values, const struct pprof_label *labels, size_t nlabels);
int pprof__add_comment(struct pprof *p, const char *comment);

/* gzip-compressed profile.proto (what the spec requires on disk); flushes f. 0 or -errno. */
int pprof__write(struct pprof *p, FILE *f);
/* Uncompressed profile.proto in a malloc'd buffer the caller frees. 0 or -errno. */
int pprof__encode(struct pprof *p, uint8_t **ret_buf, size_t *ret_len);

#endif /* SCHEDPROF_PPROF_H */
