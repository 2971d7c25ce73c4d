// SPDX-License-Identifier: BSD-2-Clause
/*
 * `schedprof agent`: trace continuously, in intervals (trace -i's draining:
 * trace.h's interval hook, run_delta.h), and hand each interval's rows (agent_rows.h),
 * stamped with host, boot id, kernel, the interval's times and a sequence number, to a sink
 * (sink.h) through a bounded on-disk spool (spool.h). The tracing thread only writes the
 * spool; a sender thread does the network.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fleet/agent_rows.h"
#include "cli/cli.h"
#include "fleet/clickhouse.h"
#include "cli/commands.h"
#include "base/log.h"
#include "collect/preflight.h"
#include "schema_sql.h"
#include "fleet/sink.h"
#include "fleet/spool.h"
#include "collect/trace.h"
#include "cli/trace_opts.h"
#include "collect/uframes_bpf.h"
#include "base/util.h"

/* 1,000 intervals of the compile job (examples/compile-job) fit: see bench/agent.sh */
#define AGENT_DEF_SPOOL_LIMIT (256ULL << 20)
#define AGENT_DEF_INTERVAL_S 60
#define AGENT_DEF_TTL_DAYS 30
/* at the end, how long the sender may go on sending what is spooled */
#define AGENT_FLUSH_WAIT_MS 5000

static void agent_help(void)
{
	printf("Usage: schedprof agent [OPTIONS] [-p PIDS | -t TIDS | --cgroup PATH | -a]\n"
	       "                       [-- COMMAND [ARGS...]]\n"
	       "\nTrace continuously (the whole system by default) and stream every view's rows to\n"
	       "a sink, one batch per interval: schedules, profile, locks and losses, each row\n"
	       "stamped with host, boot_id, kernel, interval_start, interval_end and seq.\n"
	       "\nTargets, views, limits and -F/-g as `schedprof trace` (see trace --help), and:\n"
	       "  -i, --interval S  one batch every S seconds (default %d)\n"
	       "  -d, --duration S  stop after S seconds (default: until SIGINT/SIGTERM)\n"
	       "      --sink SINK   where rows go (default ndjson:-):\n"
	       "                      ndjson:FILE, ndjson:-  one JSON object per row and line,\n"
	       "                        with \"table\" naming its table (FILE is appended to)\n"
	       "                      clickhouse://HOST[:PORT][/DB]  ClickHouse's HTTP interface\n"
	       "                        (port 8123, database schedprof), INSERT ... FORMAT\n"
	       "                        JSONEachRow per interval and table\n"
	       "      --spool DIR   the on-disk queue of intervals not yet sent, and the sequence\n"
	       "                    number (default $STATE_DIRECTORY/spool, else\n"
	       "                    /var/lib/schedprof/spool); a restarted agent sends what is left\n"
	       "      --spool-limit SIZE  its size (default %lluM; K, M, G): when full, the oldest\n"
	       "                    intervals are dropped, counted in table losses\n"
	       "      --password-file FILE  ClickHouse password: the file's first line (else\n"
	       "                    $SCHEDPROF_CLICKHOUSE_PASSWORD); user: $SCHEDPROF_CLICKHOUSE_USER\n"
	       "                    (default: the server's default user). Never on the command line.\n"
	       "      --create-schema  create the database and tables (sql/schema.sql) before the\n"
	       "                    first interval is sent\n"
	       "      --ttl DAYS    with --create-schema on servers >= 19.6: rows expire after DAYS\n"
	       "                    (default %d; 0: never)\n"
	       "      --hostname NAME  the host column (default: this host's name)\n"
	       "      --save FILE   at the end, also save the whole run (the sum of the intervals)\n"
	       "                    as JSON, as trace --save: what was sent, for report and diff\n"
	       "\nThe sink is written by a thread of its own: tracing never waits for it. A sink that\n"
	       "fails (not reachable, credentials refused) is said once, intervals stay in the\n"
	       "spool and are sent, in order, when it works again; ClickHouse tables collapse a\n"
	       "batch sent twice (query them with FINAL).\n"
	       "\n" CLI_HELP_LINES
	       "\nExamples:\n"
	       "  schedprof agent --sink ndjson:- -i 10\n"
	       "  SCHEDPROF_CLICKHOUSE_PASSWORD=... schedprof agent --create-schema \\\n"
	       "      --sink clickhouse://ch1.example:8123/schedprof\n"
	       "\nThe spool must belong to the agent's user and be writable by no one else; one\n"
	       "agent at a time uses it (DIR/lock).\n"
	       "\nExit status: 0 (intervals not yet sent stay in the spool for the next start);\n"
	       "1 runtime error (BPF, the spool directory); 2 usage error; 3 intervals were\n"
	       "dropped from a full spool or could not be spooled; 141 the ndjson:- reader went\n"
	       "away (the agent ends). With -- COMMAND the agent ends when the command does and\n"
	       "exits with the command's status (128 + signal if it was killed), except that a\n"
	       "loss gives 3 where the command exited 0.\n",
	       AGENT_DEF_INTERVAL_S, AGENT_DEF_SPOOL_LIMIT >> 20, AGENT_DEF_TTL_DAYS);
}

