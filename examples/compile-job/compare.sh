#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The compile-job experiment: trace `make -jJOBS` of a generated 40-module C project with and
# without gcc -pipe and compare where the tasks called schedule() from (see README.md).
# Each mode is traced once; the table shown and the summary come from that same run.
# usage: sudo examples/compile-job/compare.sh [-k DIR] [-n ROWS] [JOBS]
#   -k DIR   keep the full reports in DIR (pipe.txt, nopipe.txt), else a temporary dir
#   -n ROWS  rows shown per run (default 12; the summary always uses every row)
#   JOBS     make -j (default 2)
# schedprof: $SCHEDPROF, else ./build/src/schedprof
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
sp=${SCHEDPROF:-$top/build/src/schedprof}
keep="" rows=12
usage() { echo "usage: $0 [-k DIR] [-n ROWS] [JOBS]" >&2; exit 2; }
while getopts "k:n:h" o; do
	case $o in
	k) keep=$OPTARG ;; n) rows=$OPTARG ;; *) usage ;;
	esac
done
shift $((OPTIND - 1))
jobs=${1:-2}
[[ $jobs =~ ^[1-9][0-9]*$ && $rows =~ ^[1-9][0-9]*$ ]] || usage
[ -x "$sp" ] || { echo "$0: $sp not found: build it (meson setup build && ninja -C build) or set SCHEDPROF" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "$0: run it as root (sudo)" >&2; exit 1; }

out=$(mktemp -d /tmp/schedprof-compile.XXXXXX)
trap 'rm -rf "$out"' EXIT
if [ -n "$keep" ]; then
	mkdir -p "$keep"
	res=$(cd "$keep" && pwd)
else
	res=$out
fi
export OUT=$out/proj
make -s -C "$here" OUT="$OUT" "$OUT/.generated" >/dev/null

# show REPORT: the header and the first $rows rows of a full (-n 0) table
show() {
	awk -v n="$rows" '
		/^ +COUNT +SHARE/ { intab = 1; print; next }
		intab && NF == 0 { intab = 0 }
		intab && NF >= 6 && $1 ~ /^[0-9]+$/ { if (++r <= n) print; next }
		intab { if (r <= n) print; next } # a note under a row: "woken by ..." 
		{ print }
		END { if (r > n) printf "  (%d more rows)\n", r - n }' "$1"
}

# summ REPORT: how many voluntary schedules were pipe reads (as waiting for cc1) and io waits
summ() {
	awk '
		/^schedules:/ { total = $2; vol = $4 }
		/^ +COUNT +SHARE/ { intab = 1; next }
		intab && NF == 0 { intab = 0 }
		# a row: COUNT first, WAIT and CALLER last (the columns between depend on the run)
		intab && NF >= 6 && $1 ~ /^[0-9]+$/ {
			# anon_pipe_read on recent kernels (6.18 here), pipe_read/pipe_wait on older ones;
			# asleep for data (wait "pipe"), not on the pipe mutex (PREEMPT_RT: "rt-mutex")
			if (($NF == "anon_pipe_read" || $NF == "pipe_read" || $NF == "pipe_wait") &&
			    $(NF - 1) == "pipe")
				rd += $1
			if ($(NF - 1) == "io")
				io += $1
		}
		END {
			if (vol == "") { print "no schedules line in the report"; exit 1 }
			printf "%d schedules, %d voluntary: %d pipe reads (%.1f%% of voluntary), " \
			       "%d io waits (%.1f%%)\n", total, vol, rd, vol ? 100 * rd / vol : 0,
			       io, vol ? 100 * io / vol : 0
		}' "$1"
}

for mode in pipe nopipe; do
	flags=-O2
	[ $mode = pipe ] && flags="-O2 -pipe"
	make -s -C "$here" OUT="$OUT" clean
	echo "=== make -j$jobs CFLAGS='$flags' ==="
	"$sp" trace --views schedules -n 0 -o "$res/$mode.txt" -- \
		make -s -j"$jobs" -C "$here" OUT="$OUT" CFLAGS="$flags"
	show "$res/$mode.txt"
	echo
done
echo "=== summary ==="
echo "with -pipe:    $(summ "$res/pipe.txt")"
echo "without -pipe: $(summ "$res/nopipe.txt")"
[ -z "$keep" ] || echo "full reports: $res/pipe.txt $res/nopipe.txt"
