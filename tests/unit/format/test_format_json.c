/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The saved-run writer (src/format/format_json.c): a run read from a saved file writes back
 * byte for byte whatever the table options say (-n, --stacks, --by, --value, --sort do not
 * apply: a saved run is complete), --views leaves views out, views the run lacks are not
 * written, keys come in schema order with the views in table order, the document ends with
 * a newline, and invalid UTF-8 is escaped so that the file always parses.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit.h"
#include "base/json_reader.h"
#include "base/util.h"

static char *slurp(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "%s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*ret_len = (size_t)n;
	return buf;
}

static char *json(const struct sp_run *run, const struct render_opts *o, size_t *ret_len)
{
	struct render_opts j = *o;

	j.format = SP_FMT_JSON;
	return unit_render(run, &j, ret_len);
}

/* Every option but --views, set away from its default: none changes a byte. */
START_TEST(byte_identical_options_ignored)
{
	static const char *const files[] = { FIX("run_a.json"), FIX("run_b.json") };
	const struct render_opts opts[] = {
		{ .views = SP_VIEW_ALL },
		{ .views = SP_VIEW_ALL, .nrows = 1, .nstacks = 1 },
		{ .views = SP_VIEW_ALL, .stacks = true, .nstacks = 1, .group = SP_GROUP_COMM },
		{ .views = SP_VIEW_ALL, .value = SP_VALUE_TIME, .lock_sort = SP_LOCK_SORT_MAX,
		  .lock_stacks = true },
	};
	size_t len, out_len;
	char *text = slurp(files[_i], &len);
	struct sp_run run;

	unit_load(files[_i], &run);
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
		char *out = json(&run, &opts[i], &out_len);

		ck_assert_msg(out_len == len && !memcmp(out, text, len),
			      "%s, options %zu: not written back as it is", files[_i], i);
		free(out);
	}
	sp_run_free(&run);
	free(text);
}
END_TEST

/* Top-level keys in order; the run's own first, then the views in table order. */
static size_t keys(const char *doc, const char **ret, size_t max)
{
	char err[128];
	struct json_value *v = json_parse(doc, strlen(doc), err, sizeof(err));
	size_t n;

	ck_assert_msg(v != NULL, "%s", err);
	ck_assert_int_eq(json_type(v), JSON_OBJECT);
	n = json_len(v);
	ck_assert_uint_le(n, max);
	for (size_t i = 0; i < n; i++) {
		ret[i] = strdup(json_key_at(v, i));
		ck_assert_ptr_nonnull(ret[i]);
	}
	json_free(v);
	return n;
}

static bool has_key(const char *const *k, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(k[i], key))
			return true;
	return false;
}

static long key_pos(const char *const *k, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(k[i], key))
			return (long)i;
	return -1;
}

static void free_keys(const char **k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)k[i]);
}

START_TEST(views_selected)
{
	struct render_opts o = { .views = SP_VIEW_ALL };
	const char *k[64];
	struct sp_run run;
	size_t n;
	char *out;

	unit_load(FIX("run_full.json"), &run);
	out = json(&run, &o, NULL);
	n = keys(out, k, 64);
	ck_assert_str_eq(k[0], "schema");
	ck_assert_int_lt(key_pos(k, n, "target"), key_pos(k, n, "schedules"));
	ck_assert_int_lt(key_pos(k, n, "schedules"), key_pos(k, n, "profile"));
	ck_assert_int_lt(key_pos(k, n, "profile"), key_pos(k, n, "locks"));
	ck_assert_str_eq(k[n - 1], "locks");
	/* the document is closed, a newline ends the file (today "}\n\n": the writer's newline
	 * and format_json's) */
	ck_assert_uint_eq(strspn(strrchr(out, '}') + 1, "\n"), strlen(strrchr(out, '}') + 1));
	ck_assert_int_eq(out[strlen(out) - 1], '\n');
	free_keys(k, n);
	free(out);
	/* --views profile: the other two left out, the run's own fields kept */
	o.views = SP_VIEW_PROFILE;
	out = json(&run, &o, NULL);
	n = keys(out, k, 64);
	ck_assert(!has_key(k, n, "schedules") && !has_key(k, n, "locks"));
	ck_assert(has_key(k, n, "profile") && has_key(k, n, "target") && has_key(k, n, "kernel"));
	free_keys(k, n);
	free(out);
	sp_run_free(&run);
	/* a view the run lacks is not written, selected or not */
	unit_load(FIX("run_a.json"), &run);
	o.views = SP_VIEW_ALL;
	out = json(&run, &o, NULL);
	n = keys(out, k, 64);
	ck_assert(has_key(k, n, "schedules"));
	ck_assert(!has_key(k, n, "profile") && !has_key(k, n, "locks"));
	free_keys(k, n);
	free(out);
	sp_run_free(&run);
}
END_TEST

/* Invalid UTF-8 in a name is escaped (one U+FFFD per byte): the file parses and reads back. */
START_TEST(invalid_utf8_escaped)
{
	struct render_opts o = { .views = SP_VIEW_ALL };
	struct sp_run run, back;
	struct sp_sched_row *r;
	char err[256], *out;

	sp_run_init(&run);
	run.schema = strdup(SP_SCHEMA);
	run.ncpus = 1;
	run.sched.present = true;
	run.sched.total = 1;
	r = sp_sched_add_row(&run.sched);
	r->caller = strdup("f\xff\xfe");
	r->count = 1;
	ck_assert_int_eq(sp_comm_list_add(&r->comms, "c\x80", 1, 0, 0), 0);
	out = json(&run, &o, NULL);
	ck_assert_ptr_nonnull(strstr(out, "\"f\\ufffd\\ufffd\""));
	ck_assert_ptr_nonnull(strstr(out, "\"c\\ufffd\""));
	ck_assert_msg(sp_run_from_json(out, strlen(out), &back, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(back.sched.rows[0].caller, "f\xef\xbf\xbd\xef\xbf\xbd");
	sp_run_free(&back);
	free(out);
	sp_run_free(&run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("format_json");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, byte_identical_options_ignored, 0, 2);
	tcase_add_test(tc, views_selected);
	tcase_add_test(tc, invalid_utf8_escaped);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