static const struct cli_cmd agent_cmd = { "agent", agent_help };

struct agent {
	struct sink_opts sink_opts;
	const char *spool_dir;
	uint64_t spool_limit;
	const char *hostname;
	bool have_interval;
	/* at run time */
	char host[256], boot_id[64];
	struct spool *sp;
	struct sink *sink;
	uint64_t pending_dropped;  /* dropped since the last batch: its losses row */
	uint64_t pending_unwritten; /* intervals the spool could not take (disk) */
	uint64_t dropped, unwritten, intervals, rows, max_bytes, sum_bytes;
	uint64_t unreadable_said; /* the sender's unreadable intervals already in a batch */
	uint64_t pending_unreadable; /* those of batches dropped since */
	uint64_t carry_saved[2];	/* what DIR/carry holds: pending_dropped, pending_unwritten */
	int disk_err;		/* why the last interval could not be spooled */
	bool full_said, disk_said;
	bool trim_pending; /* an interval's memory to give back */
};

static int agent_opt(const struct cli_cmd *cmd, void *ctx, int c, const char *arg)
{
	struct agent *a = ctx;

	switch (c) {
	case AGENT_OPT_SINK:
		if (strncmp(arg, "ndjson:", 7) && strncmp(arg, "clickhouse://", 13))
			return cli_usage_error(cmd, "--sink: '%s' is neither ndjson:FILE nor "
					       "clickhouse://HOST:PORT/DB", arg);
		if (!strcmp(arg, "ndjson:"))
			return cli_usage_error(cmd, "--sink: ndjson: needs a FILE (ndjson:FILE, or "
					       "ndjson:- for standard output)");
		if (!strncmp(arg, "clickhouse://", 13)) {
			struct ch_config c;

			if (strchr(arg, '@'))
				return cli_usage_error(cmd, "--sink: no credentials in the URL (they "
						       "would show in ps): the user from $%s, the "
						       "password from --password-file or $%s",
						       CH_ENV_USER, CH_ENV_PASSWORD);
			if (ch_url_parse(arg, &c))
				return cli_usage_error(cmd, "--sink: '%s' is not clickhouse://HOST"
						       "[:PORT][/DB] (DB: letters, digits, _)", arg);
			ch_config_free(&c);
		}
		a->sink_opts.spec = arg;
		return 0;
	case AGENT_OPT_SPOOL:
		a->spool_dir = arg;
		return 0;
	case AGENT_OPT_SPOOL_LIMIT:
		return cli_parse_size(&agent_cmd, "--spool-limit", arg, 4ULL << 10, 1ULL << 40,
				      &a->spool_limit);
	case AGENT_OPT_PASSWORD_FILE:
		a->sink_opts.password_file = arg;
		return 0;
	case AGENT_OPT_CREATE_SCHEMA:
		a->sink_opts.create_schema = true;
		return 0;
	case AGENT_OPT_TTL:
		return cli_parse_uint(cmd, "--ttl", arg, 0, 100000, &a->sink_opts.ttl_days);
	default: /* AGENT_OPT_HOSTNAME */
		if (!*arg || strlen(arg) >= sizeof(a->host))
			return cli_usage_error(cmd, "--hostname: give a name of 1 to %zu bytes",
					       sizeof(a->host) - 1);
		a->hostname = arg;
		return 0;
	}
}

