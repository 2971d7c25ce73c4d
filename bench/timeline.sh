#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The cost of --timeline per switch and per wake-up: the pinned pipe benchmark
# under `schedprof trace --views schedules`, then with --timeline, RUNS times each, with
# bpf_stats on; each line is one run's sp_switch (and tl_waking) run time per event, read
# from schedprof's own program fds while it traces, and the benchmark's usecs/op.
# Needs root and perf; measure on a quiet machine.
#   bench/timeline.sh [RUNS]    (SCHEDPROF: the binary, default build/src/schedprof)
set -u
# shellcheck source=bench/builds.sh
. "$(dirname "$0")/builds.sh"
SCHEDPROF=${SCHEDPROF:-build/src/schedprof}
RUNS=${1:-3}
TMP=$(mktemp -d /tmp/schedprof-bench.XXXXXX)
old=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled=$old; rm -rf "$TMP"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1

# one run: LABEL OPTIONS...
run() {
	local label=$1 pid t
	shift
	"$SCHEDPROF" trace "$@" -o /dev/null -- taskset -c 1 perf bench sched pipe -l 160000 \
		> "$TMP/bench" 2> "$TMP/err" &
	pid=$!
	: > "$TMP/stats"
	: > "$TMP/progs"
	while kill -0 $pid 2> /dev/null; do
		t=$(grep -H -E "prog_id|run_time_ns|run_cnt" /proc/$pid/fdinfo/* 2> /dev/null)
		[ -n "$t" ] && echo "$t" > "$TMP/stats"
		[ -n "$t" ] && [ ! -s "$TMP/progs" ] && bpftool prog show -j > "$TMP/progs" 2> /dev/null
		sleep 0.05
	done
	wait $pid
	python3 - "$TMP/stats" "$TMP/progs" "$label" "$(awk '/usecs\/op/ { print $1 }' "$TMP/bench")" \
		"$(prog_builds sp_switch | tr '\n' ' ')tl_waking" <<'PY'
import collections, json, sys
progs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f, kv = line.split(":", 1)
    k, v = kv.split(":", 1)
    progs[f][k.strip()] = int(v)
names = {p["id"]: p.get("name", "?") for p in json.load(open(sys.argv[2]))}
out = []
for p in progs.values():
    name = names.get(p.get("prog_id"))
    # sp_switch's builds (include/schedprof/progs.h), and tl_waking
    if name in sys.argv[5].split() and p.get("run_cnt"):
        out.append("%s %.0f ns/run (%d runs)" % (name, p["run_time_ns"] / p["run_cnt"], p["run_cnt"]))
print("%-9s %s us/op; %s" % (sys.argv[3], sys.argv[4], ", ".join(sorted(out))))
PY
}

for i in $(seq "$RUNS"); do
	run schedules --views schedules
	run timeline --views schedules --timeline
done
