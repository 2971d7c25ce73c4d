#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# BPF cost of each program schedprof loads, inside a matrix guest (suite.sh): ns per run from
# bpf_stats (kernel.bpf_stats_enabled=1), as a ratio to an EMPTY tp_btf/sched_switch program
# (bench/floor.bpf.c, built by matrix.sh into $BUILD/kernels) measured in the same guest,
# under the same workload (spwork's pipe ping-pong). Under TCG a nanosecond means nothing,
# a ratio to the floor does. Prints "CONFIG PROGRAM RUNS NS_PER_RUN RATIO" lines.
# env: BUILD, PIPE_N (ping-pongs, default 20000)
set -uo pipefail
BUILD=${BUILD:?} SP=$BUILD/src/schedprof SPWORK=$BUILD/tests/spwork
N=${PIPE_N:-20000}
for f in "$BUILD/kernels/floor" "$BUILD/kernels/floor.bpf.o" "$SP" "$SPWORK"; do
	[ -e "$f" ] || { echo "progcost: $f is missing" >&2; exit 1; }
done
command -v bpftool >/dev/null || { echo "progcost: bpftool is missing" >&2; exit 1; }
old=$(sysctl -n kernel.bpf_stats_enabled)
pid=""
cleanup() {
	[ -n "$pid" ] && kill -INT "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$old"
}
trap cleanup EXIT
sysctl -qw kernel.bpf_stats_enabled=1 || { echo "progcost: no kernel.bpf_stats_enabled" >&2; exit 1; }

# stats PID: "name run_cnt run_time_ns" of each program PID holds
stats() {
	local id
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u); do
		bpftool -j prog show id "$id" 2>/dev/null |
			python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("name"), d.get("run_cnt", 0), d.get("run_time_ns", 0))'
	done
}
# measure CMD...: starts CMD, waits for its programs, runs the workload, prints stats
measure() {
	"$@" > /dev/null 2>&1 &
	pid=$!
	local i
	for i in $(seq 200); do
		ls -l /proc/$pid/fd 2>/dev/null | grep -q bpf_link && break
		sleep 0.1
	done
	[ "$i" != 200 ] || { echo "progcost: $* did not attach in 20 s" >&2; return 1; }
	"$SPWORK" pipe "$N" > /dev/null
	stats "$pid"
	kill -INT "$pid"
	wait "$pid" 2>/dev/null
	pid=""
}

floor=$(measure "$BUILD/kernels/floor" "$BUILD/kernels/floor.bpf.o") || exit 1
read -r _ fcnt fns <<< "$floor"
[ "${fcnt:-0}" -gt 0 ] || { echo "progcost: the empty program never ran" >&2; exit 1; }
fper=$((fns / fcnt))
printf "floor\tfloor_switch %d %d 1.00\n" "$fcnt" "$fper"
for cfg in "-a" "-a -g --timeline --wakers"; do
	# shellcheck disable=SC2086 # options
	s=$(measure "$SP" trace $cfg -o /dev/null) || exit 1
	[ -n "$s" ] || { echo "progcost: trace $cfg holds no program" >&2; exit 1; }
	while read -r name cnt ns; do
		[ "$cnt" -gt 0 ] || { printf 'trace %s\t%s 0 - -\n' "$cfg" "$name"; continue; }
		awk -v c="trace $cfg" -v n="$name" -v cnt="$cnt" -v ns="$ns" -v f="$fper" \
			'BEGIN { printf "%s\t%s %d %d %.2f\n", c, n, cnt, ns / cnt, ns / cnt / f }'
	done <<< "$s"
done