static int agent_parse(int argc, char **argv, struct trace_opts *o, struct agent *a)
{
	int code = trace_parse_as(&agent_cmd, TRACE_CMD_AGENT, argc, argv, agent_opt, a, o);

	if (code)
		return code;
	if (o->output || o->render.format != SP_FMT_TABLE)
		return cli_usage_error(&agent_cmd, "%s: the agent's output is its --sink",
				       o->output ? "-o" : "-f");
	if (o->trace.views & SP_VIEW_TIMELINE)
		return cli_usage_error(&agent_cmd, "--timeline: the agent sends no timeline");
	if (!o->trace.interval_ns)
		o->trace.interval_ns = AGENT_DEF_INTERVAL_S * NSEC_PER_SEC;
	if (!a->sink_opts.spec)
		a->sink_opts.spec = "ndjson:-";
	if (a->sink_opts.create_schema && strncmp(a->sink_opts.spec, "clickhouse://", 13))
		return cli_usage_error(&agent_cmd, "--create-schema needs --sink clickhouse://...");
	if (a->sink_opts.password_file && strncmp(a->sink_opts.spec, "clickhouse://", 13))
		return cli_usage_error(&agent_cmd, "--password-file needs --sink clickhouse://...");
	return 0;
}

/* /proc/sys/kernel/random/boot_id, or "unknown" */
static void read_boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	if (!f || !fgets(buf, len, f))
		snprintf(buf, len, "unknown");
	else
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

static void say_drops(struct agent *a, uint64_t n, uint64_t first, uint64_t last)
{
	a->dropped += n;
	a->pending_dropped += n;
	if (a->full_said) {
		dlog("spool full: dropped intervals %llu to %llu", (unsigned long long)first,
		     (unsigned long long)last);
		return;
	}
	a->full_said = true;
	wlog("spool %s is full (--spool-limit %lluK): dropped %llu interval%s (%llu to %llu), the "
	     "oldest not sent; counted in table losses as spool.dropped_intervals",
	     a->spool_dir, (unsigned long long)(a->spool_limit >> 10), (unsigned long long)n,
	     n > 1 ? "s" : "", (unsigned long long)first, (unsigned long long)last);
}

/*
 * The losses no spooled batch carries yet, in DIR/carry whenever they change: a crash or a
 * full disk (the file is rewritten in place) does not lose their count.
 */
static void keep_carry(struct agent *a)
{
	if (a->carry_saved[0] == a->pending_dropped && a->carry_saved[1] == a->pending_unwritten)
		return;
	if (spool_carry_save(a->sp, a->pending_dropped, a->pending_unwritten))
		return; /* said at the end if it still fails */
	a->carry_saved[0] = a->pending_dropped;
	a->carry_saved[1] = a->pending_unwritten;
}

/* An interval dropped from the spool: the losses it carried are carried by the next batch. */
static void on_drop(void *ctx, const char *text, size_t len)
{
	struct agent *a = ctx;

	a->pending_dropped += agent_batch_losses(text, len, "spool.dropped_intervals");
	a->pending_unwritten += agent_batch_losses(text, len, "spool.unwritten_intervals");
	a->pending_unreadable += agent_batch_losses(text, len, "spool.unreadable_intervals");
}

