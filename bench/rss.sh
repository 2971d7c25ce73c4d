#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/rss.sh -- schedprof's memory (peak RSS at most 16 MB for the schedules
# view): the peak RSS (/usr/bin/time %M) of `--version`, of the schedules view and of all
# views, system-wide, for `-- sleep 0.3` and for `-d 3`; and the kallsyms table's memory and
# load time (bench/ksyms_load.c built against each tree's core library). Peak RSS hardly
# moves with the machine's load; the load time does (take it from a quiet machine).
#
# usage: sudo bench/rss.sh [-r RUNS] [-t TREE,TREE...]
#   -t: source trees, each built in TREE/build (default: this one); each round measures every
#       tree in turn, and the summary gives per tree and measurement the minimum and median
#   -r: rounds (default 5)
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
RUNS=5 TREES=$HERE/..
while getopts "r:t:h" opt; do
	case $opt in
	r) RUNS=$OPTARG ;; t) TREES=$OPTARG ;;
	*) echo "usage: $0 [-r RUNS] [-t TREE,TREE...]" >&2; exit 2 ;;
	esac
done
[[ $EUID == 0 ]] || { echo "$0: must run as root" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "$0: /usr/bin/time not found (package time)" >&2; exit 1; }
TMP=$(mktemp -d /tmp/schedprof-rss.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
IFS=, read -ra T <<< "$TREES"

for i in "${!T[@]}"; do
	t=${T[$i]}
	[ -x "$t/build/src/schedprof" ] || { echo "$0: $t/build/src/schedprof not built" >&2; exit 1; }
	# a tree with one library per folder, or an older one with the core in libspcore.a
	libs=$(ls "$t"/build/src/libspcore.a 2>/dev/null ||
		echo "$t"/build/src/libsp{symbols,model,base}.a)
	cc -O2 -D_GNU_SOURCE -I"$t/src" -I"$t/src/symbols" -I"$t/src/base" -I"$t/src/model" \
		"$HERE/ksyms_load.c" -Wl,--start-group $libs -Wl,--end-group \
		-lelf -ldw -lz -liberty -ldl -o "$TMP/ksyms_load.$i" || exit 1
done

# peak NAME I CMD...: one peak RSS (KiB) of CMD for tree I, appended to $TMP/NAME.I
peak() {
	local name=$1 i=$2
	shift 2
	/usr/bin/time -f %M -o "$TMP/m" "$@" > /dev/null 2>&1 || echo "$0: failed: $*" >&2
	tail -1 "$TMP/m" >> "$TMP/$name.$i"
}

for r in $(seq "$RUNS"); do
	for i in "${!T[@]}"; do
		sp=${T[$i]}/build/src/schedprof
		peak version "$i" "$sp" --version
		peak sched_sleep "$i" "$sp" trace -a --views schedules -- sleep 0.3
		peak sched_d3 "$i" "$sp" trace -a --views schedules -d 3
		peak all_sleep "$i" "$sp" trace -a -- sleep 0.3
		peak all_d3 "$i" "$sp" trace -a -d 3
		"$TMP/ksyms_load.$i" 1 > "$TMP/k"
		sed -n 's/.*RSS +\([0-9]*\) KB (peak +\([0-9]*\) KB).*/\1/p' "$TMP/k" >> "$TMP/ksyms_kb.$i"
		sed -n 's/^load: min \([0-9.]*\) ms.*/\1/p' "$TMP/k" >> "$TMP/ksyms_ms.$i"
	done
	echo "round $r of $RUNS done" >&2
done

# min and median of a file of numbers
stats() { sort -g "$1" | awk '{a[NR] = $1} END {printf "%s / %s", a[1], a[int((NR + 1) / 2)]}'; }
printf '%-34s' "min / median of $RUNS"
for t in "${T[@]}"; do printf ' | %-22s' "$(basename "$(realpath "$t")")"; done
echo
for m in "version:--version peak KiB" "sched_sleep:schedules -- sleep 0.3 KiB" \
	"sched_d3:schedules -d 3 KiB" "all_sleep:all views -- sleep 0.3 KiB" \
	"all_d3:all views -d 3 KiB" "ksyms_kb:kallsyms table RSS KiB" "ksyms_ms:kallsyms load ms"; do
	printf '%-34s' "${m#*:}"
	for i in "${!T[@]}"; do printf ' | %-22s' "$(stats "$TMP/${m%%:*}.$i")"; done
	echo
done
