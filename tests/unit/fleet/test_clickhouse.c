// SPDX-License-Identifier: BSD-2-Clause
/*
 * src/fleet/clickhouse.c without a server: URL parsing (and what it refuses: credentials in the
 * URL), credentials from the environment or a file, version comparison, and a query to a port
 * nobody listens on (-ECONNREFUSED with a reason, quickly). The real server is in
 * tests/integration/test_agent_clickhouse.sh.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit.h"
#include "fleet/clickhouse.h"
#include "base/util.h"

START_TEST(urls)
{
	struct ch_config c;

	ck_assert_int_eq(ch_url_parse("clickhouse://127.0.0.1:18123/fleet", &c), 0);
	ck_assert_str_eq(c.host, "127.0.0.1");
	ck_assert_uint_eq(c.port, 18123);
	ck_assert_str_eq(c.database, "fleet");
	ch_config_free(&c);
	ck_assert_int_eq(ch_url_parse("clickhouse://ch-1.example.org", &c), 0);
	ck_assert_str_eq(c.host, "ch-1.example.org");
	ck_assert_uint_eq(c.port, 8123);
	ck_assert_str_eq(c.database, "schedprof");
	ch_config_free(&c);
	ck_assert_int_eq(ch_url_parse("clickhouse://[::1]:9/", &c), 0);
	ck_assert_str_eq(c.host, "[::1]");
	ck_assert_uint_eq(c.port, 9);
	ck_assert_str_eq(c.database, "schedprof");
	ch_config_free(&c);
}
END_TEST

START_TEST(bad_urls)
{
	static const char *const bad[] = {
		"", "http://127.0.0.1:8123/", "clickhouse://", "clickhouse://:8123/db",
		"clickhouse://h:0/db", "clickhouse://h:65536/db", "clickhouse://h:12x/db",
		"clickhouse://h:/db", "clickhouse://user:pw@h:8123/db", "clickhouse://h/d;b",
		"clickhouse://h/db/x", "clickhouse://h?x=1", "clickhouse://[::1/db", "clickhouse://[zz]/",
	};
	struct ch_config c;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		ck_assert_msg(ch_url_parse(bad[i], &c) == -EINVAL, "'%s' accepted", bad[i]);
		ck_assert_ptr_null(c.host);
	}
}
END_TEST

START_TEST(credentials)
{
	struct ch_config c = { 0 };
	char path[] = "/tmp/test_clickhouse.XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "file-secret\nsecond line\n", 24), 24);
	close(fd);
	setenv(CH_ENV_USER, "agent", 1);
	setenv(CH_ENV_PASSWORD, "env-secret", 1);
	ck_assert_int_eq(ch_credentials_load(&c, NULL), 0);
	ck_assert_str_eq(c.user, "agent");
	ck_assert_str_eq(c.password, "env-secret");
	/* the file wins over the environment; its first line only */
	ck_assert_int_eq(ch_credentials_load(&c, path), 0);
	ck_assert_str_eq(c.password, "file-secret");
	unsetenv(CH_ENV_USER);
	unsetenv(CH_ENV_PASSWORD);
	ck_assert_int_eq(ch_credentials_load(&c, NULL), 0);
	ck_assert_ptr_null(c.user);
	ck_assert_ptr_null(c.password);
	unlink(path);
	ck_assert_int_eq(ch_credentials_load(&c, path), -ENOENT);
	ch_config_free(&c);
}
END_TEST

START_TEST(versions)
{
	ck_assert(ch_version_at_least("18.16.1", 18, 16));
	ck_assert(!ch_version_at_least("18.16.1", 19, 6));
	ck_assert(ch_version_at_least("19.6.2.11", 19, 6));
	ck_assert(ch_version_at_least("23.8.1", 19, 6));
	ck_assert(!ch_version_at_least("", 1, 0));
	ck_assert(!ch_version_at_least(NULL, 1, 0));
}
END_TEST

START_TEST(refused)
{
	/* port 1 on loopback: nobody listens there (no root needed to know) */
	struct ch_config c;
	struct ch_client *cl;
	struct ch_response r;

	ck_assert_int_eq(ch_url_parse("clickhouse://127.0.0.1:1/schedprof", &c), 0);
	cl = ch_client_new(&c);
	ck_assert_ptr_nonnull(cl);
	ck_assert_int_eq(ch_query(cl, "SELECT 1", NULL, 0, &r), -ECONNREFUSED);
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(r.error[0] != '\0', "no reason given");
	ch_response_free(&r);
	ch_client_free(cl);
	ch_config_free(&c);
	c.host = NULL;
	ck_assert_ptr_null(ch_client_new(&c));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("clickhouse");
	TCase *tc = tcase_create("client");

	tcase_add_test(tc, urls);
	tcase_add_test(tc, bad_urls);
	tcase_add_test(tc, credentials);
	tcase_add_test(tc, versions);
	tcase_add_test(tc, refused);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