static int agent_interval(void *ctx, const struct sp_run *iv, const struct sp_run *total,
			  bool last, FILE *out)
{
	struct agent *a = ctx;
	struct agent_stamp s = { .host = a->host, .boot_id = a->boot_id, .kernel = iv->kernel };
	struct agent_batch b;
	struct abuf text = { 0 };
	uint64_t n, first, lastd;
	/* what this batch carries: taken off once it is spooled (a drop hands it back) */
	uint64_t c_dropped = a->pending_dropped, c_unwritten = a->pending_unwritten;
	uint64_t c_unreadable = a->pending_unreadable;
	struct sink_stats st;
	bool have_seq;
	int err;

	(void)total;
	(void)last;
	(void)out;
	sink_get_stats(a->sink, &st);

	err = spool_next_seq(a->sp, &s.seq);
	have_seq = !err;
	if (!err) {
		s.start_unix_ns = iv->start_unix_ns;
		s.end_unix_ns = iv->start_unix_ns + iv->elapsed_ns;
		err = agent_batch_build(iv, &s, &b) ?:
		      agent_batch_loss(&b, &s, "spool.dropped_intervals", a->pending_dropped) ?:
		      agent_batch_loss(&b, &s, "spool.unwritten_intervals", a->pending_unwritten) ?:
		      agent_batch_loss(&b, &s, "spool.unreadable_intervals",
				       st.corrupt - a->unreadable_said + a->pending_unreadable) ?:
		      agent_batch_text(&b, &text);
		if (!err)
			err = spool_put(a->sp, s.seq, text.p ? text.p : "", text.len, &n, &first,
					&lastd);
		if (!err) {
			a->pending_dropped -= c_dropped;
			a->pending_unwritten -= c_unwritten;
			a->pending_unreadable -= c_unreadable;
			a->unreadable_said = st.corrupt;
			if (n) /* said once per run; the total again at the end */
				say_drops(a, n, first, lastd);
			for (int t = 0; t < AT__N; t++)
				a->rows += b.rows[t];
		}
		agent_batch_free(&b);
	}
	if (err) {
		/* the disk or memory: this interval is lost, said once, counted in the next */
		a->unwritten++;
		a->pending_unwritten++;
		a->disk_err = err;
		if (!a->disk_said && have_seq)
			elog("cannot spool interval %llu in %s: %s (counted in table losses as "
			     "spool.unwritten_intervals)", (unsigned long long)s.seq, a->spool_dir,
			     strerror(-err));
		else if (!a->disk_said)
			elog("cannot spool an interval in %s (not even its sequence number): %s "
			     "(counted in table losses as spool.unwritten_intervals)", a->spool_dir,
			     strerror(-err));
		a->disk_said = true;
	} else {
		a->disk_said = false;
		a->intervals++;
		a->sum_bytes += text.len;
		if (text.len > a->max_bytes)
			a->max_bytes = text.len;
		dlog("interval %llu: %zu bytes spooled", (unsigned long long)s.seq, text.len);
		sink_kick(a->sink);
	}
	abuf_free(&text);
	keep_carry(a);
	/*
	 * The run at this interval's start is freed after this returns, this one's read is kept
	 * (the next one's start): they own their strings. The user symbols loaded for it go (the
	 * frames keep their names as strings), and the pages are given back until the next one
	 * (agent_tick: after the tracer freed the runs).
	 */
	uframes_live_trim();
	a->trim_pending = true; /* agent_tick, once they are freed */
	return 0; /* tracing goes on */
}

/* The tracer's wait loop, right after an interval: its runs are freed now, the pages go. */
static bool agent_tick(void *ctx)
{
	struct agent *a = ctx;

	if (a->trim_pending) {
		a->trim_pending = false;
		malloc_trim(0);
	}
	return sink_closed(a->sink); /* its reader has gone (ndjson:- | head): the agent ends */
}

/* The trace has ended: the sender's 5 s start now, not after the final read. */
static void agent_ended(void *ctx)
{
	struct agent *a = ctx;

	sink_end_by(a->sink, AGENT_FLUSH_WAIT_MS);
}

