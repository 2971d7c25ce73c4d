// SPDX-License-Identifier: BSD-2-Clause
/*
 * The view registry (src/model/view.c) and each view's description
 * (src/views/NAME/model.c), checked against the schema: every view has a name, one bit
 * of its own, its struct in struct sp_run, labels, pprof types, a table printer; every offset
 * its walk, diff tables and totals use lands on a schema field of the right type, so a view
 * added with a wrong offset fails here. Then the accessors on a run, and the saturating sums.
 */
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"
#include "base/util.h"
#include "model/samples.h"
#include "model/schema.h"
#include "model/view.h"

/*
 * The field of s at off, of type t (MAP and ARRAY fields sit at their list's v), or of an
 * object field of s that holds off (the timeline's critical_path and parallelism).
 */
static const struct sp_field *field_at(const struct sp_schema *s, size_t off, enum sp_ftype t)
{
	for (size_t i = 0; i < s->nfields; i++)
		if (s->fields[i].off == off && s->fields[i].type == t)
			return &s->fields[i];
	for (size_t i = 0; i < s->nfields; i++) {
		const struct sp_field *f = &s->fields[i], *in;

		if (f->type == SP_T_OBJECT && off >= f->off && (in = field_at(f->sub, off - f->off, t)))
			return in;
	}
	return NULL;
}

static const struct sp_field *array_field(const struct sp_view_ops *v, const char *key)
{
	size_t off;
	const struct sp_field *f = sp_schema_path(v->schema, key, &off);

	ck_assert_msg(f && f->type == SP_T_ARRAY && f->sub, "%s: no array '%s'", v->name, key);
	return f;
}

START_TEST(registry)
{
	/* each view file's name and bit are its line's in SP_VIEW_LIST (model.h) */
#define LIST_NAME(name, BIT, bit, coll, by_default) #name,
#define LIST_BIT(name, BIT, bit, coll, by_default) 1u << (bit),
	static const char *const names[] = { SP_VIEW_LIST(LIST_NAME) };
	static const unsigned int list_bits[] = { SP_VIEW_LIST(LIST_BIT) };
#undef LIST_NAME
#undef LIST_BIT
	/* today's views keep their order (the outputs') and their bits (saved runs' masks) */
	static const char *const known[] = { "schedules", "profile", "locks", "timeline" };
	unsigned int bits = 0;

	ck_assert_uint_ge(sp_nviews, ARRAY_SIZE(known));
	for (size_t i = 0; i < ARRAY_SIZE(known); i++) {
		ck_assert_str_eq(sp_views[i]->name, known[i]);
		ck_assert_uint_eq(sp_views[i]->bit, 1u << i);
	}
	ck_assert_uint_eq(sp_nviews, ARRAY_SIZE(names));
	for (size_t i = 0; i < sp_nviews; i++) {
		const struct sp_view_ops *v = sp_views[i];
		size_t len = strlen(v->name);

		ck_assert_str_eq(v->name, names[i]); /* the outputs' order */
		ck_assert_uint_eq(v->bit, list_bits[i]);
		ck_assert_msg(v->bit && !(v->bit & (v->bit - 1)), "%s: bit 0x%x", v->name, v->bit);
		ck_assert_uint_eq(bits & v->bit, 0);
		bits |= v->bit;
		ck_assert_ptr_eq(sp_view_find(v->bit), v);
		ck_assert_ptr_eq(sp_view_by_name(v->name, len), v);
		/* a prefix, or the name inside a longer list, is not the view */
		ck_assert_ptr_null(sp_view_by_name(v->name, len - 1));
		ck_assert_ptr_eq(sp_view_by_name("locks,profile", 5), &sp_view_locks);
		ck_assert_str_eq(v->schema->name, v->name);
		ck_assert_uint_lt(v->off, sizeof(struct sp_run));
		ck_assert_uint_ge(v->present_off, v->off);
		ck_assert_uint_lt(v->present_off, sizeof(struct sp_run));
		ck_assert(v->count_name && *v->count_name && v->time_name && *v->time_name);
		ck_assert(v->flame_title && *v->flame_title);
		ck_assert(v->pprof.types[0] && v->pprof.types[1] && v->pprof.period_type &&
			  v->pprof.period_unit);
		ck_assert_ptr_nonnull(v->print_table);
		/* samples.c's names are the registry's */
		ck_assert_str_eq(sp_view_name(v->bit), v->name);
		ck_assert_str_eq(sp_view_count_name(v->bit), v->count_name);
		ck_assert_str_eq(sp_view_time_name(v->bit), v->time_name);
	}
	ck_assert_uint_eq(bits, SP_VIEW_EVERY);
	ck_assert_ptr_null(sp_view_find(0));
	ck_assert_ptr_null(sp_view_find(SP_VIEW_SCHED | SP_VIEW_LOCKS));
	ck_assert_ptr_null(sp_view_by_name("", 0));
	ck_assert_str_eq(sp_view_name(1u << 9), "?");
	/* the views' structs do not overlap one another */
	for (size_t i = 0; i + 1 < sp_nviews; i++)
		ck_assert_uint_ne(sp_views[i]->off, sp_views[i + 1]->off);
	ck_assert_uint_eq(sp_view_schedules.off, offsetof(struct sp_run, sched));
	ck_assert_uint_eq(sp_view_profile.off, offsetof(struct sp_run, profile));
	ck_assert_uint_eq(sp_view_locks.off, offsetof(struct sp_run, locks));
	ck_assert_uint_eq(sp_view_timeline.off, offsetof(struct sp_run, timeline));
}
END_TEST

