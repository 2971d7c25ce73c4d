// SPDX-License-Identifier: BSD-2-Clause
/* warehouse_load(): the queries of warehouse.c run over clickhouse.h's HTTP client. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/clickhouse.h"
#include "fleet/warehouse.h"

int warehouse_load(const struct ch_config *cfg, const struct warehouse_select *sel,
		   struct warehouse_run *w, char *msg, size_t msgsize)
{
	const char *db = cfg->database ? cfg->database : "schedprof";
	struct ch_client *c;
	int err = 0;

	warehouse_run_init(w);
	if (!*db || strspn(db, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
			    strlen(db)) {
		snprintf(msg, msgsize, "the database name '%s' is not letters, digits and '_'", db);
		return -EINVAL;
	}
	c = ch_client_new(cfg);
	if (!c) {
		err = -errno;
		if (errno == ELIBACC && ch_library_error())
			snprintf(msg, msgsize, "%s", ch_library_error());
		else
			snprintf(msg, msgsize, "cannot set up the HTTP client: %s", strerror(errno));
		return err;
	}
	for (int q = 0; !err && q < WAREHOUSE__NQUERIES; q++) {
		struct ch_response r = { 0 };
		char *sql;
		char why[256];

		if (!warehouse_query_needed(q, w))
			continue;
		sql = warehouse_sql(q, db, sel, w);
		if (!sql) {
			err = -ENOMEM;
			break;
		}
		err = ch_query(c, sql, NULL, 0, &r);
		free(sql);
		if (err)
			snprintf(msg, msgsize, "%s:%u: %s%s", cfg->host, cfg->port, r.error,
				 err == -EFBIG ? ": select fewer hosts or less time (--host, "
						 "--since, --until)" : "");
		else if ((err = warehouse_add_result(w, q, r.body ? r.body : "", r.len, why,
						     sizeof(why))))
			snprintf(msg, msgsize, "%s:%u: %s", cfg->host, cfg->port,
				 err == -ENOMEM ? strerror(ENOMEM) : why);
		ch_response_free(&r);
	}
	ch_client_free(c);
	return err ?: warehouse_run_finish(w);
}
