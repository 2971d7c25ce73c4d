// SPDX-License-Identifier: BSD-2-Clause
/* The fleet options of report and diff (fleet_cli.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fleet/clickhouse.h"
#include "cli/commands.h"
#include "cli/fleet_cli.h"
#include "base/log.h"

/* Appends the comma-separated hosts of arg to side. */
static int add_hosts(const struct cli_cmd *cmd, struct fleet_side *side, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *h = strtok_r(copy, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
		char **v = realloc(side->hosts, (side->nhosts + 1) * sizeof(*v));

		if (!v || !(v[side->nhosts] = strdup(h))) {
			if (v)
				side->hosts = v;
			free(copy);
			return -ENOMEM;
		}
		side->hosts = v;
		side->nhosts++;
	}
	free(copy);
	if (!side->nhosts)
		return cli_usage_error(cmd, "--host: give host names, separated by commas");
	return 0;
}

static int set_time(const struct cli_cmd *cmd, const char *name, const char *arg, bool *has,
		    int64_t *ret, const char **given)
{
	if (warehouse_parse_time(arg, time(NULL), ret))
		return cli_usage_error(cmd, "%s: '%s' is no time: give RFC 3339 "
					    "(2026-11-30T22:00:00Z), a date, 'now' or -1h, -7d",
				       name, arg);
	*has = true;
	*given = arg;
	return 0;
}

int fleet_opt(const struct cli_cmd *cmd, void *ctx, int c, const char *arg)
{
	struct fleet_opts *o = ctx;
	struct fleet_side *s = &o->side[c >= FLEET_OPT_VS_HOST];
	struct ch_config cfg;

	switch (c) {
	case FLEET_OPT_FROM:
		if (ch_url_parse(arg, &cfg))
			return cli_usage_error(cmd, "--from: '%s' is no clickhouse://HOST[:PORT][/DB] "
						    "(credentials go in the environment or "
						    "--password-file)",
					       arg);
		ch_config_free(&cfg);
		o->from = arg;
		return 0;
	case FLEET_OPT_PASSWORD_FILE:
		o->password_file = arg;
		return 0;
	case FLEET_OPT_HOST:
	case FLEET_OPT_VS_HOST:
		return add_hosts(cmd, s, arg);
	case FLEET_OPT_SINCE:
	case FLEET_OPT_VS_SINCE:
		return set_time(cmd, c == FLEET_OPT_SINCE ? "--since" : "--vs-since", arg,
				&s->has_since, &s->since_s, &s->since);
	case FLEET_OPT_UNTIL:
	case FLEET_OPT_VS_UNTIL:
		return set_time(cmd, c == FLEET_OPT_UNTIL ? "--until" : "--vs-until", arg,
				&s->has_until, &s->until_s, &s->until);
	default:
		return -ENOENT;
	}
}

bool fleet_side_given(const struct fleet_opts *o, int i)
{
	const struct fleet_side *s = &o->side[i];

	return s->nhosts || s->since || s->until;
}

/*
 * Side i, what it does not give from side 0: the hosts; the time range when it gives no time
 * (--vs-since alone means from then on, not up to A's --until).
 */
static struct fleet_side side_of(const struct fleet_opts *o, int i)
{
	struct fleet_side s = o->side[i];
	const struct fleet_side *a = &o->side[0];

	if (!s.nhosts) {
		s.hosts = a->hosts;
		s.nhosts = a->nhosts;
	}
	if (!s.since && !s.until) {
		s.since = a->since;
		s.has_since = a->has_since;
		s.since_s = a->since_s;
		s.until = a->until;
		s.has_until = a->has_until;
		s.until_s = a->until_s;
	}
	return s;
}

/* Whether host is one of list's "a, b, c". */
static bool host_listed(const char *list, const char *host)
{
	size_t len = strlen(host);

	for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] ? 2 : 0))
		if (strcspn(p, ",") == len && !strncmp(p, host, len))
			return true;
	return false;
}

int fleet_load(const struct cli_cmd *cmd, const struct fleet_opts *o, int i,
	       struct warehouse_run *w)
{
	struct fleet_side s = side_of(o, i);
	struct warehouse_select sel = {
		.hosts = (const char *const *)s.hosts, .nhosts = s.nhosts,
		.has_since = s.has_since, .since = s.since_s,
		.has_until = s.has_until, .until = s.until_s,
	};
	struct ch_config cfg;
	char msg[512] = "";
	int err;

	(void)cmd;
	warehouse_run_init(w);
	err = ch_url_parse(o->from, &cfg);
	if (err) /* fleet_opt checked it */
		return err;
	err = ch_credentials_load(&cfg, o->password_file);
	if (err) {
		elog("cannot read the warehouse's password from %s: %s", o->password_file,
		     strerror(-err));
		ch_config_free(&cfg);
		return err;
	}
	warehouse_run_free(w);
	err = warehouse_load(&cfg, &sel, w, msg, sizeof(msg));
	if (err == -EACCES)
		elog("cannot read the warehouse: %s (the credentials come from $%s, $%s or "
		     "--password-file)", msg, CH_ENV_USER, CH_ENV_PASSWORD);
	else if (err)
		elog("cannot read the warehouse: %s", msg);
	/* a mistyped or silent host would otherwise only be missing from the sums */
	for (size_t j = 0; !err && w->intervals && j < s.nhosts; j++)
		if (!host_listed(w->hosts, s.hosts[j]))
			wlog("%s: no interval of host %s in the selection %s", o->from, s.hosts[j],
			     fleet_side_name(o, i));
	ch_config_free(&cfg);
	return err;
}

const char *fleet_side_name(const struct fleet_opts *o, int i)
{
	static char buf[2][512];
	struct fleet_side s = side_of(o, i);
	size_t len;

	len = snprintf(buf[i], sizeof(buf[i]), "%s", s.nhosts ? "" : "all hosts");
	for (size_t j = 0; j < s.nhosts && len < sizeof(buf[i]); j++)
		len += snprintf(buf[i] + len, sizeof(buf[i]) - len, "%s%s", j ? "," : "",
				s.hosts[j]);
	if (s.since && len < sizeof(buf[i]))
		len += snprintf(buf[i] + len, sizeof(buf[i]) - len, " since %s", s.since);
	if (s.until && len < sizeof(buf[i]))
		snprintf(buf[i] + len, sizeof(buf[i]) - len, " until %s", s.until);
	return buf[i];
}

void fleet_opts_free(struct fleet_opts *o)
{
	for (int i = 0; i < 2; i++) {
		for (size_t j = 0; j < o->side[i].nhosts; j++)
			free(o->side[i].hosts[j]);
		free(o->side[i].hosts);
		o->side[i].hosts = NULL;
		o->side[i].nhosts = 0;
	}
}