/* The stack walk's offsets are the rows' schema fields. */
START_TEST(walk_offsets)
{
	for (size_t i = 0; i < sp_nviews; i++) {
		const struct sp_view_ops *v = sp_views[i];
		const struct sp_view_walk *w = &v->walk;
		const struct sp_field *rows;

		if (!w->rows) /* no stacks: nothing else of the walk is used */
			continue;
		rows = array_field(v, w->rows);

		ck_assert_msg(field_at(rows->sub, w->name_off, SP_T_STR), "%s: walk name", v->name);
		ck_assert_msg(w->object_off == SP_NONE || field_at(rows->sub, w->object_off, SP_T_STR),
			      "%s: walk object", v->name);
		ck_assert_msg(field_at(rows->sub, w->comms_off + offsetof(struct sp_comm_list, v),
				       SP_T_MAP), "%s: walk comms", v->name);
		ck_assert_msg(field_at(rows->sub, w->stacks_off + offsetof(struct sp_stack_list, v),
				       SP_T_ARRAY), "%s: walk stacks", v->name);
		ck_assert_msg(field_at(v->schema, w->lost_off, SP_T_U64), "%s: walk lost", v->name);
	}
	/* the timeline has no stacks; the other views' rows have */
	ck_assert_ptr_null(sp_view_timeline.walk.rows);
	ck_assert_ptr_nonnull(sp_view_schedules.walk.rows);
	ck_assert_ptr_nonnull(sp_view_profile.walk.rows);
	ck_assert_ptr_nonnull(sp_view_locks.walk.rows);
	/* only the profile's rows have no time of their own: count x 1/hz */
	ck_assert_ptr_null(sp_view_schedules.period_ns);
	ck_assert_ptr_null(sp_view_locks.period_ns);
	ck_assert_ptr_nonnull(sp_view_profile.period_ns);
	{
		struct sp_run run;

		sp_run_init(&run);
		run.profile.hz = 99;
		ck_assert_uint_eq(sp_view_profile.period_ns(&run), 1000000000ULL / 99);
		run.profile.hz = 0; /* unknown: no time rather than a division by zero */
		ck_assert_uint_eq(sp_view_profile.period_ns(&run), 0);
	}
}
END_TEST

/* The diff tables' and totals' offsets are schema fields too. */
START_TEST(diff_offsets)
{
	for (size_t i = 0; i < sp_nviews; i++) {
		const struct sp_view_ops *v = sp_views[i];

		/* diff compares something of every view: its rows, or its totals */
		ck_assert_msg(v->ndiff || v->ntotals, "%s: nothing to compare", v->name);
		for (size_t j = 0; j < v->ndiff; j++) {
			const struct sp_diff_table *d = &v->diff[j];
			const struct sp_field *rows = array_field(v, d->rows);
			const struct sp_schema *r = rows->sub;

			ck_assert(d->key && d->title && d->column && d->time_label);
			ck_assert_msg(field_at(r, d->name_off, SP_T_STR), "%s: name", d->key);
			ck_assert_msg(d->detail_off == SP_NONE || field_at(r, d->detail_off, SP_T_STR),
				      "%s: detail", d->key);
			ck_assert_msg(d->extra_off == SP_NONE || field_at(r, d->extra_off, SP_T_STR),
				      "%s: extra", d->key);
			ck_assert_msg((d->extra_off == SP_NONE) == (d->extra_key == NULL),
				      "%s: extra and its key", d->key);
			ck_assert_msg(field_at(r, d->count_off, SP_T_U64), "%s: count", d->key);
			ck_assert_msg(d->time_off == SP_NONE || field_at(r, d->time_off, SP_T_U64),
				      "%s: time", d->key);
			ck_assert_msg(d->time_off != SP_NONE || v->period_ns,
				      "%s: no time and no period", d->key);
			ck_assert_msg(d->total_off == SP_NONE ||
					      field_at(v->schema, d->total_off, SP_T_U64),
				      "%s: total", d->key);
		}
		for (size_t j = 0; j < v->ntotals; j++) {
			const struct sp_view_total *t = &v->totals[j];

			ck_assert(t->label && t->key);
			ck_assert_uint_ge(t->off, v->off);
			ck_assert_msg(field_at(v->schema, t->off - v->off, SP_T_U64), "%s: total %s",
				      v->name, t->key);
		}
	}
}
END_TEST

