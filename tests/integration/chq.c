// SPDX-License-Identifier: BSD-2-Clause
/*
 * chq URL QUERY [BODY-FILE]: one query through src/fleet/clickhouse.c, for the tests (the
 * client the agent uses, against a real server). Credentials as the agent takes them
 * ($SCHEDPROF_CLICKHOUSE_USER/_PASSWORD). Prints the answer; on failure one line on stderr and
 * exit 2 (no HTTP answer), 3 (credentials refused) or 4 (any other error answer).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/clickhouse.h"

static char *slurp(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "re");
	char *b = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		return NULL;
	do {
		if (n + 4096 > cap) {
			char *nb = realloc(b, cap = n + 65536);

			if (!nb) {
				free(b);
				fclose(f);
				return NULL;
			}
			b = nb;
		}
		got = fread(b + n, 1, cap - n, f);
		n += got;
	} while (got);
	fclose(f);
	*ret_len = n;
	return b;
}

int main(int argc, char **argv)
{
	struct ch_config cfg;
	struct ch_client *c;
	struct ch_response r;
	char *body = NULL;
	size_t len = 0;
	int err;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: chq URL QUERY [BODY-FILE]\n");
		return 1;
	}
	if (ch_url_parse(argv[1], &cfg) || ch_credentials_load(&cfg, NULL)) {
		fprintf(stderr, "chq: bad URL or credentials\n");
		return 1;
	}
	if (argc == 4 && !(body = slurp(argv[3], &len))) {
		fprintf(stderr, "chq: %s: %s\n", argv[3], strerror(errno));
		return 1;
	}
	c = ch_client_new(&cfg);
	if (!c)
		return 1;
	err = ch_query(c, argv[2], body, len, &r);
	if (err)
		fprintf(stderr, "chq: %s: %s\n", strerror(-err), r.error);
	else if (r.body)
		fwrite(r.body, 1, r.len, stdout);
	ch_response_free(&r);
	ch_client_free(c);
	ch_config_free(&cfg);
	free(body);
	if (!err)
		return 0;
	return err == -EACCES ? 3 : err == -EBADMSG ? 4 : 2;
}
