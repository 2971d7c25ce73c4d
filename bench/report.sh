#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Times `schedprof report` in every format, and `diff`, on a synthetic saved run shaped like a
# 60 s `trace -a -g` run with 100,000 distinct stacks (bench/genrun.py). No root needed.
#   bench/report.sh [-n STACKS] [-r ROUNDS] [-o DIR] [-s SEED] [-H HOT]
# Environment: SCHEDPROF (default build/src/schedprof), BASE (a second binary, e.g. one built
# from an older commit, timed alongside), LIMIT (seconds a render may take, default 1).
# Each command runs ROUNDS times (default 3); the table shows the fastest wall time and the
# user+sys CPU time of that run. The runs are kept in DIR (default /tmp/schedprof-report-bench).
# -H puts that share of each view's stacks in its first row (genrun.py -H): one hot spot.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
STACKS=100000 ROUNDS=3 DIR=/tmp/schedprof-report-bench SEED=1 HOT=0
while getopts n:r:o:s:H: opt; do
	case $opt in
	n) STACKS=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	o) DIR=$OPTARG ;;
	s) SEED=$OPTARG ;;
	H) HOT=$OPTARG ;;
	*) sed -n '3,10p' "$0" >&2; exit 2 ;;
	esac
done
SCHEDPROF=$(realpath "${SCHEDPROF:-$root/build/src/schedprof}")
BASE=${BASE:+$(realpath "$BASE")}
LIMIT=${LIMIT:-1}
mkdir -p "$DIR"
tag=$SEED-$STACKS
[ "$HOT" = 0 ] || tag=$tag-hot$HOT
a=$DIR/run-$tag-a.json b=$DIR/run-$tag-b.json
[ -s "$a" ] || python3 "$here/genrun.py" -s "$SEED" -n "$STACKS" -H "$HOT" "$a"
[ -s "$b" ] || python3 "$here/genrun.py" -s "$SEED" -n "$STACKS" -H "$HOT" -V 1 "$b"

# best BIN ARGS...: "wall cpu" of the fastest of ROUNDS runs (output to $DIR/out)
best() {
	local bin=$1 i t bw= bc=
	shift
	for ((i = 0; i < ROUNDS; i++)); do
		/usr/bin/time -o "$DIR/time" -f '%e %U %S' "$bin" "$@" >"$DIR/out" 2>/dev/null ||
			{ echo "failed: $bin $*" >&2; exit 1; }
		read -r w u s <"$DIR/time"
		if [ -z "$bw" ] || awk "BEGIN{exit !($w < $bw)}"; then
			bw=$w
			bc=$(awk "BEGIN{printf \"%.2f\", $u + $s}")
		fi
	done
	echo "$bw $bc"
}

echo "runs: $(du -h "$a" | cut -f1) $a, $(du -h "$b" | cut -f1) $b ($STACKS stacks each)"
echo "schedprof: $SCHEDPROF${BASE:+, base: $BASE}"
echo
if [ -n "$BASE" ]; then
	echo "| command | wall s | cpu s | base wall s | base cpu s |"
	echo "|---|---:|---:|---:|---:|"
else
	echo "| command | wall s | cpu s |"
	echo "|---|---:|---:|"
fi
over=0
run() {
	local name=$1 r rb=
	shift
	r=$(best "$SCHEDPROF" "$@")
	[ -n "$BASE" ] && rb=$(best "$BASE" "$@")
	set -- $r $rb
	if [ -n "$BASE" ]; then
		echo "| $name | $1 | $2 | $3 | $4 |"
	else
		echo "| $name | $1 | $2 |"
	fi
	if awk "BEGIN{exit !($1 >= $LIMIT)}"; then over=$((over + 1)); fi
}
for f in table json folded pprof svg html; do
	run "report -f $f" report -f "$f" "$a" -o "$DIR/out.$f"
done
run "diff" diff "$a" "$b"
echo
if [ "$over" -eq 0 ]; then
	echo "every command under ${LIMIT} s"
else
	echo "$over command(s) took ${LIMIT} s or more"
fi
