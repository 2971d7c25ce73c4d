/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fleet options of `report` and `diff`: --from clickhouse://HOST:PORT/DB reads
 * the warehouse instead of a saved run, --host and --since/--until select its rows, and diff's
 * --vs-host/--vs-since/--vs-until select the other side. Credentials as the agent's: the
 * environment or --password-file, never the command line.
 */
#ifndef SCHEDPROF_FLEET_CLI_H
#define SCHEDPROF_FLEET_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include "cli/cli.h"
#include "fleet/warehouse.h"

/* The warehouse could not be read: no answer, refused credentials, or the server's error. */
#define EXIT_WAREHOUSE 4

enum {
	FLEET_OPT_FROM = 0x300,
	FLEET_OPT_HOST,
	FLEET_OPT_SINCE,
	FLEET_OPT_UNTIL,
	FLEET_OPT_PASSWORD_FILE,
	FLEET_OPT_VS_HOST,
	FLEET_OPT_VS_SINCE,
	FLEET_OPT_VS_UNTIL,
};

#define FLEET_LONG_OPTS                                                                          \
	{ "from", required_argument, NULL, FLEET_OPT_FROM },                                      \
	{ "host", required_argument, NULL, FLEET_OPT_HOST },                                      \
	{ "since", required_argument, NULL, FLEET_OPT_SINCE },                                    \
	{ "until", required_argument, NULL, FLEET_OPT_UNTIL },                                    \
	{ "password-file", required_argument, NULL, FLEET_OPT_PASSWORD_FILE }
#define FLEET_VS_LONG_OPTS                                                                       \
	{ "vs-host", required_argument, NULL, FLEET_OPT_VS_HOST },                                \
	{ "vs-since", required_argument, NULL, FLEET_OPT_VS_SINCE },                              \
	{ "vs-until", required_argument, NULL, FLEET_OPT_VS_UNTIL }

#define FLEET_HELP_LINES                                                                         \
	"      --from clickhouse://HOST[:PORT][/DB]  read the fleet warehouse (schedprof agent's\n" \
	"                    rows) instead of a saved run\n"                                       \
	"      --host H[,H]  only these hosts (repeatable; default: every host)\n"                \
	"      --since T, --until T  only intervals that start in [T, T'): RFC 3339\n"            \
	"                    (2026-11-30T22:00:00Z), a date, 'now', or relative (-1h, -7d)\n"     \
	"      --password-file FILE  the warehouse password (else $SCHEDPROF_CLICKHOUSE_PASSWORD;\n" \
	"                    user: $SCHEDPROF_CLICKHOUSE_USER)\n"

/* One side of a warehouse selection, as given. */
struct fleet_side {
	char **hosts; /* split at commas, malloc'd */
	size_t nhosts;
	const char *since, *until; /* as given */
	bool has_since, has_until;
	int64_t since_s, until_s;
};

struct fleet_opts {
	const char *from;
	const char *password_file;
	struct fleet_side side[2]; /* diff: [0] = A (--host ...), [1] = B (--vs-host ...) */
};

/* cli_opt_fn for runs_opts.extra: the options above into (struct fleet_opts *)ctx. */
int fleet_opt(const struct cli_cmd *cmd, void *ctx, int c, const char *arg);

/* Whether side i was given any option. */
bool fleet_side_given(const struct fleet_opts *o, int i);

/*
 * Reads side i of the warehouse into w, with the selection of side i (side 0's hosts when it
 * names none, side 0's time range when it gives no time). 0 or -errno after logging one line: "cannot read the warehouse: HOST:PORT: why".
 */
int fleet_load(const struct cli_cmd *cmd, const struct fleet_opts *o, int i,
	       struct warehouse_run *w);

/* "clickhouse://... hosts a, b, 2026-11-30 22:00:00Z to 2026-11-30 23:00:00Z" (static). */
const char *fleet_side_name(const struct fleet_opts *o, int i);

void fleet_opts_free(struct fleet_opts *o);

#endif
