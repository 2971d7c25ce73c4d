// SPDX-License-Identifier: BSD-2-Clause
/* `report --what-if` (whatif.h) as a table, or as JSON ({"what_if": ...}). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include "base/json_writer.h"
#include "format/format_whatif.h"
#include "base/util.h"

static double rel(uint64_t a, uint64_t b)
{
	return b ? 100.0 * ((double)a - (double)b) / (double)b : 0;
}

static void print_base_head(FILE *f)
{
	fprintf(f, "\n  %-6s %11s %12s %14s %11s\n", "CPUs", "predicted", "parallelism",
		"critical path", "bound");
}

int format_whatif_table(const struct sp_whatif *w, FILE *f)
{
	const struct sp_whatif_case *base = &w->cases[0];
	char d1[32], d2[32], d3[32];
	uint64_t forced = 0;

	fprintf(f, "what if: the job's wall time replayed from its timeline on other CPU counts\n");
	fprintf(f, "  graph: %" PRIu64 " tasks, %" PRIu64 " bursts (%s of CPU), %" PRIu64
		" wake-ups, %" PRIu64 " forks, %" PRIu64 " exits, %" PRIu64 " fixed sleeps (%s)\n",
		w->tasks, w->bursts, fmt_duration(base->work_ns, d1, sizeof(d1)), w->counts.wakes,
		w->counts.forks, w->counts.exits, w->counts.fixed,
		fmt_duration(w->counts.fixed_ns, d2, sizeof(d2)));
	fprintf(f, "  traced on %d CPU%s: %s measured, %s replayed (%+.1f%%)\n", w->traced_cpus,
		w->traced_cpus == 1 ? "" : "s", fmt_duration(w->measured_ns, d1, sizeof(d1)),
		fmt_duration(w->replayed_ns, d2, sizeof(d2)), rel(w->replayed_ns, w->measured_ns));
	fprintf(f, "  bounds: work / P, and the critical path %s (unlimited CPUs)\n",
		fmt_duration(base->cp_ns, d3, sizeof(d3)));
	for (size_t k = 0; k < w->ncases; k++) {
		const struct sp_whatif_case *c = &w->cases[k];

		if (c->spec) {
			fprintf(f, "\nwithout %s: %" PRIu64 " sleep%s (%s) shortened to zero; "
				"critical path %s\n", c->spec, c->sleeps, c->sleeps == 1 ? "" : "s",
				fmt_duration(c->sleep_ns, d1, sizeof(d1)),
				fmt_duration(c->cp_ns, d2, sizeof(d2)));
			fprintf(f, "  %-6s %11s %12s %14s %18s\n", "CPUs", "predicted",
				"parallelism", "critical path", "saving");
		} else {
			print_base_head(f);
		}
		for (size_t i = 0; i < w->npreds; i++) {
			const struct sp_whatif_pred *p = &c->preds[i];

			forced += p->forced;
			fprintf(f, "  %-6d %11s %12.2f %13.0f%% ", p->cpus,
				fmt_duration(p->wall_ns, d1, sizeof(d1)), p->parallelism,
				100.0 * p->cp_share);
			if (c->spec)
				fprintf(f, "%10s (%4.1f%%)\n",
					fmt_duration(p->saving_ns, d2, sizeof(d2)),
					base->preds[i].wall_ns ? 100.0 * (double)p->saving_ns /
						(double)base->preds[i].wall_ns : 0);
			else
				fprintf(f, "%11s\n", fmt_duration(p->bound_ns, d2, sizeof(d2)));
		}
	}
	if (forced)
		fprintf(f, "\n  note: %" PRIu64 " bursts were released before their wake-up (wake-ups "
			"in a cycle: tied times)\n", forced);
	fprintf(f, "\n  the model ignores caches and memory bandwidth, SMT, CPU frequency, and lock "
		"hold\n  times that change with contention (docs/what-if.md)\n");
	return ferror(f) ? -EIO : 0;
}

static void write_preds(struct json_writer *jw, const struct sp_whatif_case *c, size_t n)
{
	jw_name(jw, "predictions");
	jw_start_array(jw);
	for (size_t i = 0; i < n; i++) {
		const struct sp_whatif_pred *p = &c->preds[i];

		jw_start_object_inline(jw);
		jw_kv_int(jw, "cpus", p->cpus);
		jw_kv_uint(jw, "wall_ns", p->wall_ns);
		jw_kv_double(jw, "parallelism", p->parallelism);
		jw_kv_double(jw, "critical_path_share", p->cp_share);
		if (c->spec)
			jw_kv_uint(jw, "saving_ns", p->saving_ns);
		else
			jw_kv_uint(jw, "bound_ns", p->bound_ns);
		jw_kv_uint(jw, "forced", p->forced);
		jw_end_object(jw);
	}
	jw_end_array(jw);
}

/* w as the object of "what_if". */
static void write_whatif(struct json_writer *jw, const struct sp_whatif *w)
{
	const struct sp_whatif_case *base = &w->cases[0];

	jw_start_object(jw);
	jw_kv_int(jw, "traced_cpus", w->traced_cpus);
	jw_kv_uint(jw, "measured_ns", w->measured_ns);
	jw_kv_uint(jw, "replayed_ns", w->replayed_ns);
	jw_kv_uint(jw, "tasks", w->tasks);
	jw_kv_uint(jw, "bursts", w->bursts);
	jw_kv_uint(jw, "wakes", w->counts.wakes);
	jw_kv_uint(jw, "forks", w->counts.forks);
	jw_kv_uint(jw, "exits", w->counts.exits);
	jw_kv_uint(jw, "fixed", w->counts.fixed);
	jw_kv_uint(jw, "fixed_ns", w->counts.fixed_ns);
	jw_kv_uint(jw, "work_ns", base->work_ns);
	jw_kv_uint(jw, "critical_path_ns", base->cp_ns);
	write_preds(jw, base, w->npreds);
	jw_name(jw, "without");
	jw_start_array(jw);
	for (size_t k = 1; k < w->ncases; k++) {
		const struct sp_whatif_case *c = &w->cases[k];

		jw_start_object(jw);
		jw_kv_string(jw, "spec", c->spec);
		jw_kv_uint(jw, "sleeps", c->sleeps);
		jw_kv_uint(jw, "sleep_ns", c->sleep_ns);
		jw_kv_uint(jw, "critical_path_ns", c->cp_ns);
		write_preds(jw, c, w->npreds);
		jw_end_object(jw);
	}
	jw_end_array(jw);
	jw_end_object(jw);
}

