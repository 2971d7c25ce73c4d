#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Start-up of `schedprof trace -- true` by way of loading, interleaved: each round runs every
# way once, in a shuffled order. Per way: wall ms (launch to exit), "attached in" ms (the
# tracer's own -v line) and peak RSS (KiB), as median [min-max] over the rounds.
#
#   sudo bench/startup_ways.sh [-r ROUNDS] [-s SCHEDPROF] [WAY=COMMAND ...]
#
# The ways by default: "with" (the libbpf interposition, btf_interpose.h) and "without"
# (SCHEDPROF_BTF_INTERPOSE=0: libbpf's own BTF functions). More ways: NAME='command line',
# run as the others (bench/lskel_load.c builds one for the light skeleton's load).
set -euo pipefail

rounds=20
sp=build/src/schedprof
while getopts r:s: o; do
	case $o in
	r) rounds=$OPTARG ;;
	s) sp=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
declare -A way=(
	[with]="$sp trace -v -- true"
	[without]="env SCHEDPROF_BTF_INTERPOSE=0 $sp trace -v -- true"
)
for w in "$@"; do way[${w%%=*}]=${w#*=}; done
out=$(mktemp -d /tmp/startup-ways.XXXXXX)
# one warm-up each: the per-boot caches are made by the first run, as on a machine in use
for w in "${!way[@]}"; do ${way[$w]} >/dev/null 2>&1 || true; done
for ((r = 0; r < rounds; r++)); do
	for w in $(printf '%s\n' "${!way[@]}" | shuf); do
		t0=$(date +%s%N)
		/usr/bin/time -f 'rss %M' -o "$out/time" ${way[$w]} >/dev/null 2>"$out/err" || true
		t1=$(date +%s%N)
		att=$(sed -n 's/.*attached in \([0-9.]*\) ms.*/\1/p' "$out/err" | head -1)
		echo "$w $(( (t1 - t0) / 1000 )) ${att:-NA} $(awk '/^rss/ {print $2}' "$out/time")" >>"$out/runs"
	done
done
perl -e '
	while (<>) { my ($w, $us, $att, $rss) = split; push @{$d{$w}{wall}}, $us / 1000;
		     push @{$d{$w}{att}}, $att if $att ne "NA"; push @{$d{$w}{rss}}, $rss; }
	sub med { my @v = sort { $a <=> $b } @_; return "-" unless @v;
		sprintf "%.1f [%.1f-%.1f]", $v[$#v / 2], $v[0], $v[-1] }
	printf "%-10s %-24s %-24s %s\n", "way", "wall ms", "attached ms", "peak RSS KiB";
	printf "%-10s %-24s %-24s %s\n", $_, med(@{$d{$_}{wall}}), med(@{$d{$_}{att}}), med(@{$d{$_}{rss}})
		for sort keys %d;' "$out/runs"
echo "runs: $out/runs ($rounds rounds)"
