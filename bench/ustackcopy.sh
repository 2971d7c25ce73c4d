#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/ustackcopy.sh -- BPF cost at sched_switch of each way of getting a user stack (issue
# #26; the programs are bench/ustackcopy.bpf.c's): the kernel's frame-pointer walk, with and
# without build-ids, and copies of 4-16 KB of the stack above the user SP for an unwinder in
# user space. Per program and round: ns per run from bpf_stats while the workload runs, and
# the share of events whose walk or copy succeeded; then per program the minimum and the
# median ns over the rounds. Rounds interleave the programs.
#
# usage: sudo bench/ustackcopy.sh [-r ROUNDS] [-w WORKLOAD]
#   WORKLOAD: pipe1cpu (default: taskset -c 1 perf bench sched pipe -l $PIPE_LOOPS),
#             messaging (perf bench sched messaging), or any shell command
# env: BUILD (the meson build dir, for the generated vmlinux.h under its bpf dir; default build), PIPE_LOOPS (50000)
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-$HERE/../build}
PIPE_LOOPS=${PIPE_LOOPS:-50000}
RUNS=3 WORK=pipe1cpu
while getopts "r:w:h" opt; do
	case $opt in
	r) RUNS=$OPTARG ;; w) WORK=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-w WORKLOAD]" >&2; exit 2 ;;
	esac
done
case $WORK in
pipe1cpu) CMD="taskset -c 1 perf bench sched pipe -l $PIPE_LOOPS" ;;
messaging) CMD="perf bench sched messaging" ;;
*) CMD=$WORK ;;
esac
[[ $EUID == 0 ]] || { echo "$0: must run as root" >&2; exit 1; }
for tool in perf taskset bpftool jq clang cc; do
	command -v "$tool" >/dev/null || { echo "$0: $tool not found" >&2; exit 1; }
done
[ -f "$BUILD/bpf/vmlinux.h" ] ||
	{ echo "$0: no $BUILD/bpf/vmlinux.h: build first (ninja -C build)" >&2; exit 1; }

OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
TMP=$(mktemp -d /tmp/schedprof-ustackcopy.XXXXXX)
LD_PID=""
cleanup() {
	[ -n "$LD_PID" ] && kill -INT "$LD_PID" 2>/dev/null && wait "$LD_PID" 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
	rm -rf "$TMP"
}
trap cleanup EXIT

clang -O2 -g -target bpf -D__TARGET_ARCH_x86 -I"$BUILD/bpf" -c "$HERE/ustackcopy.bpf.c" \
	-o "$TMP/us.bpf.o" && cc -O2 -o "$TMP/usload" "$HERE/ustackcopy.c" -lbpf ||
	{ echo "$0: cannot build the programs" >&2; exit 1; }

PROGS="us_empty us_fpwalk us_fpwalk_bid us_copy4k us_copy8k us_copy16k us_copy16k_paged"
PROGS+=" us_copy16k_vma us_copy16k_ring us_rules16 us_rules16_win"

# one_run PROG: "PROG ns_per_run ok_percent runs"
one_run() {
	local id st bss= m
	"$TMP/usload" "$TMP/us.bpf.o" "$1" 2>"$TMP/err" &
	LD_PID=$!
	for _ in $(seq 200); do
		grep -q attached "$TMP/err" && break
		kill -0 $LD_PID 2>/dev/null || { cat "$TMP/err" >&2; exit 1; }
		sleep 0.05
	done
	id=$(grep -h '^prog_id:' /proc/$LD_PID/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u | head -1)
	sysctl -qw kernel.bpf_stats_enabled=1
	sh -c "$CMD" > "$TMP/work.txt" 2>&1
	st=$(bpftool -j prog show id "$id" | jq -r '"\(.run_cnt // 0) \(.run_time_ns // 0)"')
	# the program's own .bss: a previous round's object may still be being freed
	for m in $(bpftool -j prog show id "$id" | jq -r '.map_ids[]'); do
		[ "$(bpftool -j map show id "$m" | jq -r .name)" = us.bss ] || continue
		bss=$(bpftool -j map dump id "$m" |
			jq -r '.[0].formatted.value[".bss"] | map(to_entries[0].value) | "\(.[0]) \(.[1])"')
	done
	sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
	kill -INT $LD_PID
	wait $LD_PID
	LD_PID=""
	echo "$1 $st $bss" | awk '{ ok = ($4 + $5) ? 100 * $4 / ($4 + $5) : -1
		printf "%s %.0f %.1f %d\n", $1, $2 ? $3 / $2 : 0, ok, $2 }'
}

echo "workload: $CMD; $RUNS rounds; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$RUNS"); do
	for p in $PROGS; do
		one_run "$p"
	done
done | tee "$TMP/all" >&2
printf "%-18s %8s %8s %8s\n" program min_ns median_ns last_ok_%
# a round without runs (another benchmark turned bpf_stats off meanwhile) is left out
awk '$4 > 0 { v[$1] = v[$1] " " $2; ok[$1] = $3; o[NR] = $1 }
	END {
		for (i = 1; i <= NR; i++) {
			p = o[i]
			if (p == "" || done[p]++) continue
			n = split(v[p], a, " ")
			for (x = 2; x <= n; x++)
				for (y = x; y > 1 && a[y - 1] + 0 > a[y] + 0; y--) {
					t = a[y]; a[y] = a[y - 1]; a[y - 1] = t
				}
			printf "%-18s %8d %8d %8s\n", p, a[1], a[int((n + 1) / 2)], ok[p]
		}
	}' "$TMP/all"