/* {"what_if": a} or, with b, {"what_if": {"a": a, "b": b}}. */
static int write_doc(const struct sp_whatif *a, const struct sp_whatif *b, FILE *f)
{
	struct json_writer *jw = jw_new(f, true);
	int rc;

	if (!jw)
		return -ENOMEM;
	jw_start_object(jw);
	jw_name(jw, "what_if");
	if (b) {
		jw_start_object(jw);
		jw_name(jw, "a");
		write_whatif(jw, a);
		jw_name(jw, "b");
		write_whatif(jw, b);
		jw_end_object(jw);
	} else {
		write_whatif(jw, a);
	}
	jw_end_object(jw);
	rc = jw_finish(jw);
	jw_free(jw);
	return rc;
}

int format_whatif_json(const struct sp_whatif *w, FILE *f)
{
	return write_doc(w, NULL, f);
}

int format_whatif_diff_json(const struct sp_whatif *a, const struct sp_whatif *b, FILE *f)
{
	return write_doc(a, b, f);
}

/* The relative change from a to b, in percent (0 when a is 0). */
static double change(uint64_t a, uint64_t b)
{
	return a ? 100.0 * ((double)b - (double)a) / (double)a : 0;
}

int format_whatif_diff_table(const struct sp_whatif *a, const struct sp_whatif *b,
			     const char *name_a, const char *name_b, FILE *f)
{
	char d1[32], d2[32];

	fprintf(f, "what if: A %s, B %s\n", name_a, name_b);
	fprintf(f, "  traced: A %s on %d CPU%s, B %s on %d CPU%s\n",
		fmt_duration(a->measured_ns, d1, sizeof(d1)), a->traced_cpus,
		a->traced_cpus == 1 ? "" : "s", fmt_duration(b->measured_ns, d2, sizeof(d2)),
		b->traced_cpus, b->traced_cpus == 1 ? "" : "s");
	for (size_t k = 0; k < a->ncases && k < b->ncases; k++) {
		const struct sp_whatif_case *ca = &a->cases[k], *cb = &b->cases[k];

		if (ca->spec)
			fprintf(f, "\nwithout %s: %" PRIu64 " and %" PRIu64 " sleeps shortened\n",
				ca->spec, ca->sleeps, cb->sleeps);
		fprintf(f, "%s  %-14s %11s %11s %9s\n", ca->spec ? "" : "\n", "CPUs", "A", "B",
			"change");
		fprintf(f, "  %-14s %11s %11s %+8.1f%%\n", "critical path",
			fmt_duration(ca->cp_ns, d1, sizeof(d1)),
			fmt_duration(cb->cp_ns, d2, sizeof(d2)), change(ca->cp_ns, cb->cp_ns));
		for (size_t i = 0; i < a->npreds && i < b->npreds; i++)
			fprintf(f, "  %-14d %11s %11s %+8.1f%%\n", ca->preds[i].cpus,
				fmt_duration(ca->preds[i].wall_ns, d1, sizeof(d1)),
				fmt_duration(cb->preds[i].wall_ns, d2, sizeof(d2)),
				change(ca->preds[i].wall_ns, cb->preds[i].wall_ns));
	}
	return ferror(f) ? -EIO : 0;
}