START_TEST(accessors)
{
	struct sp_run run;
	struct sp_sched_row *r;
	struct sp_view_row vr;
	const char *rows;
	size_t size;

	sp_run_init(&run);
	for (size_t i = 0; i < sp_nviews; i++)
		ck_assert(!sp_view_present(&run, sp_views[i]));
	run.locks.present = true;
	ck_assert(sp_view_present(&run, &sp_view_locks));
	ck_assert(!sp_view_present(&run, &sp_view_schedules));
	ck_assert_ptr_eq(sp_view_data(&run, &sp_view_profile), &run.profile);
	ck_assert_ptr_eq(sp_view_cdata(&run, &sp_view_locks), &run.locks);

	r = sp_sched_add_row(&run.sched);
	r->caller = strdup("pipe_read");
	sp_sched_add_row(&run.sched)->caller = strdup("do_wait");
	ck_assert_uint_eq(sp_view_rows(&sp_view_schedules, &run, "callers", &rows, &size), 2);
	ck_assert_ptr_eq(rows, (const char *)run.sched.rows);
	ck_assert_uint_eq(size, sizeof(struct sp_sched_row));
	/* not an array of the view: none */
	ck_assert_uint_eq(sp_view_rows(&sp_view_schedules, &run, "total", &rows, &size), 0);
	ck_assert_ptr_null(rows);
	ck_assert_uint_eq(sp_view_rows(&sp_view_schedules, &run, "nope", &rows, &size), 0);
	ck_assert_uint_eq(sp_view_rows(&sp_view_locks, &run, "sleepers", &rows, &size), 0);

	sp_view_walk_row(&sp_view_schedules.walk, &run.sched.rows[1], &vr);
	ck_assert_str_eq(vr.name, "do_wait");
	ck_assert_ptr_null(vr.object); /* [kernel] */
	ck_assert_ptr_eq(vr.comms, &run.sched.rows[1].comms);
	ck_assert_ptr_eq(vr.stacks, &run.sched.rows[1].stacks);
	{
		struct sp_profile_row *p = sp_profile_add_row(&run.profile);

		p->function = strdup("main");
		p->object = strdup("/bin/x");
		sp_view_walk_row(&sp_view_profile.walk, p, &vr);
		ck_assert_str_eq(vr.name, "main");
		ck_assert_str_eq(vr.object, "/bin/x");
		ck_assert_ptr_eq(vr.stacks, &p->stacks);
	}
	ck_assert_uint_eq(SP_VIEW_U64(&run, offsetof(struct sp_run, sched.total)), 0);
	run.sched.total = 42;
	ck_assert_uint_eq(SP_VIEW_U64(&run, sp_view_schedules.totals[0].off), 42);
	sp_run_free(&run);
}
END_TEST

START_TEST(saturation)
{
	ck_assert_uint_eq(sp_sat_add(1, 2), 3);
	ck_assert_uint_eq(sp_sat_add(INT64_MAX - 1, 1), INT64_MAX);
	ck_assert_uint_eq(sp_sat_add(INT64_MAX, 1), INT64_MAX);
	ck_assert_uint_eq(sp_sat_add(1, UINT64_MAX), INT64_MAX);
	ck_assert_uint_eq(sp_sat_add(UINT64_MAX, 0), INT64_MAX); /* already past: clamped */
	ck_assert_uint_eq(sp_sat_mul(3, 4), 12);
	ck_assert_uint_eq(sp_sat_mul(0, UINT64_MAX), 0);
	ck_assert_uint_eq(sp_sat_mul(UINT64_MAX, 0), 0);
	ck_assert_uint_eq(sp_sat_mul(INT64_MAX / 2, 2), INT64_MAX - 1);
	ck_assert_uint_eq(sp_sat_mul(INT64_MAX / 2 + 1, 2), INT64_MAX);
	ck_assert_uint_eq(sp_sat_mul(1ULL << 40, 1ULL << 40), INT64_MAX);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("view");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, registry);
	tcase_add_test(tc, walk_offsets);
	tcase_add_test(tc, diff_offsets);
	tcase_add_test(tc, accessors);
	tcase_add_test(tc, saturation);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