int cmd_agent(int argc, char **argv)
{
	struct trace_hooks h = { .interval = agent_interval, .tick = agent_tick,
				 .ended = agent_ended, .fd = -1, .no_report = true };
	struct agent a = { .spool_limit = AGENT_DEF_SPOOL_LIMIT,
			   .sink_opts = { .ttl_days = AGENT_DEF_TTL_DAYS, .schema_sql = schema_sql } };
	struct sink_stats st;
	struct trace_outputs w;
	struct trace_sink sink;
	struct trace_opts o;
	char defspool[4096], why[512];
	size_t left;
	bool closed;
	int code, err;

	log_set_prefix("schedprof agent");
	/*
	 * A fixed mmap threshold (glibc raises it up to 32M as big blocks are freed): an
	 * interval's big temporary blocks (an ELF symbol table's strings as libelf reads them,
	 * the maps' dumps) are mapped and unmapped, not left as holes in the heap for weeks.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 << 10);
	code = agent_parse(argc, argv, &o, &a);
	if (code) {
		trace_opts_free(&o);
		return code < 0 ? EXIT_SUCCESS : code;
	}
	if (!a.spool_dir) {
		const char *sd = getenv("STATE_DIRECTORY"); /* systemd's StateDirectory= */

		snprintf(defspool, sizeof(defspool), "%.*s/spool", 4000,
			 sd && *sd ? strndupa(sd, strcspn(sd, ":")) : "/var/lib/schedprof");
		a.spool_dir = defspool;
	}
	if (a.hostname)
		snprintf(a.host, sizeof(a.host), "%s", a.hostname);
	else if (gethostname(a.host, sizeof(a.host)))
		snprintf(a.host, sizeof(a.host), "unknown");
	read_boot_id(a.boot_id, sizeof(a.boot_id));
	/* not allowed to trace: refused before the spool directory is made */
	if (preflight_caps()) {
		trace_opts_free(&o);
		return EXIT_FAILURE;
	}
	err = spool_open(a.spool_dir, a.spool_limit, &a.sp, why, sizeof(why));
	if (err) {
		elog("cannot use the spool directory %s: %s", a.spool_dir,
		     why[0] ? why : strerror(-err));
		trace_opts_free(&o);
		return EXIT_FAILURE;
	}
	spool_carry_load(a.sp, &a.pending_dropped, &a.pending_unwritten);
	a.carry_saved[0] = a.pending_dropped;
	a.carry_saved[1] = a.pending_unwritten;
	spool_on_drop(a.sp, on_drop, &a);
	if (spool_count(a.sp, NULL))
		nlog("spool %s: %zu intervals left by the last run are sent first", a.spool_dir,
		     spool_count(a.sp, NULL));
	err = sink_open(&a.sink_opts, a.sp, &a.sink);
	if (err) {
		const char *reason = strerror(-err);

		if (err == -ELIBACC && ch_library_error())
			reason = ch_library_error(); /* libcurl is missing */
		if (!strncmp(a.sink_opts.spec, "ndjson:", 7))
			elog("--sink %s: cannot append to %s: %s", a.sink_opts.spec,
			     a.sink_opts.spec + 7, reason);
		else
			elog("--sink %s: %s", a.sink_opts.spec, reason);
		spool_close(a.sp);
		trace_opts_free(&o);
		return EXIT_FAILURE;
	}
	/* a reader of ndjson:- that goes is an EPIPE for the sender, not a signal for us all */
	signal(SIGPIPE, SIG_IGN);
	err = sink_start(a.sink);
	if (err) {
		elog("cannot start the sender: %s", strerror(-err));
		sink_close(a.sink, 0, NULL);
		spool_close(a.sp);
		trace_opts_free(&o);
		return EXIT_FAILURE;
	}
	h.ctx = &a;
	trace_outputs_sink(&w, &o, &sink);
	code = trace_run(&o.trace, &sink, &h);
	closed = sink_closed(a.sink);
	left = sink_close(a.sink, closed ? 0 : AGENT_FLUSH_WAIT_MS, &st);
	/* losses no batch carries yet: the next start's first batch */
	if ((a.pending_dropped || a.pending_unwritten || a.carry_saved[0] || a.carry_saved[1]) &&
	    spool_carry_save(a.sp, a.pending_dropped, a.pending_unwritten))
		wlog("cannot keep the count of %llu lost intervals for the next start in %s/carry: "
		     "table losses will miss them", (unsigned long long)(a.pending_dropped +
									    a.pending_unwritten),
		     a.spool_dir);
	ilog("%llu intervals, %llu rows (%.1f KiB per interval on average, %.1f KiB at most); "
	     "%llu sent, the longest in %.1f ms",
	     (unsigned long long)a.intervals, (unsigned long long)a.rows,
	     a.intervals ? a.sum_bytes / 1024.0 / a.intervals : 0.0, a.max_bytes / 1024.0,
	     (unsigned long long)st.sent, st.flush_max_ms);
	if (left)
		wlog("%zu intervals not sent yet stay in the spool %s for the next start", left,
		     a.spool_dir);
	if (st.cut_back)
		wlog("%s: %llu writes failed half-way and were cut back to the last whole interval: "
		     "the file holds whole intervals only", a.sink_opts.spec,
		     (unsigned long long)st.cut_back);
	if (a.dropped)
		wlog("%llu intervals were dropped from the full spool",
		     (unsigned long long)a.dropped);
	if (a.unwritten)
		wlog("%llu intervals could not be spooled (%s: %s): counted in table losses as "
		     "spool.unwritten_intervals", (unsigned long long)a.unwritten, a.spool_dir,
		     strerror(-a.disk_err));
	spool_close(a.sp);
	trace_opts_free(&o);
	/* -- COMMAND: a command that failed keeps its status; a loss wins over its 0 */
	if (closed)
		code = EXIT_PIPE;
	else if (!code && (a.dropped || a.unwritten))
		code = EXIT_LOSS;
	return code;
}
