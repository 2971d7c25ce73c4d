#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The superblock-lock-style sleeper, reproduced: THREADS threads create and unlink files in
# ONE directory, and schedprof names the lock they all sleep on (see README.md).
# usage: sudo examples/dirlock/run.sh [-t THREADS] [-d SECONDS] [-n ROWS] [DIR]
#   DIR      where to create the files (default: a fresh directory on tmpfs, /dev/shm)
# schedprof: $SCHEDPROF, else ./build/src/schedprof; the workload is tests/workloads/dirlock.c
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
sp=${SCHEDPROF:-$top/build/src/schedprof}
threads=8 secs=2 rows=8
usage() { echo "usage: $0 [-t THREADS] [-d SECONDS] [-n ROWS] [DIR]" >&2; exit 2; }
while getopts "t:d:n:h" o; do
	case $o in
	t) threads=$OPTARG ;; d) secs=$OPTARG ;; n) rows=$OPTARG ;; *) usage ;;
	esac
done
shift $((OPTIND - 1))
[ -x "$sp" ] || { echo "$0: $sp not found: build it or set SCHEDPROF" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "$0: run it as root (sudo)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/schedprof-dirlock.XXXXXX)
dir=${1:-}
if [ -z "$dir" ]; then
	dir=$(mktemp -d /dev/shm/schedprof-dirlock.XXXXXX)
	trap 'rm -rf "$tmp" "$dir"' EXIT
else
	trap 'rm -rf "$tmp"' EXIT
fi
cc -O2 -pthread -o "$tmp/dirlock" "$top/tests/workloads/dirlock.c"
echo "# untraced"
"$tmp/dirlock" "$dir" "$threads" "$secs"
echo
echo "# schedprof trace --views schedules,locks --lock-stacks --stack-rows 1 -n $rows -- dirlock $dir $threads $secs"
"$sp" trace --views schedules,locks --lock-stacks --stack-rows 1 -n "$rows" -- \
	"$tmp/dirlock" "$dir" "$threads" "$secs"
