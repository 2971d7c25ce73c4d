#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The classic dbench run, traced: Debian's dbench (apt install dbench) with its bundled
# NetBench load file, on a fresh loop-mounted ext2 file system by default, as in the old
# "superblock lock" reports (see README.md).
# usage: sudo examples/dbench/run.sh [-t SECONDS] [-c CLIENTS] [-n ROWS] [-f ext2|ext4|xfs|tmpfs]
# schedprof: $SCHEDPROF, else ./build/src/schedprof
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
sp=${SCHEDPROF:-$top/build/src/schedprof}
secs=10 clients=8 rows=10 fs=ext2
usage() { echo "usage: $0 [-t SECONDS] [-c CLIENTS] [-n ROWS] [-f ext2|ext4|xfs|tmpfs]" >&2; exit 2; }
while getopts "t:c:n:f:h" o; do
	case $o in
	t) secs=$OPTARG ;; c) clients=$OPTARG ;; n) rows=$OPTARG ;; f) fs=$OPTARG ;; *) usage ;;
	esac
done
[ -x "$sp" ] || { echo "$0: $sp not found: build it or set SCHEDPROF" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "$0: run it as root (sudo)" >&2; exit 1; }
command -v dbench > /dev/null || { echo "$0: dbench not found: apt install dbench" >&2; exit 1; }
tmp=$(mktemp -d /tmp/schedprof-dbench.XXXXXX)
mnt=$tmp/mnt
mounted=""
cleanup() {
	[ -n "$mounted" ] && umount "$mnt"
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir "$mnt"
case $fs in
tmpfs)
	mount -t tmpfs -o size=1g tmpfs "$mnt" ;;
ext2 | ext4 | xfs)
	truncate -s 1G "$tmp/fs.img"
	"mkfs.$fs" -q "$([ "$fs" = xfs ] && echo -f || echo -F)" "$tmp/fs.img" > /dev/null
	mount -o loop "$tmp/fs.img" "$mnt" ;;
*)
	usage ;;
esac
mounted=1
echo "# dbench $clients clients, ${secs}s, on a fresh $fs ($(uname -r))"
"$sp" trace --views schedules,locks -n "$rows" -- dbench -t "$secs" -D "$mnt" "$clients" |
	sed -n '/^Throughput/p; /^command:/,$p'
