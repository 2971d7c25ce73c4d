#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# mmap_lock scaling: throughput of mmapscale (threads that mmap, touch and munmap in a loop)
# for 1 to 2 x CPUs threads, mean and standard deviation over REPEATS runs, then the locks
# view of the largest run, which shows mm_struct.mmap_lock (see README.md).
# usage: sudo examples/mmap-scaling/run.sh [-r REPEATS] [-d SECONDS] [-m MAXTHREADS] [-p PAGES]
# schedprof: $SCHEDPROF, else ./build/src/schedprof
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
sp=${SCHEDPROF:-$top/build/src/schedprof}
reps=5 secs=1 pages=16 max=$((2 * $(nproc)))
usage() { echo "usage: $0 [-r REPEATS] [-d SECONDS] [-m MAXTHREADS] [-p PAGES]" >&2; exit 2; }
while getopts "r:d:m:p:h" o; do
	case $o in
	r) reps=$OPTARG ;; d) secs=$OPTARG ;; m) max=$OPTARG ;; p) pages=$OPTARG ;; *) usage ;;
	esac
done
[ -x "$sp" ] || { echo "$0: $sp not found: build it or set SCHEDPROF" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "$0: run it as root (sudo)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/schedprof-mmap.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -pthread -o "$tmp/mmapscale" "$here/mmapscale.c"

echo "# throughput: $reps runs of ${secs}s per thread count, $pages pages per mapping, $(nproc) CPUs"
printf "%8s %14s %12s %16s\n" THREADS "OPS/S (mean)" "STD DEV" "PER THREAD"
for ((t = 1; t <= max; t++)); do
	for ((r = 0; r < reps; r++)); do
		"$tmp/mmapscale" "$t" "$secs" "$pages" | awk '{ print $9 }'
	done | awk -v t="$t" '
		{ x[NR] = $1; s += $1 }
		END {
			m = s / NR
			for (i = 1; i <= NR; i++) v += (x[i] - m) ^ 2
			sd = NR > 1 ? sqrt(v / (NR - 1)) : 0
			printf "%8d %14.0f %12.0f %16.0f\n", t, m, sd, m / t
		}'
done
echo
echo "# schedprof trace --views schedules,locks -n 8 -- mmapscale $max $((secs * 2)) $pages"
"$sp" trace --views schedules,locks -n 8 -- "$tmp/mmapscale" "$max" $((secs * 2)) "$pages"
